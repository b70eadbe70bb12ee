/* The staged mode's source side: a record becomes requests — its pieces of at most a chunk,
 * or its entry in the pack to its PE — that leave once their source bytes are copied out of
 * device memory (memops.copy_from), carrying the responses held for that PE; and the
 * responses to them end the records. docs/proxy.md, "The wire (staged mode)", says why packs
 * and carried responses keep each PE's operations in order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "staged_source.h"
#include "staged_state.h"
#include "trace.h"

static void bq_unpop(bq *q, sbuf *b) {   /* back at the front */
    b->next = q->h;
    q->h = b;
    if (!q->t) q->t = b;
}

/* An atomic whose previous value its caller wants (the others are answered without it, and the
 * target's memory queue may merge them). */
static bool amo_fetches(const gshmem_proxy_desc *d) {
    return d->op == GSHMEM_PROXY_OP_AMO && (d->amo == GSHMEM_PROXY_AMO_FETCH || d->amo == GSHMEM_PROXY_AMO_SWAP ||
                                            d->amo == GSHMEM_PROXY_AMO_CSWAP || (d->flags & GSHMEM_PROXY_F_FETCH));
}

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
    struct staged *s = STG(x);
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
    struct staged *s = STG(x);
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
    struct staged *s = STG(x);
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
        if (payload) b->t = memops_mark(x);
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

static void fail_sent(gshmemi_proxy *x, op_rec *r, void *arg) {
    const send_err *e = arg;
    gshmemi_rec_fail(x, r, e->status, true, "%s", e->what);
}

/* What follows a request: blocked (the provider refused it: the records' timeout message says
 * so), sent, or failed (e != NULL: the peer is then unreachable). A pack speaks for each of its
 * operations. */
void gshmemi_staged_request_state(gshmemi_proxy *x, sbuf *b, bool blocked, const send_err *e) {
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

/* The held responses to b's PE that fit go after b's bytes (b is then closed: nothing may be
 * packed behind them). */
static void carry_held(gshmemi_proxy *x, sbuf *b) {
    struct staged *s = STG(x);
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
    struct staged *s = STG(x);
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
        queue_request(x, b, pe, op_id_of(r), HDR + (size_t)payload, payload ? memops_mark(x) : 0);
        s->open[pe] = NULL;   /* later small operations to pe go after this request */
        r->posted += len ? len : 1;
        r->inflight++;
        r->t_last = gshmemi_proxy_now();
    }
    return 0;
}

int gshmemi_staged_send_requests(gshmemi_proxy *x) {
    struct staged *s = STG(x);
    int work = 0;
    /* memops_done() enqueues the pending ticket's write (a CUDA call): only when a request
     * waits for a copy, not before a pack of p's, g's and atomics (t 0) goes out */
    uint64_t t_done = 0;
    bool asked = false;
    sbuf *b;
    while ((b = s->to_send.h)) {
        if (b->t > t_done && !asked) {
            t_done = memops_done(x);
            asked = true;
        }
        if (b->t > t_done) break;
        if (s->n_held[b->peer] && !((smsg *)b->data)->carry) carry_held(x, b);
        gshmemi_ptrace(TR_SENDREQ_B, b->peer);
        ssize_t ret = fi_send(x->fab.ep, b->data, b->len, s->desc, (fi_addr_t)b->peer, &b->x.ctx);
        gshmemi_ptrace(TR_SENDREQ_E, (uint32_t)ret);
        if (ret == -FI_EAGAIN) {   /* manual progress: retried after the next CQ read */
            gshmemi_staged_request_state(x, b, true, NULL);
            break;
        }
        bq_pop(&s->to_send);
        if (s->open[b->peer] == b) s->open[b->peer] = NULL;   /* handed over: closed */
        work++;
        gshmemi_lat_add(&s->send_wait, gshmemi_proxy_now() - b->t_in);
        if (!ret) {
            gshmemi_staged_request_state(x, b, false, NULL);
            continue;
        }
        char what[128];
        snprintf(what, sizeof what, "fi_send: %s", gshmemi_fab_strerror((int)ret));
        gshmemi_staged_request_state(x, b, false, &(send_err){GSHMEM_ERR_INTERNAL, what});
        bq_push(&s->free_req, b);
        s->credits[b->peer]++;
    }
    return work;
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
    b->t = memops_mark(x);
    bq_push(&STG(x)->placing, b);
    return false;
}

bool gshmemi_staged_on_response(gshmemi_proxy *x, sbuf *b, const smsg *m, const uint8_t *payload, size_t len) {
    STG(x)->credits[m->src]++;
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
        b->t = memops_mark(x);
        bq_push(&STG(x)->placing, b);
        return false;
    }
    r->inflight--;
    gshmemi_rec_progressed(x, r);
    return true;
}

void gshmemi_staged_gets_placed(gshmemi_proxy *x, sbuf *b) {
    bool unused = false;
    walk_answers(x, (const smsg *)b->data, b->data + HDR, b->len - HDR, get_placed, &unused);
}

