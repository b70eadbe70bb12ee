/* Proves the plans of the host and on-stream collectives (src/team/plan.c). Arithmetic:
 * one-shot channel counts are between 1 and the most allowed, no more than one per chunk, and
 * every slice the device cuts (gshmemi_slice, the device's own function) is non-empty and the
 * slices tile the message; the one-shot thread count is the pairs of the largest slice. Choices,
 * over sizes, families, team sizes and settings: a plan and the device's rule (rule.h, which the
 * general kernel applies again) agree on one-shot against two rounds; channels and threads stay
 * in the kernels' bounds and the placement's cap; the one-pair kernel gets a thread for every
 * pair; the copy engine is chosen only for large broadcast, fcollect and alltoall, never on a
 * stream being captured, and the capture is asked only then; the 2-member reduce variants only
 * out of place; teams across nodes take the one-block cross-node kernel with the algorithm
 * rule.h's functions give (push, hierarchical, pull). And the plans the docs cite for the
 * defaults (docs/collectives.md). */
#include <stdio.h>

#include "gshmem/device/coll/rule.h"
#include "config.h"
#include "cuda_util.h"
#include "placement.h"
#include "../../src/team/plan.h"
#include "unit.h"

/* What plan.c reads besides gshmemi_cfg (config.c): the placement, and the stream's capture
 * state, here a switch that counts the questions. */
gshmemi_placement gshmemi_place;
static bool capturing;
static int capture_asked;
bool gshmemi_stream_capturing(void *stream) {
    (void)stream;
    capture_asked++;
    return capturing;
}

/* ---- arithmetic --------------------------------------------------------------------------- */
static void check_oneshot(size_t units, size_t es, size_t g, size_t chunk, int most) {
    size_t nb = units * es;
    int k = gshmemi_plan_oneshot_channels(nb, units, g, chunk, most);
    size_t cap = (nb + (chunk < 16 ? 16 : chunk) - 1) / (chunk < 16 ? 16 : chunk);
    bool ok = k >= 1 && k <= most && ((size_t)k <= cap || k == 1);
    size_t next = 0;
    for (int c = 0; ok && c < k; c++) {
        size_t lo, hi;
        gshmemi_slice(units, c, k, g, &lo, &hi);
        if (lo != next || (units && hi <= lo)) ok = false;   /* contiguous, non-empty */
        next = hi;
    }
    if (next != units) ok = false;
    EXPECT(ok, "oneshot_channels(nb %zu, units %zu, g %zu, chunk %zu, most %d) = %d: a slice is empty, "
          "out of order, or the count is out of range", nb, units, g, chunk, most, k);
}

/* the one-shot thread count: exactly the pairs of the largest slice */
static void check_pairs(size_t units, size_t es, size_t g, int nch) {
    size_t most = 0;
    for (int c = 0; c < nch; c++) {
        size_t lo, hi;
        gshmemi_slice(units, c, nch, g, &lo, &hi);
        size_t bytes = (hi - lo) * es, pairs = bytes ? (bytes + 7) / 8 : 1;
        if (pairs > most) most = pairs;
    }
    size_t got = gshmemi_plan_oneshot_pairs(units, g, es, nch);
    EXPECT(got == most, "oneshot_pairs(units %zu, g %zu, es %zu, nch %d) = %zu, slices need %zu",
           units, g, es, nch, got, most);
}

/* ---- choices ------------------------------------------------------------------------------ */
static char scratch[1];   /* never touched: a plan only asks whether a team has scratch */

static gshmemi_team team_of(int m, uint64_t scratch_bytes, int remote) {
    gshmemi_team t = {0};
    t.size = m;
    t.scratch = scratch_bytes ? scratch : NULL;
    t.scratch_bytes = scratch_bytes;
    t.remote = remote;
    return t;
}

static bool is_oneshot(gshmemi_coll_plan p) {
    return p.algo == GSHMEMI_ALGO_ONESHOT || p.algo == GSHMEMI_ALGO_ONESHOT_PAIR;
}

/* What every plan of a one-node team keeps to; nb: bytes per member, units of es bytes sliced
 * in multiples of g. */
