/* The proxy of one PE: creation (mode, fabric, host ring), the thread that drains the rings
 * and progresses the endpoint, the host-initiated blocking operations, finalize. The loop
 * spins while anything is in flight (the target side of manual-progress providers moves
 * only when we read our completion queue) and sleeps GSHMEM_PROXY_IDLE_US at a time once
 * it has been idle for GSHMEM_PROXY_SPIN_US, which bounds its wake-up latency. */
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* host callers blocked in gshmem_proxy_wait_ret / _quiet leave the core to the proxy */
#define GSHMEM_PROXY_RELAX() sched_yield()
#include "config.h"
#include "fabric.h"
#include "proxy_impl.h"
#include "trace.h"

#define DRAIN_BATCH 256          /* descriptors per ring per loop turn: amortises the CQ read */
#define TIMEOUT_CHECK_S 0.01

/* ---- creation ----------------------------------------------------------------------- */
static const struct gshmemi_proxy_mode *const modes[] = {
    [GSHMEMI_PROXY_DIRECT] = &gshmemi_proxy_direct,
    [GSHMEMI_PROXY_STAGED] = &gshmemi_proxy_staged,
};

static gshmemi_status pick_mode(gshmemi_proxy *x) {
    int m = x->p.mode;
    if (m == GSHMEMI_PROXY_AUTO) {
        const char *v = gshmemi_cfg.PROXY_MODE;
        if (!strcasecmp(v, "direct")) m = GSHMEMI_PROXY_DIRECT;
        else if (!strcasecmp(v, "staged")) m = GSHMEMI_PROXY_STAGED;
        else if (strcasecmp(v, "auto") && v[0]) {
            gshmemi_error("proxy: GSHMEM_PROXY_MODE='%s' is not auto, direct or staged", v);
            return GSHMEM_ERR_INVALID_ARG;
        }
    }
    /* no libfabric here registers CUDA memory (FI_HMEM): device heaps are staged */
    if (m == GSHMEMI_PROXY_AUTO) m = x->p.heap_is_device ? GSHMEMI_PROXY_STAGED : GSHMEMI_PROXY_DIRECT;
    if (m != GSHMEMI_PROXY_DIRECT && m != GSHMEMI_PROXY_STAGED) {
        gshmemi_error("proxy: gshmemi_proxy_create: mode %d is not GSHMEMI_PROXY_AUTO, _DIRECT or _STAGED", m);
        return GSHMEM_ERR_INVALID_ARG;
    }
    x->mode = modes[m];
    return x->mode->check ? x->mode->check(&x->p) : GSHMEM_SUCCESS;
}

/* The endpoint, the mode's registrations and buffers, and every PE's address. */
static gshmemi_status open_fabric(gshmemi_proxy *x) {
    gshmemi_fab_params fp = {
        .npes = x->p.npes, .single_host = x->p.single_host, .caps = x->mode->caps, .mr_local = x->mode->mr_local,
        .mode = x->mode->name, .allgather = x->p.allgather, .allgather_ctx = x->p.allgather_ctx,
        .on_completion = x->mode->completion, .handler_ctx = x, .err = &x->err,
    };
    uint64_t key = 0;
    GSHMEMI_CHECK(gshmemi_fab_open(&x->fab, &fp));
    GSHMEMI_CHECK(x->mode->open(x, &key));
    GSHMEMI_CHECK(gshmemi_fab_exchange(&x->fab, key, x->p.heap_base));
    gshmemi_info("proxy: provider %s, %s mode, address %s", x->fab.prov, x->mode->name, x->fab.addr);
    return GSHMEM_SUCCESS;
}

/* The endpoint first (buffers may still be posted), then what the mode owns. */
static void close_fabric(gshmemi_proxy *x) {
    gshmemi_fab_close(&x->fab);
    if (x->mode && x->mode->close) x->mode->close(x);
}

