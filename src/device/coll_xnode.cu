// Collective kernels of teams whose members span nodes (gshmem/device/coll/xnode.h): built
// with device calls to other nodes (GSHMEM_REMOTE=1, src/meson.build), one block each (the
// network, not the SMs, bounds them). This file holds the movers; coll_xnode_reduce.cu, built
// once per storage type like coll_reduce.cu, the reductions.
#include "gshmem.h"
#include "coll_kernels.cuh"

#if !GSHMEM_REMOTE
#error "build with -DGSHMEM_REMOTE=1 (src/meson.build does)"
#endif

__global__ void __launch_bounds__(GSHMEMI_XNODE_THREADS) gshmemi_xnode_move_kernel(
    gshmemi_team t, int what, int team, void *dest, const void *src, size_t n, size_t es, int root,
    ptrdiff_t dst, ptrdiff_t sst, int algo) {
    gshmemi_pdl_enter();
    gshmemi_xnode_move<gshmemi_scope_block>(&t, team, what, dest, src, n, es, root, dst, sst, algo,
                                            gshmemi_move_name(what));
}

extern "C" int gshmemi_launch_xnode_move(void *stream, gshmemi_coll_plan p, const void *team_entry,
                                         int what, int team, void *dest, const void *src, size_t n,
                                         size_t es, int root, ptrdiff_t dst, ptrdiff_t sst) {
    return launch_k(gshmemi_xnode_move_kernel, p.nch, p.threads, stream,
                    *(const gshmemi_team *)team_entry, what, team, dest, src, n, es, root, dst, sst, p.xalgo);
}

// Reductions by storage type (GSHMEMI_TYPE_CODE), each in coll_xnode_reduce.cu's unit of its type.
#define GSHMEMI_TC(KIND, T, NAME)                                                            \
    case GSHMEMI_KIND_##KIND * 16 + (int)sizeof(T):                                          \
        return gshmemi_launch_xnode_reduce_##NAME(op, stream, p, te, what, team, dest, src, n);
extern "C" int gshmemi_launch_xnode_reduce(void *stream, gshmemi_coll_plan p, const void *te, int what,
                                           int op, int type_code, int team, void *dest,
                                           const void *src, size_t n) {
    switch (type_code) {
        GSHMEMI_REDUCE_STORAGE_TYPES(GSHMEMI_TC)
    default: return (int)cudaErrorInvalidValue;
    }
}
#undef GSHMEMI_TC
