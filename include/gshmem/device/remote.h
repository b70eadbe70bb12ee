/* The remote branch of the device calls. A PE's route (gshmemi_route, state.h) is its window
 * slot when this GPU reaches it by load/store, else a negative channel kind: the PE is reached
 * through this PE's proxy ring (GSHMEMI_ROUTE_PROXY: gshmem/device/chan_proxy.h, protocol in
 * docs/proxy.md); GSHMEMI_ROUTE_NIC is the kind a NIC queue takes. Every function here is out of
 * line (__noinline__) and loops only warp-uniformly (ptx.h): a load/store call tests its slot
 * and branches here, so its own instructions, registers and polling loops stay what they are
 * without the branch (tests/unit/test_registers.sh and tools/sass_compare.sh show it).
 *
 * Completion, per call (docs/memory-model.md, "Between nodes"):
 *   p, put_nbi, get_nbi, signal_op, non-fetching atomics: posted; complete at quiet
 *   put, put_signal (blocking forms), strided: return once the proxy retired the descriptor
 *     (the source may be reused; the data is in the target's memory)
 *   get, g, fetching atomics: return with the value (owned completion slot, acknowledged)
 *   fence: a FENCE descriptor (later descriptors start after earlier ones completed)
 *   quiet: waits until `retired` covers every ticket claimed before it */
#ifndef GSHMEM_DEVICE_REMOTE_H
#define GSHMEM_DEVICE_REMOTE_H

#include "state.h"
#include "copy.h"
#include "chan_proxy.h"
#include "chan_nic.h"
#include "gshmem/nic_wqe.h"

#define GSHMEMI_REMOTE static __device__ __noinline__

static __device__ __noinline__ void gshmemi_remote_error_msg(const char *call, int pe, int status) {
    GSHMEMI_DEVICE_MSG("%s to PE %d: the remote transport failed (status %d; the proxy's message "
                       "above names the operation and the peer)", call, pe, status);
}
GSHMEMI_REPORTER(gshmemi_remote_error, (const char *call, int pe, int status), (call, pe, status))

static __device__ __forceinline__ gshmem_proxy_desc gshmemi_rdesc(int op, int pe, uint64_t size,
                                                                  const void *raddr, uint64_t laddr) {
    gshmem_proxy_desc d;
    d.seq = 0;
    d.op = (uint8_t)op;
    d.amo = 0;
    d.flags = 0;
    d.pe = pe;
    d.size = size;
    d.raddr = (uint64_t)(uintptr_t)raddr;
    d.laddr = laddr;
    d.sig_addr = 0;
    d.sig_value = 0;
    d.ret = 0;
    return d;
}

enum { GSHMEMI_RWAIT_NONE = 0, GSHMEMI_RWAIT_DONE = 1, GSHMEMI_RWAIT_VALUE = 2 };

/* Posts d to this PE's proxy ring. RWAIT_DONE returns once every ticket up to d's retired (the
 * proxy completed it: data delivered, source read); RWAIT_VALUE waits for d's answer in its
 * ring-owned completion slot, acknowledges the slot and returns the value. */
template <int WAIT> GSHMEMI_DEV uint64_t gshmemi_proxy_op(gshmem_proxy_desc d, const char *call) {
    const gshmem_proxy_chan &c = gshmemi_dstate.chan;
    const unsigned m = gshmemi_lanes();
    if (!c.slots) gshmemi_unreachable_pe(call, d.pe);
    /* Errors are tested by vote: a branch out of a wait taken by some threads only would make the
     * wait's loop divergent after all (ptx.h). The ring's error is the same for all of them. */
    const uint64_t t = gshmemi_chan_claim(c);
    if (gshmemi_uniform(m, t == UINT64_MAX)) gshmemi_remote_error(call, d.pe, gshmemi_chan_error(c));
    gshmem_proxy_ret *r = &c.rets[t & (c.n_slots - 1)];
    if (WAIT == GSHMEMI_RWAIT_VALUE) d.ret = (uint64_t)(uintptr_t)r;
    gshmemi_chan_publish(c, t, d);
    if (WAIT == GSHMEMI_RWAIT_DONE) {
        const int e = gshmemi_chan_wait_retired(c, t + 1);
        if (gshmemi_uniform(m, e != 0)) gshmemi_remote_error(call, d.pe, e);
    } else if (WAIT == GSHMEMI_RWAIT_VALUE) {
        const int e = gshmemi_chan_wait_ret(r, t);
        const uint64_t v = gshmemi_ld_relaxed(&r->value);
        /* release: the reads of the slot come before the proxy may reuse it */
        asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(&r->ack), "l"(t + 1) : "memory");
        if (gshmemi_uniform(m, e != 0)) gshmemi_remote_error(call, d.pe, e);
        return v;
    }
    return 0;
}

