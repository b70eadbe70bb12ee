/* The device side of the proxy channel (the ring layout and its protocol: gshmem/proxy_desc.h
 * and docs/proxy.md): a GPU thread claims a ticket, waits for room, writes a 64-byte descriptor
 * into the ring in pinned host memory and publishes it with a release store of its sequence
 * word; it waits for one descriptor's answer in its ret slot, or for all of a ring's on
 * `retired` (quiet). Only the remote branch of a device call comes here, so every wait is a
 * warp-uniform loop with a branch-free body (ptx.h, "Warp-uniform loops"): the threads that
 * entered together wait together, the warp's lowest thread polling for all of them where the
 * word is shared, and the loop ends when none needs another round. */
#ifndef GSHMEM_DEVICE_CHAN_PROXY_H
#define GSHMEM_DEVICE_CHAN_PROXY_H

#include "gshmem/proxy_desc.h"
#include "gshmem/device/ptx.h"

/* Polling host memory: every poll is a read across PCIe, and thousands of waiting threads
 * reading their own words would fill the link's read queue and slow the proxy's own copies
 * and stream writes (the very work they wait for). So waiters back off: no pause for the
 * first polls, then doubling pauses up to about a microsecond (a bound on the latency it
 * adds). Where `wait` is false nothing happens. */
GSHMEMI_DEV void gshmemi_chan_pause(bool wait, unsigned &ns) {
    gshmemi_nanosleep_if(wait && ns, ns);
    ns = !wait ? ns : ns ? (ns < 1024 ? 2 * ns : 1024) : 32;
}

/* The sticky error of the ring (0 = none): the proxy stores it with release. */
GSHMEMI_DEV int gshmemi_chan_error(const gshmem_proxy_chan &c) {
    return (int)gshmemi_ld_acquire((const uint32_t *)&c.ctrl->err_status);
}
GSHMEMI_DEV int gshmemi_chan_error_if(bool p, const gshmem_proxy_chan &c) {
    return (int)gshmemi_ld_acquire32_if(p, (const uint32_t *)&c.ctrl->err_status, 0);
}

/* A proxy-written counter (head or retired) as this GPU knows it. Every thread that polls a
 * host word reads across PCIe, and those reads of one line queue behind each other and behind
 * the proxy's own writes (each GPU read snoops the line out of the proxy core's cache), and
 * many of them in flight starve the copy engines' reads of host memory (bandwidth of the
 * staged puts crawled to a tenth while 8 blocks of 1024 threads waited in quiet). So a ring
 * with gpu_words keeps the newest value read in GPU memory (`seen`, red.max) and lets one
 * thread at a time read the host word (`next`, claimed by compare-and-swap): the reader holds
 * a lease until its read came back (and its read of the error word, if any), then lets the
 * next reader in GSHMEMI_CHAN_POLL_NS later. A lease expires after GSHMEMI_CHAN_LEASE_NS, so a
 * reader that stops blocks no one for long. One thread of a warp contends for the gate on the
 * warp's behalf and hands what it read to the others.
 * Ordering: the reader's ld.acquire.sys of the proxy's release store, then its red.release of
 * `seen`, then another thread's ld.acquire of `seen`: the second thread sees what the proxy
 * did before its store (causality is transitive; the same chain as quiet's chan_seen). */
#define GSHMEMI_CHAN_POLL_NS 256ull
#define GSHMEMI_CHAN_LEASE_NS 20000ull

/* Whether the ring's GPU-memory copy `which` (1 head, 2 retired) is used: gpu_words set and its
 * mode word 0 (both) or naming it (GSHMEM_PROXY_GPU_COPIES: 3 both, the default). */
GSHMEMI_DEV bool gshmemi_chan_copies(const gshmem_proxy_chan &c, unsigned which) {
    if (!c.gpu_words) return false;
    const uint64_t mode = c.gpu_words[GSHMEM_PROXY_GW_MODE];
    return mode == 0 || (mode & which);
}

GSHMEMI_DEV uint64_t gshmemi_chan_seen(const uint64_t *seen) {
    uint64_t v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(seen) : "memory");
    return v;
}

