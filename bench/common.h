/* Shared by the benchmarks: CUDA checks, medians, event timing. Every benchmark times with
 * CUDA events around whole kernels, warms up first, and reports the median of trials. */
#ifndef GSHMEM_BENCH_COMMON_H
#define GSHMEM_BENCH_COMMON_H

#include <cuda_runtime.h>
#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

/* Command lines of the installed perftests (gshmem-perftest-NAME): --help answers before any
 * GPU work; an option not listed in the program's usage is an error (exit 2). */
static inline bool bench_is_help(const char *a) { return !strcmp(a, "--help") || !strcmp(a, "-h"); }
static inline void bench_usage_exit(const char *usage, int status) {
    fputs(usage, status ? stderr : stdout);
    exit(status);
}
/* "--name VALUE": true (and *a advanced) when argv[*a] is name and a value follows. */
static inline bool bench_opt(int argc, char **argv, int *a, const char *name, const char **val) {
    if (strcmp(argv[*a], name) || *a + 1 >= argc) return false;
    *val = argv[++*a];
    return true;
}
/* A byte count with an optional K/M/G suffix (binary), or an iteration count; 0 on junk. */
static inline size_t bench_parse_count(const char *s) {
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'I') end++;
    if (*end == 'b' || *end == 'B') end++;
    return *end || end == s ? 0 : (size_t)v;
}

/* Whether name is one of the comma-separated names of list. */
static inline bool bench_listed(const char *list, const char *name) {
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n)) return true;
        if (!e) break;
        p = e + 1;
    }
    return false;
}

#define CK(x)                                                                                \
    do {                                                                                     \
        cudaError_t e_ = (x);                                                                \
        if (e_ != cudaSuccess) {                                                             \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x,                \
                    cudaGetErrorString(e_));                                                 \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

/* The SMs of this process's GPU. */
static inline int bench_sm_count(void) {
    int dev, sms;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    return sms;
}

static inline float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.f : v[v.size() / 2];
}

static inline float elapsed_ms(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CK(cudaEventSynchronize(b));
    CK(cudaEventElapsedTime(&ms, a, b));
    return ms;
}

/* The median, over trials 1-5 (trial 0 warms up), of the ms between events recorded on stream
 * st around launch(); before() runs ahead of each trial (a barrier of the PEs, say). Launch
 * errors are checked after each trial. */
template <class Before, class Launch>
static float median_ms(cudaEvent_t e0, cudaEvent_t e1, Before before, Launch launch,
                       cudaStream_t st = 0) {
    std::vector<float> t;
    for (int trial = 0; trial < 6; trial++) {
        before();
        CK(cudaEventRecord(e0, st));
        launch();
        CK(cudaEventRecord(e1, st));
        CK(cudaGetLastError());
        float ms = elapsed_ms(e0, e1);
        if (trial) t.push_back(ms);
    }
    return median(t);
}

static inline const char *fmt_size(size_t n, char *buf) {
    if (n >= (1u << 20)) sprintf(buf, "%zuMiB", n >> 20);
    else if (n >= 1024) sprintf(buf, "%zuKiB", n >> 10);
    else sprintf(buf, "%zuB", n);
    return buf;
}

/* Byte pattern of (seed, i): validation data that a misplaced byte cannot match. */
__host__ __device__ static inline unsigned char bench_pattern(unsigned seed, size_t i) {
    unsigned x = (unsigned)i * 2654435761u ^ seed * 40503u;
    return (unsigned char)(x ^ (x >> 15) ^ (x >> 7));
}

__global__ void bench_fill(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = bench_pattern(seed, i);
}

__global__ void bench_count_bad(const unsigned char *p, size_t n, unsigned seed, unsigned long long *bad) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        if (p[i] != bench_pattern(seed, i)) atomicAdd(bad, 1ull);
}

/* Counts bytes of p[0..n) that differ from the pattern (synchronizes). */
static inline unsigned long long bench_check(const void *p, size_t n, unsigned seed) {
    unsigned long long *bad, h = 0;
    CK(cudaMalloc(&bad, sizeof *bad));
    CK(cudaMemset(bad, 0, sizeof *bad));
    bench_count_bad<<<264, 512>>>((const unsigned char *)p, n, seed, bad);
    CK(cudaMemcpy(&h, bad, sizeof h, cudaMemcpyDeviceToHost));
    CK(cudaFree(bad));
    return h;
}

#endif
