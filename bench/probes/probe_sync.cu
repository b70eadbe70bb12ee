/* Tuning aid, not a product benchmark: what a synchronization costs over NVLink on 2 PEs,
 * instruction by instruction, so the library's barrier and collective choices rest on
 * numbers (docs/performance.md). usage: probe_sync [barrier|graph|oneshot|launch|put|small]...
 * (all when none). Uses gshmem only for the heap and gshmem_ptr; every kernel here is raw PTX
 * but the library-code rows (launch: the on-stream barrier's own kernel code). */
#include <chrono>
#include <cuda.h>
#define GSHMEMI_DEVICE_INTERNALS  /* its kernels call gshmemi_* internals (gshmem/forms.h) */
#include "gshmem.h"
#include "gshmemx.h"
#include "common.h"

#define ST_RELAXED(p, v) asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory")
#define ST_RELEASE(p, v) asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory")
#define LD_ACQUIRE(v, p) asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory")
#define FENCE_SYS() asm volatile("fence.acq_rel.sys;" ::: "memory")

/* One barrier round between 2 PEs, variant V, epoch e; flags: mine (peers write it),
 * peer_mine (my slot on the peer); mine_local (my own slot the peer polls),
 * peer_local (the peer's own slot, polled remotely). Thread 0 of the block runs it.
 * V 0: fence.acq_rel.sys + st.relaxed.sys to peer + spin acquire on mine (the library's)
 *   1: no fence (not a release: a probe of the floor)
 *   2: fence.acq_rel.gpu (not a release across GPUs: a probe)
 *   3: st.release.sys to peer
 *   4: pull: fence + local store of my own slot; spin acquire on the peer's slot remotely
 *   5: fence.sc.sys
 *   6: alternate warps: warp (e & 1) stores (block of 64 threads), block barrier around
 *   8: the epoch from global memory before the fence, stored (an older library pattern)
 *   9: fence, red.add 1 to the peer's slot, then the epoch from global (off the critical path)
 *  10: 9 in a kernel that also holds a (never taken) call of a noinline function: the compiler
 *      then puts MEMBAR.ALL.CTA before every system fence (the library's kernels have such
 *      calls: their error reports) */
static __device__ __noinline__ void probe_report(unsigned long long v) {
    printf("probe: unexpected flag %llu\n", v);
    __trap();
}
template <int V>
__device__ __forceinline__ void round_(unsigned long long *mine, unsigned long long *peer_mine,
                                       unsigned long long *mine_local, unsigned long long *peer_local,
                                       unsigned long long e) {
    unsigned long long cur;
    if (V == 6) {
        __syncthreads();
        if (threadIdx.x == (unsigned)(e & 1) * 32) {
            FENCE_SYS();
            ST_RELAXED(peer_mine, e);
        }
        if (threadIdx.x == 0) do LD_ACQUIRE(cur, mine); while (cur < e);
        __syncthreads();
        return;
    }
    if (threadIdx.x) return;
    if (V == 8 || V == 9 || V == 10) {
        unsigned long long *ep = mine_local + 8;   /* a private count in global memory */
        mine += 48;                                /* slots of their own, starting at 0 */
        peer_mine += 48;
        if (V == 8) {
            unsigned long long x = *(volatile unsigned long long *)ep + 1;
            *(volatile unsigned long long *)ep = x;
            FENCE_SYS();
            ST_RELAXED(peer_mine, x);
            do LD_ACQUIRE(cur, mine); while (cur < x);
        } else {
            FENCE_SYS();
            asm volatile("red.relaxed.sys.global.add.u64 [%0], 1;" ::"l"(peer_mine) : "memory");
            unsigned long long x = *(volatile unsigned long long *)ep + 1;
            *(volatile unsigned long long *)ep = x;
            do LD_ACQUIRE(cur, mine); while (cur < x);
            if (V == 10 && cur == 0x123456789abcdefull) probe_report(cur);
        }
        return;
    }
    if (V == 4) {
        FENCE_SYS();
        ST_RELAXED(mine_local, e);
        do LD_ACQUIRE(cur, peer_local); while (cur < e);
        return;
    }
    if (V == 0) FENCE_SYS();
    if (V == 2) asm volatile("fence.acq_rel.gpu;" ::: "memory");
    if (V == 5) asm volatile("fence.sc.sys;" ::: "memory");
    if (V == 3) ST_RELEASE(peer_mine, e);
    else ST_RELAXED(peer_mine, e);
    do LD_ACQUIRE(cur, mine); while (cur < e);
}

