/* Tuning aid, not a product benchmark: measures instruction-level alternatives for the
 * p/wait ping-pong, g, and large puts over NVLink on 2 PEs, so the library's choices rest
 * on numbers (docs/performance.md). Uses gshmem_ptr for raw peer addresses. */
#define GSHMEMI_DEVICE_INTERNALS  /* its kernels call gshmemi_* internals (gshmem/forms.h) */
#include "gshmem.h"
#include "common.h"

/* the SM each ping-pong kernel ran on: the same flag reads 0.15 us faster from an SM near
 * its home L2 partition (bench/probes/probe_nvlink), so library and raw variants compare only on
 * one SM */
__device__ int v_sm;
__device__ __forceinline__ void record_sm() {
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    v_sm = (int)id;
}

/* Every ping-pong below is this loop (PE 0 sends first) with other send and wait steps:
 * send(v) puts v into the peer's flag, wait(v) waits until my flag holds v. */
template <class Send, class Wait>
__device__ __forceinline__ void pp_loop(long start, int iters, int me, Send send, Wait wait) {
    record_sm();
    for (int i = 0; i < iters; i++) {
        long v = start + i;
        for (int phase = 0; phase < 2; phase++) {
            if ((me == 0) == (phase == 0)) send(v);
            else wait(v);
        }
    }
}
__device__ __forceinline__ void raw_store(long *p, long v) {
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
/* raw spins: 0 ld.acquire.sys; 1 ld.relaxed.sys, then one acquire; 2 ld.volatile; 3
 * ld.relaxed.sys only (not a valid acquire: a probe); 4 ld.relaxed.sys + fence.acq_rel.sys */
template <int V> __device__ __forceinline__ void raw_spin(long *flag, long v) {
    long cur;
    do {
        if (V == 0) asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(cur) : "l"(flag) : "memory");
        else if (V == 2) asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(cur) : "l"(flag) : "memory");
        else asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(cur) : "l"(flag) : "memory");
    } while (cur != v);
    if (V == 1) asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(cur) : "l"(flag) : "memory");
    if (V == 4) asm volatile("fence.acq_rel.sys;" ::: "memory");
}

/* raw instructions both sides: V as raw_spin 0..2 (2 also stores with st.volatile) */
template <int V>
__global__ void pp(long *flag, long *peer_flag, long start, int iters, int me) {
    pp_loop(start, iters, me, [&](long v) {
        if (V == 2) asm volatile("st.volatile.global.u64 [%0], %1;" ::"l"(peer_flag), "l"(v) : "memory");
        else raw_store(peer_flag, v);
    }, [&](long v) { raw_spin<V>(flag, v); });
}

/* Where does the library's extra time go? The store address comes from a __constant__
 * (as the library's heap window does), read after the wait: V=0 spin acquire; 1 spin
 * relaxed + final acquire; 2 spin relaxed only (not a valid acquire: a probe); 3 spin
 * relaxed + fence.acq_rel.sys. */
__constant__ long long c_delta;
template <int V>
__global__ void pp_const(long *flag, long *, long start, int iters, int me) {
    pp_loop(start, iters, me, [&](long v) {
        long long d;   /* re-read each time, as the library's state is after a wait */
        asm volatile("ld.const.u64 %0, [c_delta];" : "=l"(d) :: "memory");
        raw_store((long *)((char *)flag + d), v);
    }, [&](long v) { raw_spin<V == 0 ? 0 : V == 1 ? 1 : V == 2 ? 3 : 4>(flag, v); });
}

/* Where the library's wait and p spend their time, piece by piece (the other side raw).
 * pp_w, the waiting side: 0 gshmemi_wait (what wait_until runs); 1 bare loop of
 * gshmemi_ld_acquire + gshmemi_compare; 2 the argument check, then the bare loop; 3 the
 * bare loop inside the 256-poll structure without the deadline.
 * pp_s, the storing side: 0 gshmem_long_p; 1 gshmemi_peer's address + raw store; 2 raw
 * address + gshmemi_st_relaxed; 3 the address from the state without checks + raw store.
 * 4 (both sides): the library's checks with a bare trap as their failure path (no call);
 * 5: the checks calling a function without arguments (a fixed message) on failure. */
