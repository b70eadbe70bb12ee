/* Staged mode: heap memory the provider cannot reach (GPU memory without FI_HMEM) moves as
 * messages through registered host buffers on both sides. The source copies out of device
 * memory (memops.copy_from) into a send buffer, in chunks of GSHMEM_PROXY_CHUNK; the target's
 * proxy places data (copy_to), applies atomics and signals with the memops (so they stay
 * atomic with the device's own atomics) and answers every request with one response.
 *
 * The memory operations complete asynchronously (memops.mark / done): a request waits in
 * `to_send` until its source bytes are copied out, a response in `placing` until its request's
 * operations are done (then it is sent and the request's receive buffer posted again; a get's
 * answer likewise until its data is in the destination). The proxy never blocks on the device,
 * so an operation that waits for a busy target GPU delays only what is queued behind it.
 *
 * Flow control: a PE has at most `credits` requests outstanding to each peer; each request
 * gets exactly one response, so a PE receives at most 2 * credits messages from a peer at
 * once and posts that many receive buffers per peer. Responses never wait for credits: a
 * request that finds no free response buffer stays in its receive buffer until one frees.
 * put_signal: every chunk carries the operation's total; the target counts the bytes it has
 * placed per (source, operation) and applies the signal when all are in, whatever order the
 * chunks arrived in. */
#include <stdlib.h>
#include <string.h>

#include "proxy_impl.h"

#define HDR 128   /* message header room; the payload starts 128-byte aligned */
enum { M_PUT = 1, M_GET, M_AMO, M_SIG, M_ACK, M_GETDATA };
enum { MF_SIGNAL = 1 };
enum { P_RX, P_REQ, P_RSP };

typedef struct smsg {
    uint8_t type, amo, flags, pad_;
    int32_t src;        /* sender's PE */
    int32_t status;     /* responses: 0 or GSHMEM_ERR_* */
    uint32_t pad2_;
    uint64_t op_id;     /* the source's record: ring id << 56 | ticket */
    uint64_t addr;      /* requests: target symmetric address of this piece */
    uint64_t len;       /* payload bytes (PUT, GETDATA), bytes asked (GET), width (AMO) */
    uint64_t off;       /* offset of this piece in its operation (GET, GETDATA) */
    uint64_t total;     /* PUT with MF_SIGNAL: bytes of the whole operation */
    uint64_t sig_addr, sig_value;
    uint64_t operand, compare;
    uint64_t value;     /* responses: fetched value */
} smsg;
_Static_assert(sizeof(smsg) <= HDR, "message header fits its room");

typedef struct sbuf {
    xfer x;             /* first: libfabric's context */
    uint8_t *data;
    int pool;           /* P_* */
    int peer;           /* where a pending response goes */
    size_t len;         /* bytes of a pending response */
    uint64_t op_id;     /* a request's record (its send may fail); a get answer's record */
    uint64_t t;         /* memops ticket it waits for (to_send, placing) */
    double t_in;        /* when it entered to_send / when its request was received */
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
    bq repost;          /* receive buffers to post again */
    int *credits;       /* [npes] */
    partial *parts;
    int n_parts, cap_parts;
    /* time split (GSHMEM_DEBUG=1 prints it at finalize): request queued -> handed to the
     * provider (source copy), request received -> placed in GPU memory (target) */
    double send_wait_sum, send_wait_max, place_sum, place_max;
    uint64_t n_sent, n_placed;
};

static void bq_push(bq *q, sbuf *b) {
    b->next = NULL;
    if (q->t) q->t->next = b;
    else q->h = b;
    q->t = b;
}

static sbuf *bq_pop(bq *q) {
    sbuf *b = q->h;
    if (!b) return NULL;
    q->h = b->next;
    if (!q->h) q->t = NULL;
    return b;
}

static void bq_unpop(bq *q, sbuf *b) {   /* back at the front */
    b->next = q->h;
    q->h = b;
    if (!q->t) q->t = b;
}