template <int V>
__global__ void barrier_loop(unsigned long long *mine, unsigned long long *peer_mine,
                             unsigned long long *mine_local, unsigned long long *peer_local,
                             unsigned long long e0, int iters) {
    for (int i = 1; i <= iters; i++) round_<V>(mine, peer_mine, mine_local, peer_local, e0 + i);
}

__global__ void barrier_lib(unsigned long long *, unsigned long long *, unsigned long long *,
                            unsigned long long *, unsigned long long, int iters) {
    for (int i = 0; i < iters; i++) gshmem_barrier_all();
}

/* Fence costs: 0 a fence with nothing outstanding; 1 a remote store then a fence (the
 * store's acknowledgement round trip); 2 a local store then a fence */
template <int V>
__global__ void fence_loop(unsigned long long *remote, unsigned long long *local, int iters) {
    for (int i = 0; i < iters; i++) {
        if (V == 1) ST_RELAXED(remote, (unsigned long long)i);
        if (V == 2) ST_RELAXED(local, (unsigned long long)i);
        FENCE_SYS();
    }
}

/* graph nodes: one round of barrier variant V per kernel (V < 0: empty kernel;
 * V == 100: one remote store, no wait) */
template <int V>
__global__ void barrier_once(unsigned long long *mine, unsigned long long *peer_mine,
                             unsigned long long *mine_local, unsigned long long *peer_local,
                             unsigned long long *epoch) {
    if (V < 0) return;
    if (V == 100) {
        if (threadIdx.x == 0) ST_RELAXED(peer_mine, 1ull);
        return;
    }
    unsigned long long e = *epoch + 1;   /* every thread reads it before thread 0 writes it */
    __syncthreads();
    round_<V>(mine, peer_mine, mine_local, peer_local, e);
    if (threadIdx.x == 0) *epoch = e;
}

/* Large put: 64 MiB from `nb` blocks, only `active` threads of each 1024 copying */
template <int U>
__global__ void put_active(int4 *d, const int4 *s, size_t nv_per_block, unsigned active, int reps) {
    if (threadIdx.x >= active) return;
    for (int r = 0; r < reps; r++) {
        int4 *db = d + blockIdx.x * nv_per_block;
        const int4 *sb = s + blockIdx.x * nv_per_block;
        size_t i = threadIdx.x;
        for (; i + (U - 1) * (size_t)active < nv_per_block; i += (size_t)active * U) {
            int4 v[U];
#pragma unroll
            for (int u = 0; u < U; u++) v[u] = sb[i + u * (size_t)active];
#pragma unroll
            for (int u = 0; u < U; u++) db[i + u * (size_t)active] = v[u];
        }
        for (; i < nv_per_block; i += active) db[i] = sb[i];
    }
}

/* Small block puts cycling over slots: library putmem_nbi_block with the slot from a
 * runtime modulo (bench/bandwidth before), a power-of-two mask, or a running offset. */
template <int V>
__global__ void __launch_bounds__(1024) small_put(char *dst, const char *src, size_t n, int peer, int reps, size_t stride, int nslots) {
    size_t chunk = n / gridDim.x;
    size_t o = blockIdx.x * chunk;
    int slot = 0;
    for (int r = 0; r < reps; r++) {
        size_t off;
        if (V == 0) off = (size_t)(r % nslots) * stride + blockIdx.x * chunk;
        else if (V == 1) off = (size_t)(r & (nslots - 1)) * stride + blockIdx.x * chunk;
        else off = o;
        gshmemx_putmem_nbi_block(dst + off, src + off, chunk, peer);
        if (V == 2) {
            o += stride;
            if (++slot == nslots) { slot = 0; o = blockIdx.x * chunk; }
        }
    }
    gshmemx_quiet_block();
}


/* One-shot breakdown (graph nodes): an 8-byte allreduce by LL words, raw. The count q lives
 * in global memory (as the library's), the LL area alternates by parity. V bits: 1 PDL wait
 * at entry; 2 load the source before the count (independent loads in flight together). */