/* ---- the NIC channel ---------------------------------------------------------------------- */
static __device__ __noinline__ void gshmemi_nic_error_msg(const char *call, int pe, const gshmem_proxy_desc &d,
                                                          int syndrome) {
    GSHMEMI_DEVICE_MSG("%s to PE %d: the NIC completed the request with an error (operation %d, remote "
                       "address 0x%llx, %llu bytes, syndrome 0x%x; docs/ibgda.md, \"Errors\")", call, pe,
                       d.op, (unsigned long long)d.raddr, (unsigned long long)d.size, syndrome);
}
GSHMEMI_REPORTER(gshmemi_nic_error, (const char *call, int pe, const gshmem_proxy_desc &d, int syndrome),
                 (call, pe, d, syndrome))
static __device__ __noinline__ void gshmemi_nic_bad_buf_msg(const char *call, int pe, uint64_t a, bool local) {
    GSHMEMI_DEVICE_MSG("%s to PE %d: %s address 0x%llx is not in a registered part of the symmetric "
                       "heap, and the NIC reaches registered memory only: pass memory from gshmem_malloc "
                       "(docs/ibgda.md)", call, pe, local ? "the local buffer's" : "the remote",
                       (unsigned long long)a);
}
GSHMEMI_REPORTER(gshmemi_nic_bad_buf, (const char *call, int pe, uint64_t a, bool local), (call, pe, a, local))
/* A work request moves at most GSHMEMI_NIC_MAX_BYTES (the mlx5 ports' largest message). */
#define GSHMEMI_NIC_MAX_BYTES (1ull << 30)
static __device__ __noinline__ void gshmemi_nic_too_big_msg(const char *call, int pe, uint64_t n, unsigned wqes) {
    GSHMEMI_DEVICE_MSG("%s to PE %d: %llu bytes take %u work requests (one per registered chunk of the heap "
                       "and per 1 GiB), more than a send queue holds (GSHMEM_IBGDA_SQ_SLOTS): split the "
                       "transfer or raise GSHMEM_IBGDA_SQ_SLOTS (docs/ibgda.md)", call, pe, (unsigned long long)n,
                       wqes);
}
GSHMEMI_REPORTER(gshmemi_nic_too_big, (const char *call, int pe, uint64_t n, unsigned wqes), (call, pe, n, wqes))
static __device__ __noinline__ void gshmemi_nic_warp_too_many_msg(const char *call, int pe, unsigned slots) {
    GSHMEMI_DEVICE_MSG("%s to PE %d: the threads of a warp that post to PE %d at once need more send-queue "
                       "blocks than its %u (GSHMEM_IBGDA_SQ_SLOTS): raise GSHMEM_IBGDA_SQ_SLOTS (docs/ibgda.md)",
                       call, pe, pe, slots);
}
GSHMEMI_REPORTER(gshmemi_nic_warp_too_many, (const char *call, int pe, unsigned slots), (call, pe, slots))

/* Basic blocks d's work requests take. */
GSHMEMI_DEV unsigned gshmemi_nic_bbs(const gshmem_proxy_desc &d) {
    switch (d.op) {
    case GSHMEM_PROXY_OP_AMO: return (unsigned)gshmemi_wqe_amo_bbs(d.amo, (uint32_t)d.size);
    case GSHMEM_PROXY_OP_PUT_SIGNAL: return 2;   /* the data, then the signal (fenced) */
    default: return 1;
    }
}

/* The signal of a SIGNAL or PUT_SIGNAL as a work request at t: SET an 8-byte inline write, ADD a
 * non-fetching add (its old value goes to this thread's fetch slot, unread). */
