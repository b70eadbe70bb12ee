// Kernels behind host calls: barrier_all and team_sync (host blocking and on-stream), host
// atomics, signal updates, the on-stream waits and the on-stream forms to remote PEs. Built
// with GSHMEM_REMOTE=1 (src/meson.build): these reach PEs of other nodes through the proxy. Each is one tiny launch on the caller's stream,
// capturable in a CUDA graph; they use the same header-inline device code as user kernels
// (this file's own copy of the device state is registered like any user translation unit).
// Pointers arrive already translated to this PE's mapping of the target.
#include "gshmem.h"
#include "launch.cuh"

extern "C" {
#include "kernels.h"
}
#include "src/team/plan.h"

// One warp: lanes split the flag stores and waits, so 32 PEs cost one round trip. No fence
// before the arrival: this kernel has written nothing, and the stream's earlier work is
// performed once gshmemi_pdl_enter returns (gshmemi_count_round, FENCE false).
__global__ void gshmemi_barrier_all_kernel(void) {
    gshmemi_pdl_enter();
    gshmemi_barrier_all_t<gshmemi_scope_warp, false>("gshmem_barrier_all (host/on-stream form)");
}

template <typename U>
__global__ void gshmemi_amo_kernel(int op, U *p, U value, U cond, uint64_t *out) {
    U r = gshmemi_apply_amo(op, p, value, cond);   /* (gshmem/device/amo.h) */
    if (out) *(volatile uint64_t *)out = r;
}


__global__ void gshmemi_signal_kernel(uint64_t *p, uint64_t value, int sig_op, int release) {
    if (release) gshmemi_signal_release(p, value, sig_op);
    else gshmemi_signal_relaxed(p, value, sig_op);
}

template <typename T>
__global__ void gshmemi_wait_all_kernel(const T *ivars, size_t n, const int *status, int cmp,
                                        const T *values, T value) {
    gshmemi_wait_set<GSHMEMI_WAIT_ALL, true>(ivars, n, status, cmp, values, value, (size_t *)0,
                                             "gshmemx_wait_until_on_stream");
}

// The on-stream forms to a remote PE: the device calls themselves (they route to the ring).
__global__ void gshmemi_remote_kernel(int what, void *sym, const void *local, size_t n, uint64_t *sig,
                                      uint64_t value, int sig_op, int pe) {
    switch (what) {
    case GSHMEMI_REMOTE_PUT:
        gshmemi_put<gshmemi_scope_thread, true>(sym, local, n, pe, "gshmemx_putmem_on_stream");
        break;
    case GSHMEMI_REMOTE_GET:
        gshmemi_get<gshmemi_scope_thread, true>((void *)local, sym, n, pe, "gshmemx_getmem_on_stream");
        break;
    case GSHMEMI_REMOTE_PUT_SIGNAL:
        gshmemi_put_signal<gshmemi_scope_thread, true>(sym, local, n, sig, value, sig_op, pe,
                                                       "gshmemx_putmem_signal_on_stream");
        break;
    case GSHMEMI_REMOTE_SIGNAL:
        gshmemi_dev_signal_op(sig, value, sig_op, pe);
        break;
    default:
        gshmemi_dev_quiet();
        break;
    }
}

extern "C" int gshmemi_launch_remote(void *stream, int what, void *sym, const void *local, size_t n,
                                     uint64_t *sig, uint64_t value, int sig_op, int pe) {
    gshmemi_remote_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(what, sym, local, n, sig, value, sig_op, pe);
    return (int)cudaGetLastError();
}

// A p on a stream (gshmemx_TYPE_p_on_stream): the value travels as the kernel's argument, so
// the host's copy may change at once and the launch is capturable; the device p of the
// value's size routes it (load/store or the PE's remote channel).
__global__ void gshmemi_p_kernel(void *dest, uint64_t v, int size, int pe) {
    switch (size) {
    case 1: gshmem_uint8_p((uint8_t *)dest, (uint8_t)v, pe); break;
    case 2: gshmem_uint16_p((uint16_t *)dest, (uint16_t)v, pe); break;
    case 4: gshmem_uint32_p((uint32_t *)dest, (uint32_t)v, pe); break;
    default: gshmem_uint64_p((uint64_t *)dest, v, pe); break;
    }
}
extern "C" int gshmemi_launch_p(void *stream, void *dest, uint64_t value, int size, int pe) {
    if (size != 1 && size != 2 && size != 4 && size != 8) return (int)cudaErrorInvalidValue;
    gshmemi_p_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(dest, value, size, pe);
    return (int)cudaGetLastError();
}

// The team's entry comes by value (the host's copy): the first flag store does not wait
// behind loads from the team table.
__global__ void gshmemi_team_sync_kernel(gshmemi_team t) {
    gshmemi_pdl_enter();
    gshmemi_team_sync_t<gshmemi_scope_warp, false>(&t, "gshmem_team_sync (host/on-stream form)");
}
extern "C" int gshmemi_launch_team_sync(void *stream, gshmemi_coll_plan p, const void *team_entry) {
    return launch_k(gshmemi_team_sync_kernel, p.nch, p.threads, stream,
                    *(const gshmemi_team *)team_entry);
}

extern "C" int gshmemi_launch_barrier_all(void *stream) {
    return launch_k(gshmemi_barrier_all_kernel, 1, 32, stream);
}

extern "C" int gshmemi_launch_amo(void *stream, int op, size_t size, void *p, uint64_t value,
                                  uint64_t cond, uint64_t *out) {
    cudaStream_t s = (cudaStream_t)stream;
    if (size == 4)
        gshmemi_amo_kernel<<<1, 1, 0, s>>>(op, (uint32_t *)p, (uint32_t)value, (uint32_t)cond, out);
    else
        gshmemi_amo_kernel<<<1, 1, 0, s>>>(op, (uint64_t *)p, value, cond, out);
    return (int)cudaGetLastError();
}

extern "C" int gshmemi_launch_signal(void *stream, uint64_t *p, uint64_t value, int sig_op,
                                     int release) {
    gshmemi_signal_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(p, value, sig_op, release);
    return (int)cudaGetLastError();
}

template <typename T>
static void launch_wait(cudaStream_t s, void *ivars, size_t n, const int *status, int cmp,
                        const void *values, uint64_t value) {
    gshmemi_wait_all_kernel<T><<<1, 1, 0, s>>>((const T *)ivars, n, status, cmp, (const T *)values,
                                               (T)value);
}

extern "C" int gshmemi_launch_wait_all(void *stream, void *ivars, size_t n, size_t size,
                                       int is_signed, const int *status, int cmp,
                                       const void *values, uint64_t value) {
    cudaStream_t s = (cudaStream_t)stream;
    switch (size * 2 + (is_signed ? 1 : 0)) {
    case 2 * 2: launch_wait<uint16_t>(s, ivars, n, status, cmp, values, value); break;
    case 2 * 2 + 1: launch_wait<int16_t>(s, ivars, n, status, cmp, values, value); break;
    case 4 * 2: launch_wait<uint32_t>(s, ivars, n, status, cmp, values, value); break;
    case 4 * 2 + 1: launch_wait<int32_t>(s, ivars, n, status, cmp, values, value); break;
    case 8 * 2: launch_wait<uint64_t>(s, ivars, n, status, cmp, values, value); break;
    case 8 * 2 + 1: launch_wait<int64_t>(s, ivars, n, status, cmp, values, value); break;
    default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
