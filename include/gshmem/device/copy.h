/* The one copy routine every bulk call uses: a group of `size` threads (rank 0..size-1)
 * copies n bytes, 16-byte vectors when source and destination share alignment, coalesced
 * (consecutive ranks touch consecutive vectors), with UNROLL independent loads in flight
 * per thread before their stores (NVLink latency hides only behind many outstanding
 * accesses). REMOTE_SRC (gets): the source is a peer's global memory, read with
 * ld.global.cg so it is never served stale from L1; otherwise (puts) the source may be any
 * local memory — global, shared or local — and is read with generic loads.
 *
 * Per-call cost matters as much as the loop: a block of 1024 threads runs 8 warps per
 * scheduler, so every instruction of set-up is paid 8 times per call (measured: 64 KiB puts
 * from 8 blocks ran at 84 GB/s through the general path against 137 GB/s for a bare loop).
 * Hence empty heads and tails cost one branch each and the unrolled loop is entered only
 * when every thread has a full batch. Register use matters too: a kernel calling a block-scope put must still launch with 1024
 * threads (64 registers per thread); tests/gpu/test_rma launches one to prove it. */
#ifndef GSHMEM_DEVICE_COPY_H
#define GSHMEM_DEVICE_COPY_H

#include <stdint.h>
#include "ptx.h"

#define GSHMEMI_COPY_UNROLL 4

template <bool REMOTE_SRC, typename V> GSHMEMI_DEV V gshmemi_load(const V *p) {
    if constexpr (REMOTE_SRC) return __ldcg(p);
    else return *p;
}

/* Copies n_v elements of V; dst and src aligned to sizeof(V). I is the index type. */
template <bool R, typename V, typename I>
GSHMEMI_DEV void gshmemi_copy_vec_i(V *dst, const V *src, I n_v,
                                    I rank, I size) {
    I i = rank;
    if (n_v >= (I)GSHMEMI_COPY_UNROLL * size) {
        const I stride = size * (I)GSHMEMI_COPY_UNROLL;
        for (; i + (I)(GSHMEMI_COPY_UNROLL - 1) * size < n_v; i += stride) {
            V r[GSHMEMI_COPY_UNROLL];
#pragma unroll
            for (int u = 0; u < GSHMEMI_COPY_UNROLL; u++) r[u] = gshmemi_load<R>(src + i + (I)u * size);
#pragma unroll
            for (int u = 0; u < GSHMEMI_COPY_UNROLL; u++) dst[i + (I)u * size] = r[u];
        }
    }
    for (; i < n_v; i += size) dst[i] = gshmemi_load<R>(src + i);
}

/* One index type only: a second (32-bit) instantiation pushed block-scope callers past the
 * 64 registers a 1024-thread block allows. */
template <bool R, typename V>
GSHMEMI_DEV void gshmemi_copy_vec(V *dst, const V *src, size_t n_v, unsigned rank, unsigned size) {
    gshmemi_copy_vec_i<R, V, size_t>(dst, src, n_v, rank, size);
}

/* Long 16-byte copies start their unrolled loop on a 128-byte line of dst, so each warp's
 * 512 bytes of stores fill 4 whole lines: a store covering part of a line costs the far side
 * a partial write (64 MiB from 132 blocks whose slices start off the line: 341 GB/s; the
 * same slices line-aligned: 361; bench/probe_nvlink). Up to 7 lead vectors first. */
template <bool R>
GSHMEMI_DEV void gshmemi_copy_vec_lined(int4 *dv, const int4 *sv, size_t n_v, unsigned rank,
                                        unsigned size) {
    size_t lead = ((128 - ((uintptr_t)dv & 127)) & 127) / 16;
    for (size_t i = rank; i < lead; i += size) dv[i] = gshmemi_load<R>(sv + i);
    gshmemi_copy_vec<R, int4>(dv + lead, sv + lead, n_v - lead, rank, size);
}