/* The raw LL exchange of an 8-byte float sum: the count from global memory, one 16-byte LL
 * store to the peer (flag = count, parity = the area), a poll of my area, the sum into dst. */
__device__ __forceinline__ void ll_send_recv(float2 x, unsigned long long q, float *dst,
                                             unsigned long long *my_area, unsigned long long *peer_area) {
    unsigned long long f = (q & 0xffffffffull) << 32, lo = f | __float_as_uint(x.x), hi = f | __float_as_uint(x.y);
    unsigned long long *to = peer_area + 2 * (q & 1), *from = my_area + 2 * (q & 1);
    asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(to), "l"(lo), "l"(hi) : "memory");
    unsigned long long a, b;
    do asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(from) : "memory");
    while ((a >> 32) != (q & 0xffffffffull) || (b >> 32) != (q & 0xffffffffull));
    dst[0] = x.x + __uint_as_float((unsigned)a);
    dst[1] = x.y + __uint_as_float((unsigned)b);
}
__device__ __forceinline__ void ll_exchange(float2 &x, const float *src, float *dst,
                                            unsigned long long *count, unsigned long long *my_area,
                                            unsigned long long *peer_area) {
    x = *(const float2 *)src;
    unsigned long long q = *(volatile unsigned long long *)count + 1;
    *(volatile unsigned long long *)count = q;
    ll_send_recv(x, q, dst, my_area, peer_area);
}

template <int V>
__global__ void ll_once(const float *src, float *dst, unsigned long long *count,
                        unsigned long long *my_area, unsigned long long *peer_area) {
    if (V & 1) {
        asm volatile("griddepcontrol.wait;" ::: "memory");
        asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    }
    if (threadIdx.x) return;
    float2 x;
    unsigned long long q;
    if (V & 2) {
        x = *(const float2 *)src;
        q = *(volatile unsigned long long *)count + 1;
    } else {
        q = *(volatile unsigned long long *)count + 1;
        x = *(const float2 *)src;
    }
    *(volatile unsigned long long *)count = q;
    ll_send_recv(x, q, dst, my_area, peer_area);
}

/* Is it code size? The raw LL exchange after PAD multiply-adds, straight-line (UNROLL: PAD
 * instructions of code, ~16 B each) or from a loop (a few instructions of code, the same work);
 * STACK: the kernel also uses a local-memory array (a stack frame, as the library's kernels). */
template <int PAD, bool UNROLL, bool STACK>
__global__ void ll_pad(const float *src, float *dst, unsigned long long *count,
                       unsigned long long *my_area, unsigned long long *peer_area) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    if (threadIdx.x) return;
    float acc[8];
#pragma unroll
    for (int i = 0; i < 8; i++) acc[i] = src[0] + i;
    if (UNROLL) {
#pragma unroll
        for (int k = 0; k < PAD / 8; k++)
#pragma unroll
            for (int i = 0; i < 8; i++) asm volatile("fma.rn.f32 %0, %0, 0f3F800001, 0f3F000000;" : "+f"(acc[i]));
    } else {
#pragma unroll 1
        for (int k = 0; k < PAD / 8; k++)
#pragma unroll
            for (int i = 0; i < 8; i++) asm volatile("fma.rn.f32 %0, %0, 0f3F800001, 0f3F000000;" : "+f"(acc[i]));
    }
    float junk = 0;
#pragma unroll
    for (int i = 0; i < 8; i++) junk += acc[i];
    if (STACK) {
        volatile float loc[32];
        for (int i = 0; i < 32; i++) loc[i] = junk + i;
        junk = loc[(int)src[1] & 31];
    }
    float2 x;
    ll_exchange(x, src, dst, count, my_area, peer_area);
    if (junk == 12345.f) dst[2] = junk;   /* keeps the padding */
}

/* Is it cold constant caches? N dependent loads (MODE 0: from a __constant__ table, one
 * 128-byte line apart; 1: from global memory) before the raw LL exchange. */
__constant__ unsigned c_chain[1024];
template <int N, int MODE>
__global__ void ll_chain(const float *src, float *dst, unsigned long long *count,
                         unsigned long long *my_area, unsigned long long *peer_area) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    if (threadIdx.x) return;
    unsigned idx = 0;
    const unsigned *g = (const unsigned *)(my_area + 64);   /* heap words set like c_chain */
    for (int k = 0; k < N; k++) idx = MODE == 0 ? c_chain[idx] : __ldcg(g + idx);
    float2 x;
    ll_exchange(x, src, dst, count, my_area, peer_area);
    if (idx == 12345u) dst[2] = 1.f;
}

