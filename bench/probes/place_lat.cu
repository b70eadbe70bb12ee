// How quickly a host thread makes a 64-bit value visible to a kernel of another CUDA context on
// the same GPU (the staged proxy's placement of a remote p): a host thread and a one-thread
// kernel of the program's context ping-pong (the kernel waits for the value in VMM memory,
// answers in mapped host memory). Ways: cuStreamWriteValue64 from the proxy's context or the
// program's, an 8-byte cudaMemcpyAsync, a relay kernel of the proxy's context polling host
// memory (under MPS only: NO_RELAY=1 skips it), and the kernel polling host memory itself.
// Prints the round trip's p10 / median / p90 and the host call's median.
// Build: nvcc -O2 -arch=sm_90 -o place_lat place_lat.cu -lcuda   Run: place_lat [rounds]
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <algorithm>
#include <vector>
#define CK(x) do { CUresult r_ = (x); if (r_) { const char *s; cuGetErrorName(r_, &s); fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s); exit(1);} } while (0)
#define RK(x) do { cudaError_t e_ = (x); if (e_) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)
typedef unsigned long long u64;
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

__global__ void pong(volatile u64 *dflag, volatile u64 *hmail, volatile u64 *hflag, int n, int direct) {
    for (int i = 1; i <= n; i++) {
        if (direct) while (*hmail < (u64)i) ;
        else while (*dflag < (u64)i) ;
        *hflag = i;
        __threadfence_system();
    }
}
__global__ void relay(volatile u64 *hmail, volatile u64 *dflag) {
    u64 last = 0;
    for (;;) {
        u64 v = *hmail;
        if (v == ~0ull) break;
        if (v != last) { *dflag = v; __threadfence(); last = v; }
    }
}
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 3000;
    CK(cuInit(0));
    CUdevice dev; CK(cuDeviceGet(&dev, 0));
    CUcontext c1, c2; CK(cuDevicePrimaryCtxRetain(&c1, dev)); CK(cuCtxSetCurrent(c1));
    // device flag via VMM (visible to every context on the device)
    CUmemAllocationProp prop = {}; prop.type = CU_MEM_ALLOCATION_TYPE_PINNED; prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE; prop.location.id = 0;
    size_t gran; CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CUmemGenericAllocationHandle h; CK(cuMemCreate(&h, gran, &prop, 0));
    CUdeviceptr dptr; CK(cuMemAddressReserve(&dptr, gran, 0, 0, 0)); CK(cuMemMap(dptr, gran, 0, h, 0));
    CUmemAccessDesc ad = {}; ad.location = prop.location; ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE; CK(cuMemSetAccess(dptr, gran, &ad, 1));
    volatile u64 *hflag, *hmail; u64 *hsrc;
    RK(cudaHostAlloc((void **)&hflag, 4096, cudaHostAllocMapped | cudaHostAllocPortable));
    RK(cudaHostAlloc((void **)&hmail, 4096, cudaHostAllocMapped | cudaHostAllocPortable));
    RK(cudaHostAlloc((void **)&hsrc, 4096, cudaHostAllocMapped | cudaHostAllocPortable));
    u64 *d_hflag, *d_hmail; RK(cudaHostGetDevicePointer((void **)&d_hflag, (void *)hflag, 0)); RK(cudaHostGetDevicePointer((void **)&d_hmail, (void *)hmail, 0));
    cudaStream_t s1u, s1k; RK(cudaStreamCreateWithFlags(&s1k, cudaStreamNonBlocking)); RK(cudaStreamCreateWithFlags(&s1u, cudaStreamNonBlocking));
#if CUDA_VERSION >= 13000
    CK(cuCtxCreate(&c2, NULL, 0, dev));
#else
    CK(cuCtxCreate(&c2, 0, dev));
#endif
    int lo, hi; RK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    cudaStream_t s2, s2k; RK(cudaStreamCreateWithPriority(&s2, cudaStreamNonBlocking, hi)); RK(cudaStreamCreateWithFlags(&s2k, cudaStreamNonBlocking));
    const char *names[] = {"streamwrite64 (proxy ctx)", "streamwrite64 (user ctx)", "memcpyAsync 8B (proxy ctx)", "relay kernel (proxy ctx)", "kernel polls host (no proxy)"};
    for (int m = 0; m < 5; m++) {
        if (m == 3 && getenv("NO_RELAY")) continue;
        CK(cuCtxSetCurrent(c1));
        CK(cuMemsetD8(dptr, 0, 8)); RK(cudaDeviceSynchronize());
        *hflag = 0; *hmail = 0;
        pong<<<1, 1, 0, s1k>>>((volatile u64 *)dptr, (volatile u64 *)d_hmail, (volatile u64 *)d_hflag, n, m == 4);
        RK(cudaGetLastError());
        CK(cuCtxSetCurrent(c2));
        if (m == 3) { relay<<<1, 1, 0, s2k>>>((volatile u64 *)d_hmail, (volatile u64 *)dptr); RK(cudaGetLastError()); }
        if (m == 1) CK(cuCtxSetCurrent(c1));
        std::vector<double> rt(n), call(n);
        double t00 = now();
        for (int i = 1; i <= n; i++) {
            double t0 = now();
            switch (m) {
            case 0: CK(cuStreamWriteValue64((CUstream)s2, dptr, i, 0)); break;
            case 1: CK(cuStreamWriteValue64((CUstream)s1u, dptr, i, 0)); break;
            case 2: hsrc[0] = i; RK(cudaMemcpyAsync((void *)dptr, hsrc, 8, cudaMemcpyHostToDevice, s2)); break;
            default: __atomic_store_n((u64 *)hmail, (u64)i, __ATOMIC_RELEASE); break;
            }
            double t1 = now();
            while (*hflag < (u64)i) if (now() - t00 > 20) { fprintf(stderr, "%s: stuck at %d\n", names[m], i); exit(2); }
            rt[i - 1] = (now() - t0) * 1e6; call[i - 1] = (t1 - t0) * 1e6;
        }
        if (m == 3) __atomic_store_n((u64 *)hmail, ~0ull, __ATOMIC_RELEASE);
        CK(cuCtxSetCurrent(c1)); RK(cudaDeviceSynchronize()); CK(cuCtxSetCurrent(c2)); RK(cudaDeviceSynchronize());
        std::vector<double> r(rt.begin() + 200, rt.end()), c(call.begin() + 200, call.end());
        std::sort(r.begin(), r.end()); std::sort(c.begin(), c.end());
        size_t k = r.size();
        printf("%-30s round trip us: p10 %.2f median %.2f p90 %.2f | host call median %.2f\n", names[m], r[k / 10], r[k / 2], r[9 * k / 10], c[k / 2]);
    }
    return 0;
}
