/* Data movers on one team (broadcast, fcollect, collect, alltoall, alltoalls): the one-shot
 * and two-round algorithms. */
#ifndef GSHMEM_DEVICE_COLL_MOVE_H
#define GSHMEM_DEVICE_COLL_MOVE_H

#include "oneshot.h"
#include "combine.h"

/* ---- data movers -------------------------------------------------------------------------- */
/* what: GSHMEMI_MOVE_*. n: elements of es bytes per PE (per block for alltoall[s]); root:
 * broadcast's team PE; dst/sst: alltoalls strides in elements. */
/* Entry checks of a mover on this PE: broadcast's root, members reachable, and the buffer
 * extents it touches (dest, source) in the heap (debug). */
GSHMEMI_DEV void gshmemi_move_check(const gshmemi_team *t, int what, const void *dest,
                                    const void *src, size_t nb, int root, const char *call) {
    const int m = t->size;
    if (what == GSHMEMI_MOVE_BROADCAST && (root < 0 || root >= m)) gshmemi_coll_bad_root(call, root, m);
    size_t db = what == GSHMEMI_MOVE_BROADCAST ? nb : what == GSHMEMI_MOVE_COLLECT ? 0 : nb * m;
    size_t sb = what == GSHMEMI_MOVE_ALLTOALL ? nb * m : what == GSHMEMI_MOVE_ALLTOALLS ? 0 : nb;
    gshmemi_coll_check(t, dest, db, src, sb, call);
}
GSHMEMI_DEV unsigned gshmemi_move_sig(int what, size_t n, size_t es, int root, ptrdiff_t dst,
                                      ptrdiff_t sst) {
    return gshmemi_sig(200 + what, (int)es, (int)(dst * 7919 + sst),
                       what == GSHMEMI_MOVE_COLLECT ? 0 : n, root);
}
/* One-shot broadcast, fcollect, alltoall: LL messages (my channel's slice of them) to every
 * member, received straight into dest. `run` and `body` as for reductions. */
template <class S>
GSHMEMI_DEV void gshmemi_move_oneshot_run(const gshmemi_team *t, int team, int what, void *dest,
                                          const void *src, size_t n, size_t es, int root,
                                          const gshmemi_oneshot_plan &P, int c, int nch,
                                          const char *call) {
    const int m = t->size, me = t->my_idx, j1 = P.j1;
    const size_t nb = n * es, lo = P.lo, bn = P.hi - lo;
    char *d = (char *)dest;
    const char *s = (const char *)src;
    const bool bc = what == GSHMEMI_MOVE_BROADCAST, a2a = what == GSHMEMI_MOVE_ALLTOALL;
    const size_t sbn = bc && me != root ? 0 : bn;   /* what I send each member */
    const uint2 first = gshmemi_ll_first((a2a ? s + (size_t)j1 * nb : s) + lo, sbn, S::rank());
    const uint32_t f = gshmemi_oneshot_begin<S>(t, team, c, nch, P.debug,
                                                gshmemi_move_sig(what, n, es, root, 1, 1), call);
    for (int jj = 1; jj < m; jj++) {
        int j = me + jj < m ? me + jj : me + jj - m;
        const char *from = (a2a ? s + (size_t)j * nb : s) + lo;
        char *to = (jj == 1 ? P.to1 : gshmemi_ll_to(t, j, lo)) + gshmemi_ll_parity(t, f);
        gshmemi_ll_send<S>(to, from, sbn, f, jj == 1 ? &first : NULL);
    }
    gshmemi_ll_gather(t, f, what, d, s, nb, lo, bn, root, S::rank(), S::size(), call);
    S::sync();
}
template <class S>
GSHMEMI_DEV void gshmemi_move_oneshot_body(const gshmemi_team *t, int team, int what, void *dest,
                                           const void *src, size_t n, size_t es, int root,
                                           int c, int nch, const char *call) {
    gshmemi_move_check(t, what, dest, src, n * es, root, call);
    const gshmemi_oneshot_plan P = gshmemi_oneshot_plan_of(t, n * es, 16, 1, c, nch);
    gshmemi_move_oneshot_run<S>(t, team, what, dest, src, n, es, root, P, c, nch, call);
}
template <class S>
GSHMEMI_COLL_FN void gshmemi_move_oneshot(const gshmemi_team *t, int team, int what, void *dest,
                                          const void *src, size_t n, size_t es, int root, int c,
                                          int nch, const char *call) {
    gshmemi_move_oneshot_body<S>(t, team, what, dest, src, n, es, root, c, nch, call);
}

/* Broadcast of my channel's slice [lo, hi) on three members or more: scatter, then allgather
 * among the members that are not the root. The slice is cut in m - 1 pieces (16-byte multiples);
 * piece k belongs to the k-th member after the root. The root writes every piece into its
 * owner's dest (and the whole slice into its own, unless in place); a middle round; then every
 * owner writes its piece into the dest of every other member but the root. The root's link
 * carries the message once instead of m - 1 times (a broadcast from one member was bound by the
 * root's NVLink: 130 GB/s of bus bandwidth on 4 x H200 at 256 MiB, against 344 for NCCL's
 * ring). Every member makes the same rounds: the caller's arrival and completion, and this
 * middle one. */