static void check_bounds(gshmemi_coll_plan p, size_t units, size_t g, size_t es, const char *what,
                         size_t nb) {
    int cap = gshmemi_place.coll_max_blocks;
    int most = is_oneshot(p) ? GSHMEMI_ONESHOT_CHANNELS : GSHMEMI_MAX_CHANNELS;
    EXPECT(p.nch >= 1 && p.nch <= most && (cap <= 0 || p.nch <= cap),
           "%s %zu bytes: %d channels (most %d, cap %d)", what, nb, p.nch, most, cap);
    EXPECT(p.threads >= 32 && p.threads <= GSHMEMI_COLL_MAX_THREADS && p.threads % 32 == 0,
           "%s %zu bytes: %d threads", what, nb, p.threads);
    if (is_oneshot(p)) {
        size_t pairs = gshmemi_plan_oneshot_pairs(units, g, es, p.nch);
        EXPECT((size_t)p.threads >= pairs || p.threads == GSHMEMI_COLL_MAX_THREADS,
               "%s %zu bytes: one-shot on %d threads for %zu pairs", what, nb, p.threads, pairs);
        EXPECT(p.algo != GSHMEMI_ALGO_ONESHOT_PAIR || (size_t)p.threads >= pairs,
               "%s %zu bytes: one-pair kernel on %d threads for %zu pairs", what, nb, p.threads, pairs);
    }
}

static void check_move(const gshmemi_team *t, int what, size_t nb) {
    static const char *names[] = {"broadcast", "fcollect", "collect", "alltoall", "alltoalls"};
    for (int cap = 0; cap < 2; cap++) {
        capturing = cap;
        capture_asked = 0;
        gshmemi_coll_plan p = gshmemi_plan_move(t, what, nb, NULL);
        /* (a broadcast on three members or more takes the scatter-allgather kernel instead) */
        bool ce_family = (what == GSHMEMI_MOVE_BROADCAST && t->size < 3) || what == GSHMEMI_MOVE_FCOLLECT ||
                         what == GSHMEMI_MOVE_ALLTOALL;
        bool ce_size = gshmemi_cfg.COLL_CE_MIN && nb >= gshmemi_cfg.COLL_CE_MIN &&
                       !gshmemi_oneshot_fits(t, nb);
        if (t->remote) {
            EXPECT(p.algo == GSHMEMI_ALGO_XNODE && p.nch == 1 && p.threads == GSHMEMI_XNODE_THREADS &&
                       p.xalgo == gshmemi_xnode_move_algo(t, what, nb, gshmemi_cfg.DEBUG) &&
                       p.xalgo != GSHMEMI_XNODE_AUTO,
                   "%s across nodes: algo %d (%d), %d x %d", names[what], p.algo, p.xalgo, p.nch, p.threads);
            continue;
        }
        check_bounds(p, nb, 16, 1, names[what], nb);
        /* the general kernel applies the device's rule again: it must come out the same */
        EXPECT(is_oneshot(p) == gshmemi_move_oneshot_ok(t, what, nb, p.nch),
               "%s %zu bytes on %d members: plan algo %d on %d channels, device rule says %d",
               names[what], nb, t->size, p.algo, p.nch, gshmemi_move_oneshot_ok(t, what, nb, p.nch));
        EXPECT(p.algo != GSHMEMI_ALGO_ONESHOT_PAIR && p.algo != GSHMEMI_ALGO_ALLREAD &&
                   p.algo != GSHMEMI_ALGO_PUSH,
               "%s %zu bytes: a reduction's algorithm %d", names[what], nb, p.algo);
        EXPECT((p.algo == GSHMEMI_ALGO_COPY_ENGINE) == (ce_family && ce_size && !cap),
               "%s %zu bytes, capturing %d: algo %d", names[what], nb, cap, p.algo);
        EXPECT(capture_asked == (ce_family && ce_size),
               "%s %zu bytes: the capture state asked %d times", names[what], nb, capture_asked);
        if (what == GSHMEMI_MOVE_COLLECT)
            EXPECT(p.algo == GSHMEMI_ALGO_TWO_ROUND && p.nch == gshmemi_place_cap_blocks(8),
                   "collect: algo %d on %d channels", p.algo, p.nch);
    }
}

