/* Proves device RMA over NVLink: putmem/getmem (and _nbi) at thread, warp and block scope
 * move exactly the requested bytes — random data, sizes 1 B .. 256 MiB, unaligned source
 * and destination offsets — to/from the next PE without touching neighbouring bytes; typed
 * p/g/put/get work for every standard RMA type; put_nbi + quiet + p(flag) delivers data
 * before the flag. */
#include "common.h"

enum scope { THREAD, WARP, BLOCK };
static const char *scope_name[] = {"thread", "warp", "block"};
#define GUARD 64
#define POISON 0xA5

/* Each block moves its slice [b*chunk, ...) so multi-block block-scope puts are covered. */
template <int S, bool PUT, bool NBI>
__global__ void rma_kernel(uint8_t *dst, const uint8_t *src, size_t n, int pe) {
    size_t chunk = (n + gridDim.x - 1) / gridDim.x;
    size_t lo = blockIdx.x * chunk;
    if (lo >= n) return;
    size_t len = n - lo < chunk ? n - lo : chunk;
    if (S == THREAD) {
        if (threadIdx.x == 0) {
            if (PUT) NBI ? gshmem_putmem_nbi(dst + lo, src + lo, len, pe) : gshmem_putmem(dst + lo, src + lo, len, pe);
            else NBI ? gshmem_getmem_nbi(dst + lo, src + lo, len, pe) : gshmem_getmem(dst + lo, src + lo, len, pe);
        }
    } else if (S == WARP) {
        if (threadIdx.x < 32) {
            if (PUT) NBI ? gshmemx_putmem_nbi_warp(dst + lo, src + lo, len, pe) : gshmemx_putmem_warp(dst + lo, src + lo, len, pe);
            else NBI ? gshmemx_getmem_nbi_warp(dst + lo, src + lo, len, pe) : gshmemx_getmem_warp(dst + lo, src + lo, len, pe);
        }
    } else {
        if (PUT) NBI ? gshmemx_putmem_nbi_block(dst + lo, src + lo, len, pe) : gshmemx_putmem_block(dst + lo, src + lo, len, pe);
        else NBI ? gshmemx_getmem_nbi_block(dst + lo, src + lo, len, pe) : gshmemx_getmem_block(dst + lo, src + lo, len, pe);
    }
    if (NBI && threadIdx.x == 0) gshmem_quiet();
}

template <int S, bool PUT, bool NBI>
static void launch(uint8_t *dst, const uint8_t *src, size_t n, int pe, int blocks) {
    /* 1024-thread blocks: the block-scope calls must leave room to launch the largest block */
    rma_kernel<S, PUT, NBI><<<blocks, S == BLOCK ? 1024 : 32>>>(dst, src, n, pe);
    CK(cudaGetLastError());
}

static void run_one(uint8_t *a, uint8_t *b, size_t n, int s, bool put, bool nbi, int blocks,
                    uint64_t seed, uint64_t *rng) {
    int me = gshmem_my_pe(), np = gshmem_n_pes();
    int next = (me + 1) % np, prev = (me + np - 1) % np;
    size_t so = rng_next(rng) % 61, dof = GUARD + rng_next(rng) % 61;
    /* a: source data (symmetric, so gets can read it); b: destination with guard bytes */
    fill_pattern<<<264, 512>>>(a, n + so, seed, me, 0);
    fill_byte<<<264, 512>>>(b, n + dof + GUARD, POISON);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();
    typedef void (*fn)(uint8_t *, const uint8_t *, size_t, int, int);
    static const fn table[3][2][2] = {
        {{launch<THREAD, false, false>, launch<THREAD, false, true>}, {launch<THREAD, true, false>, launch<THREAD, true, true>}},
        {{launch<WARP, false, false>, launch<WARP, false, true>}, {launch<WARP, true, false>, launch<WARP, true, true>}},
        {{launch<BLOCK, false, false>, launch<BLOCK, false, true>}, {launch<BLOCK, true, false>, launch<BLOCK, true, true>}}};
    /* put: my a -> next's b. get: next's a -> my b. */
    table[s][put][nbi](b + dof, a + so, n, put ? next : next, blocks);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();
    int from = put ? prev : next;
    mismatch m = check_pattern(b + dof, n, seed, from, so, GUARD, POISON);
    EXPECT(m.count == 0,
           "%s%s %s scope, %d block(s), %zu bytes (src off %zu, dst off %zu) from PE %d: %llu bad "
           "bytes, first at %lld relative to the destination: expected 0x%02x, got 0x%02x",
           put ? "putmem" : "getmem", nbi ? "_nbi" : "", scope_name[s], blocks, n, so, dof - GUARD,
           from, m.count, (long long)m.first - GUARD, m.expected, m.actual);
    gshmem_barrier_all();
}

