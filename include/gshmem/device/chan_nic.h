/* The device side of the NIC channel (GPU-initiated RDMA: gshmem/nic_desc.h has the layout and
 * the protocol, gshmem/nic_wqe.h the work requests, docs/ibgda.md the whole): a GPU thread
 * reserves basic blocks of a QP's send queue, writes its work request, publishes it in order
 * (doorbell record, then the doorbell) and, where the call needs it, polls the completion queue
 * until its request completed. Only the remote branch of a device call comes here, so every
 * wait is a warp-uniform loop (ptx.h, "Warp-uniform loops"). */
#ifndef GSHMEM_DEVICE_CHAN_NIC_H
#define GSHMEM_DEVICE_CHAN_NIC_H

#include "gshmem/nic_desc.h"
#include "gshmem/nic_wqe.h"
#include "gshmem/device/ptx.h"
#include "gshmem/device/state.h"

static __device__ __forceinline__ uint16_t gshmemi_be16(uint16_t v) { return (uint16_t)__byte_perm(v, 0, 0x3201) & 0xffff; }
static __device__ __forceinline__ uint32_t gshmemi_be32(uint32_t v) { return __byte_perm(v, 0, 0x0123); }

/* A completion entry as a reader sees it: the 16-bit index of the last WQE completed, the
 * entry's opcode (GSHMEM_NIC_CQE_*) and its owner bit. One 8-byte load of the entry's last word,
 * so all three are from the same write of the NIC. */
struct gshmemi_nic_cqe {
    uint16_t counter;
    uint8_t opcode;
    uint8_t owner;
};
GSHMEMI_DEV gshmemi_nic_cqe gshmemi_nic_entry(const uint8_t *e) {
    const uint64_t w = gshmemi_ld_acquire((const uint64_t *)(e + 56));
    const uint8_t op_own = (uint8_t)(w >> ((GSHMEM_NIC_CQE_OP_OWN - 56) * 8));
    gshmemi_nic_cqe c;
    c.counter = gshmemi_be16((uint16_t)(w >> ((GSHMEM_NIC_CQE_WQE_COUNTER - 56) * 8)));
    c.opcode = op_own >> 4;
    c.owner = op_own & 1;
    return c;
}
/* Collapsed CQ: its entry; ring CQ: the copy of the first error entry a reader met. */
GSHMEMI_DEV gshmemi_nic_cqe gshmemi_nic_read_cqe(const gshmem_nic_qp &q) { return gshmemi_nic_entry(q.cqe); }

/* What a completion entry says is done, as a 64-bit basic-block count: the entry names the
 * first basic block of the last WQE completed, 16 bits of it. With `posted` a value of
 * ctr[POSTED] read after the entry was seen, that WQE lies within wqe_cnt blocks of it on
 * either side: below it by at most wqe_cnt (a poster had room: POSTED <= DONE + wqe_cnt), above
 * it by less than wqe_cnt (the WQEs the poster that holds POSTED is ringing: the NIC may
 * complete them before POSTED moves past them). So the full index is the latest value below
 * posted + wqe_cnt with those 16 bits (exact for wqe_cnt <= 16384; a snapshot read before the
 * entry can only make it lower, never higher). Done then covers that WQE's blocks (and, since a
 * QP completes in order, everything before it): `first` + its block count. An error entry names
 * the WQE that failed: everything before it is done, it is not. */
GSHMEMI_DEV uint64_t gshmemi_nic_done_of(const gshmem_nic_qp &q, const gshmemi_nic_cqe &e, uint64_t posted) {
    const uint64_t first = gshmemi_wqe_first_of(e.counter, posted);
    if (e.opcode == GSHMEM_NIC_CQE_REQ_ERR) return first;
    /* done covers the WQE's blocks, 2 for the 8-byte masked compare-swap (nic_wqe.h): a quiet
     * after one waits for done == posted */
    const uint32_t c0 = *(const volatile uint32_t *)(q.sq + (size_t)(first & (q.wqe_cnt - 1)) * 64);
    return first + gshmemi_wqe_bbs_at(gshmemi_be32(c0), first);
}

/* Ring CQ: keeps the first error entry in q.cqe (GPU memory), the opcode word last, so that
 * every waiter sees the QP failed, not only the reader that claimed the entry. */
