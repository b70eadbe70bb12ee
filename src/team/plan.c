/* The one place where a host or on-stream collective's path is chosen (plan.h): algorithm,
 * channels and threads, for team syncs, moves and reductions. Every member makes the same
 * choice, since it depends only on arguments every member passes alike, the team and the
 * job-wide configuration (the copy-engine path excepted: its rounds are the general kernel's,
 * channel for channel, so members need not agree on it). */
#include "gshmem/device/coll/rule.h"
#include "config.h"
#include "cuda_util.h"
#include "placement.h"
#include "plan.h"

/* Threads per block of the two-round kernels and the most channels they run, per family, as
 * measured on 2 x H200: reductions (NVLink loads and stores) did best with 128
 * blocks of 256 threads, moves (stores only) with 128 blocks of 512 (128 MiB broadcast:
 * 432 us; 256 threads 442; 64 blocks 444; 32 blocks 482; 16: 566). */
static int threads_of(int t, int dflt) {
    return t >= 32 && t <= GSHMEMI_COLL_MAX_THREADS && t % 32 == 0 ? t : dflt;
}
static int most_of(int n) { return n >= 1 && n <= GSHMEMI_MAX_CHANNELS ? n : GSHMEMI_MAX_CHANNELS; }
static int oneshot_most(int n) {
    return n >= 1 && n <= GSHMEMI_ONESHOT_CHANNELS ? n : GSHMEMI_ONESHOT_CHANNELS;
}
#define REDUCE_THREADS threads_of(gshmemi_cfg.COLL_THREADS, 256)
#define MOVE_THREADS threads_of(gshmemi_cfg.COLL_MOVE_THREADS, 512)
#define REDUCE_CHANNELS most_of(gshmemi_cfg.COLL_MAX_CHANNELS)
#define MOVE_CHANNELS most_of(gshmemi_cfg.COLL_MOVE_CHANNELS)
#define COLLECT_CHANNELS 8   /* collect: counts differ per PE, so a fixed count */
#define SYNC_THREADS 32      /* team sync: one warp, whose lanes split the flag stores and waits */

static gshmemi_coll_plan plan(int algo, int nch, int threads) {
    gshmemi_coll_plan p = {algo, nch, threads, 0};
    return p;
}

/* Members on other nodes: the one-block cross-node kernel, with rule.h's algorithm. */
static gshmemi_coll_plan xnode_plan(int xalgo) {
    gshmemi_coll_plan p = plan(GSHMEMI_ALGO_XNODE, 1, GSHMEMI_XNODE_THREADS);
    p.xalgo = xalgo;
    return p;
}

/* ---- arithmetic ------------------------------------------------------------------------- */
int gshmemi_plan_oneshot_channels(size_t nb, size_t units, size_t g, size_t chunk, int most) {
    if (chunk < 16) chunk = 16;
    if (g < 1) g = 1;
    size_t k = (nb + chunk - 1) / chunk;
    if (most >= 1 && k > (size_t)most) k = (size_t)most;
    if (k < 1) k = 1;
    for (;;) {   /* fewer channels until the last slice is not empty; k only shrinks */
        size_t per = gshmemi_slice_per(units, (int)k, g);
        size_t need = per ? (units + per - 1) / per : 1;   /* the slices that are not empty */
        if (need < 1) need = 1;
        if (need >= k) return (int)k;
        k = need;
    }
}

size_t gshmemi_plan_oneshot_pairs(size_t units, size_t g, size_t es, int nch) {
    size_t lo, hi;
    gshmemi_slice(units, 0, nch, g < 1 ? 1 : g, &lo, &hi);   /* slice 0 is the largest */
    size_t bytes = (hi - lo) * es;
    return bytes ? (bytes + 7) / 8 : 1;
}

/* Two-round channels: one per COLL_CHANNEL_BYTES of the call's traffic per PE, up to the
 * family's cap. */
static int tworound_channels(size_t traffic, int most) {
    size_t n = traffic / gshmemi_cfg.COLL_CHANNEL_BYTES;
    if (n < 1) n = 1;
    if (n > (size_t)most) n = (size_t)most;
    return gshmemi_place_cap_blocks((int)n);
}

/* A message that fits the scratch: one channel per COLL_ONESHOT_CHUNK bytes, each of one
 * thread per LL pair of its slice, in whole warps (an 8-byte call runs one warp, whose block
 * barriers are nearly free). Unless one channel would poll more than the device rule lets one
 * group (gshmemi_oneshot): then the general kernel on those channels. `pair_ok`: the
 * collective has a one-pair form, which runs when a block has a thread for every pair. */