static void check_reduce(const gshmemi_team *t, int what, size_t n, size_t es) {
    static const char *names[] = {"reduce", "reducescatter", "inscan", "exscan"};
    size_t nb = n * es;
    for (int in_place = 0; in_place < 2; in_place++) {
        gshmemi_coll_plan p = gshmemi_plan_reduce(t, what, n, es, in_place);
        if (t->remote) {
            EXPECT(p.algo == GSHMEMI_ALGO_XNODE && p.nch == 1 && p.threads == GSHMEMI_XNODE_THREADS &&
                       p.xalgo == gshmemi_xnode_reduce_algo(t, what, nb, gshmemi_cfg.DEBUG) &&
                       p.xalgo != GSHMEMI_XNODE_AUTO,
                   "%s across nodes: algo %d (%d), %d x %d", names[what], p.algo, p.xalgo, p.nch, p.threads);
            continue;
        }
        check_bounds(p, n, 16 / es, es, names[what], nb);
        EXPECT(is_oneshot(p) == gshmemi_oneshot(t, nb, p.nch),
               "%s %zu x %zu bytes on %d members: plan algo %d on %d channels, device rule says %d",
               names[what], n, es, t->size, p.algo, p.nch, gshmemi_oneshot(t, nb, p.nch));
        EXPECT(p.algo != GSHMEMI_ALGO_ONESHOT_PAIR || what == GSHMEMI_COLL_REDUCE,
               "%s: the one-pair kernel is reduce's alone", names[what]);
        bool pair_variant = p.algo == GSHMEMI_ALGO_ALLREAD || p.algo == GSHMEMI_ALGO_PUSH;
        EXPECT(!pair_variant || (what == GSHMEMI_COLL_REDUCE && t->size == 2 && !in_place),
               "%s %zu bytes on %d members, in place %d: 2-member variant %d", names[what], nb,
               t->size, in_place, p.algo);
        EXPECT(p.algo != GSHMEMI_ALGO_COPY_ENGINE && p.algo != GSHMEMI_ALGO_XNODE,
               "%s %zu bytes: algo %d", names[what], nb, p.algo);
    }
}

static void sweep(void) {
    static const int sizes[] = {1, 2, 3, 4, 8};
    static const uint64_t scratches[] = {0, 1u << 20, 64u << 10};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (size_t ki = 0; ki < sizeof scratches / sizeof scratches[0]; ki++)
            for (int remote = 0; remote < 2; remote++) {
                gshmemi_team t = team_of(sizes[si], scratches[ki], remote);
                if (remote && sizes[si] >= 4 && sizes[si] % 2 == 0) t.node_size = 2;   /* 2 per node */
                for (size_t nb = 0; nb <= (256ull << 20); nb = nb < 4096 ? nb + 8 : nb * 3 / 2) {
                    for (int what = GSHMEMI_MOVE_BROADCAST; what <= GSHMEMI_MOVE_ALLTOALLS; what++)
                        check_move(&t, what, nb);
                    for (int what = GSHMEMI_COLL_REDUCE; what <= GSHMEMI_COLL_EXSCAN; what++)
                        for (size_t es = 1; es <= 8; es *= 2) check_reduce(&t, what, nb / es, es);
                }
            }
}

/* plan == (algo, nch, threads)? */
static void expect_plan(gshmemi_coll_plan p, int algo, int nch, int threads, const char *what) {
    EXPECT(p.algo == algo && p.nch == nch && p.threads == threads,
           "%s: plan (algo %d, %d x %d), expected (algo %d, %d x %d)", what, p.algo, p.nch,
           p.threads, algo, nch, threads);
}

