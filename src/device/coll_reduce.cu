// Reduction kernels behind the host forms (reduce, reducescatter, scans), for one element
// type: meson builds this file once per storage type of GSHMEMI_REDUCE_STORAGE_TYPES
// (-DGSHMEMI_REDUCE_T=uint8_t -DGSHMEMI_REDUCE_NAME=u8, ...), one kernel per operator,
// so the twelve types compile in parallel instead of in one translation unit.
#include <type_traits>
#include "gshmem.h"
#include "coll_kernels.cuh"

#if !defined(GSHMEMI_REDUCE_T) || !defined(GSHMEMI_REDUCE_NAME)
#error "build with -DGSHMEMI_REDUCE_T=<type> -DGSHMEMI_REDUCE_NAME=<u8|...|bf16> (src/meson.build does)"
#endif
#define GSHMEMI_CAT2(a, b) a##b
#define GSHMEMI_CAT(a, b) GSHMEMI_CAT2(a, b)

// One-shot reductions: the looped form, or (ONE) the one-pair form the host picks for a
// reduce whose block has a thread for every LL pair of its slice (same protocol, no loops).
template <class T, int OP, bool ONE>
__global__ void __launch_bounds__(512) gshmemi_reduce_oneshot_kernel(gshmemi_team t, int what, int team,
                                                                     T *dest, const T *src, size_t n) {
    const gshmemi_oneshot_plan P = gshmemi_oneshot_plan_of(&t, n, 16 / sizeof(T), sizeof(T),
                                                           (int)blockIdx.x, (int)gridDim.x);
    gshmemi_pdl_enter();
    if constexpr (ONE)
        gshmemi_reduce_oneshot_one<T, OP, gshmemi_scope_block>(&t, team, dest, src, n, P, (int)blockIdx.x,
                                                               (int)gridDim.x,
                                                               gshmemi_reduce_name(GSHMEMI_COLL_REDUCE));
    else
        gshmemi_reduce_oneshot_run<T, OP, gshmemi_scope_block>(&t, team, what, dest, src, n, P,
                                                               (int)blockIdx.x, (int)gridDim.x,
                                                               gshmemi_reduce_name(what));
}

// Vectors in flight per thread and member: 4 for 4- and 8-byte types; fewer for narrow
// ones, whose 16-byte vectors already hold 8 or 16 elements (and as many accumulators).
template <class T> __host__ __device__ constexpr int gshmemi_unroll() { return sizeof(T) >= 4 ? 4 : sizeof(T) == 2 ? 2 : 1; }

template <class T, int OP>
__global__ void __launch_bounds__(512) gshmemi_reduce_kernel(gshmemi_team t, int what, int team,
                                                             T *dest, const T *src, size_t n) {
    gshmemi_pdl_enter();
    gshmemi_reduce_t<T, OP, gshmemi_scope_block, gshmemi_unroll<T>()>(&t, team, what, dest, src, n,
                                                    (int)blockIdx.x, (int)gridDim.x,
                                                    gshmemi_reduce_name(what));
}

template <class T, int OP>
static int launch(void *stream, const void *te, int what, int team, void *dest, const void *src,
                  size_t n, int nch, int threads) {
    const gshmemi_team *t = (const gshmemi_team *)te;
    if (gshmemi_oneshot(t, n * sizeof(T), nch)) {
        size_t pairs = gshmemi_geom_oneshot_pairs(n, 16 / sizeof(T), sizeof(T), nch);
        bool one = what == GSHMEMI_COLL_REDUCE && pairs <= ONESHOT_MAX_THREADS;
        return launch_k(one ? gshmemi_reduce_oneshot_kernel<T, OP, true>
                            : gshmemi_reduce_oneshot_kernel<T, OP, false>,
                        nch, oneshot_threads(pairs), stream, *t, what, team, (T *)dest, (const T *)src, n);
    }
    return launch_k(gshmemi_reduce_kernel<T, OP>, nch, threads, stream, *t, what, team, (T *)dest,
                    (const T *)src, n);
}

template <class T>
static int launch_op(int op, void *stream, const void *te, int what, int team, void *dest,
                     const void *src, size_t n, int nch, int threads) {
    switch (op) {
#define GSHMEMI_CASE(OPNAME, OPCODE, unused)                                                 \
    case OPCODE: return launch<T, OPCODE>(stream, te, what, team, dest, src, n, nch, threads);
        GSHMEM_REDUCE_ARITH_OPS(GSHMEMI_CASE, 0)
#undef GSHMEMI_CASE
    default: break;
    }
    if constexpr (std::is_integral<T>::value) {
        switch (op) {
#define GSHMEMI_CASE(OPNAME, OPCODE, unused)                                                 \
    case OPCODE: return launch<T, OPCODE>(stream, te, what, team, dest, src, n, nch, threads);
            GSHMEM_REDUCE_BIT_OPS(GSHMEMI_CASE, 0)
#undef GSHMEMI_CASE
        default: break;
        }
    }
    return (int)cudaErrorInvalidValue;
}

// The entry point of the type this translation unit is built for.
extern "C" int GSHMEMI_CAT(gshmemi_launch_reduce_, GSHMEMI_REDUCE_NAME)(
    int op, void *stream, const void *te, int what, int team, void *dest, const void *src, size_t n,
    int nch, int threads) {
    return launch_op<GSHMEMI_REDUCE_T>(op, stream, te, what, team, dest, src, n, nch, threads);
}
