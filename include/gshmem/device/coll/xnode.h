/* Collectives on teams whose members span nodes: every member reads what it needs from the
 * others (gets: load/store from PEs of its node, the proxy from PEs of other nodes) between
 * team rounds, and never writes another member's memory, so no symmetric scratch is needed.
 * Data of other nodes lands in the team's landing buffer (`xtmp`, heap memory of this PE
 * alone) in chunks of xtmp_bytes / size per member. Reductions combine in member order (the
 * same bits as the one-node paths). Included by coll/api.h (not in GSHMEM_LOAD_STORE_ONLY
 * units); docs/collectives.md
 * "Across nodes" says which algorithm runs and what it costs.
 *
 * Rounds (team.h; across nodes an arrival costs a SIGNAL SET through the proxy, and the leader
 * quiets the ring first, so a round also completes this PE's earlier gets):
 *   arrival:    every member's source is ready (written before its arrival, stream or program
 *               order) and, for collect, its count is in every member's vals;
 *   middle:     (reduce) every member's block of the result is in its dest;
 *   completion: every member has finished reading this PE's source and dest, which the caller
 *               may then overwrite.
 *
 * Small all-reduces, reduce-scatters, fcollects and alltoalls push instead: one network trip,
 * no round (gshmemi_xnode_push below). Larger ones on node-blocked teams go hierarchically:
 * inside each node by load/store, across the network only between members of one local index
 * (gshmemi_xnode_hier_*). Which one runs is rule.h's gshmemi_xnode_reduce_algo /
 * gshmemi_xnode_move_algo: the host's plan passes it to the on-stream kernels (`algo`), a
 * device form passes GSHMEMI_XNODE_AUTO and the same function decides here. */
#ifndef GSHMEM_DEVICE_COLL_XNODE_H
#define GSHMEM_DEVICE_COLL_XNODE_H

#include "../rma.h"
#include "../signal.h"
#include "../sync.h"
#include "reduce.h"
#include "move.h"
#include "xops.h"

/* Whether member j is reached by load/store (else through the proxy). */
GSHMEMI_DEV bool gshmemi_xnode_local(const gshmemi_team *t, int j) {
    return gshmemi_slot_of(&gshmemi_dstate, gshmemi_team_pe(t, j)) >= 0;
}

/* v into world PE pe's copy of the symmetric word `sym`: a store on this node, a p through the
 * proxy (completed by the next round's quiet) to another node. */
GSHMEMI_DEV void gshmemi_xnode_set(uint64_t *sym, uint64_t v, int pe, const char *call) {
    uint64_t *p = gshmemi_peer(sym, pe, 8, call);
    if (p) gshmemi_st_relaxed(p, v);
    else gshmemi_remote_p(sym, v, 8, pe, call);
}

/* A plain copy for the cross-node algorithms, whose time is the network's: 16-byte vectors where
 * both sides allow, no unrolling (few registers). */
GSHMEMI_DEV void gshmemi_xnode_copy_plain(char *d, const char *s, size_t n, unsigned rank, unsigned size) {
    size_t k = 0;
    if ((((uintptr_t)d | (uintptr_t)s) & 15) == 0) {
        const size_t nv = n / 16;
        for (size_t v = rank; v < nv; v += size) ((int4 *)d)[v] = __ldcg((const int4 *)s + v);
        k = nv * 16;
    }
    for (k += rank; k < n; k += size) d[k] = (char)__ldcg((const signed char *)s + k);
}
/* A group's nbi get and a copy, out of line and lean: the algorithms below keep only their own
 * state in registers, and every kernel that may run them still launches with the block sizes
 * docs/collectives.md promises (tests/unit/test_registers.sh). */
template <class S>
GSHMEMI_COLL_FN void gshmemi_xnode_get(void *dest, const void *src, size_t nbytes, int pe, const char *call) {
    const int slot = gshmemi_route(src, pe, nbytes, call);
    if (slot >= 0)
        return gshmemi_xnode_copy_plain((char *)dest, (const char *)gshmemi_at(src, slot), nbytes, S::rank(), S::size());
    S::sync();
    if (S::rank() == 0)
        gshmemi_remote_op_body<GSHMEMI_RWAIT_NONE>(
            gshmemi_rdesc(GSHMEM_PROXY_OP_GET, pe, nbytes, src, (uint64_t)(uintptr_t)dest), call);
    S::sync();
}
GSHMEMI_COLL_FN void gshmemi_xnode_copy(void *dest, const void *src, size_t nbytes, unsigned rank, unsigned size) {
    gshmemi_xnode_copy_plain((char *)dest, (const char *)src, nbytes, rank, size);
}

/* The group's nbi gets complete: load/store copies by the group's threads (the barrier), the
 * proxy's by a quiet of the ring (acquire: the landed data is visible to the group after the
 * second barrier). */
