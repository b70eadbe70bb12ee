// What the collective kernels' translation units share (coll_ops.cu: moves and the launchers'
// entry points; coll_reduce.cu, built once per element type: reductions; coll_xnode.cu: teams
// across nodes): the launch helpers, the plan they take (src/team/plan.h), the names
// device-side messages give, and the storage types.
#ifndef GSHMEMI_COLL_KERNELS_CUH
#define GSHMEMI_COLL_KERNELS_CUH
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include "launch.cuh"
#include "src/team/plan.h"

// Every storage type an OpenSHMEM reduction name maps to: X(KIND, T, NAME). NAME is the
// suffix of the per-type entry point; src/meson.build builds coll_reduce.cu for each row
// (keep the two lists equal: a missing row is an undefined symbol at link time). The signed
// rows compile min and max only: the other operators give the same bits as the unsigned type
// of their width and run its kernels (coll_reduce.cu).
#define GSHMEMI_REDUCE_STORAGE_TYPES(X)                                                      \
    X(UINT, uint8_t, u8) X(UINT, uint16_t, u16) X(UINT, uint32_t, u32) X(UINT, uint64_t, u64) \
    X(SINT, int8_t, s8) X(SINT, int16_t, s16) X(SINT, int32_t, s32) X(SINT, int64_t, s64)     \
    X(FLOAT, float, f32) X(FLOAT, double, f64) X(FLOAT, __half, f16) X(BF16, __nv_bfloat16, bf16)

#define GSHMEMI_DECLARE_REDUCE(KIND, T, NAME)                                                \
    extern "C" int gshmemi_launch_reduce_##NAME(int op, void *stream, gshmemi_coll_plan p,    \
                                                const void *te, int what, int team, void *dest, \
                                                const void *src, size_t n);
GSHMEMI_REDUCE_STORAGE_TYPES(GSHMEMI_DECLARE_REDUCE)
#undef GSHMEMI_DECLARE_REDUCE

// The collectives of a team whose members span nodes (coll_xnode*.cu), for plans of
// GSHMEMI_ALGO_XNODE: gshmemi_launch_move and _reduce hand those on.
extern "C" int gshmemi_launch_xnode_move(void *stream, gshmemi_coll_plan p, const void *te, int what,
                                         int team, void *dest, const void *src, size_t n, size_t es,
                                         int root, ptrdiff_t dst, ptrdiff_t sst);
extern "C" int gshmemi_launch_xnode_reduce(void *stream, gshmemi_coll_plan p, const void *te, int what,
                                           int op, int type_code, int team, void *dest,
                                           const void *src, size_t n);

__device__ static const char *gshmemi_reduce_name(int what) {
    switch (what) {
    case GSHMEMI_COLL_REDUCE: return "reduce (host/on-stream form)";
    case GSHMEMI_COLL_REDUCESCATTER: return "reducescatter (host/on-stream form)";
    case GSHMEMI_COLL_REDUCE_ALLREAD: return "reduce (host/on-stream form, all-read)";
    case GSHMEMI_COLL_REDUCE_PUSH: return "reduce (host/on-stream form, push)";
    case GSHMEMI_COLL_INSCAN: return "sum_inscan (host/on-stream form)";
    default: return "sum_exscan (host/on-stream form)";
    }
}

__device__ static const char *gshmemi_move_name(int what) {
    switch (what) {
    case GSHMEMI_MOVE_BROADCAST: return "broadcast (host/on-stream form)";
    case GSHMEMI_MOVE_FCOLLECT: return "fcollect (host/on-stream form)";
    case GSHMEMI_MOVE_COLLECT: return "collect (host/on-stream form)";
    case GSHMEMI_MOVE_ALLTOALL: return "alltoall (host/on-stream form)";
    default: return "alltoalls (host/on-stream form)";
    }
}

#endif
