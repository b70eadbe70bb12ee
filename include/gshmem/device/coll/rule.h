/* The rules that choose a collective's path, written once for both sides: how a message is cut
 * into channel slices, and whether it takes the one-shot path. The host's plan
 * (src/team/plan.c) calls them to choose the kernel, channels and threads of a host or
 * on-stream call; a collective called in a user's kernel gets no host plan and calls the same
 * functions, so the two sides cannot disagree. Plain C as well as CUDA: plan.c includes it. */
#ifndef GSHMEM_DEVICE_COLL_RULE_H
#define GSHMEM_DEVICE_COLL_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include "gshmem/types.h"
#include "gshmem/device/state.h"

#ifdef __CUDACC__
#define GSHMEMI_HD static __host__ __device__ __forceinline__
#else
#define GSHMEMI_HD static inline
#endif

/* Elements in a slice (the last may have fewer) when n elements are cut into nch slices in
 * multiples of g: ceil(n / nch) rounded up to g. */
GSHMEMI_HD size_t gshmemi_slice_per(size_t n, int nch, size_t g) {
    size_t per = (n + (size_t)nch - 1) / (size_t)nch;
    return (per + g - 1) / g * g;
}
/* Slice c of nch of [0, n), in multiples of g elements. */
GSHMEMI_HD void gshmemi_slice(size_t n, int c, int nch, size_t g, size_t *lo, size_t *hi) {
    if (nch == 1) {
        *lo = c ? n : 0;
        *hi = n;
        return;
    }
    size_t per = gshmemi_slice_per(n, nch, g);
    size_t a = (size_t)c * per;
    *lo = a < n ? a : n;
    *hi = a + per < n ? a + per : n;
}

/* Whether a message of nb bytes per member fits the team's one-shot scratch: the team has
 * scratch and the message fits half of it (the other half is the other parity). */
GSHMEMI_HD bool gshmemi_oneshot_fits(const gshmemi_team *t, size_t nb) {
    return t->scratch && nb <= t->scratch_bytes / 2;
}
/* Whether a message of nb bytes per member takes the one-shot path on nch channels: it fits
 * the scratch, and one group (a user's kernel, or a small on-stream call) handles at most
 * 32 KiB: a lone thread or warp polling 16-byte words one by one is slower than two rounds
 * beyond that, where the on-stream kernels spread larger messages over several blocks. */
#define GSHMEMI_ONESHOT_GROUP_MAX (32u << 10)
GSHMEMI_HD bool gshmemi_oneshot(const gshmemi_team *t, size_t nb, int nch) {
    return gshmemi_oneshot_fits(t, nb) && nch <= GSHMEMI_ONESHOT_CHANNELS &&
           (nch > 1 || nb <= GSHMEMI_ONESHOT_GROUP_MAX);
}
/* The movers that have a one-shot form (collect's sizes differ per member, alltoalls is
 * strided: they always take two rounds). */
GSHMEMI_HD bool gshmemi_move_has_oneshot(int what) {
    return what != GSHMEMI_MOVE_COLLECT && what != GSHMEMI_MOVE_ALLTOALLS;
}
GSHMEMI_HD bool gshmemi_move_oneshot_ok(const gshmemi_team *t, int what, size_t nb, int nch) {
    return gshmemi_move_has_oneshot(what) && gshmemi_oneshot(t, nb, nch);
}

/* Across nodes (a team with remote members), whether an all-reduce or fcollect of nb bytes per
 * member (a reduce-scatter or alltoall whose whole source is nb bytes) takes the push path
 * (xnode.h): every member put_signals its message into a slot
 * of every member's one-shot scratch, one network trip, instead of the pull path's arrival
 * round, gets and completion round (three or more). The team needs scratch (the predefined
 * teams have it) and the message fits a slot; past 32 KiB the pull path's reduce-scatter
 * shares the work. Debug mode (GSHMEM_DEBUG >= 1) always pulls: its arrival round checks the
 * members' signatures. */
#define GSHMEMI_XNODE_PUSH_MAX (32u << 10)
GSHMEMI_HD bool gshmemi_xnode_push_ok(const gshmemi_team *t, size_t nb, int debug) {
    return t->scratch && t->size >= 2 && nb <= t->scratch_bytes && nb <= GSHMEMI_XNODE_PUSH_MAX && debug < 1;
}

/* Across nodes, whether an all-reduce, reduce-scatter or fcollect too large to push goes
 * hierarchically (xnode.h): a node-blocked team (host: team.c sets node_size) combines or
 * gathers inside each node by load/store and sends each byte across the network once per node
 * pair instead of once per member pair (half the bytes at 2 members per node), for the flat
 * pull path's cross-node rounds or one more (reduce-scatter) and two node rounds by load/store.
 * GSHMEM_COLL_XNODE_HIER=0 makes every team flat (node_size 0). */
GSHMEMI_HD bool gshmemi_xnode_hier_ok(const gshmemi_team *t) {
    return t->node_size >= 2 && t->size >= 2 * t->node_size;
}

/* The algorithm of a collective on a team across nodes, decided here alone: the host's plan
 * (plan.c) records it for the on-stream kernels, and a collective in a user's kernel, which has
 * no plan, asks the same functions (GSHMEMI_XNODE_AUTO, xnode.h). nb: bytes per member. Push
 * for all-reduce, reduce-scatter, fcollect and alltoall whose whole source fits a slot;
 * hierarchical for the first three on node-blocked teams; pull otherwise. */
enum { GSHMEMI_XNODE_AUTO = 0, GSHMEMI_XNODE_PULL, GSHMEMI_XNODE_PUSH, GSHMEMI_XNODE_HIER };
/* pushable: the collective has a push form; each: its source holds a block per member (the
 * whole source is what must fit); hier: it has a hierarchical form */
GSHMEMI_HD int gshmemi_xnode_algo(const gshmemi_team *t, bool pushable, bool each, bool hier, size_t nb,
                                  int debug) {
    if (pushable && gshmemi_xnode_push_ok(t, (each ? (size_t)t->size : 1) * nb, debug)) return GSHMEMI_XNODE_PUSH;
    return hier && gshmemi_xnode_hier_ok(t) ? GSHMEMI_XNODE_HIER : GSHMEMI_XNODE_PULL;
}
GSHMEMI_HD int gshmemi_xnode_reduce_algo(const gshmemi_team *t, int what, size_t nb, int debug) {
    const bool rs = what == GSHMEMI_COLL_REDUCESCATTER, both = rs || what == GSHMEMI_COLL_REDUCE;   /* not scans */
    return gshmemi_xnode_algo(t, both, rs, both, nb, debug);
}
GSHMEMI_HD int gshmemi_xnode_move_algo(const gshmemi_team *t, int what, size_t nb, int debug) {
    const bool a2a = what == GSHMEMI_MOVE_ALLTOALL, fc = what == GSHMEMI_MOVE_FCOLLECT;
    return gshmemi_xnode_algo(t, fc || a2a, a2a, fc, nb, debug);
}

#endif