/* ---- typed p/g/put/get for every RMA type ----------------------------------------------- */
#define NTYPED 97
#define DEF_TYPED_KERNELS(NAME, T)                                                           \
    __global__ void typed_p_##NAME(T *dst, int pe, uint64_t seed) {                          \
        for (int i = threadIdx.x; i < NTYPED; i += blockDim.x) {                             \
            T v;                                                                             \
            uint8_t *b = (uint8_t *)&v;                                                      \
            for (unsigned k = 0; k < sizeof(T); k++)                                         \
                b[k] = pattern(seed, gshmem_my_pe(), i * sizeof(T) + k);                     \
            gshmem_##NAME##_p(dst + i, v, pe);                                               \
        }                                                                                    \
    }                                                                                        \
    __global__ void typed_g_##NAME(T *out, const T *src, int pe) {                           \
        for (int i = threadIdx.x; i < NTYPED; i += blockDim.x) out[i] = gshmem_##NAME##_g(src + i, pe); \
    }                                                                                        \
    __global__ void typed_putget_##NAME(T *dst, const T *src, T *back, int pe) {             \
        gshmemx_##NAME##_put_block(dst, src, NTYPED, pe);                                    \
        if (threadIdx.x == 0) gshmem_quiet();                                                \
        __syncthreads();                                                                     \
        gshmemx_##NAME##_get_block(back, dst, NTYPED, pe);                                   \
    }
GSHMEM_RMA_TYPES(DEF_TYPED_KERNELS)

