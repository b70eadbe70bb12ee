/* What the files of the proxy transport share above the libfabric layer (fabric.h): the
 * consumer side of a ring and its in-flight records (ring.c), the data-mode table that
 * direct.c and staged.c fill, and the proxy itself (proxy.c). Not seen outside this folder. */
#ifndef GSHMEMI_PROXY_IMPL_H
#define GSHMEMI_PROXY_IMPL_H

#include <pthread.h>

#include "base.h"
#include "fabric.h"
#include "proxy.h"

#define PROXY_MAX_RINGS 64

/* ---- in-flight records -------------------------------------------------------------- */
enum { REC_FREE = 0, REC_ACTIVE, REC_DONE };

/* One consumed descriptor until it retires. Records live in their ring's table, indexed by
 * ticket % n_slots: the proxy consumes ticket t only when t - retired < n_slots, so a
 * record is never reused while in flight. */
typedef struct op_rec {
    gshmem_proxy_desc d;        /* the copy taken from the slot (d.seq = ticket + 1) */
    uint64_t ticket;
    struct pring *ring;
    uint8_t state;              /* REC_* */
    uint8_t stage;              /* PUT_SIGNAL direct: 0 data, 1 signal */
    uint8_t queued;             /* on its PE's pump queue */
    uint8_t blocked;            /* the last post attempt was refused with -FI_EAGAIN */
    int32_t status;
    uint64_t posted;            /* bytes (or 1 for single messages) posted in this stage */
    uint32_t inflight;          /* posted, not yet completed fabric operations / messages */
    uint64_t operand, compare, result;  /* buffers of direct atomics: live until completion */
    double t_last;              /* last progress (start, post or completion): for the timeout */
    struct op_rec *next;        /* its PE's pump queue */
} op_rec;

/* The records with something left to post to one PE, in the order they were consumed. A
 * pump pass tries each queue from its head and stops at the first record that finds no room
 * (credits, buffers, the provider's queue), so a pass costs one attempt per PE plus the work
 * it does: thousands of records waiting for one peer cost nothing while they wait. */
typedef struct pump_q {
    op_rec *h, *t;
    int next;                   /* the next PE with a non-empty queue (-1: none) */
    bool listed;                /* on the list of PEs with a non-empty queue */
} pump_q;

/* The consumer side of one ring. */
typedef struct pring {
    gshmem_proxy_chan chan;
    op_rec *recs;               /* [n_slots] */
    uint64_t mask;
    uint64_t head, retired;     /* private copies of ctrl->head / ctrl->retired */
    uint64_t fence_until;       /* a FENCE at f: tickets > f wait until retired >= f + 1 */
    uint64_t own_tail;          /* tail when the caller gave none */
    uint64_t acked;             /* ring-owned ret slots: every ticket < acked retired and,
                                   if it used its ret slot, was acknowledged (= ctrl->head) */
    int id;
    void *mem;
} pring;

/* ---- the data modes (direct.c, staged.c) ------------------------------------------- */
/* How a record's operation reaches its target. The proxy thread calls it; the fabric layer
 * hands it the completions (completion, with the proxy as ctx). NULL entries: nothing to do. */