template <class S> GSHMEMI_DEV void gshmemi_xnode_quiet(const char *call) {
    S::sync();
    if (S::rank() == 0) gshmemi_remote_quiet_to(gshmemi_remote_mark(), call);
    S::sync();
}

/* A round on channel 0 (the team's only channel across nodes), routed: members of other
 * nodes are reached through the remote channel (sync.h). */
template <class S> GSHMEMI_DEV void gshmemi_xnode_round(const gshmemi_team *t, const char *call) {
    S::sync();
    if (S::rank() == 0)
        gshmemi_count_round_remote(t->size, t->my_idx, t->epochs, t->flags, gshmemi_team_cells{t, 0, call}, call);
    S::sync();
}

/* The arrival round, with the debug signature (GSHMEM_DEBUG >= 1): the leader writes
 * (collective count, signature) into its cell of every member's sigs (a store, or a p through
 * the proxy that the round's quiet completes), and checks every member's cell after the round. */
template <class S>
GSHMEMI_DEV void gshmemi_xnode_arrive(const gshmemi_team *t, int team, unsigned sig, const char *call) {
    uint64_t n = 0;
    if (gshmemi_dstate.debug >= 1 && S::rank() == 0) {
        n = *(volatile uint64_t *)t->ncoll + 1;
        *(volatile uint64_t *)t->ncoll = n;
        uint64_t *cell = t->sigs + (n & 1) * t->size + t->my_idx;
        for (int j = 0; j < t->size; j++) gshmemi_xnode_set(cell, (n << 32) | sig, gshmemi_team_pe(t, j), call);
    }
    gshmemi_xnode_round<S>(t, call);
    gshmemi_sig_check<S>(t, team, 0, n, sig, call);
}

static __device__ __noinline__ void gshmemi_xnode_no_tmp(const char *call, int team, int m) {
    GSHMEMI_DEVICE_FAIL("%s on team %d: the team spans nodes but its landing buffer has no room for "
                        "its %d members (raise GSHMEM_COLL_XNODE_BYTES)", call, team, m);
}

/* Elements per slot when the landing buffer is cut into `slots` slots of 16-byte multiples (the
 * flat paths: one per member; the hierarchical ones: one per other node). */
GSHMEMI_DEV size_t gshmemi_xnode_chunk(const gshmemi_team *t, size_t es, int slots) {
    size_t per = t->xtmp_bytes / (size_t)slots / 16 * 16;
    return per / es;
}

/* Inputs of a cross-node combine over elements [c0, c0 + ce): member j's source where it is
 * reached by load/store, else its landing slot (the q-th member after me in slot q - 1). */
template <class T> struct gshmemi_in_xnode {
    const gshmemi_team *t;
    const T *src, *tmp;
    size_t c0, ce;
    __device__ __forceinline__ const T *ptr(int j) const {
        const int m = t->size, me = t->my_idx;
        if (gshmemi_xnode_local(t, j)) return gshmemi_at(src, gshmemi_member_off(t, j));
        int q = j > me ? j - me : j - me + m;
        return tmp + (size_t)(q - 1) * ce - c0;
    }
    __device__ __forceinline__ bool aligned16() const { return ((uintptr_t)src & 15) == 0; }
};

/* Posts gets of [c0, c1) of every remote member j < upto's `from` (a symmetric array) into its
 * landing slot at tmp (the q-th member after me in slot q - 1, ce elements apart); nothing waits
 * for them (gshmemi_xnode_fetch does, gshmemi_xnode_wait_for a part). */
template <class T, class S>
GSHMEMI_DEV void gshmemi_xnode_post(const gshmemi_team *t, const T *from, size_t c0, size_t c1, size_t ce,
                                    int upto, T *tmp, const char *call) {
    const int m = t->size, me = t->my_idx;
    for (int q = 1; q < m; q++) {
        int j = me + q < m ? me + q : me + q - m;
        if (j >= upto || gshmemi_xnode_local(t, j)) continue;
        gshmemi_xnode_get<S>(tmp + (size_t)(q - 1) * ce, from + c0, (c1 - c0) * sizeof(T),
                              gshmemi_team_pe(t, j), call);
    }
}

/* The same into the landing buffer's start, completed. */
template <class T, class S>
GSHMEMI_DEV void gshmemi_xnode_fetch(const gshmemi_team *t, const T *from, size_t c0, size_t c1,
                                     size_t ce, int upto, const char *call) {
    gshmemi_xnode_post<T, S>(t, from, c0, c1, ce, upto, (T *)t->xtmp, call);
    gshmemi_xnode_quiet<S>(call);
}

/* The ring's ticket after everything the group posted so far (meaningful in the leader). */
template <class S> GSHMEMI_DEV uint64_t gshmemi_xnode_mark() {
    S::sync();
    return gshmemi_remote_mark();
}

/* A partial quiet: every descriptor of the ring before ticket `tk` completed (what was posted
 * after it may still be in flight); acquire, so the landed data is visible to the group. */
