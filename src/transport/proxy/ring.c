/* The consumer side of a descriptor ring: reading published slots in ticket order,
 * refusing bad descriptors, the in-flight record table, the per-PE queues of records to post,
 * and retiring completed tickets in order (ctrl->retired). The protocol and its orderings:
 * docs/proxy.md, "The descriptor ring". A record's operation is the data mode's
 * (x->mode); this file only starts, times out and retires records. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy_impl.h"
#include "trace.h"

_Static_assert(sizeof(gshmem_proxy_desc) == 64, "a descriptor is one 64-byte line");
_Static_assert(sizeof(gshmem_proxy_ctrl) == 192, "ctrl: three 64-byte lines");
_Static_assert(GSHMEM_PROXY_AMO_CSWAP == GSHMEMI_AMO_CSWAP && GSHMEM_PROXY_AMO_XOR == GSHMEMI_AMO_XOR &&
               GSHMEM_PROXY_SIG_ADD == GSHMEM_SIGNAL_ADD, "descriptor codes are the library's codes");

gshmemi_status gshmemi_pring_create(gshmemi_proxy *x, uint64_t n_slots, uint64_t *tail, bool with_rets,
                                    pring **out) {
    if (n_slots == 0 || (n_slots & (n_slots - 1)) || n_slots > (1ull << 24)) {
        gshmemi_error("proxy ring: %llu slots is not a power of two in [1, 2^24] (GSHMEM_PROXY_RING_SLOTS)",
                      (unsigned long long)n_slots);
        return GSHMEM_ERR_INVALID_ARG;
    }
    if (x->n_rings == PROXY_MAX_RINGS) {
        gshmemi_error("proxy ring: at most %d rings per PE", PROXY_MAX_RINGS);
        return GSHMEM_ERR_INVALID_ARG;
    }
    pring *g = calloc(1, sizeof *g);
    size_t bytes = n_slots * sizeof(gshmem_proxy_desc) + sizeof(gshmem_proxy_ctrl) +
                   (with_rets ? n_slots * sizeof(gshmem_proxy_ret) : 0);
    void *mem = NULL;
    if (!g || posix_memalign(&mem, 4096, bytes) || !(g->recs = calloc(n_slots, sizeof *g->recs))) {
        free(g ? g->recs : NULL);
        free(mem);
        free(g);
        return GSHMEM_ERR_NO_MEMORY;
    }
    memset(mem, 0, bytes);   /* seq 0 never equals t + 1: no slot looks published */
    g->mem = mem;
    g->chan.slots = mem;
    g->chan.ctrl = (gshmem_proxy_ctrl *)((char *)mem + n_slots * sizeof(gshmem_proxy_desc));
    g->chan.ctrl->err_pe = -1;
    if (with_rets) g->chan.rets = (gshmem_proxy_ret *)((char *)g->chan.ctrl + sizeof(gshmem_proxy_ctrl));
    g->chan.tail = tail ? tail : &g->own_tail;
    g->chan.n_slots = n_slots;
    g->mask = n_slots - 1;
    g->id = x->n_rings;
    x->rings[x->n_rings++] = g;
    *out = g;
    return GSHMEM_SUCCESS;
}

void gshmemi_pring_destroy(pring *g) {
    if (!g) return;
    free(g->recs);
    free(g->mem);
    free(g);
}

bool gshmemi_heap_range(const gshmemi_proxy *x, uint64_t a, uint64_t n) {
    uint64_t base = (uint64_t)(uintptr_t)x->p.heap_base;
    uint64_t size = __atomic_load_n(&x->p.heap_size, __ATOMIC_ACQUIRE);   /* grows (set_heap) */
    return a >= base && n <= size && a - base <= size - n;
}

