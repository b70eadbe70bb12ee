/* The device side of the proxy channel (gshmem/proxy_desc.h has the layout and the protocol):
 * a GPU thread claims a ticket, waits for room, writes a 64-byte descriptor into the ring in
 * pinned host memory and publishes it with a release store of its sequence word; it waits for
 * one descriptor's completion on its ret slot, or for all of a ring's on `retired` (quiet).
 * Out of line from the load/store paths: only the remote branch of a device call comes here. */
#ifndef GSHMEM_DEVICE_CHANNEL_H
#define GSHMEM_DEVICE_CHANNEL_H

#include "gshmem/proxy_desc.h"
#include "gshmem/device/ptx.h"

/* Polling host memory: every poll is a read across PCIe, and thousands of waiting threads
 * reading their own words would fill the link's read queue and slow the proxy's own copies
 * and stream writes (the very work they wait for). So waiters back off: no pause for the
 * first polls, then doubling pauses up to about a microsecond (a bound on the latency it
 * adds); quiet polls the ring's shared `retired` word (one read per warp). */
GSHMEMI_DEV void gshmemi_chan_pause(unsigned &ns) {
    if (ns) __nanosleep(ns);
    ns = ns ? (ns < 1024 ? 2 * ns : 1024) : 32;
}

/* The sticky error of the ring (0 = none): the proxy stores it with release. */
GSHMEMI_DEV int gshmemi_chan_error(const gshmem_proxy_chan &c) {
    return (int)gshmemi_ld_acquire((const uint32_t *)&c.ctrl->err_status);
}

/* A proxy-written counter (head or retired) as this GPU knows it. Every thread that polls a
 * host word reads across PCIe, and those reads of one line the proxy keeps writing queue
 * behind each other and behind the proxy's own writes (each GPU read snoops the line out of
 * the proxy core's cache): thousands of producers polling head are the suspected limit of the
 * drain rate, and many blocks polling retired of the proxy's copies crawling. So a ring
 * with gpu_words keeps the newest value read in GPU memory (`seen`, red.max) and lets one
 * thread at a time read the host word (`next`, claimed by compare-and-swap): the reader
 * holds a lease until its read came back (and the caller's read of the error word, if any),
 * then lets the next reader in GSHMEMI_CHAN_POLL_NS later (gshmemi_chan_release). A lease
 * expires after GSHMEMI_CHAN_LEASE_NS, so a reader that stops blocks no one for long. One
 * read at a time matters, not one start per interval: reads queued behind the proxy's
 * copies take microseconds, and a gate that let one start every 256 ns kept dozens in
 * flight while 8 blocks of 1024 threads waited in quiet -- enough to starve the copy
 * engines' own reads of host memory (session 20: bandwidth_remote put8 crawled at 0.0-0.6
 * GB/s, and tools/probes/copy_load showed 64 copies of 8 KiB taking 20 ms instead of 0.18
 * while 8 x 1024 threads polled host memory, and no slowdown with one polling warp).
 * Ordering: the reader's ld.acquire.sys of the proxy's release store, then its red.release
 * of `seen`, then another thread's ld.acquire of `seen`: the second thread sees what the
 * proxy did before its store (causality is transitive; the same chain as quiet's chan_seen).
 * *polled: this call read the host word and holds the lease `lease`: the caller may read
 * the error word, then must call gshmemi_chan_release(next, lease). */
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

/* Reads the host word across PCIe and raises its GPU-memory copy to what it read. */
GSHMEMI_DEV uint64_t gshmemi_chan_refresh(const uint64_t *host, uint64_t *seen) {
    const uint64_t h = gshmemi_ld_acquire(host);
    asm volatile("red.release.gpu.global.max.u64 [%0], %1;" ::"l"(seen), "l"(h) : "memory");
    return h;
}

GSHMEMI_DEV uint64_t gshmemi_chan_counter(const uint64_t *host, uint64_t *seen, uint64_t *next, bool &polled,
                                          uint64_t &lease, uint64_t enough = UINT64_MAX) {
    uint64_t v = gshmemi_chan_seen(seen);
    polled = false;
    if (v >= enough) return v;
    /* one contender per warp (its lowest active lane): thousands of thread-scope waiters
     * racing for the gate would make its compare-and-swap the bottleneck */
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    if ((int)lane != __ffs(__activemask()) - 1) return v;
    const uint64_t now = gshmemi_globaltimer(), nt = gshmemi_ld_relaxed((const uint64_t *)next);
    lease = now + GSHMEMI_CHAN_LEASE_NS;
    if (now < nt || atomicCAS((unsigned long long *)next, nt, lease) != nt) return v;
    const uint64_t h = gshmemi_chan_refresh(host, seen);
    polled = true;
    return h > v ? h : v;
}

/* Ends a reader's lease (if it is still its own): the next read may start POLL_NS from now. */
GSHMEMI_DEV void gshmemi_chan_release(uint64_t *next, uint64_t lease) {
    atomicCAS((unsigned long long *)next, lease, gshmemi_globaltimer() + GSHMEMI_CHAN_POLL_NS);
}