static __device__ __noinline__ void v_fail0(void) {
    printf("variants: a check failed\n");
    __trap();
}
template <int FAIL> __device__ __forceinline__ void v_fail() {
    if (FAIL == 4) __trap();
    else v_fail0();
}
template <int FAIL> __device__ __forceinline__ void v_check(const long *p, int pe, bool peer_check) {
    const gshmemi_device_state *st = &gshmemi_dstate;
    const char *c = (const char *)p;
    bool out = c < st->heap_base || c + 8 > st->heap_base + st->heap_mapped;
    bool bad = (st->version != GSHMEMI_STATE_VERSION) | ((st->debug >= 2) & out);
    if (peer_check) bad |= (unsigned)pe >= (unsigned)st->npes;
    if (bad) v_fail<FAIL>();
}
template <int V>
__global__ void pp_w(long *flag, long *peer_flag, long start, int iters, int me) {
    pp_loop(start, iters, me, [&](long v) { raw_store(peer_flag, v); }, [&](long v) {
        long cur;
        if (V == 0) {
            gshmemi_wait<long>(flag, GSHMEM_CMP_EQ, v, "pp_w");
        } else if (V == 3) {
            for (bool done = false; !done;) {
#pragma unroll 1
                for (int k = 0; k < 256; k++) {
                    cur = gshmemi_ld_acquire(flag);
                    if (gshmemi_compare(cur, GSHMEM_CMP_EQ, v)) { done = true; break; }
                }
            }
        } else {
            if (V == 2) gshmemi_wait_check(flag, 1, GSHMEM_CMP_EQ, "pp_w");
            if (V >= 4) v_check<V>(flag, 0, false);
            do cur = gshmemi_ld_acquire(flag);
            while (!gshmemi_compare(cur, GSHMEM_CMP_EQ, v));
        }
    });
}
template <int V>
__global__ void pp_s(long *flag, long *peer_flag, long start, int iters, int me) {
    const int peer = 1 - me;
    pp_loop(start, iters, me, [&](long v) {
        if (V == 0) gshmem_long_p(flag, v, peer);
        else if (V == 1) raw_store(gshmemi_peer(flag, peer, sizeof(long), "pp_s"), v);
        else if (V == 2) gshmemi_st_relaxed(peer_flag, v);
        else {
            if (V >= 4) v_check<V>(flag, peer, true);
            int slot = gshmemi_slot_of(&gshmemi_dstate, peer);
            if (V >= 4 && slot < 0) v_fail<V>();
            raw_store((long *)((char *)flag + (size_t)slot * gshmemi_dstate.heap_window), v);
        }
    }, [&](long v) { raw_spin<0>(flag, v); });
}

/* library pieces: V=0 gshmem p + gshmem wait; 1 gshmem p + raw relaxed spin + acquire;
 * 2 raw store + gshmem wait */
template <int V>
__global__ void pp_lib(long *flag, long *peer_flag, long start, int iters, int me) {
    const int peer = 1 - me;
    pp_loop(start, iters, me, [&](long v) {
        if (V == 2) raw_store(peer_flag, v);
        else gshmem_long_p(flag, v, peer);
    }, [&](long v) {
        if (V == 1) raw_spin<1>(flag, v);
        else gshmem_long_wait_until(flag, GSHMEM_CMP_EQ, v);
    });
}

template <int V>
__global__ void gchase(const long *peer_next, int iters, long *out) {
    long idx = 0;
    for (int i = 0; i < iters; i++) {
        const long *p = peer_next + idx;
        if (V == 0) asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(idx) : "l"(p) : "memory");
        else if (V == 1) asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(idx) : "l"(p) : "memory");
        else if (V == 2) idx = __ldcg(p);
        else idx = *(volatile const long *)p;
    }
    *out = idx;
}

