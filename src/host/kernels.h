/* The kernels the host side launches (src/device/stream_ops.cu): barrier, atomics, signals,
 * waits and the on-stream forms to remote PEs. Each entry point returns a cudaError_t;
 * pointers are already translated to this PE's mapping. The team syncs and collectives take
 * a plan: src/team/plan.h. src/device's launch helpers (launch.cuh) include this header for
 * these declarations and for what they read of the host side: the configuration
 * (GSHMEM_COLL_PDL) and, in a file that includes <cuda.h> first, the driver's table. */
#ifndef GSHMEMI_KERNELS_H
#define GSHMEMI_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#if defined(CUDA_VERSION) && !defined(GSHMEMI_NO_CUDA)
#include "cuda_driver.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

int gshmemi_launch_barrier_all(void *stream);
/* One atomic (GSHMEMI_AMO_*) of 4 or 8 bytes at p; the old value goes to *out (device-
 * accessible, may be NULL). */
int gshmemi_launch_amo(void *stream, int op, size_t size, void *p, uint64_t value, uint64_t cond,
                       uint64_t *out);
/* The on-stream forms to a remote PE: a one-thread kernel makes the device call (which posts
 * to the PE's remote channel and, for PUT/GET/PUT_SIGNAL, waits until it completed).
 * sym: the symmetric address on pe; local: this PE's buffer. */
enum { GSHMEMI_REMOTE_PUT, GSHMEMI_REMOTE_GET, GSHMEMI_REMOTE_PUT_SIGNAL, GSHMEMI_REMOTE_SIGNAL,
       GSHMEMI_REMOTE_QUIET };
int gshmemi_launch_remote(void *stream, int what, void *sym, const void *local, size_t n,
                          uint64_t *sig, uint64_t value, int sig_op, int pe);
/* One store of `size` (1, 2, 4, 8) bytes of value to symmetric dest on pe, by the device p
 * (dest untranslated: the kernel routes it). */
int gshmemi_launch_p(void *stream, void *dest, uint64_t value, int size, int pe);
/* Signal update at p: release (after earlier stream work's data) or relaxed. */
int gshmemi_launch_signal(void *stream, uint64_t *p, uint64_t value, int sig_op, int release);
/* Waits until every included ivars[i] (size bytes, signedness) satisfies cmp against
 * values[i] or value. */
int gshmemi_launch_wait_all(void *stream, void *ivars, size_t n, size_t size, int is_signed,
                            const int *status, int cmp, const void *values, uint64_t value);

#ifdef __cplusplus
}
#endif

#endif