static gshmemi_status check_params(const gshmemi_proxy_params *p) {
    if (p->npes < 1 || p->mype < 0 || p->mype >= p->npes || !p->allgather || !p->heap_base || !p->heap_size) {
        gshmemi_error("proxy: gshmemi_proxy_create: bad parameters (PE %d of %d, allgather %s, heap %p + %zu)",
                      p->mype, p->npes, p->allgather ? "set" : "missing", p->heap_base, p->heap_size);
        return GSHMEM_ERR_INVALID_ARG;
    }
    return GSHMEM_SUCCESS;
}

gshmemi_status gshmemi_proxy_create(const gshmemi_proxy_params *p, gshmemi_proxy **out) {
    GSHMEMI_CHECK(check_params(p));
    gshmemi_proxy *x = calloc(1, sizeof *x);
    if (!x || !(x->peer_dead = calloc((size_t)p->npes, sizeof *x->peer_dead)) ||
        !(x->pumpq = calloc((size_t)p->npes, sizeof *x->pumpq))) {
        if (x) free(x->peer_dead);
        free(x);
        return GSHMEM_ERR_NO_MEMORY;
    }
    x->pump_first = x->pump_last = -1;
    x->p = *p;
    x->timeout = gshmemi_cfg.BOOTSTRAP_TIMEOUT > 0 ? gshmemi_cfg.BOOTSTRAP_TIMEOUT : 120;
    gshmemi_status st;
    gshmemi_ptrace_open();
    GSHMEMI_CHECK_GOTO(pick_mode(x), st, fail);
    GSHMEMI_CHECK_GOTO(open_fabric(x), st, fail);
    GSHMEMI_CHECK_GOTO(gshmemi_pring_create(x, 256, NULL, false, &x->host), st, fail);
    *out = x;
    return GSHMEM_SUCCESS;
fail:
    close_fabric(x);
    free(x->peer_dead);
    free(x->pumpq);
    free(x);
    return st;
}

gshmemi_status gshmemi_proxy_ring(gshmemi_proxy *x, uint64_t n_slots, uint64_t *tail, bool with_rets,
                                  gshmem_proxy_chan *out) {
    if (__atomic_load_n(&x->thread_started, __ATOMIC_ACQUIRE)) {
        gshmemi_error("proxy: gshmemi_proxy_ring called while the proxy thread runs: create rings before "
                      "gshmemi_proxy_start");
        return GSHMEM_ERR_INVALID_ARG;
    }
    pring *g;
    GSHMEMI_CHECK(gshmemi_pring_create(x, n_slots ? n_slots : (uint64_t)gshmemi_cfg.PROXY_RING_SLOTS, tail, with_rets, &g));
    *out = g->chan;
    return GSHMEM_SUCCESS;
}

/* ---- the loop ------------------------------------------------------------------------- */
/* Posts what it can of PE pe's queue, in order: a record that finds no room (credits,
 * buffers, the provider's queue) stays at the head, and the records behind it wait untried. */
static int pump_peer(gshmemi_proxy *x, pump_q *q) {
    int work = 0;
    op_rec *r;
    while ((r = q->h)) {
        int ret = r->state == REC_ACTIVE ? x->mode->pump(x, r) : 0;
        if (ret == -FI_EAGAIN) break;
        q->h = r->next;
        if (!q->h) q->t = NULL;
        x->pump_n--;
        r->queued = 0;
        work++;
        gshmemi_rec_progressed(x, r);   /* may push it again at the tail (next stage) */
    }
    return work;
}

/* One pass over the PEs with records to post: one attempt per PE that has no room, so a pass
 * costs O(PEs + work), not O(records waiting) — with the ring full of small operations for a
 * peer whose credits are in use, walking every waiting record each pass was what made a pass
 * slow (docs/design.md, "Pumping"). The first PE moves to the end after each pass: PEs share
 * the request buffers and the provider's queue, and none is always served first. */
