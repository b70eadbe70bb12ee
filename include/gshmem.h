/* gshmem: OpenSHMEM-style PGAS for NVIDIA GPUs. One header for host and device code.
 * In a .cu file the calls that OpenSHMEM defines for both sides (put/get/p/g, quiet,
 * fence, barrier_all, wait_until, my_pe, n_pes, ptr) work in kernels and on the host;
 * in C they are the host forms. Extensions (gshmemx_*) are in gshmemx.h, included here. */
#ifndef GSHMEM_H
#define GSHMEM_H

#include <stddef.h>
#include <stdint.h>

#include "gshmem/types.h"
#include "gshmem/device/state.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- library setup (host) ----------------------------------------------------------- */
/* Collective. Finds the other PEs (gshmrun, mpirun/srun with PMIx, or alone), selects this
 * PE's GPU if no CUDA device is current (local PE index), builds the symmetric heap. On
 * failure prints why and exits the process with status 1 (like OpenSHMEM's shmem_init);
 * gshmemx_init_status returns the status instead. */
GSHMEM_EXPORT void gshmem_init(void);
GSHMEM_EXPORT int gshmemx_init_status(void);
GSHMEM_EXPORT int gshmem_init_thread(int requested, int *provided);
GSHMEM_EXPORT void gshmem_query_thread(int *provided);
/* Collective; idempotent; also runs at exit if the program did not call it. */
GSHMEM_EXPORT void gshmem_finalize(void);
GSHMEM_EXPORT void gshmem_global_exit(int status);
GSHMEM_EXPORT void gshmem_info_get_version(int *major, int *minor);
GSHMEM_EXPORT void gshmem_info_get_name(char *name);

/* ---- symmetric heap (host, collective) ----------------------------------------------- */
/* Same address on every PE. Grows on demand: no heap size to set (GSHMEM_HEAP_MAX caps it).
 * Return NULL (with a message naming the size, the heap use and the free device memory)
 * when the GPU is out of memory. size 0 returns NULL. */
GSHMEM_EXPORT void *gshmem_malloc(size_t size);
GSHMEM_EXPORT void *gshmem_calloc(size_t count, size_t size);
GSHMEM_EXPORT void *gshmem_align(size_t alignment, size_t size);
GSHMEM_EXPORT void gshmem_free(void *ptr);
GSHMEM_EXPORT int gshmem_addr_accessible(const void *addr, int pe);

#ifdef __cplusplus
}
#endif

#include "gshmemx.h"

/* ---- the calls defined for both sides ------------------------------------------------ */
/* Each is one GSHMEMI_HD_FN (gshmem/forms.h): the device form in kernels, a libgshmem
 * function on the host; GSHMEMI_HDS_FN also declares its warp and block forms for nvcc's
 * host pass, which reads none of gshmem/device/. */
#include "gshmem/forms.h"
#if defined(__CUDACC__) && !defined(GSHMEMI_LEAN_HOST_PASS)
#include "gshmem/device/rma.h"
#include "gshmem/device/sync.h"
#include "gshmem/device/amo.h"
#include "gshmem/device/signal.h"
#include "gshmem/device/team.h"
#include "gshmem/device/coll.h"
#include "gshmem/device/maxloc.h"
#endif

GSHMEMI_HD_BEGIN
GSHMEMI_HD_FN(int, gshmem_my_pe, (void), return gshmemi_st("gshmem_my_pe")->mype;,
              return gshmemi_host_my_pe();)
GSHMEMI_HD_FN(int, gshmem_n_pes, (void), return gshmemi_st("gshmem_n_pes")->npes;,
              return gshmemi_host_n_pes();)
GSHMEMI_HDS_FN(void, quiet, (void), gshmemi_dev_quiet();, gshmemi_host_quiet();)
GSHMEMI_HDS_FN(void, fence, (void), gshmemi_dev_fence();, gshmemi_host_quiet();)
GSHMEMI_HDS_FN(void, barrier_all, (void), gshmemi_dev_barrier_all();, gshmemi_host_barrier_all();)
GSHMEMI_HD_FN(void *, gshmem_ptr, (const void *dest, int pe), return gshmemi_dev_ptr(dest, pe);,
              return gshmemi_host_ptr(dest, pe);)

