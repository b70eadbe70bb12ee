/* The plan of a host or on-stream team sync or collective: which kernel runs (the algorithm),
 * on how many channels (blocks) of how many threads. plan.c makes it, once per call, from the
 * team, the collective, the sizes, the stream's capture state and the configuration; coll.c
 * hands it to the launchers declared below (src/device/), which launch exactly what it says.
 * Where the device must apply a rule itself (a collective called in a user's kernel), plan.c
 * and the device call the same function (gshmem/device/coll/rule.h). */
#ifndef GSHMEMI_TEAM_PLAN_H
#define GSHMEMI_TEAM_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gshmemi_team;

enum {
    GSHMEMI_ALGO_SYNC,          /* a team's count round: the team_sync kernel */
    GSHMEMI_ALGO_ONESHOT,       /* LL words through the team's scratch: the one-shot kernel */
    GSHMEMI_ALGO_ONESHOT_PAIR,  /* reduce: the one-shot kernel in its one-pair form (a thread
                                   for every LL pair of a channel's slice) */
    GSHMEMI_ALGO_TWO_ROUND,     /* the general kernel: arrival, data, completion */
    GSHMEMI_ALGO_COPY_ENGINE,   /* large moves: the two-round kernel's rounds as two kernels of
                                   one warp per channel, the data by cudaMemcpyAsync (coll.c),
                                   this member's own part by a local copy kernel */
    GSHMEMI_ALGO_ALLREAD,       /* reduce, 2 members: the general kernel, all NVLink reads */
    GSHMEMI_ALGO_PUSH,          /* reduce, 2 members: the general kernel, all NVLink writes */
    GSHMEMI_ALGO_XNODE,         /* members on other nodes: the one-block cross-node kernel */
};

typedef struct gshmemi_coll_plan {
    int algo;      /* GSHMEMI_ALGO_* */
    int nch;       /* channels: the kernel's blocks, block c on channel c */
    int threads;   /* threads per block (COPY_ENGINE: of the local copy) */
    int xalgo;     /* XNODE: GSHMEMI_XNODE_PULL / _PUSH / _HIER (coll/rule.h), else 0 */
} gshmemi_coll_plan;

/* Most threads per block of the collective kernels: their __launch_bounds__. */
#define GSHMEMI_COLL_MAX_THREADS 512
/* Threads of the one-block kernels of teams across nodes (the network, not the SMs, bounds
 * them). */
#define GSHMEMI_XNODE_THREADS 512

gshmemi_coll_plan gshmemi_plan_sync(const struct gshmemi_team *t);
/* what: GSHMEMI_MOVE_*; nb: bytes of one member's message (nelems * element size); stream:
 * where it will run (asked whether it is being captured only when the copy engine could
 * apply). */
gshmemi_coll_plan gshmemi_plan_move(const struct gshmemi_team *t, int what, size_t nb, void *stream);
/* what: GSHMEMI_COLL_*; nelems elements of es bytes; in_place: dest == source. */
gshmemi_coll_plan gshmemi_plan_reduce(const struct gshmemi_team *t, int what, size_t nelems,
                                      size_t es, bool in_place);

/* The arithmetic of one-shot plans (unit-tested by tests/unit/test_coll_plan.c).
 * Channels of a one-shot call: one per `chunk` bytes of each member's message (nb bytes), at
 * most `most`, and never one whose slice is empty, since every channel must send each member
 * at least one word. The device slices `units` (elements or bytes) in multiples of g
 * (gshmemi_slice, rule.h). */
int gshmemi_plan_oneshot_channels(size_t nb, size_t units, size_t g, size_t chunk, int most);
/* LL pairs (8 data bytes each) in the largest slice of a one-shot call on nch channels: units
 * of es bytes sliced in multiples of g (an empty slice still sends one pair). A one-shot
 * kernel gets one thread per pair; the one-pair reduce kernel relies on this count being
 * exact or more. */
size_t gshmemi_plan_oneshot_pairs(size_t units, size_t g, size_t es, int nch);


/* ---- the launchers (src/device/), each a cudaError_t ----------------------------------------
 * team_entry is the host's copy of the team's gshmemi_team (passed to the kernel by value). */
int gshmemi_launch_team_sync(void *stream, gshmemi_coll_plan p, const void *team_entry);
/* ONESHOT, TWO_ROUND or XNODE. */
int gshmemi_launch_move(void *stream, gshmemi_coll_plan p, const void *team_entry, int what,
                        int team, void *dest, const void *src, size_t n, size_t es, int root,
                        ptrdiff_t dst, ptrdiff_t sst);
/* COPY_ENGINE: the move kernel's rounds on p.nch channels (first: the arrival, else the
 * completion), and the local copy of this member's own part. */
int gshmemi_launch_move_rounds(void *stream, gshmemi_coll_plan p, const void *team_entry, int what,
                               int team, int first, size_t n, size_t es, int root, ptrdiff_t dst,
                               ptrdiff_t sst);
int gshmemi_launch_local_copy(void *stream, gshmemi_coll_plan p, void *dest, const void *src,
                              size_t n);
/* ONESHOT, ONESHOT_PAIR, TWO_ROUND, ALLREAD, PUSH or XNODE; type_code: GSHMEMI_TYPE_CODE. */
int gshmemi_launch_reduce(void *stream, gshmemi_coll_plan p, const void *team_entry, int what,
                          int op, int type_code, int team, void *dest, const void *src, size_t n);

#ifdef __cplusplus
}
#endif

#endif
