/* One benchmark source, two libraries: the bench_* names below map to gshmem by default and
 * to NVIDIA NVSHMEM when compiled with -DBENCH_NVSHMEM (tools/gpu-run.sh does both, so the
 * same kernels are timed for each). Only calls both libraries have are used. */
#ifndef GSHMEM_BENCH_SHIM_H
#define GSHMEM_BENCH_SHIM_H

#ifdef BENCH_NVSHMEM
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BENCH_LIB "nvshmem"
#define bench_my_pe nvshmem_my_pe
#define bench_n_pes nvshmem_n_pes
#define bench_malloc nvshmem_malloc
#define bench_calloc nvshmem_calloc
#define bench_free nvshmem_free
#define bench_barrier_all nvshmem_barrier_all
#define bench_barrier_all_block nvshmemx_barrier_all_block
#define bench_barrier_all_on_stream nvshmemx_barrier_all_on_stream
#define bench_finalize nvshmem_finalize
#define bench_long_p nvshmem_long_p
#define bench_long_g nvshmem_long_g
#define bench_long_wait_eq(ivar, v) nvshmem_long_wait_until(ivar, NVSHMEM_CMP_EQ, v)
#define bench_putmem nvshmem_putmem
#define bench_putmem_warp nvshmemx_putmem_warp
#define bench_putmem_block nvshmemx_putmem_block
#define bench_getmem_block nvshmemx_getmem_block
#define bench_putmem_nbi_block nvshmemx_putmem_nbi_block
#define bench_getmem_nbi_block nvshmemx_getmem_nbi_block
#define bench_quiet nvshmem_quiet
#define bench_ptr nvshmem_ptr
/* signals: uint64_t words, set or add */
#define BENCH_SIGNAL_SET NVSHMEM_SIGNAL_SET
#define BENCH_SIGNAL_ADD NVSHMEM_SIGNAL_ADD
#define BENCH_CMP_EQ NVSHMEM_CMP_EQ
#define BENCH_CMP_GE NVSHMEM_CMP_GE
#define bench_putmem_signal nvshmem_putmem_signal
#define bench_putmem_signal_block nvshmemx_putmem_signal_block
#define bench_signal_wait_until nvshmem_signal_wait_until
/* atomics */
#define bench_long_atomic_fetch_add nvshmem_long_atomic_fetch_add
#define bench_long_atomic_add nvshmem_long_atomic_add
/* collectives on a stream (bench/collectives.cu), float data, team argument first */
#define BENCH_TEAM_WORLD NVSHMEM_TEAM_WORLD
#define bench_float_sum_reduce_on_stream nvshmemx_float_sum_reduce_on_stream
#define bench_float_broadcast_on_stream nvshmemx_float_broadcast_on_stream
#define bench_float_fcollect_on_stream nvshmemx_float_fcollect_on_stream
#define bench_float_alltoall_on_stream nvshmemx_float_alltoall_on_stream
#define bench_float_sum_reducescatter_on_stream nvshmemx_float_sum_reducescatter_on_stream
/* nvshmem_global_exit can hang under the unique-id bootstrap; gshmrun ends the other PEs
 * once one exits non-zero */
static inline void bench_global_exit(int status) {
    fflush(stdout);
    fflush(stderr);
    _exit(status);
}
/* NVSHMEM has no block-scope quiet: gather the block, one thread quiets */
__device__ static inline void bench_quiet_block(void) {
    __syncthreads();
    if (threadIdx.x == 0) nvshmem_quiet();
    __syncthreads();
}

/* Started by gshmrun (GSHMEM_RANK/GSHMEM_NPES); the NVSHMEM unique id travels by a file
 * named after this job's gshmrun id. */
