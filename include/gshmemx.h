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
struct CUmod_st;                                /* CUmodule */
struct CUlib_st;                                /* CUlibrary */

/* Unique-id bootstrap for processes started by someone else (torchrun-style). The process
 * that will be PE 0 calls gshmemx_get_uniqueid, shares the bytes by its own means, and
 * every process calls gshmemx_init_attr with its rank, n_pes and that id. The id holds a
 * random secret: connections that do not present it are refused. Returns a status. */
GSHMEM_EXPORT int gshmemx_get_uniqueid(gshmemx_uniqueid_t *uid);
GSHMEM_EXPORT int gshmemx_init_attr(const gshmemx_init_attr_t *attr);
/* Collective init chosen by flags (NVSHMEM's nvshmemx_init_attr semantics): 0, as gshmem_init
 * (gshmrun, PMIx or alone); GSHMEMX_INIT_WITH_UNIQUEID, as gshmemx_init_attr(attr);
 * GSHMEMX_INIT_WITH_MPI_COMM, over the MPI communicator *mpi_comm (an MPI_Comm*, NULL for
 * MPI_COMM_WORLD) of the program's Open MPI or MPICH-family library, initialized beforehand:
 * the PEs are its ranks in order. Returns a status instead of exiting. */
GSHMEM_EXPORT int gshmemx_init_flags(unsigned int flags, const gshmemx_init_attr_t *attr,
                                     const void *mpi_comm);
/* The text of a status (GSHMEM_SUCCESS, GSHMEM_ERR_*): "invalid argument", ... */
GSHMEM_EXPORT const char *gshmemx_status_str(int status);

/* Kernels loaded at run time through the driver (cuModuleLoad*, cuLibraryLoad*: cubins,
 * NVRTC, cupy RawModule) have no constructor to receive gshmem's device state (a .cu file
 * linked into the program does: gshmem/device/state.h). Register such a module or library
 * once it is loaded, before or after gshmem_init: it gets the state now (zeroed before init,
 * so its calls fail with a message until then) and whenever the state changes, until
 * finalize, which must precede cuModuleUnload / cuLibraryUnload. The module must have been
 * compiled with the same gshmem headers. Return a status. */
GSHMEM_EXPORT int gshmemx_cumodule_init(struct CUmod_st *module);
GSHMEM_EXPORT int gshmemx_cumodule_finalize(struct CUmod_st *module);
GSHMEM_EXPORT int gshmemx_culibrary_init(struct CUlib_st *library);
GSHMEM_EXPORT int gshmemx_culibrary_finalize(struct CUlib_st *library);

/* A user's buffer made symmetric (collective): every PE passes its own CUDA VMM allocation
 * (cuMemCreate with CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, cuMemMap; buf its start) of the
 * same size, a multiple of its granularity; the result is one address, the same on every PE,
 * where gshmem maps that memory inside its symmetric window: use it with every call as
 * gshmem_malloc's memory (it aliases buf). flags must be 0. NULL after a message when a PE's
 * buffer does not qualify, or when PEs of other nodes take part (only the heap crosses nodes).
 * Unregister (collective, with the returned address and the same size) before freeing buf. */
GSHMEM_EXPORT void *gshmemx_buffer_register_symmetric(void *buf, size_t size, int flags);
GSHMEM_EXPORT int gshmemx_buffer_unregister_symmetric(void *ptr, size_t size);
/* A buffer of this PE alone that calls use as their local side (source of a put, dest of a
 * get): device memory of this PE's GPU or host memory (pinned here if it is not). Registration
 * is never required for load/store peers; it is kept for programs that register, and it is
 * checked: overlapping registrations and symmetric memory are refused. Return a status. */
GSHMEM_EXPORT int gshmemx_buffer_register(void *addr, size_t length);
GSHMEM_EXPORT int gshmemx_buffer_unregister(void *addr);
GSHMEM_EXPORT void gshmemx_buffer_unregister_all(void);

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

/* The rest of the on-stream RMA (NVSHMEM's nvshmemx_*_on_stream families): each is enqueued on
 * `stream` like gshmemx_putmem_on_stream. The _nbi forms are the same calls (an on-stream call
 * never blocks the host); p reads `value` at the call; g waits for the stream and returns the
 * value; iput/iget move nelems elements with strides dst/sst (in elements); put_signal sets or
 * adds the signal after the data (release). Each is a libgshmem function (GSHMEMI_HOST_FN). */