/* Where the library's one-shot time goes: the on-stream one-shot kernel's steps (float sum,
 * team WORLD, one channel: plan before the PDL wait, then the run), with SM clock stamps by
 * thread 0 between them. */
__global__ void get_world(gshmemi_team *out) { *out = *gshmemi_team_member(0, "probe"); }
__global__ void __launch_bounds__(512) oneshot_phases(gshmemi_team tt, float *dest, const float *src,
                                                      size_t n, long long *stamps) {
    typedef gshmemi_scope_block S;
    const gshmemi_team *t = &tt;
    long long c[7];
    c[0] = clock64();
    const gshmemi_oneshot_plan P = gshmemi_oneshot_plan_of(t, n, 4, 4, 0, 1);
    c[1] = clock64();
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    const int m = t->size, me = t->my_idx;
    const size_t lo = P.lo, off = lo * 4, bn = (P.hi - lo) * 4;
    const uint2 first = gshmemi_ll_first((const char *)(src + lo), bn, S::rank());
    c[2] = clock64();
    const uint32_t f = gshmemi_oneshot_begin<S>(t, 0, 0, 1, P.debug, 0, "probe");
    c[3] = clock64();
    for (int jj = 1; jj < m; jj++) {
        int j = me + jj < m ? me + jj : me + jj - m;
        char *to = (jj == 1 ? P.to1 : gshmemi_ll_to(t, j, off)) + gshmemi_ll_parity(t, f);
        gshmemi_ll_send<S>(to, (const char *)(src + lo), bn, f, jj == 1 ? &first : NULL);
    }
    c[4] = clock64();
    gshmemi_ll_reduce<float, GSHMEMI_OP_SUM>(t, f, dest + lo, src + lo, off, bn, m, S::rank(),
                                              S::size(), "probe");
    c[5] = clock64();
    S::sync();
    c[6] = clock64();
    if (threadIdx.x == 0)
        for (int i = 0; i < 7; i++) stamps[(f % 128) * 8 + i] = c[i] - c[0];
}

/* The library's one-shot protocol for an 8-byte float sum on 2 PEs (team count, its 16
 * copies, LL store into the peer's scratch at the plan's address, poll of my scratch, sum in
 * team order), written straight-line for one thread: is the library's extra time over the raw
 * exchange in its protocol or in its code's shape? */
__global__ void oneshot_minimal(gshmemi_team tt, float *dest, const float *src) {
    const gshmemi_team *t = &tt;
    const gshmemi_oneshot_plan P = gshmemi_oneshot_plan_of(t, 2, 4, 4, 0, 1);
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    if (threadIdx.x) return;
    const uint2 x = *(const uint2 *)src;
    const uint64_t q = *(volatile uint64_t *)t->seqs + 1;
    for (int k = 0; k < GSHMEMI_ONESHOT_CHANNELS; k++) *(volatile uint64_t *)(t->seqs + k) = q;
    const uint32_t f = (uint32_t)q;
    char *to = P.to1 + gshmemi_ll_parity(t, f);
    uint64_t lo = (uint64_t)f << 32 | x.x, hi = (uint64_t)f << 32 | x.y, a, b;
    asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(to), "l"(lo), "l"(hi) : "memory");
    const char *from = gshmemi_ll_area(t, f, P.j1);
    do asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(from) : "memory");
    while ((uint32_t)(a >> 32) != f || (uint32_t)(b >> 32) != f);
    float m0 = __uint_as_float(x.x), m1 = __uint_as_float(x.y);
    float p0 = __uint_as_float((uint32_t)a), p1 = __uint_as_float((uint32_t)b);
    dest[0] = t->my_idx == 0 ? m0 + p0 : p0 + m0;
    dest[1] = t->my_idx == 0 ? m1 + p1 : p1 + m1;
}