template <class S> GSHMEMI_DEV void gshmemi_xnode_wait_for(uint64_t tk, const char *call) {
    S::sync();
    if (S::rank() == 0) gshmemi_remote_quiet_to(tk, call);
    S::sync();
}

/* The push path: this call's count k (t->seqs[0], this PE's alone) picks parity f = k & 1 of
 * the team's scratch, [f][member] slots of scratch_bytes. My message goes first into my own
 * slot (so the caller may reuse src at once, and the proxy reads it from there later), then
 * with put_signal (SIGNAL_ADD 1) into slot `me` of every other member: stores on my node, the
 * proxy to other nodes, the signal after the data. The team's channel-1 flags (the one-node
 * rounds' extra channels, never used by a team that spans nodes) count the arrivals, one word
 * per parity: after call k, word f holds (k + f) / 2 * (m - 1). Returns the parity's slots,
 * every member's message in place.
 * Slot reuse: my call k + 2 writes slot `me` of parity f at member j again only after j's
 * call k + 1 message reached me, which j sent after it finished call k, reading that slot; the
 * proxy's read of my own slot for call k happened before any member could receive my call
 * k + 1 message, which every member's call k + 2 waits for. So no round is needed. */
template <class S>
GSHMEMI_DEV const char *gshmemi_xnode_push(const gshmemi_team *t, const void *src, size_t nb, bool each,
                                           const char *call) {
    const int m = t->size, me = t->my_idx;
    const uint64_t k = *(volatile uint64_t *)t->seqs + 1;
    S::sync();
    if (S::rank() == 0) *(volatile uint64_t *)t->seqs = k;
    const uint32_t f = (uint32_t)(k & 1);
    char *area = t->scratch + (size_t)f * (size_t)m * t->scratch_bytes;
    char *mine = area + (size_t)me * t->scratch_bytes;
    gshmemi_xnode_copy(mine, src, each ? (size_t)m * nb : nb, S::rank(), S::size());
    /* the copy's threads are not the put_signals' (a load/store put_signal copies at once, in
     * its own partition of the bytes): the whole of my slot is written before any is sent */
    S::sync();
    uint64_t *sig = t->flags + (size_t)m + f;
    for (int q = 1; q < m; q++) {
        int j = me + q < m ? me + q : me + q - m;
        gshmemi_put_signal<S, false>(mine, mine + (each ? (size_t)j * nb : 0), nb, sig, 1, GSHMEM_SIGNAL_ADD,
                                     gshmemi_team_pe(t, j), call);
    }
    if (S::rank() == 0) gshmemi_wait<uint64_t>(sig, GSHMEM_CMP_GE, (k + f) / 2 * (uint64_t)(m - 1), call);
    S::sync();
    return area;
}

/* Inputs of a pushed reduction: member j's message at the start of slot j; my own at element
 * `own` of my slot (a reduce-scatter's block me of my staged source; 0 for an all-reduce). */
template <class T> struct gshmemi_in_slots {
    const T *area;
    size_t stride;   /* elements per slot */
    int me;
    size_t own;
    __device__ __forceinline__ const T *ptr(int j) const {
        return area + (size_t)j * stride + (j == me ? own : 0);
    }
    __device__ __forceinline__ bool aligned16() const {
        return (((uintptr_t)area | (own * sizeof(T))) & 15) == 0;
    }
};

/* ---- hierarchical (gshmemi_xnode_hier_ok: a node-blocked team, node_size L members on each of
 * N nodes, member j = a * L + l on node a with local index l) -------------------------------
 * Inside a node by load/store, between nodes only between the members of one local index
 * (a, l) and (a', l): each byte crosses the network once per node pair instead of once per
 * member pair. Node rounds (row GSHMEMI_XNODE_NODE_ROW of the team's flags, never used by a
 * team across nodes otherwise) synchronize one node's members by load/store; team rounds
 * (channel 0, through the proxy) the whole team. */
#define GSHMEMI_XNODE_NODE_ROW 2

/* Where I am in a node-blocked team: N nodes of L members, me = a * L + l, my node's first
 * member base. */
struct gshmemi_xnode_place {
    int L, N, a, l, base;
    __device__ __forceinline__ explicit gshmemi_xnode_place(const gshmemi_team *t)
        : L(t->node_size), N(t->size / t->node_size), a(t->my_idx / t->node_size),
          l(t->my_idx - t->my_idx / t->node_size * t->node_size), base(t->my_idx / t->node_size * t->node_size) {}
};

struct gshmemi_node_cells {   /* my cell in row NODE_ROW of member base + j, by load/store */
    const gshmemi_team *t;
    int base;
    const char *call;
    __device__ __forceinline__ uint64_t *operator()(int j) const {
        return gshmemi_team_cell(t, GSHMEMI_XNODE_NODE_ROW, base + j, t->my_idx, call);
    }
};