#define GSHMEMI_STREAM_RMA_FN(STEM, ES, get)                                                 \
    GSHMEMI_HOST_FN(void, gshmemx_##STEM##_on_stream,                                        \
                    (void *dest, const void *source, size_t nelems, int pe,                  \
                     gshmemx_stream_t stream),                                               \
                    gshmemi_stream_rma(get, dest, source, nelems * (ES), pe, stream,         \
                                       "gshmemx_" #STEM "_on_stream");)
#define GSHMEMI_STREAM_STRIDED_FN(STEM, ES, get)                                             \
    GSHMEMI_HOST_FN(void, gshmemx_##STEM##_on_stream,                                        \
                    (void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                     int pe, gshmemx_stream_t stream),                                       \
                    gshmemi_stream_strided(get, dest, source, dst, sst, nelems, ES, pe, stream, \
                                           "gshmemx_" #STEM "_on_stream");)
#define GSHMEMI_STREAM_SIGNAL_FN(STEM, ES)                                                   \
    GSHMEMI_HOST_FN(void, gshmemx_##STEM##_on_stream,                                        \
                    (void *dest, const void *source, size_t nelems, uint64_t *sig_addr,      \
                     uint64_t signal, int sig_op, int pe, gshmemx_stream_t stream),          \
                    gshmemi_stream_put_signal(dest, source, nelems * (ES), sig_addr, signal, \
                                              sig_op, pe, stream, "gshmemx_" #STEM "_on_stream");)
/* typed: X(NAME, T) */
#define GSHMEMI_STREAM_TYPED_RMA(NAME, T, op, suffix, get)                                   \
    GSHMEMI_HOST_FN(void, gshmemx_##NAME##_##op##suffix##_on_stream,                         \
                    (T *dest, const T *source, size_t nelems, int pe, gshmemx_stream_t stream), \
                    gshmemi_stream_rma(get, dest, source, nelems * sizeof(T), pe, stream,    \
                                       "gshmemx_" #NAME "_" #op #suffix "_on_stream");)
#define GSHMEMI_STREAM_TYPED(NAME, T)                                                        \
    GSHMEMI_STREAM_TYPED_RMA(NAME, T, put, , 0)                                              \
    GSHMEMI_STREAM_TYPED_RMA(NAME, T, put, _nbi, 0)                                          \
    GSHMEMI_STREAM_TYPED_RMA(NAME, T, get, , 1)                                              \
    GSHMEMI_STREAM_TYPED_RMA(NAME, T, get, _nbi, 1)                                          \
    GSHMEMI_HOST_FN(void, gshmemx_##NAME##_p_on_stream,                                      \
                    (T *dest, const T value, int pe, gshmemx_stream_t stream),               \
                    gshmemi_stream_p(dest, &value, sizeof(T), pe, stream,                    \
                                     "gshmemx_" #NAME "_p_on_stream");)                      \
    GSHMEMI_HOST_FN(T, gshmemx_##NAME##_g_on_stream,                                         \
                    (const T *source, int pe, gshmemx_stream_t stream),                      \
                    T v_ = 0;                                                                \
                    gshmemi_stream_g(&v_, source, sizeof(T), pe, stream,                     \
                                     "gshmemx_" #NAME "_g_on_stream");                       \
                    return v_;)                                                              \
    GSHMEMI_HOST_FN(void, gshmemx_##NAME##_iput_on_stream,                                   \
                    (T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,  \
                     int pe, gshmemx_stream_t stream),                                       \
                    gshmemi_stream_strided(0, dest, source, dst, sst, nelems, sizeof(T), pe, \
                                           stream, "gshmemx_" #NAME "_iput_on_stream");)     \
    GSHMEMI_HOST_FN(void, gshmemx_##NAME##_iget_on_stream,                                   \
                    (T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,  \
                     int pe, gshmemx_stream_t stream),                                       \
                    gshmemi_stream_strided(1, dest, source, dst, sst, nelems, sizeof(T), pe, \
                                           stream, "gshmemx_" #NAME "_iget_on_stream");)     \
    GSHMEMI_HOST_FN(void, gshmemx_##NAME##_put_signal_on_stream,                             \
                    (T *dest, const T *source, size_t nelems, uint64_t *sig_addr,            \
                     uint64_t signal, int sig_op, int pe, gshmemx_stream_t stream),          \
                    gshmemi_stream_put_signal(dest, source, nelems * sizeof(T), sig_addr, signal, \
                                              sig_op, pe, stream,                            \
                                              "gshmemx_" #NAME "_put_signal_on_stream");)    \
    GSHMEMI_HOST_FN(void, gshmemx_##NAME##_put_signal_nbi_on_stream,                         \
                    (T *dest, const T *source, size_t nelems, uint64_t *sig_addr,            \
                     uint64_t signal, int sig_op, int pe, gshmemx_stream_t stream),          \
                    gshmemi_stream_put_signal(dest, source, nelems * sizeof(T), sig_addr, signal, \
                                              sig_op, pe, stream,                            \
                                              "gshmemx_" #NAME "_put_signal_nbi_on_stream");)
GSHMEM_RMA_TYPES(GSHMEMI_STREAM_TYPED)
/* sized (put8 ... put128) and bytes (putmem): X(BITS) */
#define GSHMEMI_STREAM_SIZED(BITS)                                                           \
    GSHMEMI_STREAM_RMA_FN(put##BITS, BITS / 8, 0)                                            \
    GSHMEMI_STREAM_RMA_FN(put##BITS##_nbi, BITS / 8, 0)                                      \
    GSHMEMI_STREAM_RMA_FN(get##BITS, BITS / 8, 1)                                            \
    GSHMEMI_STREAM_RMA_FN(get##BITS##_nbi, BITS / 8, 1)                                      \
    GSHMEMI_STREAM_STRIDED_FN(iput##BITS, BITS / 8, 0)                                       \
    GSHMEMI_STREAM_STRIDED_FN(iget##BITS, BITS / 8, 1)                                       \
    GSHMEMI_STREAM_SIGNAL_FN(put##BITS##_signal, BITS / 8)                                   \
    GSHMEMI_STREAM_SIGNAL_FN(put##BITS##_signal_nbi, BITS / 8)
GSHMEM_SIZED_BITS(GSHMEMI_STREAM_SIZED)
GSHMEMI_STREAM_RMA_FN(putmem_nbi, 1, 0)
GSHMEMI_STREAM_RMA_FN(getmem_nbi, 1, 1)
GSHMEMI_STREAM_SIGNAL_FN(putmem_signal_nbi, 1)

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
