/* Device RMA over load/store: p/g, put/get (typed, sized, mem) with _nbi, strided iput/iget,
 * and the warp and block forms of the bulk calls. A put returns when its stores are issued
 * (the source may be reused); delivery is ordered by gshmem_fence and completed by
 * gshmem_quiet. For load/store peers a blocking put and its _nbi form do the same work, but
 * the _nbi group forms skip the closing group barrier (the source is reusable after quiet). */
#ifndef GSHMEM_DEVICE_RMA_H
#define GSHMEM_DEVICE_RMA_H

#include "state.h"
#include "copy.h"
#include "remote.h"

template <class S, bool BLOCKING>
GSHMEMI_DEV void gshmemi_put(void *dest, const void *src, size_t n, int pe, const char *call) {
    int slot = gshmemi_route(dest, pe, n, call);
    if (GSHMEMI_ROUTED && slot < 0) return gshmemi_remote_rma<S, BLOCKING, false>(dest, src, n, pe, call);
    gshmemi_copy_group<false>(gshmemi_at(dest, slot), src, n, S::rank(), S::size());
    if (BLOCKING) S::sync();
}
template <class S, bool BLOCKING>
GSHMEMI_DEV void gshmemi_get(void *dest, const void *src, size_t n, int pe, const char *call) {
    int slot = gshmemi_route(src, pe, n, call);
    if (GSHMEMI_ROUTED && slot < 0) return gshmemi_remote_rma<S, BLOCKING, true>((void *)src, dest, n, pe, call);
    gshmemi_copy_group<true>(dest, gshmemi_at(src, slot), n, S::rank(), S::size());
    if (BLOCKING) S::sync();
}

/* putmem/getmem in every scope: gshmemi_dev_putmem{,_nbi}, gshmemx_putmem{,_nbi}_{warp,block} */
#define GSHMEMI_DEF_MEM(prefix, suffix, scope, blocking, op)                                 \
    GSHMEMI_API void prefix##op##mem##suffix(void *dest, const void *src, size_t nbytes, int pe) { \
        gshmemi_##op<gshmemi_scope_##scope, blocking>(dest, src, nbytes, pe,                 \
                                                      #prefix #op "mem" #suffix);            \
    }
GSHMEMI_FOR_SCOPES(GSHMEMI_DEF_MEM, put)
GSHMEMI_FOR_SCOPES(GSHMEMI_DEF_MEM, get)

/* Typed put/get (TYPENAME from the RMA list) in every scope. */
#define GSHMEMI_DEF_TYPED_SCOPE(prefix, suffix, scope, blocking, op, NAME, T)               \
    GSHMEMI_API void prefix##NAME##_##op##suffix(T *dest, const T *src, size_t nelems, int pe) { \
        gshmemi_##op<gshmemi_scope_##scope, blocking>(dest, src, nelems * sizeof(T), pe,     \
                                                      #prefix #NAME "_" #op #suffix);        \
    }
/* Strided iput/iget: thread, warp and block forms (OpenSHMEM has no _nbi strided calls). */
template <class S, bool GET, int ES>
GSHMEMI_DEV void gshmemi_strided(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst,
                                 size_t n, int pe, const char *call) {
    if (n == 0) return;
    if (dst < 1 || sst < 1) {
        (void)gshmemi_st(call);
        GSHMEMI_DEVICE_FAIL("%s: strides must be >= 1 (dst %lld, sst %lld)", call, (long long)dst,
                            (long long)sst);
    }
    if (GET) {
        const void *sp = gshmemi_peer(src, pe, ((n - 1) * sst + 1) * ES, call);
        if (GSHMEMI_ROUTED && !sp)
            return gshmemi_remote_strided<S, true, ES>((char *)dest, (const char *)src, dst, sst, n,
                                                       pe, call);
        gshmemi_copy_strided<true, ES>(dest, sp, dst, sst, n, S::rank(), S::size());
    } else {
        void *dp = gshmemi_peer(dest, pe, ((n - 1) * dst + 1) * ES, call);
        if (GSHMEMI_ROUTED && !dp)
            return gshmemi_remote_strided<S, false, ES>((char *)dest, (const char *)src, dst, sst, n,
                                                        pe, call);
        gshmemi_copy_strided<false, ES>(dp, src, dst, sst, n, S::rank(), S::size());
    }
    S::sync();
}
/* iput_name/iget_name: typed NAME_iput or sized iputBITS, in one scope */
#define GSHMEMI_DEF_STRIDED(scope, T, ES, iput_name, iget_name)                              \
    GSHMEMI_API void iput_name(T *dest, const T *src, ptrdiff_t dst, ptrdiff_t sst,          \
                               size_t nelems, int pe) {                                      \
        gshmemi_strided<gshmemi_scope_##scope, false, ES>(dest, src, dst, sst, nelems, pe,   \
                                                          #iput_name);                       \
    }                                                                                        \
    GSHMEMI_API void iget_name(T *dest, const T *src, ptrdiff_t dst, ptrdiff_t sst,          \
                               size_t nelems, int pe) {                                      \
        gshmemi_strided<gshmemi_scope_##scope, true, ES>(dest, src, dst, sst, nelems, pe,    \
                                                         #iget_name);                        \
    }

