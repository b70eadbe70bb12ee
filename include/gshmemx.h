/* gshmem extensions: unique-id init, on-stream host calls, heap figures. The scoped device
 * calls (gshmemx_*_warp / _block) are defined in gshmem/device/ and reach .cu files through
 * gshmem.h. */
#ifndef GSHMEMX_H
#define GSHMEMX_H

#include <stddef.h>
#include <stdint.h>
#include "gshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CUstream_st *gshmemx_stream_t;  /* same type as cudaStream_t */

/* Unique-id bootstrap for processes started by someone else (torchrun-style). The process
 * that will be PE 0 calls gshmemx_get_uniqueid, shares the bytes by its own means, and
 * every process calls gshmemx_init_attr with its rank, n_pes and that id. The id holds a
 * random secret: connections that do not present it are refused. Returns a status. */
int gshmemx_get_uniqueid(gshmemx_uniqueid_t *uid);
int gshmemx_init_attr(const gshmemx_init_attr_t *attr);

/* Heap figures: base, reserved, mapped, in use, internal. */
int gshmemx_heap_info(gshmemx_heap_info_t *info);
/* This PE's GPU, the PEs sharing it, MPS, and the SM share its spinning kernels may use. */
int gshmemx_get_placement(gshmemx_placement_info_t *info);
/* Seconds gshmem_init took on this PE (from entry to return). */
double gshmemx_init_seconds(void);

/* On-stream forms: enqueued on `stream`, ordered with the stream's other work, capturable
 * in a CUDA graph. */
void gshmemx_putmem_on_stream(void *dest, const void *src, size_t nbytes, int pe,
                              gshmemx_stream_t stream);
void gshmemx_getmem_on_stream(void *dest, const void *src, size_t nbytes, int pe,
                              gshmemx_stream_t stream);
void gshmemx_quiet_on_stream(gshmemx_stream_t stream);
void gshmemx_barrier_all_on_stream(gshmemx_stream_t stream);

/* Signals on a stream: the copy, then the signal (release) in stream order. */
void gshmemx_putmem_signal_on_stream(void *dest, const void *src, size_t nbytes,
                                     uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                                     gshmemx_stream_t stream);
void gshmemx_signal_op_on_stream(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                                 gshmemx_stream_t stream);
void gshmemx_signal_wait_until_on_stream(uint64_t *sig_addr, int cmp, uint64_t cmp_value,
                                         gshmemx_stream_t stream);

/* Waits on a stream: later work on `stream` starts once the condition holds on this PE.
 * status and values must be device-accessible (device, pinned or managed memory). */
void gshmemi_stream_wait(void *ivars, size_t n, size_t size, int is_signed, const int *status,
                         int cmp, const void *values, uint64_t value, gshmemx_stream_t stream,
                         const char *call);
#define GSHMEMI_STREAM_WAIT(NAME, T)                                                         \
    static inline void gshmemx_##NAME##_wait_until_on_stream(T *ivar, int cmp, T value,      \
                                                             gshmemx_stream_t stream) {      \
        gshmemi_stream_wait(ivar, 1, sizeof(T), !((T)-1 > (T)0), NULL, cmp, NULL,            \
                            (uint64_t)value, stream, "gshmemx_" #NAME "_wait_until_on_stream"); \
    }                                                                                        \
    static inline void gshmemx_##NAME##_wait_until_all_on_stream(                            \
        T *ivars, size_t nelems, const int *status, int cmp, T value, gshmemx_stream_t stream) { \
        gshmemi_stream_wait(ivars, nelems, sizeof(T), !((T)-1 > (T)0), status, cmp, NULL,    \
                            (uint64_t)value, stream, "gshmemx_" #NAME "_wait_until_all_on_stream"); \
    }                                                                                        \
    static inline void gshmemx_##NAME##_wait_until_all_vector_on_stream(                     \
        T *ivars, size_t nelems, const int *status, int cmp, T *values, gshmemx_stream_t stream) { \
        gshmemi_stream_wait(ivars, nelems, sizeof(T), !((T)-1 > (T)0), status, cmp, values, 0, \
                            stream, "gshmemx_" #NAME "_wait_until_all_vector_on_stream");    \
    }
GSHMEM_P2P_SYNC_TYPES(GSHMEMI_STREAM_WAIT)

#ifdef __cplusplus
}
#endif
#endif
