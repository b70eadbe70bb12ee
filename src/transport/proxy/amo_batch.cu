/* The proxy's atomic batches (amo_batch.h): the atomics from other nodes, applied by one
 * kernel on the proxy's stream. Built with the library's other kernels (src/meson.build). */
#include "gshmem.h"

#include "amo_batch.h"

/* A batch of atomics from the proxy (staged mode): one thread per descriptor of the ring
 * (first .. first + n - 1, modulo slots), old values to olds[slot]. Atomics on the same 8-byte
 * word apply in the order they arrived (a round each, in arrival order), others at once: the
 * order of one source's operations on one location survives, as it would have one kernel each. */
__global__ void gshmemi_amo_batch_kernel(const gshmemi_amo_desc *ring, uint64_t *olds, unsigned first,
                                         unsigned n, unsigned slots) {
    __shared__ uint64_t word[GSHMEMI_AMO_BATCH_MAX];
    __shared__ unsigned rounds;
    unsigned i = threadIdx.x, slot = (first + i) % slots, depth = 0;
    gshmemi_amo_desc d = {};
    if (i == 0) rounds = 0;
    if (i < n) {
        d = ring[slot];
        word[i] = d.addr >> 3;
    }
    __syncthreads();
    if (i < n) {
        for (unsigned j = 0; j < i; j++) depth += word[j] == word[i];
        atomicMax(&rounds, depth + 1);
    }
    __threadfence_system();   /* the stream's earlier copies were performed before this kernel */
    __syncthreads();
    for (unsigned r = 0; r < rounds; r++) {
        if (i < n && depth == r) {
            uint64_t old = d.size == 4 ? gshmemi_apply_amo((int)d.op, (uint32_t *)(uintptr_t)d.addr,
                                                           (uint32_t)d.operand, (uint32_t)d.compare)
                                       : gshmemi_apply_amo((int)d.op, (uint64_t *)(uintptr_t)d.addr, d.operand,
                                                           d.compare);
            *(volatile uint64_t *)&olds[slot] = old;
        }
        __syncthreads();
    }
}

extern "C" int gshmemi_launch_amo_batch(void *stream, const gshmemi_amo_desc *ring, uint64_t *olds,
                                        unsigned first, unsigned n, unsigned slots) {
    if (n == 0 || n > GSHMEMI_AMO_BATCH_MAX) return (int)cudaErrorInvalidValue;
    unsigned threads = (n + 31) / 32 * 32;
    gshmemi_amo_batch_kernel<<<1, threads, 0, (cudaStream_t)stream>>>(ring, olds, first, n, slots);
    return (int)cudaGetLastError();
}

extern "C" int gshmemi_amo_batch_load(void) {
    cudaFuncAttributes a;
    return (int)cudaFuncGetAttributes(&a, gshmemi_amo_batch_kernel);
}