static void typed_tests(uint8_t *sym, uint8_t *scratch, uint64_t seed) {
    int me = gshmem_my_pe(), np = gshmem_n_pes();
    int next = (me + 1) % np, prev = (me + np - 1) % np;
#define RUN_TYPED(NAME, T)                                                                   \
    {                                                                                        \
        size_t bytes = NTYPED * sizeof(T);                                                   \
        fill_byte<<<1, 256>>>(sym, bytes, POISON);                                           \
        CK(cudaDeviceSynchronize());                                                         \
        gshmem_barrier_all();                                                                \
        typed_p_##NAME<<<1, 64>>>((T *)sym, next, seed);                                     \
        CK(cudaGetLastError());                                                              \
        CK(cudaDeviceSynchronize());                                                         \
        gshmem_barrier_all();                                                                \
        mismatch m = check_pattern(sym, bytes, seed, prev, 0, 0, POISON);                    \
        EXPECT(m.count == 0, "gshmem_" #NAME "_p: %llu bad bytes from PE %d, first %llu", m.count, prev, m.first); \
        /* g: read next's array (which holds data from me) */                                \
        typed_g_##NAME<<<1, 64>>>((T *)scratch, (const T *)sym, next);                       \
        CK(cudaDeviceSynchronize());                                                         \
        m = check_pattern(scratch, bytes, seed, me, 0, 0, POISON);                           \
        EXPECT(m.count == 0, "gshmem_" #NAME "_g: %llu bad bytes reading PE %d, first %llu", m.count, next, m.first); \
        gshmem_barrier_all();                                                                \
        /* typed block put of my pattern to next, then get it back */                        \
        fill_pattern<<<1, 256>>>(scratch, bytes, seed + 1, me, 0);                           \
        CK(cudaDeviceSynchronize());                                                         \
        gshmem_barrier_all();                                                                \
        typed_putget_##NAME<<<1, 128>>>((T *)sym, (const T *)scratch, (T *)(scratch + 4096), next); \
        CK(cudaGetLastError());                                                              \
        CK(cudaDeviceSynchronize());                                                         \
        gshmem_barrier_all();                                                                \
        m = check_pattern(scratch + 4096, bytes, seed + 1, me, 0, 0, POISON);                \
        EXPECT(m.count == 0, "gshmemx_" #NAME "_put_block/get_block round trip: %llu bad bytes", m.count); \
        gshmem_barrier_all();                                                                \
    }
    GSHMEM_RMA_TYPES(RUN_TYPED)
}

/* ---- message passing: put_nbi + quiet + p(flag) ---------------------------------------- */
__global__ void mp_sender(uint8_t *data, const uint8_t *src, size_t n, long *flag, long round, int pe) {
    gshmemx_putmem_nbi_block(data, src, n, pe);
    gshmemx_quiet_block();
    if (threadIdx.x == 0) gshmem_long_p(flag, round, pe);
}
__global__ void mp_receiver(const uint8_t *data, size_t n, long *flag, long round, uint64_t seed,
                            int from, unsigned long long *bad) {
    if (threadIdx.x == 0) gshmem_long_wait_until(flag, GSHMEM_CMP_EQ, round);
    __syncthreads();
    for (size_t i = threadIdx.x; i < n; i += blockDim.x)
        if (data[i] != pattern(seed + round, from, i)) atomicAdd(bad, 1ull);
}

static void message_passing(uint8_t *data, uint8_t *src, long *flag, uint64_t seed) {
    int me = gshmem_my_pe(), np = gshmem_n_pes();
    if (np < 2) return;
    const size_t n = 1 << 16;
    unsigned long long *bad;
    CK(cudaHostAlloc((void **)&bad, sizeof *bad, cudaHostAllocMapped));
    *bad = 0;
    cudaStream_t s1, s2;
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    for (long round = 1; round <= 200; round++) {
        fill_pattern<<<64, 256>>>(src, n, seed + round, me, 0);
        CK(cudaDeviceSynchronize());
        /* receiver first, on its own stream: it spins until the sender's flag lands */
        mp_receiver<<<1, 256, 0, s1>>>(data, n, flag, round, seed, (me + np - 1) % np, bad);
        mp_sender<<<1, 256, 0, s2>>>(data, src, n, flag, round, (me + 1) % np);
        CK(cudaStreamSynchronize(s1));
        CK(cudaStreamSynchronize(s2));
        gshmem_barrier_all();
    }
    EXPECT(*bad == 0, "put_nbi+quiet+p(flag): %llu bytes read stale after the flag", *bad);
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
    cudaFreeHost(bad);
}

int main(void) {
    gshmem_init();
    uint64_t seed = agree_seed(), rng = seed | 1;
    const size_t max = 256ull << 20;
    uint8_t *a = (uint8_t *)gshmem_malloc(max + 4096);
    uint8_t *b = (uint8_t *)gshmem_malloc(max + 4096);
    if (!a || !b) { fprintf(stderr, "allocation failed\n"); return 2; }
    const size_t sizes[] = {1, 3, 16, 31, 255, 4096, 65537, 1000003, 16777216 + 5, max};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        for (int s = THREAD; s <= BLOCK; s++) {
            if (s == THREAD && n > (16u << 20)) continue;   /* one thread: too slow to matter */
            int blocks = s == BLOCK && n > (1u << 20) ? 32 : 1;
            for (int put = 0; put < 2; put++)
                for (int nbi = 0; nbi < 2; nbi++) run_one(a, b, n, s, put, nbi, blocks, seed + si, &rng);
        }
    }
    uint8_t *scratch;
    scratch = (uint8_t *)test_local_alloc(1 << 20);
    if (!scratch) { fprintf(stderr, "allocation failed\n"); return 2; }
    typed_tests(a, scratch, seed);
    long *flag = (long *)gshmem_calloc(1, sizeof(long));
    message_passing(b, scratch, flag, seed);
    gshmem_free(flag);
    gshmem_free(b);
    gshmem_free(a);
    test_local_free(scratch);
    int rc = summary("test_rma");
    gshmem_finalize();
    return rc;
}
