/* Ordering and synchronization on the device: quiet/fence at thread/warp/block scope,
 * wait_until with a deadline, and barrier_all. Barrier flags carry epochs (this PE's
 * barrier count), so they grow monotonically and never need resetting. */
#ifndef GSHMEM_DEVICE_SYNC_H
#define GSHMEM_DEVICE_SYNC_H

#include "state.h"
#include "copy.h"
#include "remote.h"

/* quiet: every put this thread issued is ordered before whatever it does next, at system
 * scope: a later p/signal of a flag is a release of the data. For load/store peers fence
 * and quiet are the same instruction (stores to one peer are already delivered in order
 * once fenced). Warp/block forms: first gather the group (so the other threads' stores
 * precede, by the barrier), then each thread fences, so a flag written next by any thread
 * of the group is a release for the whole group's data. */
/* With remote PEs (a ring exists) quiet also waits for the ring and fence posts a FENCE
 * descriptor: one constant load and a branch when the job has none. */
GSHMEMI_DEV void gshmemi_quiet_remote_part(const char *call) {
    if (GSHMEMI_ROUTED && gshmemi_has_remote()) gshmemi_remote_quiet(call);
}
GSHMEMI_DEV void gshmemi_dev_quiet(void) {
    gshmemi_fence_acq_rel_sys();
    gshmemi_quiet_remote_part("gshmem_quiet");
}
GSHMEMI_DEV void gshmemi_dev_fence(void) {
    gshmemi_fence_acq_rel_sys();
    if (GSHMEMI_ROUTED && gshmemi_has_remote()) gshmemi_remote_fence("gshmem_fence");
}
GSHMEMI_DEV void gshmemx_quiet_warp(void) {
    __syncwarp();
    gshmemi_fence_acq_rel_sys();
    gshmemi_quiet_remote_part("gshmemx_quiet_warp");
}
GSHMEMI_DEV void gshmemx_quiet_block(void) {
    __syncthreads();
    gshmemi_fence_acq_rel_sys();
    gshmemi_quiet_remote_part("gshmemx_quiet_block");
}
GSHMEMI_DEV void gshmemx_fence_warp(void) { gshmemx_quiet_warp(); }
GSHMEMI_DEV void gshmemx_fence_block(void) { gshmemx_quiet_block(); }

/* ---- wait_until ------------------------------------------------------------------------ */
template <typename T> GSHMEMI_DEV bool gshmemi_compare(T a, int cmp, T b) {
    switch (cmp) {
    case GSHMEM_CMP_EQ: return a == b;
    case GSHMEM_CMP_NE: return a != b;
    case GSHMEM_CMP_GT: return a > b;
    case GSHMEM_CMP_LE: return a <= b;
    case GSHMEM_CMP_LT: return a < b;
    case GSHMEM_CMP_GE: return a >= b;
    default: return false;
    }
}

static __device__ __noinline__ void gshmemi_wait_expired_msg(const char *call, const void *ivar,
                                                             int cmp, unsigned long long want,
                                                             unsigned long long cur, double secs) {
    static const char *ops[] = {"==", "!=", ">", "<=", "<", ">="};
    GSHMEMI_DEVICE_MSG("%s: waited %.1f s for *%p %s %llu (0x%llx), value is still %llu "
                       "(0x%llx); block (%d,%d,%d) thread (%d,%d,%d). Did the PE that should "
                       "write it exit, hang or take another path? (GSHMEM_WAIT_TIMEOUT sets "
                       "the limit, 0 = none)",
                       call, secs, ivar, (unsigned)cmp < 6 ? ops[cmp] : "?", want, want, cur,
                       cur, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y,
                       threadIdx.z);
}
GSHMEMI_REPORTER(gshmemi_wait_expired,
                 (const char *call, const void *ivar, int cmp, unsigned long long want,
                  unsigned long long cur, double secs),
                 (call, ivar, cmp, want, cur, secs))

static __device__ __noinline__ void gshmemi_bad_cmp_msg(const char *call, int cmp) {
    GSHMEMI_DEVICE_MSG("%s: comparison %d is not one of GSHMEM_CMP_EQ/NE/GT/LE/LT/GE", call, cmp);
}
GSHMEMI_REPORTER(gshmemi_bad_cmp, (const char *call, int cmp), (call, cmp))