GSHMEMI_DEV void gshmemi_nic_build_signal(const gshmem_nic_qp &q, uint64_t t, uint8_t flags, uint64_t sig,
                                          uint32_t rkey, uint64_t value, int sig_op, uint64_t sink,
                                          uint32_t sink_key) {
    if (sig_op == GSHMEM_PROXY_SIG_SET)
        gshmemi_wqe_put_inline(gshmemi_nic_slot(q, t), (uint16_t)t, q.qpn, flags, sig, rkey, &value, 8);
    else
        gshmemi_wqe_add(gshmemi_nic_slot(q, t), (uint16_t)t, q.qpn, flags, sig, rkey, sink, sink_key, 8, value);
}

/* The part of a put or get at heap offsets ro (remote) and lo (local), left bytes, that one
 * request moves: within one registered chunk at both ends (each chunk has its own key), at
 * most GSHMEMI_NIC_MAX_BYTES; 0 if either offset is in no chunk (the local one: nor in a
 * registered local region). */
GSHMEMI_DEV uint32_t gshmemi_nic_piece(const gshmem_nic_chan &c, const uint32_t *rkeys, uint64_t base, uint64_t ro,
                                       uint64_t lo, uint64_t left, uint32_t *rkey, uint32_t *lkey) {
    uint64_t end;
    uint32_t n = (uint32_t)(left < GSHMEMI_NIC_MAX_BYTES ? left : GSHMEMI_NIC_MAX_BYTES);
    if (!gshmemi_nic_key(c, rkeys, ro, rkey, &end)) return 0;
    if (end - ro < n) n = (uint32_t)(end - ro);
    if (!gshmemi_nic_lkey(c, base, lo, lkey, &end)) return 0;
    if (end - lo < n) n = (uint32_t)(end - lo);
    return n;
}

/* (A put or get posted here moves at least one byte: its callers skip empty transfers, as a
 * request of no blocks would share its index with the next lane's.) Posts d to the queue pair of
 * its PE as work requests and waits as WAIT says (RWAIT_DONE: the
 * requests completed, the data is in the target's memory; RWAIT_VALUE: the fetched value). A
 * put or get is as many requests as it has pieces (gshmemi_nic_piece; nearly always one),
 * reserved and rung together; put_signal's signal follows them, fenced after the data. Every
 * request asks for a completion; a QP completes in order, so the wait is for the last one.
 * Fetched values land in this thread's fetch slot: 4-byte atomics return theirs big-endian. */
