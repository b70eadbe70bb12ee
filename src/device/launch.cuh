// Kernel launch shared by the kernels behind host calls.
#ifndef GSHMEMI_LAUNCH_CUH
#define GSHMEMI_LAUNCH_CUH
#include <atomic>
#include <mutex>
#include <stdint.h>
#include <cuda.h>
#include <cuda_runtime.h>
extern "C" {
#include "kernels.h"
}

// Each kernel's CUfunction, looked up once (cudaGetFuncBySymbol) and then found by its host
// pointer without a lock: the runtime's own launch path looks the kernel up on every call, and
// launching through the driver with the handle cached costs less host time per call (bench/
// probe_sync launch: 3.2 against 4.0 us per back-to-back barrier launch, docs/performance.md).
// Entries are written once, under the lock, function first, key last.
struct gshmemi_fn_entry {
    std::atomic<const void *> key;
    CUfunction fn;
};
static gshmemi_fn_entry gshmemi_fn_cache[1024];
static std::mutex gshmemi_fn_lock;

static CUfunction gshmemi_fn_of(const void *k) {
    const size_t mask = sizeof gshmemi_fn_cache / sizeof gshmemi_fn_cache[0] - 1;
    size_t h = ((uintptr_t)k >> 4) & mask;
    for (size_t probe = 0; probe <= mask; probe++, h = (h + 1) & mask) {
        const void *key = gshmemi_fn_cache[h].key.load(std::memory_order_acquire);
        if (key == k) return gshmemi_fn_cache[h].fn;
        if (key) continue;
        std::lock_guard<std::mutex> g(gshmemi_fn_lock);
        key = gshmemi_fn_cache[h].key.load(std::memory_order_acquire);
        if (key == k) return gshmemi_fn_cache[h].fn;
        if (key) continue;   // taken meanwhile by another kernel: probe on
        cudaFunction_t f;
        if (cudaGetFuncBySymbol(&f, k) != cudaSuccess) {
            (void)cudaGetLastError();
            return NULL;
        }
        gshmemi_fn_cache[h].fn = (CUfunction)f;
        gshmemi_fn_cache[h].key.store(k, std::memory_order_release);
        return (CUfunction)f;
    }
    return NULL;   // table full: the runtime launches
}

// Launch with programmatic stream serialization when `pdl` (launch_k: GSHMEM_COLL_PDL, default on): the kernel
// may be scheduled while the previous one on the stream finishes; it waits in
// gshmemi_pdl_enter. Allowed in stream capture (the graph keeps a programmatic edge). Through
// the driver with the cached CUfunction; any driver failure (no context current on this thread,
// a handle from another context) launches again through the runtime, which gives the error
// code and message the callers report.
template <typename... P>
static int launch_exact(void (*k)(P...), int grid, int block, void *stream, bool pdl, P... args) {
    CUlaunchAttribute dat[1];
    dat[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    dat[0].value.programmaticStreamSerializationAllowed = 1;
    if (CUfunction f = gshmemi_fn_of((const void *)k)) {
        CUlaunchConfig dc = {};
        dc.gridDimX = (unsigned)grid;
        dc.gridDimY = dc.gridDimZ = 1;
        dc.blockDimX = (unsigned)block;
        dc.blockDimY = dc.blockDimZ = 1;
        dc.hStream = (CUstream)stream;
        dc.attrs = dat;
        dc.numAttrs = pdl ? 1 : 0;
        void *params[] = {(void *)&args..., NULL};
        if (cuLaunchKernelEx(&dc, f, params, NULL) == CUDA_SUCCESS) return 0;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(block);
    cfg.stream = (cudaStream_t)stream;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at;
    cfg.numAttrs = pdl ? 1 : 0;
    return (int)cudaLaunchKernelEx(&cfg, k, args...);
}
// The arguments converted to the kernel's parameter types first (the driver takes their
// addresses as they are).
template <typename... P, typename... A>
static int launch_k(void (*k)(P...), int grid, int block, void *stream, A... args) {
    return launch_exact<P...>(k, grid, block, stream, gshmemi_cfg.COLL_PDL, static_cast<P>(args)...);
}
// Without programmatic dependent launch: for a kernel that must also wait for work the stream
// waits on through an event (only the kernel-to-kernel edge is meant to be relaxed).
template <typename... P, typename... A>
static int launch_k_serial(void (*k)(P...), int grid, int block, void *stream, A... args) {
    return launch_exact<P...>(k, grid, block, stream, false, static_cast<P>(args)...);
}

#endif