GSHMEMI_DEV void gshmemi_nic_keep_error(const gshmem_nic_qp &q, const uint8_t *e) {
    if (gshmemi_nic_read_cqe(q).opcode == GSHMEM_NIC_CQE_REQ_ERR) return;   /* the first one stays */
    const uint64_t *src = (const uint64_t *)e;
    uint64_t *dst = (uint64_t *)q.cqe;
#pragma unroll
    for (int i = 0; i < 7; i++) dst[i] = gshmemi_ld_relaxed(src + i);
    /* release: the entry's other words before its opcode */
    asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(dst + 7), "l"(gshmemi_ld_relaxed(src + 7)) : "memory");
}

/* Ring CQ: claims, in order, the entries software owns (opcode valid, owner bit of the lap) by
 * compare-and-swap on ctr[CQ_CI], at most 32 per call (a bounded loop of one thread, not a
 * wait), and tells the NIC how far the ring was read. Returns what the claimed entries say is
 * done (0: none claimed). Readers that claim out of order may write cq_dbrec out of order: the
 * value lags by a few entries at most, which the ring's size (>= 2 * wqe_cnt) absorbs. A
 * claimed entry is gone for every other reader, so its index is extended against ctr[POSTED]
 * read after the entry was seen and before it is claimed (gshmemi_nic_done_of: while it is
 * unclaimed, DONE cannot pass its WQE). */
GSHMEMI_DEV uint64_t gshmemi_nic_consume(const gshmem_nic_qp &q) {
    uint64_t *cip = q.ctr + GSHMEM_NIC_CTR_CQ_CI;
    uint64_t ci = gshmemi_ld_acquire(cip), seen = 0;
    bool took = false;
#pragma unroll 1
    for (int k = 0; k < 32; k++) {
        const uint8_t *e = q.cq + (size_t)(ci & (q.cq_cnt - 1)) * 64;
        const gshmemi_nic_cqe c = gshmemi_nic_entry(e);
        if (c.opcode == GSHMEM_NIC_CQE_INVALID || c.owner != ((ci & q.cq_cnt) ? 1 : 0)) break;
        const uint64_t bound = gshmemi_ld_acquire(q.ctr + GSHMEM_NIC_CTR_POSTED) + q.wqe_cnt;
        const uint64_t was = atomicCAS((unsigned long long *)cip, (unsigned long long)ci, (unsigned long long)(ci + 1));
        if (was != ci) {   /* another reader claimed it: look at the next unclaimed one */
            ci = was;
            continue;
        }
        if (c.opcode == GSHMEM_NIC_CQE_REQ_ERR) gshmemi_nic_keep_error(q, e);
        const uint64_t d = gshmemi_nic_done_of(q, c, bound);
        seen = d > seen ? d : seen;
        ci++;
        took = true;
    }
    if (took) *(volatile uint32_t *)q.cq_dbrec = gshmemi_be32((uint32_t)(ci & 0xffffff));
    return seen;
}

/* One look at this thread's QP (each thread of a warp may wait on another QP): raises
 * ctr[DONE] to what the completion queue says and returns the larger of that and ctr[DONE]
 * (on a ring, the entries another thread claimed are no longer there to see: what they said is
 * in ctr[DONE]), and whether the QP failed. */
struct gshmemi_nic_look {
    uint64_t done;
    bool failed;
};
GSHMEMI_DEV gshmemi_nic_look gshmemi_nic_poll(const gshmem_nic_qp &q) {
    uint64_t *ctr = q.ctr;
    uint64_t seen = 0;
    gshmemi_nic_cqe e;
    if (q.cq) {
        seen = gshmemi_nic_consume(q);
        e = gshmemi_nic_read_cqe(q);
    } else {
        /* POSTED before the entry: the entry's WQE is then at most wqe_cnt + 2 below it; one
         * above posted + wqe_cnt (a stale POSTED) comes out 65536 early, which only holds DONE
         * back until the next look, the entry staying where it is */
        const uint64_t posted = gshmemi_ld_acquire(ctr + GSHMEM_NIC_CTR_POSTED);
        e = gshmemi_nic_read_cqe(q);
        if (e.opcode != GSHMEM_NIC_CQE_INVALID) seen = gshmemi_nic_done_of(q, e, posted + q.wqe_cnt);
    }
    if (seen) asm volatile("red.release.gpu.global.max.u64 [%0], %1;" ::"l"(ctr + GSHMEM_NIC_CTR_DONE), "l"(seen) : "memory");
    const uint64_t others = gshmemi_ld_acquire(ctr + GSHMEM_NIC_CTR_DONE);
    gshmemi_nic_look l;
    l.done = seen > others ? seen : others;
    l.failed = e.opcode == GSHMEM_NIC_CQE_REQ_ERR;
    return l;
}