static inline void bench_init(void) {
    int rank = atoi(getenv("GSHMEM_RANK") ? getenv("GSHMEM_RANK") : "0");
    int n = atoi(getenv("GSHMEM_NPES") ? getenv("GSHMEM_NPES") : "1");
    int ngpu = 1;   /* round-robin over the GPUs, as gshmem places PEs */
    cudaGetDeviceCount(&ngpu);
    cudaSetDevice(rank % (ngpu > 0 ? ngpu : 1));
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    const char *job = getenv("GSHMEM_UID") ? strrchr(getenv("GSHMEM_UID"), ':') : NULL;
    char path[256], tmp[300];
    snprintf(path, sizeof path, "/tmp/nvshmem-uid-%s", job ? job + 1 : "x");
    if (rank == 0) {
        nvshmemx_get_uniqueid(&id);
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        FILE *f = fopen(tmp, "wb");
        if (!f || fwrite(&id, sizeof id, 1, f) != 1) { perror("uid file"); exit(1); }
        fclose(f);
        rename(tmp, path);
    } else {
        FILE *f = NULL;
        for (int i = 0; i < 3000 && !(f = fopen(path, "rb")); i++) usleep(10000);
        if (!f || fread(&id, sizeof id, 1, f) != 1) { fprintf(stderr, "no NVSHMEM uid file\n"); exit(1); }
        fclose(f);
    }
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    nvshmemx_set_attr_uniqueid_args(rank, n, &id, &attr);
    nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr);
    nvshmem_barrier_all();
    if (rank == 0) unlink(path);
}
#else
#include "gshmem.h"

#define BENCH_LIB "gshmem"
#define bench_my_pe gshmem_my_pe
#define bench_n_pes gshmem_n_pes
#define bench_malloc gshmem_malloc
#define bench_calloc gshmem_calloc
#define bench_free gshmem_free
#define bench_barrier_all gshmem_barrier_all
#define bench_barrier_all_block gshmemx_barrier_all_block
#define bench_barrier_all_on_stream gshmemx_barrier_all_on_stream
#define bench_finalize gshmem_finalize
#define bench_long_p gshmem_long_p
#define bench_long_g gshmem_long_g
#define bench_long_wait_eq(ivar, v) gshmem_long_wait_until(ivar, GSHMEM_CMP_EQ, v)
#define bench_putmem gshmem_putmem
#define bench_putmem_warp gshmemx_putmem_warp
#define bench_putmem_block gshmemx_putmem_block
#define bench_getmem_block gshmemx_getmem_block
#define bench_putmem_nbi_block gshmemx_putmem_nbi_block
#define bench_getmem_nbi_block gshmemx_getmem_nbi_block
#define bench_quiet gshmem_quiet
#define bench_ptr gshmem_ptr
#define BENCH_SIGNAL_SET GSHMEM_SIGNAL_SET
#define BENCH_SIGNAL_ADD GSHMEM_SIGNAL_ADD
#define BENCH_CMP_EQ GSHMEM_CMP_EQ
#define BENCH_CMP_GE GSHMEM_CMP_GE
#define bench_putmem_signal gshmem_putmem_signal
#define bench_putmem_signal_block gshmemx_putmem_signal_block
#define bench_signal_wait_until gshmem_signal_wait_until
#define bench_long_atomic_fetch_add gshmem_long_atomic_fetch_add
#define bench_long_atomic_add gshmem_long_atomic_add
#define bench_quiet_block gshmemx_quiet_block
#define bench_init gshmem_init
#define BENCH_TEAM_WORLD GSHMEM_TEAM_WORLD
#define bench_float_sum_reduce_on_stream gshmemx_float_sum_reduce_on_stream
#define bench_float_broadcast_on_stream gshmemx_float_broadcast_on_stream
#define bench_float_fcollect_on_stream gshmemx_float_fcollect_on_stream
#define bench_float_alltoall_on_stream gshmemx_float_alltoall_on_stream
#define bench_float_sum_reducescatter_on_stream gshmemx_float_sum_reducescatter_on_stream
#define bench_global_exit gshmem_global_exit
#endif

/* After bench_init, for the benchmarks that measure PE 0 <-> PE 1: false (and the library
 * finalized, a line said) unless the job has exactly 2 PEs. */
static inline bool bench_two_pes(const char *name) {
    if (bench_n_pes() == 2) return true;
    if (bench_my_pe() == 0) fprintf(stderr, "%s: run on exactly 2 PEs (gshmrun -n 2)\n", name);
    bench_finalize();
    return false;
}

#endif