/* p/g: one store or load on the load/store path; the value travels inline to a remote PE. */
template <typename T> GSHMEMI_DEV void gshmemi_rma_p(T *dest, T value, int pe, const char *call) {
    int slot = gshmemi_route(dest, pe, sizeof(T), call);
    if (GSHMEMI_ROUTED && slot < 0) {
        typename gshmemi_uint<sizeof(T)>::t u;
        memcpy(&u, &value, sizeof u);
        return gshmemi_remote_p(dest, (uint64_t)u, (int)sizeof(T), pe, call);
    }
    gshmemi_st_relaxed(gshmemi_at(dest, slot), value);
}
template <typename T> GSHMEMI_DEV T gshmemi_rma_g(const T *src, int pe, const char *call) {
    int slot = gshmemi_route(src, pe, sizeof(T), call);
    if (GSHMEMI_ROUTED && slot < 0) {
        typename gshmemi_uint<sizeof(T)>::t u =
            (typename gshmemi_uint<sizeof(T)>::t)gshmemi_remote_g(src, (int)sizeof(T), pe, call);
        T v;
        memcpy(&v, &u, sizeof v);
        return v;
    }
    return gshmemi_ld_relaxed(gshmemi_at(src, slot));
}

#define GSHMEMI_DEF_TYPED(NAME, T)                                                           \
    GSHMEMI_FOR_SCOPES(GSHMEMI_DEF_TYPED_SCOPE, put, NAME, T)                                \
    GSHMEMI_FOR_SCOPES(GSHMEMI_DEF_TYPED_SCOPE, get, NAME, T)                                \
    GSHMEMI_DEF_STRIDED(thread, T, sizeof(T), gshmemi_dev_##NAME##_iput, gshmemi_dev_##NAME##_iget) \
    GSHMEMI_DEF_STRIDED(warp, T, sizeof(T), gshmemx_##NAME##_iput_warp, gshmemx_##NAME##_iget_warp) \
    GSHMEMI_DEF_STRIDED(block, T, sizeof(T), gshmemx_##NAME##_iput_block, gshmemx_##NAME##_iget_block) \
    GSHMEMI_API void gshmemi_dev_##NAME##_p(T *dest, T value, int pe) {                      \
        gshmemi_rma_p(dest, value, pe, "gshmem_" #NAME "_p");                                \
    }                                                                                        \
    GSHMEMI_API T gshmemi_dev_##NAME##_g(const T *src, int pe) {                             \
        return gshmemi_rma_g(src, pe, "gshmem_" #NAME "_g");                                 \
    }
GSHMEM_RMA_TYPES(GSHMEMI_DEF_TYPED)

/* Sized forms put8 ... put128: elements of BITS/8 bytes (untyped pointers). */
#define GSHMEMI_DEF_SIZED_SCOPE(prefix, suffix, scope, blocking, op, BITS)                   \
    GSHMEMI_API void prefix##op##BITS##suffix(void *dest, const void *src, size_t nelems, int pe) { \
        gshmemi_##op<gshmemi_scope_##scope, blocking>(dest, src, nelems * (BITS / 8), pe,    \
                                                      #prefix #op #BITS #suffix);            \
    }
#define GSHMEMI_DEF_SIZED(BITS)                                                              \
    GSHMEMI_FOR_SCOPES(GSHMEMI_DEF_SIZED_SCOPE, put, BITS)                                   \
    GSHMEMI_FOR_SCOPES(GSHMEMI_DEF_SIZED_SCOPE, get, BITS)                                   \
    GSHMEMI_DEF_STRIDED(thread, void, BITS / 8, gshmemi_dev_iput##BITS, gshmemi_dev_iget##BITS) \
    GSHMEMI_DEF_STRIDED(warp, void, BITS / 8, gshmemx_iput##BITS##_warp, gshmemx_iget##BITS##_warp) \
    GSHMEMI_DEF_STRIDED(block, void, BITS / 8, gshmemx_iput##BITS##_block, gshmemx_iget##BITS##_block)
GSHMEM_SIZED_BITS(GSHMEMI_DEF_SIZED)

/* gshmem_ptr on the device: the address at which this GPU reaches `dest` on `pe`, or NULL
 * when that PE is not reachable by load/store. */
GSHMEMI_DEV void *gshmemi_dev_ptr(const void *dest, int pe) {
    const gshmemi_device_state *s = gshmemi_st("gshmem_ptr");
    if ((unsigned)pe >= (unsigned)s->npes) return NULL;
    int slot = gshmemi_slot_of(s, pe);
    if (GSHMEMI_ROUTED && slot < 0) return NULL;
    return (char *)dest + (size_t)slot * s->heap_window;
}

#endif
