// Kernels behind host calls: barrier_all (host blocking and on-stream) and the host form of
// wait_until. Each is one tiny launch on the caller's stream, capturable in a CUDA graph;
// they use the same header-inline device code as user kernels (this file's own copy of
// the device state is registered like any user translation unit).
#include "gshmem.h"

extern "C" {
#include "internal.h"
}

// One warp: lanes split the flag stores and waits, so 32 PEs cost one round trip.
__global__ void gshmemi_barrier_all_kernel(void) { gshmemx_barrier_all_warp(); }

template <typename T>
__global__ void gshmemi_wait_kernel(T *ivar, int cmp, T value) {
    gshmemi_wait((const T *)ivar, cmp, value, "gshmem_wait_until (host)");
}

extern "C" int gshmemi_launch_barrier_all(void *stream) {
    gshmemi_barrier_all_kernel<<<1, 32, 0, (cudaStream_t)stream>>>();
    return (int)cudaGetLastError();
}

extern "C" int gshmemi_launch_wait_until(void *stream, void *ivar, size_t size, int cmp,
                                         uint64_t value, int is_signed) {
    cudaStream_t s = (cudaStream_t)stream;
    switch (size * 2 + (is_signed ? 1 : 0)) {
    case 2 * 2: gshmemi_wait_kernel<<<1, 1, 0, s>>>((uint16_t *)ivar, cmp, (uint16_t)value); break;
    case 2 * 2 + 1: gshmemi_wait_kernel<<<1, 1, 0, s>>>((int16_t *)ivar, cmp, (int16_t)value); break;
    case 4 * 2: gshmemi_wait_kernel<<<1, 1, 0, s>>>((uint32_t *)ivar, cmp, (uint32_t)value); break;
    case 4 * 2 + 1: gshmemi_wait_kernel<<<1, 1, 0, s>>>((int32_t *)ivar, cmp, (int32_t)value); break;
    case 8 * 2: gshmemi_wait_kernel<<<1, 1, 0, s>>>((uint64_t *)ivar, cmp, (uint64_t)value); break;
    case 8 * 2 + 1: gshmemi_wait_kernel<<<1, 1, 0, s>>>((int64_t *)ivar, cmp, (int64_t)value); break;
    default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