/* The plans docs/collectives.md cites for 2 PEs with the defaults (scratch 1 MiB). */
static void check_documented(void) {
    gshmemi_team t = team_of(2, 1u << 20, 0);
    capturing = false;
    expect_plan(gshmemi_plan_reduce(&t, GSHMEMI_COLL_REDUCE, 2, 4, false), GSHMEMI_ALGO_ONESHOT_PAIR,
                1, 32, "8 B allreduce");
    expect_plan(gshmemi_plan_reduce(&t, GSHMEMI_COLL_REDUCE, 8192, 4, false),
                GSHMEMI_ALGO_ONESHOT_PAIR, 8, 512, "32 KiB allreduce");
    expect_plan(gshmemi_plan_reduce(&t, GSHMEMI_COLL_REDUCE, 65536, 4, false),
                GSHMEMI_ALGO_ONESHOT_PAIR, 64, 512, "256 KiB allreduce");
    expect_plan(gshmemi_plan_reduce(&t, GSHMEMI_COLL_REDUCE, 131072, 4, false),
                GSHMEMI_ALGO_ONESHOT, 64, 512, "512 KiB allreduce");
    expect_plan(gshmemi_plan_move(&t, GSHMEMI_MOVE_BROADCAST, 8, NULL), GSHMEMI_ALGO_ONESHOT, 1, 32,
                "8 B broadcast");
    expect_plan(gshmemi_plan_move(&t, GSHMEMI_MOVE_BROADCAST, 512u << 10, NULL), GSHMEMI_ALGO_ONESHOT,
                64, 512, "512 KiB broadcast");
    expect_plan(gshmemi_plan_move(&t, GSHMEMI_MOVE_FCOLLECT, 128u << 20, NULL),
                GSHMEMI_ALGO_COPY_ENGINE, 128, 512, "128 MiB fcollect");
    capturing = true;
    expect_plan(gshmemi_plan_move(&t, GSHMEMI_MOVE_FCOLLECT, 128u << 20, NULL),
                GSHMEMI_ALGO_TWO_ROUND, 128, 512, "128 MiB fcollect, captured");
    expect_plan(gshmemi_plan_reduce(&t, GSHMEMI_COLL_REDUCE, 32u << 20, 4, false), GSHMEMI_ALGO_PUSH,
                128, 256, "128 MiB allreduce");
    expect_plan(gshmemi_plan_reduce(&t, GSHMEMI_COLL_REDUCE, 32u << 20, 4, true),
                GSHMEMI_ALGO_TWO_ROUND, 128, 256, "128 MiB allreduce in place");
    expect_plan(gshmemi_plan_sync(&t), GSHMEMI_ALGO_SYNC, 1, 32, "team sync");
}

/* Across nodes (coll/rule.h, docs/collectives.md "Across nodes"): 4 members as 2 nodes x 2 with
 * scratch: push up to 32 KiB of whole source, then hierarchical (all-reduce, reduce-scatter,
 * fcollect) or pull (alltoall, broadcast, collect, scans); flat without node blocks; never push in
 * debug mode. */
