/* Teams on the device: lookup, my_pe/n_pes/translate, and the flag rounds every collective
 * is built from. A round on channel c: each member adds 1 to its own cell of every other
 * member's flag row c (one fence first, so the adds release what the group wrote before),
 * then waits until every other cell of its own row has reached its own count of rounds on c
 * (acquire): gshmemi_count_round in sync.h. Counts only grow (one counter per team, channel
 * and PE), so flags never need a reset and a member that runs ahead never confuses a slower
 * one: cells are compared with >=. */
#ifndef GSHMEM_DEVICE_TEAM_H
#define GSHMEM_DEVICE_TEAM_H

#include "state.h"
#include "copy.h"
#include "sync.h"

static __device__ __noinline__ void gshmemi_bad_team(const char *call, int team) {
    GSHMEMI_DEVICE_FAIL("%s: team %d is not a valid team on this PE (destroyed, never created, "
                        "or GSHMEM_TEAM_INVALID returned by a split this PE is not part of)",
                        call, team);
}
static __device__ __noinline__ void gshmemi_not_member(const char *call, int team) {
    GSHMEMI_DEVICE_FAIL("%s: this PE is not a member of team %d; only members may call its "
                        "collectives", call, team);
}

/* The team's table entry; every check in one branch. */
GSHMEMI_DEV const gshmemi_team *gshmemi_team_get(int team, const char *call) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    if (s->version != GSHMEMI_STATE_VERSION) gshmemi_bad_state(call);
    if ((unsigned)team >= (unsigned)s->teams_max) gshmemi_bad_team(call, team);
    const gshmemi_team *t = s->teams + team;
    if (t->size <= 0) gshmemi_bad_team(call, team);
    return t;
}
GSHMEMI_DEV const gshmemi_team *gshmemi_team_member(int team, const char *call) {
    const gshmemi_team *t = gshmemi_team_get(team, call);
    if (t->my_idx < 0) gshmemi_not_member(call, team);
    return t;
}

/* World PE of member i. */
GSHMEMI_DEV int gshmemi_team_pe(const gshmemi_team *t, int i) {
    return t->pes ? t->pes[i] : t->start + i * t->stride;
}
/* Index of world PE pe in the team, or -1. */
GSHMEMI_DEV int gshmemi_team_idx(const gshmemi_team *t, int pe) {
    if (t->pes) {
        for (int i = 0; i < t->size; i++)
            if (t->pes[i] == pe) return i;
        return -1;
    }
    int d = pe - t->start;
    if (d < 0 || d % t->stride) return -1;
    d /= t->stride;
    return d < t->size ? d : -1;
}

GSHMEMI_DEV int gshmemi_dev_team_my_pe(int team) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    if ((unsigned)team >= (unsigned)s->teams_max || s->version != GSHMEMI_STATE_VERSION) return -1;
    return s->teams[team].size > 0 ? s->teams[team].my_idx : -1;
}
GSHMEMI_DEV int gshmemi_dev_team_n_pes(int team) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    if ((unsigned)team >= (unsigned)s->teams_max || s->version != GSHMEMI_STATE_VERSION) return -1;
    return s->teams[team].size > 0 ? s->teams[team].size : -1;
}
GSHMEMI_DEV int gshmemi_dev_team_translate_pe(int src_team, int src_pe, int dest_team) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    if (s->version != GSHMEMI_STATE_VERSION || (unsigned)src_team >= (unsigned)s->teams_max ||
        (unsigned)dest_team >= (unsigned)s->teams_max)
        return -1;
    const gshmemi_team *a = s->teams + src_team, *b = s->teams + dest_team;
    if (a->size <= 0 || b->size <= 0 || src_pe < 0 || src_pe >= a->size) return -1;
    return gshmemi_team_idx(b, gshmemi_team_pe(a, src_pe));
}

/* Programmatic dependent launch (the host forms launch with it): the next kernel on the
 * stream may start early; it waits here until this one has completed and its memory
 * operations are visible, so its prologue (launch, block dispatch) overlaps this one's end. */
