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
void gshmem_init(void);
int gshmemx_init_status(void);
int gshmem_init_thread(int requested, int *provided);
void gshmem_query_thread(int *provided);
/* Collective; idempotent; also runs at exit if the program did not call it. */
void gshmem_finalize(void);
void gshmem_global_exit(int status);
void gshmem_info_get_version(int *major, int *minor);
void gshmem_info_get_name(char *name);

/* ---- symmetric heap (host, collective) ----------------------------------------------- */
/* Same address on every PE. Grows on demand: no heap size to set (GSHMEM_HEAP_MAX caps it).
 * Return NULL (with a message naming the size, the heap use and the free device memory)
 * when the GPU is out of memory. size 0 returns NULL. */
void *gshmem_malloc(size_t size);
void *gshmem_calloc(size_t count, size_t size);
void *gshmem_align(size_t alignment, size_t size);
void gshmem_free(void *ptr);
int gshmem_addr_accessible(const void *addr, int pe);

/* ---- host implementations behind the host/device calls -------------------------------- */
int gshmemi_host_my_pe(void);
int gshmemi_host_n_pes(void);
void gshmemi_host_putmem(void *dest, const void *src, size_t nbytes, int pe);
void gshmemi_host_getmem(void *dest, const void *src, size_t nbytes, int pe);
void gshmemi_host_quiet(void);
void gshmemi_host_barrier_all(void);
void *gshmemi_host_ptr(const void *dest, int pe);
void gshmemi_host_iput(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                       size_t elem_size, int pe, const char *call);
void gshmemi_host_iget(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                       size_t elem_size, int pe, const char *call);
void gshmemi_host_put_signal(void *dest, const void *src, size_t nbytes, uint64_t *sig_addr,
                             uint64_t signal, int sig_op, int pe, const char *call);
/* One atomic of `size` (4/8) bytes: GSHMEMI_AMO_* op; value/cond/result point to host
 * values of that size (result may be NULL). */
void gshmemi_host_amo(int op, void *dest, size_t size, const void *value, const void *cond,
                      void *result, int pe, const char *call);
/* Wait (wait=1) or test over ivars[0..n) of `size` bytes; mode GSHMEMI_WAIT_ALL/ANY/SOME;
 * values (NULL: every entry compares with *value); snapshot (may be NULL) receives the
 * values that satisfied the wait. Returns as the device forms do. */
size_t gshmemi_host_wait_set(int mode, int wait, void *ivars, size_t n, size_t size, int is_signed,
                             const int *status, int cmp, const void *values, const void *value,
                             size_t *indices, void *snapshot, const char *call);
void gshmemi_host_pe_quiet(const int *target_pes, size_t npes);

#ifdef __cplusplus
}
#endif

#include "gshmemx.h"

/* ---- the calls defined for both sides ------------------------------------------------ */
#ifdef __CUDACC__
#include "gshmem/device/rma.h"
#include "gshmem/device/sync.h"
#include "gshmem/device/amo.h"
#include "gshmem/device/signal.h"
#include "gshmem/device/team.h"
#include "gshmem/device/coll.h"
/* A template for the reason GSHMEMI_API is (gshmem/device/ptx.h): compiled only where called. */
#define GSHMEMI_HD template <int gshmemi_lazy_ = 0> static __host__ __device__ __forceinline__
#ifdef __CUDA_ARCH__
#define GSHMEMI_PICK(dev, host) dev
#else
#define GSHMEMI_PICK(dev, host) host
#endif
#else
#define GSHMEMI_HD static inline
#define GSHMEMI_PICK(dev, host) host
#endif