/* Deadline bookkeeping shared by every device wait: free on the fast path (the global
 * timer is read once every 256 polls, and only when a timeout is set). */
struct gshmemi_deadline {
    uint64_t start;
    unsigned spin;
    /* true once the wait has lasted past GSHMEM_WAIT_TIMEOUT; *secs says how long */
    __device__ __forceinline__ bool expired(const gshmemi_device_state *s, double *secs) {
        if ((++spin & 255) != 0 || !s->wait_timeout_ns) return false;
        uint64_t now = gshmemi_globaltimer();
        if (!start) start = now;
        *secs = (now - start) * 1e-9;
        return now - start > s->wait_timeout_ns;
    }
};

/* One branch for every argument check of a wait on a local symmetric location. */
template <typename T>
GSHMEMI_DEV void gshmemi_wait_check(const T *ivar, size_t n, int cmp, const char *call) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    const char *c = (const char *)ivar;
    bool out = c < s->heap_base || c + n * sizeof(T) > s->heap_base + s->heap_mapped;
    if ((s->version != GSHMEMI_STATE_VERSION) | ((unsigned)cmp > GSHMEM_CMP_GE) | ((s->debug >= 2) & out)) {
        (void)gshmemi_st(call);
        if ((unsigned)cmp > GSHMEM_CMP_GE) gshmemi_bad_cmp(call, cmp);
        gshmemi_bad_addr(call, ivar, n * sizeof(T));
    }
}

/* Spins with acquire loads on a local symmetric location until `cmp` holds. Returns the
 * value that satisfied the wait. */
template <typename T>
GSHMEMI_DEV T gshmemi_wait(const T *ivar, int cmp, T value, const char *call) {
    gshmemi_wait_check(ivar, 1, cmp, call);
    gshmemi_deadline dl = {0, 0};
    double secs;
    for (;;) {
        /* the polling loop itself carries no bookkeeping: load, compare, branch */
        T cur;
#pragma unroll 1
        for (int k = 0; k < 256; k++) {
            cur = gshmemi_ld_acquire(ivar);
            if (gshmemi_compare(cur, cmp, value)) return cur;
        }
        dl.spin = 255;  /* one deadline check per 256 polls */
        if (dl.expired(&gshmemi_dstate, &secs))
            gshmemi_wait_expired(call, ivar, cmp, (unsigned long long)value,
                                 (unsigned long long)cur, secs);
    }
}

#define GSHMEMI_DEF_WAIT(NAME, T)                                                            \
    GSHMEMI_API void gshmemi_dev_##NAME##_wait_until(T *ivar, int cmp, T value) {            \
        gshmemi_wait((const T *)ivar, cmp, value, "gshmem_" #NAME "_wait_until");           \
    }                                                                                        \
    GSHMEMI_API int gshmemi_dev_##NAME##_test(T *ivar, int cmp, T value) {                   \
        gshmemi_wait_check((const T *)ivar, 1, cmp, "gshmem_" #NAME "_test");                \
        return gshmemi_compare(gshmemi_ld_acquire((const T *)ivar), cmp, value);            \
    }
GSHMEM_P2P_SYNC_TYPES(GSHMEMI_DEF_WAIT)

/* ---- waits and tests over sets of variables -------------------------------------------- */
/* One pass over ivars[0..n): entries with status[i] != 0 are skipped; values == NULL means
 * every entry compares with `value`. MODE ALL: returns how many included entries fail;
 * ANY: the first satisfied index or SIZE_MAX; SOME: how many are satisfied (their indices go
 * to `indices`). *included counts the entries not excluded. */
template <int MODE, typename T>
GSHMEMI_DEV size_t gshmemi_scan(const T *ivars, size_t n, const int *status, int cmp,
                                const T *values, T value, size_t *indices, size_t *included) {
    size_t hits = 0, inc = 0;
    for (size_t i = 0; i < n; i++) {
        if (status && status[i]) continue;
        inc++;
        bool ok = gshmemi_compare(gshmemi_ld_acquire(ivars + i), cmp, values ? values[i] : value);
        if (MODE == GSHMEMI_WAIT_ALL) hits += !ok;
        else if (ok) {
            if (MODE == GSHMEMI_WAIT_ANY) { *included = inc; return i; }
            indices[hits++] = i;
        }
    }
    *included = inc;
    return MODE == GSHMEMI_WAIT_ANY ? SIZE_MAX : hits;
}