/* A round of my node's members only (their stores before it are visible after it). */
template <class S> GSHMEMI_COLL_FN void gshmemi_xnode_node_round(const gshmemi_team *t, const char *call) {
    const gshmemi_xnode_place x(t);
    const int L = x.L, base = x.base;
    S::sync();
    gshmemi_count_round_ls<S, true>(L, x.l, t->epochs + GSHMEMI_XNODE_NODE_ROW,
                                    t->flags + (size_t)GSHMEMI_XNODE_NODE_ROW * t->size + base,
                                    gshmemi_node_cells{t, base, call}, call);
}

/* Inputs of a node's combine: member base + i's `src` (symmetric), i < L, by load/store. */
template <class T> struct gshmemi_in_node {
    const gshmemi_team *t;
    const T *src;
    int base;
    __device__ __forceinline__ const T *ptr(int i) const { return gshmemi_at(src, gshmemi_member_off(t, base + i)); }
    __device__ __forceinline__ bool aligned16() const { return ((uintptr_t)src & 15) == 0; }
};

/* Inputs of the combine across nodes, in node order: node a's partial in `mine` (my dest), node
 * a - s's in landing slot s - 1 (ce elements apart, holding [c0, c0 + ce)). */
template <class T> struct gshmemi_in_nodes {
    const T *mine, *tmp;
    int a, N;
    size_t ce, c0;
    __device__ __forceinline__ const T *ptr(int b) const {
        if (b == a) return mine;
        const int s = a >= b ? a - b : a - b + N;
        return tmp + (size_t)(s - 1) * ce - c0;
    }
    __device__ __forceinline__ bool aligned16() const { return (((uintptr_t)mine | (uintptr_t)tmp) & 15) == 0; }
};

/* The nodes' partials of [c0, c1) (mine in dest, the others' landed) combined in node order
 * into dest, in place (after the group's gets completed). */
template <class C, class S, int U>
GSHMEMI_DEV void gshmemi_xnode_combine_nodes(typename C::T *dest, const typename C::T *tmp, int a, int N, size_t ce,
                                             size_t c0, size_t c1, gshmemi_rk rk) {
    typedef typename C::T T;
    gshmemi_xcombine<C, U>(gshmemi_in_nodes<T>{dest, tmp, a, N, ce, c0}, dest, N, c0, c1, S::rank(), S::size(), rk);
    S::sync();
}

/* All-reduce, hierarchical: I own slice l of the result (n cut in L). (1) My node's partial of
 * slice l (its members' sources combined in member order) into my dest; a team round. (2) Two
 * nodes: chunk by chunk of the landing buffer, the other node's partial of slice l lands (a get
 * of (a', l)'s dest), a team round (it fetched mine too), the partials combined in node order in
 * place: slice l of the result, the same bits at (a, l) and (a', l). More nodes: slice l is cut
 * in N pieces and (b, l) owns piece b: I fetch piece a of every other node's partial, combine
 * them in place (nobody else reads my piece a), a team round, and fetch the other pieces of the
 * result from their owners: 2 (N-1)/N of a slice over the network instead of N-1 slices. (3) A
 * node round, the other slices by load/store from their owners on my node, a node round (a team
 * round after the pieces: the other nodes read mine). */
