/* The GPU -> host channel of the proxy transport: a ring of 64-byte descriptors in host
 * memory, many producers (GPU threads; CPU threads in the unit tests), one consumer (the
 * proxy thread of this PE). Plain C: compiles as C11 and as CUDA C++; the producer helpers
 * at the end are host-side (GCC/Clang __atomic builtins); the CUDA producer is written
 * against the same layout and orderings.
 *
 * PROTOCOL (t = ticket, n = n_slots, a power of two; all counters 64-bit, never wrap)
 *   Producer                                        Proxy (consumer)
 *   1. t = atomic_add(tail, 1)         (relaxed)    polls slot[head % n].seq (acquire)
 *   2. wait while t - head >= n        (acquire     == head + 1 ?  yes: copies the 64 bytes,
 *      on head: the proxy has finished reading       head += 1 (release store, batched),
 *      the slot's previous lap)                      performs the operation
 *   3. write the body (every word but seq)
 *   4. seq = t + 1                     (release: the body is visible before seq)
 *   The value t + 1 is lap-aware: the slot's previous content carries t + 1 - n (or 0 before
 *   the first lap), so a slot of the previous lap is never taken for the current one, and
 *   a descriptor is never read half-written.
 *
 *   Completion: the proxy publishes `retired` = the number of tickets t such that every
 *   ticket < t is complete (a write: delivered into target memory; a get: data in the local
 *   buffer; an atomic: applied, fetched value returned). Quiet on a ring = read tail, wait
 *   until retired >= that value (gshmem_proxy_quiet). A descriptor with ret != 0 also has
 *   its own completion: the proxy writes ret->value and ret->status, then stores
 *   ret->done = t + 1 with release (the producer acquires on done; no reset needed).
 *   FENCE orders the ring: nothing after it starts before everything before it completed.
 *   QUIET is a marker whose ret (if any) is written once every earlier ticket completed.
 *   Errors: a refused or failed descriptor completes with ret->status != 0; the first one
 *   of a ring is also recorded in ctrl->err_* (sticky) so a quiet reports it.
 *
 *   Ring-owned completion slots (chan.rets != NULL, the library's GPU rings): ticket t may
 *   use rets[t % n] as its ret, and must then acknowledge it after reading it: ack = t + 1
 *   (release: the reads come first). On such a ring `head` counts the tickets whose slot
 *   AND completion slot are free: it passes t only once t retired and, if t used its ret
 *   slot, t acknowledged it. So ticket t + n (which may reuse rets[t % n]) is claimed only
 *   after t's producer has read its answer: no answer is ever overwritten unread, and no
 *   producer needs a private slot.
 *
 * WHERE THE WORDS LIVE (real system): slots, ctrl and ret slots in pinned host memory mapped
 * to the GPU; tail in GPU memory (only producers touch it). The proxy never reads tail.
 * A GPU producer writes the body with plain (or vector) stores and seq with st.release.sys;
 * it reads head and ret->done with ld.acquire.sys. */
#ifndef GSHMEM_PROXY_DESC_H
#define GSHMEM_PROXY_DESC_H

#include <stddef.h>
#include <stdint.h>

/* Operations (desc.op). */
#define GSHMEM_PROXY_OP_NOP 0         /* no work: ring/proxy throughput tests */
#define GSHMEM_PROXY_OP_PUT 1         /* size bytes laddr -> raddr on pe */
#define GSHMEM_PROXY_OP_GET 2         /* size bytes raddr on pe -> laddr */
#define GSHMEM_PROXY_OP_P 3           /* size (1..8) bytes of the inline value (little endian) -> raddr */
#define GSHMEM_PROXY_OP_G 4           /* size (1..8) bytes at raddr -> ret->value */
#define GSHMEM_PROXY_OP_AMO 5         /* atomic amo of size 4|8 at raddr; operand value, compare */
#define GSHMEM_PROXY_OP_SIGNAL 6      /* 64-bit signal op amo (SET/ADD) of value at raddr */
#define GSHMEM_PROXY_OP_PUT_SIGNAL 7  /* PUT, then signal (sig_addr, sig_value, amo) after the data */
#define GSHMEM_PROXY_OP_FENCE 8       /* later descriptors start only after earlier ones completed */
#define GSHMEM_PROXY_OP_QUIET 9       /* marker: ret written once every earlier ticket completed */
#define GSHMEM_PROXY_OP_COUNT 10

/* Atomic operations (desc.amo for OP_AMO): the values of GSHMEMI_AMO_* in gshmem/types.h.
 * inc = ADD of 1; the fetch forms of set/add/and/or/xor set GSHMEM_PROXY_F_FETCH. */
