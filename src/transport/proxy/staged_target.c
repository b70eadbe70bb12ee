/* The staged mode's target side: a request from another PE's proxy is served with this PE's
 * memory operations (copies into and out of device memory, atomics and signals, so they stay
 * atomic with the device's own), and answered with one response once those operations are
 * done; a response that holds nothing may wait for a request to its PE to carry it.
 * docs/proxy.md, "The wire (staged mode)", gives the orderings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "staged_state.h"
#include "staged_target.h"
#include "trace.h"

static partial *partial_of(struct staged *s, int src, uint64_t op_id) {
    for (int i = 0; i < s->n_parts; i++)
        if (s->parts[i].src == src && s->parts[i].op_id == op_id) return &s->parts[i];
    partial *grown = gshmemi_grow(s->parts, s->n_parts, &s->cap_parts, sizeof *grown, 16);
    if (!grown) return NULL;
    s->parts = grown;
    partial *p = &s->parts[s->n_parts++];
    *p = (partial){.src = src, .op_id = op_id, .got = 0};
    return p;
}

/* put_signal: the signal, queued after the copies of every byte of the operation. */
static int count_signal(gshmemi_proxy *x, const smsg *m) {
    struct staged *s = STG(x);
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
    for (*n = 0; *n < m->len && *n < STG(x)->pack_max && len - off >= sizeof(sop) && room - aoff >= sizeof(sans);
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

void gshmemi_staged_send_response(gshmemi_proxy *x, sbuf *o) {
    gshmemi_ptrace(TR_SENDRSP_B, o->peer);
    ssize_t ret = fi_send(x->fab.ep, o->data, o->len, STG(x)->desc, (fi_addr_t)o->peer, &o->x.ctx);
    gshmemi_ptrace(TR_SENDRSP_E, (uint32_t)ret);
    if (ret == -FI_EAGAIN) {
        bq_push(&STG(x)->unsent, o);
        return;
    }
    if (ret) {
        gshmemi_perr_fail(&x->err, GSHMEM_ERR_INTERNAL, "proxy: fi_send of a response to PE %d: %s", o->peer,
                          gshmemi_fab_strerror((int)ret));
        bq_push(&STG(x)->free_rsp, o);
    }
}

/* In the order they were held. */
int gshmemi_staged_send_held(gshmemi_proxy *x, int pe, bool force) {
    struct staged *s = STG(x);
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
        gshmemi_staged_send_response(x, o);
        work++;
        o = next;
    }
    return work;
}

void gshmemi_staged_release_response(gshmemi_proxy *x, sbuf *o) {
    struct staged *s = STG(x);
    int pe = o->peer;
    bool holdable = s->hold > 0 && !o->holds_get && o->len + 8 <= 8192 &&
                    2 * (s->n_held[pe] + 1) <= s->credits0 + 1;
    if (holdable && (s->pb_score[pe] > 0 || (++s->pb_probe & 31) == 0)) {
        o->t_in = gshmemi_proxy_now();
        bq_push(&s->held, o);
        s->n_held[pe]++;
        return;
    }
    if (s->n_held[pe]) gshmemi_staged_send_held(x, pe, true);   /* responses to a PE go in order */
    gshmemi_staged_send_response(x, o);
}

/* Its response goes out (and b is posted again) once the memory operations are done
 * (`placing`). */
bool gshmemi_staged_serve(gshmemi_proxy *x, sbuf *b) {
    struct staged *s = STG(x);
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
    o->t = memops_mark(x);   /* an atomic's old value is in its answer once the memops pass this */
    bq_push(&s->placing, o);
    return true;
}
