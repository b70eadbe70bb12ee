/* The remote branch of the device calls: a PE with no load/store path (pe_slot -1, another
 * node) is reached through this PE's proxy ring (gshmem/device/channel.h, protocol in
 * gshmem/proxy_desc.h). Every function here is out of line (__noinline__): a load/store call
 * tests gshmemi_peer's NULL and branches here, so its own instructions and registers stay
 * what they were (the `registers` unit test and tools/sass_compare.sh show it).
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
#include "channel.h"

#define GSHMEMI_REMOTE static __device__ __noinline__

static __device__ __noinline__ void gshmemi_remote_error_msg(const char *call, int pe, int status) {
    GSHMEMI_DEVICE_MSG("%s to PE %d: the remote transport failed (status %d; the proxy's message "
                       "above names the operation and the peer)", call, pe, status);
}
GSHMEMI_REPORTER(gshmemi_remote_error, (const char *call, int pe, int status), (call, pe, status))

enum { GSHMEMI_RWAIT_NONE = 0, GSHMEMI_RWAIT_DONE = 1, GSHMEMI_RWAIT_VALUE = 2 };

/* Posts d to this PE's ring. RWAIT_DONE returns once every ticket up to d's retired (the
 * proxy completed it: data delivered, source read); RWAIT_VALUE waits for d's answer in its
 * ring-owned completion slot, acknowledges the slot and returns the value. */
GSHMEMI_REMOTE uint64_t gshmemi_remote_op(gshmem_proxy_desc d, int wait, const char *call) {
    const gshmem_proxy_chan &c = gshmemi_dstate.chan;
    if (!c.slots) gshmemi_unreachable_pe(call, d.pe);
    uint64_t t = gshmemi_chan_claim(c);
    if (t == UINT64_MAX) gshmemi_remote_error(call, d.pe, gshmemi_chan_error(c));
    gshmem_proxy_ret *r = &c.rets[t & (c.n_slots - 1)];
    if (wait == GSHMEMI_RWAIT_VALUE) d.ret = (uint64_t)(uintptr_t)r;
    gshmemi_chan_publish(c, t, d);
    if (wait == GSHMEMI_RWAIT_DONE) {
        int e = gshmemi_chan_wait_retired(c, t + 1);
        if (e) gshmemi_remote_error(call, d.pe, e);
    } else if (wait == GSHMEMI_RWAIT_VALUE) {
        int e = gshmemi_chan_wait_ret(r, t);
        uint64_t v = gshmemi_ld_relaxed(&r->value);
        /* release: the reads of the slot come before the proxy may reuse it */
        asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(&r->ack), "l"(t + 1) : "memory");
        if (e) gshmemi_remote_error(call, d.pe, e);
        return v;
    }
    return 0;
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

/* Quiet on the ring: everything claimed before is complete. chan_seen (GPU memory) holds a
 * `retired` value some thread already observed, so a quiet with nothing posted since costs
 * two GPU-memory loads, not a read across PCIe. */
GSHMEMI_REMOTE void gshmemi_remote_quiet(const char *call) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    uint64_t t = gshmemi_ld_relaxed((const uint64_t *)s->chan.tail);
    uint64_t seen;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(seen) : "l"(s->chan_seen) : "memory");
    if (t <= seen) return;
    int e = gshmemi_chan_wait_retired(s->chan, t);
    if (e) gshmemi_remote_error(call, -1, e);
    /* release: what this thread acquired (the retirement) is visible to a later shortcut */
    asm volatile("red.release.gpu.global.max.u64 [%0], %1;" ::"l"(s->chan_seen), "l"(t) : "memory");
}

/* Fence: later descriptors of the ring start only after the earlier ones completed (the
 * proxy orders the whole ring; providers without FI_FENCE are ordered by it too). */
GSHMEMI_REMOTE void gshmemi_remote_fence(const char *call) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    uint64_t t = gshmemi_ld_relaxed((const uint64_t *)s->chan.tail);
    uint64_t seen = gshmemi_ld_relaxed((const uint64_t *)s->chan_seen);
    if (t <= seen) return;   /* nothing posted since a quiet */
    gshmemi_remote_op(gshmemi_rdesc(GSHMEM_PROXY_OP_FENCE, -1, 0, 0, 0), GSHMEMI_RWAIT_NONE, call);
}

/* put / get of n bytes, one descriptor for the group (its leader posts, after the group's
 * gather so every thread's source data is written). */
