/* The one-shot path of small collectives: the hand-out of the team's one-shot count, the
 * scratch layout, the plan a call makes before touching data, and the receiving side's
 * combine and gather straight from the LL words. Whether a message takes the path is rule.h's
 * gshmemi_oneshot, which the host's plan calls too. */
#ifndef GSHMEM_DEVICE_COLL_ONESHOT_H
#define GSHMEM_DEVICE_COLL_ONESHOT_H

#include "ops.h"
#include "ll.h"
#include "rule.h"

/* The debug-only signature round before a one-shot (out of line: debug builds alone pay). It
 * finds the team entry by handle (the device table) rather than taking the caller's pointer,
 * so an on-stream kernel's entry, in parameter space, is never copied to a stack frame. */
template <class S>
static __device__ __noinline__ void gshmemi_oneshot_debug(int team, int c, unsigned sig,
                                                          const char *call) {
    gshmemi_arrive<S>(gshmemi_team_member(team, call), team, c, sig, call);
}
/* The one-shot hand-out on channel c of nch: this team's one-shot count (flag and parity).
 * Channel c reads its own copy of the count and advances copies c, c + nch, ... so that all
 * ONESHOT_CHANNELS copies stay equal whatever nch the next call uses, and no block waits for
 * another. With GSHMEM_DEBUG the members also exchange signatures in a flag round first. */
template <class S>
GSHMEMI_DEV uint32_t gshmemi_oneshot_begin(const gshmemi_team *t, int team, int c, int nch,
                                           int debug, unsigned sig, const char *call) {
    if (debug >= 1) gshmemi_oneshot_debug<S>(team, c, sig, call);
    /* (the group's last one-shot ended with a group barrier: its count stores are seen) */
    uint64_t q = *(volatile uint64_t *)(t->seqs + c) + 1;
    S::sync();
    for (int k = c + (int)S::rank() * nch; k < GSHMEMI_ONESHOT_CHANNELS; k += nch * (int)S::size())
        *(volatile uint64_t *)(t->seqs + k) = q;
    return (uint32_t)q;
}
/* Scratch buffers: [parity][sender] of scratch_bytes each. The byte offset of parity f & 1. */
GSHMEMI_DEV size_t gshmemi_ll_parity(const gshmemi_team *t, uint32_t f) {
    return (size_t)(f & 1) * (size_t)t->size * t->scratch_bytes;
}
/* The LL area for sender j on this PE (parity of f). */
GSHMEMI_DEV char *gshmemi_ll_area(const gshmemi_team *t, uint32_t f, int j) {
    return t->scratch + gshmemi_ll_parity(t, f) + (size_t)j * t->scratch_bytes;
}
/* Where my message to member j goes: byte `off` of my area (LL words take twice the bytes)
 * in j's scratch, parity 0 (add gshmemi_ll_parity). Computed for the first member before the
 * one-shot count is read, so that its constant-bank loads overlap that load. */
GSHMEMI_DEV char *gshmemi_ll_to(const gshmemi_team *t, int j, size_t off) {
    return gshmemi_at(t->scratch + (size_t)t->my_idx * t->scratch_bytes + 2 * off,
                      gshmemi_member_off(t, j));
}
/* What a one-shot call on channel c can work out before it may touch any data, from the
 * parameters and the constant bank alone: its slice, the first member it sends to and where
 * that message goes, the debug level. The on-stream kernels make the plan before their PDL
 * wait, so these loads (cold in a block's first instructions) overlap the previous kernel's
 * end instead of adding to the critical path. n elements of es bytes, sliced in units of g. */
struct gshmemi_oneshot_plan {
    size_t lo, hi;   /* my channel's slice of each member's message, in elements */
    char *to1;       /* my message's place in member j1's scratch (parity 0) */
    int j1, debug;
};
GSHMEMI_DEV gshmemi_oneshot_plan gshmemi_oneshot_plan_of(const gshmemi_team *t, size_t n, size_t g,
                                                         size_t es, int c, int nch) {
    gshmemi_oneshot_plan P;
    gshmemi_slice(n, c, nch, g, &P.lo, &P.hi);
    P.j1 = t->my_idx + 1 < t->size ? t->my_idx + 1 : 0;
    P.to1 = gshmemi_ll_to(t, P.j1, P.lo * es);
    P.debug = gshmemi_dstate.debug;
    return P;
}

