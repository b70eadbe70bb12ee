// Does a blocking cudaMemcpy of one thread stop another thread's cudaMemcpyAsync? The case of
// a remote job: the program's main thread waits in cudaMemcpy for a kernel that
// waits for the proxy, and the proxy thread's cudaMemcpyAsync of the same context waits for a
// lock the blocking copy holds (eu-stack: pthread_rwlock_rdlock under cuMemcpyAsync): deadlock.
// Thread A launches a kernel that spins on a flag in mapped host memory, then calls cudaMemcpy
// (pageable or pinned host buffer), which waits for the kernel. Thread B, in the program's
// primary context or in a context of its own (cuCtxCreate), copies 4 KiB from pinned host memory
// into VMM memory and writes a ticket with cuStreamWriteValue64, waits for the ticket, then
// releases the kernel. A watchdog releases it after 3 s if B is stuck. One line per case:
// how long B's enqueue and ticket took.
// usage: ctx_lock same|own pageable|pinned     Build: nvcc -O2 -arch=sm_90 -o ctx_lock ctx_lock.cu -lcuda -lpthread
#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

__global__ void spin(const volatile int *flag, int *out) {
    while (*flag == 0) {}
    out[0] = 42;
}

static volatile int *h_flag;     // mapped host memory the kernel polls
static int *d_out;
static CUdeviceptr vmm;          // 2 MiB of VMM memory (the heap's kind)
static CUcontext primary, own;
static bool use_own, pinned_a;
static volatile int b_done;
static double b_enqueue_s, b_ticket_s;

static void *thread_a(void *) {
    CU(cuCtxSetCurrent(primary));
    int *d_flag;
    CK(cudaHostGetDevicePointer((void **)&d_flag, (void *)h_flag, 0));
    spin<<<1, 1>>>(d_flag, d_out);
    CK(cudaGetLastError());
    int pageable[4], *pin = nullptr;
    if (pinned_a) CK(cudaMallocHost((void **)&pin, sizeof pageable));
    CK(cudaMemcpy(pinned_a ? pin : pageable, d_out, sizeof pageable, cudaMemcpyDeviceToHost));
    int got = pinned_a ? pin[0] : pageable[0];
    if (got != 42) fprintf(stderr, "thread A: read %d, expected 42\n", got);
    if (pin) cudaFreeHost(pin);
    return nullptr;
}

static void *thread_b(void *) {
    CU(cuCtxSetCurrent(use_own ? own : primary));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    char *stage;
    CK(cudaHostAlloc((void **)&stage, 4096, cudaHostAllocPortable));
    memset(stage, 7, 4096);
    uint64_t *ticket;
    CK(cudaHostAlloc((void **)&ticket, 8, cudaHostAllocMapped | cudaHostAllocPortable));
    *(volatile uint64_t *)ticket = 0;
    CUdeviceptr d_ticket;
    CU(cuMemHostGetDevicePointer(&d_ticket, ticket, 0));
    usleep(300000);   // A is in its cudaMemcpy by now
    double t0 = now_s();
    CK(cudaMemcpyAsync((void *)vmm, stage, 4096, cudaMemcpyHostToDevice, st));
    CU(cuStreamWriteValue64((CUstream)st, d_ticket, 1, 0));
    b_enqueue_s = now_s() - t0;
    while (*(volatile uint64_t *)ticket != 1) {}
    b_ticket_s = now_s() - t0;
    b_done = 1;
    *h_flag = 1;   // release the kernel
    return nullptr;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: ctx_lock same|own pageable|pinned\n"); return 2; }
    use_own = !strcmp(argv[1], "own");
    pinned_a = !strcmp(argv[2], "pinned");
    CU(cuInit(0));
    CUdevice dev;
    CU(cuDeviceGet(&dev, 0));
    CK(cudaSetDevice(0));
    CK(cudaFree(0));
    CU(cuCtxGetCurrent(&primary));
    if (use_own) {
        CU(cuCtxCreate(&own, nullptr, 0, dev));
        CU(cuCtxSetCurrent(primary));
    }
    CK(cudaHostAlloc((void **)&h_flag, sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
    *h_flag = 0;
    CK(cudaMalloc(&d_out, 16));
    // VMM memory, readable and writable by the device from any context of this process
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t gran = 0;
    CU(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CUmemGenericAllocationHandle h;
    CU(cuMemCreate(&h, gran, &prop, 0));
    CU(cuMemAddressReserve(&vmm, gran, 0, 0, 0));
    CU(cuMemMap(vmm, gran, 0, h, 0));
    CUmemAccessDesc acc = {};
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU(cuMemSetAccess(vmm, gran, &acc, 1));

    pthread_t a, b;
    pthread_create(&a, nullptr, thread_a, nullptr);
    pthread_create(&b, nullptr, thread_b, nullptr);
    double t0 = now_s();
    while (!b_done && now_s() - t0 < 3.5) usleep(1000);
    bool stuck = !b_done;
    if (stuck) *h_flag = 1;   // the watchdog releases the kernel: A returns, then B's calls pass
    pthread_join(a, nullptr);
    pthread_join(b, nullptr);
    char check[4096];
    CU(cuCtxSetCurrent(primary));
    CK(cudaMemcpy(check, (void *)vmm, 4096, cudaMemcpyDeviceToHost));
    bool ok = check[0] == 7 && check[4095] == 7;
    printf("ctx_lock proxy-context=%s A-copy=%s: %s; B enqueue %.3f ms, ticket %.3f ms; data %s\n", argv[1],
           argv[2], stuck ? "B BLOCKED until the watchdog released the kernel" : "B passed",
           b_enqueue_s * 1e3, b_ticket_s * 1e3, ok ? "ok" : "WRONG");
    return stuck || !ok;
}
