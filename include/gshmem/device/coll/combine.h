/* The element-wise combine of the two-round reductions: owner computes over 16-byte vectors
 * of every member's input (or single elements where alignment does not allow), writing its
 * own dest, every member's, or the scans' prefixes. */
#ifndef GSHMEM_DEVICE_COLL_COMBINE_H
#define GSHMEM_DEVICE_COLL_COMBINE_H

#include "ops.h"
#include "rounds.h"

/* ---- element-wise combine ---------------------------------------------------------------- */
/* Where member j's input and output for element k live, and what to write. */
#define GSHMEMI_OUT_ALL 0      /* reduce (two-round): the result to every member's dest */
#define GSHMEMI_OUT_OWN 1      /* result only to my dest */
#define GSHMEMI_OUT_SCAN_IN 2  /* inclusive prefix of member j to member j's dest */
#define GSHMEMI_OUT_SCAN_EX 3  /* exclusive prefix */

template <class T> GSHMEMI_DEV T gshmemi_ldcg(const T *p) {
    typedef typename gshmemi_uint<sizeof(T)>::t U;
    U u = __ldcg((const U *)p);
    T v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* U vectors (V elements each) at k0, k0 + step, ...: loads of all U from one member are in
 * flight together (NVLink latency hides only behind many outstanding loads). */
template <class T, int OP, int OUT, int U, class In>
GSHMEMI_DEV void gshmemi_combine_vecs(const gshmemi_team *t, const In &in, T *dest, int m,
                                      size_t k0, size_t step) {
    typedef gshmemi_acc<T> AC;
    typedef typename AC::t A;
    typedef gshmemi_rop<OP> R;
    constexpr int V = 16 / sizeof(T);
    constexpr bool SCAN = OUT == GSHMEMI_OUT_SCAN_IN || OUT == GSHMEMI_OUT_SCAN_EX;
    A acc[U][V];
    if (SCAN) {
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int i = 0; i < V; i++) acc[u][i] = AC::in((T)0);
    }
    for (int j = 0; j < m; j++) {
        const T *p = in.ptr(j) + k0;
        int4 r[U];
#pragma unroll
        for (int u = 0; u < U; u++) r[u] = __ldcg((const int4 *)(p + u * step));
        T *dj = SCAN ? gshmemi_at(dest, gshmemi_member_off(t, j)) + k0 : dest;
#pragma unroll
        for (int u = 0; u < U; u++) {
            T x[V], o[V];
            memcpy(x, &r[u], 16);
            if (OUT == GSHMEMI_OUT_SCAN_EX) {  /* write before adding: in place is safe */
#pragma unroll
                for (int i = 0; i < V; i++) o[i] = AC::out(acc[u][i]);
                memcpy(&r[u], o, 16);
                *(int4 *)(dj + u * step) = r[u];
            }
#pragma unroll
            for (int i = 0; i < V; i++)
                acc[u][i] = (j == 0 && !SCAN) ? AC::in(x[i]) : R::f(acc[u][i], AC::in(x[i]));
            if (OUT == GSHMEMI_OUT_SCAN_IN) {
#pragma unroll
                for (int i = 0; i < V; i++) o[i] = AC::out(acc[u][i]);
                memcpy(&r[u], o, 16);
                *(int4 *)(dj + u * step) = r[u];
            }
        }
    }
    if constexpr (!SCAN) {
        int4 res[U];
    #pragma unroll
        for (int u = 0; u < U; u++) {
            T o[V];
    #pragma unroll
            for (int i = 0; i < V; i++) o[i] = AC::out(acc[u][i]);
            memcpy(&res[u], o, 16);
        }
        if (OUT == GSHMEMI_OUT_OWN) {
    #pragma unroll
            for (int u = 0; u < U; u++) *(int4 *)(dest + k0 + u * step) = res[u];
        } else {
            for (int j = 0; j < t->size; j++) {
                T *dj = gshmemi_at(dest, gshmemi_member_off(t, j)) + k0;
    #pragma unroll
                for (int u = 0; u < U; u++) *(int4 *)(dj + u * step) = res[u];
            }
        }
    }
}

/* In: pointer of member j's inputs (symmetric src + member offset). Out: see GSHMEMI_OUT_*.
 * upto: members combined. Threads handle whole 16-byte vectors (V elements), U at a time, where dest
 * and all inputs are 16-byte aligned; single elements otherwise. */
