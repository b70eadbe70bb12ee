// Reduction kernels behind the host forms (reduce, reducescatter, scans), for one element
// type: meson builds this file once per storage type of GSHMEMI_REDUCE_STORAGE_TYPES
// (-DGSHMEMI_REDUCE_T=uint8_t -DGSHMEMI_REDUCE_NAME=u8, ...), one kernel per operator,
// so the twelve types compile in parallel instead of in one translation unit. A signed
// integer type compiles min and max only; its sum, product and bitwise operators are the
// unsigned type's of its width (two's complement: the same bits), launched from there.
#include <type_traits>
#include "gshmem.h"
#include "coll_kernels.cuh"

#if !defined(GSHMEMI_REDUCE_T) || !defined(GSHMEMI_REDUCE_NAME)
#error "build with -DGSHMEMI_REDUCE_T=<type> -DGSHMEMI_REDUCE_NAME=<u8|...|bf16> (src/meson.build does)"
#endif
#define GSHMEMI_CAT2(a, b) a##b
#define GSHMEMI_CAT(a, b) GSHMEMI_CAT2(a, b)

// One-shot reductions: the looped form (GSHMEMI_ALGO_ONESHOT), or (ONE) the one-pair form
// (GSHMEMI_ALGO_ONESHOT_PAIR: a reduce whose block has a thread for every LL pair of its slice;
// same protocol, no loops).
template <class T, int OP, bool ONE>
__global__ void __launch_bounds__(GSHMEMI_COLL_MAX_THREADS) gshmemi_reduce_oneshot_kernel(gshmemi_team t, int what, int team,
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
__global__ void __launch_bounds__(GSHMEMI_COLL_MAX_THREADS) gshmemi_reduce_kernel(gshmemi_team t, int what, int team,
                                                             T *dest, const T *src, size_t n) {
    gshmemi_pdl_enter();
    gshmemi_reduce_t<T, OP, gshmemi_scope_block, gshmemi_unroll<T>()>(&t, team, what, dest, src, n,
                                                    (int)blockIdx.x, (int)gridDim.x,
                                                    gshmemi_reduce_name(what));
}

// The plan's kernel (ALLREAD and PUSH: the general kernel, its `what` set by
// gshmemi_launch_reduce).
template <class T, int OP>
static int launch(gshmemi_coll_plan p, void *stream, const void *te, int what, int team,
                  void *dest, const void *src, size_t n) {
    const gshmemi_team &t = *(const gshmemi_team *)te;
    T *d = (T *)dest;
    const T *s = (const T *)src;
    switch (p.algo) {
    case GSHMEMI_ALGO_ONESHOT_PAIR:
        return launch_k(gshmemi_reduce_oneshot_kernel<T, OP, true>, p.nch, p.threads, stream, t,
                        what, team, d, s, n);
    case GSHMEMI_ALGO_ONESHOT:
        return launch_k(gshmemi_reduce_oneshot_kernel<T, OP, false>, p.nch, p.threads, stream, t,
                        what, team, d, s, n);
    case GSHMEMI_ALGO_TWO_ROUND:
    case GSHMEMI_ALGO_ALLREAD:
    case GSHMEMI_ALGO_PUSH:
        return launch_k(gshmemi_reduce_kernel<T, OP>, p.nch, p.threads, stream, t, what, team, d,
                        s, n);
    default: return (int)cudaErrorInvalidValue;
    }
}

// The unsigned entry point of a signed type's width (another translation unit).
template <int ES> struct gshmemi_unsigned_entry;
template <> struct gshmemi_unsigned_entry<1> { static constexpr auto *f = gshmemi_launch_reduce_u8; };
template <> struct gshmemi_unsigned_entry<2> { static constexpr auto *f = gshmemi_launch_reduce_u16; };
template <> struct gshmemi_unsigned_entry<4> { static constexpr auto *f = gshmemi_launch_reduce_u32; };
template <> struct gshmemi_unsigned_entry<8> { static constexpr auto *f = gshmemi_launch_reduce_u64; };

template <class T>
static int launch_op(int op, void *stream, gshmemi_coll_plan p, const void *te, int what, int team,
                     void *dest, const void *src, size_t n) {
    if constexpr (std::is_integral<T>::value && std::is_signed<T>::value) {
        switch (op) {
        case GSHMEMI_OP_MIN: return launch<T, GSHMEMI_OP_MIN>(p, stream, te, what, team, dest, src, n);
        case GSHMEMI_OP_MAX: return launch<T, GSHMEMI_OP_MAX>(p, stream, te, what, team, dest, src, n);
        default: return gshmemi_unsigned_entry<sizeof(T)>::f(op, stream, p, te, what, team, dest, src, n);
        }
    } else {
        switch (op) {
#define GSHMEMI_CASE(OPNAME, OPCODE, unused)                                                 \
    case OPCODE: return launch<T, OPCODE>(p, stream, te, what, team, dest, src, n);
            GSHMEM_REDUCE_ARITH_OPS(GSHMEMI_CASE, 0)
        default: break;
        }
        if constexpr (std::is_integral<T>::value) {
            switch (op) {
                GSHMEM_REDUCE_BIT_OPS(GSHMEMI_CASE, 0)
            default: break;
            }
        }
#undef GSHMEMI_CASE
        return (int)cudaErrorInvalidValue;
    }
}

// The entry point of the type this translation unit is built for.
extern "C" int GSHMEMI_CAT(gshmemi_launch_reduce_, GSHMEMI_REDUCE_NAME)(
    int op, void *stream, gshmemi_coll_plan p, const void *te, int what, int team, void *dest,
    const void *src, size_t n) {
    return launch_op<GSHMEMI_REDUCE_T>(op, stream, p, te, what, team, dest, src, n);
}