/* One read of a counter's host word for the warp, by its first thread `lead` when `want`
 * (uniform) and `direct` (read without the gate) or the gate lets it; the value read raises
 * the GPU copy `seen` (where the ring has GPU words). Returns what the warp knows now (the copy, or the value read), the same
 * in every thread; *read says whether the host word was read (then *err holds the ring's error
 * word as read after it, when `check_err`). */
struct gshmemi_chan_poll {
    uint64_t value;
    bool read;
    int err;
};
GSHMEMI_DEV gshmemi_chan_poll gshmemi_chan_read(unsigned m, bool lead, bool want, bool direct, const uint64_t *host,
                                                uint64_t *seen, uint64_t *next, uint64_t known,
                                                const gshmem_proxy_chan &c, bool check_err) {
    const bool p = want && lead;
    const uint64_t now = gshmemi_globaltimer();
    const uint64_t nt = gshmemi_ld_relaxed_gpu_if(p && !direct, next, 0);
    const uint64_t lease = now + GSHMEMI_CHAN_LEASE_NS;
    const bool gated = p && !direct && now >= nt && gshmemi_cas_if(p && !direct && now >= nt, next, nt, lease) == nt;
    const bool r = (p && direct) || gated;
    const uint64_t h = gshmemi_ld_acquire_if(r, host, known);
    gshmemi_red_max_release_if(r && c.gpu_words, seen, h);   /* a ring without GPU words has no copy */
    const int e = gshmemi_chan_error_if(r && check_err, c);
    gshmemi_cas_if(gated, next, lease, gshmemi_globaltimer() + GSHMEMI_CHAN_POLL_NS);
    const unsigned src = (unsigned)(__ffs(m) - 1);
    gshmemi_chan_poll out;
    const uint64_t hv = __shfl_sync(m, h, src);
    out.value = hv > known ? hv : known;
    out.read = __shfl_sync(m, (int)r, src) != 0;
    out.err = __shfl_sync(m, e, src);
    return out;
}

/* Steps 1-2: a ticket whose slot the proxy has finished reading. The tail lives in GPU memory
 * (only GPU producers touch it), so the claim is a device atomic; the head is host memory the
 * proxy writes with release, read with acquire so the slot's old content is no longer read
 * (through gpu_words' copy where the ring has one: no read across PCIe while there is room).
 * The warp's threads claim consecutive tickets (one aggregated atomic) and wait together for
 * room for the last of them, which waits only on tickets older than the warp's. While the
 * ring is full the warp whose ticket is first in line (it needs head one past the copy) reads
 * head across PCIe back to back and raises the copy; the others watch the copy in GPU memory
 * and go when it lets them, so a freed batch of slots is known to its producers one PCIe read
 * after the proxy published it (a compare-and-swap race for every read made the waiters'
 * atomics on one word the limit: 3.9-4.3 million descriptors/s against 31-73 with a ring
 * that never fills). A warp not first in line for 20 us uses the gate (the first in line may
 * be a warp that is not running yet). Without GPU copies every waiter reads head itself.
 * Returns UINT64_MAX if the proxy reported an error while the warp waited for room. */
GSHMEMI_DEV uint64_t gshmemi_chan_claim(const gshmem_proxy_chan &c) {
    const unsigned m = gshmemi_lanes();
    const uint64_t t = atomicAdd((unsigned long long *)c.tail, 1ull);
    const uint64_t last = gshmemi_max_of(m, t);
    const bool copies = gshmemi_uniform(m, gshmemi_chan_copies(c, 1));
    uint64_t *gw = c.gpu_words;
    const bool lead = gshmemi_is_first(m);
    uint64_t h = copies ? gshmemi_chan_seen(gw + GSHMEM_PROXY_GW_HEAD) : 0;
    if (gshmemi_uniform(m, copies && last - h < c.n_slots)) return t;
    const uint64_t t0 = gshmemi_globaltimer();
    unsigned polls = 0, ns = 0;
    int st = 0;   /* 1 room, -1 the ring is in error */
    GSHMEMI_WHILE_ANY(m, st == 0) {
        const bool first = copies && last - h == c.n_slots;
        const bool gate = copies && !first && gshmemi_globaltimer() - t0 > 20000;
        const gshmemi_chan_poll r =
            gshmemi_chan_read(m, lead, !copies || first || gate, !copies || first, &c.ctrl->head,
                              gw + GSHMEM_PROXY_GW_HEAD, gw + GSHMEM_PROXY_GW_HEAD_NEXT,
                              copies ? gshmemi_chan_seen(gw + GSHMEM_PROXY_GW_HEAD) : 0, c,
                              !copies || (++polls & 7) == 0);
        h = r.value;
        const bool room = last - h < c.n_slots;
        st = room ? 1 : r.read && r.err ? -1 : 0;
        gshmemi_chan_pause(st == 0 && !r.read, ns);
        ns = r.read ? 0 : ns;
    }
    return st < 0 ? UINT64_MAX : t;
}