/* ---- set-up ----------------------------------------------------------------------------- */
static void post_recv(gshmemi_proxy *x, sbuf *b) {
    struct staged *s = x->st;
    b->x.kind = XF_RX;
    ssize_t ret = fi_recv(x->fab.ep, b->data, s->bufsz, s->desc, FI_ADDR_UNSPEC, &b->x.ctx);
    if (ret == -FI_EAGAIN) {
        bq_push(&s->repost, b);
        return;
    }
    if (ret) gshmemi_proxy_fail(x, GSHMEM_ERR_INTERNAL, "proxy: fi_recv of a staging buffer: %s",
                                gshmemi_fab_strerror((int)ret));
}

gshmemi_status gshmemi_staged_open(gshmemi_proxy *x) {
    struct staged *s = calloc(1, sizeof *s);
    if (!s) return GSHMEM_ERR_NO_MEMORY;
    x->st = s;
    int n = x->p.npes;
    s->chunk = gshmemi_cfg.PROXY_CHUNK ? gshmemi_cfg.PROXY_CHUNK : 4096;
    if (s->chunk > x->fab.max_msg - HDR) s->chunk = x->fab.max_msg - HDR;
    s->bufsz = HDR + s->chunk;
    s->credits0 = (int)(gshmemi_cfg.PROXY_STAGING / s->chunk);
    if (s->credits0 < 1) s->credits0 = 1;
    size_t per_pool = (size_t)n * (size_t)s->credits0;   /* receive: 2x, requests, responses */
    s->n_bufs = 4 * per_pool;
    s->bufs = calloc(s->n_bufs, sizeof *s->bufs);
    s->credits = calloc((size_t)n, sizeof *s->credits);
    if (!s->bufs || !s->credits || posix_memalign((void **)&s->slab, 4096, s->n_bufs * s->bufsz))
        return GSHMEM_ERR_NO_MEMORY;
    if (x->p.mem.pin) x->p.mem.pin(x->p.mem.ctx, s->slab, s->n_bufs * s->bufsz);
    GSHMEMI_CHECK(gshmemi_fab_register(x, s->slab, s->n_bufs * s->bufsz, FI_SEND | FI_RECV,
                                       gshmemi_fab_random_key(x), &x->fab.stage_mr, "staging buffers"));
    s->desc = fi_mr_desc(x->fab.stage_mr);
    for (int pe = 0; pe < n; pe++) s->credits[pe] = s->credits0;
    for (size_t i = 0; i < s->n_bufs; i++) {
        sbuf *b = &s->bufs[i];
        b->data = s->slab + i * s->bufsz;
        b->pool = i < 2 * per_pool ? P_RX : i < 3 * per_pool ? P_REQ : P_RSP;
        if (b->pool == P_RX) post_recv(x, b);
        else bq_push(b->pool == P_REQ ? &s->free_req : &s->free_rsp, b);
    }
    return gshmemi_proxy_error(x, NULL) ? GSHMEM_ERR_NOT_AVAILABLE : GSHMEM_SUCCESS;
}

void gshmemi_staged_close(gshmemi_proxy *x) {
    struct staged *s = x->st;
    if (!s) return;
    if (s->n_sent || s->n_placed)
        gshmemi_info("proxy: %llu requests sent, queued -> provider mean %.2f us (max %.1f); %llu requests served, "
                     "received -> placed in GPU memory mean %.2f us (max %.1f)", (unsigned long long)s->n_sent,
                     s->n_sent ? 1e6 * s->send_wait_sum / (double)s->n_sent : 0.0, 1e6 * s->send_wait_max,
                     (unsigned long long)s->n_placed, s->n_placed ? 1e6 * s->place_sum / (double)s->n_placed : 0.0,
                     1e6 * s->place_max);
    if (x->p.mem.flush) x->p.mem.flush(x->p.mem.ctx);   /* nothing may still copy from/to the slab */
    if (s->slab && x->p.mem.unpin) x->p.mem.unpin(x->p.mem.ctx, s->slab);
    free(s->slab);
    free(s->bufs);
    free(s->credits);
    free(s->parts);
    free(s);
    x->st = NULL;
}