static __device__ __noinline__ void gshmemi_wait_set_expired_msg(const char *call,
                                                                 const void *ivars, size_t n,
                                                                 int cmp, double secs) {
    static const char *ops[] = {"==", "!=", ">", "<=", "<", ">="};
    GSHMEMI_DEVICE_MSG("%s: waited %.1f s for the %llu variables at %p to satisfy %s; block "
                       "(%d,%d,%d) thread (%d,%d,%d). Did the PE that should write them exit, "
                       "hang or take another path? (GSHMEM_WAIT_TIMEOUT sets the limit, 0 = none)",
                       call, secs, (unsigned long long)n, ivars, (unsigned)cmp < 6 ? ops[cmp] : "?",
                       blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z);
}
GSHMEMI_REPORTER(gshmemi_wait_set_expired,
                 (const char *call, const void *ivars, size_t n, int cmp, double secs),
                 (call, ivars, n, cmp, secs))

/* Waits (WAIT) or tests once for MODE over the set. ALL returns 1 when satisfied (test) /
 * after it is (wait); ANY the index (SIZE_MAX when nothing is included); SOME the count. */
template <int MODE, bool WAIT, typename T>
GSHMEMI_DEV size_t gshmemi_wait_set(const T *ivars, size_t n, const int *status, int cmp,
                                    const T *values, T value, size_t *indices, const char *call) {
    gshmemi_wait_check(ivars, n, cmp, call);
    gshmemi_deadline dl = {0, 0};
    double secs;
    for (;;) {
        size_t included;
        size_t r = gshmemi_scan<MODE>(ivars, n, status, cmp, values, value, indices, &included);
        if (MODE == GSHMEMI_WAIT_ALL && r == 0) return 1;
        if (MODE == GSHMEMI_WAIT_ANY && (r != SIZE_MAX || included == 0)) return r;
        if (MODE == GSHMEMI_WAIT_SOME && (r != 0 || included == 0)) return r;
        if (!WAIT) return MODE == GSHMEMI_WAIT_ALL ? 0 : r;
        if (dl.expired(&gshmemi_dstate, &secs)) gshmemi_wait_set_expired(call, ivars, n, cmp, secs);
    }
}