GSHMEMI_HD int gshmem_my_pe(void) { return GSHMEMI_PICK(gshmemi_st("gshmem_my_pe")->mype, gshmemi_host_my_pe()); }
GSHMEMI_HD int gshmem_n_pes(void) { return GSHMEMI_PICK(gshmemi_st("gshmem_n_pes")->npes, gshmemi_host_n_pes()); }
GSHMEMI_HD void gshmem_quiet(void) { GSHMEMI_PICK(gshmemi_dev_quiet(), gshmemi_host_quiet()); }
GSHMEMI_HD void gshmem_fence(void) { GSHMEMI_PICK(gshmemi_dev_fence(), gshmemi_host_quiet()); }
GSHMEMI_HD void gshmem_barrier_all(void) { GSHMEMI_PICK(gshmemi_dev_barrier_all(), gshmemi_host_barrier_all()); }
GSHMEMI_HD void *gshmem_ptr(const void *dest, int pe) { return GSHMEMI_PICK(gshmemi_dev_ptr(dest, pe), gshmemi_host_ptr(dest, pe)); }

#define GSHMEMI_HD_MEM(op, suffix)                                                           \
    GSHMEMI_HD void gshmem_##op##mem##suffix(void *dest, const void *src, size_t n, int pe) { \
        GSHMEMI_PICK(gshmemi_dev_##op##mem##suffix(dest, src, n, pe),                        \
                     gshmemi_host_##op##mem(dest, src, n, pe));                              \
    }
GSHMEMI_HD_MEM(put, )
GSHMEMI_HD_MEM(put, _nbi)
GSHMEMI_HD_MEM(get, )
GSHMEMI_HD_MEM(get, _nbi)