template <int WAIT> GSHMEMI_DEV uint64_t gshmemi_nic_op(gshmem_proxy_desc d, const char *call) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    const gshmem_nic_chan &c = s->nic;
    const unsigned m = gshmemi_lanes();
    const gshmem_nic_qp &q = c.qps[d.pe];
    const uint64_t base = (uint64_t)(uintptr_t)s->heap_base;
    const bool rma = d.op == GSHMEM_PROXY_OP_PUT || d.op == GSHMEM_PROXY_OP_GET || d.op == GSHMEM_PROXY_OP_PUT_SIGNAL;
    const uint32_t *rkeys = c.rkeys + (size_t)d.pe * GSHMEM_NIC_MAX_CHUNKS;
    uint32_t rkey = 0, lkey = 0, skey = 0;
    uint64_t end;
    /* a put or get: its pieces (each a request of one block), counted first */
    unsigned pieces = 0;
    bool bad = false;
    uint64_t ro = d.raddr - base, lo = d.laddr - base, left = rma ? d.size : 0;
    GSHMEMI_WHILE_ANY(m, left && !bad) {
        if (left && !bad) {
            const uint32_t n = gshmemi_nic_piece(c, rkeys, base, ro, lo, left, &rkey, &lkey);
            bad = n == 0;
            ro += n;
            lo += n;
            left -= n;
            pieces++;
        }
    }
    if (gshmemi_uniform(m, bad)) {   /* the side whose offset is in no chunk */
        const bool rbad = bad && !gshmemi_nic_key(c, rkeys, ro, &rkey, &end);
        if (bad) gshmemi_nic_bad_buf(call, d.pe, base + (rbad ? ro : lo), !rbad);
    }
    /* (a NOP names no memory: a strided call's idle threads pass addresses past its elements,
     * which may lie past the heap's registered end) */
    const bool rok = rma || d.op == GSHMEM_PROXY_OP_NOP || gshmemi_nic_key(c, rkeys, d.raddr - base, &rkey, &end);
    const bool sok = d.op != GSHMEM_PROXY_OP_PUT_SIGNAL || gshmemi_nic_key(c, rkeys, d.sig_addr - base, &skey, &end);
    /* (reports by vote, each made by the threads it concerns: the warp's threads may post to
     * different PEs, from different calls) */
    if (gshmemi_uniform(m, !rok || !sok) && (!rok || !sok))
        gshmemi_nic_bad_buf(call, d.pe, !rok ? d.raddr : d.sig_addr, false);
    const unsigned nbb = rma ? pieces + (d.op == GSHMEM_PROXY_OP_PUT_SIGNAL) : gshmemi_nic_bbs(d);
    if (gshmemi_uniform(m, nbb > q.wqe_cnt) && nbb > q.wqe_cnt) gshmemi_nic_too_big(call, d.pe, d.size, nbb);
    const uint64_t t = gshmemi_nic_reserve(q, nbb);
    if (gshmemi_uniform(m, t == GSHMEMI_NIC_RESERVE_TOO_MANY)) gshmemi_nic_warp_too_many(call, d.pe, q.wqe_cnt);
    if (gshmemi_uniform(m, t == GSHMEMI_NIC_RESERVE_FAILED) && t == GSHMEMI_NIC_RESERVE_FAILED)
        gshmemi_nic_error(call, d.pe, d, (int)q.cqe[GSHMEM_NIC_CQE_SYNDROME]);
    uint8_t *fetch = gshmemi_nic_fetch_slot(c);
    const uint64_t fetch_a = (uint64_t)(uintptr_t)fetch;
    const uint8_t cq = GSHMEMI_WQE_CQ_UPDATE;
    uint8_t *w = gshmemi_nic_slot(q, t);
    /* (the keys are looked up again here, not kept from the checks above: nothing stays live
     * across the wait for room but what the requests need, tests/unit/test_registers.sh) */
    if (rma) {
        /* a put or get's pieces: the loop votes among the threads in this branch (mr), not all
         * of m: a thread of the warp may post a NOP or an atomic beside the others' puts, and a
         * vote that names it would wait for it while it is elsewhere (on the NIC's queue:
         * posters that never ring) */
        const unsigned mr = gshmemi_lanes();
        uint64_t ro = d.raddr - base, lo = d.laddr - base, left = d.size, k = t;
        GSHMEMI_WHILE_ANY(mr, left) {
            if (left) {
                const uint32_t n = gshmemi_nic_piece(c, rkeys, base, ro, lo, left, &rkey, &lkey);
                if (d.op == GSHMEM_PROXY_OP_GET)
                    gshmemi_wqe_get(gshmemi_nic_slot(q, k), (uint16_t)k, q.qpn, cq, base + ro, rkey, base + lo, lkey, n);
                else
                    gshmemi_wqe_put(gshmemi_nic_slot(q, k), (uint16_t)k, q.qpn, cq, base + ro, rkey, base + lo, lkey, n);
                ro += n;
                lo += n;
                left -= n;
                k++;
            }
        }
    } else {
        gshmemi_nic_key(c, rkeys, d.raddr - base, &rkey, &end);
        switch (d.op) {
        case GSHMEM_PROXY_OP_P:
            gshmemi_wqe_put_inline(w, (uint16_t)t, q.qpn, cq, d.raddr, rkey, &d.laddr, (uint32_t)d.size);
            break;
        case GSHMEM_PROXY_OP_G:
            gshmemi_wqe_get(w, (uint16_t)t, q.qpn, cq, d.raddr, rkey, fetch_a, c.fetch_lkey, (uint32_t)d.size);
            break;
        case GSHMEM_PROXY_OP_AMO:
            gshmemi_wqe_amo(w, gshmemi_nic_slot(q, t + 1), (uint16_t)t, q.qpn, cq, d.amo, (uint32_t)d.size, d.raddr,
                            rkey, fetch_a, c.fetch_lkey, d.laddr, d.compare);
            break;
        case GSHMEM_PROXY_OP_SIGNAL:
            gshmemi_nic_build_signal(q, t, cq, d.raddr, rkey, d.laddr, d.amo, fetch_a, c.fetch_lkey);
            break;
        default:
            gshmemi_wqe_nop(w, (uint16_t)t, q.qpn, cq);
            break;
        }
    }
    if (d.op == GSHMEM_PROXY_OP_PUT_SIGNAL) {
        gshmemi_nic_key(c, rkeys, d.sig_addr - base, &skey, &end);
        gshmemi_nic_build_signal(q, t + pieces, cq | GSHMEMI_WQE_FENCE, d.sig_addr, skey, d.sig_value, d.amo, fetch_a,
                                 c.fetch_lkey);
    }
    /* the last request's first block (a put or get's pieces and a signal take a block each) */
    const uint64_t last = rma ? t + nbb - 1 : t;
    gshmemi_nic_ring(q, t, nbb, last);
    if (WAIT == GSHMEMI_RWAIT_NONE) return 0;
    const bool ok = gshmemi_nic_wait(q, last);
    if (gshmemi_uniform(m, !ok) && !ok)
        gshmemi_nic_error(call, d.pe, d, (int)q.cqe[GSHMEM_NIC_CQE_SYNDROME]);
    if (WAIT == GSHMEMI_RWAIT_DONE) return 0;
    /* the value landed before the completion was written (the NIC's DMA, then the CQE) */
    if (d.size == 4 && d.op == GSHMEM_PROXY_OP_AMO) return gshmemi_be32(*(volatile uint32_t *)fetch);
    uint64_t v = 0;
    memcpy(&v, (const void *)fetch, d.size <= 8 ? d.size : 8);
    return v;
}

