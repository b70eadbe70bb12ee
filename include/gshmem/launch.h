/* Collective launch: a kernel whose blocks wait for each other or for other PEs (device
 * barriers, block-scope collectives, spin-waits on signals) must have every block resident at
 * once, on every PE. gshmemx_collective_launch_query_gridsize says how many blocks of a kernel
 * fit at once on this PE's share of its GPU (gshmemx_get_placement's sm_share: all SMs for a
 * GPU of its own, 1/k of them for k PEs sharing one under MPS); gshmemx_collective_launch
 * launches at most that many, cooperatively where the GPU supports it. Both are inline: they
 * run in the calling program's CUDA runtime, the one that registered `func` (a runtime linked
 * statically into the program does not share its kernels with libgshmem's). gshmem.h
 * includes this header in CUDA C++; C and C++ host code include it themselves (it needs
 * cuda_runtime_api.h). Return GSHMEM_SUCCESS or a status after a message naming the call, the
 * PE and the argument. */
#ifndef GSHMEM_LAUNCH_H
#define GSHMEM_LAUNCH_H

#include <stdio.h>
#include <cuda_runtime_api.h>

#include "gshmem.h"

/* Blocks of `func` with `block` threads and `shmem` dynamic shared bytes that are resident at
 * once on this PE's SMs (0 when none fits); *cooperative: 1 when the GPU launches
 * cooperatively. */
static inline int gshmemi_launch_capacity(const char *call, const void *func, dim3 block,
                                          size_t shmem, int *capacity, int *cooperative) {
    gshmemx_placement_info_t pl;
    int st = gshmemx_get_placement(&pl);
    if (st != GSHMEM_SUCCESS) {
        fprintf(stderr, "gshmem: %s: called before gshmem_init; call gshmem_init() first\n", call);
        return st;
    }
    unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    int per_sm = 0;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, func, (int)threads, shmem);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(cooperative, cudaDevAttrCooperativeLaunch, pl.device);
    if (e != cudaSuccess) {
        fprintf(stderr, "gshmem PE %d: %s: cudaOccupancyMaxActiveBlocksPerMultiprocessor(func %p, "
                "%llu threads, %zu shared bytes) failed: %s (%s); func must be a __global__ "
                "function of this program\n", gshmem_my_pe(), call, func, threads, shmem,
                cudaGetErrorName(e), cudaGetErrorString(e));
        return GSHMEM_ERR_CUDA;
    }
    *capacity = per_sm * pl.sm_share;
    if (*capacity == 0) {
        fprintf(stderr, "gshmem PE %d: %s: not one block of %llu threads and %zu shared bytes of "
                "func %p fits on an SM (registers or shared memory); use smaller blocks\n",
                gshmem_my_pe(), call, threads, shmem, func);
        return GSHMEM_ERR_LAUNCH;
    }
    return GSHMEM_SUCCESS;
}

/* The largest grid (in blocks) gshmemx_collective_launch accepts for func, block and shmem. */
static inline int gshmemx_collective_launch_query_gridsize(const void *func, dim3 block,
                                                           void **args, size_t shmem,
                                                           int *gridsize) {
    const char *call = "gshmemx_collective_launch_query_gridsize";
    (void)args;
    if (!gridsize) {
        fprintf(stderr, "gshmem PE %d: %s: gridsize is NULL\n", gshmem_my_pe(), call);
        return GSHMEM_ERR_INVALID_ARG;
    }
    int coop = 0;
    *gridsize = 0;
    return gshmemi_launch_capacity(call, func, block, shmem, gridsize, &coop);
}

/* Launches func<<<grid, block, shmem, stream>>>(args) with every block resident at once;
 * GSHMEM_ERR_LAUNCH (nothing launched) when the grid is larger than that allows. Every PE
 * taking part launches its own (a collective launch is per PE, like the kernel's calls). */
static inline int gshmemx_collective_launch(const void *func, dim3 grid, dim3 block, void **args,
                                            size_t shmem, cudaStream_t stream) {
    const char *call = "gshmemx_collective_launch";
    int capacity = 0, coop = 0;
    int st = gshmemi_launch_capacity(call, func, block, shmem, &capacity, &coop);
    if (st != GSHMEM_SUCCESS) return st;
    unsigned long long blocks = (unsigned long long)grid.x * grid.y * grid.z;
    if (blocks == 0 || blocks > (unsigned long long)capacity) {
        fprintf(stderr, "gshmem PE %d: %s: a grid of %llu blocks (%u x %u x %u) cannot be resident "
                "at once: at most %d blocks of this kernel fit on this PE's SMs; launch at most "
                "gshmemx_collective_launch_query_gridsize's number\n", gshmem_my_pe(), call,
                blocks, grid.x, grid.y, grid.z, capacity);
        return GSHMEM_ERR_LAUNCH;
    }
    cudaError_t e = coop ? cudaLaunchCooperativeKernel(func, grid, block, args, shmem, stream)
                         : cudaLaunchKernel(func, grid, block, args, shmem, stream);
    if (e != cudaSuccess) {
        fprintf(stderr, "gshmem PE %d: %s: %s of %llu blocks of %u threads failed: %s (%s)\n",
                gshmem_my_pe(), call, coop ? "cudaLaunchCooperativeKernel" : "cudaLaunchKernel",
                blocks, block.x * block.y * block.z, cudaGetErrorName(e), cudaGetErrorString(e));
        return GSHMEM_ERR_LAUNCH;
    }
    return GSHMEM_SUCCESS;
}

#endif