GSHMEMI_DEV void gshmemi_pdl_enter(void) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* ---- group plumbing ---------------------------------------------------------------------- */
/* The flag cell member `me` owns in member j's row c, as this GPU reaches it. */
GSHMEMI_DEV uint64_t *gshmemi_team_cell(const gshmemi_team *t, int c, int j, int me,
                                        const char *call) {
    return gshmemi_peer_known(t->flags + (size_t)c * t->size + me, gshmemi_team_pe(t, j), call);
}
struct gshmemi_team_cells {
    const gshmemi_team *t;
    int c;
    const char *call;
    __device__ __forceinline__ uint64_t *operator()(int j) const {
        return gshmemi_team_cell(t, c, j, t->my_idx, call);
    }
    __device__ __forceinline__ uint64_t *sym(int j) const {
        return t->flags + (size_t)c * t->size + t->my_idx;
    }
    __device__ __forceinline__ int pe(int j) const { return gshmemi_team_pe(t, j); }
};

/* One round on channel c of the team: a count round (sync.h) over the members, on row c of
 * the team's flags with this PE's count epochs[c]. Every member makes the same rounds on
 * the same channels (the channel count depends only on arguments all members pass alike),
 * so cell j of row c counts member j's rounds on channel c. The caller gathered the group. */
template <class S, bool FENCE = true>
GSHMEMI_DEV void gshmemi_team_round(const gshmemi_team *t, int c, const char *call) {
    gshmemi_count_round<S, FENCE>(t->size, t->my_idx, t->epochs + c, t->flags + (size_t)c * t->size,
                           gshmemi_team_cells{t, c, call}, call);
}

/* team_sync / barrier: one round on channel 0. For load/store peers quiet is the fence the
 * round already issues, so barrier and sync are the same work. */
template <class S, bool FENCE = true>
GSHMEMI_DEV void gshmemi_team_sync_t(const gshmemi_team *t, const char *call) {
    S::sync();   /* the group's stores precede the fence */
    gshmemi_team_round<S, FENCE>(t, 0, call);
}
template <class S> GSHMEMI_DEV void gshmemi_team_sync(int team, const char *call) {
    gshmemi_team_sync_t<S>(gshmemi_team_member(team, call), call);
}

GSHMEMI_DEV void gshmemi_dev_team_sync(int team) { gshmemi_team_sync<gshmemi_scope_thread>(team, "gshmem_team_sync"); }
GSHMEMI_DEV void gshmemx_team_sync_warp(int team) { gshmemi_team_sync<gshmemi_scope_warp>(team, "gshmemx_team_sync_warp"); }
GSHMEMI_DEV void gshmemx_team_sync_block(int team) { gshmemi_team_sync<gshmemi_scope_block>(team, "gshmemx_team_sync_block"); }
GSHMEMI_DEV void gshmemi_dev_barrier(int team) { gshmemi_team_sync<gshmemi_scope_thread>(team, "gshmem_barrier"); }
GSHMEMI_DEV void gshmemx_barrier_warp(int team) { gshmemi_team_sync<gshmemi_scope_warp>(team, "gshmemx_barrier_warp"); }
GSHMEMI_DEV void gshmemx_barrier_block(int team) { gshmemi_team_sync<gshmemi_scope_block>(team, "gshmemx_barrier_block"); }
GSHMEMI_DEV void gshmemi_dev_sync_all(void) { gshmemi_team_sync<gshmemi_scope_thread>(0, "gshmem_sync_all"); }
GSHMEMI_DEV void gshmemx_sync_all_warp(void) { gshmemi_team_sync<gshmemi_scope_warp>(0, "gshmemx_sync_all_warp"); }
GSHMEMI_DEV void gshmemx_sync_all_block(void) { gshmemi_team_sync<gshmemi_scope_block>(0, "gshmemx_sync_all_block"); }

#endif