/* NULL if d may be executed; else what is wrong, and which field. */
static const char *check_desc(const gshmemi_proxy *x, const gshmem_proxy_desc *d, const char **field,
                              uint64_t *val) {
#define BAD(f, v, why) do { *field = f; *val = (uint64_t)(v); return why; } while (0)
    if (d->op >= GSHMEM_PROXY_OP_COUNT) BAD("op", d->op, "unknown operation");
    if (d->ret & 7) BAD("ret", d->ret, "completion slot not 8-byte aligned");
    if (d->op == GSHMEM_PROXY_OP_NOP || d->op == GSHMEM_PROXY_OP_FENCE || d->op == GSHMEM_PROXY_OP_QUIET)
        return NULL;
    if (d->pe < 0 || d->pe >= x->p.npes) BAD("pe", (int64_t)d->pe, "PE out of range");
    switch (d->op) {
    case GSHMEM_PROXY_OP_PUT_SIGNAL:
        if (d->amo > GSHMEM_PROXY_SIG_ADD) BAD("amo", d->amo, "unknown signal operation");
        if ((d->sig_addr & 7) || !gshmemi_heap_range(x, d->sig_addr, 8))
            BAD("sig_addr", d->sig_addr, "signal not an aligned 8-byte word of the symmetric heap");
        /* fall through */
    case GSHMEM_PROXY_OP_PUT:
    case GSHMEM_PROXY_OP_GET:
        if (d->size > x->p.heap_size) BAD("size", d->size, "larger than the symmetric heap");
        if (d->size && !d->laddr) BAD("laddr", d->laddr, "null local address");
        if (!gshmemi_heap_range(x, d->raddr, d->size)) BAD("raddr", d->raddr, "outside the symmetric heap");
        return NULL;
    case GSHMEM_PROXY_OP_P:
    case GSHMEM_PROXY_OP_G:
        if (d->size < 1 || d->size > 8) BAD("size", d->size, "an inline value has 1 to 8 bytes");
        if (!gshmemi_heap_range(x, d->raddr, d->size)) BAD("raddr", d->raddr, "outside the symmetric heap");
        return NULL;
    case GSHMEM_PROXY_OP_AMO:
        if (d->amo >= GSHMEM_PROXY_AMO_COUNT) BAD("amo", d->amo, "unknown atomic operation");
        if (d->size != 4 && d->size != 8) BAD("size", d->size, "atomics have 4 or 8 bytes");
        if ((d->raddr & (d->size - 1)) || !gshmemi_heap_range(x, d->raddr, d->size))
            BAD("raddr", d->raddr, "not an aligned word of the symmetric heap");
        return NULL;
    case GSHMEM_PROXY_OP_SIGNAL:
        if (d->amo > GSHMEM_PROXY_SIG_ADD) BAD("amo", d->amo, "unknown signal operation");
        if ((d->raddr & 7) || !gshmemi_heap_range(x, d->raddr, 8))
            BAD("raddr", d->raddr, "signal not an aligned 8-byte word of the symmetric heap");
        return NULL;
    default:
        return NULL;
    }
#undef BAD
}

static void write_ret(op_rec *r) {
    gshmem_proxy_ret *ret = (gshmem_proxy_ret *)(uintptr_t)r->d.ret;
    ret->value = r->result;
    ret->status = r->status;
    __atomic_store_n(&ret->done, r->ticket + 1, __ATOMIC_RELEASE);   /* value/status first */
}

void gshmemi_pring_set_error(pring *g, int status, int pe, uint64_t ticket) {
    gshmem_proxy_ctrl *c = g->chan.ctrl;
    if (__atomic_load_n(&c->err_status, __ATOMIC_RELAXED)) return;
    c->err_pe = pe;
    c->err_ticket = ticket;
    __atomic_store_n(&c->err_status, status, __ATOMIC_RELEASE);
}

void gshmemi_rec_complete(gshmemi_proxy *x, op_rec *r, int status) {
    (void)x;
    if (r->state != REC_ACTIVE) return;
    r->status = status;
    r->state = REC_DONE;
    if (status) gshmemi_pring_set_error(r->ring, status, r->d.pe, r->ticket);
    /* A QUIET marker answers once every earlier ticket retired (gshmemi_pring_retire). */
    if (r->d.ret && r->d.op != GSHMEM_PROXY_OP_QUIET) write_ret(r);
}