#define GSHMEMI_HD_TYPED(NAME, T)                                                            \
    GSHMEMI_HD void gshmem_##NAME##_put(T *dest, const T *src, size_t n, int pe) {           \
        GSHMEMI_PICK(gshmemi_dev_##NAME##_put(dest, src, n, pe),                             \
                     gshmemi_host_putmem(dest, src, n * sizeof(T), pe));                     \
    }                                                                                        \
    GSHMEMI_HD void gshmem_##NAME##_put_nbi(T *dest, const T *src, size_t n, int pe) {       \
        GSHMEMI_PICK(gshmemi_dev_##NAME##_put_nbi(dest, src, n, pe),                         \
                     gshmemi_host_putmem(dest, src, n * sizeof(T), pe));                     \
    }                                                                                        \
    GSHMEMI_HD void gshmem_##NAME##_get(T *dest, const T *src, size_t n, int pe) {           \
        GSHMEMI_PICK(gshmemi_dev_##NAME##_get(dest, src, n, pe),                             \
                     gshmemi_host_getmem(dest, src, n * sizeof(T), pe));                     \
    }                                                                                        \
    GSHMEMI_HD void gshmem_##NAME##_get_nbi(T *dest, const T *src, size_t n, int pe) {       \
        GSHMEMI_PICK(gshmemi_dev_##NAME##_get_nbi(dest, src, n, pe),                         \
                     gshmemi_host_getmem(dest, src, n * sizeof(T), pe));                     \
    }                                                                                        \
    GSHMEMI_HD void gshmem_##NAME##_p(T *dest, T value, int pe) {                            \
        GSHMEMI_PICK(gshmemi_dev_##NAME##_p(dest, value, pe),                                \
                     gshmemi_host_putmem(dest, &value, sizeof(T), pe));                      \
    }                                                                                        \
    GSHMEMI_HD T gshmem_##NAME##_g(const T *src, int pe) {                                   \
        T v_;                                                                                \
        GSHMEMI_PICK(v_ = gshmemi_dev_##NAME##_g(src, pe),                                   \
                     gshmemi_host_getmem(&v_, src, sizeof(T), pe));                          \
        return v_;                                                                           \
    }                                                                                        \
    GSHMEMI_HD void gshmem_##NAME##_iput(T *dest, const T *src, ptrdiff_t dst, ptrdiff_t sst, \
                                         size_t n, int pe) {                                 \
        GSHMEMI_PICK(gshmemi_dev_##NAME##_iput(dest, src, dst, sst, n, pe),                  \
                     gshmemi_host_iput(dest, src, dst, sst, n, sizeof(T), pe,                \
                                       "gshmem_" #NAME "_iput"));                            \
    }                                                                                        \
    GSHMEMI_HD void gshmem_##NAME##_iget(T *dest, const T *src, ptrdiff_t dst, ptrdiff_t sst, \
                                         size_t n, int pe) {                                 \
        GSHMEMI_PICK(gshmemi_dev_##NAME##_iget(dest, src, dst, sst, n, pe),                  \
                     gshmemi_host_iget(dest, src, dst, sst, n, sizeof(T), pe,                \
                                       "gshmem_" #NAME "_iget"));                            \
    }                                                                                        \
    GSHMEMI_HD void gshmem_##NAME##_put_signal(T *dest, const T *src, size_t n, uint64_t *sig, \
                                               uint64_t signal, int sig_op, int pe) {        \
        GSHMEMI_PICK(gshmemi_dev_##NAME##_put_signal(dest, src, n, sig, signal, sig_op, pe), \
                     gshmemi_host_put_signal(dest, src, n * sizeof(T), sig, signal, sig_op,  \
                                             pe, "gshmem_" #NAME "_put_signal"));            \
    }                                                                                        \
    GSHMEMI_HD void gshmem_##NAME##_put_signal_nbi(T *dest, const T *src, size_t n,          \
                                                   uint64_t *sig, uint64_t signal, int sig_op, \
                                                   int pe) {                                 \
        GSHMEMI_PICK(gshmemi_dev_##NAME##_put_signal_nbi(dest, src, n, sig, signal, sig_op, pe), \
                     gshmemi_host_put_signal(dest, src, n * sizeof(T), sig, signal, sig_op,  \
                                             pe, "gshmem_" #NAME "_put_signal_nbi"));        \
    }
GSHMEM_RMA_TYPES(GSHMEMI_HD_TYPED)

/* Sized forms: put8 ... put128 and their nbi, strided and signal variants. */
#define GSHMEMI_HD_SIZED(BITS)                                                               \
    GSHMEMI_HD void gshmem_put##BITS(void *d, const void *s, size_t n, int pe) {             \
        GSHMEMI_PICK(gshmemi_dev_put##BITS(d, s, n, pe), gshmemi_host_putmem(d, s, n * (BITS / 8), pe)); \
    }                                                                                        \
    GSHMEMI_HD void gshmem_get##BITS(void *d, const void *s, size_t n, int pe) {             \
        GSHMEMI_PICK(gshmemi_dev_get##BITS(d, s, n, pe), gshmemi_host_getmem(d, s, n * (BITS / 8), pe)); \
    }                                                                                        \
    GSHMEMI_HD void gshmem_put##BITS##_nbi(void *d, const void *s, size_t n, int pe) {       \
        GSHMEMI_PICK(gshmemi_dev_put##BITS##_nbi(d, s, n, pe), gshmemi_host_putmem(d, s, n * (BITS / 8), pe)); \
    }                                                                                        \
    GSHMEMI_HD void gshmem_get##BITS##_nbi(void *d, const void *s, size_t n, int pe) {       \
        GSHMEMI_PICK(gshmemi_dev_get##BITS##_nbi(d, s, n, pe), gshmemi_host_getmem(d, s, n * (BITS / 8), pe)); \
    }                                                                                        \
    GSHMEMI_HD void gshmem_iput##BITS(void *d, const void *s, ptrdiff_t dst, ptrdiff_t sst,  \
                                      size_t n, int pe) {                                    \
        GSHMEMI_PICK(gshmemi_dev_iput##BITS(d, s, dst, sst, n, pe),                          \
                     gshmemi_host_iput(d, s, dst, sst, n, BITS / 8, pe, "gshmem_iput" #BITS)); \
    }                                                                                        \
    GSHMEMI_HD void gshmem_iget##BITS(void *d, const void *s, ptrdiff_t dst, ptrdiff_t sst,  \
                                      size_t n, int pe) {                                    \
        GSHMEMI_PICK(gshmemi_dev_iget##BITS(d, s, dst, sst, n, pe),                          \
                     gshmemi_host_iget(d, s, dst, sst, n, BITS / 8, pe, "gshmem_iget" #BITS)); \
    }                                                                                        \
    GSHMEMI_HD void gshmem_put##BITS##_signal(void *d, const void *s, size_t n, uint64_t *sig, \
                                              uint64_t signal, int sig_op, int pe) {         \
        GSHMEMI_PICK(gshmemi_dev_put##BITS##_signal(d, s, n, sig, signal, sig_op, pe),       \
                     gshmemi_host_put_signal(d, s, n * (BITS / 8), sig, signal, sig_op, pe,  \
                                             "gshmem_put" #BITS "_signal"));                 \
    }                                                                                        \
    GSHMEMI_HD void gshmem_put##BITS##_signal_nbi(void *d, const void *s, size_t n,          \
                                                  uint64_t *sig, uint64_t signal, int sig_op, \
                                                  int pe) {                                  \
        GSHMEMI_PICK(gshmemi_dev_put##BITS##_signal_nbi(d, s, n, sig, signal, sig_op, pe),   \
                     gshmemi_host_put_signal(d, s, n * (BITS / 8), sig, signal, sig_op, pe,  \
                                             "gshmem_put" #BITS "_signal_nbi"));             \
    }
GSHMEM_SIZED_BITS(GSHMEMI_HD_SIZED)

/* ---- signals ---------------------------------------------------------------------------- */
GSHMEMI_HD void gshmem_putmem_signal(void *dest, const void *src, size_t nbytes, uint64_t *sig,
                                     uint64_t signal, int sig_op, int pe) {
    GSHMEMI_PICK(gshmemi_dev_putmem_signal(dest, src, nbytes, sig, signal, sig_op, pe),
                 gshmemi_host_put_signal(dest, src, nbytes, sig, signal, sig_op, pe,
                                         "gshmem_putmem_signal"));
}
GSHMEMI_HD void gshmem_putmem_signal_nbi(void *dest, const void *src, size_t nbytes, uint64_t *sig,
                                         uint64_t signal, int sig_op, int pe) {
    GSHMEMI_PICK(gshmemi_dev_putmem_signal_nbi(dest, src, nbytes, sig, signal, sig_op, pe),
                 gshmemi_host_put_signal(dest, src, nbytes, sig, signal, sig_op, pe,
                                         "gshmem_putmem_signal_nbi"));
}
GSHMEMI_HD void gshmemx_signal_op(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) {
    GSHMEMI_PICK(gshmemi_dev_signal_op(sig_addr, signal, sig_op, pe),
                 gshmemi_host_amo(sig_op == GSHMEM_SIGNAL_ADD ? GSHMEMI_AMO_ADD
                                  : sig_op == GSHMEM_SIGNAL_SET ? GSHMEMI_AMO_SET : -1,
                                  sig_addr, sizeof(uint64_t), &signal, &signal, NULL, pe,
                                  "gshmemx_signal_op"));
}
GSHMEMI_HD uint64_t gshmem_signal_fetch(const uint64_t *sig_addr) {
    uint64_t v_ = 0;
    GSHMEMI_PICK(v_ = gshmemi_dev_signal_fetch(sig_addr),
                 gshmemi_host_amo(GSHMEMI_AMO_FETCH, (void *)sig_addr, sizeof(uint64_t), &v_, &v_,
                                  &v_, gshmemi_host_my_pe(), "gshmem_signal_fetch"));
    return v_;
}
GSHMEMI_HD uint64_t gshmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t value) {
    uint64_t v_ = 0;
    GSHMEMI_PICK(v_ = gshmemi_dev_signal_wait_until(sig_addr, cmp, value),
                 gshmemi_host_wait_set(GSHMEMI_WAIT_ALL, 1, sig_addr, 1, sizeof(uint64_t), 0, NULL,
                                       cmp, NULL, &value, NULL, &v_, "gshmem_signal_wait_until"));
    return v_;
}

/* ---- atomics ---------------------------------------------------------------------------- */
/* Host forms: one tiny kernel; the value, condition and result travel by address. */
#define GSHMEMI_HOST_AMO(OPC, NAME, fn, dest, value, cond, result)                           \
    gshmemi_host_amo(OPC, (void *)(dest), sizeof(*(dest)), &(value), &(cond), result, pe,    \
                     "gshmem_" #NAME "_atomic_" #fn)
#define GSHMEMI_HD_AMO_EXT(NAME, T)                                                          \
    GSHMEMI_HD T gshmem_##NAME##_atomic_fetch(const T *source, int pe) {                     \
        T r_ = 0;                                                                            \
        GSHMEMI_PICK(r_ = gshmemi_dev_##NAME##_atomic_fetch(source, pe),                     \
                     GSHMEMI_HOST_AMO(GSHMEMI_AMO_FETCH, NAME, fetch, source, r_, r_, &r_)); \
        return r_;                                                                           \
    }                                                                                        \
    GSHMEMI_HD void gshmem_##NAME##_atomic_set(T *dest, T value, int pe) {                   \
        GSHMEMI_PICK(gshmemi_dev_##NAME##_atomic_set(dest, value, pe),                       \
                     GSHMEMI_HOST_AMO(GSHMEMI_AMO_SET, NAME, set, dest, value, value, NULL)); \
    }                                                                                        \
    GSHMEMI_HD T gshmem_##NAME##_atomic_swap(T *dest, T value, int pe) {                     \
        T r_ = 0;                                                                            \
        GSHMEMI_PICK(r_ = gshmemi_dev_##NAME##_atomic_swap(dest, value, pe),                 \
                     GSHMEMI_HOST_AMO(GSHMEMI_AMO_SWAP, NAME, swap, dest, value, value, &r_)); \
        return r_;                                                                           \
    }                                                                                        \
    GSHMEMI_HD void gshmem_##NAME##_atomic_fetch_nbi(T *fetch, const T *source, int pe) {    \
        *fetch = gshmem_##NAME##_atomic_fetch(source, pe);                                   \
    }                                                                                        \
    GSHMEMI_HD void gshmem_##NAME##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe) {    \
        *fetch = gshmem_##NAME##_atomic_swap(dest, value, pe);                               \
    }
GSHMEM_AMO_EXT_TYPES(GSHMEMI_HD_AMO_EXT)

#define GSHMEMI_HD_AMO_STD(NAME, T)                                                          \
    GSHMEMI_HD T gshmem_##NAME##_atomic_compare_swap(T *dest, T cond, T value, int pe) {     \
        T r_ = 0;                                                                            \
        GSHMEMI_PICK(r_ = gshmemi_dev_##NAME##_atomic_compare_swap(dest, cond, value, pe),   \
                     GSHMEMI_HOST_AMO(GSHMEMI_AMO_CSWAP, NAME, compare_swap, dest, value, cond, &r_)); \
        return r_;                                                                           \
    }                                                                                        \
    GSHMEMI_HD T gshmem_##NAME##_atomic_fetch_add(T *dest, T value, int pe) {                \
        T r_ = 0;                                                                            \
        GSHMEMI_PICK(r_ = gshmemi_dev_##NAME##_atomic_fetch_add(dest, value, pe),            \
                     GSHMEMI_HOST_AMO(GSHMEMI_AMO_ADD, NAME, fetch_add, dest, value, value, &r_)); \
        return r_;                                                                           \
    }                                                                                        \
    GSHMEMI_HD T gshmem_##NAME##_atomic_fetch_inc(T *dest, int pe) {                         \
        return gshmem_##NAME##_atomic_fetch_add(dest, (T)1, pe);                             \
    }                                                                                        \
    GSHMEMI_HD void gshmem_##NAME##_atomic_add(T *dest, T value, int pe) {                   \
        GSHMEMI_PICK(gshmemi_dev_##NAME##_atomic_add(dest, value, pe),                       \
                     GSHMEMI_HOST_AMO(GSHMEMI_AMO_ADD, NAME, add, dest, value, value, NULL)); \
    }                                                                                        \
    GSHMEMI_HD void gshmem_##NAME##_atomic_inc(T *dest, int pe) {                            \
        gshmem_##NAME##_atomic_add(dest, (T)1, pe);                                          \
    }                                                                                        \
    GSHMEMI_HD void gshmem_##NAME##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, \
                                                            int pe) {                        \
        *fetch = gshmem_##NAME##_atomic_compare_swap(dest, cond, value, pe);                 \
    }                                                                                        \
    GSHMEMI_HD void gshmem_##NAME##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe) { \
        *fetch = gshmem_##NAME##_atomic_fetch_add(dest, value, pe);                          \
    }                                                                                        \
    GSHMEMI_HD void gshmem_##NAME##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe) {        \
        *fetch = gshmem_##NAME##_atomic_fetch_add(dest, (T)1, pe);                           \
    }