/* ---- memory operations ------------------------------------------------------------------ */
static uint64_t mark(gshmemi_proxy *x) { return x->p.mem.mark ? x->p.mem.mark(x->p.mem.ctx) : 0; }
static uint64_t done(gshmemi_proxy *x) { return x->p.mem.done ? x->p.mem.done(x->p.mem.ctx) : UINT64_MAX; }

/* ---- the source side ------------------------------------------------------------------ */
static uint64_t op_id_of(const op_rec *r) { return (uint64_t)r->ring->id << 56 | r->ticket; }

static op_rec *rec_of(gshmemi_proxy *x, uint64_t op_id) {
    int ring = (int)(op_id >> 56);
    uint64_t t = op_id & ((1ull << 56) - 1);
    if (ring >= x->n_rings) return NULL;
    pring *g = x->rings[ring];
    op_rec *r = &g->recs[t & g->mask];
    return r->ticket == t && r->state == REC_ACTIVE ? r : NULL;
}

static bool is_bulk(int op) {
    return op == GSHMEM_PROXY_OP_PUT || op == GSHMEM_PROXY_OP_GET || op == GSHMEM_PROXY_OP_PUT_SIGNAL;
}

/* Fills the request for r's next piece (len bytes at offset off); returns its payload size,
 * or -1 when copying the source failed (r failed). */
static long build_request(gshmemi_proxy *x, op_rec *r, sbuf *b, uint64_t off, uint64_t len) {
    const gshmem_proxy_desc *d = &r->d;
    smsg *m = (smsg *)b->data;
    memset(m, 0, sizeof *m);
    m->src = x->p.mype;
    m->op_id = op_id_of(r);
    m->addr = d->raddr + off;
    m->len = len;
    m->off = off;
    switch (d->op) {
    case GSHMEM_PROXY_OP_PUT_SIGNAL:
        m->flags = MF_SIGNAL;
        m->amo = d->amo;
        m->total = d->size;
        m->sig_addr = d->sig_addr;
        m->sig_value = d->sig_value;
        /* fall through */
    case GSHMEM_PROXY_OP_PUT: {
        m->type = M_PUT;
        int st = len ? x->p.mem.copy_from(x->p.mem.ctx, b->data + HDR, (const void *)(uintptr_t)(d->laddr + off), len)
                     : 0;
        if (st) {
            gshmemi_rec_fail(x, r, st, false, "copy_from(%#llx, %llu bytes) of its source failed",
                             (unsigned long long)(d->laddr + off), (unsigned long long)len);
            return -1;
        }
        return (long)len;
    }
    case GSHMEM_PROXY_OP_P:
        m->type = M_PUT;
        memcpy(b->data + HDR, &d->laddr, len);   /* the inline value, little endian */
        return (long)len;
    case GSHMEM_PROXY_OP_GET:
    case GSHMEM_PROXY_OP_G:
        m->type = M_GET;
        return 0;
    case GSHMEM_PROXY_OP_AMO:
        m->type = M_AMO;
        m->amo = d->amo;
        m->operand = d->laddr;
        m->compare = d->compare;
        return 0;
    default:   /* SIGNAL */
        m->type = M_SIG;
        m->amo = d->amo;
        m->operand = d->laddr;
        return 0;
    }
}

static int send_requests(gshmemi_proxy *x);
int gshmemi_staged_send(gshmemi_proxy *x) { return send_requests(x); }

