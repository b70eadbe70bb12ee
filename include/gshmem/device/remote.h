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

#define GSHMEMI_REMOTE static __device__ __noinline__

static __device__ __noinline__ void gshmemi_remote_error_msg(const char *call, int pe, int status) {
    GSHMEMI_DEVICE_MSG("%s to PE %d: the remote transport failed (status %d; the proxy's message "
                       "above names the operation and the peer)", call, pe, status);
}
GSHMEMI_REPORTER(gshmemi_remote_error, (const char *call, int pe, int status), (call, pe, status))

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

/* One operation to a remote PE, by the channel its route names (d.pe -1: the ring itself). */
template <int WAIT> GSHMEMI_DEV uint64_t gshmemi_remote_op_body(gshmem_proxy_desc d, const char *call) {
    const int route = d.pe < 0 ? GSHMEMI_ROUTE_PROXY : gshmemi_slot_of(&gshmemi_dstate, d.pe);
    if (route != GSHMEMI_ROUTE_PROXY) gshmemi_unreachable_pe(call, d.pe);
    return gshmemi_proxy_op<WAIT>(d, call);
}
template <int WAIT> GSHMEMI_REMOTE uint64_t gshmemi_remote_op(gshmem_proxy_desc d, const char *call) {
    return gshmemi_remote_op_body<WAIT>(d, call);
}

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

/* The ring's ticket after everything posted to it so far. */
GSHMEMI_DEV uint64_t gshmemi_remote_mark(void) {
    return gshmemi_ld_relaxed((const uint64_t *)gshmemi_dstate.chan.tail);
}

/* Quiet up to a mark: everything posted before ticket t is complete. chan_seen (GPU memory)
 * holds a `retired` value some thread already observed, so a quiet with nothing posted since
 * costs two GPU-memory loads, not a read across PCIe. (The _body forms are for callers that are
 * themselves out of line: each call level adds its live registers to the kernel's count.) */
GSHMEMI_DEV void gshmemi_remote_quiet_to_body(uint64_t t, const char *call) {
    const gshmemi_device_state *s = &gshmemi_dstate;
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
    if (S::rank() == 0)
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
        gshmem_proxy_desc d = gshmemi_rdesc(GSHMEM_PROXY_OP_PUT_SIGNAL, pe, n, dest, (uint64_t)(uintptr_t)src);
        d.amo = (uint8_t)sig_op;
        d.sig_addr = (uint64_t)(uintptr_t)sig;
        d.sig_value = value;
        gshmemi_remote_op<BLOCKING ? GSHMEMI_RWAIT_DONE : GSHMEMI_RWAIT_NONE>(d, call);
    }
    S::sync();
}

#endif
