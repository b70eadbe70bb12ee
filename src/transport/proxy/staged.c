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
 * chunks arrived in.
 *
 * Small operations travel packed: p, g, atomics, signals, and the puts and put_signals that fit
 * one message join the request to their PE that is still waiting to be sent (one credit, one
 * message, one packed response for up to PACK_MAX of them, as many bytes as a chunk). With one
 * credit per operation, 16 operations per round trip were all a peer could receive, whatever
 * their size: 16 atomics, or 16 KiB of 1 KiB puts. A pack is only ever the newest request to
 * its PE (a request queued after it closes it), so packing never moves an operation ahead of
 * one posted before it to the same PE. Gets, and puts larger than a chunk, go in requests of
 * their own, one per chunk.
 *
 * Carried responses: a response that holds nothing (an ACK, or a packed answer without get data)
 * may wait up to GSHMEM_PROXY_ACK_HOLD_US for a request to its PE, which then carries it (after
 * the request's own bytes; smsg.carry says where): in a ping-pong (p, put_signal, a flag back)
 * the reply request is posted by the GPU a few microseconds after the request's data landed,
 * and a response sent on its own then was a send call (3 us on tcp) the reply waited behind,
 * and a message more the other side had to read. Per PE, a response is held only while fewer
 * than half of that PE's credits are held, and only while holding pays: a score rises when a
 * request carried a held response and falls twice as fast when one waited in vain (then one
 * response in 32 is still held, to notice when traffic turns two-way). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy_impl.h"
#include "trace.h"

#define HDR 128   /* message header room; the payload starts 128-byte aligned */
enum { M_PUT = 1, M_GET, M_PACK, M_ACK, M_GETDATA, M_PACKACK, M_LAST = M_PACKACK };
enum { MF_SIGNAL = 1 };
enum { P_RX, P_REQ, P_RSP };

typedef struct smsg {
    uint8_t type, amo, flags, pad_;
    int32_t src;        /* sender's PE */
    int32_t status;     /* responses: 0 or GSHMEM_ERR_* */
    uint32_t carry;     /* requests: where carried responses start (0: none), each [u32 bytes][u32 0][response] */
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

/* One small operation of a packed request (M_PACK: smsg.len of them after the header); a
 * put's payload follows it, padded to 8 bytes. */
typedef struct sop {
    uint64_t op_id;     /* the source's record */
    uint64_t addr;      /* target symmetric address */
    uint64_t operand;   /* p: the inline value (little endian); atomics, signals: the operand;
                           put_signal: the signal's value */
    uint64_t compare;   /* compare-and-swap: the compare operand; put_signal: the signal word */
    uint32_t size;      /* bytes: 1..8 (p, g), 4|8 (atomics), 8 (signals), the payload (puts) */
    uint8_t op;         /* GSHMEM_PROXY_OP_P, _G, _AMO, _SIGNAL, _PUT, _PUT_SIGNAL */
    uint8_t amo;        /* GSHMEM_PROXY_AMO_* or GSHMEM_PROXY_SIG_* */
    uint8_t fetch;      /* atomics: the previous value is wanted */
    uint8_t pad_;
} sop;

/* Its answer (M_PACKACK: smsg.len of them after the header, in the request's order); a get's
 * bytes follow its answer, padded to 8 bytes. */
typedef struct sans {
    uint64_t op_id;
    uint64_t value;     /* g: the bytes read (zero-extended); atomics: the previous value */
    int32_t status;     /* 0 or GSHMEM_ERR_* */
    uint32_t len;       /* bytes that follow (a get's data) */
} sans;

/* Operations per pack: a request of 256 atomics is 10 KiB and its answer 6 KiB, under ofi_rxm's
 * eager size (16 KiB), and one batch kernel applies 256 atomics. */
#define PACK_MAX 256

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

#define LAT_BINS 48   /* half octaves from 0.125 us: up to about 2 s */
typedef struct lat_stat {
    double sum, max;
    uint64_t n;
    uint32_t bin[LAT_BINS];
} lat_stat;

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

/* ---- time split ------------------------------------------------------------------------------
 * A mean alone misleads: a few stalls of milliseconds (a first contact, a busy GPU) among
 * thousands of 10-us requests double it. So each interval also goes into a histogram of
 * half-octave bins from 0.125 us, from which the median and the 99th percentile are read (as
 * their bin's upper edge: within 41 %). */
static void lat_add(lat_stat *l, double secs) {
    l->sum += secs;
    l->n++;
    if (secs > l->max) l->max = secs;
    double u = secs * 1e6 / 0.125;
    int k = 0;
    while (k < LAT_BINS - 1 && u >= 1.4142135623730951) {
        u /= 1.4142135623730951;
        k++;
    }
    l->bin[k]++;
}

/* The upper edge in us of the bin holding quantile q (0..1) of what was added. */
static double lat_quantile(const lat_stat *l, double q) {
    uint64_t want = (uint64_t)(q * (double)l->n), seen = 0;
    double edge = 0.125 * 1.4142135623730951;
    for (int k = 0; k < LAT_BINS; k++, edge *= 1.4142135623730951) {
        seen += l->bin[k];
        if (seen > want) return edge < 1e6 * l->max ? edge : 1e6 * l->max;
    }
    return 1e6 * l->max;
}

/* "mean M us, median <= A, p99 <= B (max X)" */
static void lat_say(const lat_stat *l, char *buf, size_t len) {
    snprintf(buf, len, "mean %.2f us, median <= %.2f, p99 <= %.1f (max %.1f)",
             l->n ? 1e6 * l->sum / (double)l->n : 0.0, lat_quantile(l, 0.5), lat_quantile(l, 0.99), 1e6 * l->max);
}

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
    if (s->chunk < 1024) s->chunk = 1024;   /* a pack holds a few small operations */
    s->bufsz = HDR + s->chunk;
    s->pack_put = (s->chunk - sizeof(sop)) & ~(size_t)7;   /* a put that fits one message alone */
    s->pack_get = (s->chunk - sizeof(sans)) & ~(size_t)7;   /* a get whose answer does */
    s->pack_max = (unsigned)(s->chunk / sizeof(sop));
    if (s->pack_max > PACK_MAX) s->pack_max = PACK_MAX;
    s->credits0 = (int)(gshmemi_cfg.PROXY_STAGING / s->chunk);
    if (s->credits0 < 1) s->credits0 = 1;
    size_t per_pool = (size_t)n * (size_t)s->credits0;   /* receive: 2x, requests, responses */
    s->n_bufs = 4 * per_pool;
    s->bufs = calloc(s->n_bufs, sizeof *s->bufs);
    s->credits = calloc((size_t)n, sizeof *s->credits);
    s->open = calloc((size_t)n, sizeof *s->open);
    s->n_held = calloc((size_t)n, sizeof *s->n_held);
    s->pb_score = calloc((size_t)n, sizeof *s->pb_score);
    s->hold = gshmemi_cfg.PROXY_ACK_HOLD_US > 0 ? gshmemi_cfg.PROXY_ACK_HOLD_US * 1e-6 : 0;
    for (int pe = 0; pe < n && s->pb_score; pe++) s->pb_score[pe] = 2;
    if (!s->bufs || !s->credits || !s->open || !s->n_held || !s->pb_score ||
        posix_memalign((void **)&s->slab, 4096, s->n_bufs * s->bufsz))
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
    if (s->send_wait.n || s->place.n) {
        char a[128], b[128];
        lat_say(&s->send_wait, a, sizeof a);
        lat_say(&s->place, b, sizeof b);
        gshmemi_info("proxy: %llu requests sent, queued -> provider %s; %llu requests served, received -> placed "
                     "in GPU memory %s; %llu responses carried by requests, %llu held in vain",
                     (unsigned long long)s->send_wait.n, a, (unsigned long long)s->place.n, b,
                     (unsigned long long)s->n_carried, (unsigned long long)s->n_expired);
    }
    if (x->p.mem.flush) x->p.mem.flush(x->p.mem.ctx);   /* nothing may still copy from/to the slab */
    if (s->slab && x->p.mem.unpin) x->p.mem.unpin(x->p.mem.ctx, s->slab);
    free(s->slab);
    free(s->bufs);
    free(s->credits);
    free(s->open);
    free(s->n_held);
    free(s->pb_score);
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

/* An atomic whose previous value its caller wants (the others are answered without it, and the
 * target's memory queue may merge them). */
static bool amo_fetches(const gshmem_proxy_desc *d) {
    return d->op == GSHMEM_PROXY_OP_AMO && (d->amo == GSHMEM_PROXY_AMO_FETCH || d->amo == GSHMEM_PROXY_AMO_SWAP ||
                                            d->amo == GSHMEM_PROXY_AMO_CSWAP || (d->flags & GSHMEM_PROXY_F_FETCH));
}

static bool has_payload(int op) { return op == GSHMEM_PROXY_OP_PUT || op == GSHMEM_PROXY_OP_PUT_SIGNAL; }
static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

/* p, g, atomics, signals and the puts that fit one message travel packed; gets and larger puts
 * in requests of their own (chunks). */
static bool is_small(const struct staged *s, const gshmem_proxy_desc *d) {
    if (d->op == GSHMEM_PROXY_OP_GET) return d->size <= s->pack_get;
    return !has_payload(d->op) || d->size <= s->pack_put;
}

/* The bytes of an operation's answer in a packed response. */
static size_t answer_size(int op, uint64_t size) {
    return sizeof(sans) + (op == GSHMEM_PROXY_OP_GET ? pad8(size) : 0);
}

/* Fills the request for r's next piece of a put or get (len bytes at offset off); returns its
 * payload size, or -1 when copying the source failed (r failed). */
static long build_request(gshmemi_proxy *x, op_rec *r, sbuf *b, uint64_t off, uint64_t len) {
    const gshmem_proxy_desc *d = &r->d;
    smsg *m = (smsg *)b->data;
    memset(m, 0, sizeof *m);
    m->src = x->p.mype;
    m->op_id = op_id_of(r);
    m->addr = d->raddr + off;
    m->len = len;
    m->off = off;
    if (d->op == GSHMEM_PROXY_OP_GET) {
        m->type = M_GET;
        return 0;
    }
    m->type = M_PUT;
    if (d->op == GSHMEM_PROXY_OP_PUT_SIGNAL) {
        m->flags = MF_SIGNAL;
        m->amo = d->amo;
        m->total = d->size;
        m->sig_addr = d->sig_addr;
        m->sig_value = d->sig_value;
    }
    int st = len ? x->p.mem.copy_from(x->p.mem.ctx, b->data + HDR, (const void *)(uintptr_t)(d->laddr + off), len) : 0;
    if (st) {
        gshmemi_rec_fail(x, r, st, false, "copy_from(%#llx, %llu bytes) of its source failed",
                         (unsigned long long)(d->laddr + off), (unsigned long long)len);
        return -1;
    }
    return (long)len;
}

/* A request buffer queued to pe (one credit): it goes out once the memops pass b->t. */
static void queue_request(gshmemi_proxy *x, sbuf *b, int pe, uint64_t op_id, size_t len, uint64_t t) {
    struct staged *s = x->st;
    b->x.kind = XF_TX;
    b->op_id = op_id;
    b->peer = pe;
    b->len = len;
    b->t = t;
    b->t_in = gshmemi_proxy_now();
    bq_push(&s->to_send, b);
    s->credits[pe]--;
}

/* A new, empty pack to pe; NULL without a credit or a buffer. */
static sbuf *open_pack(gshmemi_proxy *x, int pe) {
    struct staged *s = x->st;
    sbuf *b = s->credits[pe] > 0 ? bq_pop(&s->free_req) : NULL;
    if (!b) return NULL;
    smsg *m = (smsg *)b->data;
    memset(m, 0, sizeof *m);
    m->type = M_PACK;
    m->src = x->p.mype;
    b->n_ops = b->used = b->ans = 0;
    b->blocked = false;
    queue_request(x, b, pe, 0, HDR, 0);
    s->open[pe] = b;
    return b;
}

/* r (a small operation) joins the open pack to its PE, or a new one. A put's source bytes are
 * copied into the pack, which then waits for that copy (marks only grow). */
static int pump_small(gshmemi_proxy *x, op_rec *r) {
    struct staged *s = x->st;
    const gshmem_proxy_desc *d = &r->d;
    size_t payload = has_payload(d->op) ? d->size : 0, need = sizeof(sop) + pad8(payload);
    size_t ans = answer_size(d->op, d->size);
    sbuf *b = s->open[d->pe];
    if (!b || b->n_ops == s->pack_max || HDR + b->used + need > s->bufsz || b->ans + ans > s->chunk)
        b = open_pack(x, d->pe);
    if (!b) return -FI_EAGAIN;   /* a response will give a credit back */
    sop *o = (sop *)(b->data + HDR + b->used);
    *o = (sop){.op_id = op_id_of(r), .addr = d->raddr, .operand = d->laddr, .compare = d->compare,
               .size = (uint32_t)d->size, .op = d->op, .amo = d->amo, .fetch = amo_fetches(d)};
    if (has_payload(d->op)) {
        o->operand = d->sig_value;
        o->compare = d->sig_addr;
        int st = payload ? x->p.mem.copy_from(x->p.mem.ctx, o + 1, (const void *)(uintptr_t)d->laddr, payload) : 0;
        if (st) {
            gshmemi_rec_fail(x, r, st, false, "copy_from(%#llx, %zu bytes) of its source failed",
                             (unsigned long long)d->laddr, payload);
            return -FI_EIO;
        }
        if (payload) b->t = mark(x);
    }
    b->used += (uint32_t)need;
    b->ans += (uint32_t)ans;
    b->n_ops++;
    b->len = HDR + b->used;
    ((smsg *)b->data)->len = b->n_ops;
    r->posted = 1;
    r->inflight = 1;
    r->t_last = gshmemi_proxy_now();
    return 0;
}

/* Calls fn on every record of the small operations in pack b that is still active. */
static void pack_records(gshmemi_proxy *x, const sbuf *b, void (*fn)(gshmemi_proxy *, op_rec *, void *), void *arg) {
    size_t off = 0;
    for (uint32_t i = 0; i < b->n_ops; i++) {
        const sop *o = (const sop *)(b->data + HDR + off);
        off += sizeof(sop) + (has_payload(o->op) ? pad8(o->size) : 0);
        op_rec *r = rec_of(x, o->op_id);
        if (r) fn(x, r, arg);
    }
}

static void set_blocked(gshmemi_proxy *x, op_rec *r, void *on) {
    (void)x;
    r->blocked = on != NULL;
}

typedef struct send_err {
    int status;
    const char *what;   /* "fi_send: Connection reset" */
} send_err;

static void fail_sent(gshmemi_proxy *x, op_rec *r, void *arg) {
    const send_err *e = arg;
    gshmemi_rec_fail(x, r, e->status, true, "%s", e->what);
}

/* What follows a request: blocked (the provider refused it: the records' timeout message says
 * so), sent, or failed (e != NULL: the peer is then unreachable). A pack speaks for each of its
 * operations. */
static void request_state(gshmemi_proxy *x, sbuf *b, bool blocked, const send_err *e) {
    if (((const smsg *)b->data)->type != M_PACK) {
        op_rec *r = rec_of(x, b->op_id);
        if (r && e) fail_sent(x, r, (void *)e);
        else if (r) r->blocked = blocked;
        return;
    }
    if (e) pack_records(x, b, fail_sent, (void *)e);
    else if (blocked != b->blocked) pack_records(x, b, set_blocked, blocked ? (void *)1 : NULL);
    b->blocked = blocked;
}

static int send_requests(gshmemi_proxy *x);
int gshmemi_staged_send(gshmemi_proxy *x) { return send_requests(x); }

/* The held responses to b's PE that fit go after b's bytes (b is then closed: nothing may be
 * packed behind them). */
static void carry(gshmemi_proxy *x, sbuf *b) {
    struct staged *s = x->st;
    smsg *m = (smsg *)b->data;
    size_t off = pad8(b->len);
    sbuf *prev = NULL, *o = s->held.h;
    while (o) {
        sbuf *next = o->next;
        if (o->peer != b->peer || off + 8 + o->len > s->bufsz) {
            prev = o;
            o = next;
            continue;
        }
        if (!m->carry) m->carry = (uint32_t)off;
        uint32_t *h = (uint32_t *)(b->data + off);
        h[0] = (uint32_t)o->len;
        h[1] = 0;
        memcpy(b->data + off + 8, o->data, o->len);
        off += 8 + pad8(o->len);
        if (prev) prev->next = next;
        else s->held.h = next;
        if (s->held.t == o) s->held.t = prev;
        s->n_held[b->peer]--;
        if (s->pb_score[b->peer] < 8) s->pb_score[b->peer]++;
        __atomic_store_n(&s->n_carried, s->n_carried + 1, __ATOMIC_RELAXED);   /* read by other threads */
        bq_push(&s->free_rsp, o);
        o = next;
    }
    if (!m->carry) return;
    b->len = off;
    if (s->open[b->peer] == b) s->open[b->peer] = NULL;
}

/* Posts what it can of r (the pump pass then hands the requests to the provider). */
int gshmemi_staged_pump(gshmemi_proxy *x, op_rec *r) {
    struct staged *s = x->st;
    const gshmem_proxy_desc *d = &r->d;
    int pe = d->pe;
    if (is_small(s, d)) return r->posted ? 0 : pump_small(x, r);
    uint64_t goal = d->size ? d->size : 1;   /* an empty put_signal still signals */
    while (r->posted < goal) {
        sbuf *b = s->credits[pe] > 0 ? bq_pop(&s->free_req) : NULL;
        if (!b) return -FI_EAGAIN;   /* a response will give one back */
        uint64_t len = d->size - r->posted < s->chunk ? d->size - r->posted : s->chunk;
        long payload = build_request(x, r, b, r->posted, len);
        if (payload < 0) {
            bq_unpop(&s->free_req, b);
            return -FI_EIO;
        }
        /* a put's source bytes are in b once the memops pass this mark; a get waits for
         * nothing (behind a queued put, it still goes in order) */
        queue_request(x, b, pe, op_id_of(r), HDR + (size_t)payload, payload ? mark(x) : 0);
        s->open[pe] = NULL;   /* later small operations to pe go after this request */
        r->posted += len ? len : 1;
        r->inflight++;
        r->t_last = gshmemi_proxy_now();
    }
    return 0;
}

static int finish_placed(gshmemi_proxy *x);

/* Sends the requests whose source copies are done, in order. */
static int send_requests(gshmemi_proxy *x) {
    struct staged *s = x->st;
    int work = 0;
    /* responses whose placement just finished join the held ones first, so the requests about
     * to go can carry them: in a ping-pong the GPU posts its reply as soon as it sees the
     * request's data, often before this turn's look at the memory queue */
    if (s->to_send.h && s->placing.h) work += finish_placed(x);
    /* done() enqueues the pending ticket's write (a CUDA call): only when a request waits for
     * a copy, not before a pack of p's, g's and atomics (t 0) goes out */
    uint64_t t_done = 0;
    bool asked = false;
    sbuf *b;
    while ((b = s->to_send.h)) {
        if (b->t > t_done && !asked) {
            t_done = done(x);
            asked = true;
        }
        if (b->t > t_done) break;
        if (s->n_held[b->peer] && !((smsg *)b->data)->carry) carry(x, b);
        gshmemi_ptrace(TR_SENDREQ_B, b->peer);
        ssize_t ret = fi_send(x->fab.ep, b->data, b->len, s->desc, (fi_addr_t)b->peer, &b->x.ctx);
        gshmemi_ptrace(TR_SENDREQ_E, (uint32_t)ret);
        if (ret == -FI_EAGAIN) {   /* manual progress: retried after the next CQ read */
            request_state(x, b, true, NULL);
            break;
        }
        bq_pop(&s->to_send);
        if (s->open[b->peer] == b) s->open[b->peer] = NULL;   /* handed over: closed */
        work++;
        lat_add(&s->send_wait, gshmemi_proxy_now() - b->t_in);
        if (!ret) {
            request_state(x, b, false, NULL);
            continue;
        }
        char what[128];
        snprintf(what, sizeof what, "fi_send: %s", gshmemi_fab_strerror((int)ret));
        request_state(x, b, false, &(send_err){GSHMEM_ERR_INTERNAL, what});
        bq_push(&s->free_req, b);
        s->credits[b->peer]++;
    }
    return work;
}

void gshmemi_staged_stage_done(gshmemi_proxy *x, op_rec *r) {
    gshmemi_rec_complete(x, r, 0);   /* a get's pieces progressed once their data was placed */
}

/* One answer of a packed response: the small operation it belongs to ends, except a get's,
 * whose data is copied into its destination first (true: the receive buffer is kept until the
 * copy is done, and finish_placed ends it). */
static bool on_answer(gshmemi_proxy *x, int src, const sans *a) {
    op_rec *r = rec_of(x, a->op_id);
    if (!r || r->inflight != 1) return false;   /* failed already (timeout), or not ours */
    r->t_last = gshmemi_proxy_now();
    if (a->status) {
        r->inflight = 0;
        gshmemi_rec_fail(x, r, a->status, false, "PE %d answered: %s", src, gshmemi_status_str(a->status));
        return false;
    }
    if (r->d.op == GSHMEM_PROXY_OP_GET) {
        int st = a->len != r->d.size ? GSHMEM_ERR_INTERNAL
                 : x->p.mem.copy_to(x->p.mem.ctx, (void *)(uintptr_t)r->d.laddr, a + 1, a->len);
        if (!st) return true;
        r->inflight = 0;
        gshmemi_rec_fail(x, r, st, st == GSHMEM_ERR_INTERNAL, "%s", st == GSHMEM_ERR_INTERNAL
                         ? "a malformed answer (data of another size)" : "copy_to into its destination failed");
        return false;
    }
    r->inflight = 0;
    if (r->d.op == GSHMEM_PROXY_OP_G) r->result = a->value;
    if (r->d.op == GSHMEM_PROXY_OP_AMO) r->result = r->d.size == 4 ? a->value & 0xffffffffull : a->value;
    gshmemi_rec_progressed(x, r);
    return false;
}

typedef void (*answer_fn)(gshmemi_proxy *x, int src, const sans *a, bool *keep);

/* Calls fn on each answer of a packed response (payload, len bytes), stopping at one that
 * overruns the message; returns how many were walked. */
static uint64_t walk_answers(gshmemi_proxy *x, const smsg *m, const uint8_t *payload, size_t len, answer_fn fn,
                             bool *keep) {
    size_t off = 0;
    uint64_t i = 0;
    for (; i < m->len && len - off >= sizeof(sans); i++) {
        const sans *a = (const sans *)(payload + off);
        if (pad8(a->len) > len - off - sizeof(sans)) break;
        fn(x, m->src, a, keep);
        off += sizeof(sans) + pad8(a->len);
    }
    return i;
}

static void answer_one(gshmemi_proxy *x, int src, const sans *a, bool *keep) {
    if (on_answer(x, src, a)) *keep = true;
}

/* finish_placed: the gets of a packed response have their data in place. */
static void get_placed(gshmemi_proxy *x, int src, const sans *a, bool *keep) {
    (void)src, (void)keep;
    op_rec *r = rec_of(x, a->op_id);
    if (!r || r->d.op != GSHMEM_PROXY_OP_GET || r->inflight != 1 || a->status) return;
    r->inflight = 0;
    r->t_last = gshmemi_proxy_now();
    gshmemi_rec_progressed(x, r);
}

/* Returns false when it keeps the receive buffer b (gets' data being copied out of it). */
static bool on_pack_answers(gshmemi_proxy *x, sbuf *b, const smsg *m, const uint8_t *payload, size_t len) {
    bool keep = false;
    uint64_t n = walk_answers(x, m, payload, len, answer_one, &keep);
    if (n < m->len)   /* the records left time out, naming the PE */
        gshmemi_warn("proxy: PE %d sent a malformed packed answer (%llu of %llu answers in %zu bytes)", m->src,
                     (unsigned long long)n, (unsigned long long)m->len, len);
    if (!keep) return true;
    b->len = HDR + len;   /* walked again once the copies are done */
    b->t = mark(x);
    bq_push(&x->st->placing, b);
    return false;
}

/* Handles an answer to one of our requests; false when it keeps the receive buffer b (a get's
 * data being copied into its destination: `placing` posts it again). */
static bool on_response(gshmemi_proxy *x, sbuf *b, const smsg *m, const uint8_t *payload, size_t len) {
    x->st->credits[m->src]++;
    if (m->type == M_PACKACK) return on_pack_answers(x, b, m, payload, len);
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
    if (d->op == GSHMEM_PROXY_OP_GET) {
        if (m->type != M_GETDATA || m->len > len || m->off + m->len > d->size) {
            r->inflight--;
            gshmemi_rec_fail(x, r, GSHMEM_ERR_INTERNAL, true, "PE %d sent a malformed answer", m->src);
            return true;
        }
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

static bool word_ok(const gshmemi_proxy *x, uint64_t addr, uint64_t size) {
    return (size == 4 || size == 8) && !(addr & (size - 1)) && gshmemi_heap_range(x, addr, size);
}

static int signal_op(gshmemi_proxy *x, uint64_t addr, int sig_op, uint64_t value) {
    /* queued after the copies before it: that data lands before this signal */
    return x->p.mem.signal(x->p.mem.ctx, (uint64_t *)(uintptr_t)addr, sig_op, value);
}

/* One small operation of a pack (payload: a put's bytes, in the receive buffer until the
 * response went out); a g's bytes and an atomic's previous value go to *value once the
 * memops pass the response's mark. */
static int apply_small(gshmemi_proxy *x, const sop *o, const uint8_t *payload, sans *ans, size_t room) {
    void *a = (void *)(uintptr_t)o->addr;
    uint64_t *value = &ans->value;
    switch (o->op) {
    case GSHMEM_PROXY_OP_GET:   /* the data follows the answer */
        if (pad8(o->size) > room || !gshmemi_heap_range(x, o->addr, o->size)) return GSHMEM_ERR_INVALID_ARG;
        ans->len = o->size;
        return o->size ? x->p.mem.copy_from(x->p.mem.ctx, ans + 1, a, o->size) : 0;
    case GSHMEM_PROXY_OP_P:
    case GSHMEM_PROXY_OP_G:
        if (o->size < 1 || o->size > 8 || !gshmemi_heap_range(x, o->addr, o->size)) return GSHMEM_ERR_INVALID_ARG;
        /* an aligned 8-byte p is the memops' 64-bit store (a stream write on the GPU: no copy
         * to set up, the shorter way into GPU memory), in queue order like the copy it saves */
        if (o->op == GSHMEM_PROXY_OP_P && o->size == 8 && !(o->addr & 7))
            return x->p.mem.signal(x->p.mem.ctx, (uint64_t *)a, GSHMEM_SIGNAL_SET, o->operand);
        return o->op == GSHMEM_PROXY_OP_P ? x->p.mem.copy_to(x->p.mem.ctx, a, &o->operand, o->size)
                                          : x->p.mem.copy_from(x->p.mem.ctx, value, a, o->size);
    case GSHMEM_PROXY_OP_AMO:
        if (!word_ok(x, o->addr, o->size) || o->amo >= GSHMEM_PROXY_AMO_COUNT) return GSHMEM_ERR_INVALID_ARG;
        return x->p.mem.atomic(x->p.mem.ctx, a, o->amo, o->size, o->operand, o->compare, o->fetch ? value : NULL);
    case GSHMEM_PROXY_OP_SIGNAL:
        if (!word_ok(x, o->addr, 8) || o->amo > GSHMEM_PROXY_SIG_ADD) return GSHMEM_ERR_INVALID_ARG;
        return signal_op(x, o->addr, o->amo, o->operand);
    case GSHMEM_PROXY_OP_PUT:
    case GSHMEM_PROXY_OP_PUT_SIGNAL: {
        bool sig = o->op == GSHMEM_PROXY_OP_PUT_SIGNAL;
        if (!gshmemi_heap_range(x, o->addr, o->size) ||
            (sig && (!word_ok(x, o->compare, 8) || o->amo > GSHMEM_PROXY_SIG_ADD)))
            return GSHMEM_ERR_INVALID_ARG;
        int st = o->size ? x->p.mem.copy_to(x->p.mem.ctx, a, payload, o->size) : 0;
        return st || !sig ? st : signal_op(x, o->compare, o->amo, o->operand);
    }
    default:
        return GSHMEM_ERR_INVALID_ARG;
    }
}

/* The operations of a pack (in: its entries, len bytes), each answered in order into out (room
 * bytes); returns the answers' bytes and their number in *n. An entry that overruns the
 * message, or an answer the buffer cannot hold, ends the walk (its source's records time out,
 * naming this PE). */
static size_t serve_pack(gshmemi_proxy *x, const smsg *m, const uint8_t *in, size_t len, uint8_t *out, size_t room,
                         uint64_t *n, bool *gets) {
    size_t off = 0, aoff = 0;
    for (*n = 0; *n < m->len && *n < x->st->pack_max && len - off >= sizeof(sop) && room - aoff >= sizeof(sans);
         ++*n) {
        const sop *o = (const sop *)(in + off);
        size_t payload = has_payload(o->op) ? o->size : 0;
        if (payload > len - off - sizeof(sop)) break;
        sans *a = (sans *)(out + aoff);
        *a = (sans){.op_id = o->op_id};
        if (o->op == GSHMEM_PROXY_OP_GET) *gets = true;
        a->status = apply_small(x, o, (const uint8_t *)(o + 1), a, room - aoff - sizeof(sans));
        if (a->status) a->len = 0;
        off += sizeof(sop) + pad8(payload);
        aoff += sizeof(sans) + pad8(a->len);
    }
    if (*n < m->len) gshmemi_warn("proxy: PE %d sent a malformed pack: %llu of %llu operations served", m->src,
                                  (unsigned long long)*n, (unsigned long long)m->len);
    return aoff;
}

/* Atomics (and signals, which may be adds) a request brings to the memory queue: it is served
 * only when they fit (memops.room), so the queue never has to wait for the device. */
static unsigned atomics_of(const struct staged *s, const smsg *m) {
    if (m->type == M_PUT) return (m->flags & MF_SIGNAL) != 0;
    return m->type == M_PACK ? (unsigned)(m->len < s->pack_max ? m->len : s->pack_max) : 0;
}

static void send_response(gshmemi_proxy *x, sbuf *o) {
    gshmemi_ptrace(TR_SENDRSP_B, o->peer);
    ssize_t ret = fi_send(x->fab.ep, o->data, o->len, x->st->desc, (fi_addr_t)o->peer, &o->x.ctx);
    gshmemi_ptrace(TR_SENDRSP_E, (uint32_t)ret);
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

/* Held responses to pe (all of them when pe < 0) that waited `hold` (all when force) go out on
 * their own, in the order they were held. */
static int send_held(gshmemi_proxy *x, int pe, bool force) {
    struct staged *s = x->st;
    double now = force ? 0 : gshmemi_proxy_now();
    int work = 0;
    sbuf *prev = NULL, *o = s->held.h;
    while (o) {
        sbuf *next = o->next;
        if (!force && now - o->t_in < s->hold) break;   /* held in time order */
        if (pe >= 0 && o->peer != pe) {
            prev = o;
            o = next;
            continue;
        }
        if (prev) prev->next = next;
        else s->held.h = next;
        if (s->held.t == o) s->held.t = prev;
        s->n_held[o->peer]--;
        if (!force) {
            s->pb_score[o->peer] = s->pb_score[o->peer] > 2 ? (int8_t)(s->pb_score[o->peer] - 2) : 0;
            s->n_expired++;
        }
        send_response(x, o);
        work++;
        o = next;
    }
    return work;
}

/* A response whose memory operations are done: held for a request to carry it, or sent. */
static void release_response(gshmemi_proxy *x, sbuf *o) {
    struct staged *s = x->st;
    int pe = o->peer;
    bool holdable = s->hold > 0 && !o->holds_get && o->len + 8 <= 8192 &&
                    2 * (s->n_held[pe] + 1) <= s->credits0 + 1;
    if (holdable && (s->pb_score[pe] > 0 || (++s->pb_probe & 31) == 0)) {
        o->t_in = gshmemi_proxy_now();
        bq_push(&s->held, o);
        s->n_held[pe]++;
        return;
    }
    if (s->n_held[pe]) send_held(x, pe, true);   /* responses to a PE go in order */
    send_response(x, o);
}

/* Responses a request carried (b's bytes from off to len): taken as if they came alone. Only
 * ACKs and packed answers without gets' data are ever carried (none keeps the buffer). */
static void take_carried(gshmemi_proxy *x, sbuf *b, int src, size_t off, size_t len) {
    while (off + 8 <= len) {
        uint32_t rl = *(const uint32_t *)(b->data + off);
        const smsg *r = (const smsg *)(b->data + off + 8);
        bool ok = rl >= HDR && rl <= len - off - 8 && r->src == src &&
                  (r->type == M_ACK || (r->type == M_PACKACK && rl == HDR + r->len * sizeof(sans)));
        for (uint64_t i = 0; ok && r->type == M_PACKACK && i < r->len; i++) {
            const op_rec *q = rec_of(x, ((const sans *)((const uint8_t *)r + HDR))[i].op_id);
            ok = !q || q->d.op != GSHMEM_PROXY_OP_GET;
        }
        if (!ok) {
            gshmemi_warn("proxy: PE %d sent a malformed carried response (%u bytes at %zu of %zu)", src, rl, off, len);
            return;
        }
        on_response(x, b, r, (const uint8_t *)r + HDR, rl - HDR);
        off += 8 + pad8(rl);
    }
}

/* Starts the request in b; its response goes out (and b is posted again) once the memory
 * operations are done (`placing`). False if no response buffer is free. */
static bool serve(gshmemi_proxy *x, sbuf *b) {
    struct staged *s = x->st;
    const smsg *m = (const smsg *)b->data;
    if (x->p.mem.room && x->p.mem.room(x->p.mem.ctx) < atomics_of(s, m)) return false;
    sbuf *o = bq_pop(&s->free_rsp);
    if (!o) return false;
    smsg *a = (smsg *)o->data;
    memset(a, 0, sizeof *a);
    a->type = M_ACK;
    a->src = x->p.mype;
    a->op_id = m->op_id;
    a->off = m->off;
    size_t payload = 0;
    bool gets = m->type == M_GET;
    int st;
    switch (m->type) {
    case M_PUT:   /* a header that claims more bytes than came is refused */
        st = m->len > b->len - HDR ? GSHMEM_ERR_INVALID_ARG : place_put(x, m, b->data + HDR);
        break;
    case M_GET:
        st = m->len > s->chunk || !gshmemi_heap_range(x, m->addr, m->len) ? GSHMEM_ERR_INVALID_ARG
             : x->p.mem.copy_from(x->p.mem.ctx, o->data + HDR, (const void *)(uintptr_t)m->addr, m->len);
        a->type = M_GETDATA;
        a->len = st ? 0 : m->len;
        payload = a->len;
        break;
    default:   /* M_PACK */
        a->type = M_PACKACK;
        payload = serve_pack(x, m, b->data + HDR, b->len - HDR, o->data + HDR, s->chunk, &a->len, &gets);
        st = 0;
        break;
    }
    a->status = st;
    o->x.kind = XF_TX;
    o->peer = m->src;
    o->len = HDR + payload;
    o->req = b;
    o->holds_get = gets;
    o->t = mark(x);   /* an atomic's old value is in its answer once the memops pass this */
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
            lat_add(&s->place, gshmemi_proxy_now() - b->req->t_in);
            gshmemi_ptrace(TR_PLACED, 0);
            post_recv(x, b->req);
            release_response(x, b);
            continue;
        }
        const smsg *m = (const smsg *)b->data;
        if (m->type == M_PACKACK) {   /* its gets' data are in their destinations */
            bool unused = false;
            walk_answers(x, m, b->data + HDR, b->len - HDR, get_placed, &unused);
            post_recv(x, b);
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
    if (len < sizeof *m || m->src < 0 || m->src >= x->p.npes || !m->type || m->type > M_LAST) {
        gshmemi_warn("proxy: dropped a malformed message of %zu bytes (claims PE %d)", len, len >= 8 ? m->src : -1);
        post_recv(x, b);
        return;
    }
    gshmemi_ptrace(m->type >= M_ACK ? TR_RSP_RECV : TR_RECV, m->type);
    if (m->type == M_ACK || m->type == M_GETDATA || m->type == M_PACKACK) {
        if (on_response(x, b, m, b->data + HDR, len > HDR ? len - HDR : 0)) post_recv(x, b);
        return;
    }
    if (len < HDR) {
        gshmemi_warn("proxy: dropped a request of %zu bytes from PE %d (shorter than its header)", len, m->src);
        post_recv(x, b);
        return;
    }
    if (m->carry) {   /* the responses it carries first: they answer older requests */
        if (m->carry < HDR || (m->carry & 7) || m->carry > len) {
            gshmemi_warn("proxy: dropped a request from PE %d with carried responses at %u of %zu bytes", m->src,
                         m->carry, len);
            post_recv(x, b);
            return;
        }
        take_carried(x, b, m->src, m->carry, len);
        len = m->carry;
    }
    b->len = len;   /* a request's payload is read within it */
    b->t_in = gshmemi_proxy_now();
    if (x->st->deferred.h || !serve(x, b)) bq_push(&x->st->deferred, b);   /* keep arrival order */
    gshmemi_ptrace(TR_SERVE_E, 0);
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
    if (err) {
        char what[128];
        snprintf(what, sizeof what, "sending to PE %d failed: %s", b->peer, gshmemi_fab_strerror(err));
        request_state(x, b, false, &(send_err){GSHMEM_ERR_TIMEOUT, what});
    }
    bq_push(&s->free_req, b);
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
    if (s->held.h) work += send_held(x, -1, false);
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

uint64_t gshmemi_staged_carried(const gshmemi_proxy *x) {
    return __atomic_load_n(&x->st->n_carried, __ATOMIC_RELAXED);
}

bool gshmemi_staged_busy(const gshmemi_proxy *x) {
    const struct staged *s = x->st;
    if (s->deferred.h || s->unsent.h || s->repost.h || s->to_send.h || s->placing.h || s->held.h) return true;
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
    size_t o = (size_t)snprintf(buf, len, "sent %llu, served %llu; to_send %d, placing %d, deferred %d, unsent %d, "
                                "held %d; memops done %llu; credits used:", (unsigned long long)s->send_wait.n,
                                (unsigned long long)s->place.n, bq_len(&s->to_send), bq_len(&s->placing),
                                bq_len(&s->deferred), bq_len(&s->unsent), bq_len(&s->held),
                                (unsigned long long)(x->p.mem.done ? x->p.mem.done(x->p.mem.ctx) : 0));
    for (int pe = 0; pe < x->p.npes && o < len; pe++)
        if (s->credits[pe] != s->credits0)
            o += (size_t)snprintf(buf + o, len - o, " PE %d %d/%d", pe, s->credits0 - s->credits[pe], s->credits0);
}