#define GSHMEMI_HD_MEM(op, suffix)                                                           \
    GSHMEMI_HDS_FN(void, op##mem##suffix, (void *dest, const void *src, size_t n, int pe),     \
                   gshmemi_dev_##op##mem##suffix(dest, src, n, pe);,                         \
                   gshmemi_host_##op##mem(dest, src, n, pe);)
GSHMEMI_HD_MEM(put, )
GSHMEMI_HD_MEM(put, _nbi)
GSHMEMI_HD_MEM(get, )
GSHMEMI_HD_MEM(get, _nbi)

/* put/get, blocking or not, in one family: X(NAME, T, suffix) */
#define GSHMEMI_HD_PUTGET(NAME, T, suffix)                                                   \
    GSHMEMI_HDS_FN(void, NAME##_put##suffix, (T *dest, const T *src, size_t n, int pe),       \
                   gshmemi_dev_##NAME##_put##suffix(dest, src, n, pe);,                      \
                   gshmemi_host_putmem(dest, src, n * sizeof(T), pe);)                       \
    GSHMEMI_HDS_FN(void, NAME##_get##suffix, (T *dest, const T *src, size_t n, int pe),       \
                   gshmemi_dev_##NAME##_get##suffix(dest, src, n, pe);,                      \
                   gshmemi_host_getmem(dest, src, n * sizeof(T), pe);)
#define GSHMEMI_HD_PUT_SIGNAL(NAME, T, suffix)                                               \
    GSHMEMI_HDS_FN(void, NAME##_put_signal##suffix,                                          \
                   (T *dest, const T *src, size_t n, uint64_t *sig, uint64_t signal, int sig_op, \
                    int pe),                                                                 \
                   gshmemi_dev_##NAME##_put_signal##suffix(dest, src, n, sig, signal, sig_op, pe);, \
                   gshmemi_host_put_signal(dest, src, n * sizeof(T), sig, signal, sig_op, pe, \
                                           "gshmem_" #NAME "_put_signal" #suffix);)
#define GSHMEMI_HD_STRIDED(NAME, T, op)                                                      \
    GSHMEMI_HDS_FN(void, NAME##_##op,                                                        \
                   (T *dest, const T *src, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe),  \
                   gshmemi_dev_##NAME##_##op(dest, src, dst, sst, n, pe);,                   \
                   gshmemi_host_##op(dest, src, dst, sst, n, sizeof(T), pe, "gshmem_" #NAME "_" #op);)
#define GSHMEMI_HD_TYPED(NAME, T)                                                            \
    GSHMEMI_HD_PUTGET(NAME, T, )                                                             \
    GSHMEMI_HD_PUTGET(NAME, T, _nbi)                                                         \
    GSHMEMI_HD_FN(void, gshmem_##NAME##_p, (T *dest, T value, int pe),                       \
                  gshmemi_dev_##NAME##_p(dest, value, pe);,                                  \
                  gshmemi_host_putmem(dest, &value, sizeof(T), pe);)                         \
    GSHMEMI_HD_FN(T, gshmem_##NAME##_g, (const T *src, int pe),                              \
                  return gshmemi_dev_##NAME##_g(src, pe);,                                   \
                  T v_; gshmemi_host_getmem(&v_, src, sizeof(T), pe); return v_;)            \
    GSHMEMI_HD_STRIDED(NAME, T, iput)                                                        \
    GSHMEMI_HD_STRIDED(NAME, T, iget)                                                        \
    GSHMEMI_HD_PUT_SIGNAL(NAME, T, )                                                         \
    GSHMEMI_HD_PUT_SIGNAL(NAME, T, _nbi)
GSHMEM_RMA_TYPES(GSHMEMI_HD_TYPED)

/* Sized forms: put8 ... put128 and their nbi, strided and signal variants. */
#define GSHMEMI_HD_SIZED_RMA(BITS, op, suffix)                                               \
    GSHMEMI_HDS_FN(void, op##BITS##suffix, (void *d, const void *s, size_t n, int pe),        \
                   gshmemi_dev_##op##BITS##suffix(d, s, n, pe);,                             \
                   gshmemi_host_##op##mem(d, s, n * (BITS / 8), pe);)
#define GSHMEMI_HD_SIZED_STRIDED(BITS, op)                                                   \
    GSHMEMI_HDS_FN(void, op##BITS,                                                           \
                   (void *d, const void *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe), \
                   gshmemi_dev_##op##BITS(d, s, dst, sst, n, pe);,                           \
                   gshmemi_host_##op(d, s, dst, sst, n, BITS / 8, pe, "gshmem_" #op #BITS);)
#define GSHMEMI_HD_SIZED_SIGNAL(BITS, suffix)                                                \
    GSHMEMI_HDS_FN(void, put##BITS##_signal##suffix,                                         \
                   (void *d, const void *s, size_t n, uint64_t *sig, uint64_t signal, int sig_op, \
                    int pe),                                                                 \
                   gshmemi_dev_put##BITS##_signal##suffix(d, s, n, sig, signal, sig_op, pe);, \
                   gshmemi_host_put_signal(d, s, n * (BITS / 8), sig, signal, sig_op, pe,    \
                                           "gshmem_put" #BITS "_signal" #suffix);)
#define GSHMEMI_HD_SIZED(BITS)                                                               \
    GSHMEMI_HD_SIZED_RMA(BITS, put, )                                                        \
    GSHMEMI_HD_SIZED_RMA(BITS, get, )                                                        \
    GSHMEMI_HD_SIZED_RMA(BITS, put, _nbi)                                                    \
    GSHMEMI_HD_SIZED_RMA(BITS, get, _nbi)                                                    \
    GSHMEMI_HD_SIZED_STRIDED(BITS, iput)                                                     \
    GSHMEMI_HD_SIZED_STRIDED(BITS, iget)                                                     \
    GSHMEMI_HD_SIZED_SIGNAL(BITS, )                                                          \
    GSHMEMI_HD_SIZED_SIGNAL(BITS, _nbi)
GSHMEM_SIZED_BITS(GSHMEMI_HD_SIZED)

/* ---- signals ---------------------------------------------------------------------------- */
#define GSHMEMI_HD_MEM_SIGNAL(suffix)                                                        \
    GSHMEMI_HDS_FN(void, putmem_signal##suffix,                                              \
                   (void *dest, const void *src, size_t nbytes, uint64_t *sig, uint64_t signal, \
                    int sig_op, int pe),                                                     \
                   gshmemi_dev_putmem_signal##suffix(dest, src, nbytes, sig, signal, sig_op, pe);, \
                   gshmemi_host_put_signal(dest, src, nbytes, sig, signal, sig_op, pe,       \
                                           "gshmem_putmem_signal" #suffix);)
GSHMEMI_HD_MEM_SIGNAL()
GSHMEMI_HD_MEM_SIGNAL(_nbi)
GSHMEMI_HD_FN(void, gshmemx_signal_op, (uint64_t *sig_addr, uint64_t signal, int sig_op, int pe),
              gshmemi_dev_signal_op(sig_addr, signal, sig_op, pe);,
              gshmemi_host_amo(sig_op == GSHMEM_SIGNAL_ADD ? GSHMEMI_AMO_ADD
                               : sig_op == GSHMEM_SIGNAL_SET ? GSHMEMI_AMO_SET : -1,
                               sig_addr, sizeof(uint64_t), &signal, &signal, NULL, pe,
                               "gshmemx_signal_op");)
GSHMEMI_HD_FN(uint64_t, gshmem_signal_fetch, (const uint64_t *sig_addr),
              return gshmemi_dev_signal_fetch(sig_addr);,
              uint64_t v_ = 0;
              gshmemi_host_amo(GSHMEMI_AMO_FETCH, (void *)sig_addr, sizeof(uint64_t), &v_, &v_,
                               &v_, gshmemi_host_my_pe(), "gshmem_signal_fetch");
              return v_;)
GSHMEMI_HD_FN(uint64_t, gshmem_signal_wait_until, (uint64_t *sig_addr, int cmp, uint64_t value),
              return gshmemi_dev_signal_wait_until(sig_addr, cmp, value);,
              uint64_t v_ = 0;
              gshmemi_host_wait_set(GSHMEMI_WAIT_ALL, 1, sig_addr, 1, sizeof(uint64_t), 0, NULL,
                                    cmp, NULL, &value, NULL, &v_, "gshmem_signal_wait_until");
              return v_;)

/* ---- atomics ---------------------------------------------------------------------------- */
/* Host forms: one tiny kernel; the value, condition and result travel by address. */
#define GSHMEMI_HOST_AMO(OPC, NAME, fn, dest, value, cond, result)                           \
    gshmemi_host_amo(OPC, (void *)(dest), sizeof(*(dest)), &(value), &(cond), result, pe,    \
                     "gshmem_" #NAME "_atomic_" #fn)
/* a fetching operation (returns the old value) and a non-fetching one:
 * X(NAME, T, fn, (PARAMS), (device arguments), OPC, value[, cond]) */
#define GSHMEMI_HD_AMO_FETCHING(NAME, T, fn, PARAMS, DEVARGS, OPC, value, cond)              \
    GSHMEMI_HD_FN(T, gshmem_##NAME##_atomic_##fn, PARAMS,                                    \
                  return gshmemi_dev_##NAME##_atomic_##fn DEVARGS;,                          \
                  T r_ = 0;                                                                  \
                  GSHMEMI_HOST_AMO(OPC, NAME, fn, dest, value, cond, &r_);                   \
                  return r_;)
#define GSHMEMI_HD_AMO_PLAIN(NAME, T, fn, PARAMS, DEVARGS, OPC, value)                       \
    GSHMEMI_HD_FN(void, gshmem_##NAME##_atomic_##fn, PARAMS,                                 \
                  gshmemi_dev_##NAME##_atomic_##fn DEVARGS;,                                 \
                  GSHMEMI_HOST_AMO(OPC, NAME, fn, dest, value, value, NULL);)
/* X_nbi(fetch, ...): the fetching call's result stored at fetch */
#define GSHMEMI_HD_AMO_NBI(NAME, T, fn, PARAMS, ARGS)                                        \
    GSHMEMI_HD_FN(void, gshmem_##NAME##_atomic_##fn##_nbi, PARAMS,                           \
                  *fetch = gshmem_##NAME##_atomic_##fn ARGS;,                                \
                  *fetch = gshmem_##NAME##_atomic_##fn ARGS;)
#define GSHMEMI_HD_AMO_EXT(NAME, T)                                                          \
    GSHMEMI_HD_FN(T, gshmem_##NAME##_atomic_fetch, (const T *source, int pe),                \
                  return gshmemi_dev_##NAME##_atomic_fetch(source, pe);,                     \
                  T r_ = 0;                                                                  \
                  GSHMEMI_HOST_AMO(GSHMEMI_AMO_FETCH, NAME, fetch, source, r_, r_, &r_);     \
                  return r_;)                                                                \
    GSHMEMI_HD_AMO_PLAIN(NAME, T, set, (T *dest, T value, int pe), (dest, value, pe),        \
                         GSHMEMI_AMO_SET, value)                                             \
    GSHMEMI_HD_AMO_FETCHING(NAME, T, swap, (T *dest, T value, int pe), (dest, value, pe),    \
                            GSHMEMI_AMO_SWAP, value, value)                                  \
    GSHMEMI_HD_AMO_NBI(NAME, T, fetch, (T *fetch, const T *source, int pe), (source, pe))    \
    GSHMEMI_HD_AMO_NBI(NAME, T, swap, (T *fetch, T *dest, T value, int pe), (dest, value, pe))
GSHMEM_AMO_EXT_TYPES(GSHMEMI_HD_AMO_EXT)

#define GSHMEMI_HD_AMO_STD(NAME, T)                                                          \
    GSHMEMI_HD_AMO_FETCHING(NAME, T, compare_swap, (T *dest, T cond, T value, int pe),       \
                            (dest, cond, value, pe), GSHMEMI_AMO_CSWAP, value, cond)         \
    GSHMEMI_HD_AMO_FETCHING(NAME, T, fetch_add, (T *dest, T value, int pe), (dest, value, pe), \
                            GSHMEMI_AMO_ADD, value, value)                                   \
    GSHMEMI_HD_FN(T, gshmem_##NAME##_atomic_fetch_inc, (T *dest, int pe),                    \
                  return gshmem_##NAME##_atomic_fetch_add(dest, (T)1, pe);,                  \
                  return gshmem_##NAME##_atomic_fetch_add(dest, (T)1, pe);)                  \
    GSHMEMI_HD_AMO_PLAIN(NAME, T, add, (T *dest, T value, int pe), (dest, value, pe),        \
                         GSHMEMI_AMO_ADD, value)                                             \
    GSHMEMI_HD_FN(void, gshmem_##NAME##_atomic_inc, (T *dest, int pe),                       \
                  gshmem_##NAME##_atomic_add(dest, (T)1, pe);,                               \
                  gshmem_##NAME##_atomic_add(dest, (T)1, pe);)                               \
    GSHMEMI_HD_AMO_NBI(NAME, T, compare_swap, (T *fetch, T *dest, T cond, T value, int pe),  \
                       (dest, cond, value, pe))                                              \
    GSHMEMI_HD_AMO_NBI(NAME, T, fetch_add, (T *fetch, T *dest, T value, int pe),             \
                       (dest, value, pe))                                                    \
    GSHMEMI_HD_FN(void, gshmem_##NAME##_atomic_fetch_inc_nbi, (T *fetch, T *dest, int pe),   \
                  *fetch = gshmem_##NAME##_atomic_fetch_add(dest, (T)1, pe);,                \
                  *fetch = gshmem_##NAME##_atomic_fetch_add(dest, (T)1, pe);)
GSHMEM_AMO_STD_TYPES(GSHMEMI_HD_AMO_STD)

#define GSHMEMI_HD_AMO_BIT_OP(NAME, T, op, OPC)                                              \
    GSHMEMI_HD_AMO_FETCHING(NAME, T, fetch_##op, (T *dest, T value, int pe), (dest, value, pe), \
                            OPC, value, value)                                               \
    GSHMEMI_HD_AMO_PLAIN(NAME, T, op, (T *dest, T value, int pe), (dest, value, pe), OPC, value) \
    GSHMEMI_HD_AMO_NBI(NAME, T, fetch_##op, (T *fetch, T *dest, T value, int pe),            \
                       (dest, value, pe))
#define GSHMEMI_HD_AMO_BIT(NAME, T)                                                          \
    GSHMEMI_HD_AMO_BIT_OP(NAME, T, and, GSHMEMI_AMO_AND)                                     \
    GSHMEMI_HD_AMO_BIT_OP(NAME, T, or, GSHMEMI_AMO_OR)                                       \
    GSHMEMI_HD_AMO_BIT_OP(NAME, T, xor, GSHMEMI_AMO_XOR)
GSHMEM_AMO_BIT_TYPES(GSHMEMI_HD_AMO_BIT)

/* ---- point-to-point synchronization ----------------------------------------------------- */
/* Host forms block (poll this PE's copy, with the same deadline as device waits).
 * X(RET, RETURN (return or nothing), NAME, T, fn, (PARAMS), (device arguments), host mode,
 * wait, values, value, indices) */
#define GSHMEMI_HD_WAIT_FN(RET, RETURN, NAME, T, fn, PARAMS, DEVARGS, mode, wait, values, valp, \
                           indices)                                                          \
    GSHMEMI_HD_FN(RET, gshmem_##NAME##_##fn, PARAMS,                                         \
                  RETURN gshmemi_dev_##NAME##_##fn DEVARGS;,                                 \
                  RETURN (RET)gshmemi_host_wait_set(mode, wait, ivars, n, sizeof(T),         \
                                                    !((T)-1 > (T)0), status, cmp, values,    \
                                                    valp, indices, NULL,                     \
                                                    "gshmem_" #NAME "_" #fn);)
/* the forms over a set, each with and without _vector: X(NAME, T, fn, mode, wait, RET, RETURN) */
#define GSHMEMI_HD_WAIT_SET(NAME, T, fn, mode, wait, RET, RETURN)                            \
    GSHMEMI_HD_WAIT_FN(RET, RETURN, NAME, T, fn,                                             \
                       (T *ivars, size_t n, const int *status, int cmp, T value),            \
                       (ivars, n, status, cmp, value), mode, wait, NULL, &value, NULL)       \
    GSHMEMI_HD_WAIT_FN(RET, RETURN, NAME, T, fn##_vector,                                    \
                       (T *ivars, size_t n, const int *status, int cmp, T *values),          \
                       (ivars, n, status, cmp, values), mode, wait, values, NULL, NULL)
#define GSHMEMI_HD_WAIT_SOME(NAME, T, fn, wait)                                              \
    GSHMEMI_HD_WAIT_FN(size_t, return, NAME, T, fn,                                          \
                       (T *ivars, size_t n, size_t *indices, const int *status, int cmp, T value), \
                       (ivars, n, indices, status, cmp, value), GSHMEMI_WAIT_SOME, wait, NULL, \
                       &value, indices)                                                      \
    GSHMEMI_HD_WAIT_FN(size_t, return, NAME, T, fn##_vector,                                 \
                       (T *ivars, size_t n, size_t *indices, const int *status, int cmp,     \
                        T *values),                                                          \
                       (ivars, n, indices, status, cmp, values), GSHMEMI_WAIT_SOME, wait,    \
                       values, NULL, indices)
#define GSHMEMI_HD_WAIT(NAME, T)                                                             \
    GSHMEMI_HD_FN(void, gshmem_##NAME##_wait_until, (T *ivar, int cmp, T value),             \
                  gshmemi_dev_##NAME##_wait_until(ivar, cmp, value);,                        \
                  gshmemi_host_wait_set(GSHMEMI_WAIT_ALL, 1, ivar, 1, sizeof(T), !((T)-1 > (T)0), \
                                        NULL, cmp, NULL, &value, NULL, NULL,                 \
                                        "gshmem_" #NAME "_wait_until");)                     \
    GSHMEMI_HD_FN(int, gshmem_##NAME##_test, (T *ivar, int cmp, T value),                    \
                  return gshmemi_dev_##NAME##_test(ivar, cmp, value);,                       \
                  return (int)gshmemi_host_wait_set(GSHMEMI_WAIT_ALL, 0, ivar, 1, sizeof(T), \
                                                    !((T)-1 > (T)0), NULL, cmp, NULL, &value, \
                                                    NULL, NULL, "gshmem_" #NAME "_test");)   \
    GSHMEMI_HD_WAIT_SET(NAME, T, wait_until_all, GSHMEMI_WAIT_ALL, 1, void, )                \
    GSHMEMI_HD_WAIT_SET(NAME, T, wait_until_any, GSHMEMI_WAIT_ANY, 1, size_t, return)        \
    GSHMEMI_HD_WAIT_SOME(NAME, T, wait_until_some, 1)                                        \
    GSHMEMI_HD_WAIT_SET(NAME, T, test_all, GSHMEMI_WAIT_ALL, 0, int, return)                 \
    GSHMEMI_HD_WAIT_SET(NAME, T, test_any, GSHMEMI_WAIT_ANY, 0, size_t, return)              \
    GSHMEMI_HD_WAIT_SOME(NAME, T, test_some, 0)
GSHMEM_P2P_SYNC_TYPES(GSHMEMI_HD_WAIT)

GSHMEMI_HD_FN(void, gshmem_pe_quiet, (const int *target_pes, size_t npes),
              gshmemi_dev_pe_quiet(target_pes, npes);, gshmemi_host_pe_quiet(target_pes, npes);)
GSHMEMI_HD_END

#include "gshmem/coll_api.h"

#ifdef __CUDACC__
#include "gshmem/launch.h"
#endif

#endif
