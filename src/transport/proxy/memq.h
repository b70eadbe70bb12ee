/* The staged mode's memory operations on an in-order device queue, without CUDA: tickets,
 * atomic batching, the hand-over of atomics' old values, the relay kept in one order with the
 * queue, and the diagnosis of a queue that stops moving. It implements gshmemi_proxy_memops
 * (proxy.h) on top of a backend that only enqueues: in the library a CUDA stream
 * (transport.c), in the unit tests a thread that performs the queue late
 * (tests/unit/proxy_harness.h), so the same bookkeeping runs in both. The protocol (tickets,
 * batches, the relay's words, why one order holds over both queues): docs/proxy.md, "The
 * memory queue" and "The relay". */
#ifndef GSHMEMI_MEMQ_H
#define GSHMEMI_MEMQ_H

#include "amo_batch.h"
#include "proxy.h"

/* Atomics in flight (written, their ticket not yet passed): packed requests bring up to 256
 * at once per peer and 16 requests per peer may be served together, so the ring holds 4096;
 * memops.room says how many more fit, and the proxy serves a request only when its atomics
 * fit (a full ring would otherwise have to wait for the device). Batches are launched
 * GSHMEMI_AMO_BATCH_MAX at a time. */
#define GSHMEMI_MEMQ_SLOTS 4096u

typedef struct gshmemi_memq_backend {
    void *ctx;
    /* each enqueues and returns 0 or a GSHMEM_ERR_* (it said why) */
    int (*copy)(void *ctx, void *dst, const void *src, size_t n, bool to_device);
    int (*write64)(void *ctx, uint64_t *dev_addr, uint64_t value);   /* a signal SET */
    /* descs[(first + i) % SLOTS] for i < n <= GSHMEMI_AMO_BATCH_MAX, old values to
     * olds[(first + i) % SLOTS]; atomics on one 8-byte word in ring order
     * (gshmemi_launch_amo_batch) */
    int (*atomics)(void *ctx, unsigned first, unsigned n);
    int (*ticket)(void *ctx, uint64_t t);   /* *done_word = t after everything before */
    int (*sync)(void *ctx);                  /* blocks until everything enqueued was performed */
    /* the stall warning's view of the queue: state and what to do, e.g. "stream: busy; ..." */
    void (*describe)(void *ctx, char *buf, size_t len);
    /* The relay (all NULL: none). relay_write: *addr = value after every earlier relay entry,
     * 0, or 1 when the relay's ring is full (nothing done: the caller uses the stream);
     * relay_done: entries the relay performed; wait_relay: the stream waits until the relay
     * performed n entries (0 or a GSHMEM_ERR_*). */
    int (*relay_write)(void *ctx, uint64_t *addr, uint64_t value);
    uint64_t (*relay_done)(void *ctx);
    int (*wait_relay)(void *ctx, uint64_t n);
} gshmemi_memq_backend;

typedef struct gshmemi_memq {
    gshmemi_memq_backend be;
    gshmemi_amo_desc *descs;        /* [SLOTS] the backend's atomics read them */
    const uint64_t *olds;           /* [SLOTS] the backend's atomics write them */
    const uint64_t *done_word;      /* the backend's tickets write it */
    uint64_t *relay_word;           /* the relay's tickets write it (host memory) */
    uint64_t relay_n;               /* relay entries issued */
    uint64_t stream_ticket;         /* the last ticket enqueued on the stream */
    bool stream_dirty;              /* operations enqueued on the stream that no ticket covers yet */
    bool relay_dirty;               /* relay entries that no ticket covers yet */
    uint64_t n_relayed;             /* stores that went by the relay (GSHMEM_DEBUG=1 says) */
    uint64_t issued;                /* tickets whose write is enqueued */
    bool dirty;                     /* operations enqueued that no ticket covers yet */
    bool marked;                    /* ticket issued + 1 was handed out; its write is not enqueued */
    struct {
        uint64_t t;                 /* the ticket that covers it */
        uint64_t *old;              /* where the proxy wants the previous value (NULL: none) */
    } pend[GSHMEMI_MEMQ_SLOTS];     /* atomics whose old value is still on its way */
    unsigned pend_h, pend_n;
    unsigned batch_first, batch_n;  /* written, not yet enqueued (pend's newest batch_n) */
    struct {                        /* the last 64 operations: what a stall waits for */
        uint64_t t;
        const char *what;
        uint64_t addr, n;
    } oplog[64];
    unsigned n_ops;
    uint64_t stall_at;              /* done() value when it last moved ... */
    double stall_since, stall_warned;  /* ... and when; the last "no progress" warning */
} gshmemi_memq;

void gshmemi_memq_init(gshmemi_memq *q, const gshmemi_memq_backend *be, gshmemi_amo_desc *descs,
                       const uint64_t *olds, const uint64_t *done_word);
/* The backend has a relay; its tickets go to *relay_word (host memory, starts at 0). */
void gshmemi_memq_set_relay(gshmemi_memq *q, uint64_t *relay_word);
/* The memops of q (ctx = q); pin/unpin are the caller's. */
gshmemi_proxy_memops gshmemi_memq_ops(gshmemi_memq *q);

#endif