#define GSHMEM_PROXY_AMO_FETCH 0      /* always fetches */
#define GSHMEM_PROXY_AMO_SET 1
#define GSHMEM_PROXY_AMO_SWAP 2       /* always fetches */
#define GSHMEM_PROXY_AMO_CSWAP 3      /* always fetches; stores value where *raddr == compare */
#define GSHMEM_PROXY_AMO_ADD 4
#define GSHMEM_PROXY_AMO_AND 5
#define GSHMEM_PROXY_AMO_OR 6
#define GSHMEM_PROXY_AMO_XOR 7
#define GSHMEM_PROXY_AMO_COUNT 8

/* Signal operations (desc.amo for OP_SIGNAL / OP_PUT_SIGNAL): GSHMEM_SIGNAL_SET / _ADD. */
#define GSHMEM_PROXY_SIG_SET 0
#define GSHMEM_PROXY_SIG_ADD 1

/* desc.flags */
#define GSHMEM_PROXY_F_FETCH 1u       /* OP_AMO: return the old value in ret->value */

typedef struct gshmem_proxy_desc {
    uint64_t seq;         /*  0: t + 1, stored last with release */
    uint8_t op;           /*  8: GSHMEM_PROXY_OP_* */
    uint8_t amo;          /*  9: GSHMEM_PROXY_AMO_* or GSHMEM_PROXY_SIG_* */
    uint16_t flags;       /* 10: GSHMEM_PROXY_F_* */
    int32_t pe;           /* 12: target PE */
    uint64_t size;        /* 16: bytes (PUT/GET/PUT_SIGNAL), 1..8 (P/G), 4|8 (AMO) */
    uint64_t raddr;       /* 24: remote symmetric address (SIGNAL: the signal word) */
    uint64_t laddr;       /* 32: local address (PUT source, GET destination), or the inline
                                 value (P, AMO operand, SIGNAL value) */
    union {
        uint64_t sig_addr; /* 40: PUT_SIGNAL: remote symmetric address of the signal */
        uint64_t compare;  /* 40: AMO CSWAP: compare operand */
    };
    uint64_t sig_value;   /* 48: PUT_SIGNAL: signal operand */
    uint64_t ret;         /* 56: (gshmem_proxy_ret *) or 0: per-descriptor completion */
} gshmem_proxy_desc;

/* Per-descriptor completion slot, written by the proxy (host memory the producer can read). */
typedef struct gshmem_proxy_ret {
    uint64_t value;       /* fetched value (AMO fetch forms, G), zero-extended */
    int32_t status;       /* 0, or a GSHMEM_ERR_* code (the proxy printed why) */
    uint32_t pad_;
    uint64_t done;        /* t + 1 of the descriptor answered, stored last with release */
    uint64_t ack;         /* ring-owned slots only: t + 1 once its producer read the answer */
} gshmem_proxy_ret;

/* Written by the proxy only. Each counter on its own 64-byte line: producers poll head and
 * retired while the proxy writes them. */
typedef struct gshmem_proxy_ctrl {
    uint64_t head;        /* next ticket the proxy reads; slot t % n is free once t < head + n */
    uint64_t pad0_[7];
    uint64_t retired;     /* every ticket < retired is complete */
    uint64_t pad1_[7];
    int32_t err_status;   /* first error of this ring (0 = none), stored with release */
    int32_t err_pe;       /* the PE it concerned (-1 if none) */
    uint64_t err_ticket;
    uint64_t pad2_[6];
} gshmem_proxy_ctrl;

/* What a producer needs: given out by the proxy when it creates a ring. */
typedef struct gshmem_proxy_chan {
    gshmem_proxy_desc *slots;   /* n_slots descriptors, zero-initialised */
    uint64_t *tail;             /* producers' ticket counter */
    gshmem_proxy_ctrl *ctrl;
    uint64_t n_slots;           /* power of two */
    gshmem_proxy_ret *rets;     /* [n_slots] ring-owned completion slots, or NULL */
    /* GPU memory the ring's GPU producers share, or NULL (then every producer reads head and
     * retired across PCIe): GSHMEM_PROXY_GPU_WORDS words, zeroed; each used word on a 64-byte
     * line of its own (indices below). The newest head and retired a producer read, and the
     * next time (globaltimer ns) one of them may read each again: one read of a host word at a
     * time per ring, however many threads wait (gshmem/device/channel.h). */
    uint64_t *gpu_words;
} gshmem_proxy_chan;

