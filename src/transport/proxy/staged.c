/* Staged mode: heap memory the provider cannot reach (GPU memory without FI_HMEM) moves as
 * messages through registered host buffers on both sides. This file sets the mode up and
 * dispatches what arrives: responses to the source side (staged_source.c), requests to the
 * target side (staged_target.c); the buffers, queues and state the three share are
 * staged_state.h. The protocol — messages, credits, packs, carried responses, and why every
 * operation to a PE lands in order — is docs/proxy.md, "The wire (staged mode)". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "staged_source.h"
#include "staged_state.h"
#include "staged_target.h"
#include "trace.h"

static void post_recv(gshmemi_proxy *x, sbuf *b) {
    struct staged *s = STG(x);
    b->x.kind = XF_RX;
    ssize_t ret = fi_recv(x->fab.ep, b->data, s->bufsz, s->desc, FI_ADDR_UNSPEC, &b->x.ctx);
    if (ret == -FI_EAGAIN) {
        bq_push(&s->repost, b);
        return;
    }
    if (ret) gshmemi_perr_fail(&x->err, GSHMEM_ERR_INTERNAL, "proxy: fi_recv of a staging buffer: %s",
                               gshmemi_fab_strerror((int)ret));
}

/* Its buffers, registered, and the receives posted before any peer learns our address (the
 * staged mode publishes no key). */
static gshmemi_status staged_open(gshmemi_proxy *x, uint64_t *key) {
    struct staged *s = calloc(1, sizeof *s);
    if (!s) return GSHMEM_ERR_NO_MEMORY;
    *key = 0;
    x->mode_state = s;
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
    GSHMEMI_CHECK(gshmemi_fab_register(&x->fab, s->slab, s->n_bufs * s->bufsz, FI_SEND | FI_RECV,
                                       gshmemi_fab_random_key(&x->fab), &x->fab.bufs_mr, "staging buffers"));
    s->desc = fi_mr_desc(x->fab.bufs_mr);
    for (int pe = 0; pe < n; pe++) s->credits[pe] = s->credits0;
    for (size_t i = 0; i < s->n_bufs; i++) {
        sbuf *b = &s->bufs[i];
        b->data = s->slab + i * s->bufsz;
        b->pool = i < 2 * per_pool ? P_RX : i < 3 * per_pool ? P_REQ : P_RSP;
        if (b->pool == P_RX) post_recv(x, b);
        else bq_push(b->pool == P_REQ ? &s->free_req : &s->free_rsp, b);
    }
    return gshmemi_perr_get(&x->err, NULL) ? GSHMEM_ERR_NOT_AVAILABLE : GSHMEM_SUCCESS;
}

static void staged_close(gshmemi_proxy *x) {
    struct staged *s = STG(x);
    if (!s) return;
    if (s->send_wait.n || s->place.n) {
        char a[128], b[128];
        gshmemi_lat_say(&s->send_wait, a, sizeof a);
        gshmemi_lat_say(&s->place, b, sizeof b);
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
    x->mode_state = NULL;
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
        gshmemi_staged_on_response(x, b, r, (const uint8_t *)r + HDR, rl - HDR);
        off += 8 + pad8(rl);
    }
}