/* Posts what it can of r (the pump pass then hands the requests to the provider). */
int gshmemi_staged_pump(gshmemi_proxy *x, op_rec *r) {
    struct staged *s = x->st;
    const gshmem_proxy_desc *d = &r->d;
    int pe = d->pe;
    bool bulk = is_bulk(d->op);
    uint64_t goal = bulk ? (d->size ? d->size : 1) : 1;   /* an empty put_signal still signals */
    int ret = 0;
    while (r->posted < goal) {
        if (s->credits[pe] <= 0) { ret = -FI_EAGAIN; break; }   /* a response will give one back */
        sbuf *b = bq_pop(&s->free_req);
        if (!b) { ret = -FI_EAGAIN; break; }
        uint64_t len = bulk ? (d->size - r->posted < s->chunk ? d->size - r->posted : s->chunk) : d->size;
        long payload = build_request(x, r, b, bulk ? r->posted : 0, len);
        if (payload < 0) {
            bq_unpop(&s->free_req, b);
            return -FI_EIO;
        }
        b->x.kind = XF_TX;
        b->op_id = op_id_of(r);
        b->peer = pe;
        b->len = HDR + (size_t)payload;
        /* a put's source bytes are in b once the memops pass this mark; a request that copied
         * nothing (p, g, get, atomics, signals) waits for nothing (behind a queued put, it
         * still goes in order) */
        b->t = (d->op == GSHMEM_PROXY_OP_PUT || d->op == GSHMEM_PROXY_OP_PUT_SIGNAL) && payload ? mark(x) : 0;
        b->t_in = gshmemi_proxy_now();
        bq_push(&s->to_send, b);
        s->credits[pe]--;
        r->posted += bulk && len ? len : 1;
        r->inflight++;
        r->t_last = gshmemi_proxy_now();
    }
    return ret;
}

/* Sends the requests whose source copies are done, in order. */
static int send_requests(gshmemi_proxy *x) {
    struct staged *s = x->st;
    int work = 0;
    uint64_t t_done = s->to_send.h ? done(x) : 0;
    sbuf *b;
    while ((b = s->to_send.h) && b->t <= t_done) {
        ssize_t ret = fi_send(x->fab.ep, b->data, b->len, s->desc, (fi_addr_t)b->peer, &b->x.ctx);
        op_rec *r = rec_of(x, b->op_id);
        if (ret == -FI_EAGAIN) {   /* manual progress: retried after the next CQ read */
            if (r) r->blocked = 1;
            break;
        }
        bq_pop(&s->to_send);
        work++;
        double w = gshmemi_proxy_now() - b->t_in;
        s->send_wait_sum += w;
        s->n_sent++;
        if (w > s->send_wait_max) s->send_wait_max = w;
        if (r) r->blocked = 0;
        if (ret) {
            bq_push(&s->free_req, b);
            s->credits[b->peer]++;
            if (r) gshmemi_rec_fail(x, r, GSHMEM_ERR_INTERNAL, true, "fi_send: %s", gshmemi_fab_strerror((int)ret));
        }
    }
    return work;
}

void gshmemi_staged_stage_done(gshmemi_proxy *x, op_rec *r) {
    gshmemi_rec_complete(x, r, 0);   /* a get's pieces progressed once their data was placed */
}

/* Handles an answer to one of our requests; false when it keeps the receive buffer b (a get's
 * data being copied into its destination: `placing` posts it again). */
