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
void gshmemi_host_wait_until(void *ivar, size_t size, int cmp, uint64_t value, int is_signed);
int gshmemi_host_test(void *ivar, size_t size, int cmp, uint64_t value, int is_signed);

#ifdef __cplusplus
}
#endif

#include "gshmemx.h"

/* ---- the calls defined for both sides ------------------------------------------------ */
#ifdef __CUDACC__
#include "gshmem/device/rma.h"
#include "gshmem/device/sync.h"
#define GSHMEMI_HD static __host__ __device__ __forceinline__
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
    }
GSHMEM_RMA_TYPES(GSHMEMI_HD_TYPED)

#define GSHMEMI_HD_SIZED(BITS, T)                                                            \
    GSHMEMI_HD void gshmem_put##BITS(void *d, const void *s, size_t n, int pe) {             \
        GSHMEMI_PICK(gshmemi_dev_put##BITS(d, s, n, pe), gshmemi_host_putmem(d, s, n * sizeof(T), pe)); \
    }                                                                                        \
    GSHMEMI_HD void gshmem_get##BITS(void *d, const void *s, size_t n, int pe) {             \
        GSHMEMI_PICK(gshmemi_dev_get##BITS(d, s, n, pe), gshmemi_host_getmem(d, s, n * sizeof(T), pe)); \
    }                                                                                        \
    GSHMEMI_HD void gshmem_put##BITS##_nbi(void *d, const void *s, size_t n, int pe) {       \
        GSHMEMI_PICK(gshmemi_dev_put##BITS##_nbi(d, s, n, pe), gshmemi_host_putmem(d, s, n * sizeof(T), pe)); \
    }                                                                                        \
    GSHMEMI_HD void gshmem_get##BITS##_nbi(void *d, const void *s, size_t n, int pe) {       \
        GSHMEMI_PICK(gshmemi_dev_get##BITS##_nbi(d, s, n, pe), gshmemi_host_getmem(d, s, n * sizeof(T), pe)); \
    }
GSHMEM_SIZED_TYPES(GSHMEMI_HD_SIZED)

/* wait_until / test. On the host, wait_until blocks until the condition holds on this PE's
 * copy (a small kernel watches it, with the same deadline as device waits). */
#define GSHMEMI_HD_WAIT(NAME, T)                                                             \
    GSHMEMI_HD void gshmem_##NAME##_wait_until(T *ivar, int cmp, T value) {                  \
        GSHMEMI_PICK(gshmemi_dev_##NAME##_wait_until(ivar, cmp, value),                      \
                     gshmemi_host_wait_until(ivar, sizeof(T), cmp, (uint64_t)value,          \
                                             !((T)-1 > (T)0)));                                 \
    }                                                                                        \
    GSHMEMI_HD int gshmem_##NAME##_test(T *ivar, int cmp, T value) {                         \
        return GSHMEMI_PICK(gshmemi_dev_##NAME##_test(ivar, cmp, value),                     \
                            gshmemi_host_test(ivar, sizeof(T), cmp, (uint64_t)value,         \
                                              !((T)-1 > (T)0)));                             \
    }
GSHMEM_P2P_SYNC_TYPES(GSHMEMI_HD_WAIT)

#endif