#define GSHMEMI_DEF_WAIT_SET(NAME, T)                                                        \
    GSHMEMI_API void gshmemi_dev_##NAME##_wait_until_all(T *ivars, size_t nelems,            \
                                                         const int *status, int cmp, T value) { \
        gshmemi_wait_set<GSHMEMI_WAIT_ALL, true>((const T *)ivars, nelems, status, cmp,      \
                                                 (const T *)0, value, (size_t *)0,           \
                                                 "gshmem_" #NAME "_wait_until_all");         \
    }                                                                                        \
    GSHMEMI_API size_t gshmemi_dev_##NAME##_wait_until_any(T *ivars, size_t nelems,          \
                                                           const int *status, int cmp, T value) { \
        return gshmemi_wait_set<GSHMEMI_WAIT_ANY, true>((const T *)ivars, nelems, status, cmp, \
                                                        (const T *)0, value, (size_t *)0,    \
                                                        "gshmem_" #NAME "_wait_until_any");  \
    }                                                                                        \
    GSHMEMI_API size_t gshmemi_dev_##NAME##_wait_until_some(T *ivars, size_t nelems,         \
                                                            size_t *indices, const int *status, \
                                                            int cmp, T value) {              \
        return gshmemi_wait_set<GSHMEMI_WAIT_SOME, true>((const T *)ivars, nelems, status,   \
                                                         cmp, (const T *)0, value, indices,  \
                                                         "gshmem_" #NAME "_wait_until_some"); \
    }                                                                                        \
    GSHMEMI_API void gshmemi_dev_##NAME##_wait_until_all_vector(T *ivars, size_t nelems,     \
                                                                const int *status, int cmp,  \
                                                                T *values) {                 \
        gshmemi_wait_set<GSHMEMI_WAIT_ALL, true>((const T *)ivars, nelems, status, cmp,      \
                                                 (const T *)values, (T)0, (size_t *)0,       \
                                                 "gshmem_" #NAME "_wait_until_all_vector");  \
    }                                                                                        \
    GSHMEMI_API size_t gshmemi_dev_##NAME##_wait_until_any_vector(T *ivars, size_t nelems,   \
                                                                  const int *status, int cmp, \
                                                                  T *values) {               \
        return gshmemi_wait_set<GSHMEMI_WAIT_ANY, true>((const T *)ivars, nelems, status, cmp, \
                                                        (const T *)values, (T)0, (size_t *)0, \
                                                        "gshmem_" #NAME "_wait_until_any_vector"); \
    }                                                                                        \
    GSHMEMI_API size_t gshmemi_dev_##NAME##_wait_until_some_vector(T *ivars, size_t nelems,  \
                                                                   size_t *indices,          \
                                                                   const int *status, int cmp, \
                                                                   T *values) {              \
        return gshmemi_wait_set<GSHMEMI_WAIT_SOME, true>((const T *)ivars, nelems, status,   \
                                                         cmp, (const T *)values, (T)0, indices, \
                                                         "gshmem_" #NAME "_wait_until_some_vector"); \
    }                                                                                        \
    GSHMEMI_API int gshmemi_dev_##NAME##_test_all(T *ivars, size_t nelems, const int *status, \
                                                  int cmp, T value) {                        \
        return (int)gshmemi_wait_set<GSHMEMI_WAIT_ALL, false>((const T *)ivars, nelems, status, \
                                                              cmp, (const T *)0, value,      \
                                                              (size_t *)0,                   \
                                                              "gshmem_" #NAME "_test_all");  \
    }                                                                                        \
    GSHMEMI_API size_t gshmemi_dev_##NAME##_test_any(T *ivars, size_t nelems, const int *status, \
                                                     int cmp, T value) {                     \
        return gshmemi_wait_set<GSHMEMI_WAIT_ANY, false>((const T *)ivars, nelems, status, cmp, \
                                                         (const T *)0, value, (size_t *)0,   \
                                                         "gshmem_" #NAME "_test_any");       \
    }                                                                                        \
    GSHMEMI_API size_t gshmemi_dev_##NAME##_test_some(T *ivars, size_t nelems, size_t *indices, \
                                                      const int *status, int cmp, T value) { \
        return gshmemi_wait_set<GSHMEMI_WAIT_SOME, false>((const T *)ivars, nelems, status,  \
                                                          cmp, (const T *)0, value, indices, \
                                                          "gshmem_" #NAME "_test_some");     \
    }                                                                                        \
    GSHMEMI_API int gshmemi_dev_##NAME##_test_all_vector(T *ivars, size_t nelems,            \
                                                         const int *status, int cmp, T *values) { \
        return (int)gshmemi_wait_set<GSHMEMI_WAIT_ALL, false>((const T *)ivars, nelems, status, \
                                                              cmp, (const T *)values, (T)0,  \
                                                              (size_t *)0,                   \
                                                              "gshmem_" #NAME "_test_all_vector"); \
    }                                                                                        \
    GSHMEMI_API size_t gshmemi_dev_##NAME##_test_any_vector(T *ivars, size_t nelems,         \
                                                            const int *status, int cmp,      \
                                                            T *values) {                     \
        return gshmemi_wait_set<GSHMEMI_WAIT_ANY, false>((const T *)ivars, nelems, status, cmp, \
                                                         (const T *)values, (T)0, (size_t *)0, \
                                                         "gshmem_" #NAME "_test_any_vector"); \
    }                                                                                        \
    GSHMEMI_API size_t gshmemi_dev_##NAME##_test_some_vector(T *ivars, size_t nelems,        \
                                                             size_t *indices, const int *status, \
                                                             int cmp, T *values) {           \
        return gshmemi_wait_set<GSHMEMI_WAIT_SOME, false>((const T *)ivars, nelems, status,  \
                                                          cmp, (const T *)values, (T)0, indices, \
                                                          "gshmem_" #NAME "_test_some_vector"); \
    }
GSHMEM_P2P_SYNC_TYPES(GSHMEMI_DEF_WAIT_SET)

/* pe_quiet: for load/store peers completing the puts to some PEs costs the same fence as
 * completing all of them; the PE list is checked. */
GSHMEMI_DEV void gshmemi_dev_pe_quiet(const int *target_pes, size_t npes) {
    const gshmemi_device_state *s = gshmemi_st("gshmem_pe_quiet");
    if (s->debug >= 2)
        for (size_t i = 0; i < npes; i++)
            if ((unsigned)target_pes[i] >= (unsigned)s->npes) gshmemi_bad_pe("gshmem_pe_quiet", target_pes[i]);
    gshmemi_fence_acq_rel_sys();
    gshmemi_quiet_remote_part("gshmem_pe_quiet");
}

/* ---- barrier_all and team rounds: arrival counts ---------------------------------------- */
/* One arrival round among m members (this one is `me`), by counts: cell j of a member's
 * row counts the rounds member j has arrived at. Arriving adds 1 to my cell in every other
 * member's row (red.add after one fence: a release of everything the group did before),
 * then waits until every other cell of my own row has reached my own count (acquire). The
 * count (`*count`, local memory, read and advanced by the group's leader) is loaded after
 * the adds, behind their NVLink flight: a load before the fence would make the fence wait
 * for it (a fence.acq_rel.sys alone costs 0.59 us on H200, bench/probe_sync). So is every
 * address computation a first add needs (constant-bank loads and the slot arithmetic):
 * done before the fence, not between it and the add. My own cell is never used. Counts
 * only grow, so cells never need a reset, and a member that runs ahead never confuses a
 * slower one (waits are >=). Group threads split the members; the caller gathered the
 * group first (S::sync), so the group's stores precede the fence. `cell(j)` is my cell in
 * member j's row, as this GPU reaches it.
 * FENCE false: for the kernels behind host calls (on-stream and blocking barrier_all and
 * team_sync), whose own threads have written nothing before the round. What the release must
 * cover there is earlier work on the stream, and stream order already has it performed before
 * the round starts: a kernel's stores (peers' memory included) are performed when the kernel
 * completes, which a stream-ordered launch waits for, and so does griddepcontrol.wait under
 * programmatic dependent launch (gshmemi_pdl_enter; "completed, and all memory operations
 * performed and made visible"). The fence (0.59 us on H200) would order nothing more. */
/* The count round of a job with remote PEs (out of line), run by the group's leader alone
 * after the group gathered: it fences (cumulative: the group's stores precede it) and quiets the
 * ring (every earlier remote operation complete: the round is also a quiet), then bumps my cell
 * of every member: a load/store reduction, or on another node a SIGNAL SET of my new count. Only
 * I write my cell in any row, so setting it to my count is the same as adding 1, and a SET is
 * applied at the target without an SM (a stream memory operation), so arrivals land even while
 * the target's kernels fill its GPU share. Then it waits for every member's cell of my row, one
 * after the other. One thread, so its loops and branches are uniform by construction (ptx.h);
 * the remote SET of a member that is not remote is a NOP descriptor that is never posted. */
template <class Cell>
GSHMEMI_REMOTE void gshmemi_count_round_remote(int m, int me, uint64_t *count, const uint64_t *row,
                                               Cell cell, const char *call) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    const unsigned lanes = gshmemi_lanes();
    gshmemi_fence_acq_rel_sys();
    gshmemi_remote_quiet_to(gshmemi_remote_mark(), call);
    const uint64_t e = *(volatile uint64_t *)count + 1;
    *(volatile uint64_t *)count = e;
    int j = 0;
    GSHMEMI_WHILE_ANY(lanes, j < m) {
        const bool other = j != me;
        uint64_t *sym = cell.sym(j);
        const int pe = cell.pe(j);
        const int slot = gshmemi_slot_of(s, pe);
        gshmemi_red_add_sys_if(other && slot >= 0, gshmemi_at(sym, slot < 0 ? 0 : slot), 1);
        if (gshmemi_uniform(lanes, other && slot < 0)) {
            gshmem_proxy_desc d = gshmemi_rdesc(other && slot < 0 ? GSHMEM_PROXY_OP_SIGNAL : GSHMEM_PROXY_OP_NOP,
                                                pe, 8, sym, e);
            d.amo = (uint8_t)GSHMEM_SIGNAL_SET;
            gshmemi_remote_op<GSHMEMI_RWAIT_NONE>(d, call);
        }
        j++;
    }
    const uint64_t t0 = s->wait_timeout_ns ? gshmemi_globaltimer() : 0;
    unsigned spin = 0;
    j = 0;
    GSHMEMI_WHILE_ANY(lanes, j < m) {   /* my row: member j's cell reached my count */
        const uint64_t cur = gshmemi_ld_acquire_if(j != me, row + j, e);
        const bool ok = cur >= e;
        j += ok;
        spin = ok ? 0 : spin + 1;
        const uint64_t now = (spin & 255) == 0 && t0 ? gshmemi_globaltimer() : t0;
        if (now - t0 > s->wait_timeout_ns && t0)
            gshmemi_wait_expired(call, row + j, GSHMEM_CMP_GE, (unsigned long long)e, (unsigned long long)cur,
                                 (now - t0) * 1e-9);
    }
}