static gshmemi_coll_plan oneshot(const struct gshmemi_team *t, size_t nb, size_t units, size_t g,
                                 size_t es, bool pair_ok, int tworound_threads) {
    int most = gshmemi_place_cap_blocks(oneshot_most(gshmemi_cfg.COLL_ONESHOT_CHANNELS));
    int nch = gshmemi_plan_oneshot_channels(nb, units, g, gshmemi_cfg.COLL_ONESHOT_CHUNK, most);
    if (!gshmemi_oneshot(t, nb, nch)) return plan(GSHMEMI_ALGO_TWO_ROUND, nch, tworound_threads);
    size_t pairs = gshmemi_plan_oneshot_pairs(units, g, es, nch);
    size_t want = (pairs + 31) / 32 * 32;
    int threads = (int)(want < GSHMEMI_COLL_MAX_THREADS ? want : GSHMEMI_COLL_MAX_THREADS);
    bool one = pair_ok && pairs <= GSHMEMI_COLL_MAX_THREADS;
    return plan(one ? GSHMEMI_ALGO_ONESHOT_PAIR : GSHMEMI_ALGO_ONESHOT, nch, threads);
}

/* ---- plans ------------------------------------------------------------------------------ */
gshmemi_coll_plan gshmemi_plan_sync(const struct gshmemi_team *t) {
    (void)t;
    return plan(GSHMEMI_ALGO_SYNC, 1, SYNC_THREADS);
}

/* The copy engine carries a broadcast's, fcollect's or alltoall's data past COLL_CE_MIN per
 * member (386 GB/s over NVLink on H200, against ~350 for SM stores; coll.c says how), except
 * on a stream being captured: the fork to the internal copy-engine stream would pull that
 * shared stream into the capture. Asked last: the capture query is a CUDA call. */
static bool copy_engine(int what, int m, size_t nb, void *stream) {
    uint64_t min = gshmemi_cfg.COLL_CE_MIN;
    if (what != GSHMEMI_MOVE_BROADCAST && what != GSHMEMI_MOVE_FCOLLECT && what != GSHMEMI_MOVE_ALLTOALL)
        return false;
    /* a broadcast on three members or more takes the scatter-allgather kernel (move.h), whose
     * middle round the copy-engine path does not make */
    if (what == GSHMEMI_MOVE_BROADCAST && m >= 3) return false;
    return min && nb >= min && !gshmemi_stream_capturing(stream);
}

gshmemi_coll_plan gshmemi_plan_move(const struct gshmemi_team *t, int what, size_t nb, void *stream) {
    if (t->remote) return xnode_plan(gshmemi_xnode_move_algo(t, what, nb, gshmemi_cfg.DEBUG));
    if (what == GSHMEMI_MOVE_COLLECT)
        return plan(GSHMEMI_ALGO_TWO_ROUND, gshmemi_place_cap_blocks(COLLECT_CHANNELS), MOVE_THREADS);
    if (gshmemi_move_has_oneshot(what) && gshmemi_oneshot_fits(t, nb))
        return oneshot(t, nb, nb, 16, 1, false, MOVE_THREADS);
    /* traffic per PE: a broadcast's root writes every other member's copy (on three members or
       more each member writes about the message once: scatter-allgather); the others move one
       block to (or from) every member */
    size_t m = (size_t)t->size;
    size_t traffic = what == GSHMEMI_MOVE_BROADCAST ? (m >= 3 ? nb : nb * (m - 1)) : nb * m;
    int nch = tworound_channels(traffic, MOVE_CHANNELS);
    if (copy_engine(what, (int)m, nb, stream)) return plan(GSHMEMI_ALGO_COPY_ENGINE, nch, MOVE_THREADS);
    return plan(GSHMEMI_ALGO_TWO_ROUND, nch, MOVE_THREADS);
}

gshmemi_coll_plan gshmemi_plan_reduce(const struct gshmemi_team *t, int what, size_t nelems,
                                      size_t es, bool in_place) {
    if (t->remote) return xnode_plan(gshmemi_xnode_reduce_algo(t, what, nelems * es, gshmemi_cfg.DEBUG));
    size_t m = (size_t)t->size, nb = nelems * es, g = 16 / es;
    if (gshmemi_oneshot_fits(t, nb))
        return oneshot(t, nb, nelems, g, es, what == GSHMEMI_COLL_REDUCE, REDUCE_THREADS);
    /* two-round traffic per PE: reads and writes of about 2 * nb (reduce-scatter: nb * m) */
    size_t traffic = what == GSHMEMI_COLL_REDUCESCATTER ? nb * m : 2 * nb;
    /* The 2-member variants of an out-of-place reduce, each from its own size threshold
       (0 = never): all-read, each member computes the whole vector (every byte crosses NVLink
       as a read, nb of traffic); push, every byte crosses as a write (half of each source to
       the member that owns it, then each member's half of the result). */
    if (what == GSHMEMI_COLL_REDUCE && m == 2 && !in_place) {
        uint64_t allread = gshmemi_cfg.COLL_ALLREAD_MIN, push = gshmemi_cfg.COLL_PUSH_MIN;
        if (allread && nb >= allread)
            return plan(GSHMEMI_ALGO_ALLREAD, tworound_channels(nb, REDUCE_CHANNELS), REDUCE_THREADS);
        if (push && nb >= push)
            return plan(GSHMEMI_ALGO_PUSH, tworound_channels(traffic, REDUCE_CHANNELS), REDUCE_THREADS);
    }
    return plan(GSHMEMI_ALGO_TWO_ROUND, tworound_channels(traffic, REDUCE_CHANNELS), REDUCE_THREADS);
}
