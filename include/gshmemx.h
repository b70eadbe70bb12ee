/* gshmem extensions: unique-id init, on-stream host calls, heap figures. The scoped device
 * calls (gshmemx_*_warp / _block) are defined in gshmem/device/ and reach .cu files through
 * gshmem.h. */
#ifndef GSHMEMX_H
#define GSHMEMX_H

#include <stddef.h>
#include <stdint.h>
#include "gshmem/types.h"
#include "gshmem/forms.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CUstream_st *gshmemx_stream_t;  /* same type as cudaStream_t */

/* Unique-id bootstrap for processes started by someone else (torchrun-style). The process
 * that will be PE 0 calls gshmemx_get_uniqueid, shares the bytes by its own means, and
 * every process calls gshmemx_init_attr with its rank, n_pes and that id. The id holds a
 * random secret: connections that do not present it are refused. Returns a status. */
GSHMEM_EXPORT int gshmemx_get_uniqueid(gshmemx_uniqueid_t *uid);
GSHMEM_EXPORT int gshmemx_init_attr(const gshmemx_init_attr_t *attr);

/* Heap figures: base, reserved, mapped, in use, internal. */
GSHMEM_EXPORT int gshmemx_heap_info(gshmemx_heap_info_t *info);
/* This PE's GPU, the PEs sharing it, MPS, and the SM share its spinning kernels may use. */
GSHMEM_EXPORT int gshmemx_get_placement(gshmemx_placement_info_t *info);
/* Seconds gshmem_init took on this PE (from entry to return). */
GSHMEM_EXPORT double gshmemx_init_seconds(void);

/* On-stream forms: enqueued on `stream`, ordered with the stream's other work, capturable
 * in a CUDA graph. */
GSHMEM_EXPORT void gshmemx_putmem_on_stream(void *dest, const void *src, size_t nbytes, int pe,
                                            gshmemx_stream_t stream);
GSHMEM_EXPORT void gshmemx_getmem_on_stream(void *dest, const void *src, size_t nbytes, int pe,
                                            gshmemx_stream_t stream);
GSHMEM_EXPORT void gshmemx_quiet_on_stream(gshmemx_stream_t stream);
GSHMEM_EXPORT void gshmemx_barrier_all_on_stream(gshmemx_stream_t stream);

/* Signals on a stream: the copy, then the signal (release) in stream order. */
GSHMEM_EXPORT void gshmemx_putmem_signal_on_stream(void *dest, const void *src, size_t nbytes,
                                                   uint64_t *sig_addr, uint64_t signal,
                                                   int sig_op, int pe, gshmemx_stream_t stream);
GSHMEM_EXPORT void gshmemx_signal_op_on_stream(uint64_t *sig_addr, uint64_t signal, int sig_op,
                                               int pe, gshmemx_stream_t stream);
GSHMEM_EXPORT void gshmemx_signal_wait_until_on_stream(uint64_t *sig_addr, int cmp,
                                                       uint64_t cmp_value,
                                                       gshmemx_stream_t stream);

/* Waits on a stream: later work on `stream` starts once the condition holds on this PE.
 * status and values must be device-accessible (device, pinned or managed memory). Each is a
 * libgshmem function (GSHMEMI_HOST_FN, gshmem/forms.h). */
#define GSHMEMI_STREAM_WAIT_FN(NAME, T, fn, PARAMS, ivars, n, status, values, value)         \
    GSHMEMI_HOST_FN(void, gshmemx_##NAME##_##fn##_on_stream, PARAMS,                         \
                    gshmemi_stream_wait(ivars, n, sizeof(T), !((T)-1 > (T)0), status, cmp, values, \
                                        value, stream, "gshmemx_" #NAME "_" #fn "_on_stream");)
#define GSHMEMI_STREAM_WAIT(NAME, T)                                                         \
    GSHMEMI_STREAM_WAIT_FN(NAME, T, wait_until,                                              \
                           (T *ivar, int cmp, T value, gshmemx_stream_t stream),             \
                           ivar, 1, NULL, NULL, (uint64_t)value)                             \
    GSHMEMI_STREAM_WAIT_FN(NAME, T, wait_until_all,                                          \
                           (T *ivars, size_t nelems, const int *status, int cmp, T value,    \
                            gshmemx_stream_t stream),                                        \
                           ivars, nelems, status, NULL, (uint64_t)value)                     \
    GSHMEMI_STREAM_WAIT_FN(NAME, T, wait_until_all_vector,                                   \
                           (T *ivars, size_t nelems, const int *status, int cmp, T *values,  \
                            gshmemx_stream_t stream),                                        \
                           ivars, nelems, status, values, 0)
GSHMEM_P2P_SYNC_TYPES(GSHMEMI_STREAM_WAIT)

#ifdef __cplusplus
}
#endif
#endif
