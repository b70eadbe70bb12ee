// Reduction kernels of teams whose members span nodes (gshmem/device/coll/xnode.h), for one
// element type: built once per storage type (-DGSHMEMI_REDUCE_T=... -DGSHMEMI_REDUCE_NAME=...)
// with device calls to other nodes (GSHMEM_REMOTE=1), one kernel per operator.
#include <type_traits>
#include "gshmem.h"
#include "coll_kernels.cuh"

#if !defined(GSHMEMI_REDUCE_T) || !defined(GSHMEMI_REDUCE_NAME) || !GSHMEM_REMOTE
#error "build with -DGSHMEM_REMOTE=1 -DGSHMEMI_REDUCE_T=<type> -DGSHMEMI_REDUCE_NAME=<u8|...|bf16> (src/meson.build does)"
#endif
#define GSHMEMI_CAT2(a, b) a##b
#define GSHMEMI_CAT(a, b) GSHMEMI_CAT2(a, b)

template <class T, int OP>
__global__ void __launch_bounds__(GSHMEMI_XNODE_THREADS) gshmemi_xnode_reduce_kernel(
    gshmemi_team t, int what, int team, T *dest, const T *src, size_t n, int algo) {
    gshmemi_pdl_enter();
    gshmemi_xnode_reduce<T, OP, gshmemi_scope_block, 4>(&t, team, what, dest, src, n, algo, gshmemi_reduce_name(what));
}

template <class T>
static int launch_op(int op, void *stream, gshmemi_coll_plan p, const void *te, int what, int team,
                     void *dest, const void *src, size_t n) {
    const gshmemi_team t = *(const gshmemi_team *)te;
    switch (op) {
#define GSHMEMI_CASE(OPNAME, OPCODE, unused)                                                 \
    case OPCODE: return launch_k(gshmemi_xnode_reduce_kernel<T, OPCODE>, p.nch, p.threads, stream, t, \
                                 what, team, (T *)dest, (const T *)src, n, p.xalgo);
        GSHMEM_REDUCE_ARITH_OPS(GSHMEMI_CASE, 0)
    default: break;
    }
    if constexpr (std::is_integral<T>::value) {
        switch (op) {
            GSHMEM_REDUCE_BIT_OPS(GSHMEMI_CASE, 0)
#undef GSHMEMI_CASE
        default: break;
        }
    }
    return (int)cudaErrorInvalidValue;
}

extern "C" int GSHMEMI_CAT(gshmemi_launch_xnode_reduce_, GSHMEMI_REDUCE_NAME)(
    int op, void *stream, gshmemi_coll_plan p, const void *te, int what, int team, void *dest,
    const void *src, size_t n) {
    return launch_op<GSHMEMI_REDUCE_T>(op, stream, p, te, what, team, dest, src, n);
}