template <class S>
GSHMEMI_DEV void gshmemi_bcast_scatter_allgather(const gshmemi_team *t, char *d, const char *s, size_t lo,
                                                 size_t hi, int root, int c, const char *call) {
    const int m = t->size, me = t->my_idx, pieces = m - 1;
    if (me == root) {
        for (int k0 = 0; k0 < pieces; k0++) {   /* staggered by channel: members are not all hit at once */
            const int k = (k0 + c) % pieces, owner = (root + 1 + k) % m;
            size_t plo, phi;
            gshmemi_slice(hi - lo, k, pieces, 16, &plo, &phi);
            gshmemi_move_copy<S>(gshmemi_at(d, gshmemi_member_off(t, owner)) + lo + plo, s + lo + plo, phi - plo);
        }
        if (d != s) gshmemi_move_copy<S>(d + lo, s + lo, hi - lo);
    }
    S::sync();
    gshmemi_coll_round<S>(t, c, call);   /* every piece is in its owner's dest */
    if (me == root) return;
    const int k = (me - root - 1 + m) % m;
    size_t plo, phi;
    gshmemi_slice(hi - lo, k, pieces, 16, &plo, &phi);
    for (int j0 = 0; j0 < pieces - 1; j0++) {   /* the other owners, staggered by channel */
        const int j = (root + 1 + (k + 1 + (j0 + c) % (pieces - 1)) % pieces) % m;
        gshmemi_move_copy<S>(gshmemi_at(d, gshmemi_member_off(t, j)) + lo + plo, d + lo + plo, phi - plo);
    }
}

template <class S>
GSHMEMI_DEV void gshmemi_move_t(const gshmemi_team *t, int team, int what, void *dest,
                                const void *src, size_t n, size_t es, int root, ptrdiff_t dst,
                                ptrdiff_t sst, int c, int nch, const char *call) {
    if (gshmemi_move_oneshot_ok(t, what, n * es, nch)) {
        gshmemi_move_oneshot<S>(t, team, what, dest, src, n, es, root, c, nch, call);
        return;
    }
    const int m = t->size, me = t->my_idx;
    const size_t nb = n * es;
    char *d = (char *)dest;
    const char *s = (const char *)src;
    gshmemi_move_check(t, what, dest, src, nb, root, call);
    unsigned sig = gshmemi_move_sig(what, n, es, root, dst, sst);
    if (what == GSHMEMI_MOVE_COLLECT && S::rank() == 0)  /* my count, before my arrival flag */
        for (int j = 0; j < m; j++)
            gshmemi_st_relaxed(gshmemi_peer_known(t->vals + me, gshmemi_team_pe(t, j), call),
                               (uint64_t)n);
    gshmemi_arrive<S>(t, team, c, sig, call);
    size_t lo, hi;
    if (what == GSHMEMI_MOVE_ALLTOALLS) {
        gshmemi_slice(n, c, nch, 1, &lo, &hi);
        for (int j = 0; j < m; j++)
            gshmemi_move_strided<S>(gshmemi_at(d + ((size_t)me * n + lo) * dst * es, gshmemi_member_off(t, j)),
                                    s + ((size_t)j * n + lo) * sst * es, dst, sst, hi - lo, es);
    } else if (what == GSHMEMI_MOVE_COLLECT) {
        size_t off = 0;
        for (int j = 0; j < me; j++) off += gshmemi_ld_relaxed(t->vals + j);
        gshmemi_slice(nb, c, nch, 16, &lo, &hi);
        for (int j = 0; j < m; j++) {   /* staggered by channel as below */
            int jj = (me + 1 + j + c) % m;
            gshmemi_move_copy<S>(gshmemi_at(d + off * es + lo, gshmemi_member_off(t, jj)), s + lo, hi - lo);
        }
    } else {
        gshmemi_slice(nb, c, nch, 16, &lo, &hi);
        /* Each channel starts with another member (channel c with the c-th after me), so
         * the copy into my own dest (an HBM copy, fast) overlaps other channels' NVLink
         * copies instead of adding to them, and members do not all hit one member at once. */
        if (what == GSHMEMI_MOVE_BROADCAST && m >= 3) {
            gshmemi_bcast_scatter_allgather<S>(t, d, s, lo, hi, root, c, call);
        } else if (what == GSHMEMI_MOVE_BROADCAST) {
            if (me == root)
                for (int j = 0; j < m; j++) {
                    int jj = (me + 1 + j + c) % m;
                    char *to = gshmemi_at(d, gshmemi_member_off(t, jj)) + lo;
                    if (to != s + lo) gshmemi_move_copy<S>(to, s + lo, hi - lo);
                }
        } else {
            for (int j = 0; j < m; j++) {
                int jj = (me + 1 + j + c) % m;
                const char *from = (what == GSHMEMI_MOVE_ALLTOALL ? s + (size_t)jj * nb : s) + lo;
                gshmemi_move_copy<S>(gshmemi_at(d + (size_t)me * nb + lo, gshmemi_member_off(t, jj)), from, hi - lo);
            }
        }
    }
    S::sync();
    gshmemi_coll_round<S>(t, c, call);
}

#endif
