/* Shared by the GPU tests: CUDA checks, a position-dependent data pattern any PE can
 * recompute, device-side verification that reports the first bad index, and the
 * "NAME: N passed, M failed" summary. */
#ifndef GSHMEM_TEST_COMMON_H
#define GSHMEM_TEST_COMMON_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gshmem.h"

#define CK(call)                                                                             \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) {                                                             \
            fprintf(stderr, "PE %d: %s:%d: %s failed: %s\n", gshmem_my_pe(), __FILE__,       \
                    __LINE__, #call, cudaGetErrorString(e_));                                \
            exit(2);                                                                         \
        }                                                                                    \
    } while (0)

static int t_passed, t_failed;

#define EXPECT(cond, ...)                                                                    \
    do {                                                                                     \
        if (cond) t_passed++;                                                                \
        else {                                                                               \
            t_failed++;                                                                      \
            fprintf(stderr, "FAIL PE %d %s:%d: ", gshmem_my_pe(), __FILE__, __LINE__);       \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fputc('\n', stderr);                                                             \
        }                                                                                    \
    } while (0)

/* Byte i of PE pe's data in round `seed`: a hash, so shifted or misplaced bytes mismatch. */
static __host__ __device__ inline uint8_t pattern(uint64_t seed, int pe, uint64_t i) {
    uint64_t x = seed * 0x9E3779B97F4A7C15ull ^ ((uint64_t)pe << 48) ^ i;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 29;
    return (uint8_t)(x ^ (x >> 13));
}

__global__ void fill_pattern(uint8_t *p, size_t n, uint64_t seed, int pe, uint64_t first) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = pattern(seed, pe, first + i);
}

__global__ void fill_byte(uint8_t *p, size_t n, uint8_t v) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = v;
}

struct mismatch {
    unsigned long long count;
    unsigned long long first;  /* lowest bad index */
    unsigned expected, actual;
};

/* p[i] for i in [0, n) must equal pattern(seed, pe, first + i); the `guard` bytes before
 * and after must still hold `poison`. Every thread of the grid takes a share; callable from
 * any kernel (e.g. right after a wait, to check what a signal or flag published). */
static __device__ void verify_range(const uint8_t *p, size_t n, uint64_t seed, int pe, uint64_t first,
                                    size_t guard, uint8_t poison, mismatch *m) {
    size_t total = n + 2 * guard;
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < total; k += (size_t)gridDim.x * blockDim.x) {
        const uint8_t *q = p - guard + k;
        uint8_t want = (k < guard || k >= guard + n) ? poison : pattern(seed, pe, first + k - guard);
        if (*q != want) {
            atomicAdd(&m->count, 1ull);
            unsigned long long idx = k;  /* index relative to the guard start */
            unsigned long long old = atomicMin(&m->first, idx);
            if (idx < old) { m->expected = want; m->actual = *q; }
        }
    }
}

__global__ void verify_pattern(const uint8_t *p, size_t n, uint64_t seed, int pe, uint64_t first,
                               size_t guard, uint8_t poison, mismatch *m) {
    verify_range(p, n, seed, pe, first, guard, poison, m);
}

/* Returns the mismatch record of a check (synchronizes). */
static inline mismatch check_pattern(const void *p, size_t n, uint64_t seed, int pe, uint64_t first,
                              size_t guard, uint8_t poison) {
    static mismatch *m;
    if (!m) CK(cudaHostAlloc((void **)&m, sizeof *m, cudaHostAllocMapped));
    m->count = 0;
    m->first = ~0ull;
    m->expected = m->actual = 0;
    verify_pattern<<<264, 512>>>((const uint8_t *)p, n, seed, pe, first, guard, poison, m);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    return *m;
}

static inline int summary(const char *name) {
    if (gshmem_my_pe() <= 0 || t_failed)
        printf("%s PE %d: %d passed, %d failed\n", name, gshmem_my_pe(), t_passed, t_failed);
    return t_failed ? 1 : 0;
}