#define GSHMEMI_NIC_RESERVE_FAILED UINT64_MAX             /* the QP is in error */
#define GSHMEMI_NIC_RESERVE_TOO_MANY (UINT64_MAX - 1)      /* a warp's blocks exceed the queue */

/* A wait on q that lasted past GSHMEM_WAIT_TIMEOUT: says where q stands and ends the kernel (a
 * NIC that stopped completing requests, or a software NIC whose thread or link did). */
static __device__ __noinline__ void gshmemi_nic_stuck_msg(const gshmem_nic_qp &q, int where) {
    const volatile uint64_t *c = q.ctr;
    GSHMEMI_DEVICE_MSG("a put, get, atomic, signal or quiet to PE %d waited %.0f s for %s of its queue pair 0x%x "
                       "(%llu blocks reserved, %llu posted, %llu known complete): "
                       "the NIC (the software NIC: its thread or the link it performs over) stopped completing "
                       "them; GSHMEM_WAIT_TIMEOUT sets the limit (0 = none)", q.pe, gshmemi_dstate.wait_timeout_ns * 1e-9,
                       where == 0 ? "the NIC to complete work requests" : where == 1 ? "room in the send queue"
                                                                        : "the earlier posters to ring",
                       q.qpn, (unsigned long long)c[GSHMEM_NIC_CTR_RESERVED],
                       (unsigned long long)c[GSHMEM_NIC_CTR_POSTED], (unsigned long long)c[GSHMEM_NIC_CTR_DONE]);
}
/* Every 256 polls of a wait for completions of q that began at *start (the global timer in units
 * of 2^20 ns; 0: not read yet): past GSHMEM_WAIT_TIMEOUT (never when that is 0), the message above
 * and a trap. The poll count is the wait's sleep length past its longest (one register more).
 * (A wait for send-queue room has none: one more register there passes the limit
 * tests/unit/test_registers.sh keeps for 1024-thread blocks. A kernel whose threads only post,
 * to a NIC that stopped, waits there without a message.) */
GSHMEMI_DEV void gshmemi_nic_deadline(const gshmem_nic_qp &q, unsigned ns, unsigned *start, int where = 0) {
    if ((ns & 255) != 255) return;
    const uint64_t lim = gshmemi_dstate.wait_timeout_ns;
    const unsigned now = (unsigned)(gshmemi_globaltimer() >> 20) | 1u;
    if (!*start) *start = now;
    else if (lim && ((uint64_t)(now - *start) << 20) > lim) {
        gshmemi_nic_stuck_msg(q, where);
        __trap();
    }
}

/* Step 1-2: t, the first of nbb basic blocks of q's send queue whose slots are free (the
 * requests of the previous lap there completed). The threads of the warp that post to the same
 * QP reserve together: one add for all, each thread's blocks after those of the lanes below it.
 * So a warp's blocks are contiguous and, being at most the queue's size, all have room once
 * every earlier request completed: a thread that waits for room never waits for a thread of its
 * own warp (which cannot ring while the warp waits). Returns GSHMEMI_NIC_RESERVE_FAILED if the
 * queue reported an error while the thread waited (the QP is in error: nothing more
 * completes), GSHMEMI_NIC_RESERVE_TOO_MANY if the warp's blocks are more than the queue holds. */
