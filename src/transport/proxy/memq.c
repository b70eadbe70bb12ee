/* The staged mode's memory operations on an in-order device queue (memq.h). Proxy thread
 * only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memq.h"

#define SLOTS GSHMEMI_MEMQ_SLOTS

static void logop(gshmemi_memq *q, const char *what, const void *addr, uint64_t n) {
    q->dirty = true;   /* the next ticket covers it, whether or not it was handed out already */
    unsigned k = q->n_ops++ % 64;
    q->oplog[k].t = q->issued + 1;
    q->oplog[k].what = what;
    q->oplog[k].addr = (uint64_t)(uintptr_t)addr;
    q->oplog[k].n = n;
}

/* Before anything is enqueued on the stream: the relay's earlier entries come first. */
static int stream_turn(gshmemi_memq *q) {
    q->stream_dirty = true;
    if (!q->relay_word || q->be.relay_done(q->be.ctx) >= q->relay_n) return 0;
    return q->be.wait_relay(q->be.ctx, q->relay_n);
}

/* The stream is idle: every operation on it is covered by a ticket that passed. */
static bool stream_idle(const gshmemi_memq *q) {
    return !q->stream_dirty && !q->batch_n && __atomic_load_n(q->done_word, __ATOMIC_ACQUIRE) >= q->stream_ticket;
}

/* The written atomics, before whatever is enqueued next: one launch per GSHMEMI_AMO_BATCH_MAX
 * of them, in ring order (so one word's atomics stay in arrival order across launches). */
static int launch_batch(gshmemi_memq *q) {
    int st = 0;
    while (q->batch_n && !st) {
        unsigned n = q->batch_n < GSHMEMI_AMO_BATCH_MAX ? q->batch_n : GSHMEMI_AMO_BATCH_MAX;
        st = stream_turn(q);
        if (!st) st = q->be.atomics(q->be.ctx, q->batch_first, n);
        q->batch_first = (q->batch_first + n) % SLOTS;
        q->batch_n -= n;
    }
    q->batch_n = 0;
    return st;
}

static int enqueue_copy(gshmemi_memq *q, void *dst, const void *src, size_t n, bool to_device) {
    int st = launch_batch(q);
    if (!st) st = stream_turn(q);
    if (!st) st = q->be.copy(q->be.ctx, dst, src, n, to_device);
    if (!st) logop(q, to_device ? "copy to" : "copy from", to_device ? dst : src, n);
    return st;
}

static int mem_copy_to(void *ctx, void *dst_dev, const void *src_host, size_t n) {
    return enqueue_copy(ctx, dst_dev, src_host, n, true);
}

static int mem_copy_from(void *ctx, void *dst_host, const void *src_dev, size_t n) {
    return enqueue_copy(ctx, dst_host, src_dev, n, false);
}

static uint64_t mem_mark(void *ctx) {
    gshmemi_memq *q = ctx;
    if (!q->dirty && !q->marked) return q->issued;
    q->marked = true;   /* commit enqueues its write */
    q->dirty = false;
    return q->issued + 1;
}

/* Enqueues the written atomics and the handed-out ticket's write. A failure was said by the
 * backend; the ticket still counts as issued (the records waiting for it time out with
 * their own messages). */
static void commit(gshmemi_memq *q) {
    launch_batch(q);
    if (!q->marked) return;
    uint64_t t = q->issued + 1;
    /* relay entries alone since the last ticket: the relay writes it; else the stream (after
     * the relay's entries) */
    if (!(q->relay_dirty && !q->stream_dirty && q->be.relay_write(q->be.ctx, q->relay_word, t) == 0)) {
        if (!stream_turn(q)) q->be.ticket(q->be.ctx, t);
        q->stream_ticket = t;
        q->stream_dirty = false;
    } else {
        q->relay_n++;
    }
    q->relay_dirty = false;
    q->marked = false;
    q->issued++;
}

/* The larger of the two queues' ticket words: a ticket passed on either covers everything
 * before it (docs/proxy.md, "The relay"). */
static uint64_t passed(const gshmemi_memq *q) {
    uint64_t v = __atomic_load_n(q->done_word, __ATOMIC_ACQUIRE);
    if (q->relay_word) {
        uint64_t r = __atomic_load_n(q->relay_word, __ATOMIC_ACQUIRE);
        if (r > v) v = r;
    }
    return v;
}

static uint64_t mem_done(void *ctx) {
    gshmemi_memq *q = ctx;
    commit(q);
    uint64_t v = passed(q);
    while (q->pend_n && q->pend[q->pend_h].t <= v) {
        uint64_t *old = q->pend[q->pend_h].old;
        if (old) *old = __atomic_load_n(&q->olds[q->pend_h], __ATOMIC_RELAXED);
        q->pend_h = (q->pend_h + 1) % SLOTS;
        q->pend_n--;
    }
    if (v >= q->issued || v != q->stall_at) {
        q->stall_at = v;
        q->stall_since = q->stall_warned = 0;
        return v;
    }
    /* nothing passed since stall_since: say so (1 s, then every 10 s) */
    double now = gshmemi_proxy_now();
    if (q->stall_since == 0) q->stall_since = now;
    else if (now - q->stall_since > 1.0 && now - q->stall_warned > 10.0) {
        q->stall_warned = now;
        char first[256] = "", state[384] = "?";
        size_t len = 0;   /* the logged operations of the first ticket not passed */
        for (unsigned i = q->n_ops > 64 ? q->n_ops - 64 : 0; i < q->n_ops && len < sizeof first - 64; i++) {
            unsigned k = i % 64;
            if (q->oplog[k].t != v + 1) continue;
            len += (size_t)snprintf(first + len, sizeof first - len, "%s%s %#llx (%llu B)", len ? ", " : "",
                                    q->oplog[k].what, (unsigned long long)q->oplog[k].addr,
                                    (unsigned long long)q->oplog[k].n);
        }
        if (q->be.describe) q->be.describe(q->be.ctx, state, sizeof state);
        gshmemi_warn("proxy: memory operations on the GPU made no progress for %.1f s (%llu of %llu marks "
                     "passed; waiting: %s; %s)", now - q->stall_since, (unsigned long long)v,
                     (unsigned long long)q->issued, len ? first : "?", state);
    }
    return v;
}