/* Quiet of the NIC channel: every request this PE posted to a queue pair before the call is
 * complete. One QP after another, each thread at its own PE of the loop (the trip count is the
 * job's PE count, but threads that entered at different times may run together mid-loop). */
GSHMEMI_DEV void gshmemi_nic_quiet(const char *call) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    const gshmem_nic_chan &c = s->nic;
    const unsigned m = gshmemi_lanes();
    for (int pe = 0; pe < s->npes; pe++) {
        const bool nic = gshmemi_slot_of(s, pe) == GSHMEMI_ROUTE_NIC;
        const uint64_t posted = nic ? gshmemi_ld_acquire(c.qps[pe].ctr + GSHMEM_NIC_CTR_POSTED) : 0;
        const uint64_t done = nic ? gshmemi_ld_acquire(c.qps[pe].ctr + GSHMEM_NIC_CTR_DONE) : 0;
        /* (pe is this thread's: threads of the warp may be at different PEs of the loop) */
        const bool need = nic && posted > done;
        if (gshmemi_uniform(m, need) && !gshmemi_nic_wait_if(need, c.qps[pe], posted - 1)) {
            gshmem_proxy_desc d = gshmemi_rdesc(GSHMEM_PROXY_OP_NOP, pe, 0, 0, 0);
            gshmemi_nic_error(call, pe, d, (int)c.qps[pe].cqe[GSHMEM_NIC_CQE_SYNDROME]);
        }
    }
}

/* One operation to a remote PE, by the channel its route names (d.pe -1: the ring itself). */
template <int WAIT> GSHMEMI_DEV uint64_t gshmemi_remote_op_body(gshmem_proxy_desc d, const char *call) {
    const int route = d.pe < 0 ? GSHMEMI_ROUTE_PROXY : gshmemi_slot_of(&gshmemi_dstate, d.pe);
    if (route == GSHMEMI_ROUTE_NIC && gshmemi_dstate.nic.qps) return gshmemi_nic_op<WAIT>(d, call);
    if (route != GSHMEMI_ROUTE_PROXY) gshmemi_unreachable_pe(call, d.pe);
    return gshmemi_proxy_op<WAIT>(d, call);
}

/* Whether this PE has a remote channel (a job across nodes). */
GSHMEMI_DEV bool gshmemi_has_remote(void) { return gshmemi_dstate.chan.slots || gshmemi_dstate.nic.qps; }
template <int WAIT> GSHMEMI_REMOTE uint64_t gshmemi_remote_op(gshmem_proxy_desc d, const char *call) {
    return gshmemi_remote_op_body<WAIT>(d, call);
}