/* Steps 3-4: the body with plain stores (words 1..7), then seq = t + 1 with st.release.sys:
 * the release orders the body's stores before it for the proxy's acquire of seq. Words 2..7
 * go as three 16-byte stores (slots are 64-byte aligned): every store is a write across PCIe
 * of its own, and fewer, wider ones cost the host less to merge into the slot's line. */
GSHMEMI_DEV void gshmemi_chan_publish(const gshmem_proxy_chan &c, uint64_t t, const gshmem_proxy_desc &d) {
    uint64_t *slot = (uint64_t *)&c.slots[t & (c.n_slots - 1)];
    const uint64_t *w = (const uint64_t *)&d;
    slot[1] = w[1];
#pragma unroll
    for (int k = 2; k < 8; k += 2) *(ulonglong2 *)(slot + k) = make_ulonglong2(w[k], w[k + 1]);
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(slot), "l"(t + 1) : "memory");
}

/* Claim + publish; returns the ticket (UINT64_MAX: the ring is in error). */
GSHMEMI_DEV uint64_t gshmemi_chan_post(const gshmem_proxy_chan &c, const gshmem_proxy_desc &d) {
    const uint64_t t = gshmemi_chan_claim(c);
    if (t != UINT64_MAX) gshmemi_chan_publish(c, t, d);
    return t;
}

/* Waits for ticket t's own answer (its ret slot); returns its status. The acquire on `done`
 * makes ret->value (and, for a get, the data) visible. (Not `retired`: that would hold an
 * early answer behind every older ticket.) Every thread reads its own slot. */
GSHMEMI_DEV int gshmemi_chan_wait_ret(const gshmem_proxy_ret *r, uint64_t t) {
    const unsigned m = gshmemi_lanes();
    bool done = false;
    unsigned ns = 0;
    GSHMEMI_WHILE_ANY(m, !done) {
        /* every thread reads its slot each round, done or not: a read guarded per thread
         * becomes a branch in the loop body; the pause is the warp's */
        done = done | (gshmemi_ld_acquire((const uint64_t *)&r->done) == t + 1);
        gshmemi_chan_pause(gshmemi_uniform(m, !done), ns);
    }
    return r->status;
}

/* Waits until every ticket < t of the ring completed (the warp: the largest t of its waiting
 * threads); returns the ring's sticky error. */
GSHMEMI_DEV int gshmemi_chan_wait_retired(const gshmem_proxy_chan &c, uint64_t t) {
    const unsigned m = gshmemi_lanes();
    const uint64_t want = gshmemi_max_of(m, t);
    const bool copies = gshmemi_uniform(m, gshmemi_chan_copies(c, 2));
    const bool lead = gshmemi_is_first(m);
    uint64_t *gw = c.gpu_words;
    unsigned ns = 0;
    int st = 0;   /* 1 done, -e the ring's error e */
    GSHMEMI_WHILE_ANY(m, st == 0) {
        const uint64_t known = copies ? gshmemi_chan_seen(gw + GSHMEM_PROXY_GW_RETIRED) : 0;
        const bool need = known < want;
        const gshmemi_chan_poll r =
            gshmemi_chan_read(m, lead, need, !copies, &c.ctrl->retired, gw + GSHMEM_PROXY_GW_RETIRED,
                              gw + GSHMEM_PROXY_GW_RETIRED_NEXT, known, c, true);
        const bool done = r.value >= want;
        st = done ? 1 : r.read && r.err ? -r.err : 0;
        /* no pause after a read across PCIe: it took its time */
        gshmemi_chan_pause(st == 0 && !r.read, ns);
        ns = r.read ? 0 : ns;
    }
    return st < 0 ? -st : gshmemi_chan_error(c);
}

#endif
