/* Device RMA over load/store: p/g, put/get (typed, sized, mem) with _nbi, and the warp
 * and block forms of the bulk calls. A put returns when its stores are issued (the source
 * may be reused); delivery is ordered by gshmem_fence and completed by gshmem_quiet. For
 * load/store peers a blocking put and its _nbi form do the same work. */
#ifndef GSHMEM_DEVICE_RMA_H
#define GSHMEM_DEVICE_RMA_H

#include "state.h"
#include "copy.h"

/* Scope shapes shared by every bulk call: one implementation, three group sizes. */
#define GSHMEMI_SCOPE_thread(rank, size) unsigned rank = 0, size = 1;
#define GSHMEMI_SCOPE_warp(rank, size) unsigned rank = gshmemi_lane(), size = 32;
#define GSHMEMI_SCOPE_block(rank, size) unsigned rank = gshmemi_block_rank(), size = gshmemi_block_size();
#define GSHMEMI_SCOPE_END_thread()
#define GSHMEMI_SCOPE_END_warp() __syncwarp();
#define GSHMEMI_SCOPE_END_block() __syncthreads();

GSHMEMI_DEV void gshmemi_put_scope(void *dest, const void *src, size_t n, int pe, unsigned rank,
                                   unsigned size, const char *call) {
    void *d = gshmemi_peer(dest, pe, n, call);
    gshmemi_copy_group<false>(d, src, n, rank, size);
}
GSHMEMI_DEV void gshmemi_get_scope(void *dest, const void *src, size_t n, int pe, unsigned rank,
                                   unsigned size, const char *call) {
    const void *sp = gshmemi_peer(src, pe, n, call);
    gshmemi_copy_group<true>(dest, sp, n, rank, size);
}

/* gshmem[x]_putmem{,_nbi}{,_warp,_block} and getmem likewise. */
#define GSHMEMI_DEF_MEM(prefix, op, suffix, scope)                                          \
    GSHMEMI_DEV void prefix##op##mem##suffix(void *dest, const void *src, size_t nelems,      \
                                             int pe) {                                       \
        GSHMEMI_SCOPE_##scope(rank_, size_)                                                  \
        gshmemi_##op##_scope(dest, src, nelems, pe, rank_, size_, #prefix #op "mem" #suffix); \
        GSHMEMI_SCOPE_END_##scope()                                                          \
    }
#define GSHMEMI_DEF_MEM_ALL(op)                                                              \
    GSHMEMI_DEF_MEM(gshmemi_dev_, op, , thread)                                              \
    GSHMEMI_DEF_MEM(gshmemi_dev_, op, _nbi, thread)                                          \
    GSHMEMI_DEF_MEM(gshmemx_, op, _warp, warp)                                               \
    GSHMEMI_DEF_MEM(gshmemx_, op, _nbi_warp, warp)                                           \
    GSHMEMI_DEF_MEM(gshmemx_, op, _block, block)                                             \
    GSHMEMI_DEF_MEM(gshmemx_, op, _nbi_block, block)
GSHMEMI_DEF_MEM_ALL(put)
GSHMEMI_DEF_MEM_ALL(get)

/* Typed put/get (TYPENAME from the RMA list) in every scope, and p/g. */
#define GSHMEMI_DEF_TYPED_SCOPE(NAME, T, prefix, op, suffix, scope)                          \
    GSHMEMI_DEV void prefix##NAME##_##op##suffix(T *dest, const T *src, size_t nelems, int pe) { \
        GSHMEMI_SCOPE_##scope(rank_, size_)                                                  \
        gshmemi_##op##_scope(dest, src, nelems * sizeof(T), pe, rank_, size_,                \
                             #prefix #NAME "_" #op #suffix);                                 \
        GSHMEMI_SCOPE_END_##scope()                                                          \
    }
