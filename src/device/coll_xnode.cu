// Collective kernels of teams whose members span nodes (gshmem/device/coll/xnode.h), one block
// each (the network, not the SMs, bounds them), with every cross-node algorithm (the device
// forms in user kernels take the lean one: coll/api.h). The reductions take their operator at
// run time (coll/xops.h): one kernel per storage class, not per type and operator.
#include "gshmem.h"
#include "coll_kernels.cuh"

__global__ void __launch_bounds__(GSHMEMI_XNODE_THREADS) gshmemi_xnode_move_kernel(
    gshmemi_team t, int what, int team, void *dest, const void *src, size_t n, size_t es, int root,
    ptrdiff_t dst, ptrdiff_t sst, int algo) {
    gshmemi_pdl_enter();
    gshmemi_xnode_move<gshmemi_scope_block, true>(&t, team, what, dest, src, n, es, root, dst, sst, algo,
                                                  gshmemi_move_name(what));
}

extern "C" int gshmemi_launch_xnode_move(void *stream, gshmemi_coll_plan p, const void *team_entry,
                                         int what, int team, void *dest, const void *src, size_t n,
                                         size_t es, int root, ptrdiff_t dst, ptrdiff_t sst) {
    return launch_k(gshmemi_xnode_move_kernel, p.nch, p.threads, stream,
                    *(const gshmemi_team *)team_entry, what, team, dest, src, n, es, root, dst, sst, p.xalgo);
}

template <class C>
__global__ void __launch_bounds__(GSHMEMI_XNODE_THREADS) gshmemi_xnode_reduce_kernel(
    gshmemi_team t, int what, int team, typename C::T *dest, const typename C::T *src, size_t n, int algo,
    gshmemi_rk rk) {
    gshmemi_pdl_enter();
    gshmemi_xnode_reduce_c<C, gshmemi_scope_block, 4, true>(&t, team, what, dest, src, n, algo, rk,
                                                            gshmemi_reduce_name(what));
}

template <class C>
static int launch_xreduce(void *stream, gshmemi_coll_plan p, const void *te, int what, int team, void *dest,
                          const void *src, size_t n, gshmemi_rk rk) {
    typedef typename C::T T;
    return launch_k(gshmemi_xnode_reduce_kernel<C>, p.nch, p.threads, stream, *(const gshmemi_team *)te, what,
                    team, (T *)dest, (const T *)src, n, p.xalgo, rk);
}

// Reductions by storage type (GSHMEMI_TYPE_CODE): the integers by width (signedness travels
// with the operator), the floats by format.
extern "C" int gshmemi_launch_xnode_reduce(void *stream, gshmemi_coll_plan p, const void *te, int what,
                                           int op, int type_code, int team, void *dest,
                                           const void *src, size_t n) {
    const gshmemi_rk rk{op, type_code / 16 == GSHMEMI_KIND_SINT};
    switch (type_code) {
    case GSHMEMI_KIND_UINT * 16 + 1:
    case GSHMEMI_KIND_SINT * 16 + 1: return launch_xreduce<gshmemi_xc_int<uint8_t>>(stream, p, te, what, team, dest, src, n, rk);
    case GSHMEMI_KIND_UINT * 16 + 2:
    case GSHMEMI_KIND_SINT * 16 + 2: return launch_xreduce<gshmemi_xc_int<uint16_t>>(stream, p, te, what, team, dest, src, n, rk);
    case GSHMEMI_KIND_UINT * 16 + 4:
    case GSHMEMI_KIND_SINT * 16 + 4: return launch_xreduce<gshmemi_xc_int<uint32_t>>(stream, p, te, what, team, dest, src, n, rk);
    case GSHMEMI_KIND_UINT * 16 + 8:
    case GSHMEMI_KIND_SINT * 16 + 8: return launch_xreduce<gshmemi_xc_int<uint64_t>>(stream, p, te, what, team, dest, src, n, rk);
    case GSHMEMI_KIND_FLOAT * 16 + 4: return launch_xreduce<gshmemi_xc_float<float>>(stream, p, te, what, team, dest, src, n, rk);
    case GSHMEMI_KIND_FLOAT * 16 + 8: return launch_xreduce<gshmemi_xc_float<double>>(stream, p, te, what, team, dest, src, n, rk);
    case GSHMEMI_KIND_FLOAT * 16 + 2: return launch_xreduce<gshmemi_xc_half>(stream, p, te, what, team, dest, src, n, rk);
    case GSHMEMI_KIND_BF16 * 16 + 2: return launch_xreduce<gshmemi_xc_bf16>(stream, p, te, what, team, dest, src, n, rk);
    default: return (int)cudaErrorInvalidValue;
    }
}