enum {
    GSHMEM_PROXY_GW_HEAD = 0,          /* the newest ctrl->head a producer read */
    GSHMEM_PROXY_GW_RETIRED = 8,       /* the newest ctrl->retired a waiter read */
    GSHMEM_PROXY_GW_HEAD_NEXT = 16,    /* when a producer may next read ctrl->head */
    GSHMEM_PROXY_GW_RETIRED_NEXT = 24, /* when a waiter may next read ctrl->retired */
    GSHMEM_PROXY_GW_MODE = 32,         /* which copies are used: 1 head, 2 retired (0: both) */
    GSHMEM_PROXY_GPU_WORDS = 40
};

#if !defined(__CUDA_ARCH__) && (defined(__GNUC__) || defined(__clang__))
/* ---- host producer helpers (the CPU tests' "GPU"; also host code posting to a ring) ---- */

/* Spin hint; a test on few cores may define it (e.g. as sched_yield()) before including. */
#ifndef GSHMEM_PROXY_RELAX
#define GSHMEM_PROXY_RELAX() ((void)0)
#endif

static inline int gshmem_proxy_chan_error(const gshmem_proxy_chan *c) {
    return __atomic_load_n(&c->ctrl->err_status, __ATOMIC_ACQUIRE);
}

/* Steps 1-2: a ticket whose slot is free. Returns UINT64_MAX only if the proxy reported an
 * error while this producer waited for room (the ring will not drain). */
static inline uint64_t gshmem_proxy_claim(const gshmem_proxy_chan *c) {
    uint64_t t = __atomic_fetch_add(c->tail, 1, __ATOMIC_RELAXED);
    while (t - __atomic_load_n(&c->ctrl->head, __ATOMIC_ACQUIRE) >= c->n_slots) {
        if (gshmem_proxy_chan_error(c)) return UINT64_MAX;
        GSHMEM_PROXY_RELAX();
    }
    return t;
}

/* Steps 3-4: copy the body of *d (its seq is ignored) into ticket t's slot and publish it. */
static inline void gshmem_proxy_publish(const gshmem_proxy_chan *c, uint64_t t,
                                        const gshmem_proxy_desc *d) {
    gshmem_proxy_desc *s = &c->slots[t & (c->n_slots - 1)];
    s->op = d->op;
    s->amo = d->amo;
    s->flags = d->flags;
    s->pe = d->pe;
    s->size = d->size;
    s->raddr = d->raddr;
    s->laddr = d->laddr;
    s->sig_addr = d->sig_addr;
    s->sig_value = d->sig_value;
    s->ret = d->ret;
    __atomic_store_n(&s->seq, t + 1, __ATOMIC_RELEASE);
}

/* Claim + publish. Returns the ticket (UINT64_MAX: the ring is in error). */
static inline uint64_t gshmem_proxy_post(const gshmem_proxy_chan *c, const gshmem_proxy_desc *d) {
    uint64_t t = gshmem_proxy_claim(c);
    if (t != UINT64_MAX) gshmem_proxy_publish(c, t, d);
    return t;
}

/* Waits for the completion of ticket t through its ret slot; returns its status. */
static inline int gshmem_proxy_wait_ret(const gshmem_proxy_ret *r, uint64_t t) {
    while (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE) != t + 1) GSHMEM_PROXY_RELAX();
    return r->status;
}

/* Ring-owned completion slot of ticket t: post with d->ret = that slot, wait with
 * gshmem_proxy_wait_ret, then gshmem_proxy_ack (the slot is reused only after it). */
static inline gshmem_proxy_ret *gshmem_proxy_ret_of(const gshmem_proxy_chan *c, uint64_t t) {
    return &c->rets[t & (c->n_slots - 1)];
}
static inline void gshmem_proxy_ack(gshmem_proxy_ret *r, uint64_t t) {
    __atomic_store_n(&r->ack, t + 1, __ATOMIC_RELEASE);
}

/* Waits until every ticket < t is complete; returns the ring's sticky error (0 = none). */
static inline int gshmem_proxy_wait_retired(const gshmem_proxy_chan *c, uint64_t t) {
    while (__atomic_load_n(&c->ctrl->retired, __ATOMIC_ACQUIRE) < t) {
        int e = gshmem_proxy_chan_error(c);
        if (e) return e;
        GSHMEM_PROXY_RELAX();
    }
    return gshmem_proxy_chan_error(c);
}

/* Quiet: everything posted to this ring before the call is complete. */
static inline int gshmem_proxy_quiet(const gshmem_proxy_chan *c) {
    return gshmem_proxy_wait_retired(c, __atomic_load_n(c->tail, __ATOMIC_ACQUIRE));
}
#endif /* host helpers */

#endif