GSHMEMI_DEV uint64_t gshmemi_nic_reserve(const gshmem_nic_qp &q, unsigned nbb) {
    const unsigned m = gshmemi_lanes();
    const unsigned same = __match_any_sync(m, (unsigned long long)(uintptr_t)q.ctr);
    unsigned lane, below = 0, total = 0;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
#pragma unroll 1
    for (unsigned r = same; r; r &= r - 1) {   /* (the same trip count in every lane of `same`) */
        const int src = __ffs(r) - 1;
        const unsigned v = __shfl_sync(same, nbb, src);
        total += v;
        below += src < (int)lane ? v : 0;
    }
    const int leader = __ffs(same) - 1;
    unsigned long long first = 0;
    if ((int)lane == leader)
        first = atomicAdd((unsigned long long *)(q.ctr + GSHMEM_NIC_CTR_RESERVED), (unsigned long long)total);
    const uint64_t t = __shfl_sync(same, first, leader) + below;
    if (gshmemi_uniform(m, total > q.wqe_cnt)) return GSHMEMI_NIC_RESERVE_TOO_MANY;
    uint64_t done = gshmemi_ld_acquire(q.ctr + GSHMEM_NIC_CTR_DONE);
    bool room = t + nbb - done <= q.wqe_cnt, failed = false;
    unsigned ns = 0;
#ifdef GSHMEMI_NIC_DEBUG_DEADLINES
    unsigned dbg_n = 0, dbg_start = 0;
#endif
    GSHMEMI_WHILE_ANY(m, !room && !failed) {
        if (!room && !failed) {
            const gshmemi_nic_look l = gshmemi_nic_poll(q);
            done = l.done > done ? l.done : done;
            room = t + nbb - done <= q.wqe_cnt;
            failed = l.failed;
#ifdef GSHMEMI_NIC_DEBUG_DEADLINES   /* (a diagnostic build: the posting waits get deadlines too) */
            if (!room && !failed) gshmemi_nic_deadline(q, dbg_n++, &dbg_start, 1);
#endif
        }
        gshmemi_nanosleep_if(gshmemi_uniform(m, !room && !failed) && ns, ns);
        ns = ns ? (ns < 1024 ? 2 * ns : 1024) : 32;
    }
    return failed ? GSHMEMI_NIC_RESERVE_FAILED : t;
}

/* The send-queue slot of block t. */
GSHMEMI_DEV uint8_t *gshmemi_nic_slot(const gshmem_nic_qp &q, uint64_t t) {
    return q.sq + (size_t)(t & (q.wqe_cnt - 1)) * 64;
}

/* Steps 4-7: the WQEs at t (nbb blocks, already written; the last of them starts at block
 * last) are published after every earlier one: the doorbell record first (the NIC reads WQEs
 * below it), then the doorbell, an 8-byte store of the last WQE's first 8 bytes (as rdma-core
 * rings a chain of work requests). Each waiting thread goes when the QP's posted count reaches
 * its t; threads of one warp that post to one QP go one after another, round by round. */
GSHMEMI_DEV void gshmemi_nic_ring(const gshmem_nic_qp &q, uint64_t t, unsigned nbb, uint64_t last) {
    const unsigned m = gshmemi_lanes();
    uint64_t *posted = q.ctr + GSHMEM_NIC_CTR_POSTED;
    bool rung = false;
#ifdef GSHMEMI_NIC_DEBUG_DEADLINES
    unsigned dbg_n = 0, dbg_start = 0;
#endif
    GSHMEMI_WHILE_ANY(m, !rung) {
        const bool mine = !rung && gshmemi_ld_acquire(posted) == t;
#ifdef GSHMEMI_NIC_DEBUG_DEADLINES
        if (!rung && !mine) gshmemi_nic_deadline(q, dbg_n++, &dbg_start, 2);
#endif
        if (mine) {
            const uint64_t first8 = *(const volatile uint64_t *)gshmemi_nic_slot(q, last);
            /* the WQE's stores, then the record: the NIC may read the WQE once it sees it */
            gshmemi_fence_acq_rel_sys();
            *(volatile uint32_t *)&q.dbrec[1] = gshmemi_be32((uint32_t)((t + nbb) & 0xffff));
            gshmemi_fence_acq_rel_sys();
            *(volatile uint64_t *)q.db = first8;
            asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(posted), "l"(t + nbb) : "memory");
            rung = true;
        }
    }
}

/* Waits, where `need` says so, until the WQE at t completed (and every earlier one of q); a
 * thread without need touches nothing of q, which may then be any QP, one without queues
 * included (the threads of a warp in a loop over the PEs need not be at the same PE: threads
 * that reached the loop at different times may run together, ptx.h). false: the QP reported an
 * error (the caller reports it). */