/* One-shot combine straight from the LL words: pair p of the slice (8 bytes: 8 / sizeof(T)
 * elements) combines members 0 .. upto-1 in order (mine from `own`, the others' from my
 * scratch, at byte `off` of every buffer) into dest. Members past upto (scans) sent one
 * empty word, which is waited for all the same. The thread that sent pair p combines it, so
 * dest == own is safe. */
template <class T, int OP>
GSHMEMI_DEV void gshmemi_ll_reduce(const gshmemi_team *t, uint32_t f, T *dest, const T *own,
                                       size_t off, size_t nb, int upto, unsigned rank,
                                       unsigned size, const char *call) {
    typedef gshmemi_acc<T> AC;
    typedef typename AC::t A;
    typedef gshmemi_rop<OP> R;
    constexpr int E = 8 / sizeof(T);
    const int m = t->size, me = t->my_idx;
    const size_t np = gshmemi_ll_pairs(nb);
    for (size_t p = rank; p < np; p += size) {
        const size_t left = nb > 8 * p ? (nb - 8 * p) / sizeof(T) : 0;
        const int ne = left < (size_t)E ? (int)left : E;
        A acc[E];
#pragma unroll
        for (int i = 0; i < E; i++) acc[i] = AC::in((T)0);
        T mine[E];   /* loaded before the waits: its latency hides behind them */
        if (me < upto)
#pragma unroll
            for (int i = 0; i < E; i++) mine[i] = i < ne ? own[p * E + i] : (T)0;
        bool first = true;
        for (int j = 0; j < m; j++) {
            T x[E];
            if (j == me) {
                if (j >= upto) continue;
#pragma unroll
                for (int i = 0; i < E; i++) x[i] = mine[i];
            } else {
                const char *area = gshmemi_ll_area(t, f, j) + 2 * off;
                if (j >= upto) {
                    if (p == 0) (void)gshmemi_ll_pair(area, 0, f, call);
                    continue;
                }
                uint64_t d = gshmemi_ll_pair(area, p, f, call);
                memcpy(x, &d, 8);
            }
#pragma unroll
            for (int i = 0; i < E; i++) acc[i] = first ? AC::in(x[i]) : R::f(acc[i], AC::in(x[i]));
            first = false;
        }
#pragma unroll
        for (int i = 0; i < E; i++)
            if (i < ne) dest[p * E + i] = AC::out(acc[i]);
    }
}

/* One-shot moves, receiving side: pair p of my slice (bytes [lo, lo + bn) of each member's
 * part) from every member's message, straight into dest, and of my own part, copied
 * locally. A broadcast's non-roots sent one empty word, waited for all the same. */
GSHMEMI_DEV void gshmemi_ll_gather(const gshmemi_team *t, uint32_t f, int what, char *d,
                                       const char *s, size_t nb, size_t lo, size_t bn, int root,
                                       unsigned rank, unsigned size, const char *call) {
    const int m = t->size, me = t->my_idx;
    const bool bc = what == GSHMEMI_MOVE_BROADCAST, a2a = what == GSHMEMI_MOVE_ALLTOALL;
    const bool own = !bc || (me == root && d != s);
    const size_t np = gshmemi_ll_pairs(bn);
    for (size_t p = rank; p < np; p += size) {
        if (own) {   /* first: it waits for nothing */
            const char *from = (a2a ? s + (size_t)me * nb : s) + lo;
            char *to = (bc ? d : d + (size_t)me * nb) + lo;
            gshmemi_ll_store4(to, 8 * p, bn, gshmemi_ll_load4(from, 8 * p, bn));
            gshmemi_ll_store4(to, 8 * p + 4, bn, gshmemi_ll_load4(from, 8 * p + 4, bn));
        }
        for (int jj = 1; jj < m; jj++) {
            int j = me >= jj ? me - jj : me + m - jj;
            const char *area = gshmemi_ll_area(t, f, j) + 2 * lo;
            if (bc && j != root) {
                if (p == 0) (void)gshmemi_ll_pair(area, 0, f, call);
                continue;
            }
            uint64_t v = gshmemi_ll_pair(area, p, f, call);
            char *to = (bc ? d : d + (size_t)j * nb) + lo;
            gshmemi_ll_store4(to, 8 * p, bn, (uint32_t)v);
            gshmemi_ll_store4(to, 8 * p + 4, bn, (uint32_t)(v >> 32));
        }
    }
}

#endif
