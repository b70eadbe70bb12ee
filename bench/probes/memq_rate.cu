// How fast a proxy-like host thread gets small copies and ticket writes through its own stream
// while a kernel of the same process waits in a given way (under a bandwidth load a staged
// memory queue sharing the program's CUDA context passed ~435 tickets/s, while one placement
// alone takes ~11 us). The host thread does what memq.c + transport.c do per request:
// cudaMemcpyAsync of B bytes from pinned host memory to the GPU on a high-priority non-blocking
// stream, then cuStreamWriteValue64 of a ticket into mapped pinned memory, keeping D requests in
// flight and polling the ticket word; it reports tickets per second.
// usage: memq_rate WAITER [BYTES [DEPTH [SECONDS]]]
//   WAITER: none | gpu (1 block x 1024, thread 0 polls GPU memory, the rest wait at bar.sync)
//           | host (the same, thread 0 polls mapped host memory with ld.acquire.sys)
//           | host256 (256 threads each poll their own word of mapped host memory)
//           | hostback (host256 with the channel's back-off: doubling __nanosleep up to 1 us)
// Build: nvcc -O2 -arch=sm_90 -o memq_rate bench/probes/memq_rate.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x)                                                                                       \
    do {                                                                                            \
        cudaError_t e_ = (x);                                                                       \
        if (e_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));    \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)
#define CU(x)                                                                                       \
    do {                                                                                            \
        CUresult r_ = (x);                                                                          \
        if (r_ != CUDA_SUCCESS) {                                                                   \
            const char *n_ = "?";                                                                   \
            cuGetErrorName(r_, &n_);                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, n_);                        \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

static double now_s() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

__device__ uint64_t ld_acq_sys(const volatile uint64_t *p) {
    uint64_t v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

// mode 1: GPU memory, 2: host memory (thread 0), 3: host, 256 own words, 4: 3 with back-off
__global__ void waiter(int mode, const volatile uint64_t *stop_dev, const volatile uint64_t *stop_host) {
    if (mode >= 3) {
        if (threadIdx.x >= 256) return;
        unsigned ns = 0;
        while (ld_acq_sys(stop_host + threadIdx.x * 8) == 0)
            if (mode == 4) {
                if (ns) __nanosleep(ns);
                ns = ns ? (ns < 1024 ? 2 * ns : 1024) : 32;
            }
        return;
    }
    if (threadIdx.x == 0) {
        if (mode == 1) while (*stop_dev == 0) {}
        else while (ld_acq_sys(stop_host) == 0) {}
    }
    __syncthreads();
}

int main(int argc, char **argv) {
    const char *w = argc > 1 ? argv[1] : "none";
    size_t bytes = argc > 2 ? strtoull(argv[2], 0, 0) : 4096;
    int depth = argc > 3 ? atoi(argv[3]) : 16;
    double secs = argc > 4 ? atof(argv[4]) : 2.0;
    int mode = !strcmp(w, "gpu") ? 1 : !strcmp(w, "host") ? 2 : !strcmp(w, "host256") ? 3
               : !strcmp(w, "hostback") ? 4 : 0;
    CK(cudaSetDevice(0));
    int lo, hi;
    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    cudaStream_t app, px;
    CK(cudaStreamCreateWithFlags(&app, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithPriority(&px, cudaStreamNonBlocking, hi));
    uint64_t *stop_dev, *stop_host, *d_stop_host, *word, *d_word;
    CK(cudaMalloc(&stop_dev, 8));
    CK(cudaMemset(stop_dev, 0, 8));
    CK(cudaHostAlloc(&stop_host, 256 * 64, cudaHostAllocMapped));
    memset(stop_host, 0, 256 * 64);
    CK(cudaHostGetDevicePointer(&d_stop_host, stop_host, 0));
    CK(cudaHostAlloc(&word, 8, cudaHostAllocMapped));
    *word = 0;
    CK(cudaHostGetDevicePointer(&d_word, word, 0));
    char *src, *dst;
    CK(cudaHostAlloc(&src, bytes * depth, cudaHostAllocDefault));
    CK(cudaMalloc(&dst, bytes * depth));
    if (mode) waiter<<<1, 1024, 0, app>>>(mode, stop_dev, d_stop_host);
    CK(cudaGetLastError());
    uint64_t issued = 0, passed = 0;
    double t0 = now_s(), t_end = t0 + secs;
    while (now_s() < t_end) {
        while (issued - passed < (uint64_t)depth) {   // keep DEPTH requests in flight
            size_t slot = issued % depth;
            CK(cudaMemcpyAsync(dst + slot * bytes, src + slot * bytes, bytes, cudaMemcpyHostToDevice, px));
            CU(cuStreamWriteValue64((CUstream)px, (CUdeviceptr)d_word, issued + 1, CU_STREAM_WRITE_VALUE_DEFAULT));
            issued++;
        }
        passed = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    }
    double dt = now_s() - t0;
    printf("memq_rate waiter=%s bytes=%zu depth=%d: %.0f tickets/s (%.2f us each)\n", w, bytes, depth,
           passed / dt, dt / (passed ? passed : 1) * 1e6);
    // release the waiter
    CK(cudaMemsetAsync(stop_dev, 1, 8, px));
    for (int i = 0; i < 256; i++) __atomic_store_n(&stop_host[i * 8], 1, __ATOMIC_RELEASE);
    CK(cudaDeviceSynchronize());
    return 0;
}