/* V: 0 library putmem_block; 1 raw stores from registers; 2 unroll-4 copy;
 * 3 unroll-8 copy with plain loads; 4 copy with __ldcs source loads (streaming) and unroll 8 */
template <int U, bool CS>
__device__ void copy_u(int4 *d, const int4 *s, size_t n, unsigned r, unsigned sz) {
    size_t i = r;
    for (; i + (U - 1) * (size_t)sz < n; i += (size_t)sz * U) {
        int4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) v[u] = CS ? __ldcs(s + i + u * (size_t)sz) : s[i + u * (size_t)sz];
#pragma unroll
        for (int u = 0; u < U; u++) d[i + u * (size_t)sz] = v[u];
    }
    for (; i < n; i += sz) d[i] = s[i];
}

template <int V>   /* launched with 1024 threads: copy_u<8> alone takes 72 registers unbounded */
__global__ void __launch_bounds__(1024) bw(char *dst, const char *src, size_t n, int peer, int reps) {
    size_t chunk = n / gridDim.x;
    for (int r = 0; r < reps; r++) {
        size_t o = blockIdx.x * chunk;
        if (V == 0) gshmemx_putmem_block(dst + o, src + o, chunk, peer);
        else {
            int4 *d = (int4 *)gshmem_ptr(dst + o, peer);
            const int4 *s = (const int4 *)(src + o);
            size_t nv = chunk / 16;
            if (V == 1) {
                int4 val = make_int4(r, 1, 2, 3);
                for (size_t i = threadIdx.x; i < nv; i += blockDim.x) d[i] = val;
            } else if (V == 2) copy_u<4, false>(d, s, nv, threadIdx.x, blockDim.x);
            else if (V == 3) copy_u<8, false>(d, s, nv, threadIdx.x, blockDim.x);
            else copy_u<8, true>(d, s, nv, threadIdx.x, blockDim.x);
            __syncthreads();
        }
    }
}

/* small block puts cycling over 64 slots (bench/bandwidth's pattern): V 0 library
 * putmem_block, 1 raw int4 loop + __syncthreads through gshmem_ptr, 2 the same without the
 * barrier, 3 loads then barrier then stores (when each thread has <= 4 vectors) */
