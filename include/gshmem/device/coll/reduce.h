/* Reductions, reduce-scatter and scans on one team: the one-shot and two-round algorithms. */
#ifndef GSHMEM_DEVICE_COLL_REDUCE_H
#define GSHMEM_DEVICE_COLL_REDUCE_H

#include "combine.h"
#include "oneshot.h"

/* ---- reductions, reduce-scatter, scans ------------------------------------------------------ */
/* what: GSHMEMI_COLL_REDUCE / REDUCESCATTER / INSCAN / EXSCAN (gshmem/types.h), or one of the
 * two 2-member variants of a two-round reduce below. n = nreduce (elements per PE block for
 * reducescatter) or nelems. */
/* The 2-member variants (not in place), which only the library's reduce kernel runs, when the
 * host's plan (src/team/plan.c) chooses them:
 * ALLREAD: each member reads both sources whole and writes only its own dest (all traffic
 *   NVLink reads);
 * PUSH: each member first writes the half of its source that the other owns into the other's
 *   dest, then (after a flag round) combines that with its own source and writes the result to
 *   both dests (all traffic NVLink writes). */
#define GSHMEMI_COLL_REDUCE_ALLREAD 4
#define GSHMEMI_COLL_REDUCE_PUSH 5
/* Entry checks of a reduction on this PE: members reachable, buffers in the heap (debug). */
template <class T>
GSHMEMI_DEV void gshmemi_reduce_check(const gshmemi_team *t, int what, const T *dest, const T *src,
                                      size_t n, const char *call) {
    size_t sbytes = (what == GSHMEMI_COLL_REDUCESCATTER ? (size_t)t->size : 1) * n * sizeof(T);
    gshmemi_coll_check(t, dest, n * sizeof(T), src, sbytes, call);
}
/* One-shot reduction (the caller checked gshmemi_oneshot): LL messages to every member
 * (scans: data only to higher members), my channel's slice of them, combined as the words
 * arrive. `run` is inlined into the on-stream one-shot kernels (compact code, the team entry
 * read from parameter space, the plan made before the PDL wait, and no device-side entry
 * checks: the host checked the buffers and that every member is reachable, which measured
 * 0.7 us of a one-shot kernel's critical path, bench/probe_sync); `body` (checks, plan, run)
 * is called out of line by the device-side collectives. */
template <class T, int OP, class S>
GSHMEMI_DEV void gshmemi_reduce_oneshot_run(const gshmemi_team *t, int team, int what, T *dest,
                                            const T *src, size_t n, const gshmemi_oneshot_plan &P,
                                            int c, int nch, const char *call) {
    const int m = t->size, me = t->my_idx, j1 = P.j1;
    const size_t lo = P.lo, off = lo * sizeof(T), bn = (P.hi - lo) * sizeof(T);
    const bool rs = what == GSHMEMI_COLL_REDUCESCATTER;
    const bool scan = what == GSHMEMI_COLL_INSCAN || what == GSHMEMI_COLL_EXSCAN;
    /* the first member's message: what it gets, and this thread's first pair of it */
    const char *from1 = (const char *)((rs ? src + (size_t)j1 * n : src) + lo);
    const size_t bn1 = scan && j1 < me ? 0 : bn;
    const uint2 first = gshmemi_ll_first(from1, bn1, S::rank());
    const uint32_t f = gshmemi_oneshot_begin<S>(t, team, c, nch, P.debug,
                                                gshmemi_sig(100 + what, sizeof(T), OP, n, 0), call);
    for (int jj = 1; jj < m; jj++) {
        int j = me + jj < m ? me + jj : me + jj - m;   /* no integer division on the path */
        const T *from = (rs ? src + (size_t)j * n : src) + lo;
        char *to = (jj == 1 ? P.to1 : gshmemi_ll_to(t, j, off)) + gshmemi_ll_parity(t, f);
        gshmemi_ll_send<S>(to, (const char *)from, scan && j < me ? 0 : bn, f, jj == 1 ? &first : NULL);
    }
    const int upto = what == GSHMEMI_COLL_INSCAN ? me + 1 : what == GSHMEMI_COLL_EXSCAN ? me : m;
    gshmemi_ll_reduce<T, OP>(t, f, dest + lo, (rs ? src + (size_t)me * n : src) + lo, off, bn,
                             upto, S::rank(), S::size(), call);
    S::sync();
}
/* 8 bytes of elements at p (ne <= 8 / sizeof(T) of them, zero-padded): one load when whole
 * and aligned. */
