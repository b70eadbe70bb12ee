/* What the files of the proxy transport share: the consumer side of a ring and its
 * in-flight records (ring.c), the libfabric endpoint (fabric.c), the two data modes
 * (direct.c, staged.c) and the proxy thread (proxy.c). Not seen outside this folder. */
#ifndef GSHMEMI_PROXY_IMPL_H
#define GSHMEMI_PROXY_IMPL_H

#include <pthread.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

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

/* ---- libfabric (fabric.c) ----------------------------------------------------------- */
enum { XF_DIRECT = 1, XF_TX, XF_RX };

/* One posted fabric operation; the context libfabric hands back (FI_CONTEXT2 first). */
typedef struct xfer {
    struct fi_context2 ctx;
    uint8_t kind;               /* XF_* */
    op_rec *rec;
    uint64_t ticket;            /* rec->ticket when posted: a stale completion is ignored */
    struct xfer *next;
} xfer;

typedef struct pfabric {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_ep *ep;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_mr *heap_mr;
    struct fid_mr *stage_mr;    /* staged mode's buffers (closed after the endpoint) */
    void *heap_desc;
    uint64_t *rkey;             /* [npes] heap key of each PE */
    uint64_t *rbase;            /* [npes] what to subtract from a symmetric address (0: virt) */
    bool mr_local, mr_endpoint, virt_addr;
    size_t max_msg;
    char prov[64];
    char addr[96];              /* printable form of the published address */
    xfer *xfers, *free_xfers;
    size_t n_xfers;
} pfabric;

/* ---- the staged protocol (staged.c) ---------------------------------------------------- */
struct staged;

/* ---- the proxy ----------------------------------------------------------------------- */
struct gshmemi_proxy {
    gshmemi_proxy_params p;
    int mode;                   /* DIRECT or STAGED */
    pfabric fab;
    struct staged *st;
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
    int err_status;             /* atomic: first error of the proxy */
    char err_msg[512];
};

/* common helpers (proxy.c; gshmemi_proxy_now is in proxy.h) */
const char *gshmemi_proxy_op_name(int op);
/* Records the first error of the proxy (message printed through gshmemi_error). */
void gshmemi_proxy_fail(gshmemi_proxy *x, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

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

/* fabric.c */
gshmemi_status gshmemi_fab_open(gshmemi_proxy *x);
void gshmemi_fab_close(gshmemi_proxy *x);
/* Reads completions and dispatches them; returns how many. */
int gshmemi_fab_progress(gshmemi_proxy *x);
xfer *gshmemi_xfer_get(gshmemi_proxy *x, op_rec *r);
void gshmemi_xfer_put(gshmemi_proxy *x, xfer *f);
uint64_t gshmemi_fab_raddr(const gshmemi_proxy *x, int pe, uint64_t sym);
/* A random key for a registration (FI_MR_PROV_KEY aside, the application picks keys). */
uint64_t gshmemi_fab_random_key(const gshmemi_proxy *x);
/* fi_mr_reg (+ bind/enable where FI_MR_ENDPOINT). */
gshmemi_status gshmemi_fab_register(gshmemi_proxy *x, void *buf, size_t len, uint64_t access, uint64_t key,
                                    struct fid_mr **mr, const char *what);
/* "fi_write to PE 3: Connection refused" style text for a libfabric error. */
const char *gshmemi_fab_strerror(int ret);

/* direct.c: posts what it can of r's current stage; 0 = all posted, -FI_EAGAIN = retry
 * later, other = failed (r completed with an error). */
int gshmemi_direct_pump(gshmemi_proxy *x, op_rec *r);
/* Everything of the current stage completed: next stage, or the record completes. */
void gshmemi_direct_stage_done(gshmemi_proxy *x, op_rec *r);
gshmemi_status gshmemi_direct_check_atomics(gshmemi_proxy *x);
void gshmemi_direct_completion(gshmemi_proxy *x, xfer *f, int err);

/* staged.c */
gshmemi_status gshmemi_staged_open(gshmemi_proxy *x);
void gshmemi_staged_close(gshmemi_proxy *x);
int gshmemi_staged_pump(gshmemi_proxy *x, op_rec *r);
/* Hands the requests whose source copies are done to the provider (after a pump pass). */
int gshmemi_staged_send(gshmemi_proxy *x);
void gshmemi_staged_stage_done(gshmemi_proxy *x, op_rec *r);
/* A send or receive completed (err != 0: failed). */
void gshmemi_staged_completion(gshmemi_proxy *x, xfer *f, size_t len, int err);
/* Retries deferred receives and unsent responses; returns work done. */
int gshmemi_staged_progress(gshmemi_proxy *x);
bool gshmemi_staged_busy(const gshmemi_proxy *x);
uint64_t gshmemi_staged_carried(const gshmemi_proxy *x);
/* One line of the staged protocol's state (GSHMEM_DEBUG's progress report). */
void gshmemi_staged_describe(const gshmemi_proxy *x, char *buf, size_t len);

#endif