/* Back-to-back launches (launch): how much of an on-stream barrier is the launch. */
__global__ void empty_k(void) {}
__global__ void lib_barrier_k(void) {   /* the library's on-stream barrier kernel, compiled here */
    gshmemi_pdl_enter();
    gshmemx_barrier_all_warp();
}
/* One block of 32 by the driver API with a CUfunction looked up once, PDL as the library's */
static void launch_drv(CUfunction f, cudaStream_t st) {
    CUlaunchConfig cfg = {};
    cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 32;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.hStream = st;
    CUlaunchAttribute at[1];
    at[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    at[0].value.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    if (cuLaunchKernelEx(&cfg, f, NULL, NULL) != CUDA_SUCCESS) {
        fprintf(stderr, "probe_sync: cuLaunchKernelEx failed\n");
        exit(1);
    }
}

/* Replays a captured graph of K calls: per-call µs, median of 5 trials after one warm-up
 * (each trial starts from a barrier); destroys the graph. */
static float time_graph(cudaStream_t st, cudaGraph_t g, int K, cudaEvent_t e0, cudaEvent_t e1) {
    cudaGraphExec_t ge;
    CK(cudaGraphInstantiate(&ge, g, 0));
    float ms = median_ms(e0, e1, [&] { CK(cudaStreamSynchronize(st)); gshmem_barrier_all(); },
                         [&] { CK(cudaGraphLaunch(ge, st)); }, st);
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    return ms * 1000.f / K;
}
/* One block of `threads` on st, with programmatic dependent launch when pdl (as the library's
 * on-stream kernels are launched). */
template <typename... P, typename... A>
static void launch_pdl(void (*k)(P...), int threads, cudaStream_t st, bool pdl, A... args) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(threads);
    cfg.stream = st;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at;
    cfg.numAttrs = pdl ? 1 : 0;
    CK(cudaLaunchKernelEx(&cfg, k, args...));
}

