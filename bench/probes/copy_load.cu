// Whether a kernel that spins in one CUDA context slows small copies and stream writes of
// another context on the same GPU (the staged proxy's placements while the program's kernel
// waits in quiet: bench/bandwidth_remote put8 crawled at 40-200 ms per placement while
// many waiters polled host memory).
// A "copier" context (cuCtxCreate, like the proxy's) times K rounds of: N cudaMemcpyAsync of
// `size` bytes from pinned host memory into VMM device memory, then a cuStreamWriteValue64 of
// the round number to mapped host memory, polled by the host (the proxy's ticket). A spinner
// kernel of B blocks x T threads (every thread spins on a host-memory stop word, or on GPU
// memory with mode g) runs meanwhile, in this process's primary context (mode "both") or in
// another process ("spin" there, "copy" here).
//   Build: nvcc -O2 -arch=sm_90 -o copy_load copy_load.cu -lcuda
//   Run:   copy_load both B T N SIZE K [h|g]   |   copy_load spin B T SECS [h|g]   |   copy_load copy N SIZE K
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <algorithm>
#include <vector>
#define CK(x) do { CUresult r_ = (x); if (r_) { const char *s; cuGetErrorName(r_, &s); fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s); exit(1);} } while (0)
#define RK(x) do { cudaError_t e_ = (x); if (e_) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)
typedef unsigned long long u64;
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

__global__ void spin(volatile u64 *stop_h, volatile u64 *stop_d, int on_host) {
    if (on_host) while (!*stop_h) __nanosleep(100);
    else while (!*stop_d) __nanosleep(100);
}

static volatile u64 *stop_h;
static u64 *stop_d_dev;
static cudaStream_t spin_stream;

static void start_spinner(int B, int T, int on_host) {
    RK(cudaHostAlloc((void **)&stop_h, 4096, cudaHostAllocMapped | cudaHostAllocPortable));
    *stop_h = 0;
    u64 *d_stop_h;
    RK(cudaHostGetDevicePointer((void **)&d_stop_h, (void *)stop_h, 0));
    RK(cudaMalloc(&stop_d_dev, 4096));
    RK(cudaMemset(stop_d_dev, 0, 4096));
    RK(cudaStreamCreateWithFlags(&spin_stream, cudaStreamNonBlocking));
    if (B > 0) spin<<<B, T, 0, spin_stream>>>(d_stop_h, stop_d_dev, on_host);
    RK(cudaGetLastError());
}

static void stop_spinner(int B) {
    *stop_h = 1;
    u64 one = 1;
    cudaStream_t s;
    RK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    RK(cudaMemcpyAsync(stop_d_dev, &one, 8, cudaMemcpyHostToDevice, s));
    RK(cudaStreamSynchronize(s));
    if (B > 0) RK(cudaStreamSynchronize(spin_stream));
}

// K rounds of N copies + a ticket, in a context of its own; prints the rounds' p10/median/p90
static void copier(CUdevice dev, int N, size_t size, int K, const char *tag) {
    CUcontext c2;
#if CUDA_VERSION >= 13000
    CK(cuCtxCreate(&c2, NULL, 0, dev));
#else
    CK(cuCtxCreate(&c2, 0, dev));
#endif
    int lo, hi;
    RK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    cudaStream_t s;
    RK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, hi));
    char *src, *dst;
    size_t total = (size_t)N * size;
    RK(cudaHostAlloc((void **)&src, total, cudaHostAllocPortable));
    memset(src, 7, total);
    RK(cudaMalloc((void **)&dst, total));
    volatile u64 *word;
    RK(cudaHostAlloc((void **)&word, 4096, cudaHostAllocMapped | cudaHostAllocPortable));
    *word = 0;
    u64 *d_word;
    RK(cudaHostGetDevicePointer((void **)&d_word, (void *)word, 0));
    std::vector<double> t;
    for (int k = 1; k <= K; k++) {
        double t0 = now();
        for (int i = 0; i < N; i++)
            RK(cudaMemcpyAsync(dst + (size_t)i * size, src + (size_t)i * size, size, cudaMemcpyHostToDevice, s));
        CK(cuStreamWriteValue64((CUstream)s, (CUdeviceptr)d_word, (cuuint64_t)k, 0));
        while (*word < (u64)k) {
            if (now() - t0 > 5) { fprintf(stderr, "%s: round %d waited 5 s\n", tag, k); exit(2); }
        }
        t.push_back((now() - t0) * 1e6);
    }
    std::sort(t.begin(), t.end());
    printf("%s: %d rounds of %d x %zu B copies + ticket: p10 %.1f, median %.1f, p90 %.1f, max %.1f us\n", tag, K, N,
           size, t[K / 10], t[K / 2], t[K * 9 / 10], t[K - 1]);
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: see the file's head\n"); return 1; }
    CK(cuInit(0));
    CUdevice dev;
    CK(cuDeviceGet(&dev, 0));
    CUcontext c1;
    CK(cuDevicePrimaryCtxRetain(&c1, dev));
    CK(cuCtxSetCurrent(c1));
    char tag[200];
    if (!strcmp(argv[1], "both") && argc >= 7) {
        int B = atoi(argv[2]), T = atoi(argv[3]), N = atoi(argv[4]), K = atoi(argv[6]);
        size_t size = strtoull(argv[5], NULL, 0);
        int on_host = argc < 8 || argv[7][0] != 'g';
        start_spinner(B, T, on_host);
        usleep(100000);
        snprintf(tag, sizeof tag, "both: spinner %d x %d (%s)", B, T, on_host ? "host word" : "GPU word");
        copier(dev, N, size, K, tag);
        CK(cuCtxSetCurrent(c1));
        stop_spinner(B);
    } else if (!strcmp(argv[1], "spin") && argc >= 5) {
        int B = atoi(argv[2]), T = atoi(argv[3]);
        double secs = atof(argv[4]);
        int on_host = argc < 6 || argv[5][0] != 'g';
        start_spinner(B, T, on_host);
        usleep((useconds_t)(secs * 1e6));
        stop_spinner(B);
    } else if (!strcmp(argv[1], "copy") && argc >= 5) {
        snprintf(tag, sizeof tag, "copy (spinner elsewhere)");
        copier(dev, atoi(argv[2]), strtoull(argv[3], NULL, 0), atoi(argv[4]), tag);
    } else {
        fprintf(stderr, "usage: see the file's head\n");
        return 1;
    }
    return 0;
}