/* Fresh each run (clock-derived on PE 0, or GSHMEM_TEST_SEED to replay a failure) and equal
 * on every PE: PE 0 puts its value to all. Collective. */
/* The node of `pe` when GSHMEM_NODES=K split this one machine's PEs (gshmrun --nodes K):
 * consecutive ranks, as even as the count allows (bootstrap.c). 0 for every PE otherwise. */
static inline int test_node_of(int pe, int np) {
    const char *k = getenv("GSHMEM_NODES");
    int parts = k ? atoi(k) : 0;
    if (parts <= 1) return 0;
    if (parts > np) parts = np;
    return (int)((long long)pe * parts / np);
}
/* true when pe is on another node than this PE: reached by the remote transport */
static inline bool test_is_remote(int me, int pe, int np) { return test_node_of(me, np) != test_node_of(pe, np); }

/* A buffer for device puts' sources and gets' destinations that is not symmetric: device memory
 * from cudaMalloc, or, where PEs of other nodes are reached through the NIC
 * (GSHMEM_REMOTE_TRANSPORT=ibgda), memory of the symmetric heap, since a NIC reaches registered
 * memory only (docs/ibgda.md, "Limits"). Collective in that case: every PE allocates in the
 * same order. */
static inline bool test_nic_route(void) {
    const char *t = getenv("GSHMEM_REMOTE_TRANSPORT");
    return t && !strcmp(t, "ibgda");
}
static inline void *test_local_alloc(size_t n) {
    void *p = NULL;
    if (test_nic_route()) return gshmem_malloc(n);
    if (cudaMalloc(&p, n) != cudaSuccess) return NULL;
    return p;
}
static inline void test_local_free(void *p) {
    if (test_nic_route()) gshmem_free(p);
    else cudaFree(p);
}

/* GSHMEM_TEST_LIGHT=1: the tests that issue tens of thousands of remote requests (test_amo's
 * contended counters, test_strided's element-wise transfers) run every operation and check with
 * fewer threads, repetitions and elements. The suite sets it where every request to another node
 * is a round trip through a test device (the software NIC: docs/testing.md). */
static inline bool test_light(void) {
    const char *v = getenv("GSHMEM_TEST_LIGHT");
    return v && *v && strcmp(v, "0");
}

/* GSHMEM_TEST_TRACE=1: tests that support it print each step before they take it (a hang then
 * names its step). */
static inline bool test_trace(void) {
    const char *v = getenv("GSHMEM_TEST_TRACE");
    return v && *v && strcmp(v, "0");
}

static inline uint64_t agree_seed(void) {
    static uint64_t *sym;
    if (!sym) sym = (uint64_t *)gshmem_malloc(sizeof *sym);
    if (gshmem_my_pe() == 0) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        uint64_t v = getenv("GSHMEM_TEST_SEED") ? strtoull(getenv("GSHMEM_TEST_SEED"), 0, 0)
                                                : (uint64_t)t.tv_sec * 1000003u + t.tv_nsec;
        for (int pe = 0; pe < gshmem_n_pes(); pe++) gshmem_putmem(sym, &v, sizeof v, pe);
        printf("seed %llu (replay with GSHMEM_TEST_SEED)\n", (unsigned long long)v);
    }
    gshmem_barrier_all();
    uint64_t v;
    CK(cudaMemcpy(&v, sym, sizeof v, cudaMemcpyDeviceToHost));
    return v;
}

/* Host-side checks over many values: counts the bad ones and keeps the first, so one EXPECT
 * reports the index, the expected and the actual value. */
struct first_bad {
    size_t count, index;
    unsigned long long expected, actual;
    first_bad() : count(0), index(0), expected(0), actual(0) {}
    void note(size_t i, unsigned long long want, unsigned long long got) {
        if (!count++) { index = i; expected = want; actual = got; }
    }
};

/* xorshift for test parameters (offsets, sizes), identical on all PEs given the seed */
static inline uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

#endif