static bool on_response(gshmemi_proxy *x, sbuf *b, const smsg *m, const uint8_t *payload, size_t len) {
    x->st->credits[m->src]++;
    op_rec *r = rec_of(x, m->op_id);
    if (!r) return true;   /* the record already failed (timeout) */
    r->t_last = gshmemi_proxy_now();
    if (m->status) {
        r->inflight--;
        gshmemi_rec_fail(x, r, m->status, false, "PE %d answered: %s (piece at offset %llu)", m->src,
                         gshmemi_status_str(m->status), (unsigned long long)m->off);
        return true;
    }
    const gshmem_proxy_desc *d = &r->d;
    if (d->op == GSHMEM_PROXY_OP_GET || d->op == GSHMEM_PROXY_OP_G) {
        if (m->type != M_GETDATA || m->len > len || m->off + m->len > d->size) {
            r->inflight--;
            gshmemi_rec_fail(x, r, GSHMEM_ERR_INTERNAL, true, "PE %d sent a malformed answer", m->src);
            return true;
        }
        if (d->op == GSHMEM_PROXY_OP_G) {
            memcpy(&r->result, payload, m->len);
        } else {
            int st = x->p.mem.copy_to(x->p.mem.ctx, (void *)(uintptr_t)(d->laddr + m->off), payload, m->len);
            if (st) {
                r->inflight--;
                gshmemi_rec_fail(x, r, st, false, "copy_to(%#llx, %llu bytes) into its destination failed",
                                 (unsigned long long)(d->laddr + m->off), (unsigned long long)m->len);
                return true;
            }
            b->op_id = m->op_id;   /* the piece counts once its data is in place */
            b->t = mark(x);
            bq_push(&x->st->placing, b);
            return false;
        }
    } else if (d->op == GSHMEM_PROXY_OP_AMO) {
        r->result = d->size == 4 ? m->value & 0xffffffffull : m->value;
    }
    r->inflight--;
    gshmemi_rec_progressed(x, r);
    return true;
}

/* ---- the target side ------------------------------------------------------------------ */
static partial *partial_of(struct staged *s, int src, uint64_t op_id) {
    for (int i = 0; i < s->n_parts; i++)
        if (s->parts[i].src == src && s->parts[i].op_id == op_id) return &s->parts[i];
    if (s->n_parts == s->cap_parts) {
        int cap = s->cap_parts ? 2 * s->cap_parts : 16;
        partial *p = realloc(s->parts, (size_t)cap * sizeof *p);
        if (!p) return NULL;
        s->parts = p;
        s->cap_parts = cap;
    }
    partial *p = &s->parts[s->n_parts++];
    *p = (partial){.src = src, .op_id = op_id, .got = 0};
    return p;
}

/* put_signal: the signal, queued after the copies of every byte of the operation. */
static int count_signal(gshmemi_proxy *x, const smsg *m) {
    struct staged *s = x->st;
    partial *p = partial_of(s, m->src, m->op_id);
    if (!p) return GSHMEM_ERR_NO_MEMORY;
    p->got += m->len;
    if (p->got < m->total) return 0;
    *p = s->parts[--s->n_parts];
    if ((m->sig_addr & 7) || !gshmemi_heap_range(x, m->sig_addr, 8)) return GSHMEM_ERR_INVALID_ARG;
    /* queued after every piece's copy: the signal lands after the data */
    return x->p.mem.signal(x->p.mem.ctx, (uint64_t *)(uintptr_t)m->sig_addr, m->amo, m->sig_value);
}

static int place_put(gshmemi_proxy *x, const smsg *m, const uint8_t *in) {
    if (!gshmemi_heap_range(x, m->addr, m->len)) return GSHMEM_ERR_INVALID_ARG;
    int st = m->len ? x->p.mem.copy_to(x->p.mem.ctx, (void *)(uintptr_t)m->addr, in, m->len) : 0;
    if (st || !(m->flags & MF_SIGNAL)) return st;
    return count_signal(x, m);
}

static int apply_amo(gshmemi_proxy *x, const smsg *m, uint64_t *old) {
    if ((m->len != 4 && m->len != 8) || (m->addr & (m->len - 1)) || !gshmemi_heap_range(x, m->addr, m->len) ||
        m->amo >= GSHMEM_PROXY_AMO_COUNT)
        return GSHMEM_ERR_INVALID_ARG;
    return x->p.mem.atomic(x->p.mem.ctx, (void *)(uintptr_t)m->addr, m->amo, m->len, m->operand, m->compare, old);
}