static bool want(int argc, char **argv, const char *w) {
    if (argc < 2) return true;
    for (int i = 1; i < argc; i++) if (!strcmp(argv[i], w)) return true;
    return false;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    gshmem_init();
    int me = gshmem_my_pe(), peer = 1 - me;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    unsigned long long *f = (unsigned long long *)gshmem_calloc(64, 8);
    unsigned long long *mine = f, *mine_local = f + 16, *ep;
    unsigned long long *peer_mine = (unsigned long long *)gshmem_ptr(f, peer);
    unsigned long long *peer_local = (unsigned long long *)gshmem_ptr(f + 16, peer);
    CK(cudaMalloc(&ep, 8));
    unsigned long long e = 0;
    const int iters = 20000;
    typedef void (*bk)(unsigned long long *, unsigned long long *, unsigned long long *, unsigned long long *, unsigned long long, int);
    if (want(argc, argv, "barrier")) {
        struct { bk k; int threads; const char *name; } vs[] = {
            {barrier_loop<0>, 1, "fence.acq_rel.sys + st.relaxed (library)"},
            {barrier_loop<1>, 1, "no fence (probe)"},
            {barrier_loop<2>, 1, "fence.acq_rel.gpu (probe)"},
            {barrier_loop<3>, 1, "st.release.sys"},
            {barrier_loop<4>, 1, "pull: fence + local store, remote poll"},
            {barrier_loop<5>, 1, "fence.sc.sys"},
            {barrier_loop<6>, 64, "alternating warps store, block barrier"},
            {barrier_loop<8>, 1, "epoch loaded before the fence (old library)"},
            {barrier_loop<9>, 1, "fence, red.add, epoch loaded after"},
            {barrier_loop<10>, 1, "the same with a noinline call in the kernel"},
            {barrier_lib, 1, "library gshmem_barrier_all (thread)"},
        };
        for (auto &v : vs) {
            float ms = median_ms(e0, e1, [] { gshmem_barrier_all(); }, [&] {
                v.k<<<1, v.threads>>>(mine, peer_mine, mine_local, peer_local, e, iters);
                e += iters;
            });
            if (me == 0) printf("barrier round %-45s %.3f us\n", v.name, ms * 1000.f / iters);
        }
        const char *fn[3] = {"fence alone", "remote store + fence", "local store + fence"};
        for (int v = 0; v < 3; v++) {
            float ms = median_ms(e0, e1, [] { gshmem_barrier_all(); }, [&] {
                if (v == 0) fence_loop<0><<<1, 1>>>(f + 32, f + 40, iters);
                if (v == 1) fence_loop<1><<<1, 1>>>((unsigned long long *)gshmem_ptr(f + 32, peer), f + 40, iters);
                if (v == 2) fence_loop<2><<<1, 1>>>(f + 32, f + 40, iters);
            });
            if (me == 0) printf("fence cost %-45s %.3f us\n", fn[v], ms * 1000.f / iters);
        }
    }
    if (want(argc, argv, "graph")) {
        /* a graph of K kernels, each one barrier round (or nothing), replayed */
        typedef void (*gk)(unsigned long long *, unsigned long long *, unsigned long long *, unsigned long long *, unsigned long long *);
        struct { gk k; int threads; const char *name; } vs[] = {
            {barrier_once<-1>, 32, "empty kernel"},
            {barrier_once<100>, 32, "one remote store, no wait"},
            {barrier_once<0>, 32, "barrier, library fence"},
            {barrier_once<1>, 32, "barrier, no fence (probe)"},
            {barrier_once<4>, 32, "barrier, pull"},
        };
        const int K = 100;
        cudaStream_t st;
        CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        for (auto &v : vs) {
            /* rounds restart from the flags' current value: reset both sides first */
            CK(cudaMemset(f, 0, 64 * 8));
            CK(cudaMemset(ep, 0, 8));
            CK(cudaDeviceSynchronize());
            gshmem_barrier_all();
            cudaGraph_t g;
            CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
            for (int k = 0; k < K; k++) v.k<<<1, v.threads, 0, st>>>(mine, peer_mine, mine_local, peer_local, ep);
            CK(cudaStreamEndCapture(st, &g));
            float us = time_graph(st, g, K, e0, e1);
            if (me == 0) printf("graph node %-45s %.3f us\n", v.name, us);
        }
        CK(cudaStreamSynchronize(st));
        CK(cudaStreamDestroy(st));
    }

    if (want(argc, argv, "launch")) {
        /* N launches back to back on one stream: GPU time per call (events) and the host's
         * time per launch call; both PEs launch the same sequence */
        const int N = 5000;
        cudaStream_t st;
        CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        cudaFunction_t fe, fb;
        CK(cudaGetFuncBySymbol(&fe, (const void *)empty_k));
        CK(cudaGetFuncBySymbol(&fb, (const void *)lib_barrier_k));
        const char *names[] = {"empty kernel <<<>>>", "empty kernel, cudaLaunchKernelEx + PDL",
                               "empty kernel, cuLaunchKernelEx + PDL (CUfunction cached)",
                               "library barrier_all_on_stream",
                               "barrier kernel, cudaLaunchKernelEx + PDL (as the library)",
                               "barrier kernel, cuLaunchKernelEx + PDL (CUfunction cached)",
                               "barrier kernel <<<>>> (no PDL)"};
        for (int v = 0; v < 7; v++) {
            double host_us = 0;
            float ms = median_ms(e0, e1, [&] { CK(cudaStreamSynchronize(st)); gshmem_barrier_all(); }, [&] {
                auto t0 = std::chrono::steady_clock::now();
                for (int i = 0; i < N; i++) {
                    if (v == 0) empty_k<<<1, 32, 0, st>>>();
                    if (v == 1) launch_pdl(empty_k, 32, st, true);
                    if (v == 2) launch_drv((CUfunction)fe, st);
                    if (v == 3) gshmemx_barrier_all_on_stream(st);
                    if (v == 4) launch_pdl(lib_barrier_k, 32, st, true);
                    if (v == 5) launch_drv((CUfunction)fb, st);
                    if (v == 6) lib_barrier_k<<<1, 32, 0, st>>>();
                }
                host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / N;
            }, st);
            if (me == 0) printf("launch %-60s %.3f us per call (host %.3f us per launch call)\n", names[v],
                                ms * 1000.f / N, host_us);
        }
        CK(cudaStreamSynchronize(st));
        CK(cudaStreamDestroy(st));
    }

    if (want(argc, argv, "oneshot")) {
        /* graph of K 8-byte allreduces: the library's on-stream call, and raw LL kernels */
        const int K = 100;
        float *src = (float *)gshmem_malloc(64), *dst = (float *)gshmem_malloc(64);
        unsigned long long *area = (unsigned long long *)gshmem_calloc(64 + 512, 8), *cnt;
        CK(cudaMalloc(&cnt, 8));
        CK(cudaMemset(cnt, 0, 8));
        float h[2] = {1.f + me, 2.f + me};
        CK(cudaMemcpy(src, h, 8, cudaMemcpyHostToDevice));
        unsigned long long *parea = (unsigned long long *)gshmem_ptr(area, peer);
        {
            /* the chain: each entry 32 words (128 bytes) on from the last */
            std::vector<unsigned> ch(1024);
            for (int i = 0; i < 1024; i++) ch[i] = (unsigned)((i + 32) % 1024);
            CK(cudaMemcpyToSymbol(c_chain, ch.data(), sizeof(unsigned) * 1024));
            CK(cudaMemcpy(area + 64, ch.data(), sizeof(unsigned) * 1024, cudaMemcpyHostToDevice));
        }
        cudaStream_t st;
        CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        typedef void (*lk)(const float *, float *, unsigned long long *, unsigned long long *, unsigned long long *);
        struct { int kind; lk k; int threads; bool pdl; const char *name; } vs[] = {
            {0, NULL, 0, false, "library float_sum_reduce_on_stream, 8 B"},
            {3, NULL, 0, false, "library barrier_all_on_stream"},
            {1, ll_once<0>, 32, false, "raw LL, 32 threads"},
            {1, ll_once<2>, 32, false, "raw LL, 32 threads, source load first"},
            {1, ll_once<0>, 512, false, "raw LL, 512 threads"},
            {1, ll_once<1>, 32, true, "raw LL, 32 threads, PDL"},
            {1, ll_once<3>, 512, true, "raw LL, 512 threads, PDL, source first"},
            {1, ll_pad<2048, false, false>, 512, true, "raw LL + 2048 FMA from a loop"},
            {1, ll_pad<2048, true, false>, 512, true, "raw LL + 2048 FMA straight-line (32 KiB)"},
            {1, ll_pad<512, false, false>, 512, true, "raw LL + 512 FMA from a loop"},
            {1, ll_pad<512, true, false>, 512, true, "raw LL + 512 FMA straight-line (8 KiB)"},
            {1, ll_pad<8, false, true>, 512, true, "raw LL + a stack frame"},
            {1, ll_chain<1, 0>, 512, true, "raw LL + 1 __constant__ load"},
            {1, ll_chain<4, 0>, 512, true, "raw LL + 4 dependent __constant__ loads"},
            {1, ll_chain<4, 1>, 512, true, "raw LL + 4 dependent global loads (L2)"},
        };
        for (auto &v : vs) {
            CK(cudaDeviceSynchronize());
            gshmem_barrier_all();
            cudaGraph_t g;
            CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
            for (int k = 0; k < K; k++) {
                if (v.kind == 0) gshmemx_float_sum_reduce_on_stream(GSHMEM_TEAM_WORLD, dst, src, 2, st);
                else if (v.kind == 3) gshmemx_barrier_all_on_stream(st);
                else launch_pdl(v.k, v.threads, st, v.pdl, (const float *)src, dst, cnt, area, parea);
            }
            CK(cudaStreamEndCapture(st, &g));
            float us = time_graph(st, g, K, e0, e1);
            float r[2];
            CK(cudaMemcpy(r, dst, 8, cudaMemcpyDeviceToHost));
            bool ok = v.kind == 3 || (r[0] == 3.f && r[1] == 5.f);
            CK(cudaMemset(dst, 0, 8));
            if (me == 0) printf("graph one-shot %-45s %.3f us%s\n", v.name, us, ok ? "" : "  WRONG RESULT");
        }
        {
            /* the library's one-shot body, step by step (SM clock cycles, median over calls) */
            gshmemi_team *dw, hw;
            long long *stamps;
            CK(cudaMalloc(&dw, sizeof hw));
            CK(cudaMalloc(&stamps, 128 * 8 * 8));
            CK(cudaMemset(stamps, 0, 128 * 8 * 8));
            get_world<<<1, 1>>>(dw);
            CK(cudaMemcpy(&hw, dw, sizeof hw, cudaMemcpyDeviceToHost));
            CK(cudaDeviceSynchronize());
            gshmem_barrier_all();
            cudaGraph_t g;
            CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
            for (int k = 0; k < K; k++)
                launch_pdl(oneshot_phases, 32, st, true, hw, dst, (const float *)src, (size_t)2, stamps);
            CK(cudaStreamEndCapture(st, &g));
            float us = time_graph(st, g, K, e0, e1);
            std::vector<long long> h(128 * 8);
            CK(cudaMemcpy(h.data(), stamps, h.size() * 8, cudaMemcpyDeviceToHost));
            const char *ph[6] = {"plan", "PDL wait+first pair", "oneshot_begin", "ll_send", "ll_reduce (waits)", "final sync"};
            printf("graph one-shot body, step by step: %.3f us per call; cycles:", us);
            for (int i = 1; i < 7; i++) {
                std::vector<float> d;
                for (int k = 0; k < 128; k++) d.push_back((float)(h[k * 8 + i] - h[k * 8 + i - 1]));
                printf(" %s %.0f;", ph[i - 1], median(d));
            }
            printf("\n");
            /* the same protocol, straight-line, one thread */
            CK(cudaDeviceSynchronize());
            gshmem_barrier_all();
            CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
            for (int k = 0; k < K; k++)
                launch_pdl(oneshot_minimal, 32, st, true, hw, dst, (const float *)src);
            CK(cudaStreamEndCapture(st, &g));
            us = time_graph(st, g, K, e0, e1);
            float r[2];
            CK(cudaMemcpy(r, dst, 8, cudaMemcpyDeviceToHost));
            bool ok = r[0] == 3.f && r[1] == 5.f;
            if (me == 0) printf("graph one-shot %-45s %.3f us%s\n", "library protocol, straight-line, 1 thread", us,
                                ok ? "" : "  WRONG RESULT");
            CK(cudaFree(dw));
            CK(cudaFree(stamps));
        }
        CK(cudaStreamSynchronize(st));
        CK(cudaStreamDestroy(st));
        CK(cudaFree(cnt));
    }
    gshmem_barrier_all();
    const size_t n = 64ull << 20;
    char *a = (char *)gshmem_malloc(n), *b = (char *)gshmem_malloc(n);
    CK(cudaMemset(a, 1, n));
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();
    if (want(argc, argv, "put") && me == 0) {
        int4 *d = (int4 *)gshmem_ptr(b, peer);
        for (int nb : {132, 32})
            for (unsigned act : {1024u, 512u, 256u, 128u})
                for (int U : {4, 8}) {
                    if (nb == 32 && act != 1024) continue;
                    size_t nvb = n / 16 / nb;
                    float ms = median_ms(e0, e1, [] {}, [&] {
                        if (U == 4) put_active<4><<<nb, 1024>>>(d, (const int4 *)a, nvb, act, 8);
                        else put_active<8><<<nb, 1024>>>(d, (const int4 *)a, nvb, act, 8);
                    });
                    printf("put 64MiB x8 %3d blocks, %4u threads active, unroll %d: %.1f GB/s\n", nb, act, U,
                           nvb * 16.0 * nb * 8 / (ms * 1e-3) / 1e9);
                }
    }
    gshmem_barrier_all();
    if (want(argc, argv, "small") && me == 0) {
        const char *sn[3] = {"slot by runtime modulo", "slot by mask", "running offset"};
        for (size_t sz : {64ull << 10, 256ull << 10})
            for (int nb : {1, 8, 132})
                for (int v = 0; v < 3; v++) {
                    size_t ne = sz / nb;
                    ne = ne * nb;
                    float ms = median_ms(e0, e1, [] {}, [&] {
                        if (v == 0) small_put<0><<<nb, 1024>>>(b, a, ne, peer, 1000, sz, 64);
                        if (v == 1) small_put<1><<<nb, 1024>>>(b, a, ne, peer, 1000, sz, 64);
                        if (v == 2) small_put<2><<<nb, 1024>>>(b, a, ne, peer, 1000, sz, 64);
                    });
                    printf("put nbi_block %7zu B x1000 %3d blocks %-24s %.1f GB/s\n", sz, nb, sn[v],
                           ne * 1000.0 / (ms * 1e-3) / 1e9);
                }
    }
    gshmem_barrier_all();
    gshmem_free(a);
    gshmem_free(b);
    gshmem_free(f);
    CK(cudaFree(ep));
    gshmem_finalize();
    return 0;
}
