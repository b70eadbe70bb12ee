/* The one copy routine every bulk call uses: a group of `size` threads (rank 0..size-1)
 * copies n bytes, 16-byte vectors when source and destination share alignment, coalesced
 * (consecutive ranks touch consecutive vectors), with UNROLL independent loads in flight
 * per thread before their stores (NVLink latency hides only behind many outstanding
 * accesses). REMOTE_SRC (gets): the source is a peer's global memory, read with
 * ld.global.cg so it is never served stale from L1; otherwise (puts) the source may be any
 * local memory — global, shared or local — and is read with generic loads. */
#ifndef GSHMEM_DEVICE_COPY_H
#define GSHMEM_DEVICE_COPY_H

#include <stdint.h>
#include "ptx.h"

#define GSHMEMI_COPY_UNROLL 8

template <bool REMOTE_SRC, typename V> GSHMEMI_DEV V gshmemi_load(const V *p) {
    if constexpr (REMOTE_SRC) return __ldcg(p);
    else return *p;
}

/* Copies n_v elements of V; dst and src aligned to sizeof(V). */
template <bool R, typename V>
GSHMEMI_DEV void gshmemi_copy_vec(V *dst, const V *src, size_t n_v, unsigned rank, unsigned size) {
    const size_t stride = (size_t)size * GSHMEMI_COPY_UNROLL;
    size_t i = rank;
    for (; i + (GSHMEMI_COPY_UNROLL - 1) * (size_t)size < n_v; i += stride) {
        V r[GSHMEMI_COPY_UNROLL];
#pragma unroll
        for (int u = 0; u < GSHMEMI_COPY_UNROLL; u++) r[u] = gshmemi_load<R>(src + i + u * (size_t)size);
#pragma unroll
        for (int u = 0; u < GSHMEMI_COPY_UNROLL; u++) dst[i + u * (size_t)size] = r[u];
    }
    for (; i < n_v; i += size) dst[i] = gshmemi_load<R>(src + i);
}

template <bool R, typename V>
GSHMEMI_DEV void gshmemi_copy_aligned(char *dst, const char *src, size_t n, unsigned rank,
                                      unsigned size) {
    /* head: bytes until dst (and therefore src) reaches V alignment */
    size_t head = (sizeof(V) - ((uintptr_t)dst & (sizeof(V) - 1))) & (sizeof(V) - 1);
    if (head > n) head = n;
    for (size_t i = rank; i < head; i += size) dst[i] = (char)gshmemi_load<R>((const uint8_t *)src + i);
    size_t n_v = (n - head) / sizeof(V);
    gshmemi_copy_vec<R, V>((V *)(dst + head), (const V *)(src + head), n_v, rank, size);
    size_t done = head + n_v * sizeof(V);
    for (size_t i = done + rank; i < n; i += size) dst[i] = (char)gshmemi_load<R>((const uint8_t *)src + i);
}

/* Picks the widest vector the relative alignment of dst and src allows. */
template <bool R>
GSHMEMI_DEV void gshmemi_copy_group(void *dst, const void *src, size_t n, unsigned rank,
                                    unsigned size) {
    char *d = (char *)dst;
    const char *s = (const char *)src;
    uintptr_t rel = ((uintptr_t)d ^ (uintptr_t)s);
    if ((rel & 15) == 0) gshmemi_copy_aligned<R, int4>(d, s, n, rank, size);
    else if ((rel & 7) == 0) gshmemi_copy_aligned<R, uint64_t>(d, s, n, rank, size);
    else if ((rel & 3) == 0) gshmemi_copy_aligned<R, uint32_t>(d, s, n, rank, size);
    else if ((rel & 1) == 0) gshmemi_copy_aligned<R, uint16_t>(d, s, n, rank, size);
    else gshmemi_copy_vec<R, uint8_t>((uint8_t *)d, (const uint8_t *)s, n, rank, size);
}

/* Group shapes: thread, warp (all 32 lanes call), block (all threads call). */
GSHMEMI_DEV unsigned gshmemi_block_rank(void) {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
GSHMEMI_DEV unsigned gshmemi_block_size(void) { return blockDim.x * blockDim.y * blockDim.z; }
GSHMEMI_DEV unsigned gshmemi_lane(void) {
    unsigned l;
    asm("mov.u32 %0, %%laneid;" : "=r"(l));
    return l;
}

#endif