/* Responses (and get answers) whose memory operations are done, in order. */
static int finish_placed(gshmemi_proxy *x) {
    struct staged *s = STG(x);
    int work = 0;
    uint64_t t_done = s->placing.h ? memops_done(x) : 0;
    sbuf *b;
    while ((b = s->placing.h) && b->t <= t_done) {
        bq_pop(&s->placing);
        work++;
        if (b->pool == P_RSP) {
            gshmemi_lat_add(&s->place, gshmemi_proxy_now() - b->req->t_in);
            gshmemi_ptrace(TR_PLACED, 0);
            post_recv(x, b->req);
            gshmemi_staged_release_response(x, b);
            continue;
        }
        if (((const smsg *)b->data)->type == M_PACKACK) {   /* its gets' data are in their destinations */
            gshmemi_staged_gets_placed(x, b);
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
        if (gshmemi_staged_on_response(x, b, m, b->data + HDR, len > HDR ? len - HDR : 0)) post_recv(x, b);
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
    if (STG(x)->deferred.h || !gshmemi_staged_serve(x, b)) bq_push(&STG(x)->deferred, b);   /* keep arrival order */
    gshmemi_ptrace(TR_SERVE_E, 0);
}

static void staged_completion(void *ctx, xfer *f, size_t len, int err) {
    gshmemi_proxy *x = ctx;
    sbuf *b = (sbuf *)f;
    struct staged *s = STG(x);
    if (f->kind == XF_RX) {
        if (err) {   /* a receive fails when the endpoint closes or a peer's connection broke */
            if (err != FI_ECANCELED) post_recv(x, b);
            return;
        }
        on_recv(x, b, len);
        return;
    }
    if (b->pool == P_RSP) {
        if (err) gshmemi_perr_fail(&x->err, GSHMEM_ERR_INTERNAL, "proxy: response to PE %d failed: %s", b->peer,
                                   gshmemi_fab_strerror(err));
        bq_push(&s->free_rsp, b);
        return;
    }
    if (err) {
        char what[128];
        snprintf(what, sizeof what, "sending to PE %d failed: %s", b->peer, gshmemi_fab_strerror(err));
        gshmemi_staged_request_state(x, b, false, &(send_err){GSHMEM_ERR_TIMEOUT, what});
    }
    bq_push(&s->free_req, b);
}

/* After a pump pass: the requests whose source copies are done go to the provider. Responses
 * whose placement just finished join the held ones first, so the requests about to go can
 * carry them: in a ping-pong the GPU posts its reply as soon as it sees the request's data,
 * often before this turn's look at the memory queue. */
static int staged_send(gshmemi_proxy *x) {
    struct staged *s = STG(x);
    int work = 0;
    if (s->to_send.h && s->placing.h) work += finish_placed(x);
    return work + gshmemi_staged_send_requests(x);
}

static int staged_progress(gshmemi_proxy *x) {
    struct staged *s = STG(x);
    int work = 0;
    sbuf *b;
    work += finish_placed(x);   /* frees response buffers for deferred requests */
    while ((b = s->deferred.h) && gshmemi_staged_serve(x, b)) {
        bq_pop(&s->deferred);
        work++;
    }
    work += staged_send(x);
    if (s->held.h) work += gshmemi_staged_send_held(x, -1, false);
    /* one attempt each per turn: what is refused again goes back to its queue */
    bq q = s->unsent;
    s->unsent = (bq){0};
    while ((b = bq_pop(&q))) {
        gshmemi_staged_send_response(x, b);
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

static uint64_t staged_carried(const gshmemi_proxy *x) {
    return __atomic_load_n(&STG(x)->n_carried, __ATOMIC_RELAXED);
}

static bool staged_busy(const gshmemi_proxy *x) {
    const struct staged *s = STG(x);
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

static void staged_describe(const gshmemi_proxy *x, char *buf, size_t len) {
    const struct staged *s = STG(x);
    size_t o = (size_t)snprintf(buf, len, "sent %llu, served %llu; to_send %d, placing %d, deferred %d, unsent %d, "
                                "held %d; memops done %llu; credits used:", (unsigned long long)s->send_wait.n,
                                (unsigned long long)s->place.n, bq_len(&s->to_send), bq_len(&s->placing),
                                bq_len(&s->deferred), bq_len(&s->unsent), bq_len(&s->held),
                                (unsigned long long)(x->p.mem.done ? x->p.mem.done(x->p.mem.ctx) : 0));
    for (int pe = 0; pe < x->p.npes && o < len; pe++)
        if (s->credits[pe] != s->credits0)
            o += (size_t)snprintf(buf + o, len - o, " PE %d %d/%d", pe, s->credits0 - s->credits[pe], s->credits0);
}

/* A get's pieces progressed once their data was placed; nothing else follows a record. */
static void staged_stage_done(gshmemi_proxy *x, op_rec *r) { gshmemi_rec_complete(x, r, 0); }

static gshmemi_status staged_check(const gshmemi_proxy_params *p) {
    if (p->mem.copy_to && p->mem.copy_from && p->mem.atomic && p->mem.signal) return GSHMEM_SUCCESS;
    gshmemi_error("proxy: staged mode needs the copy_to, copy_from, atomic and signal memory operations");
    return GSHMEM_ERR_INVALID_ARG;
}

const struct gshmemi_proxy_mode gshmemi_proxy_staged = {
    .id = GSHMEMI_PROXY_STAGED,
    .name = "staged",
    .caps = FI_MSG,
    .mr_local = true,
    .check = staged_check,
    .open = staged_open,
    .close = staged_close,
    .pump = gshmemi_staged_pump,
    .send = staged_send,
    .stage_done = staged_stage_done,
    .completion = staged_completion,
    .progress = staged_progress,
    .busy = staged_busy,
    .carried = staged_carried,
    .describe = staged_describe,
};