void gshmemi_rec_fail(gshmemi_proxy *x, op_rec *r, int status, bool peer_dead, const char *fmt, ...) {
    char why[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (r->state != REC_ACTIVE) return;
    gshmemi_perr_fail(&x->err, status, "proxy: %s of %llu bytes to PE %d (ring %d, ticket %llu) failed: %s",
                       gshmemi_proxy_op_name(r->d.op), (unsigned long long)r->d.size, r->d.pe, r->ring->id,
                       (unsigned long long)r->ticket, why);
    if (peer_dead && r->d.pe >= 0 && r->d.pe < x->p.npes) x->peer_dead[r->d.pe] = true;
    gshmemi_rec_complete(x, r, status);
}

static void begin(gshmemi_proxy *x, pring *g, op_rec *r, uint64_t t, double *now) {
    r->ticket = t;
    r->ring = g;
    r->state = REC_ACTIVE;
    r->stage = r->queued = r->blocked = 0;
    r->status = 0;
    r->posted = 0;
    r->inflight = 0;
    r->result = 0;
    const gshmem_proxy_desc *d = &r->d;
    if (d->op == GSHMEM_PROXY_OP_NOP) {   /* the hot path of the throughput test */
        gshmemi_rec_complete(x, r, 0);
        return;
    }
    const char *field, *why;
    uint64_t val;
    if ((why = check_desc(x, d, &field, &val))) {
        gshmemi_perr_fail(&x->err, GSHMEM_ERR_INVALID_ARG,
                           "proxy: descriptor refused (ring %d, ticket %llu): %s to PE %d: field %s = %lld (%#llx): %s "
                           "(heap [%p, +%zu)); it was not executed: fix the call that posted it",
                           g->id, (unsigned long long)t, gshmemi_proxy_op_name(d->op), d->pe, field,
                           (long long)val, (unsigned long long)val, why, x->p.heap_base, x->p.heap_size);
        gshmemi_rec_complete(x, r, GSHMEM_ERR_INVALID_ARG);
        return;
    }
    switch (d->op) {
    case GSHMEM_PROXY_OP_QUIET:
        gshmemi_rec_complete(x, r, 0);
        return;
    case GSHMEM_PROXY_OP_FENCE:      /* FI_FENCE is ignored by rxm/tcp/efa: order here */
        g->fence_until = t + 1;
        gshmemi_rec_complete(x, r, 0);
        return;
    default:
        break;
    }
    /* an empty put/get has nothing to do (an empty put_signal still signals) */
    if ((d->op == GSHMEM_PROXY_OP_PUT || d->op == GSHMEM_PROXY_OP_GET) && d->size == 0) {
        gshmemi_rec_complete(x, r, 0);
        return;
    }
    if (x->peer_dead[d->pe]) {
        gshmemi_rec_fail(x, r, GSHMEM_ERR_TIMEOUT, false, "PE %d is unreachable (an earlier operation to it failed)",
                         d->pe);
        return;
    }
    if (*now == 0) *now = gshmemi_proxy_now();
    r->t_last = *now;
    gshmemi_pump_push(x, r);
}

int gshmemi_pring_drain(gshmemi_proxy *x, pring *g, int max) {
    uint64_t t = g->head;
    double now = 0;
    int n = 0;
    while (n < max) {
        if (g->retired < g->fence_until) break;      /* a FENCE waits for what came before */
        if (t - g->retired > g->mask) break;         /* record table full: producers wait on head */
        gshmem_proxy_desc *s = &g->chan.slots[t & g->mask];
        if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != t + 1) break;  /* body visible after */
        op_rec *r = &g->recs[t & g->mask];
        memcpy(&r->d, s, sizeof *s);
        t++;
        n++;
        gshmemi_ptrace(TR_DRAIN, r->d.op);
        begin(x, g, r, t - 1, &now);
    }
    if (n) {
        g->head = t;
        /* release: our reads of the slots happen before a producer may overwrite them (a
         * ring with its own ret slots publishes head in gshmemi_pring_retire) */
        if (!g->chan.rets) __atomic_store_n(&g->chan.ctrl->head, t, __ATOMIC_RELEASE);
        __atomic_fetch_add(&x->consumed, (uint64_t)n, __ATOMIC_RELAXED);
    }
    return n;
}