static int mem_flush(void *ctx) {
    gshmemi_memq *q = ctx;
    uint64_t t = mem_mark(q);
    commit(q);
    int st = q->be.sync(q->be.ctx);
    if (st) return st;
    for (long i = 0; mem_done(q) < t; i++)   /* the ticket's write was performed with the queue */
        if (i > 100000000) {
            gshmemi_error("proxy: memory operations completed but their mark %llu never arrived in host memory",
                          (unsigned long long)t);
            return GSHMEM_ERR_INTERNAL;
        }
    return 0;
}

/* A non-fetching add right after a non-fetching add of the same width to the same word, both
 * not yet launched, joins it (operands summed; modular, so 4-byte adds too): nothing can see
 * the value between them, and one word's adds then cost one atomic instead of a round each
 * of the batch kernel (a flood of adds to one counter). */
static bool merge_add(gshmemi_memq *q, uint64_t addr, int op, size_t size, uint64_t operand, const uint64_t *old) {
    if (old || op != GSHMEM_PROXY_AMO_ADD || !q->batch_n) return false;
    unsigned prev = (q->pend_h + q->pend_n - 1) % SLOTS;   /* the newest, in the unlaunched batch */
    gshmemi_amo_desc *d = &q->descs[prev];
    if (q->pend[prev].old || d->op != GSHMEM_PROXY_AMO_ADD || d->addr != addr || d->size != size) return false;
    d->operand += operand;
    return true;
}

/* One atomic, written for the next batch; its old value goes to *old (if not NULL) once the
 * ticket that covers it passed. */
static int write_atomic(gshmemi_memq *q, void *dev_addr, int op, size_t size, uint64_t operand, uint64_t compare,
                        uint64_t *old, const char *what) {
    if (merge_add(q, (uint64_t)(uintptr_t)dev_addr, op, size, operand, old)) {
        logop(q, what, dev_addr, size);
        return 0;
    }
    if (q->pend_n == SLOTS) {   /* the oldest slot is reused only after its batch read it */
        int st = mem_flush(q);
        if (st) return st;
    }
    unsigned slot = (q->pend_h + q->pend_n) % SLOTS;
    q->descs[slot] = (gshmemi_amo_desc){.addr = (uint64_t)(uintptr_t)dev_addr, .operand = operand,
                                        .compare = compare, .op = (uint32_t)op, .size = (uint32_t)size};
    if (!q->batch_n) q->batch_first = slot;
    q->batch_n++;
    logop(q, what, dev_addr, size);
    q->pend[slot].t = q->issued + 1;   /* the next ticket covers it */
    q->pend[slot].old = old;
    q->pend_n++;
    return 0;
}

static unsigned mem_room(void *ctx) {
    const gshmemi_memq *q = ctx;
    return SLOTS - q->pend_n;
}

static int mem_atomic(void *ctx, void *dev_addr, int op, size_t size, uint64_t operand, uint64_t compare,
                      uint64_t *old) {
    return write_atomic(ctx, dev_addr, op, size, operand, compare, old, "atomic");
}

/* SET is a 64-bit store (in the library a stream memory operation: no SM is needed, so a
 * signal lands even while the target's kernels fill its GPU share spinning for it); ADD is an
 * atomic of the batch. Both come after the earlier operations of the queue (the data of
 * earlier puts). */
static int mem_signal(void *ctx, uint64_t *dev_addr, int sig_op, uint64_t value) {
    gshmemi_memq *q = ctx;
    if (sig_op != GSHMEM_SIGNAL_SET) return write_atomic(q, dev_addr, GSHMEM_PROXY_AMO_ADD, 8, value, 0, NULL, "signal add");
    int st = launch_batch(q);
    if (!st && q->relay_word && stream_idle(q) && q->be.relay_write(q->be.ctx, dev_addr, value) == 0) {
        q->relay_n++;
        q->n_relayed++;
        logop(q, "signal set (relay)", dev_addr, 8);
        q->relay_dirty = true;
        return 0;
    }
    if (!st) st = stream_turn(q);
    if (!st) st = q->be.write64(q->be.ctx, dev_addr, value);
    if (!st) logop(q, "signal set", dev_addr, 8);
    return st;
}

void gshmemi_memq_init(gshmemi_memq *q, const gshmemi_memq_backend *be, gshmemi_amo_desc *descs,
                       const uint64_t *olds, const uint64_t *done_word) {
    memset(q, 0, sizeof *q);
    q->be = *be;
    q->descs = descs;
    q->olds = olds;
    q->done_word = done_word;
}

void gshmemi_memq_set_relay(gshmemi_memq *q, uint64_t *relay_word) { q->relay_word = relay_word; }

gshmemi_proxy_memops gshmemi_memq_ops(gshmemi_memq *q) {
    return (gshmemi_proxy_memops){.ctx = q, .copy_to = mem_copy_to, .copy_from = mem_copy_from,
                                  .atomic = mem_atomic, .signal = mem_signal, .mark = mem_mark,
                                  .done = mem_done, .flush = mem_flush, .room = mem_room};
}