/* The count round over members all reached by load/store (every round of a one-node job; the
 * node rounds of the hierarchical collectives across nodes, coll/xnode.h). */
template <class S, bool FENCE = true, class Cell>
GSHMEMI_DEV void gshmemi_count_round_ls(int m, int me, uint64_t *count, const uint64_t *row,
                                        const Cell &cell, const char *call) {
    const int rank = (int)S::rank(), size = (int)S::size();
    if (rank < m) {   /* (a lone PE still fences: barrier_all is also a quiet) */
        const int j0 = rank == me ? rank + size : rank;
        uint64_t *first = j0 < m ? cell(j0) : (uint64_t *)0;
        if (FENCE) {   /* every PE on this GPU (a one-GPU job): its L2 orders them all */
            if (gshmemi_dstate.fence_gpu) gshmemi_fence_acq_rel_gpu();
            else gshmemi_fence_acq_rel_sys();
        }
        if (first) asm volatile("red.relaxed.sys.global.add.u64 [%0], 1;" ::"l"(first) : "memory");
        for (int j = j0 + size; j < m; j += size)
            if (j != me) asm volatile("red.relaxed.sys.global.add.u64 [%0], 1;" ::"l"(cell(j)) : "memory");
    }
    uint64_t e = 0;
    if (rank == 0) {
        e = *(volatile uint64_t *)count + 1;
        *(volatile uint64_t *)count = e;
    }
    e = S::bcast0(e);
    for (int j = rank; j < m; j += size)
        if (j != me) gshmemi_wait(row + j, GSHMEM_CMP_GE, e, call);
    S::sync();
}