template <class C, class S, int U>
GSHMEMI_COLL_FN void gshmemi_xnode_hier_allreduce(const gshmemi_team *t, int team, typename C::T *dest,
                                                  const typename C::T *src, size_t n, gshmemi_rk rk, const char *call) {
    typedef typename C::T T;
    const gshmemi_xnode_place x(t);
    const int L = x.L, N = x.N, a = x.a, l = x.l, base = x.base;
    constexpr size_t G = 16 / sizeof(T);
    const unsigned r = S::rank(), z = S::size();
    const size_t ce = gshmemi_xnode_chunk(t, sizeof(T), N - 1);
    if (ce == 0) gshmemi_xnode_no_tmp(call, team, t->size);
    T *tmp = (T *)t->xtmp;
    gshmemi_xnode_arrive<S>(t, team, gshmemi_sig(100 + GSHMEMI_COLL_REDUCE, sizeof(T), rk.op, n, 0), call);
    size_t lo, hi;
    gshmemi_slice(n, l, L, G, &lo, &hi);
    gshmemi_xcombine<C, U>(gshmemi_in_node<T>{t, src, base}, dest, L, lo, hi, r, z, rk);
    gshmemi_xnode_round<S>(t, call);   /* every partial in its owner's dest */
    if (N == 2) {
        const int other = (1 - a) * L + l;
        const size_t chunks = (gshmemi_slice_per(n, L, G) + ce - 1) / ce;   /* the same at every member */
        for (size_t i = 0; i < chunks; i++) {
            const size_t c0 = lo + i * ce < hi ? lo + i * ce : hi, c1 = c0 + ce < hi ? c0 + ce : hi;
            if (c1 > c0) gshmemi_xnode_get<S>(tmp, dest + c0, (c1 - c0) * sizeof(T), gshmemi_team_pe(t, other), call);
            /* its quiet completes my get; its arrivals say the other node's get of mine did */
            gshmemi_xnode_round<S>(t, call);
            gshmemi_xnode_combine_nodes<C, S, U>(dest, tmp, a, N, ce, c0, c1, rk);
        }
    } else {
        size_t plo, phi;   /* my piece of slice l */
        gshmemi_slice(hi - lo, a, N, G, &plo, &phi);
        plo += lo;
        phi += lo;
        for (size_t c0 = plo; c0 < phi; c0 += ce) {   /* no team round inside: counts may differ */
            const size_t c1 = c0 + ce < phi ? c0 + ce : phi;
            for (int s = 1; s < N; s++)
                gshmemi_xnode_get<S>(tmp + (size_t)(s - 1) * ce, dest + c0, (c1 - c0) * sizeof(T),
                                      gshmemi_team_pe(t, (a - s + N) % N * L + l), call);
            gshmemi_xnode_quiet<S>(call);
            gshmemi_xnode_combine_nodes<C, S, U>(dest, tmp, a, N, ce, c0, c1, rk);
        }
        gshmemi_xnode_round<S>(t, call);   /* every piece of the result in its owner's dest */
        for (int s = 1; s < N; s++) {
            const int b = (a + s) % N;
            size_t blo, bhi;
            gshmemi_slice(hi - lo, b, N, G, &blo, &bhi);
            if (bhi > blo)
                gshmemi_xnode_get<S>(dest + lo + blo, dest + lo + blo, (bhi - blo) * sizeof(T),
                                      gshmemi_team_pe(t, b * L + l), call);
        }
        gshmemi_xnode_quiet<S>(call);
    }
    gshmemi_xnode_node_round<S>(t, call);   /* every slice of the result in its owner's dest */
    for (int i = 1; i < L; i++) {
        const int li = (l + i) % L;
        size_t jlo, jhi;
        gshmemi_slice(n, li, L, G, &jlo, &jhi);
        if (jhi > jlo)
            gshmemi_xnode_copy(dest + jlo, gshmemi_at(dest, gshmemi_member_off(t, base + li)) + jlo,
                                      (jhi - jlo) * sizeof(T), r, z);
    }
    /* my node finished reading my source and dest (and, past two nodes, the others my piece) */
    if (N == 2) gshmemi_xnode_node_round<S>(t, call);
    else gshmemi_xnode_round<S>(t, call);
}

/* Reduce-scatter, hierarchical (my block me = a L + l): for each step s = 1 .. N-1, my node's
 * partial of the block of (a + s, l) goes into my dest, a team round, I fetch the partial of my
 * block that (a - s, l) made for me, a team round; then my node's own partial goes into dest and
 * the N partials are combined in node order. Chunked by the landing buffer (the same count at
 * every member: the blocks are alike); a node round at the end (my node read my source). */
template <class C, class S, int U>
GSHMEMI_COLL_FN void gshmemi_xnode_hier_reducescatter(const gshmemi_team *t, int team, typename C::T *dest,
                                                      const typename C::T *src, size_t n, gshmemi_rk rk,
                                                      const char *call) {
    typedef typename C::T T;
    const gshmemi_xnode_place x(t);
    const int L = x.L, N = x.N, a = x.a, l = x.l, base = x.base, me = t->my_idx;
    const unsigned r = S::rank(), z = S::size();
    const size_t ce = gshmemi_xnode_chunk(t, sizeof(T), N - 1);
    if (ce == 0) gshmemi_xnode_no_tmp(call, team, t->size);
    T *tmp = (T *)t->xtmp;
    gshmemi_xnode_arrive<S>(t, team, gshmemi_sig(100 + GSHMEMI_COLL_REDUCESCATTER, sizeof(T), rk.op, n, 0), call);
    for (size_t c0 = 0; c0 < n; c0 += ce) {
        const size_t c1 = c0 + ce < n ? c0 + ce : n;
        for (int s = 1; s < N; s++) {
            const int to = (a + s) % N * L + l;   /* who fetches this step's partial from me */
            gshmemi_xcombine<C, U>(gshmemi_in_node<T>{t, src + (size_t)to * n, base}, dest, L,
                                                       c0, c1, r, z, rk);
            gshmemi_xnode_round<S>(t, call);
            gshmemi_xnode_get<S>(tmp + (size_t)(s - 1) * ce, dest + c0, (c1 - c0) * sizeof(T),
                                  gshmemi_team_pe(t, (a - s + N) % N * L + l), call);
            gshmemi_xnode_round<S>(t, call);   /* mine was fetched: dest is free again */
        }
        gshmemi_xcombine<C, U>(gshmemi_in_node<T>{t, src + (size_t)me * n, base}, dest, L, c0,
                                                   c1, r, z, rk);
        S::sync();
        gshmemi_xnode_combine_nodes<C, S, U>(dest, tmp, a, N, ce, c0, c1, rk);
    }
    gshmemi_xnode_node_round<S>(t, call);
}

