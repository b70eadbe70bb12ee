/* How fast GPU threads can publish 64-byte descriptors into pinned host memory, with no proxy
 * reading them: the producers' own ceiling for the proxy's drain rate (test_channel's drain:
 * 8192 threads x 64 no-ops, 4.5-4.7 million/s on an H100, where a CPU producer drains at
 * 41 million/s). Variants of the publish (gshmem/device/channel.h's is A):
 *   A  7 x 8-byte stores of the body, then st.release.sys of the sequence word
 *   B  the same with a relaxed sequence store (no fence: not a valid publish, the ceiling)
 *   C  one 8-byte and three 16-byte stores of the body, then st.release.sys
 *   D  the lanes of a warp write their bodies, __syncwarp, one lane fences (fence.acq_rel.sys)
 *      and stores every lane's sequence word (one fence per warp instead of per descriptor)
 * Build and run (no library needed):
 *   nvcc -O3 -arch=sm_90 -o publish_rate bench/probes/publish_rate.cu && ./publish_rate */
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            printf("%s failed: %s\n", #x, cudaGetErrorString(e_));                             \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)

constexpr int SLOTS = 4096;

template <int V> __global__ void publish(uint64_t *ring, int per) {
    const uint64_t id = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    for (int k = 0; k < per; k++) {
        const uint64_t t = id * per + k;
        uint64_t *slot = ring + (t % SLOTS) * 8;
        if (V == 0 || V == 1 || V == 3) {
#pragma unroll
            for (int w = 1; w < 8; w++) slot[w] = t * 8 + w;
        } else {
            slot[1] = t * 8 + 1;
#pragma unroll
            for (int w = 2; w < 8; w += 2) {
                ulonglong2 v = make_ulonglong2(t * 8 + w, t * 8 + w + 1);
                *(ulonglong2 *)(slot + w) = v;
            }
        }
        if (V == 0 || V == 2) {
            asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(slot), "l"(t + 1) : "memory");
        } else if (V == 1) {
            asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(slot), "l"(t + 1) : "memory");
        } else {
            const unsigned m = __activemask();
            const int lane = threadIdx.x & 31, leader = __ffs(m) - 1;
            __syncwarp(m);
            if (lane == leader) asm volatile("fence.acq_rel.sys;" ::: "memory");
            /* the leader stores every active lane's sequence word after its fence */
            for (unsigned r = m; r; r &= r - 1) {
                const int l = __ffs(r) - 1;
                const uint64_t tl = __shfl_sync(m, t, l);
                if (lane == leader)
                    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(ring + (tl % SLOTS) * 8), "l"(tl + 1)
                                 : "memory");
            }
            __syncwarp(m);
        }
    }
}

template <int V> static int time_it(const char *name, uint64_t *ring, int blocks, int threads, int per) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    publish<V><<<blocks, threads>>>(ring, per);   /* warm-up */
    CK(cudaDeviceSynchronize());
    float best = 1e30f;
    for (int r = 0; r < 5; r++) {
        CK(cudaEventRecord(a));
        publish<V><<<blocks, threads>>>(ring, per);
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (ms < best) best = ms;
    }
    const double n = (double)blocks * threads * per;
    printf("publish %s: %d x %d threads x %d: %.3f ms, %.2f million descriptors/s\n", name, blocks, threads, per,
           best, n / best / 1e3);
    return 0;
}

int main() {
    uint64_t *ring, *d_ring;
    CK(cudaHostAlloc(&ring, SLOTS * 64, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer(&d_ring, ring, 0));
    const int shapes[][3] = {{64, 128, 64}, {8, 128, 64}, {132, 32, 64}};
    for (auto &s : shapes) {
        if (time_it<0>("A 8B body + release seq", d_ring, s[0], s[1], s[2])) return 1;
        if (time_it<1>("B 8B body + relaxed seq (no fence)", d_ring, s[0], s[1], s[2])) return 1;
        if (time_it<2>("C 16B body + release seq", d_ring, s[0], s[1], s[2])) return 1;
        if (time_it<3>("D warp: one fence, leader stores seqs", d_ring, s[0], s[1], s[2])) return 1;
    }
    return 0;
}
