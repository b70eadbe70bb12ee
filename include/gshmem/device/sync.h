/* Ordering and synchronization on the device: quiet/fence at thread/warp/block scope,
 * wait_until with a deadline, and barrier_all. Barrier flags carry epochs (this PE's
 * barrier count), so they grow monotonically and never need resetting. */
#ifndef GSHMEM_DEVICE_SYNC_H
#define GSHMEM_DEVICE_SYNC_H

#include "state.h"
#include "copy.h"

/* quiet: every put this thread issued is ordered before whatever it does next, at system
 * scope: a later p/signal of a flag is a release of the data. For load/store peers fence
 * and quiet are the same instruction (stores to one peer are already delivered in order
 * once fenced). Warp/block forms: first gather the group (so the other threads' stores
 * precede, by the barrier), then each thread fences, so a flag written next by any thread
 * of the group is a release for the whole group's data. */
GSHMEMI_DEV void gshmemi_dev_quiet(void) { gshmemi_fence_acq_rel_sys(); }
GSHMEMI_DEV void gshmemi_dev_fence(void) { gshmemi_fence_acq_rel_sys(); }
GSHMEMI_DEV void gshmemx_quiet_warp(void) {
    __syncwarp();
    gshmemi_fence_acq_rel_sys();
}
GSHMEMI_DEV void gshmemx_quiet_block(void) {
    __syncthreads();
    gshmemi_fence_acq_rel_sys();
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

static __device__ __noinline__ void gshmemi_wait_expired(const char *call, const void *ivar,
                                                         int cmp, unsigned long long want,
                                                         unsigned long long cur, double secs) {
    static const char *ops[] = {"==", "!=", ">", "<=", "<", ">="};
    GSHMEMI_DEVICE_FAIL("%s: waited %.1f s for *%p %s %llu (0x%llx), value is still %llu "
                        "(0x%llx); block (%d,%d,%d) thread (%d,%d,%d). Did the PE that should "
                        "write it exit, hang or take another path? (GSHMEM_WAIT_TIMEOUT sets "
                        "the limit, 0 = none)",
                        call, secs, ivar, (unsigned)cmp < 6 ? ops[cmp] : "?", want, want, cur,
                        cur, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y,
                        threadIdx.z);
}

static __device__ __noinline__ void gshmemi_bad_cmp(const char *call, int cmp) {
    GSHMEMI_DEVICE_FAIL("%s: comparison %d is not one of GSHMEM_CMP_EQ/NE/GT/LE/LT/GE", call, cmp);
}

/* Spins with acquire loads on a local symmetric location until `cmp` holds. The argument
 * checks are one branch (see gshmemi_peer); after a first few hundred spins the global
 * timer is read every 256 spins, so the deadline costs nothing on the fast path. Returns
 * the value that satisfied the wait. */
template <typename T>
GSHMEMI_DEV T gshmemi_wait(const T *ivar, int cmp, T value, const char *call) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    const char *c = (const char *)ivar;
    bool out = c < s->heap_base || c + sizeof(T) > s->heap_base + s->heap_mapped;
    if ((s->version != GSHMEMI_STATE_VERSION) | ((unsigned)cmp > GSHMEM_CMP_GE) | ((s->debug >= 2) & out)) {
        (void)gshmemi_st(call);
        if ((unsigned)cmp > GSHMEM_CMP_GE) gshmemi_bad_cmp(call, cmp);
        gshmemi_bad_addr(call, ivar, sizeof(T));
    }
    T cur;
    uint64_t start = 0;
    for (unsigned spin = 0;; spin++) {
        cur = gshmemi_ld_acquire(ivar);
        if (gshmemi_compare(cur, cmp, value)) return cur;
        if ((spin & 255) == 255 && s->wait_timeout_ns) {
            uint64_t now = gshmemi_globaltimer();
            if (!start) start = now;
            else if (now - start > s->wait_timeout_ns)
                gshmemi_wait_expired(call, ivar, cmp, (unsigned long long)value,
                                     (unsigned long long)cur, (now - start) * 1e-9);
        }
    }
}

#define GSHMEMI_DEF_WAIT(NAME, T)                                                            \
    GSHMEMI_DEV void gshmemi_dev_##NAME##_wait_until(T *ivar, int cmp, T value) {            \
        gshmemi_wait((const T *)ivar, cmp, value, "gshmem_" #NAME "_wait_until");           \
    }                                                                                        \
    GSHMEMI_DEV int gshmemi_dev_##NAME##_test(T *ivar, int cmp, T value) {                   \
        (void)gshmemi_st("gshmem_" #NAME "_test");                                           \
        return gshmemi_compare(gshmemi_ld_acquire((const T *)ivar), cmp, value);            \
    }
GSHMEM_P2P_SYNC_TYPES(GSHMEMI_DEF_WAIT)

/* ---- barrier_all ----------------------------------------------------------------------- */
/* Each PE writes its new epoch into slot [me] of every PE's flag array (a release: the
 * fence before it orders this group's earlier puts), then waits until every slot of its own
 * array has reached the epoch (acquire). Group threads split the PEs between them. */
GSHMEMI_DEV void gshmemi_barrier_group(const gshmemi_device_state *s, uint64_t epoch,
                                       unsigned rank, unsigned size, const char *call) {
    uint64_t *mine = s->sync_flags + s->mype;
    /* one fence per storing thread: it makes every following flag store a release */
    if ((int)rank < s->npes) gshmemi_fence_acq_rel_sys();
    for (int pe = (int)rank; pe < s->npes; pe += (int)size)
        gshmemi_st_relaxed(gshmemi_peer(mine, pe, sizeof(uint64_t), call), epoch);
    for (int pe = (int)rank; pe < s->npes; pe += (int)size)
        gshmemi_wait((const uint64_t *)(s->sync_flags + pe), GSHMEM_CMP_GE, epoch, call);
}

GSHMEMI_DEV void gshmemi_dev_barrier_all(void) {
    const gshmemi_device_state *s = gshmemi_st("gshmem_barrier_all");
    uint64_t epoch = ++*s->sync_epoch;
    gshmemi_barrier_group(s, epoch, 0, 1, "gshmem_barrier_all");
}
GSHMEMI_DEV void gshmemx_barrier_all_warp(void) {
    const gshmemi_device_state *s = gshmemi_st("gshmemx_barrier_all_warp");
    __syncwarp();
    uint64_t epoch = 0;
    if (gshmemi_lane() == 0) epoch = ++*s->sync_epoch;
    epoch = __shfl_sync(0xffffffffu, epoch, 0);
    gshmemi_barrier_group(s, epoch, gshmemi_lane(), 32, "gshmemx_barrier_all_warp");
    __syncwarp();
}
GSHMEMI_DEV void gshmemx_barrier_all_block(void) {
    const gshmemi_device_state *s = gshmemi_st("gshmemx_barrier_all_block");
    __shared__ uint64_t epoch;
    __syncthreads();
    if (gshmemi_block_rank() == 0) epoch = ++*s->sync_epoch;
    __syncthreads();
    gshmemi_barrier_group(s, epoch, gshmemi_block_rank(), gshmemi_block_size(),
                          "gshmemx_barrier_all_block");
    __syncthreads();
}

#endif
