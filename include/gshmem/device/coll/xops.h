/* Reductions with the operator chosen at run time, for the collectives across nodes
 * (coll/xnode.h): one instantiation per storage class (the integers by width, float, double,
 * half, bfloat16) instead of one per element type and operator. The cross-node steps wait on the
 * network, so a switch on the operator per 16-byte vector costs nothing they would show, and a
 * unit that calls reductions of every type compiles the cross-node algorithms 8 times, not 84.
 * Results are the bits of the one-node paths: integers combine modulo their width (sign- or
 * zero-extended, so min and max compare as the type does), floats in their own precision, the
 * 16-bit floats in float, members in member order. */
#ifndef GSHMEM_DEVICE_COLL_XOPS_H
#define GSHMEM_DEVICE_COLL_XOPS_H

#include <type_traits>
#include "combine.h"

/* The operator of a reduction chosen at run time: OpenSHMEM operator code, signedness. */
struct gshmemi_rk {
    int op;
    bool sgn;
};

/* Integers of width sizeof(U): combined in 32 bits (64 for 8-byte ones). */
template <class U> struct gshmemi_xc_int {
    typedef U T;
    typedef typename std::conditional<sizeof(U) == 8, uint64_t, uint32_t>::type A;
    typedef typename std::conditional<sizeof(U) == 8, int64_t, int32_t>::type SA;
    typedef typename std::make_signed<U>::type SU;
    static __device__ __forceinline__ A in(T x, gshmemi_rk k) { return k.sgn ? (A)(SA)(SU)x : (A)x; }
    static __device__ __forceinline__ T out(A a) { return (T)a; }
    static __device__ __forceinline__ A f(A a, A b, gshmemi_rk k) {
        switch (k.op) {
        case GSHMEMI_OP_AND: return a & b;
        case GSHMEMI_OP_OR: return a | b;
        case GSHMEMI_OP_XOR: return a ^ b;
        case GSHMEMI_OP_MIN: return (k.sgn ? (SA)b < (SA)a : b < a) ? b : a;
        case GSHMEMI_OP_MAX: return (k.sgn ? (SA)a < (SA)b : a < b) ? b : a;
        case GSHMEMI_OP_PROD: return a * b;
        default: return a + b;
        }
    }
};
/* Floating point: combined in F (the 16-bit floats in float, converted by PTX: no header). */
template <class F> struct gshmemi_xc_fop {
    static __device__ __forceinline__ F f(F a, F b, gshmemi_rk k) {
        switch (k.op) {
        case GSHMEMI_OP_MIN: return b < a ? b : a;
        case GSHMEMI_OP_MAX: return a < b ? b : a;
        case GSHMEMI_OP_PROD: return a * b;
        default: return a + b;
        }
    }
};
template <class F> struct gshmemi_xc_float : gshmemi_xc_fop<F> {
    typedef F T;
    typedef F A;
    static __device__ __forceinline__ A in(T x, gshmemi_rk) { return x; }
    static __device__ __forceinline__ T out(A a) { return a; }
};
struct gshmemi_xc_half : gshmemi_xc_fop<float> {
    typedef uint16_t T;
    typedef float A;
    static __device__ __forceinline__ A in(T x, gshmemi_rk) {
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x));
        return f;
    }
    static __device__ __forceinline__ T out(A a) {
        uint16_t h;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(a));
        return h;
    }
};
struct gshmemi_xc_bf16 : gshmemi_xc_fop<float> {
    typedef uint16_t T;
    typedef float A;
    static __device__ __forceinline__ A in(T x, gshmemi_rk) { return __uint_as_float((uint32_t)x << 16); }
    static __device__ __forceinline__ T out(A a) {
        uint16_t h;
        asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(a));
        return h;
    }
};

/* The storage class of element type T. */
template <class T, class = void> struct gshmemi_xc_of {
    typedef gshmemi_xc_int<typename gshmemi_uint<sizeof(T)>::t> C;
};
template <> struct gshmemi_xc_of<float> { typedef gshmemi_xc_float<float> C; };
template <> struct gshmemi_xc_of<double> { typedef gshmemi_xc_float<double> C; };
template <> struct gshmemi_xc_of<__half> { typedef gshmemi_xc_half C; };
template <> struct gshmemi_xc_of<__nv_bfloat16> { typedef gshmemi_xc_bf16 C; };
template <class T> GSHMEMI_DEV gshmemi_rk gshmemi_rk_of(int op) {
    if constexpr (std::is_integral<T>::value) return gshmemi_rk{op, (T)-1 < (T)0};
    else return gshmemi_rk{op, false};
}

/* U vectors at k0, k0 + step, ...: the loads of all U from one member in flight together. */
template <class C, int U, class In>
GSHMEMI_DEV void gshmemi_xcombine_vecs(const In &in, typename C::T *dest, int m, size_t k0, size_t step,
                                       gshmemi_rk rk) {
    typedef typename C::T T;
    typedef typename C::A A;
    constexpr int V = 16 / sizeof(T);
    A acc[U][V];
    for (int j = 0; j < m; j++) {
        const T *p = in.ptr(j) + k0;
        int4 r[U];
#pragma unroll
        for (int u = 0; u < U; u++) r[u] = __ldcg((const int4 *)(p + u * step));
#pragma unroll
        for (int u = 0; u < U; u++) {
            T x[V];
            memcpy(x, &r[u], 16);
#pragma unroll
            for (int i = 0; i < V; i++) acc[u][i] = j == 0 ? C::in(x[i], rk) : C::f(acc[u][i], C::in(x[i], rk), rk);
        }
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
        T o[V];
#pragma unroll
        for (int i = 0; i < V; i++) o[i] = C::out(acc[u][i]);
        *(int4 *)(dest + k0 + u * step) = *(const int4 *)o;
    }
}

/* The combine of members [0, upto) over elements [lo, hi) into my dest (GSHMEMI_OUT_OWN of
 * combine.h, with the operator rk): 16-byte vectors where dest and every input are aligned,
 * single elements otherwise. Out of line: the cross-node algorithms stay lean in registers. */
template <class C, int U, class In>
GSHMEMI_COLL_FN void gshmemi_xcombine(const In in, typename C::T *dest, int upto, size_t lo, size_t hi,
                                      unsigned rank, unsigned size, gshmemi_rk rk) {
    typedef typename C::T T;
    constexpr int V = 16 / sizeof(T);
    size_t k = lo;
    if (((uintptr_t)dest & 15) == 0 && in.aligned16()) {
        size_t nv = (hi - lo) / V, v = rank;
        if (U > 1)
            for (; v + (size_t)(U - 1) * size < nv; v += (size_t)U * size)
                gshmemi_xcombine_vecs<C, U>(in, dest, upto, lo + v * V, (size_t)size * V, rk);
        for (; v < nv; v += size) gshmemi_xcombine_vecs<C, 1>(in, dest, upto, lo + v * V, 0, rk);
        k = lo + nv * V;
    }
    for (k += rank; k < hi; k += size) {
        typename C::A acc = C::in(gshmemi_ldcg(in.ptr(0) + k), rk);
        for (int j = 1; j < upto; j++) acc = C::f(acc, C::in(gshmemi_ldcg(in.ptr(j) + k), rk), rk);
        dest[k] = C::out(acc);
    }
}

#endif