/* Reductions: what = REDUCE (all-reduce: reduce-scatter by owner blocks, then every member
 * reads every block), REDUCESCATTER (member k's dest = the combine of block k of every source),
 * INSCAN / EXSCAN (sum over members <= k / < k; exscan's member 0 gets zeros). */
template <class C, class S, int U = 1, bool FULL = true>
GSHMEMI_COLL_FN void gshmemi_xnode_reduce_c(const gshmemi_team *t, int team, int what, typename C::T *dest,
                                            const typename C::T *src, size_t n, int algo, gshmemi_rk rk,
                                            const char *call) {
    typedef typename C::T T;
    const int m = t->size, me = t->my_idx;
    constexpr size_t G = 16 / sizeof(T);
    const size_t ce = gshmemi_xnode_chunk(t, sizeof(T), m);
    if (ce == 0) gshmemi_xnode_no_tmp(call, team, m);
    gshmemi_coll_check_bufs(dest, n * sizeof(T), src,
                            (what == GSHMEMI_COLL_REDUCESCATTER ? (size_t)m : 1) * n * sizeof(T), call);
    /* push: an all-reduce sends its source to every member, a reduce-scatter block j of it to
     * member j (its whole source is staged: m blocks) */
    const bool each = what == GSHMEMI_COLL_REDUCESCATTER;
    if (algo == GSHMEMI_XNODE_AUTO) algo = gshmemi_xnode_reduce_algo(t, what, n * sizeof(T), gshmemi_dstate.debug);
    if (!FULL) algo = GSHMEMI_XNODE_PULL;
    if (FULL && algo == GSHMEMI_XNODE_PUSH) {
        const char *area = gshmemi_xnode_push<S>(t, src, n * sizeof(T), each, call);
        gshmemi_in_slots<T> x{(const T *)area, t->scratch_bytes / sizeof(T), me, each ? (size_t)me * n : 0};
        gshmemi_xcombine<C, 1>(x, dest, m, 0, n, S::rank(), S::size(), rk);
        S::sync();
        return;
    }
    if (FULL && algo == GSHMEMI_XNODE_HIER)
        return each ? gshmemi_xnode_hier_reducescatter<C, S, U>(t, team, dest, src, n, rk, call)
                    : gshmemi_xnode_hier_allreduce<C, S, U>(t, team, dest, src, n, rk, call);
    gshmemi_xnode_arrive<S>(t, team, gshmemi_sig(100 + what, sizeof(T), rk.op, n, 0), call);
    const bool rs = what == GSHMEMI_COLL_REDUCESCATTER;
    const bool scan = what == GSHMEMI_COLL_INSCAN || what == GSHMEMI_COLL_EXSCAN;
    /* my range of the source and where its result goes (dest + k - out0) */
    size_t lo = 0, hi = n;
    if (what == GSHMEMI_COLL_REDUCE) gshmemi_slice(n, me, m, G, &lo, &hi);
    const T *in = rs ? src + (size_t)me * n : src;   /* the block every member combines */
    const int upto = what == GSHMEMI_COLL_INSCAN ? me + 1 : what == GSHMEMI_COLL_EXSCAN ? me : m;
    /* scans: later members may still read my source while I have my result (in place: the
     * same memory), so each chunk's result waits in my own landing slot (slot m - 1) for a
     * round; always, so that every member makes the same rounds whatever its buffers */
    const bool park = scan;
    /* Reduce-scatter (and all-reduce's first half) takes more than one chunk: double-buffered.
     * The landing buffer's two halves take alternate chunks of ch elements per member, and the
     * gets of chunk i + 1 are posted before chunk i is waited for (a partial quiet up to its
     * ticket) and combined, so the network never idles between chunks; chunk i + 2 reuses chunk
     * i's half only after its combine (the group sync ending each step). */
    const size_t ch = ce / 2 / G * G;
    if (FULL && !park && ch && hi - lo > ce) {
        T *half[2] = {(T *)t->xtmp, (T *)t->xtmp + (size_t)m * ch};
        size_t c0 = lo, c1 = lo + ch < hi ? lo + ch : hi;
        gshmemi_xnode_post<T, S>(t, in, c0, c1, ch, upto, half[0], call);
        uint64_t tk = gshmemi_xnode_mark<S>();
        for (int h = 0; c0 < hi; h ^= 1) {
            const size_t n0 = c1, n1 = n0 + ch < hi ? n0 + ch : hi;
            uint64_t tk_next = 0;
            if (n0 < hi) {
                gshmemi_xnode_post<T, S>(t, in, n0, n1, ch, upto, half[h ^ 1], call);
                tk_next = gshmemi_xnode_mark<S>();
            }
            gshmemi_xnode_wait_for<S>(tk, call);
            gshmemi_in_xnode<T> x{t, in, half[h], c0, ch};
            gshmemi_xcombine<C, U>(x, dest, upto, c0, c1, S::rank(), S::size(), rk);
            S::sync();
            c0 = n0;
            c1 = n1;
            tk = tk_next;
        }
        lo = hi;   /* done: the loop below has nothing left */
    }
    for (size_t c0 = lo; c0 < hi; c0 += ce) {
        const size_t c1 = c0 + ce < hi ? c0 + ce : hi;
        gshmemi_xnode_fetch<T, S>(t, in, c0, c1, ce, upto, call);
        T *out = park ? (T *)t->xtmp + (size_t)(m - 1) * ce - c0 : dest;
        if (upto == 0) {   /* exscan's member 0 */
            for (size_t k = c0 + S::rank(); k < c1; k += S::size()) out[k] = (T)0;
        } else {
            /* c0 and the slots are 16-byte multiples: vectors where dest and source allow */
            gshmemi_in_xnode<T> x{t, in, (const T *)t->xtmp, c0, ce};
            gshmemi_xcombine<C, U>(x, out, upto, c0, c1, S::rank(), S::size(), rk);
        }
        S::sync();
        if (park) {
            gshmemi_xnode_round<S>(t, call);
            for (size_t k = c0 + S::rank(); k < c1; k += S::size()) dest[k] = out[k];
            S::sync();
        }
    }
    if (what == GSHMEMI_COLL_REDUCE) {
        gshmemi_xnode_round<S>(t, call);   /* every block of the result is in its owner's dest */
        for (int q = 1; q < m; q++) {
            int j = me + q < m ? me + q : me + q - m;
            size_t jlo, jhi;
            gshmemi_slice(n, j, m, G, &jlo, &jhi);
            if (jhi > jlo)
                gshmemi_xnode_get<S>(dest + jlo, dest + jlo, (jhi - jlo) * sizeof(T), gshmemi_team_pe(t, j), call);
        }
        gshmemi_xnode_quiet<S>(call);
    }
    gshmemi_xnode_round<S>(t, call);
}