/* Fewer than 16 bytes at dst, src (same alignment modulo 16) in pieces of 8, 4, 2 and 1 as
 * n's bits say, piece k by rank k (by rank 0 past the group's size): a tail (dst aligned to
 * the largest piece) largest first, a head (dst + n aligned) smallest first. An 8-byte
 * thread-scope put is one store, not eight byte stores (each its own NVLink write). */
template <bool R>
GSHMEMI_DEV void gshmemi_copy_bits(char *dst, const char *src, size_t n, bool head, unsigned rank,
                                   unsigned size) {
    unsigned k = 0;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const int b = head ? j : 3 - j;
        if (!(n & ((size_t)1 << b))) continue;
        if ((k < size ? k : 0u) == rank) {
            if (b == 3) *(uint64_t *)dst = gshmemi_load<R>((const uint64_t *)src);
            else if (b == 2) *(uint32_t *)dst = gshmemi_load<R>((const uint32_t *)src);
            else if (b == 1) *(uint16_t *)dst = gshmemi_load<R>((const uint16_t *)src);
            else *dst = (char)gshmemi_load<R>((const uint8_t *)src);
        }
        k++;
        dst += (size_t)1 << b;
        src += (size_t)1 << b;
    }
}

/* dst and src share V alignment: a head up to V alignment, the vectors, a tail, the head and
 * tail in aligned pieces (a copy shorter than its head, byte by byte). Empty heads and tails
 * (the common case) cost one branch each; copies too short for the line-aligned start run the
 * same code as without it (folding the lead into the common path costs small block puts
 * 3-11 %). */
template <bool R, typename V>
GSHMEMI_DEV void gshmemi_copy_aligned(char *dst, const char *src, size_t n, unsigned rank,
                                      unsigned size) {
    size_t head = (sizeof(V) - ((uintptr_t)dst & (sizeof(V) - 1))) & (sizeof(V) - 1);
    if (head > n) {
        for (size_t i = rank; i < n; i += size) dst[i] = (char)gshmemi_load<R>((const uint8_t *)src + i);
        return;
    }
    if (head) gshmemi_copy_bits<R>(dst, src, head, true, rank, size);
    size_t n_v = (n - head) / sizeof(V);
    if (sizeof(V) == 16 && n_v >= (size_t)GSHMEMI_COPY_UNROLL * size + 8 && ((uintptr_t)(dst + head) & 127))
        gshmemi_copy_vec_lined<R>((int4 *)(dst + head), (const int4 *)(src + head), n_v, rank, size);
    else
        gshmemi_copy_vec<R, V>((V *)(dst + head), (const V *)(src + head), n_v, rank, size);
    size_t done = head + n_v * sizeof(V);
    if (done < n) gshmemi_copy_bits<R>(dst + done, src + done, n - done, false, rank, size);
}

/* Picks the widest vector the relative alignment of dst and src allows. */
template <bool R>
GSHMEMI_DEV void gshmemi_copy_group(void *dst, const void *src, size_t n, unsigned rank,
                                    unsigned size) {
    char *d = (char *)dst;
    const char *s = (const char *)src;
    /* at most one aligned vector per thread (a small block put): no loop, no head or tail */
    if ((((uintptr_t)d | (uintptr_t)s | n) & 15) == 0 && n <= (size_t)size * 16) {
        if (rank < (unsigned)(n >> 4)) ((int4 *)d)[rank] = gshmemi_load<R>((const int4 *)s + rank);
        return;
    }
    uintptr_t rel = ((uintptr_t)d ^ (uintptr_t)s);
    if ((rel & 15) == 0) gshmemi_copy_aligned<R, int4>(d, s, n, rank, size);
    else if ((rel & 7) == 0) gshmemi_copy_aligned<R, uint64_t>(d, s, n, rank, size);
    else if ((rel & 3) == 0) gshmemi_copy_aligned<R, uint32_t>(d, s, n, rank, size);
    else if ((rel & 1) == 0) gshmemi_copy_aligned<R, uint16_t>(d, s, n, rank, size);
    else gshmemi_copy_vec<R, uint8_t>((uint8_t *)d, (const uint8_t *)s, n, rank, size);
}