template <class S, bool BLOCKING, bool GET>
GSHMEMI_REMOTE void gshmemi_remote_rma(void *sym, const void *local, size_t n, int pe, const char *call) {
    S::sync();
    if (S::rank() == 0)
        gshmemi_remote_op(gshmemi_rdesc(GET ? GSHMEM_PROXY_OP_GET : GSHMEM_PROXY_OP_PUT, pe, n, sym,
                                        (uint64_t)(uintptr_t)local),
                          BLOCKING ? GSHMEMI_RWAIT_DONE : GSHMEMI_RWAIT_NONE, call);
    S::sync();
}

/* Strided: one descriptor per element, split over the group; blocking (OpenSHMEM has no
 * _nbi strided calls): the group's leader quiets after the gather. */
template <class S, bool GET, int ES>
GSHMEMI_REMOTE void gshmemi_remote_strided(char *dest, const char *src, ptrdiff_t dst, ptrdiff_t sst,
                                           size_t n, int pe, const char *call) {
    for (size_t i = S::rank(); i < n; i += S::size()) {
        char *d = dest + (size_t)i * dst * ES;
        const char *sp = src + (size_t)i * sst * ES;
        gshmemi_remote_op(GET ? gshmemi_rdesc(GSHMEM_PROXY_OP_GET, pe, ES, sp, (uint64_t)(uintptr_t)d)
                              : gshmemi_rdesc(GSHMEM_PROXY_OP_PUT, pe, ES, d, (uint64_t)(uintptr_t)sp),
                          GSHMEMI_RWAIT_NONE, call);
    }
    S::sync();
    if (S::rank() == 0) gshmemi_remote_quiet(call);
    S::sync();
}

/* p: the value travels inline; g: answered in the owned slot. */
GSHMEMI_REMOTE void gshmemi_remote_p(void *sym, uint64_t bits, int size, int pe, const char *call) {
    gshmemi_remote_op(gshmemi_rdesc(GSHMEM_PROXY_OP_P, pe, (uint64_t)size, sym, bits), GSHMEMI_RWAIT_NONE,
                      call);
}
GSHMEMI_REMOTE uint64_t gshmemi_remote_g(const void *sym, int size, int pe, const char *call) {
    return gshmemi_remote_op(gshmemi_rdesc(GSHMEM_PROXY_OP_G, pe, (uint64_t)size, sym, 0),
                             GSHMEMI_RWAIT_VALUE, call);
}

/* Atomics (GSHMEMI_AMO_* = GSHMEM_PROXY_AMO_*): FETCH/SWAP/CSWAP and the fetch forms wait for
 * the old value; SET and the non-fetching forms are posted. */
GSHMEMI_REMOTE uint64_t gshmemi_remote_amo(int op, bool fetch, void *sym, int size, uint64_t value,
                                           uint64_t cond, int pe, const char *call) {
    gshmem_proxy_desc d = gshmemi_rdesc(GSHMEM_PROXY_OP_AMO, pe, (uint64_t)size, sym, value);
    d.amo = (uint8_t)op;
    d.flags = fetch ? GSHMEM_PROXY_F_FETCH : 0;
    d.compare = cond;
    return gshmemi_remote_op(d, fetch ? GSHMEMI_RWAIT_VALUE : GSHMEMI_RWAIT_NONE, call);
}

GSHMEMI_REMOTE void gshmemi_remote_signal(uint64_t *sig, uint64_t value, int sig_op, int pe,
                                          const char *call) {
    gshmem_proxy_desc d = gshmemi_rdesc(GSHMEM_PROXY_OP_SIGNAL, pe, 8, sig, value);
    d.amo = (uint8_t)sig_op;
    gshmemi_remote_op(d, GSHMEMI_RWAIT_NONE, call);
}

/* put_signal: the proxy applies the signal only after the data is in the target's memory
 * (ordered at the target's proxy, correct on unordered providers). */
template <class S, bool BLOCKING>
GSHMEMI_REMOTE void gshmemi_remote_put_signal(void *dest, const void *src, size_t n, uint64_t *sig,
                                              uint64_t value, int sig_op, int pe, const char *call) {
    S::sync();
    if (S::rank() == 0) {
        gshmem_proxy_desc d = gshmemi_rdesc(GSHMEM_PROXY_OP_PUT_SIGNAL, pe, n, dest, (uint64_t)(uintptr_t)src);
        d.amo = (uint8_t)sig_op;
        d.sig_addr = (uint64_t)(uintptr_t)sig;
        d.sig_value = value;
        gshmemi_remote_op(d, BLOCKING ? GSHMEMI_RWAIT_DONE : GSHMEMI_RWAIT_NONE, call);
    }
    S::sync();
}

#endif