GSHMEMI_DEV bool gshmemi_nic_wait_if(bool need, const gshmem_nic_qp &q, uint64_t t) {
    const unsigned m = gshmemi_lanes();
    uint64_t done = need ? gshmemi_ld_acquire(q.ctr + GSHMEM_NIC_CTR_DONE) : 0;
    bool ok = !need || done > t, failed = false;
    unsigned ns = 0, start = 0;
    GSHMEMI_WHILE_ANY(m, !ok && !failed) {
        if (!ok && !failed) {
            const gshmemi_nic_look l = gshmemi_nic_poll(q);
            done = l.done > done ? l.done : done;
            ok = done > t;
            failed = l.failed && !ok;
            if (!ok && !failed) gshmemi_nic_deadline(q, ns, &start);
        }
        gshmemi_nanosleep_if(gshmemi_uniform(m, !ok && !failed) && ns, ns < 1024 ? ns : 1024);
        ns = ns ? (ns < 1024 ? 2 * ns : ns + 1) : 32;   /* (past 1024: the polls at the longest sleep) */
    }
    return !failed;
}
GSHMEMI_DEV bool gshmemi_nic_wait(const gshmem_nic_qp &q, uint64_t t) { return gshmemi_nic_wait_if(true, q, t); }

/* The entry of a key table holding a: tables laid out as nic_desc.h's chunk_range ([2 * cap + 1]:
 * entry i's range [r[2i], r[2i + 1]), then the number of entries in use), keys[i] its key. Its
 * key and the range's end (a request stays within one key's registration). false: a is in no
 * entry. The walk over the entries in use is warp-uniform (ptx.h): it runs while any thread
 * still looks, each thread reading one entry per turn. */
GSHMEMI_DEV bool gshmemi_nic_find(const uint64_t *r, uint32_t cap, const uint32_t *keys, uint64_t a, uint32_t *key,
                                  uint64_t *end) {
    const unsigned m = gshmemi_lanes();
    const uint64_t n = r ? gshmemi_ld_relaxed(r + 2 * (size_t)cap) : 0;
    uint32_t k = 0, i = 0;
    uint64_t e = 0;
    bool found = false;
    GSHMEMI_WHILE_ANY(m, !found && i < n && i < cap) {
        if (!found && i < n && i < cap) {
            if (a >= r[2 * i] && a < r[2 * i + 1]) {
                k = keys[i];
                e = r[2 * i + 1];
                found = true;
            }
            i++;
        }
    }
    *key = k;
    *end = e;
    return found;
}

/* The memory key of heap offset off: the key of its chunk at PE pe (keys = rkeys + pe *
 * GSHMEM_NIC_MAX_CHUNKS) or here (keys = lkeys), and the chunk's end (a heap offset). false: off
 * is not in a registered chunk. */
GSHMEMI_DEV bool gshmemi_nic_key(const gshmem_nic_chan &c, const uint32_t *keys, uint64_t off, uint32_t *key,
                                 uint64_t *end) {
    return gshmemi_nic_find(c.chunk_range, c.n_chunks, keys, off, key, end);
}

/* The local key of heap offset off (address base + off): its heap chunk's, else that of the
 * registered local region (nic_desc.h: a team's landing buffer) holding the address; the end as
 * a heap offset. */
GSHMEMI_DEV bool gshmemi_nic_lkey(const gshmem_nic_chan &c, uint64_t base, uint64_t off, uint32_t *key,
                                  uint64_t *end) {
    if (gshmemi_nic_key(c, c.lkeys, off, key, end)) return true;
    if (!gshmemi_nic_find(c.local_range, c.n_local, c.local_keys, base + off, key, end)) return false;
    *end -= base;   /* (end - off stays the bytes left: modulo 2^64 on both sides) */
    return true;
}

/* The fetch slot of this thread (nic_desc.h): its SM, warp slot and lane. */
GSHMEMI_DEV uint8_t *gshmemi_nic_fetch_slot(const gshmem_nic_chan &c) {
    unsigned sm, warp, lane;
    asm("mov.u32 %0, %%smid;" : "=r"(sm));
    asm("mov.u32 %0, %%warpid;" : "=r"(warp));
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    return c.fetch + (size_t)(((sm * 64u + warp) * 32u + lane) & (c.fetch_slots - 1)) * 8;
}

#endif