/* A reduction of element type T with operator OP across nodes: its storage class's algorithms
 * with the operator at run time (xops.h). */
template <class T, int OP, class S, int U = 1>
GSHMEMI_DEV void gshmemi_xnode_reduce(const gshmemi_team *t, int team, int what, T *dest, const T *src, size_t n,
                                      int algo, const char *call) {
    typedef typename gshmemi_xc_of<T>::C C;
    gshmemi_xnode_reduce_c<C, S, U, false>(t, team, what, (typename C::T *)dest, (const typename C::T *)src, n, algo,
                                    gshmemi_rk_of<T>(OP), call);
}

/* alltoalls: member j's block me (strided) into my block j, element size ES. */
template <class S, int ES>
GSHMEMI_DEV void gshmemi_xnode_strided(char *d, const char *s, ptrdiff_t dst, ptrdiff_t sst, size_t n,
                                       const gshmemi_team *t, const char *call) {
    const int m = t->size, me = t->my_idx;
    for (int j = 0; j < m; j++)
        gshmemi_strided<S, true, ES>(d + (size_t)j * n * dst * ES, s + (size_t)me * n * sst * ES, dst, sst, n,
                                     gshmemi_team_pe(t, j), call);
}

/* fcollect, hierarchical: the blocks of my local index (member (a', l)'s source, for every node
 * a') land in my dest (gets from the other nodes, mine by a copy); a team round (every such
 * column is in its member's dest, and every member finished reading my source); my node's other
 * columns by load/store from their members' dests; a node round (they finished reading mine). */
template <class S>
GSHMEMI_COLL_FN void gshmemi_xnode_hier_fcollect(const gshmemi_team *t, int team, unsigned sig, char *d,
                                                 const char *s, size_t nb, const char *call) {
    const gshmemi_xnode_place x(t);
    const int L = x.L, N = x.N, a = x.a, l = x.l, base = x.base, me = t->my_idx;
    const unsigned r = S::rank(), z = S::size();
    gshmemi_xnode_arrive<S>(t, team, sig, call);
    for (int q = 1; q < N && nb; q++) {
        const int j = (a + q) % N * L + l;
        gshmemi_xnode_get<S>(d + (size_t)j * nb, s, nb, gshmemi_team_pe(t, j), call);
    }
    if (nb && d + (size_t)me * nb != s) gshmemi_xnode_copy(d + (size_t)me * nb, s, nb, r, z);
    gshmemi_xnode_round<S>(t, call);   /* its quiet completes my gets */
    for (int i = 1; i < L; i++) {
        const int li = (l + i) % L;
        const char *from = gshmemi_at((const char *)d, gshmemi_member_off(t, base + li));
        for (int b = 0; b < N; b++) {
            const size_t at = (size_t)(b * L + li) * nb;
            gshmemi_xnode_copy(d + at, from + at, nb, r, z);
        }
    }
    gshmemi_xnode_node_round<S>(t, call);
}