/* release: the effects and ret slots of every ticket below t are visible first */
static void publish_retired(pring *g, uint64_t t) {
    g->retired = t;
    __atomic_store_n(&g->chan.ctrl->retired, t, __ATOMIC_RELEASE);
}

void gshmemi_pring_retire(pring *g) {
    uint64_t t = g->retired;
    while (t < g->head) {
        op_rec *r = &g->recs[t & g->mask];
        if (r->state != REC_DONE || r->queued) break;
        r->state = REC_FREE;
        t++;
        /* a QUIET marker is answered only once `retired` covers it: a producer that sees its
         * answer then also sees every earlier ticket retired */
        if (r->d.op == GSHMEM_PROXY_OP_QUIET && r->d.ret) {
            publish_retired(g, t);
            write_ret(r);
        }
    }
    if (t != g->retired) publish_retired(g, t);
    if (!g->chan.rets) return;
    /* Ring-owned ret slots: a slot is free again once its ticket retired and its producer
     * acknowledged the answer (acquire: the producer's reads of it came first). The record
     * of a retired ticket stays readable until ticket + n is consumed, which needs head. */
    uint64_t a = g->acked;
    while (a < g->retired) {
        const op_rec *r = &g->recs[a & g->mask];
        gshmem_proxy_ret *own = &g->chan.rets[a & g->mask];
        if (r->d.ret == (uint64_t)(uintptr_t)own && __atomic_load_n(&own->ack, __ATOMIC_ACQUIRE) != a + 1)
            break;
        a++;
    }
    if (a != g->acked) {
        g->acked = a;
        __atomic_store_n(&g->chan.ctrl->head, a, __ATOMIC_RELEASE);
    }
}

bool gshmemi_pring_busy(const pring *g) { return g->retired != g->head || (g->chan.rets && g->acked != g->head); }

void gshmemi_pring_check_timeouts(gshmemi_proxy *x, pring *g, double now) {
    for (uint64_t t = g->retired; t < g->head; t++) {
        op_rec *r = &g->recs[t & g->mask];
        if (r->state != REC_ACTIVE) continue;
        if (x->peer_dead[r->d.pe]) {
            gshmemi_rec_fail(x, r, GSHMEM_ERR_TIMEOUT, false, "PE %d became unreachable (an earlier operation "
                             "to it failed)", r->d.pe);
            continue;
        }
        if (now - r->t_last <= x->timeout) continue;
        gshmemi_rec_fail(x, r, GSHMEM_ERR_TIMEOUT, true,
                         "no progress for %.1f s (GSHMEM_BOOTSTRAP_TIMEOUT): %s; %llu of %llu bytes posted, %u "
                         "operation(s) unanswered: did PE %d exit or crash, or is the link down?",
                         now - r->t_last,
                         r->blocked ? "the provider kept answering 'try again' (peer never connected?)"
                         : r->inflight ? "its completion never came"
                                       : "waiting for room: earlier operations to that PE stay unanswered",
                         (unsigned long long)r->posted, (unsigned long long)r->d.size, r->inflight, r->d.pe);
    }
}

/* At the tail of its PE's queue (begin checked the PE), and the PE on the list of PEs with
 * work if it was not. */
void gshmemi_pump_push(gshmemi_proxy *x, op_rec *r) {
    if (r->queued) return;
    pump_q *q = &x->pumpq[r->d.pe];
    r->queued = 1;
    r->next = NULL;
    if (q->t) q->t->next = r;
    else q->h = r;
    q->t = r;
    x->pump_n++;
    if (q->listed) return;
    q->listed = true;
    q->next = -1;
    if (x->pump_last >= 0) x->pumpq[x->pump_last].next = r->d.pe;
    else x->pump_first = r->d.pe;
    x->pump_last = r->d.pe;
}

void gshmemi_rec_progressed(gshmemi_proxy *x, op_rec *r) {
    if (r->state != REC_ACTIVE || r->inflight || r->queued) return;
    x->mode->stage_done(x, r);
}