static int pump_all(gshmemi_proxy *x) {
    int work = 0, prev = -1;
    for (int pe = x->pump_first; pe >= 0;) {
        pump_q *q = &x->pumpq[pe];
        work += pump_peer(x, q);
        int next = q->next;
        if (q->h) {
            prev = pe;
        } else {   /* unlinked: the next push lists it again */
            q->listed = false;
            if (prev >= 0) x->pumpq[prev].next = next;
            else x->pump_first = next;
            if (x->pump_last == pe) x->pump_last = prev;
        }
        pe = next;
    }
    int f = x->pump_first;
    if (f >= 0 && f != x->pump_last) {
        x->pump_first = x->pumpq[f].next;
        x->pumpq[f].next = -1;
        x->pumpq[x->pump_last].next = f;
        x->pump_last = f;
    }
    if (x->mode->send) work += x->mode->send(x);
    return work;
}

static bool busy(const gshmemi_proxy *x) {
    if (x->pump_n) return true;
    for (int i = 0; i < x->n_rings; i++)
        if (gshmemi_pring_busy(x->rings[i])) return true;
    return x->mode->busy && x->mode->busy(x);
}

static void idle_sleep(void) {
    long us = gshmemi_cfg.PROXY_IDLE_US;
    if (us <= 0) return;
    struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* GSHMEM_DEBUG=1: while work is in flight, a line every 2 s says where it stands (what a slow
 * or stuck job waits for). */
static void report(gshmemi_proxy *x) {
    char line[768];
    size_t o = 0;
    unsigned long long pumped = x->pump_n;
    for (int i = 0; i < x->n_rings && o < sizeof line; i++) {
        const pring *g = x->rings[i];
        o += (size_t)snprintf(line + o, sizeof line - o, "ring %d: head %llu retired %llu acked %llu; ", g->id,
                              (unsigned long long)g->head, (unsigned long long)g->retired,
                              (unsigned long long)g->acked);
    }
    if (o < sizeof line) o += (size_t)snprintf(line + o, sizeof line - o, "%llu records to post; ", pumped);
    if (x->mode->describe && o < sizeof line) x->mode->describe(x, line + o, sizeof line - o);
    gshmemi_info("proxy progress: %s", line);
}

static void *proxy_main(void *arg) {
    gshmemi_proxy *x = arg;
    double idle_since = 0, next_check = 0, next_report = 0, spin = gshmemi_cfg.PROXY_SPIN_US * 1e-6;
    while (!__atomic_load_n(&x->stop, __ATOMIC_ACQUIRE)) {
        int work = 0;
        for (int i = 0; i < x->n_rings; i++) work += gshmemi_pring_drain(x, x->rings[i], DRAIN_BATCH);
        /* what the GPU just posted goes to the provider before this turn's responses: a reply
         * in a ping-pong (posted once the GPU saw the request's data, which lands before the
         * mark that releases the request's response) does not wait behind that response's
         * send call */
        if (x->pump_n) work += pump_all(x);
        double tq = gshmemi_trace_buf ? gshmemi_proxy_now() : 0;
        int wq = gshmemi_fab_progress(&x->fab);
        if (wq && gshmemi_trace_buf) {
            gshmemi_ptrace_at(tq, TR_CQ_B, (uint32_t)wq);
            gshmemi_ptrace(TR_CQ_E, (uint32_t)wq);
        }
        work += wq;
        if (x->mode->progress) work += x->mode->progress(x);
        if (x->pump_n) work += pump_all(x);
        for (int i = 0; i < x->n_rings; i++) gshmemi_pring_retire(x->rings[i]);
        /* nothing done this turn: let a producer or a peer sharing this core run (returns at
         * once on a core of its own) */
        if (!work) sched_yield();
        if (work || busy(x)) {
            idle_since = 0;
            double now = gshmemi_proxy_now();
            if (now > next_check) {
                for (int i = 0; i < x->n_rings; i++) gshmemi_pring_check_timeouts(x, x->rings[i], now);
                next_check = now + TIMEOUT_CHECK_S;
            }
            if (gshmemi_cfg.DEBUG && now > next_report) {
                if (next_report) report(x);
                next_report = now + 2.0;
            }
            continue;
        }
        double now = gshmemi_proxy_now();
        if (idle_since == 0) idle_since = now;
        else if (now - idle_since >= spin) idle_sleep();
    }
    return NULL;
}

gshmemi_status gshmemi_proxy_start(gshmemi_proxy *x) {
    if (__atomic_load_n(&x->thread_started, __ATOMIC_ACQUIRE)) return GSHMEM_SUCCESS;
    __atomic_store_n(&x->stop, 0, __ATOMIC_RELEASE);
    int e = pthread_create(&x->thread, NULL, proxy_main, x);
    if (e) {
        gshmemi_error("proxy: pthread_create of the proxy thread failed: %s", strerror(e));
        return GSHMEM_ERR_INTERNAL;
    }
    __atomic_store_n(&x->thread_started, 1, __ATOMIC_RELEASE);
    return GSHMEM_SUCCESS;
}

void gshmemi_proxy_stop(gshmemi_proxy *x) {
    if (!__atomic_load_n(&x->thread_started, __ATOMIC_ACQUIRE)) return;
    __atomic_store_n(&x->stop, 1, __ATOMIC_RELEASE);
    pthread_join(x->thread, NULL);
    __atomic_store_n(&x->thread_started, 0, __ATOMIC_RELEASE);
}

void gshmemi_proxy_set_heap(gshmemi_proxy *x, void *heap_base, size_t heap_size) {
    x->p.heap_base = heap_base;   /* fixed once set: only the size changes while the thread runs */
    __atomic_store_n(&x->p.heap_size, heap_size, __ATOMIC_RELEASE);
}

/* ---- host-initiated operations (through the host ring) ----------------------------- */
static gshmemi_status host_op(gshmemi_proxy *x, const char *call, gshmem_proxy_desc *d, uint64_t *value) {
    if (!__atomic_load_n(&x->thread_started, __ATOMIC_ACQUIRE)) {
        gshmemi_error("proxy: %s to PE %d: the proxy thread is not running (gshmemi_proxy_start)", call, d->pe);
        return GSHMEM_ERR_NOT_INITIALIZED;
    }
    gshmem_proxy_ret ret;
    memset(&ret, 0, sizeof ret);
    d->ret = (uint64_t)(uintptr_t)&ret;
    uint64_t t = gshmem_proxy_post(&x->host->chan, d);
    if (t == UINT64_MAX) return gshmem_proxy_chan_error(&x->host->chan);
    int st = gshmem_proxy_wait_ret(&ret, t);   /* the proxy completes every record in bounded time */
    if (value) *value = ret.value;
    return st;
}

gshmemi_status gshmemi_proxy_put(gshmemi_proxy *x, void *dst_sym, const void *src, size_t n, int pe) {
    gshmem_proxy_desc d = {.op = GSHMEM_PROXY_OP_PUT, .pe = pe, .size = n, .raddr = (uint64_t)(uintptr_t)dst_sym,
                           .laddr = (uint64_t)(uintptr_t)src};
    return host_op(x, "put", &d, NULL);
}

gshmemi_status gshmemi_proxy_get(gshmemi_proxy *x, void *dst, const void *src_sym, size_t n, int pe) {
    gshmem_proxy_desc d = {.op = GSHMEM_PROXY_OP_GET, .pe = pe, .size = n, .raddr = (uint64_t)(uintptr_t)src_sym,
                           .laddr = (uint64_t)(uintptr_t)dst};
    return host_op(x, "get", &d, NULL);
}

gshmemi_status gshmemi_proxy_amo(gshmemi_proxy *x, int op, size_t size, void *dst_sym, uint64_t value,
                                 uint64_t compare, int pe, uint64_t *old) {
    gshmem_proxy_desc d = {.op = GSHMEM_PROXY_OP_AMO, .amo = (uint8_t)op, .pe = pe, .size = size,
                           .raddr = (uint64_t)(uintptr_t)dst_sym, .laddr = value,
                           .flags = old ? GSHMEM_PROXY_F_FETCH : 0};
    d.compare = compare;
    return host_op(x, "atomic", &d, old);
}

gshmemi_status gshmemi_proxy_signal(gshmemi_proxy *x, uint64_t *sig_sym, uint64_t value, int sig_op, int pe) {
    gshmem_proxy_desc d = {.op = GSHMEM_PROXY_OP_SIGNAL, .amo = (uint8_t)sig_op, .pe = pe, .size = 8,
                           .raddr = (uint64_t)(uintptr_t)sig_sym, .laddr = value};
    return host_op(x, "signal", &d, NULL);
}

gshmemi_status gshmemi_proxy_put_signal(gshmemi_proxy *x, void *dst_sym, const void *src, size_t n,
                                        uint64_t *sig_sym, uint64_t value, int sig_op, int pe) {
    gshmem_proxy_desc d = {.op = GSHMEM_PROXY_OP_PUT_SIGNAL, .amo = (uint8_t)sig_op, .pe = pe, .size = n,
                           .raddr = (uint64_t)(uintptr_t)dst_sym, .laddr = (uint64_t)(uintptr_t)src,
                           .sig_value = value};
    d.sig_addr = (uint64_t)(uintptr_t)sig_sym;
    return host_op(x, "put_signal", &d, NULL);
}

gshmemi_status gshmemi_proxy_quiet(gshmemi_proxy *x) { return gshmem_proxy_quiet(&x->host->chan); }

gshmem_proxy_chan gshmemi_proxy_host_chan(const gshmemi_proxy *x) { return x->host->chan; }

/* ---- queries and finalize ------------------------------------------------------------ */
const char *gshmemi_proxy_provider(const gshmemi_proxy *x) { return x->fab.prov; }
int gshmemi_proxy_mode(const gshmemi_proxy *x) { return x->mode->id; }
const char *gshmemi_proxy_mode_name(const gshmemi_proxy *x) { return x->mode->name; }
const char *gshmemi_proxy_address(const gshmemi_proxy *x) { return x->fab.addr; }
uint64_t gshmemi_proxy_consumed(const gshmemi_proxy *x) { return __atomic_load_n(&x->consumed, __ATOMIC_RELAXED); }
uint64_t gshmemi_proxy_carried(const gshmemi_proxy *x) {
    return x->mode->carried && x->mode_state ? x->mode->carried(x) : 0;
}

gshmemi_status gshmemi_proxy_error(const gshmemi_proxy *x, const char **msg) {
    return gshmemi_perr_get(&x->err, msg);
}

gshmemi_status gshmemi_proxy_finalize(gshmemi_proxy *x) {
    if (!x) return GSHMEM_SUCCESS;
    gshmemi_status st = GSHMEM_SUCCESS;
    if (__atomic_load_n(&x->thread_started, __ATOMIC_ACQUIRE)) {
        /* our host ring quiet; then nobody may still need us to progress their operations */
        gshmemi_proxy_quiet(x);
        char one = 1, *all = malloc((size_t)x->p.npes);
        st = all ? x->p.allgather(x->p.allgather_ctx, &one, all, 1) : GSHMEM_ERR_NO_MEMORY;
        free(all);
        gshmemi_proxy_stop(x);
    }
    gshmemi_ptrace_close(x->p.mype);
    close_fabric(x);
    for (int i = 0; i < x->n_rings; i++) gshmemi_pring_destroy(x->rings[i]);
    free(x->peer_dead);
    free(x->pumpq);
    free(x);
    return st;
}