static int apply_signal(gshmemi_proxy *x, const smsg *m) {
    if ((m->addr & 7) || !gshmemi_heap_range(x, m->addr, 8) || m->amo > GSHMEM_PROXY_SIG_ADD)
        return GSHMEM_ERR_INVALID_ARG;
    /* queued after the copies of earlier puts: their data lands before this signal */
    return x->p.mem.signal(x->p.mem.ctx, (uint64_t *)(uintptr_t)m->addr, m->amo, m->operand);
}

static void send_response(gshmemi_proxy *x, sbuf *o) {
    ssize_t ret = fi_send(x->fab.ep, o->data, o->len, x->st->desc, (fi_addr_t)o->peer, &o->x.ctx);
    if (ret == -FI_EAGAIN) {
        bq_push(&x->st->unsent, o);
        return;
    }
    if (ret) {
        gshmemi_proxy_fail(x, GSHMEM_ERR_INTERNAL, "proxy: fi_send of a response to PE %d: %s", o->peer,
                           gshmemi_fab_strerror((int)ret));
        bq_push(&x->st->free_rsp, o);
    }
}

/* Starts the request in b; its response goes out (and b is posted again) once the memory
 * operations are done (`placing`). False if no response buffer is free. */
static bool serve(gshmemi_proxy *x, sbuf *b) {
    struct staged *s = x->st;
    sbuf *o = bq_pop(&s->free_rsp);
    if (!o) return false;
    const smsg *m = (const smsg *)b->data;
    smsg *a = (smsg *)o->data;
    memset(a, 0, sizeof *a);
    a->type = M_ACK;
    a->src = x->p.mype;
    a->op_id = m->op_id;
    a->off = m->off;
    size_t payload = 0;
    int st;
    switch (m->type) {
    case M_PUT:
        st = place_put(x, m, b->data + HDR);
        break;
    case M_GET:
        st = m->len > s->chunk || !gshmemi_heap_range(x, m->addr, m->len) ? GSHMEM_ERR_INVALID_ARG
             : x->p.mem.copy_from(x->p.mem.ctx, o->data + HDR, (const void *)(uintptr_t)m->addr, m->len);
        a->type = M_GETDATA;
        a->len = st ? 0 : m->len;
        payload = a->len;
        break;
    case M_AMO:
        st = apply_amo(x, m, &a->value);
        break;
    default:
        st = apply_signal(x, m);
        break;
    }
    a->status = st;
    o->x.kind = XF_TX;
    o->peer = m->src;
    o->len = HDR + payload;
    o->req = b;
    o->t = mark(x);   /* an atomic's old value is in a->value once the memops pass this */
    bq_push(&s->placing, o);
    return true;
}

/* Responses (and get answers) whose memory operations are done, in order. */
static int finish_placed(gshmemi_proxy *x) {
    struct staged *s = x->st;
    int work = 0;
    uint64_t t_done = s->placing.h ? done(x) : 0;
    sbuf *b;
    while ((b = s->placing.h) && b->t <= t_done) {
        bq_pop(&s->placing);
        work++;
        if (b->pool == P_RSP) {
            double w = gshmemi_proxy_now() - b->req->t_in;
            s->place_sum += w;
            s->n_placed++;
            if (w > s->place_max) s->place_max = w;
            send_response(x, b);
            post_recv(x, b->req);
            continue;
        }
        op_rec *r = rec_of(x, b->op_id);   /* a get's piece is in its destination */
        if (r) {
            r->inflight--;
            r->t_last = gshmemi_proxy_now();
            gshmemi_rec_progressed(x, r);
        }
        post_recv(x, b);
    }
    return work;
}

