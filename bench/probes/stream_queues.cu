// Probe: does work on one stream wait behind a kernel spinning on another stream of the same
// process? (stream -> hardware work queue aliasing; under MPS a client owns few queues)
// For each "user" stream a spinning 1-thread kernel is launched; then a small H2D copy, a small
// D2H copy, a 1-thread kernel and a cuStreamWriteValue64 are put on a separate "proxy" stream
// and polled for 1 s each. Prints one line per (user stream, op): ok / BLOCKED.
// build: nvcc -O2 -o stream_queues bench/probes/stream_queues.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void spin(volatile int *flag) { while (*flag == 0) { } }
__global__ void one(int *p) { atomicAdd(p, 1); }

static double now() { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }

static int poll(cudaStream_t s, double limit) {
    double t0 = now();
    while (now() - t0 < limit) {
        cudaError_t e = cudaStreamQuery(s);
        if (e == cudaSuccess) return 1;
        if (e != cudaErrorNotReady) { fprintf(stderr, "query: %s\n", cudaGetErrorString(e)); exit(1); }
    }
    return 0;
}

int main(int argc, char **argv) {
    int nuser = argc > 1 ? atoi(argv[1]) : 8;
    int prio_hi = argc > 2 ? atoi(argv[2]) : 1;
    int pdl = argc > 3 ? atoi(argv[3]) : 0;   /* spinner launched with programmatic stream serialization */
    int lo, hi;
    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    cudaStream_t *us = (cudaStream_t *)calloc(nuser + 1, sizeof *us);
    us[0] = 0;  /* legacy default stream */
    for (int i = 1; i <= nuser; i++) CK(cudaStreamCreateWithFlags(&us[i], cudaStreamNonBlocking));
    cudaStream_t ps;
    CK(cudaStreamCreateWithPriority(&ps, cudaStreamNonBlocking, prio_hi ? hi : lo));
    int *flag, *hbuf, *dbuf;
    CK(cudaHostAlloc((void **)&flag, 4, cudaHostAllocMapped));
    CK(cudaHostAlloc((void **)&hbuf, 64, cudaHostAllocDefault));
    CK(cudaMalloc((void **)&dbuf, 64));
    const char *names[4] = {"h2d 8B", "d2h 8B", "kernel", "writeValue64"};
    int blocked_total = 0;
    for (int u = 0; u <= nuser; u++) {
        for (int op = 0; op < 4; op++) {
            *(volatile int *)flag = 0;
            if (pdl) {   /* as the library launches its barrier kernel */
                cudaLaunchConfig_t cfg = {};
                cudaLaunchAttribute at[1];
                at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
                at[0].val.programmaticStreamSerializationAllowed = 1;
                cfg.gridDim = dim3(1);
                cfg.blockDim = dim3(32);
                cfg.stream = us[u];
                cfg.attrs = at;
                cfg.numAttrs = 1;
                CK(cudaLaunchKernelEx(&cfg, spin, (volatile int *)flag));
            } else {
                spin<<<1, 1, 0, us[u]>>>(flag);
                CK(cudaGetLastError());
            }
            if (op == 0) CK(cudaMemcpyAsync(dbuf, hbuf, 8, cudaMemcpyHostToDevice, ps));
            if (op == 1) CK(cudaMemcpyAsync(hbuf, dbuf, 8, cudaMemcpyDeviceToHost, ps));
            if (op == 2) { one<<<1, 1, 0, ps>>>(dbuf); CK(cudaGetLastError()); }
            if (op == 3) {
                CUresult r = cuStreamWriteValue64((CUstream)ps, (CUdeviceptr)(dbuf + 4), 7, 0);
                if (r != CUDA_SUCCESS) { fprintf(stderr, "writeValue64: %d\n", (int)r); exit(1); }
            }
            int ok = poll(ps, 1.0);
            blocked_total += !ok;
            printf("user stream %d%s  %-13s %s\n", u, u ? "" : " (legacy)", names[op], ok ? "ok" : "BLOCKED");
            *(volatile int *)flag = 1;
            CK(cudaDeviceSynchronize());
        }
    }
    printf("blocked %d of %d (pdl %d, MPS_ACTIVE_THREAD_PERCENTAGE=%s, CUDA_DEVICE_MAX_CONNECTIONS=%s, proxy priority %s)\n", blocked_total, 4 * (nuser + 1), pdl,
           getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") ? getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") : "unset",
           getenv("CUDA_DEVICE_MAX_CONNECTIONS") ? getenv("CUDA_DEVICE_MAX_CONNECTIONS") : "unset",
           prio_hi ? "high" : "low");
    return 0;
}
