/* gshmem extensions: unique-id init, on-stream host calls, heap figures. The scoped device
 * calls (gshmemx_*_warp / _block) are defined in gshmem/device/ and reach .cu files through
 * gshmem.h. */
#ifndef GSHMEMX_H
#define GSHMEMX_H

#include <stddef.h>
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

#ifdef __cplusplus
}
#endif
#endif