struct gshmemi_proxy_mode {
    int id;                     /* GSHMEMI_PROXY_DIRECT / _STAGED (gshmemi_proxy_mode) */
    const char *name;           /* "direct", "staged" */
    uint64_t caps;              /* what it needs of the provider */
    bool mr_local;              /* it registers every local buffer (FI_MR_LOCAL accepted) */
    /* Before anything is opened: the parameters give what it needs. */
    gshmemi_status (*check)(const gshmemi_proxy_params *p);
    /* The endpoint is open, the addresses not yet exchanged: register what peers reach (*key:
     * the heap key published with the address) and post what must be posted before a peer
     * may send. */
    gshmemi_status (*open)(gshmemi_proxy *x, uint64_t *key);
    /* After the endpoint closed: free the mode's state. */
    void (*close)(gshmemi_proxy *x);
    /* Posts what it can of r's current stage: 0 all posted, -FI_EAGAIN retry later (r stays at
     * the head of its PE's queue), other: failed (r completed with an error). */
    int (*pump)(gshmemi_proxy *x, op_rec *r);
    /* After a pump pass: hands what it prepared to the provider; returns work done. */
    int (*send)(gshmemi_proxy *x);
    /* Nothing of r's current stage is left to post or to complete: its next stage, or r
     * completes. */
    void (*stage_done)(gshmemi_proxy *x, op_rec *r);
    gshmemi_fab_handler completion;
    /* Each turn of the loop, after the completions: retries and deferred work done. */
    int (*progress)(gshmemi_proxy *x);
    /* Work in flight besides the records (buffers out, credits in use). */
    bool (*busy)(const gshmemi_proxy *x);
    /* Responses its requests carried (gshmemi_proxy_carried). */
    uint64_t (*carried)(const gshmemi_proxy *x);
    /* One line of its state for the progress report (GSHMEM_DEBUG=1). */
    void (*describe)(const gshmemi_proxy *x, char *buf, size_t len);
};
extern const struct gshmemi_proxy_mode gshmemi_proxy_direct, gshmemi_proxy_staged;

/* ---- the proxy ----------------------------------------------------------------------- */
struct gshmemi_proxy {
    gshmemi_proxy_params p;
    const struct gshmemi_proxy_mode *mode;
    void *mode_state;           /* the mode's own (staged.c's) */
    pfabric fab;
    pring *rings[PROXY_MAX_RINGS];
    int n_rings;
    pring *host;                /* ring of the host-initiated operations */
    pump_q *pumpq;              /* [npes] records with something left to post, per PE */
    int pump_first, pump_last;  /* PEs with a non-empty queue, linked by pumpq[pe].next */
    uint64_t pump_n;            /* records on the pump queues */
    bool *peer_dead;            /* [npes] a failure ended traffic to this PE */
    double timeout;             /* seconds without progress before an operation fails */
    pthread_t thread;
    int thread_started;         /* atomic */
    int stop;                   /* atomic */
    uint64_t consumed;          /* atomic (read by other threads) */
    gshmemi_perr err;           /* the first error of the proxy */
};

/* ring.c */
/* with_rets: the ring owns one completion slot per descriptor slot (chan.rets). */
gshmemi_status gshmemi_pring_create(gshmemi_proxy *x, uint64_t n_slots, uint64_t *tail, bool with_rets,
                                    pring **out);
void gshmemi_pring_destroy(pring *g);
int gshmemi_pring_drain(gshmemi_proxy *x, pring *g, int max);
void gshmemi_pring_retire(pring *g);
/* The record reached its end (status 0 or an error): ret written, retire may pass it. */
void gshmemi_rec_complete(gshmemi_proxy *x, op_rec *r, int status);
/* Fails every active record with no progress for x->timeout (and those to dead peers). */
void gshmemi_pring_check_timeouts(gshmemi_proxy *x, pring *g, double now);
bool gshmemi_pring_busy(const pring *g);
void gshmemi_pump_push(gshmemi_proxy *x, op_rec *r);
/* Called after a completion: when nothing of r's stage is left to post or to complete, the
 * mode decides what comes next. */
void gshmemi_rec_progressed(gshmemi_proxy *x, op_rec *r);
/* Fails r with a message naming its op and PE, and (peer_dead) stops traffic to that PE. */
void gshmemi_rec_fail(gshmemi_proxy *x, op_rec *r, int status, bool peer_dead, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
bool gshmemi_heap_range(const gshmemi_proxy *x, uint64_t a, uint64_t n);
/* Records (PE, op) in the ring's sticky error once. */
void gshmemi_pring_set_error(pring *g, int status, int pe, uint64_t ticket);

#endif
