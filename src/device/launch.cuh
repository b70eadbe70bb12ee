// Kernel launch shared by the kernels behind host calls.
#ifndef GSHMEMI_LAUNCH_CUH
#define GSHMEMI_LAUNCH_CUH
#include <cuda_runtime.h>
extern "C" {
#include "internal.h"
}

// Launch with programmatic stream serialization (GSHMEM_COLL_PDL, default on): the kernel
// may be scheduled while the previous one on the stream finishes; it waits in
// gshmemi_pdl_enter. Allowed in stream capture (the graph keeps a programmatic edge).
template <typename... P, typename... A>
static int launch_k(void (*k)(P...), int grid, int block, void *stream, A... args) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(block);
    cfg.stream = (cudaStream_t)stream;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at;
    cfg.numAttrs = gshmemi_cfg.COLL_PDL ? 1 : 0;
    return (int)cudaLaunchKernelEx(&cfg, k, args...);
}

#endif