/* Movers: every member gets what lands in its own dest. broadcast: the root's source (the
 * root copies its own); fcollect/collect: member j's source to block j (collect: at the sum of
 * the counts of members before j, which each member stored in every member's vals before its
 * arrival); alltoall: member j's block me to block j; alltoalls: the same, strided. */
template <class S, bool FULL = true>
GSHMEMI_COLL_FN void gshmemi_xnode_move(const gshmemi_team *t, int team, int what, void *dest,
                                        const void *src, size_t n, size_t es, int root, ptrdiff_t dst,
                                        ptrdiff_t sst, int algo, const char *call) {
    const int m = t->size, me = t->my_idx;
    const size_t nb = n * es;
    char *d = (char *)dest;
    const char *s = (const char *)src;
    if (what == GSHMEMI_MOVE_BROADCAST && (root < 0 || root >= m)) gshmemi_coll_bad_root(call, root, m);
    gshmemi_coll_check_bufs(dest, what == GSHMEMI_MOVE_BROADCAST ? nb : what == GSHMEMI_MOVE_COLLECT ? 0 : nb * m,
                            src, what == GSHMEMI_MOVE_ALLTOALL ? nb * m : what == GSHMEMI_MOVE_ALLTOALLS ? 0 : nb,
                            call);
    /* push: fcollect sends its source to every member, alltoall block j of it to member j */
    const bool each = what == GSHMEMI_MOVE_ALLTOALL;
    if (algo == GSHMEMI_XNODE_AUTO) algo = gshmemi_xnode_move_algo(t, what, nb, gshmemi_dstate.debug);
    if (!FULL) algo = GSHMEMI_XNODE_PULL;
    if (FULL && algo == GSHMEMI_XNODE_PUSH) {
        const char *area = gshmemi_xnode_push<S>(t, src, nb, each, call);
        for (int j = 0; j < m; j++)
            gshmemi_xnode_copy(d + (size_t)j * nb,
                                      area + (size_t)j * t->scratch_bytes + (j == me && each ? (size_t)me * nb : 0),
                                      nb, S::rank(), S::size());
        S::sync();
        return;
    }
    if (FULL && algo == GSHMEMI_XNODE_HIER) {
        gshmemi_xnode_hier_fcollect<S>(t, team, gshmemi_move_sig(what, n, es, root, dst, sst), d, s, nb, call);
        return;
    }
    if (what == GSHMEMI_MOVE_COLLECT && S::rank() == 0)
        for (int j = 0; j < m; j++) gshmemi_xnode_set(t->vals + me, (uint64_t)n, gshmemi_team_pe(t, j), call);
    gshmemi_xnode_arrive<S>(t, team, gshmemi_move_sig(what, n, es, root, dst, sst), call);
    if (what == GSHMEMI_MOVE_ALLTOALLS) {
        switch (es) {
        case 1: gshmemi_xnode_strided<S, 1>(d, s, dst, sst, n, t, call); break;
        case 2: gshmemi_xnode_strided<S, 2>(d, s, dst, sst, n, t, call); break;
        case 4: gshmemi_xnode_strided<S, 4>(d, s, dst, sst, n, t, call); break;
        case 8: gshmemi_xnode_strided<S, 8>(d, s, dst, sst, n, t, call); break;
        default: gshmemi_xnode_strided<S, 16>(d, s, dst, sst, n, t, call); break;
        }
    } else {
        for (int q = 0; q < m; q++) {
            int j = me + q < m ? me + q : me + q - m;   /* myself first: the local copy overlaps */
            int pe = gshmemi_team_pe(t, j);
            if (what == GSHMEMI_MOVE_BROADCAST) {
                if (j != root) continue;
                if (nb && (d != s || me != root)) gshmemi_xnode_get<S>(d, s, nb, pe, call);
            } else if (what == GSHMEMI_MOVE_COLLECT) {
                size_t at = 0, len = 0;
                for (int i = 0; i <= j; i++) {
                    size_t c = (size_t)gshmemi_ld_relaxed(t->vals + i) * es;
                    if (i < j) at += c;
                    else len = c;
                }
                if (len && (d + at != s || j != me)) gshmemi_xnode_get<S>(d + at, s, len, pe, call);
            } else {
                const char *from = what == GSHMEMI_MOVE_ALLTOALL ? s + (size_t)me * nb : s;
                if (nb && (d + (size_t)j * nb != from || j != me))
                    gshmemi_xnode_get<S>(d + (size_t)j * nb, from, nb, pe, call);
            }
        }
    }
    gshmemi_xnode_quiet<S>(call);
    gshmemi_xnode_round<S>(t, call);
}

#endif