GSHMEM_AMO_STD_TYPES(GSHMEMI_HD_AMO_STD)

#define GSHMEMI_HD_AMO_BIT_OP(NAME, T, op, OPC)                                              \
    GSHMEMI_HD T gshmem_##NAME##_atomic_fetch_##op(T *dest, T value, int pe) {               \
        T r_ = 0;                                                                            \
        GSHMEMI_PICK(r_ = gshmemi_dev_##NAME##_atomic_fetch_##op(dest, value, pe),           \
                     GSHMEMI_HOST_AMO(OPC, NAME, fetch_##op, dest, value, value, &r_));      \
        return r_;                                                                           \
    }                                                                                        \
    GSHMEMI_HD void gshmem_##NAME##_atomic_##op(T *dest, T value, int pe) {                  \
        GSHMEMI_PICK(gshmemi_dev_##NAME##_atomic_##op(dest, value, pe),                      \
                     GSHMEMI_HOST_AMO(OPC, NAME, op, dest, value, value, NULL));             \
    }                                                                                        \
    GSHMEMI_HD void gshmem_##NAME##_atomic_fetch_##op##_nbi(T *fetch, T *dest, T value, int pe) { \
        *fetch = gshmem_##NAME##_atomic_fetch_##op(dest, value, pe);                         \
    }
