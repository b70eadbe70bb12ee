// What the code shape of a device call's remote branch costs its load/store path: a p + wait
// ping-pong between two PEs (two GPUs over NVLink, or two kernels sharing one GPU) whose p
// branches on a window slot as gshmem's does, with the remote branch in each shape below
// (never taken here: every peer is a load/store peer). No gshmem: the shapes alone.
//   trap     the branch ends the kernel (what a load/store-only build does)
//   call     the branch calls an out-of-line poster that returns (a returning call)
//   inloop   the branch posts inline and spins for a free ring slot (a loop inside)
//   inline   the branch posts inline, straight-line, no loop and no call
//   defer    the branch posts inline; a full ring is noted and waited for out of line at the
//            thread's next wait, quiet or kernel end (the loop never sits in the branch)
// usage: route_shapes [iters] [reps]   (prints the median one-way time per shape)
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <algorithm>
#include <vector>

#define CK(x)                                                                                \
    do {                                                                                     \
        cudaError_t e_ = (x);                                                                \
        if (e_ != cudaSuccess) {                                                             \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

struct St {
    uint64_t win;
    const int16_t *slot;
    uint64_t *ring, *tail, *head;
    uint32_t nslots;
};
__constant__ St st;

__device__ __noinline__ void remote_post(void *d, uint64_t v, int pe) {
    uint64_t t = atomicAdd((unsigned long long *)st.tail, 1ull);
    volatile uint64_t *r = st.ring + (t & (st.nslots - 1)) * 4;
    while (*(volatile uint64_t *)st.head + st.nslots <= t) {}
    r[0] = (uint64_t)d; r[1] = v; r[2] = pe;
    __threadfence_system();
    r[3] = t + 1;
}
__device__ __noinline__ void remote_wait_room(uint64_t t) {
    while (*(volatile uint64_t *)st.head + st.nslots <= t) {}
}

template <int SHAPE> __device__ __forceinline__ void p(long *dest, long v, int pe, uint64_t &owed) {
    int s = st.slot[pe];
    if (s < 0) {
        if (SHAPE == 0) __trap();
        if (SHAPE == 1) { remote_post(dest, (uint64_t)v, pe); return; }
        uint64_t t = atomicAdd((unsigned long long *)st.tail, 1ull);
        volatile uint64_t *r = st.ring + (t & (st.nslots - 1)) * 4;
        if (SHAPE == 2) while (*(volatile uint64_t *)st.head + st.nslots <= t) {}
        if (SHAPE == 4) owed = t;   /* a later wait point settles it */
        r[0] = (uint64_t)dest; r[1] = (uint64_t)v; r[2] = pe;
        __threadfence_system();
        r[3] = t + 1;
        return;
    }
    *(volatile long *)((char *)dest + (size_t)s * st.win) = v;
}
template <int SHAPE> __device__ __forceinline__ void wait_eq(volatile long *f, long v, uint64_t &owed) {
    if (SHAPE == 4 && owed != ~0ull) { remote_wait_room(owed); owed = ~0ull; }
    while (*f != v) {}
}

template <int SHAPE> __global__ void pingpong(long *flag, int peer, int first, int iters) {
    uint64_t owed = ~0ull;
    for (int i = 1; i <= iters; i++) {
        if (first) { p<SHAPE>(flag, i, peer, owed); wait_eq<SHAPE>(flag, i, owed); }
        else { wait_eq<SHAPE>(flag, i, owed); p<SHAPE>(flag, i, peer, owed); }
    }
}

static const char *names[] = {"trap", "call", "inloop", "inline", "defer"};

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 20000, reps = argc > 2 ? atoi(argv[2]) : 7;
    int ndev = 0;
    CK(cudaGetDeviceCount(&ndev));
    int dev[2] = {0, ndev > 1 ? 1 : 0};
    long *flag[2];
    int16_t *slot[2];
    uint64_t *ring[2];
    cudaStream_t s[2];
    for (int k = 0; k < 2; k++) {
        CK(cudaSetDevice(dev[k]));
        if (dev[0] != dev[1]) CK(cudaDeviceEnablePeerAccess(dev[1 - k], 0));
        CK(cudaMalloc(&flag[k], 4096));
        CK(cudaMemset(flag[k], 0, 4096));
        CK(cudaMalloc(&slot[k], 2 * sizeof(int16_t)));
        int16_t sl[2] = {0, 1};
        CK(cudaMemcpy(slot[k], sl, sizeof sl, cudaMemcpyHostToDevice));
        CK(cudaMalloc(&ring[k], 4096 * 8 + 64));
        CK(cudaMemset(ring[k], 0, 4096 * 8 + 64));
        CK(cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking));
    }
    for (int k = 0; k < 2; k++) {
        St h;
        h.win = (uint64_t)((char *)flag[1 - k] - (char *)flag[k]);
        h.slot = slot[k];
        h.ring = ring[k];
        h.tail = ring[k] + 4096;
        h.head = ring[k] + 4097;
        h.nslots = 1024;
        CK(cudaSetDevice(dev[k]));
        CK(cudaMemcpyToSymbol(st, &h, sizeof h));
    }
    printf("route_shapes: %s, %d iterations, median of %d\n",
           dev[0] != dev[1] ? "GPU 0 <-> GPU 1" : "two kernels on GPU 0", iters, reps);
    void (*kern[])(long *, int, int, int) = {pingpong<0>, pingpong<1>, pingpong<2>, pingpong<3>, pingpong<4>};
    for (int r = 0; r < reps + 1; r++) {   /* shapes interleaved, the first round is warm-up */
        static std::vector<double> t[5];
        for (int sh = 0; sh < 5; sh++) {
            cudaEvent_t a, b;
            CK(cudaSetDevice(dev[0]));
            CK(cudaEventCreate(&a));
            CK(cudaEventCreate(&b));
            for (int k = 0; k < 2; k++) {
                CK(cudaSetDevice(dev[k]));
                CK(cudaMemset(flag[k], 0, 8));
                CK(cudaDeviceSynchronize());
            }
            CK(cudaSetDevice(dev[1]));
            kern[sh]<<<1, 1, 0, s[1]>>>(flag[1], 1, 0, iters);
            CK(cudaSetDevice(dev[0]));
            CK(cudaEventRecord(a, s[0]));
            kern[sh]<<<1, 1, 0, s[0]>>>(flag[0], 1, 1, iters);
            CK(cudaEventRecord(b, s[0]));
            CK(cudaEventSynchronize(b));
            CK(cudaSetDevice(dev[1]));
            CK(cudaStreamSynchronize(s[1]));
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
            if (r > 0) t[sh].push_back(ms * 1000.0 / (2.0 * iters));
            CK(cudaSetDevice(dev[0]));
            CK(cudaEventDestroy(a));
            CK(cudaEventDestroy(b));
        }
        if (r == reps)
            for (int sh = 0; sh < 5; sh++) {
                std::sort(t[sh].begin(), t[sh].end());
                printf("  %-7s one-way %.4f us (min %.4f, max %.4f)\n", names[sh], t[sh][t[sh].size() / 2],
                       t[sh].front(), t[sh].back());
            }
    }
    return 0;
}