#define GSHMEMI_DEF_TYPED(NAME, T)                                                           \
    GSHMEMI_DEF_TYPED_SCOPE(NAME, T, gshmemi_dev_, put, , thread)                            \
    GSHMEMI_DEF_TYPED_SCOPE(NAME, T, gshmemi_dev_, put, _nbi, thread)                        \
    GSHMEMI_DEF_TYPED_SCOPE(NAME, T, gshmemi_dev_, get, , thread)                            \
    GSHMEMI_DEF_TYPED_SCOPE(NAME, T, gshmemi_dev_, get, _nbi, thread)                        \
    GSHMEMI_DEF_TYPED_SCOPE(NAME, T, gshmemx_, put, _warp, warp)                             \
    GSHMEMI_DEF_TYPED_SCOPE(NAME, T, gshmemx_, put, _nbi_warp, warp)                         \
    GSHMEMI_DEF_TYPED_SCOPE(NAME, T, gshmemx_, get, _warp, warp)                             \
    GSHMEMI_DEF_TYPED_SCOPE(NAME, T, gshmemx_, get, _nbi_warp, warp)                         \
    GSHMEMI_DEF_TYPED_SCOPE(NAME, T, gshmemx_, put, _block, block)                           \
    GSHMEMI_DEF_TYPED_SCOPE(NAME, T, gshmemx_, put, _nbi_block, block)                       \
    GSHMEMI_DEF_TYPED_SCOPE(NAME, T, gshmemx_, get, _block, block)                           \
    GSHMEMI_DEF_TYPED_SCOPE(NAME, T, gshmemx_, get, _nbi_block, block)                       \
    GSHMEMI_DEV void gshmemi_dev_##NAME##_p(T *dest, T value, int pe) {                      \
        gshmemi_st_relaxed(gshmemi_peer(dest, pe, sizeof(T), "gshmem_" #NAME "_p"), value);  \
    }                                                                                        \
    GSHMEMI_DEV T gshmemi_dev_##NAME##_g(const T *src, int pe) {                             \
        return gshmemi_ld_relaxed(gshmemi_peer(src, pe, sizeof(T), "gshmem_" #NAME "_g"));   \
    }
GSHMEM_RMA_TYPES(GSHMEMI_DEF_TYPED)

/* Sized forms put8/16/32/64 map onto the typed forms of the same width. */
#define GSHMEMI_DEF_SIZED(BITS, T)                                                           \
    GSHMEMI_DEV void gshmemi_dev_put##BITS(void *d, const void *s, size_t n, int pe) {       \
        gshmemi_dev_uint##BITS##_put((T *)d, (const T *)s, n, pe);                           \
    }                                                                                        \
    GSHMEMI_DEV void gshmemi_dev_get##BITS(void *d, const void *s, size_t n, int pe) {       \
        gshmemi_dev_uint##BITS##_get((T *)d, (const T *)s, n, pe);                           \
    }                                                                                        \
    GSHMEMI_DEV void gshmemi_dev_put##BITS##_nbi(void *d, const void *s, size_t n, int pe) { \
        gshmemi_dev_uint##BITS##_put((T *)d, (const T *)s, n, pe);                           \
    }                                                                                        \
    GSHMEMI_DEV void gshmemi_dev_get##BITS##_nbi(void *d, const void *s, size_t n, int pe) { \
        gshmemi_dev_uint##BITS##_get((T *)d, (const T *)s, n, pe);                           \
    }
GSHMEM_SIZED_TYPES(GSHMEMI_DEF_SIZED)

/* gshmem_ptr on the device: the address at which this GPU reaches `dest` on `pe`, or NULL
 * when that PE is not reachable by load/store. */
GSHMEMI_DEV void *gshmemi_dev_ptr(const void *dest, int pe) {
    const gshmemi_device_state *s = gshmemi_st("gshmem_ptr");
    if ((unsigned)pe >= (unsigned)s->npes) return NULL;
    int slot = gshmemi_slot_of(s, pe);
    if (slot < 0) return NULL;
    return (char *)dest + (size_t)slot * s->heap_window;
}

#endif
