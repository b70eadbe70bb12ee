/* The staged mode's lower layer, shared by its parts: the buffers and their queues, the mode's
 * state per proxy, and small helpers (the memory queue's tickets, a record by its wire name).
 * staged.c sets the mode up and dispatches what arrives to the source side (staged_source.h)
 * and the target side (staged_target.h); all three use this and it uses none of them. The
 * protocol: docs/proxy.md, "The wire (staged mode)". */
#ifndef GSHMEMI_PROXY_STAGED_STATE_H
#define GSHMEMI_PROXY_STAGED_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proxy_impl.h"
#include "staged_stats.h"
#include "staged_wire.h"

enum { P_RX, P_REQ, P_RSP };

typedef struct sbuf {
    xfer x;             /* first: libfabric's context */
    uint8_t *data;
    int pool;           /* P_* */
    int peer;           /* where a pending response goes */
    size_t len;         /* bytes of a pending response */
    uint64_t op_id;     /* a request's record (its send may fail); a get answer's record */
    uint64_t t;         /* memops ticket it waits for (to_send, placing) */
    double t_in;        /* when it entered to_send / when its request was received */
    uint32_t n_ops;     /* a pack being filled: its small operations ... */
    uint32_t used;      /* ... and their bytes after the header ... */
    uint32_t ans;       /* ... and the bytes of their answers */
    bool blocked;       /* a pack's records were told the provider refused it */
    bool holds_get;     /* a response answering a get (its receiver keeps the buffer): never carried */
    struct sbuf *req;   /* a response in `placing`: the receive buffer of its request */
    struct sbuf *next;
} sbuf;

typedef struct bq { sbuf *h, *t; } bq;

typedef struct partial {   /* a put_signal being received */
    int32_t src;
    uint64_t op_id, got;
} partial;

struct staged {
    size_t chunk, bufsz;
    size_t pack_put;    /* puts of at most this many bytes travel packed (one message's worth) */
    size_t pack_get;    /* gets likewise (their answer carries the data) */
    unsigned pack_max;  /* small operations per pack (answers fit a response buffer) */
    int credits0;
    uint8_t *slab;
    void *desc;
    sbuf *bufs;
    size_t n_bufs;
    bq free_req, free_rsp;
    bq deferred;        /* requests waiting for a response buffer */
    bq unsent;          /* responses the provider refused with -FI_EAGAIN */
    bq to_send;         /* requests waiting for their source copy, then for the provider */
    bq placing;         /* responses (and get answers) waiting for their memory operations */
    bq held;            /* responses waiting for a request to their PE to carry them (t_in: since) */
    int *n_held;        /* [npes] of them per PE */
    int8_t *pb_score;   /* [npes] > 0: holding for this PE pays */
    unsigned pb_probe;
    double hold;        /* seconds a response may be held (0: never) */
    uint64_t n_carried, n_expired;
    bq repost;          /* receive buffers to post again */
    int *credits;       /* [npes] */
    sbuf **open;        /* [npes] the pack to that PE still waiting to be sent, if it is the newest
                           request to that PE (NULL: the next small operation opens one) */
    partial *parts;
    int n_parts, cap_parts;
    /* time split (GSHMEM_DEBUG=1 prints it at finalize): request queued -> handed to the
     * provider (source copy), request received -> placed in GPU memory (target) */
    lat_stat send_wait, place;
};

/* The staged state of proxy x. */
#define STG(x) ((struct staged *)(x)->mode_state)

static inline void bq_push(bq *q, sbuf *b) {
    b->next = NULL;
    if (q->t) q->t->next = b;
    else q->h = b;
    q->t = b;
}

static inline sbuf *bq_pop(bq *q) {
    sbuf *b = q->h;
    if (!b) return NULL;
    q->h = b->next;
    if (!q->h) q->t = NULL;
    return b;
}

/* The memory operations' ticket covering what is enqueued so far, and the highest one done. */
static inline uint64_t memops_mark(gshmemi_proxy *x) {
    return x->p.mem.mark ? x->p.mem.mark(x->p.mem.ctx) : 0;
}
static inline uint64_t memops_done(gshmemi_proxy *x) {
    return x->p.mem.done ? x->p.mem.done(x->p.mem.ctx) : UINT64_MAX;
}

/* A record as the wire names it (smsg.op_id, sop.op_id): ring id << 56 | ticket. */
static inline uint64_t op_id_of(const op_rec *r) { return (uint64_t)r->ring->id << 56 | r->ticket; }

/* The record of op_id if it is still in flight (NULL: it failed meanwhile, or is not ours). */
static inline op_rec *rec_of(gshmemi_proxy *x, uint64_t op_id) {
    int ring = (int)(op_id >> 56);
    uint64_t t = op_id & ((1ull << 56) - 1);
    if (ring >= x->n_rings) return NULL;
    pring *g = x->rings[ring];
    op_rec *r = &g->recs[t & g->mask];
    return r->ticket == t && r->state == REC_ACTIVE ? r : NULL;
}

#endif