template <class T> GSHMEMI_DEV uint2 gshmemi_ll_pack(const T *p, int ne) {
    constexpr int E = 8 / sizeof(T);
    if (ne == E && ((uintptr_t)p & 7) == 0) return *(const uint2 *)p;
    T x[E];
#pragma unroll
    for (int i = 0; i < E; i++) x[i] = i < ne ? p[i] : (T)0;
    uint2 d;
    memcpy(&d, x, 8);
    return d;
}
/* The one-pair form of the one-shot reduce (what == REDUCE only), for the on-stream kernels
 * when the block has a thread for every LL pair of its slice (the host's thread count is one
 * per pair up to 512, so every call whose slice is at most 4 KiB: all one-shot calls up to
 * 256 KiB per member by default). Same protocol, words and buffers as
 * gshmemi_reduce_oneshot_run (the two interoperate call after call), written without loops
 * over pairs and without byte-wise paths: thread r packs pair r of my slice, sends it to
 * every member, waits for pair r of every member's message and combines them in team order.
 * In a CUDA graph this shape runs the protocol at the raw exchange's speed (1.50 us per call
 * by hand against 2.63 for the looped form: bench/probes/probe_sync.cu oneshot). */
template <class T, int OP, class S>
GSHMEMI_DEV void gshmemi_reduce_oneshot_one(const gshmemi_team *t, int team, T *dest, const T *src,
                                            size_t n, const gshmemi_oneshot_plan &P, int c,
                                            int nch, const char *call) {
    typedef gshmemi_acc<T> AC;
    typedef typename AC::t A;
    typedef gshmemi_rop<OP> R;
    constexpr int E = 8 / sizeof(T);
    const int m = t->size, me = t->my_idx;
    const size_t lo = P.lo, off = lo * sizeof(T), bn = (P.hi - lo) * sizeof(T);
    const size_t r = S::rank();
    const bool act = r < gshmemi_ll_pairs(bn);
    const size_t left = bn > 8 * r ? (bn - 8 * r) / sizeof(T) : 0;
    const int ne = left < (size_t)E ? (int)left : E;
    const uint2 mine = act ? gshmemi_ll_pack(src + lo + r * E, ne) : make_uint2(0, 0);
    const uint32_t f = gshmemi_oneshot_begin<S>(t, team, c, nch, P.debug,
                                                gshmemi_sig(100 + GSHMEMI_COLL_REDUCE, sizeof(T), OP, n, 0), call);
    if (act) {
        const uint64_t fl = (uint64_t)f << 32, w0 = fl | mine.x, w1 = fl | mine.y;
#pragma unroll 1   /* compact code: unrolled copies for long teams only lengthen the path */
        for (int jj = 1; jj < m; jj++) {
            int j = me + jj < m ? me + jj : me + jj - m;
            char *to = (jj == 1 ? P.to1 : gshmemi_ll_to(t, j, off)) + gshmemi_ll_parity(t, f) + 16 * r;
            asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(to), "l"(w0), "l"(w1) : "memory");
        }
        A acc[E];
#pragma unroll 1
        for (int j = 0; j < m; j++) {
            uint64_t d = j == me ? ((uint64_t)mine.y << 32 | mine.x)
                                 : gshmemi_ll_pair(gshmemi_ll_area(t, f, j) + 2 * off, r, f, call);
            T x[E];
            memcpy(x, &d, 8);
#pragma unroll
            for (int i = 0; i < E; i++) acc[i] = j == 0 ? AC::in(x[i]) : R::f(acc[i], AC::in(x[i]));
        }
#pragma unroll
        for (int i = 0; i < E; i++)
            if (i < ne) dest[lo + r * E + i] = AC::out(acc[i]);
    }
    S::sync();
}
template <class T, int OP, class S>
GSHMEMI_DEV void gshmemi_reduce_oneshot_body(const gshmemi_team *t, int team, int what, T *dest,
                                             const T *src, size_t n, int c, int nch,
                                             const char *call) {
    gshmemi_reduce_check(t, what, dest, src, n, call);
    const gshmemi_oneshot_plan P = gshmemi_oneshot_plan_of(t, n, 16 / sizeof(T), sizeof(T), c, nch);
    gshmemi_reduce_oneshot_run<T, OP, S>(t, team, what, dest, src, n, P, c, nch, call);
}
template <class T, int OP, class S>
GSHMEMI_COLL_FN void gshmemi_reduce_oneshot(const gshmemi_team *t, int team, int what, T *dest,
                                            const T *src, size_t n, int c, int nch,
                                            const char *call) {
    gshmemi_reduce_oneshot_body<T, OP, S>(t, team, what, dest, src, n, c, nch, call);
}