static void on_recv(gshmemi_proxy *x, sbuf *b, size_t len) {
    const smsg *m = (const smsg *)b->data;
    if (len < sizeof *m || m->src < 0 || m->src >= x->p.npes || !m->type || m->type > M_GETDATA) {
        gshmemi_warn("proxy: dropped a malformed message of %zu bytes (claims PE %d)", len, len >= 8 ? m->src : -1);
        post_recv(x, b);
        return;
    }
    if (m->type == M_ACK || m->type == M_GETDATA) {
        if (on_response(x, b, m, b->data + HDR, len > HDR ? len - HDR : 0)) post_recv(x, b);
        return;
    }
    b->t_in = gshmemi_proxy_now();
    if (x->st->deferred.h || !serve(x, b)) bq_push(&x->st->deferred, b);   /* keep arrival order */
}

void gshmemi_staged_completion(gshmemi_proxy *x, xfer *f, size_t len, int err) {
    sbuf *b = (sbuf *)f;
    struct staged *s = x->st;
    if (f->kind == XF_RX) {
        if (err) {   /* a receive fails when the endpoint closes or a peer's connection broke */
            if (err != FI_ECANCELED) post_recv(x, b);
            return;
        }
        on_recv(x, b, len);
        return;
    }
    if (b->pool == P_RSP) {
        if (err) gshmemi_proxy_fail(x, GSHMEM_ERR_INTERNAL, "proxy: response to PE %d failed: %s", b->peer,
                                    gshmemi_fab_strerror(err));
        bq_push(&s->free_rsp, b);
        return;
    }
    bq_push(&s->free_req, b);
    if (!err) return;
    op_rec *r = rec_of(x, b->op_id);
    if (r) gshmemi_rec_fail(x, r, GSHMEM_ERR_TIMEOUT, true, "sending to PE %d failed: %s", b->peer,
                            gshmemi_fab_strerror(err));
}

int gshmemi_staged_progress(gshmemi_proxy *x) {
    struct staged *s = x->st;
    int work = 0;
    sbuf *b;
    work += finish_placed(x);   /* frees response buffers for deferred requests */
    while ((b = s->deferred.h) && serve(x, b)) {
        bq_pop(&s->deferred);
        work++;
    }
    work += send_requests(x);
    /* one attempt each per turn: what is refused again goes back to its queue */
    bq q = s->unsent;
    s->unsent = (bq){0};
    while ((b = bq_pop(&q))) {
        send_response(x, b);
        work++;
    }
    q = s->repost;
    s->repost = (bq){0};
    while ((b = bq_pop(&q))) {
        post_recv(x, b);
        work++;
    }
    return work;
}

bool gshmemi_staged_busy(const gshmemi_proxy *x) {
    const struct staged *s = x->st;
    if (s->deferred.h || s->unsent.h || s->repost.h || s->to_send.h || s->placing.h) return true;
    for (int pe = 0; pe < x->p.npes; pe++)
        if (s->credits[pe] != s->credits0 && !x->peer_dead[pe]) return true;
    return false;
}

static int bq_len(const bq *q) {
    int n = 0;
    for (const sbuf *b = q->h; b; b = b->next) n++;
    return n;
}

void gshmemi_staged_describe(const gshmemi_proxy *x, char *buf, size_t len) {
    const struct staged *s = x->st;
    size_t o = (size_t)snprintf(buf, len, "sent %llu, served %llu; to_send %d, placing %d, deferred %d, unsent %d; "
                                "memops done %llu; credits used:", (unsigned long long)s->n_sent,
                                (unsigned long long)s->n_placed, bq_len(&s->to_send), bq_len(&s->placing),
                                bq_len(&s->deferred), bq_len(&s->unsent),
                                (unsigned long long)(x->p.mem.done ? x->p.mem.done(x->p.mem.ctx) : 0));
    for (int pe = 0; pe < x->p.npes && o < len; pe++)
        if (s->credits[pe] != s->credits0)
            o += (size_t)snprintf(buf + o, len - o, " PE %d %d/%d", pe, s->credits0 - s->credits[pe], s->credits0);
}