template <class T, int OP, int OUT, int U, class In>
GSHMEMI_COLL_FN void gshmemi_combine(const gshmemi_team *t, const In &in, T *dest, int upto,
                                     size_t lo, size_t hi, unsigned rank, unsigned size) {
    typedef gshmemi_acc<T> AC;
    typedef typename AC::t A;
    typedef gshmemi_rop<OP> R;
    constexpr int V = 16 / sizeof(T);
    const int m = upto;
    size_t k = lo;
    if (((uintptr_t)dest & 15) == 0 && in.aligned16()) {
        size_t nv = (hi - lo) / V, v = rank;
        if (U > 1)
            for (; v + (size_t)(U - 1) * size < nv; v += (size_t)U * size)
                gshmemi_combine_vecs<T, OP, OUT, U>(t, in, dest, m, lo + v * V, (size_t)size * V);
        for (; v < nv; v += size) gshmemi_combine_vecs<T, OP, OUT, 1>(t, in, dest, m, lo + v * V, 0);
        k = lo + nv * V;
    }
    for (k += rank; k < hi; k += size) {
        A acc = AC::in((T)0);
        for (int j = 0; j < m; j++) {
            T x = gshmemi_ldcg(in.ptr(j) + k);
            if (OUT == GSHMEMI_OUT_SCAN_EX) *(gshmemi_at(dest, gshmemi_member_off(t, j)) + k) = AC::out(acc);
            acc = (j == 0 && OUT != GSHMEMI_OUT_SCAN_EX && OUT != GSHMEMI_OUT_SCAN_IN)
                      ? AC::in(x) : R::f(acc, AC::in(x));
            if (OUT == GSHMEMI_OUT_SCAN_IN) *(gshmemi_at(dest, gshmemi_member_off(t, j)) + k) = AC::out(acc);
        }
        if (OUT == GSHMEMI_OUT_OWN) dest[k] = AC::out(acc);
        else if (OUT == GSHMEMI_OUT_ALL)
            for (int j = 0; j < t->size; j++) *(gshmemi_at(dest, gshmemi_member_off(t, j)) + k) = AC::out(acc);
    }
}

/* Inputs of the two-round path: every member's symmetric source (+ base elements). */
template <class T> struct gshmemi_in_peers {
    const gshmemi_team *t;
    const T *src;
    __device__ __forceinline__ const T *ptr(int j) const { return gshmemi_at(src, gshmemi_member_off(t, j)); }
    __device__ __forceinline__ bool aligned16() const { return ((uintptr_t)src & 15) == 0; }
};
/* Inputs of the push path's second step: what the other member wrote into my dest, and my
 * own source, in member order (so the result is the same bits as on the other paths). */
template <class T> struct gshmemi_in_pushed {
    const T *src, *dest;
    int me;
    __device__ __forceinline__ const T *ptr(int j) const { return j == me ? src : dest; }
    __device__ __forceinline__ bool aligned16() const {
        return (((uintptr_t)src | (uintptr_t)dest) & 15) == 0;
    }
};
/* Copies n bytes (or, for alltoalls, n elements of es bytes with strides) for the group. */
template <class S>
GSHMEMI_COLL_FN void gshmemi_move_copy(void *to, const void *from, size_t nbytes) {
    gshmemi_copy_group<false>(to, from, nbytes, S::rank(), S::size());
}
template <class S>
GSHMEMI_COLL_FN void gshmemi_move_strided(void *to, const void *from, ptrdiff_t dst, ptrdiff_t sst,
                                      size_t n, size_t es) {
    unsigned r = S::rank(), z = S::size();
    switch (es) {
    case 1: gshmemi_copy_strided<false, 1>(to, from, dst, sst, n, r, z); break;
    case 2: gshmemi_copy_strided<false, 2>(to, from, dst, sst, n, r, z); break;
    case 4: gshmemi_copy_strided<false, 4>(to, from, dst, sst, n, r, z); break;
    case 8: gshmemi_copy_strided<false, 8>(to, from, dst, sst, n, r, z); break;
    default: gshmemi_copy_strided<false, 16>(to, from, dst, sst, n, r, z); break;
    }
}

#endif