static void expect_xalgo(int got, int want, const char *what) {
    EXPECT(got == want, "%s across nodes: algorithm %d, expected %d", what, got, want);
}
static void check_xnode(void) {
    gshmemi_team t = team_of(4, 1u << 20, 2);
    t.node_size = 2;
    capturing = false;
    expect_xalgo(gshmemi_plan_reduce(&t, GSHMEMI_COLL_REDUCE, 2, 4, false).xalgo, GSHMEMI_XNODE_PUSH, "8 B allreduce");
    expect_xalgo(gshmemi_plan_reduce(&t, GSHMEMI_COLL_REDUCE, 8192, 4, false).xalgo, GSHMEMI_XNODE_PUSH,
                 "32 KiB allreduce");
    expect_xalgo(gshmemi_plan_reduce(&t, GSHMEMI_COLL_REDUCE, 8193, 4, false).xalgo, GSHMEMI_XNODE_HIER,
                 "32 KiB + 4 B allreduce");
    expect_xalgo(gshmemi_plan_reduce(&t, GSHMEMI_COLL_REDUCESCATTER, 2048, 4, false).xalgo, GSHMEMI_XNODE_PUSH,
                 "8 KiB reduce-scatter (32 KiB source)");
    expect_xalgo(gshmemi_plan_reduce(&t, GSHMEMI_COLL_REDUCESCATTER, 2049, 4, false).xalgo, GSHMEMI_XNODE_HIER,
                 "8 KiB + 4 B reduce-scatter");
    expect_xalgo(gshmemi_plan_reduce(&t, GSHMEMI_COLL_INSCAN, 2, 4, false).xalgo, GSHMEMI_XNODE_PULL, "8 B inscan");
    expect_xalgo(gshmemi_plan_move(&t, GSHMEMI_MOVE_FCOLLECT, 8, NULL).xalgo, GSHMEMI_XNODE_PUSH, "8 B fcollect");
    expect_xalgo(gshmemi_plan_move(&t, GSHMEMI_MOVE_FCOLLECT, 1u << 20, NULL).xalgo, GSHMEMI_XNODE_HIER,
                 "1 MiB fcollect");
    expect_xalgo(gshmemi_plan_move(&t, GSHMEMI_MOVE_ALLTOALL, 8, NULL).xalgo, GSHMEMI_XNODE_PUSH, "8 B alltoall");
    expect_xalgo(gshmemi_plan_move(&t, GSHMEMI_MOVE_ALLTOALL, 1u << 20, NULL).xalgo, GSHMEMI_XNODE_PULL,
                 "1 MiB alltoall");
    expect_xalgo(gshmemi_plan_move(&t, GSHMEMI_MOVE_BROADCAST, 8, NULL).xalgo, GSHMEMI_XNODE_PULL, "8 B broadcast");
    t.node_size = 0;   /* not node-blocked, or GSHMEM_COLL_XNODE_HIER=0 */
    expect_xalgo(gshmemi_plan_reduce(&t, GSHMEMI_COLL_REDUCE, 1u << 20, 4, false).xalgo, GSHMEMI_XNODE_PULL,
                 "4 MiB allreduce, flat team");
    t.node_size = 2;
    gshmemi_cfg.DEBUG = 1;
    expect_xalgo(gshmemi_plan_reduce(&t, GSHMEMI_COLL_REDUCE, 2, 4, false).xalgo, GSHMEMI_XNODE_HIER,
                 "8 B allreduce, debug");
    gshmemi_cfg.DEBUG = 0;
}

int main(void) {
    /* reductions: elements of es bytes in groups of 16 / es; moves: bytes in groups of 16 */
    static const size_t chunks[] = {1, 16, 100, 1024, 4096, 16384};
    for (size_t ci = 0; ci < sizeof chunks / sizeof chunks[0]; ci++)
        for (size_t es = 1; es <= 8; es *= 2) {
            for (size_t units = 0; units <= (64u << 10) / es; units += units < 4096 ? 1 : 37)
                check_oneshot(units, es, 16 / es, chunks[ci], 16);
            for (size_t units = 0; units <= 3000; units++) check_oneshot(units, 1, 16, chunks[ci], 16);
            check_oneshot((256u << 10) / es, es, 16 / es, chunks[ci], 16);
            check_oneshot((512u << 10) / es, es, 16 / es, chunks[ci], 64);
            check_oneshot(7, es, 16 / es, chunks[ci], 1);
        }
    for (size_t es = 1; es <= 8; es *= 2)
        for (size_t units = 0; units <= 5000; units += units < 300 ? 1 : 7)
            for (int nch = 1; nch <= 16; nch++) check_pairs(units, es, 16 / es, nch);

    check_documented();
    check_xnode();
    sweep();
    /* settings that move the choice: a placement cap, a chunk so large that one channel would
       poll past the device's one-group limit, tuned thread counts and thresholds */
    gshmemi_place.coll_max_blocks = 4;
    sweep();
    gshmemi_place.coll_max_blocks = 0;
    gshmemi_cfg.COLL_ONESHOT_CHUNK = 1u << 20;
    gshmemi_cfg.COLL_THREADS = 96;
    gshmemi_cfg.COLL_MOVE_THREADS = 1000;   /* out of range: the default */
    gshmemi_cfg.COLL_ALLREAD_MIN = 1u << 20;
    gshmemi_cfg.COLL_CE_MIN = 1u << 20;
    sweep();
    printf("coll_plan: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