/* Steps 1-2: a ticket whose slot the proxy has finished reading. The tail lives in GPU memory
 * (only GPU producers touch it), so the claim is a device atomic; the head is host memory the
 * proxy writes with release, read with acquire so the slot's old content is no longer read
 * (through gpu_words' copy where the ring has one: no read across PCIe while there is room).
 * Returns UINT64_MAX if the proxy reported an error while this thread waited for room. */
GSHMEMI_DEV uint64_t gshmemi_chan_claim(const gshmem_proxy_chan &c) {
    uint64_t t = atomicAdd((unsigned long long *)c.tail, 1ull);
    if (gshmemi_chan_copies(c, 1)) {
        uint64_t *w = c.gpu_words;
        uint64_t h = gshmemi_chan_seen(w + GSHMEM_PROXY_GW_HEAD);
        if (t - h < c.n_slots) return t;
        /* The ring is full (more producers than slots). The first in line, the ticket that
         * needs head one past the copy (t == h + n), reads head across PCIe back to back and
         * raises the copy; the others watch the copy in GPU memory and go when it lets them,
         * so a freed batch of slots is known to its producers one PCIe read after the proxy
         * published it. A compare-and-swap race for every read (the general gate) made the
         * waiters' atomics on one word the limit: 3.9-4.3 million descriptors/s against
         * 31-73 with a ring that never fills. A waiter not first in line for 20 us uses the
         * gate (the first in line may be a thread that is not running yet). */
        const uint64_t t0 = gshmemi_globaltimer();
        unsigned polls = 0;
        for (unsigned ns = 0;;) {
            bool polled = false, gated = false;
            uint64_t lease = 0;
            if (t - h == c.n_slots) {
                const uint64_t v = gshmemi_chan_refresh(&c.ctrl->head, w + GSHMEM_PROXY_GW_HEAD);
                h = v > h ? v : h;
                polled = true;
            } else if (gshmemi_globaltimer() - t0 > 20000) {
                h = gshmemi_chan_counter(&c.ctrl->head, w + GSHMEM_PROXY_GW_HEAD, w + GSHMEM_PROXY_GW_HEAD_NEXT,
                                         polled, lease, t - c.n_slots + 1);
                gated = polled;
            } else {
                h = gshmemi_chan_seen(w + GSHMEM_PROXY_GW_HEAD);
            }
            const bool room = t - h < c.n_slots;
            if (polled) {   /* no pause after a read across PCIe; the error word every 8th */
                const bool failed = !room && (++polls & 7) == 0 && gshmemi_chan_error(c);
                if (gated) gshmemi_chan_release(w + GSHMEM_PROXY_GW_HEAD_NEXT, lease);
                if (room) return t;
                if (failed) return UINT64_MAX;
                ns = 0;
            } else {
                if (room) return t;
                gshmemi_chan_pause(ns);
            }
        }
    }
    for (unsigned ns = 0; t - gshmemi_ld_acquire((const uint64_t *)&c.ctrl->head) >= c.n_slots;) {
        if (gshmemi_chan_error(c)) return UINT64_MAX;
        gshmemi_chan_pause(ns);
    }
    return t;
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
    uint64_t t = gshmemi_chan_claim(c);
    if (t != UINT64_MAX) gshmemi_chan_publish(c, t, d);
    return t;
}

/* Waits for ticket t's own completion (its ret slot); returns its status. The acquire on
 * `done` makes ret->value (and, for a get, the data) visible. (Not `retired`: that would
 * hold an early answer behind every older ticket.) */
GSHMEMI_DEV int gshmemi_chan_wait_ret(const gshmem_proxy_ret *r, uint64_t t) {
    for (unsigned ns = 0; gshmemi_ld_acquire((const uint64_t *)&r->done) != t + 1;) gshmemi_chan_pause(ns);
    return r->status;
}

/* Waits until every ticket < t of the ring completed; returns the ring's sticky error. */
GSHMEMI_DEV int gshmemi_chan_wait_retired(const gshmem_proxy_chan &c, uint64_t t) {
    if (gshmemi_chan_copies(c, 2)) {
        uint64_t *w = c.gpu_words;
        for (unsigned ns = 0;;) {
            bool polled;
            uint64_t lease;
            const bool done = gshmemi_chan_counter(&c.ctrl->retired, w + GSHMEM_PROXY_GW_RETIRED,
                                                   w + GSHMEM_PROXY_GW_RETIRED_NEXT, polled, lease, t) >= t;
            if (polled) {   /* the read across PCIe took its time: no pause after it */
                const int e = done ? 0 : gshmemi_chan_error(c);
                gshmemi_chan_release(w + GSHMEM_PROXY_GW_RETIRED_NEXT, lease);
                if (e) return e;
                ns = 0;
            }
            if (done) break;
            if (!polled) gshmemi_chan_pause(ns);
        }
        return gshmemi_chan_error(c);
    }
    for (unsigned ns = 0; gshmemi_ld_acquire((const uint64_t *)&c.ctrl->retired) < t;) {
        int e = gshmemi_chan_error(c);
        if (e) return e;
        gshmemi_chan_pause(ns);
    }
    return gshmemi_chan_error(c);
}

/* Quiet on a ring: everything posted to it before the call is complete. */
GSHMEMI_DEV int gshmemi_chan_quiet(const gshmem_proxy_chan &c) {
    return gshmemi_chan_wait_retired(c, gshmemi_ld_acquire((const uint64_t *)c.tail));
}

#endif