template <int V>
__global__ void bw_small(char *dst, const char *src, size_t n, int peer, int reps, size_t stride) {
    size_t chunk = n / gridDim.x;
    for (int r = 0; r < reps; r++) {
        size_t o = (size_t)(r % 64) * stride + blockIdx.x * chunk;
        if (V == 0) gshmemx_putmem_block(dst + o, src + o, chunk, peer);
        else {
            int4 *d = (int4 *)gshmem_ptr(dst + o, peer);
            const int4 *s = (const int4 *)(src + o);
            size_t nv = chunk / 16;
            if (V == 3 && nv <= 4 * blockDim.x) {
                /* loads, then the block barrier (source reusable), then the stores */
                int4 r[4];
                unsigned k = 0;
                for (size_t i = threadIdx.x; i < nv; i += blockDim.x) r[k++] = s[i];
                __syncthreads();
                k = 0;
                for (size_t i = threadIdx.x; i < nv; i += blockDim.x) d[i] = r[k++];
                continue;
            }
            for (size_t i = threadIdx.x; i < nv; i += blockDim.x) d[i] = s[i];
            if (V != 2) __syncthreads();
        }
    }
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    gshmem_init();
    int me = gshmem_my_pe(), peer = 1 - me;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    /* four flag placements 4 KiB apart; each variant's SM on both PEs is printed */
    long *flags = (long *)gshmem_calloc(4 * 512, sizeof(long));
    long *flag = flags, *pf = (long *)gshmem_ptr(flag, peer);
    long seq = 1;
    const int iters = 10000;
    auto sms = [&]() {
        int mine, all[2];
        CK(cudaMemcpyFromSymbol(&mine, v_sm, sizeof mine));
        int *sym = (int *)gshmem_malloc(2 * sizeof(int));
        gshmem_int_p(sym + me, mine, 0);
        gshmem_barrier_all();
        if (me == 0) CK(cudaMemcpy(all, sym, sizeof all, cudaMemcpyDeviceToHost));
        gshmem_barrier_all();
        gshmem_free(sym);
        static char buf[32];
        snprintf(buf, sizeof buf, "SM %d/%d", me == 0 ? all[0] : -1, me == 0 ? all[1] : -1);
        return buf;
    };
    /* times one ping-pong launch (iters round trips) and prints it with the SMs it ran on */
    auto time_pp = [&](const char *name, auto launch) {
        float ms = median_ms(e0, e1, [] { gshmem_barrier_all(); }, [&] {
            launch();
            seq += iters;
        });
        const char *sm = sms();
        if (me == 0) printf("ping-pong one-way %-55s %.3f us  %s\n", name, ms * 1000.f / (2 * iters), sm);
    };
    const char *ppn[3] = {"st.relaxed.sys + spin ld.acquire.sys", "st.relaxed.sys + spin ld.relaxed.sys, then ld.acquire", "st.volatile + spin ld.volatile"};
    const char *pln[3] = {"gshmem_long_p + gshmem_long_wait_until", "gshmem_long_p + raw spin", "raw store + gshmem_long_wait_until"};
    typedef void (*pp_kernel)(long *, long *, long, int, int);
    const pp_kernel ppk[3] = {pp<0>, pp<1>, pp<2>}, plk[3] = {pp_lib<0>, pp_lib<1>, pp_lib<2>};
    for (int k = 0; k < 4; k++) {
        flag = flags + 512 * k;
        pf = (long *)gshmem_ptr(flag, peer);
        if (me == 0) printf("flag placement %d (+%d KiB)\n", k, 4 * k);
        for (int v = 0; v < 6; v++)
            time_pp(v < 3 ? ppn[v] : pln[v - 3], [&] { (v < 3 ? ppk[v] : plk[v - 3])<<<1, 1>>>(flag, pf, seq, iters, me); });
    }
    flag = flags;
    pf = (long *)gshmem_ptr(flag, peer);
    const char *pwn[6] = {"wait side: gshmemi_wait", "wait side: bare gshmemi_ld_acquire loop", "wait side: check + bare loop", "wait side: 256-poll loop, no deadline",
                          "wait side: check (trap on failure) + bare loop", "wait side: check (argument-free call) + bare loop"};
    const char *psn[6] = {"store side: gshmem_long_p", "store side: gshmemi_peer + raw store", "store side: raw address + gshmemi_st_relaxed", "store side: unchecked address + raw store",
                          "store side: checks (trap on failure) + raw store", "store side: checks (argument-free call) + raw store"};
    const pp_kernel pwk[6] = {pp_w<0>, pp_w<1>, pp_w<2>, pp_w<3>, pp_w<4>, pp_w<5>};
    const pp_kernel psk[6] = {pp_s<0>, pp_s<1>, pp_s<2>, pp_s<3>, pp_s<4>, pp_s<5>};
    for (int v = 0; v < 12; v++)
        time_pp(v < 6 ? pwn[v] : psn[v - 6], [&] { (v < 6 ? pwk[v] : psk[v - 6])<<<1, 1>>>(flag, pf, seq, iters, me); });
    long long delta = (long long)((char *)pf - (char *)flag);
    CK(cudaMemcpyToSymbol(c_delta, &delta, sizeof delta));
    const char *pcn[4] = {"const addr, spin acquire", "const addr, spin relaxed + acquire", "const addr, spin relaxed only (probe)", "const addr, spin relaxed + fence.acq_rel.sys"};
    const pp_kernel pck[4] = {pp_const<0>, pp_const<1>, pp_const<2>, pp_const<3>};
    for (int v = 0; v < 4; v++) time_pp(pcn[v], [&] { pck[v]<<<1, 1>>>(flag, pf, seq, iters, me); });
    const int cn = 1 << 16;
    long *next = (long *)gshmem_malloc(cn * sizeof(long));
    std::vector<long> h(cn);
    for (int i = 0; i < cn; i++) h[i] = (i * 7919L + 1) % cn;
    CK(cudaMemcpy(next, h.data(), cn * sizeof(long), cudaMemcpyHostToDevice));
    long *out;
    CK(cudaMalloc(&out, 8));
    gshmem_barrier_all();
    const char *gn[4] = {"ld.relaxed.sys", "ld.volatile", "ld.global.cg (weak)", "volatile C load"};
    if (me == 0)
        for (int v = 0; v < 4; v++) {
            const long *pn = (const long *)gshmem_ptr(next, peer);
            float ms = median_ms(e0, e1, [] {}, [&] {
                if (v == 0) gchase<0><<<1, 1>>>(pn, 5000, out);
                if (v == 1) gchase<1><<<1, 1>>>(pn, 5000, out);
                if (v == 2) gchase<2><<<1, 1>>>(pn, 5000, out);
                if (v == 3) gchase<3><<<1, 1>>>(pn, 5000, out);
            });
            printf("g round trip %-30s %.3f us\n", gn[v], ms * 1000.f / 5000);
        }
    gshmem_barrier_all();
    const size_t n = 64ull << 20;
    char *a = (char *)gshmem_malloc(n), *b = (char *)gshmem_malloc(n);
    CK(cudaMemset(a, 1, n));
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();
    const char *bn[5] = {"library putmem_block", "stores from registers", "copy unroll 4", "copy unroll 8 (plain)", "copy unroll 8 + __ldcs"};
    int grids[2] = {132, 264};
    if (me == 0)
        for (int v = 0; v < 5; v++)
            for (int gi = 0; gi < 2; gi++) {
                int nb = grids[gi];
                size_t ne = n / (nb * 16) * (nb * 16);
                float ms = median_ms(e0, e1, [] {}, [&] {
                    if (v == 0) bw<0><<<nb, 1024>>>(b, a, ne, peer, 8);
                    if (v == 1) bw<1><<<nb, 1024>>>(b, a, ne, peer, 8);
                    if (v == 2) bw<2><<<nb, 1024>>>(b, a, ne, peer, 8);
                    if (v == 3) bw<3><<<nb, 1024>>>(b, a, ne, peer, 8);
                    if (v == 4) bw<4><<<nb, 1024>>>(b, a, ne, peer, 8);
                });
                printf("put 64MiB %-28s %3d blocks: %.1f GB/s\n", bn[v], nb, ne * 8.0 / (ms * 1e-3) / 1e9);
            }
    if (me == 0)
        for (size_t sz : {64ull << 10, 256ull << 10, 1ull << 20})
            for (int nb : {1, 8, 132})
                for (int v = 0; v < 4; v++) {
                    size_t ne = sz / (nb * 16) * (nb * 16);
                    float ms = median_ms(e0, e1, [] {}, [&] {
                        if (v == 0) bw_small<0><<<nb, 1024>>>(b, a, ne, peer, 1000, sz);
                        else if (v == 1) bw_small<1><<<nb, 1024>>>(b, a, ne, peer, 1000, sz);
                        else if (v == 2) bw_small<2><<<nb, 1024>>>(b, a, ne, peer, 1000, sz);
                        else bw_small<3><<<nb, 1024>>>(b, a, ne, peer, 1000, sz);
                    });
                    printf("put %7zu B x1000 %-22s %3d blocks: %.1f GB/s\n", sz, v == 0 ? "library putmem_block" : v == 1 ? "raw loop+syncthreads" : v == 2 ? "raw loop, no barrier" : "raw load,barrier,store", nb, ne * 1000.0 / (ms * 1e-3) / 1e9);
                }
    gshmem_barrier_all();
    gshmem_finalize();
    return 0;
}