#define GSHMEMI_HD_AMO_BIT(NAME, T)                                                          \
    GSHMEMI_HD_AMO_BIT_OP(NAME, T, and, GSHMEMI_AMO_AND)                                     \
    GSHMEMI_HD_AMO_BIT_OP(NAME, T, or, GSHMEMI_AMO_OR)                                       \
    GSHMEMI_HD_AMO_BIT_OP(NAME, T, xor, GSHMEMI_AMO_XOR)
GSHMEM_AMO_BIT_TYPES(GSHMEMI_HD_AMO_BIT)

/* ---- point-to-point synchronization ----------------------------------------------------- */
/* Host forms block (poll this PE's copy, with the same deadline as device waits). */
#define GSHMEMI_SIGNED(T) (!((T)-1 > (T)0))
#define GSHMEMI_HOST_WAIT(mode, wait, ivars, n, status, cmp, values, valp, indices, NAME, fn) \
    gshmemi_host_wait_set(mode, wait, ivars, n, sizeof(*(ivars)), GSHMEMI_SIGNED(__typeof__(*(ivars))), \
                          status, cmp, values, valp, indices, NULL, "gshmem_" #NAME "_" #fn)
#define GSHMEMI_HD_WAIT(NAME, T)                                                             \
    GSHMEMI_HD void gshmem_##NAME##_wait_until(T *ivar, int cmp, T value) {                  \
        GSHMEMI_PICK(gshmemi_dev_##NAME##_wait_until(ivar, cmp, value),                      \
                     GSHMEMI_HOST_WAIT(GSHMEMI_WAIT_ALL, 1, ivar, 1, NULL, cmp, NULL, &value, \
                                       NULL, NAME, wait_until));                             \
    }                                                                                        \
    GSHMEMI_HD int gshmem_##NAME##_test(T *ivar, int cmp, T value) {                         \
        return GSHMEMI_PICK(gshmemi_dev_##NAME##_test(ivar, cmp, value),                     \
                            (int)GSHMEMI_HOST_WAIT(GSHMEMI_WAIT_ALL, 0, ivar, 1, NULL, cmp,  \
                                                   NULL, &value, NULL, NAME, test));         \
    }                                                                                        \
    GSHMEMI_HD void gshmem_##NAME##_wait_until_all(T *ivars, size_t n, const int *status,    \
                                                   int cmp, T value) {                       \
        GSHMEMI_PICK(gshmemi_dev_##NAME##_wait_until_all(ivars, n, status, cmp, value),      \
                     GSHMEMI_HOST_WAIT(GSHMEMI_WAIT_ALL, 1, ivars, n, status, cmp, NULL, &value, \
                                       NULL, NAME, wait_until_all));                         \
    }                                                                                        \
    GSHMEMI_HD size_t gshmem_##NAME##_wait_until_any(T *ivars, size_t n, const int *status,  \
                                                     int cmp, T value) {                     \
        return GSHMEMI_PICK(gshmemi_dev_##NAME##_wait_until_any(ivars, n, status, cmp, value), \
                            GSHMEMI_HOST_WAIT(GSHMEMI_WAIT_ANY, 1, ivars, n, status, cmp, NULL, \
                                              &value, NULL, NAME, wait_until_any));          \
    }                                                                                        \
    GSHMEMI_HD size_t gshmem_##NAME##_wait_until_some(T *ivars, size_t n, size_t *indices,   \
                                                      const int *status, int cmp, T value) { \
        return GSHMEMI_PICK(gshmemi_dev_##NAME##_wait_until_some(ivars, n, indices, status,  \
                                                                 cmp, value),                \
                            GSHMEMI_HOST_WAIT(GSHMEMI_WAIT_SOME, 1, ivars, n, status, cmp, NULL, \
                                              &value, indices, NAME, wait_until_some));      \
    }                                                                                        \
    GSHMEMI_HD void gshmem_##NAME##_wait_until_all_vector(T *ivars, size_t n, const int *status, \
                                                          int cmp, T *values) {              \
        GSHMEMI_PICK(gshmemi_dev_##NAME##_wait_until_all_vector(ivars, n, status, cmp, values), \
                     GSHMEMI_HOST_WAIT(GSHMEMI_WAIT_ALL, 1, ivars, n, status, cmp, values, NULL, \
                                       NULL, NAME, wait_until_all_vector));                  \
    }                                                                                        \
    GSHMEMI_HD size_t gshmem_##NAME##_wait_until_any_vector(T *ivars, size_t n,              \
                                                            const int *status, int cmp,      \
                                                            T *values) {                     \
        return GSHMEMI_PICK(gshmemi_dev_##NAME##_wait_until_any_vector(ivars, n, status, cmp, \
                                                                       values),              \
                            GSHMEMI_HOST_WAIT(GSHMEMI_WAIT_ANY, 1, ivars, n, status, cmp, values, \
                                              NULL, NULL, NAME, wait_until_any_vector));     \
    }                                                                                        \
    GSHMEMI_HD size_t gshmem_##NAME##_wait_until_some_vector(T *ivars, size_t n, size_t *indices, \
                                                             const int *status, int cmp,     \
                                                             T *values) {                    \
        return GSHMEMI_PICK(gshmemi_dev_##NAME##_wait_until_some_vector(ivars, n, indices,   \
                                                                        status, cmp, values), \
                            GSHMEMI_HOST_WAIT(GSHMEMI_WAIT_SOME, 1, ivars, n, status, cmp,   \
                                              values, NULL, indices, NAME,                   \
                                              wait_until_some_vector));                      \
    }                                                                                        \
    GSHMEMI_HD int gshmem_##NAME##_test_all(T *ivars, size_t n, const int *status, int cmp,  \
                                            T value) {                                       \
        return GSHMEMI_PICK(gshmemi_dev_##NAME##_test_all(ivars, n, status, cmp, value),     \
                            (int)GSHMEMI_HOST_WAIT(GSHMEMI_WAIT_ALL, 0, ivars, n, status, cmp, \
                                                   NULL, &value, NULL, NAME, test_all));     \
    }                                                                                        \
    GSHMEMI_HD size_t gshmem_##NAME##_test_any(T *ivars, size_t n, const int *status, int cmp, \
                                               T value) {                                    \
        return GSHMEMI_PICK(gshmemi_dev_##NAME##_test_any(ivars, n, status, cmp, value),     \
                            GSHMEMI_HOST_WAIT(GSHMEMI_WAIT_ANY, 0, ivars, n, status, cmp, NULL, \
                                              &value, NULL, NAME, test_any));                \
    }                                                                                        \
    GSHMEMI_HD size_t gshmem_##NAME##_test_some(T *ivars, size_t n, size_t *indices,         \
                                                const int *status, int cmp, T value) {       \
        return GSHMEMI_PICK(gshmemi_dev_##NAME##_test_some(ivars, n, indices, status, cmp,   \
                                                           value),                           \
                            GSHMEMI_HOST_WAIT(GSHMEMI_WAIT_SOME, 0, ivars, n, status, cmp, NULL, \
                                              &value, indices, NAME, test_some));            \
    }                                                                                        \
    GSHMEMI_HD int gshmem_##NAME##_test_all_vector(T *ivars, size_t n, const int *status,    \
                                                   int cmp, T *values) {                     \
        return GSHMEMI_PICK(gshmemi_dev_##NAME##_test_all_vector(ivars, n, status, cmp, values), \
                            (int)GSHMEMI_HOST_WAIT(GSHMEMI_WAIT_ALL, 0, ivars, n, status, cmp, \
                                                   values, NULL, NULL, NAME, test_all_vector)); \
    }                                                                                        \
    GSHMEMI_HD size_t gshmem_##NAME##_test_any_vector(T *ivars, size_t n, const int *status, \
                                                      int cmp, T *values) {                  \
        return GSHMEMI_PICK(gshmemi_dev_##NAME##_test_any_vector(ivars, n, status, cmp, values), \
                            GSHMEMI_HOST_WAIT(GSHMEMI_WAIT_ANY, 0, ivars, n, status, cmp, values, \
                                              NULL, NULL, NAME, test_any_vector));           \
    }                                                                                        \
    GSHMEMI_HD size_t gshmem_##NAME##_test_some_vector(T *ivars, size_t n, size_t *indices,  \
                                                       const int *status, int cmp, T *values) { \
        return GSHMEMI_PICK(gshmemi_dev_##NAME##_test_some_vector(ivars, n, indices, status, \
                                                                  cmp, values),              \
                            GSHMEMI_HOST_WAIT(GSHMEMI_WAIT_SOME, 0, ivars, n, status, cmp,   \
                                              values, NULL, indices, NAME, test_some_vector)); \
    }
GSHMEM_P2P_SYNC_TYPES(GSHMEMI_HD_WAIT)

GSHMEMI_HD void gshmem_pe_quiet(const int *target_pes, size_t npes) {
    GSHMEMI_PICK(gshmemi_dev_pe_quiet(target_pes, npes), gshmemi_host_pe_quiet(target_pes, npes));
}

#include "gshmem/coll_api.h"

#endif