/* The ring's ticket after everything posted to it so far (0 without a ring). */
GSHMEMI_DEV uint64_t gshmemi_remote_mark(void) {
    return gshmemi_dstate.chan.slots ? gshmemi_ld_relaxed((const uint64_t *)gshmemi_dstate.chan.tail) : 0;
}

/* Quiet up to a mark: everything posted before ticket t is complete. chan_seen (GPU memory)
 * holds a `retired` value some thread already observed, so a quiet with nothing posted since
 * costs two GPU-memory loads, not a read across PCIe. (The _body forms are for callers that are
 * themselves out of line: each call level adds its live registers to the kernel's count.) */
GSHMEMI_DEV void gshmemi_remote_quiet_to_body(uint64_t t, const char *call) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    if (s->nic.qps) gshmemi_nic_quiet(call);   /* (a NIC channel has no marks: all of it) */
    if (!s->chan.slots) return;
    const unsigned m = gshmemi_lanes();
    uint64_t seen;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(seen) : "l"(s->chan_seen) : "memory");
    if (gshmemi_all(m, t <= seen)) return;
    const int e = gshmemi_chan_wait_retired(s->chan, t);
    if (gshmemi_uniform(m, e != 0)) gshmemi_remote_error(call, -1, e);
    /* release: what this thread acquired (the retirement) is visible to a later shortcut */
    asm volatile("red.release.gpu.global.max.u64 [%0], %1;" ::"l"(s->chan_seen), "l"(t) : "memory");
}
GSHMEMI_REMOTE void gshmemi_remote_quiet_to(uint64_t t, const char *call) { gshmemi_remote_quiet_to_body(t, call); }
/* Quiet: everything posted before is complete. */
GSHMEMI_DEV void gshmemi_remote_quiet(const char *call) { gshmemi_remote_quiet_to(gshmemi_remote_mark(), call); }

/* Fence: later descriptors of the ring start only after the earlier ones completed (the
 * proxy orders the whole ring; providers without FI_FENCE are ordered by it too). Nothing to
 * do when nothing was posted since a quiet. */
GSHMEMI_DEV void gshmemi_remote_fence(const char *call) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    /* a NIC channel: its queue pairs are ordered for writes but not for reads and atomics
     * behind them, so a fence completes what was posted (a quiet of the NIC alone) */
    if (s->nic.qps) gshmemi_nic_quiet(call);
    if (!s->chan.slots) return;
    const unsigned m = gshmemi_lanes();
    const uint64_t t = gshmemi_remote_mark();
    const uint64_t seen = gshmemi_ld_relaxed((const uint64_t *)s->chan_seen);
    if (gshmemi_all(m, t <= seen)) return;
    gshmemi_remote_op<GSHMEMI_RWAIT_NONE>(gshmemi_rdesc(GSHMEM_PROXY_OP_FENCE, -1, 0, 0, 0), call);
}

/* put / get of n bytes, one descriptor for the group (its leader posts, after the group's
 * gather so every thread's source data is written). */
template <class S, bool BLOCKING, bool GET>
GSHMEMI_DEV void gshmemi_remote_rma(void *sym, const void *local, size_t n, int pe, const char *call) {
    S::sync();
    if (S::rank() == 0 && n)   /* (no bytes: nothing to post; a NIC reads a byte count of 0 as 2 GiB) */
        gshmemi_remote_op<BLOCKING ? GSHMEMI_RWAIT_DONE : GSHMEMI_RWAIT_NONE>(
            gshmemi_rdesc(GET ? GSHMEM_PROXY_OP_GET : GSHMEM_PROXY_OP_PUT, pe, n, sym, (uint64_t)(uintptr_t)local),
            call);
    S::sync();
}

/* Strided: one descriptor per element, split over the group; blocking (OpenSHMEM has no
 * _nbi strided calls): the group's leader quiets after the gather. The element loop runs as
 * long as any thread of the warp has elements left (warp-uniform, ptx.h); a thread with none
 * left meanwhile posts a NOP, so the body has no branch. */
