/* Reduction operators: the accumulator type of each element type (16-bit floats combine in
 * float) and one functor per OpenSHMEM operator code. */
#ifndef GSHMEM_DEVICE_COLL_OPS_H
#define GSHMEM_DEVICE_COLL_OPS_H

#include "../team.h"

/* The 16-bit float types are declared, not defined, here (cuda_fp16.h and cuda_bf16.h begin
 * the same way): those two headers cost a unit that includes gshmem.h about as much as all of
 * gshmem's device code. Code that holds __half or __nv_bfloat16 values includes them anyway;
 * a reduction of them needs them included before it is called. */
struct __half;
struct __nv_bfloat16;

/* ---- operators ------------------------------------------------------------------------- */
/* Accumulator type: 16-bit floats combine in float, everything else in itself. */
template <class T> struct gshmemi_acc {
    typedef T t;
    static __device__ __forceinline__ t in(T x) { return x; }
    static __device__ __forceinline__ T out(t x) { return x; }
};
/* The conversions are found where a reduction of H is instantiated (argument-dependent lookup:
 * H, and gshmemi_f32<H>, belong to the global namespace, where cuda_fp16.h/cuda_bf16.h declare
 * them), so only units that reduce 16-bit floats need their headers. */
template <class H> struct gshmemi_f32 {
    float v;
    __device__ __forceinline__ operator float() const { return v; }
};
template <class H> struct gshmemi_acc_f16 {
    typedef float t;
    static __device__ __forceinline__ t in(H x) { return __half2float(x); }
    static __device__ __forceinline__ H out(t x) { return __float2half_rn(gshmemi_f32<H>{x}); }
};
template <class H> struct gshmemi_acc_bf16 {
    typedef float t;
    static __device__ __forceinline__ t in(H x) { return __bfloat162float(x); }
    static __device__ __forceinline__ H out(t x) { return __float2bfloat16_rn(gshmemi_f32<H>{x}); }
};
template <> struct gshmemi_acc<__half> : gshmemi_acc_f16<__half> {};
template <> struct gshmemi_acc<__nv_bfloat16> : gshmemi_acc_bf16<__nv_bfloat16> {};

template <int OP> struct gshmemi_rop;
#define GSHMEMI_DEF_ROP(CODE, EXPR)                                                          \
    template <> struct gshmemi_rop<CODE> {                                                   \
        template <class A> static __device__ __forceinline__ A f(A a, A b) { return EXPR; }  \
    };
GSHMEMI_DEF_ROP(GSHMEMI_OP_AND, a & b)
GSHMEMI_DEF_ROP(GSHMEMI_OP_OR, a | b)
GSHMEMI_DEF_ROP(GSHMEMI_OP_XOR, a ^ b)
GSHMEMI_DEF_ROP(GSHMEMI_OP_MIN, b < a ? b : a)
GSHMEMI_DEF_ROP(GSHMEMI_OP_MAX, a < b ? b : a)
GSHMEMI_DEF_ROP(GSHMEMI_OP_SUM, a + b)
GSHMEMI_DEF_ROP(GSHMEMI_OP_PROD, a * b)
#undef GSHMEMI_DEF_ROP

#endif