template <class T, int OP, class S, int U = 1>
GSHMEMI_DEV void gshmemi_reduce_t(const gshmemi_team *t, int team, int what, T *dest,
                                  const T *src, size_t n, int c, int nch, const char *call) {
    if (gshmemi_oneshot(t, n * sizeof(T), nch)) {
        gshmemi_reduce_oneshot<T, OP, S>(t, team, what, dest, src, n, c, nch, call);
        return;
    }
    const int m = t->size, me = t->my_idx;
    gshmemi_reduce_check(t, what, dest, src, n, call);
    unsigned sig = gshmemi_sig(100 + what, sizeof(T), OP, n, 0);
    constexpr size_t G = 16 / sizeof(T);
    gshmemi_arrive<S>(t, team, c, sig, call);
    size_t lo, hi;
    if (what == GSHMEMI_COLL_REDUCESCATTER || what == GSHMEMI_COLL_REDUCE_ALLREAD) {
        gshmemi_slice(n, c, nch, G, &lo, &hi);
        gshmemi_in_peers<T> in{t, what == GSHMEMI_COLL_REDUCESCATTER ? src + (size_t)me * n : src};
        gshmemi_combine<T, OP, GSHMEMI_OUT_OWN, U>(t, in, dest, m, lo, hi, S::rank(), S::size());
    } else if (what == GSHMEMI_COLL_REDUCE_PUSH) {   /* 2 members, dest and src apart */
        const int peer = 1 - me;
        size_t plo, phi;   /* the other member's range, my channel's slice of it */
        gshmemi_slice(n, peer, m, G, &plo, &phi);
        gshmemi_slice(phi - plo, c, nch, G, &lo, &hi);
        gshmemi_move_copy<S>(gshmemi_at(dest + plo + lo, gshmemi_member_off(t, peer)), src + plo + lo,
                             (hi - lo) * sizeof(T));
        S::sync();
        gshmemi_coll_round<S>(t, c, call);   /* its part of my range is in my dest */
        size_t olo, ohi;
        gshmemi_slice(n, me, m, G, &olo, &ohi);
        gshmemi_slice(ohi - olo, c, nch, G, &lo, &hi);
        gshmemi_in_pushed<T> in{src, dest, me};
        gshmemi_combine<T, OP, GSHMEMI_OUT_ALL, U>(t, in, dest, m, olo + lo, olo + hi, S::rank(), S::size());
    } else {
        size_t olo, ohi;  /* my owner range, then my channel's slice of it */
        gshmemi_slice(n, me, m, G, &olo, &ohi);
        gshmemi_slice(ohi - olo, c, nch, G, &lo, &hi);
        lo += olo;
        hi += olo;
        gshmemi_in_peers<T> in{t, src};
        if (what == GSHMEMI_COLL_INSCAN)
            gshmemi_combine<T, OP, GSHMEMI_OUT_SCAN_IN, U>(t, in, dest, m, lo, hi, S::rank(), S::size());
        else if (what == GSHMEMI_COLL_EXSCAN)
            gshmemi_combine<T, OP, GSHMEMI_OUT_SCAN_EX, U>(t, in, dest, m, lo, hi, S::rank(), S::size());
        else
            gshmemi_combine<T, OP, GSHMEMI_OUT_ALL, U>(t, in, dest, m, lo, hi, S::rank(), S::size());
    }
    S::sync();
    gshmemi_coll_round<S>(t, c, call);
}

#endif