template <class S, bool FENCE = true, class Cell>
GSHMEMI_DEV void gshmemi_count_round(int m, int me, uint64_t *count, const uint64_t *row,
                                     const Cell &cell, const char *call) {
    if (GSHMEMI_ROUTED && gshmemi_has_remote()) {
        if (S::rank() == 0) gshmemi_count_round_remote<Cell>(m, me, count, row, cell, call);
        S::sync();
        return;
    }
    gshmemi_count_round_ls<S, FENCE>(m, me, count, row, cell, call);
}

/* barrier_all: a count round over every PE on the sync flags (slot j of a PE's sync_flags
 * counts PE j's barriers; sync_epoch is this PE's own count). */
struct gshmemi_world_cell {
    const gshmemi_device_state *s;
    const char *call;
    __device__ __forceinline__ uint64_t *operator()(int pe) const {
        return gshmemi_peer_known(s->sync_flags + s->mype, pe, call);
    }
    /* the remote round's view: the symmetric cell and the member's PE */
    __device__ __forceinline__ uint64_t *sym(int pe) const { return s->sync_flags + s->mype; }
    __device__ __forceinline__ int pe(int j) const { return j; }
};
template <class S, bool FENCE = true> GSHMEMI_DEV void gshmemi_barrier_all_t(const char *call) {
    const gshmemi_device_state *s = gshmemi_st(call);
    S::sync();   /* the group's stores precede the fence (a block barrier is cumulative) */
    gshmemi_count_round<S, FENCE>(s->npes, s->mype, s->sync_epoch, s->sync_flags,
                           gshmemi_world_cell{s, call}, call);
}

GSHMEMI_DEV void gshmemi_dev_barrier_all(void) {
    gshmemi_barrier_all_t<gshmemi_scope_thread>("gshmem_barrier_all");
}
GSHMEMI_DEV void gshmemx_barrier_all_warp(void) {
    gshmemi_barrier_all_t<gshmemi_scope_warp>("gshmemx_barrier_all_warp");
}
GSHMEMI_DEV void gshmemx_barrier_all_block(void) {
    gshmemi_barrier_all_t<gshmemi_scope_block>("gshmemx_barrier_all_block");
}

#endif
