/* Proves GPU-initiated RDMA (the ibgda transport) end to end from kernels, across nodes (gshmrun
 * --nodes K with GSHMEM_REMOTE_TRANSPORT=ibgda; on the software NIC, GSHMEM_IBGDA_NIC=soft, or on
 * ConnectX NICs):
 * - every PE of another node is routed through a NIC queue pair, every PE of this node by
 *   load/store (the device state's routes);
 * - fetch_add from many threads at once (in a warp, the lanes aim at different PEs of other nodes
 *   where there are several, so they wait on different queue pairs), more work requests than a
 *   send queue has slots: each PE's counter at each target hands out every value exactly once,
 *   for 8-byte (ATOMIC_FA) and 4-byte (masked fetch-add) counters;
 * - every atomic of 4 and 8 bytes (fetch, set, swap, compare_swap hit and miss, fetch_add,
 *   fetch_and/or/xor, add, inc) returns the old value a CPU model predicts and leaves its value,
 *   and p / g of 1, 2, 4 and 8 bytes move the bytes they should;
 * - block puts (blocking and _nbi then quiet) and gets of 1 byte .. 1 MiB from and into heap
 *   memory land byte for byte, guards untouched;
 * - put_signal: a kernel that waits for the signal sees every byte of the data;
 * - puts, gets and put_signal of 40 MiB whose two ends cross chunks of the heap (registered
 *   each with its own key) at different offsets;
 * - `test_ibgda bad_atomic`: a misaligned 8-byte atomic completes with a NIC error and ends the
 *   job naming the PE, the operation, the address and the syndrome; `test_ibgda bad_bounds`: a
 *   put running past the end of the heap is refused naming the address (run_gpu_tests.sh
 *   expects both messages).
 * A failure names the PE, the case, the index and both values. */
#include <vector>

#include "common.h"

#define GUARD 64
#define POISON 0xA5

static int me, np;
static std::vector<int> remote;   /* PEs of other nodes */

/* GSHMEM_TEST_TRACE=1: each PE says which part it finished (where a hang is, when one is) */
static void step(const char *what) {
    static const bool on = getenv("GSHMEM_TEST_TRACE") != NULL;
    if (on) fprintf(stderr, "test_ibgda: PE %d: %s done\n", me, what);
}

/* ---- routes --------------------------------------------------------------------------- */
__global__ void routes(int *out, int npes) {
    for (int pe = threadIdx.x; pe < npes; pe += blockDim.x) out[pe] = gshmemi_slot_of(&gshmemi_dstate, pe);
    if (threadIdx.x == 0) out[npes] = gshmemi_dstate.nic.qps != nullptr;
}

static void check_routes(uint8_t *sym) {
    int *d, *h = (int *)calloc((size_t)np + 1, sizeof(int));
    CK(cudaMalloc(&d, ((size_t)np + 1) * sizeof(int)));
    routes<<<1, 256>>>(d, np);
    CK(cudaMemcpy(h, d, ((size_t)np + 1) * sizeof(int), cudaMemcpyDeviceToHost));
    for (int pe = 0; pe < np; pe++) {
        const bool local = gshmem_ptr(sym, pe) != NULL;
        if (!local) remote.push_back(pe);
        EXPECT(local ? h[pe] >= 0 : h[pe] == GSHMEMI_ROUTE_NIC,
               "route to PE %d is %d: expected %s", pe, h[pe], local ? "a load/store slot" : "the NIC (-2)");
    }
    EXPECT(h[np] == 1 || remote.empty(), "the device state has no NIC queue pairs");
    CK(cudaFree(d));
    free(h);
}