template <class S, bool GET, int ES>
GSHMEMI_DEV void gshmemi_remote_strided(char *dest, const char *src, ptrdiff_t dst, ptrdiff_t sst,
                                           size_t n, int pe, const char *call) {
    const unsigned m = gshmemi_lanes();
    size_t i = S::rank();
    GSHMEMI_WHILE_ANY(m, i < n) {
        char *d = dest + (size_t)i * dst * ES;
        const char *sp = src + (size_t)i * sst * ES;
        const int op = i >= n ? GSHMEM_PROXY_OP_NOP : GET ? GSHMEM_PROXY_OP_GET : GSHMEM_PROXY_OP_PUT;
        /* (an element across two chunks of the heap: the NIC channel posts a request per part) */
        gshmemi_remote_op<GSHMEMI_RWAIT_NONE>(
            GET ? gshmemi_rdesc(op, pe, ES, sp, (uint64_t)(uintptr_t)d) : gshmemi_rdesc(op, pe, ES, d, (uint64_t)(uintptr_t)sp),
            call);
        i += S::size();
    }
    S::sync();
    if (S::rank() == 0) gshmemi_remote_quiet(call);
    S::sync();
}

/* p: the value travels inline; g: answered in the owned slot. */
GSHMEMI_DEV void gshmemi_remote_p(void *sym, uint64_t bits, int size, int pe, const char *call) {
    gshmemi_remote_op<GSHMEMI_RWAIT_NONE>(gshmemi_rdesc(GSHMEM_PROXY_OP_P, pe, (uint64_t)size, sym, bits), call);
}
GSHMEMI_DEV uint64_t gshmemi_remote_g(const void *sym, int size, int pe, const char *call) {
    return gshmemi_remote_op<GSHMEMI_RWAIT_VALUE>(gshmemi_rdesc(GSHMEM_PROXY_OP_G, pe, (uint64_t)size, sym, 0), call);
}

/* Atomics (GSHMEMI_AMO_* = GSHMEM_PROXY_AMO_*): FETCH/SWAP/CSWAP and the fetch forms wait for
 * the old value; SET and the non-fetching forms are posted. */
GSHMEMI_DEV uint64_t gshmemi_remote_amo(int op, bool fetch, void *sym, int size, uint64_t value,
                                           uint64_t cond, int pe, const char *call) {
    gshmem_proxy_desc d = gshmemi_rdesc(GSHMEM_PROXY_OP_AMO, pe, (uint64_t)size, sym, value);
    d.amo = (uint8_t)op;
    d.flags = fetch ? GSHMEM_PROXY_F_FETCH : 0;
    d.compare = cond;
    /* (one call site passes one `fetch`: the same in every thread, said so for the compiler) */
    if (gshmemi_uniform(gshmemi_lanes(), fetch)) return gshmemi_remote_op<GSHMEMI_RWAIT_VALUE>(d, call);
    return gshmemi_remote_op<GSHMEMI_RWAIT_NONE>(d, call);
}

GSHMEMI_DEV void gshmemi_remote_signal(uint64_t *sig, uint64_t value, int sig_op, int pe,
                                          const char *call) {
    gshmem_proxy_desc d = gshmemi_rdesc(GSHMEM_PROXY_OP_SIGNAL, pe, 8, sig, value);
    d.amo = (uint8_t)sig_op;
    gshmemi_remote_op<GSHMEMI_RWAIT_NONE>(d, call);
}

/* put_signal: the proxy applies the signal only after the data is in the target's memory
 * (ordered at the target's proxy, correct on unordered providers). */
template <class S, bool BLOCKING>
GSHMEMI_DEV void gshmemi_remote_put_signal(void *dest, const void *src, size_t n, uint64_t *sig,
                                              uint64_t value, int sig_op, int pe, const char *call) {
    S::sync();
    if (S::rank() == 0) {
        /* no bytes: the signal alone */
        gshmem_proxy_desc d = n ? gshmemi_rdesc(GSHMEM_PROXY_OP_PUT_SIGNAL, pe, n, dest, (uint64_t)(uintptr_t)src)
                                : gshmemi_rdesc(GSHMEM_PROXY_OP_SIGNAL, pe, 8, sig, value);
        d.amo = (uint8_t)sig_op;
        d.sig_addr = (uint64_t)(uintptr_t)sig;
        d.sig_value = value;
        gshmemi_remote_op<BLOCKING ? GSHMEMI_RWAIT_DONE : GSHMEMI_RWAIT_NONE>(d, call);
    }
    S::sync();
}

#endif