/* Element of a strided copy: ES bytes, aligned to min(ES, 8). */
template <int ES> struct gshmemi_elem { typedef typename gshmemi_uint<ES>::t t; };
struct gshmemi_b128 { uint64_t lo, hi; };
template <> struct gshmemi_elem<16> { typedef gshmemi_b128 t; };

template <bool R> GSHMEMI_DEV gshmemi_b128 gshmemi_load(const gshmemi_b128 *p) {
    gshmemi_b128 v;
    v.lo = gshmemi_load<R>(&p->lo);
    v.hi = gshmemi_load<R>(&p->hi);
    return v;
}

/* Strided copy: element i moves from src[i * sst] to dst[i * dst_stride] (in elements). */
template <bool R, int ES>
GSHMEMI_DEV void gshmemi_copy_strided(void *dst, const void *src, ptrdiff_t dst_stride,
                                      ptrdiff_t sst, size_t n, unsigned rank, unsigned size) {
    typedef typename gshmemi_elem<ES>::t E;
    E *d = (E *)dst;
    const E *s = (const E *)src;
    for (size_t i = rank; i < n; i += size) d[i * dst_stride] = gshmemi_load<R>(s + i * sst);
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

/* Scope descriptors: every scoped call is one template over these, so the thread, warp and
 * block forms share one implementation. sync() gathers the group; bcast0(v) returns rank
 * 0's v to every member. */
struct gshmemi_scope_thread {
    static __device__ __forceinline__ unsigned rank() { return 0; }
    static __device__ __forceinline__ unsigned size() { return 1; }
    static __device__ __forceinline__ void sync() {}
    static __device__ __forceinline__ uint64_t bcast0(uint64_t v) { return v; }
};
struct gshmemi_scope_warp {
    static __device__ __forceinline__ unsigned rank() { return gshmemi_lane(); }
    static __device__ __forceinline__ unsigned size() { return 32; }
    static __device__ __forceinline__ void sync() { __syncwarp(); }
    static __device__ __forceinline__ uint64_t bcast0(uint64_t v) { return __shfl_sync(0xffffffffu, v, 0); }
};
struct gshmemi_scope_block {
    static __device__ __forceinline__ unsigned rank() { return gshmemi_block_rank(); }
    static __device__ __forceinline__ unsigned size() { return gshmemi_block_size(); }
    static __device__ __forceinline__ void sync() { __syncthreads(); }
    static __device__ __forceinline__ uint64_t bcast0(uint64_t v) {
        __shared__ uint64_t x;
        if (rank() == 0) x = v;
        __syncthreads();
        v = x;
        __syncthreads();   /* a later bcast0 may not overwrite x before every thread read it */
        return v;
    }
};

/* The six public names of a scoped bulk call: DEF(prefix, suffix, scope, blocking, ...).
 * Thread forms are gshmemi_dev_* (gshmem.h wraps them into the host/device gshmem_* calls);
 * group forms are gshmemx_*_warp / _block and their _nbi_ variants. */
#define GSHMEMI_FOR_SCOPES(DEF, ...)                                                         \
    DEF(gshmemi_dev_, , thread, true, __VA_ARGS__)                                           \
    DEF(gshmemi_dev_, _nbi, thread, false, __VA_ARGS__)                                      \
    DEF(gshmemx_, _warp, warp, true, __VA_ARGS__)                                            \
    DEF(gshmemx_, _nbi_warp, warp, false, __VA_ARGS__)                                       \
    DEF(gshmemx_, _block, block, true, __VA_ARGS__)                                          \
    DEF(gshmemx_, _nbi_block, block, false, __VA_ARGS__)

#endif