/* ---- the typed calls a template needs ---------------------------------------------------- */
template <typename T> struct amo;
#define AMO_OPS(NAME, T)                                                                         \
    template <> struct amo<T> {                                                                  \
        static __host__ __device__ T fetch(const T *w, int pe) { return gshmem_##NAME##_atomic_fetch(w, pe); } \
        static __device__ void set(T *w, T v, int pe) { gshmem_##NAME##_atomic_set(w, v, pe); }  \
        static __device__ T swap(T *w, T v, int pe) { return gshmem_##NAME##_atomic_swap(w, v, pe); } \
        static __device__ T cswap(T *w, T c, T v, int pe) { return gshmem_##NAME##_atomic_compare_swap(w, c, v, pe); } \
        static __device__ T fadd(T *w, T v, int pe) { return gshmem_##NAME##_atomic_fetch_add(w, v, pe); } \
        static __device__ T fand(T *w, T v, int pe) { return gshmem_##NAME##_atomic_fetch_and(w, v, pe); } \
        static __device__ T for_(T *w, T v, int pe) { return gshmem_##NAME##_atomic_fetch_or(w, v, pe); } \
        static __device__ T fxor(T *w, T v, int pe) { return gshmem_##NAME##_atomic_fetch_xor(w, v, pe); } \
        static __device__ void add(T *w, T v, int pe) { gshmem_##NAME##_atomic_add(w, v, pe); } \
        static __device__ void inc(T *w, int pe) { gshmem_##NAME##_atomic_inc(w, pe); }          \
    };
AMO_OPS(uint64, uint64_t)
AMO_OPS(uint32, uint32_t)
template <typename T> struct pg;
#define PG_OPS(NAME, T)                                                                          \
    template <> struct pg<T> {                                                                   \
        static __device__ void p(T *w, T v, int pe) { gshmem_##NAME##_p(w, v, pe); }             \
        static __device__ T g(const T *w, int pe) { return gshmem_##NAME##_g(w, pe); }           \
    };
PG_OPS(uint8, uint8_t)
PG_OPS(uint16, uint16_t)
PG_OPS(uint32, uint32_t)
PG_OPS(uint64, uint64_t)

/* ---- counters ------------------------------------------------------------------------- */
/* Thread t's k-th fetch_add goes to remote[(t + k) % nr]: PE me's own word there (only this PE
 * adds to it), and the value it got is marked in seen[target index][value]. */
template <typename T>
__global__ void count(T *ctr, const int *rem, int nr, int iters, unsigned *seen, unsigned per, int mype) {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < iters; k++) {
        const int ri = (int)((t + (unsigned)k) % (unsigned)nr);
        const T v = amo<T>::fadd(ctr + mype, (T)1, rem[ri]);
        if ((unsigned long long)v < per) atomicAdd(&seen[(size_t)ri * per + (size_t)v], 1u);
        else atomicAdd(&seen[(size_t)nr * per], 1u);   /* out of range */
    }
}

template <typename T> static void counters(T *ctr, const char *type) {
    const int nr = (int)remote.size(), blocks = 4, threads = 128, iters = 12;
    const unsigned total = blocks * threads * iters, per = (total + nr - 1) / nr + nr;
    int *d_rem;
    unsigned *seen;
    CK(cudaMalloc(&d_rem, nr * sizeof(int)));
    CK(cudaMemcpy(d_rem, remote.data(), nr * sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaMalloc(&seen, ((size_t)nr * per + 1) * sizeof(unsigned)));
    CK(cudaMemset(seen, 0, ((size_t)nr * per + 1) * sizeof(unsigned)));
    count<T><<<blocks, threads>>>(ctr, d_rem, nr, iters, seen, per, me);
    CK(cudaDeviceSynchronize());
    std::vector<unsigned> h((size_t)nr * per + 1);
    CK(cudaMemcpy(h.data(), seen, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    gshmem_barrier_all();
    /* how many adds each target got from this PE: thread t's k-th to (t + k) % nr */
    std::vector<unsigned> got(nr, 0);
    for (unsigned t = 0; t < (unsigned)(blocks * threads); t++)
        for (int k = 0; k < iters; k++) got[(t + k) % nr]++;
    EXPECT(h[(size_t)nr * per] == 0, "%s fetch_add: %u values out of range", type, h[(size_t)nr * per]);
    for (int ri = 0; ri < nr; ri++) {
        unsigned bad = 0, first = ~0u;
        for (unsigned v = 0; v < per; v++) {
            const unsigned want = v < got[ri] ? 1 : 0;
            if (h[(size_t)ri * per + v] != want) {
                bad++;
                if (first == ~0u) first = v;
            }
        }
        EXPECT(bad == 0, "%s fetch_add to PE %d: %u values not handed out exactly once (first: %u seen %u times)", type,
               remote[ri], bad, first, first == ~0u ? 0 : h[(size_t)ri * per + first]);
    }
    /* and each target's word holds the count */
    for (int pe = 0; pe < np; pe++) {
        int ri = -1;
        for (int i = 0; i < nr; i++)
            if (remote[i] == pe) ri = i;
        if (ri < 0) continue;
        const T v = amo<T>::fetch(ctr + me, pe);   /* (the host form) */
        EXPECT((unsigned)v == got[ri], "%s counter of PE %d at PE %d is %llu, expected %u", type, me, pe,
               (unsigned long long)v, got[ri]);
    }
    CK(cudaFree(d_rem));
    CK(cudaFree(seen));
}

/* ---- every atomic, p and g --------------------------------------------------------------- */
enum { A_FETCH, A_SET, A_SWAP, A_CSWAP_HIT, A_CSWAP_MISS, A_FADD, A_FAND, A_FOR, A_FXOR, A_ADD, A_INC, A_N };
static const char *a_name[A_N] = {"fetch", "set", "swap", "compare_swap (hit)", "compare_swap (miss)", "fetch_add",
                                  "fetch_and", "fetch_or", "fetch_xor", "add", "inc"};

template <typename T> __device__ T apply(int op, T *w, T v, T cur, int pe) {
    switch (op) {
    case A_FETCH: return amo<T>::fetch(w, pe);
    case A_SET: amo<T>::set(w, v, pe); return cur;
    case A_SWAP: return amo<T>::swap(w, v, pe);
    case A_CSWAP_HIT: return amo<T>::cswap(w, cur, v, pe);
    case A_CSWAP_MISS: return amo<T>::cswap(w, (T)(cur ^ 1), v, pe);
    case A_FADD: return amo<T>::fadd(w, v, pe);
    case A_FAND: return amo<T>::fand(w, v, pe);
    case A_FOR: return amo<T>::for_(w, v, pe);
    case A_FXOR: return amo<T>::fxor(w, v, pe);
    case A_ADD: amo<T>::add(w, v, pe); return cur;
    default: amo<T>::inc(w, pe); return cur;
    }
}

/* Thread op runs its op on its own word at pe (initial value init; the words of this PE, `mine`,
 * no other PE touches), then reads it back: out[2 op] the returned value, out[2 op + 1] the word
 * after. */
template <typename T> __global__ void atomics(T *mine, T init, T v, int pe, T *out) {
    const int op = threadIdx.x;
    if (op >= A_N) return;
    amo<T>::set(mine + op, init, pe);
    gshmem_quiet();
    out[2 * op] = apply<T>(op, mine + op, v, init, pe);
    gshmem_quiet();
    out[2 * op + 1] = amo<T>::fetch(mine + op, pe);
}

template <typename T> static T model(int op, T init, T v) {
    switch (op) {
    case A_SET: case A_SWAP: case A_CSWAP_HIT: return v;
    case A_FADD: case A_ADD: return (T)(init + v);
    case A_FAND: return init & v;
    case A_FOR: return init | v;
    case A_FXOR: return init ^ v;
    case A_INC: return (T)(init + 1);
    default: return init;
    }
}

template <typename T> static void every_atomic(T *words, const char *type, uint64_t seed) {
    T *out;
    CK(cudaMalloc(&out, 2 * A_N * sizeof(T)));
    for (int round = 0; round < 4; round++) {
        const T init = (T)(pattern(seed, round, 1) * 0x0101010101010101ull ^ (uint64_t)round << 40);
        const T v = (T)(pattern(seed, round, 2) * 0x0001000100010001ull + 0x8000000000000003ull);
        for (int pe : remote) {
            atomics<T><<<1, 32>>>(words + (size_t)me * A_N, init, v, pe, out);
            CK(cudaDeviceSynchronize());
            T h[2 * A_N];
            CK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
            for (int op = 0; op < A_N; op++) {
                const bool fetches = op != A_SET && op != A_ADD && op != A_INC;
                EXPECT(!fetches || h[2 * op] == init, "%s %s at PE %d returned %#llx, expected %#llx", type,
                       a_name[op], pe, (unsigned long long)h[2 * op], (unsigned long long)init);
                EXPECT(h[2 * op + 1] == model<T>(op, init, v), "%s %s at PE %d left %#llx, expected %#llx", type,
                       a_name[op], pe, (unsigned long long)h[2 * op + 1], (unsigned long long)model<T>(op, init, v));
            }
        }
    }
    CK(cudaFree(out));
}

template <typename T> __global__ void p_then_g(T *slot, int pe, T v, T *out) {
    pg<T>::p(slot, v, pe);
    gshmem_quiet();
    *out = pg<T>::g(slot, pe);
}

template <typename T> static void p_g(T *slot, const char *type) {
    T *out;
    CK(cudaMalloc(&out, sizeof(T)));
    for (int pe : remote) {   /* (slot: this PE's own, slot + me at every PE) */
        const T v = (T)(0x8877665544332211ull + (uint64_t)pe * 0x0101 + (uint64_t)me * 0x1000);
        p_then_g<T><<<1, 1>>>(slot + me, pe, v, out);
        T h;
        CK(cudaMemcpy(&h, out, sizeof h, cudaMemcpyDeviceToHost));
        EXPECT(h == v, "%s p then g at PE %d: %#llx, expected %#llx", type, pe, (unsigned long long)h,
               (unsigned long long)v);
    }
    CK(cudaFree(out));
}

/* ---- block puts and gets, put_signal ------------------------------------------------------ */
__global__ void put_block(uint8_t *dst, const uint8_t *src, size_t n, int pe, int nbi) {
    if (nbi) gshmemx_putmem_nbi_block(dst, src, n, pe);
    else gshmemx_putmem_block(dst, src, n, pe);
    if (nbi) gshmem_quiet();
}
__global__ void get_block(uint8_t *dst, const uint8_t *src, size_t n, int pe) {
    gshmemx_getmem_block(dst, src, n, pe);
}
__global__ void check(const uint8_t *p, size_t n, uint64_t seed, int pe, mismatch *m) {
    verify_range(p, n, seed, pe, 0, GUARD, POISON, m);
}
__global__ void put_sig(uint8_t *dst, const uint8_t *src, size_t n, uint64_t *sig, uint64_t v, int pe) {
    gshmemx_putmem_signal_block(dst, src, n, sig, v, GSHMEM_SIGNAL_SET, pe);
}
__global__ void wait_check(const uint8_t *p, size_t n, uint64_t *sig, uint64_t v, uint64_t seed, int pe, mismatch *m) {
    if (threadIdx.x == 0) gshmem_signal_wait_until(sig, GSHMEM_CMP_GE, v);   /* (every block checks data) */
    __syncthreads();
    verify_range(p, n, seed, pe, 0, GUARD, POISON, m);
}

static bool mism(mismatch *m, const char *what, size_t n, int from) {
    const bool ok = m->count == 0;
    EXPECT(ok, "%s of %zu bytes from PE %d: %llu bad bytes, first at %lld (expected %#x, got %#x)", what, n, from,
           m->count, (long long)m->first - GUARD, m->expected, m->actual);
    memset(m, 0, sizeof *m);
    m->first = ~0ull;
    return ok;
}

static void rma(uint8_t *src, uint8_t *dst, uint64_t *sig, mismatch *m, uint64_t seed) {
    /* every PE puts to the PE `shift` ahead if that is on another node */
    for (size_t n = 1, round = 0; n <= (1u << 20); n = n * 7 + 3, round++) {
        for (int nbi = 0; nbi < 2; nbi++) {
            const uint64_t s = seed + round * 2 + nbi;
            fill_pattern<<<64, 256>>>(src, n, s, me, 0);
            fill_byte<<<64, 256>>>(dst - GUARD, n + 2 * GUARD, POISON);
            CK(cudaDeviceSynchronize());
            gshmem_barrier_all();
            for (int pe : remote)
                if (pe == (me + np / 2) % np) put_block<<<1, 256>>>(dst, src, n, pe, nbi);
            CK(cudaDeviceSynchronize());
            gshmem_barrier_all();
            const int from = (me - np / 2 + np) % np;
            if (gshmem_ptr(dst, from) == NULL) {
                check<<<64, 256>>>(dst, n, s, from, m);
                CK(cudaDeviceSynchronize());
                mism(m, nbi ? "putmem_nbi_block + quiet" : "putmem_block", n, from);
            }
        }
        /* get: read the PE's src (its pattern) into dst here */
        const uint64_t s = seed + 1000 + round;
        fill_pattern<<<64, 256>>>(src, n, s, me, 0);
        fill_byte<<<64, 256>>>(dst - GUARD, n + 2 * GUARD, POISON);
        CK(cudaDeviceSynchronize());
        gshmem_barrier_all();
        const int from = (me + np / 2) % np;
        if (gshmem_ptr(src, from) == NULL) {
            get_block<<<1, 256>>>(dst, src, n, from);
            check<<<64, 256>>>(dst, n, s, from, m);
            CK(cudaDeviceSynchronize());
            mism(m, "getmem_block", n, from);
        }
        gshmem_barrier_all();
    }
    /* put_signal: the waiter sees all the data once the signal arrives */
    for (size_t n = 8, round = 0; n <= (256u << 10); n *= 5, round++) {
        const uint64_t s = seed + 2000 + round, v = round + 1;
        fill_pattern<<<64, 256>>>(src, n, s, me, 0);
        fill_byte<<<64, 256>>>(dst - GUARD, n + 2 * GUARD, POISON);
        CK(cudaDeviceSynchronize());
        gshmem_barrier_all();
        const int to = (me + np / 2) % np, from = (me - np / 2 + np) % np;
        cudaStream_t st;
        CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        if (gshmem_ptr(dst, from) == NULL) wait_check<<<8, 256, 0, st>>>(dst, n, sig, v, s, from, m);
        if (gshmem_ptr(dst, to) == NULL) put_sig<<<1, 256>>>(dst, src, n, sig, v, to);
        CK(cudaDeviceSynchronize());
        CK(cudaStreamDestroy(st));
        if (gshmem_ptr(dst, from) == NULL) mism(m, "putmem_signal_block, seen after the signal", n, from);
        gshmem_barrier_all();
    }
}

/* Transfers that cross chunks of the heap (each chunk is registered with its own key): 40 MiB
 * from a buffer over the first chunk's end into one over the second's, so the two ends cross at
 * different offsets; put, get and put_signal. */
#define BIG (40u << 20)
static void rma_chunks(uint8_t *bs, uint8_t *bd, uint64_t *sig, mismatch *m, uint64_t seed) {
    gshmemx_heap_info_t hi;
    gshmemx_heap_info(&hi);
    EXPECT(hi.n_chunks >= 2, "the heap has %d chunks: the cross-chunk cases need 2 or more", hi.n_chunks);
    const size_t n = BIG - 4096 - 3;
    const uint8_t *src = bs + 3;
    const int to = (me + np / 2) % np, from = (me - np / 2 + np) % np;
    for (int kind = 0; kind < 3; kind++) {
        const uint64_t s = seed + 3000 + kind, v = 100 + kind;
        fill_pattern<<<264, 256>>>(bs + 3, n, s, me, 0);
        fill_byte<<<264, 256>>>(bd - GUARD, n + 2 * GUARD, POISON);
        CK(cudaDeviceSynchronize());
        gshmem_barrier_all();
        cudaStream_t st;
        CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        if (kind == 2 && gshmem_ptr(bd, from) == NULL) wait_check<<<64, 256, 0, st>>>(bd, n, sig, v, s, from, m);
        if (kind == 0 && gshmem_ptr(bd, to) == NULL) put_block<<<1, 256>>>(bd, src, n, to, 0);
        if (kind == 1 && gshmem_ptr(bs, to) == NULL) get_block<<<1, 256>>>(bd, src, n, to);
        if (kind == 2 && gshmem_ptr(bd, to) == NULL) put_sig<<<1, 256>>>(bd, src, n, sig, v, to);
        CK(cudaDeviceSynchronize());
        CK(cudaStreamDestroy(st));
        gshmem_barrier_all();
        const int peer = kind == 1 ? to : from;
        if (gshmem_ptr(bd, peer) == NULL) {
            if (kind != 2) {
                check<<<264, 256>>>(bd, n, s, peer, m);
                CK(cudaDeviceSynchronize());
            }
            mism(m, kind == 0 ? "putmem_block across chunks" : kind == 1 ? "getmem_block across chunks"
                                                                           : "putmem_signal_block across chunks",
                 n, peer);
        }
        gshmem_barrier_all();
    }
}

/* ---- an error completion ends the job --------------------------------------------------- */
__global__ void put_past_end(uint8_t *dst, const uint8_t *src, size_t n, int pe) { gshmem_putmem(dst, src, n, pe); }

__global__ void misaligned_add(uint64_t *w, int pe) {
    gshmem_uint64_atomic_add(w, 1, pe);
    gshmem_quiet();   /* (an add does not wait: the quiet meets the error) */
}

/* `test_ibgda bad_atomic`: an 8-byte atomic at an address 4 bytes off its alignment; the NIC
 * completes it with an error (remote invalid request) and the job ends naming it. */
static int bad_atomic(uint8_t *src) {
    if (me == 0 && !remote.empty()) {
        fprintf(stderr, "PE 0: 8-byte atomic add at %p (4 bytes off alignment) at PE %d\n", (void *)(src + 4),
                remote[0]);
        misaligned_add<<<1, 1>>>((uint64_t *)(src + 4), remote[0]);
        cudaError_t e = cudaDeviceSynchronize();
        fprintf(stderr, "PE 0: the kernel ended with %s\n", cudaGetErrorString(e));
        return e == cudaSuccess ? 0 : 3;
    }
    gshmem_barrier_all();   /* (the job ends before PE 0 gets here) */
    return 0;
}

/* `test_ibgda bad_bounds`: a put whose range runs 4080 bytes past the end of the heap: its
 * first 16 bytes go, the rest is refused with a message naming the address. */
static int bad_bounds(uint8_t *src) {
    gshmemx_heap_info_t hi;
    gshmemx_heap_info(&hi);
    if (me == 0 && !remote.empty()) {
        uint8_t *end = (uint8_t *)hi.base + hi.mapped;
        fprintf(stderr, "PE 0: putmem of 4096 bytes at %p (16 bytes before the end of the heap) to PE %d\n",
                (void *)(end - 16), remote[0]);
        put_past_end<<<1, 1>>>(end - 16, src, 4096, remote[0]);
        cudaError_t e = cudaDeviceSynchronize();
        fprintf(stderr, "PE 0: the kernel ended with %s\n", cudaGetErrorString(e));
        return e == cudaSuccess ? 0 : 3;
    }
    gshmem_barrier_all();   /* (the job ends before PE 0 gets here) */
    return 0;
}

int main(int argc, char **argv) {
    gshmem_init();
    me = gshmem_my_pe();
    np = gshmem_n_pes();
    step("init");
    const uint64_t seed = agree_seed();
    const size_t max = (1u << 20) + 64;
    uint8_t *src = (uint8_t *)gshmem_malloc(max);
    uint8_t *dst = (uint8_t *)gshmem_malloc(max + 2 * GUARD) + GUARD;
    uint64_t *ctr64 = (uint64_t *)gshmem_calloc((size_t)np, sizeof(uint64_t));
    uint32_t *ctr32 = (uint32_t *)gshmem_calloc((size_t)np, sizeof(uint32_t));
    uint64_t *w64 = (uint64_t *)gshmem_calloc((size_t)np * A_N, sizeof(uint64_t));
    uint32_t *w32 = (uint32_t *)gshmem_calloc((size_t)np * A_N, sizeof(uint32_t));
    uint8_t *s8 = (uint8_t *)gshmem_calloc((size_t)np, 1);
    uint16_t *s16 = (uint16_t *)gshmem_calloc((size_t)np, 2);
    uint32_t *s32 = (uint32_t *)gshmem_calloc((size_t)np, 4);
    uint64_t *s64 = (uint64_t *)gshmem_calloc((size_t)np, 8);
    uint64_t *sig = (uint64_t *)gshmem_calloc(1, sizeof(uint64_t));
    mismatch *m;
    CK(cudaHostAlloc((void **)&m, sizeof *m, cudaHostAllocMapped));
    memset(m, 0, sizeof *m);
    m->first = ~0ull;
    check_routes(src);
    if (remote.empty()) {
        fprintf(stderr, "test_ibgda: no PE on another node (run with gshmrun --nodes K): nothing to test\n");
        gshmem_finalize();
        return 2;
    }
    if (argc > 1 && !strcmp(argv[1], "bad_bounds")) return bad_bounds(src);
    if (argc > 1 && !strcmp(argv[1], "bad_atomic")) return bad_atomic(src);
    uint8_t *bs = (uint8_t *)gshmem_malloc(BIG);
    uint8_t *bd = (uint8_t *)gshmem_malloc(BIG + 2 * GUARD) + GUARD;
    step("routes");
    gshmem_barrier_all();
    counters<uint64_t>(ctr64, "8-byte");
    step("8-byte counters");
    counters<uint32_t>(ctr32, "4-byte");
    step("4-byte counters");
    gshmem_barrier_all();
    every_atomic<uint64_t>(w64, "8-byte", seed);
    step("8-byte atomics");
    gshmem_barrier_all();
    every_atomic<uint32_t>(w32, "4-byte", seed);
    step("4-byte atomics");
    gshmem_barrier_all();
    p_g<uint8_t>(s8, "1-byte");
    p_g<uint16_t>(s16, "2-byte");
    p_g<uint32_t>(s32, "4-byte");
    p_g<uint64_t>(s64, "8-byte");
    step("p and g");
    gshmem_barrier_all();
    rma(src, dst, sig, m, seed);
    step("rma");
    gshmem_barrier_all();
    rma_chunks(bs, bd, sig, m, seed);
    step("rma across chunks");
    gshmem_barrier_all();
    int rc = summary("test_ibgda");
    gshmem_finalize();
    return rc;
}
