/* What every collective algorithm is built from: member addressing, the entry checks, the
 * debug signature exchange and team rounds (out of line); slicing is rule.h's. */
#ifndef GSHMEM_DEVICE_COLL_ROUNDS_H
#define GSHMEM_DEVICE_COLL_ROUNDS_H

#include "../team.h"
#include "rule.h"   /* slicing (gshmemi_slice), shared with the host's plan */

/* ---- addressing ---------------------------------------------------------------------- */
static __device__ __noinline__ void gshmemi_coll_unreachable(const char *call, int pe) {
    GSHMEMI_DEVICE_FAIL("%s: team member PE %d is on another node than PE %d, and this translation "
                        "unit was built with GSHMEM_LOAD_STORE_ONLY: build it without that macro "
                        "for device collectives on teams across nodes (the host and on-stream "
                        "forms work either way)", call, pe, gshmemi_dstate.mype);
}
static __device__ __noinline__ void gshmemi_coll_bad_buf(const char *call, const char *which,
                                                         const void *p, size_t n) {
    GSHMEMI_DEVICE_FAIL("%s: %s %p (+%llu bytes) is not inside the symmetric heap [%p, %p); "
                        "collective buffers must come from gshmem_malloc", call, which, p,
                        (unsigned long long)n, gshmemi_dstate.heap_base,
                        gshmemi_dstate.heap_base + gshmemi_dstate.heap_mapped);
}
static __device__ __noinline__ void gshmemi_coll_bad_root(const char *call, int root, int n) {
    GSHMEMI_DEVICE_FAIL("%s: PE_root %d is not a team PE number in [0, %d)", call, root, n);
}
static __device__ __noinline__ void gshmemi_coll_mismatch(const char *call, int team, int pe,
                                                          unsigned mine, unsigned theirs) {
    GSHMEMI_DEVICE_FAIL("%s on team %d: team PE %d called a different collective or passed "
                        "different arguments (signature 0x%08x here, 0x%08x there); every "
                        "member must make the same collective calls in the same order",
                        call, team, pe, mine, theirs);
}

/* Byte offset from this PE's copy of a symmetric object to member j's, as this GPU maps it. */
GSHMEMI_DEV ptrdiff_t gshmemi_member_off(const gshmemi_team *t, int j) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    return (ptrdiff_t)gshmemi_slot_of(s, gshmemi_team_pe(t, j)) * (ptrdiff_t)s->heap_window;
}
template <class T> GSHMEMI_DEV T *gshmemi_at(T *p, ptrdiff_t off) {
    return (T *)((char *)p + off);
}

/* Entry checks every thread runs (cheap, one branch each): members reachable, buffers in the
 * heap when GSHMEM_DEBUG >= 2. Inline (the reports are not), so an on-stream kernel's team
 * entry stays in parameter space instead of being copied to the stack for a call. */
GSHMEMI_DEV void gshmemi_coll_check_bufs(const void *dest, size_t dbytes, const void *src,
                                         size_t sbytes, const char *call) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    if (s->debug >= 2) {
        const char *lo = s->heap_base, *hi = s->heap_base + s->heap_mapped;
        if (dbytes && ((const char *)dest < lo || (const char *)dest + dbytes > hi))
            gshmemi_coll_bad_buf(call, "dest", dest, dbytes);
        if (sbytes && ((const char *)src < lo || (const char *)src + sbytes > hi))
            gshmemi_coll_bad_buf(call, "source", src, sbytes);
    }
}
GSHMEMI_DEV void gshmemi_coll_check(const gshmemi_team *t, const void *dest, size_t dbytes,
                                    const void *src, size_t sbytes, const char *call) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    for (int j = 0; j < t->size; j++)
        if (gshmemi_slot_of(s, gshmemi_team_pe(t, j)) < 0) gshmemi_coll_unreachable(call, gshmemi_team_pe(t, j));
    gshmemi_coll_check_bufs(dest, dbytes, src, sbytes, call);
}

/* ---- rounds ------------------------------------------------------------------------------ */
/* Debug signature exchange, done by the leader of channel 0 before the first round's flags
 * (cell parity = this team's collective count & 1: a member is at most one collective
 * ahead). Checked after the round by gshmemi_sig_check. */
GSHMEMI_DEV unsigned gshmemi_sig(int what, int esize, int op, uint64_t n, int root) {
    uint64_t h = 1469598103934665603ull;
    uint64_t v[5] = {(uint64_t)what, (uint64_t)esize, (uint64_t)op, n, (uint64_t)root};
    for (int i = 0; i < 5; i++) h = (h ^ v[i]) * 1099511628211ull;
    return (unsigned)(h ^ (h >> 32));
}
template <class S>
GSHMEMI_DEV uint64_t gshmemi_sig_post(const gshmemi_team *t, int c, unsigned sig, const char *call) {
    if (c != 0 || gshmemi_dstate.debug < 1) return 0;
    uint64_t n = 0;
    if (S::rank() == 0) {
        n = *(volatile uint64_t *)t->ncoll + 1;
        *(volatile uint64_t *)t->ncoll = n;
        uint64_t word = (n << 32) | sig;
        for (int j = 0; j < t->size; j++)
            gshmemi_st_relaxed(gshmemi_peer_known(t->sigs + (n & 1) * t->size + t->my_idx,
                                                  gshmemi_team_pe(t, j), call), word);
    }
    return n;
}
template <class S>
GSHMEMI_DEV void gshmemi_sig_check(const gshmemi_team *t, int team, int c, uint64_t n,
                                   unsigned sig, const char *call) {
    if (c != 0 || gshmemi_dstate.debug < 1 || S::rank() != 0) return;
    uint64_t want = (n << 32) | sig;
    for (int j = 0; j < t->size; j++) {
        uint64_t w = gshmemi_ld_relaxed(t->sigs + (n & 1) * t->size + j);
        if (w != want) gshmemi_coll_mismatch(call, team, j, sig, (unsigned)w);
    }
}

/* Not inlined (nor the rounds and copies below): each collective inlines several of these,
 * and inlined together they pushed block-scope callers past the 64 registers a 1024-thread
 * block allows, or (a kernel calling several movers) the 80 a 768-thread block allows. */
#define GSHMEMI_COLL_FN static __device__ __noinline__

/* A team round, out of line for the two-round collectives: the inlined polling loops of a
 * kernel's several collectives took it to 90 registers (team_sync keeps its round inline).
 * The one-node algorithms run only on teams whose members this GPU reaches by load/store, so
 * their round is the load/store round alone: no remote branch, whose callees would raise the
 * registers the one-node code may use around the call (coll/xnode.h has the routed round). */
template <class S>
GSHMEMI_COLL_FN void gshmemi_coll_round(const gshmemi_team *t, int c, const char *call) {
    gshmemi_count_round_ls<S>(t->size, t->my_idx, t->epochs + c, t->flags + (size_t)c * t->size,
                              gshmemi_team_cells{t, c, call}, call);
}

/* The arrival round on channel c, carrying the debug signature: the first round of every
 * two-round collective, and the debug-only round before a one-shot. */
template <class S>
GSHMEMI_DEV void gshmemi_arrive(const gshmemi_team *t, int team, int c, unsigned sig,
                                const char *call) {
    uint64_t ns = gshmemi_sig_post<S>(t, c, sig, call);
    S::sync();
    gshmemi_coll_round<S>(t, c, call);
    gshmemi_sig_check<S>(t, team, c, ns, sig, call);
}

#endif
