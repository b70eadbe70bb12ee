/* The software NIC as ibgda's device (a test device, chosen only by GSHMEM_IBGDA_NIC=soft): each
 * queue pair's memory is pinned host memory mapped for the GPU (send queue, doorbell record,
 * completion queue, CQ record) with one word of it standing in for the doorbell register; the
 * engine (softnic.c) plays the NIC on it and performs the work requests through another
 * transport of this process that takes descriptors from in-process producers (the proxy: its
 * desc_chan), over its fabric link to the target PE. The GPU side runs as on hardware. The
 * queues have the shape of the chosen setup: verbs, a ring CQ; devx, a collapsed CQ (both in
 * host memory here: a host thread cannot poll GPU memory). */
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "cuda_util.h"
#include "ibgda.h"
#include "softnic.h"
#include "transport.h"

typedef struct soft_ctx {
    gshmemi_softnic *nic;
    gshmem_proxy_chan chan;       /* the performing transport's channel */
    uint32_t next_key, next_qpn;
    bool chaos;
} soft_ctx;

/* One QP's memory: [send queue][completion queue][record][doorbell][CQ record], each record on a
 * 64-byte line of its own. */
typedef struct soft_qp {
    uint8_t *mem;
    size_t bytes;
    bool pinned;                  /* cudaHostAlloc (GPU QPs), else malloc (host QPs) */
} soft_qp;

static int exec_start(void *ctx, const gshmem_proxy_desc *d, gshmem_proxy_ret *ret, uint64_t *tag) {
    soft_ctx *x = ctx;
    gshmem_proxy_desc p = *d;
    p.ret = (uint64_t)(uintptr_t)ret;
    const uint64_t t = gshmem_proxy_post(&x->chan, &p);
    if (t == UINT64_MAX) {
        const int e = gshmem_proxy_chan_error(&x->chan);
        return e ? e : GSHMEM_ERR_INTERNAL;
    }
    *tag = t;
    return 0;
}

static gshmemi_status soft_open(ibgda_ctx *c) {
    soft_ctx *x = calloc(1, sizeof *x);
    if (!x) return GSHMEM_ERR_NO_MEMORY;
    c->bctx = x;
    const gshmemi_config *g = &gshmemi_cfg;
    gshmemi_sn_params p = {
        .mype = c->s->mype,
        .npes = c->s->npes,
        .exec = {.ctx = x, .start = exec_start},
        .chaos = {.on = g->IBGDA_SOFT_ADVERSARIAL, .seed = (uint64_t)(int64_t)g->IBGDA_SOFT_SEED,
                  .max_delay_us = 50, .late_us = 200, .cqe_batch = 8, .cqe_delay_us = 100},
        .idle_us = 20,
        .report_s = g->DEBUG ? 2.0 : 0,
    };
    if (p.chaos.seed) p.chaos.seed += (uint64_t)c->s->mype;   /* one stream per PE */
    x->chaos = p.chaos.on;
    /* keys distinct per PE: a key of another PE (an lkey as rkey) names no registration */
    x->next_key = (uint32_t)(c->s->mype & 0xff) << 24 | 0x100;
    x->next_qpn = 0x100;
    return gshmemi_sn_create(&p, &x->nic);
}

static gshmemi_status soft_qp_create(ibgda_ctx *c, ibgda_qp *qp, ibgda_conn *mine) {
    soft_ctx *x = c->bctx;
    soft_qp *m = calloc(1, sizeof *m);
    if (!m) return GSHMEM_ERR_NO_MEMORY;
    qp->priv = m;
    const uint32_t n = c->wqe_cnt, k = c->setup == IBGDA_SETUP_VERBS ? 2 * n : 1;
    m->bytes = (size_t)(n + k + 3) * 64;
    if (qp->gpu) {
        GSHMEMI_CUDA(cudaHostAlloc((void **)&m->mem, m->bytes, cudaHostAllocMapped | cudaHostAllocPortable));
        m->pinned = true;
    } else if (posix_memalign((void **)&m->mem, 4096, m->bytes)) {
        m->mem = NULL;
        return GSHMEM_ERR_NO_MEMORY;
    }
    memset(m->mem, 0, m->bytes);
    uint8_t *sq = m->mem, *cq = sq + (size_t)n * 64, *rec = cq + (size_t)k * 64, *db = rec + 64, *cqrec = db + 64;
    const uint32_t qpn = x->next_qpn++ & 0xffffff;
    gshmemi_hostq *h = &qp->host;
    h->sq = sq;
    h->wqe_cnt = n;
    h->qpn = qpn;
    h->dbrec = (volatile uint32_t *)rec;
    h->db = (volatile uint64_t *)db;
    h->cq = cq;
    h->cq_cnt = k;
    h->cq_dbrec = (volatile uint32_t *)cqrec;
    h->pe = qp->pe;
    gshmemi_sn_qp sq_desc = {.sq = sq, .wqe_cnt = n, .qpn = qpn, .dbrec = h->dbrec, .db = h->db, .cq = cq,
                             .cq_cnt = k, .cq_dbrec = h->cq_dbrec, .pe = qp->pe,
                             .what = qp->gpu ? "the GPU's QP" : "the host's QP"};
    GSHMEMI_CHECK(gshmemi_sn_add_qp(x->nic, &sq_desc));   /* fills the entries with "invalid" */
    if (qp->gpu) {
        uint8_t *d = NULL;
        GSHMEMI_CUDA(cudaHostGetDevicePointer((void **)&d, m->mem, 0));
        gshmem_nic_qp *v = &qp->dev;
        v->sq = d;
        v->dbrec = (uint32_t *)(d + (rec - m->mem));
        v->db = (uint64_t *)(d + (db - m->mem));
        v->qpn = qpn;
        v->wqe_cnt = n;
        if (k > 1) {   /* ring: the error copy is the transport's (GPU memory, set by it) */
            v->cq = d + (cq - m->mem);
            v->cq_cnt = k;
            v->cq_dbrec = (uint32_t *)(d + (cqrec - m->mem));
        } else {
            v->cqe = d + (cq - m->mem);
        }
    }
    memset(mine, 0, sizeof *mine);
    mine->qpn = qpn;
    return GSHMEM_SUCCESS;
}

/* The software NIC reaches its peer by PE number: nothing to connect. */
static gshmemi_status soft_qp_connect(ibgda_ctx *c, ibgda_qp *qp, const ibgda_conn *peer) {
    (void)c;
    (void)qp;
    (void)peer;
    return GSHMEM_SUCCESS;
}

static gshmemi_status soft_reg(ibgda_ctx *c, void *addr, size_t len, bool gpu, ibgda_key *k) {
    soft_ctx *x = c->bctx;
    const uint32_t key = x->next_key;
    x->next_key += 0x100;   /* the low byte stays: an mlx5 key's variant */
    GSHMEMI_CHECK(gshmemi_sn_reg_local(x->nic, (uint64_t)(uintptr_t)addr, len, key, !gpu));
    k->lkey = k->rkey = key;
    k->priv = addr;
    return GSHMEM_SUCCESS;
}

static gshmemi_status soft_remote_region(ibgda_ctx *c, int pe, uint64_t addr, uint64_t len, uint32_t rkey) {
    soft_ctx *x = c->bctx;
    if (!len) {
        gshmemi_sn_unreg(x->nic, pe, addr);
        return GSHMEM_SUCCESS;
    }
    return gshmemi_sn_reg_remote(x->nic, pe, addr, len, rkey);
}

/* Called by the performing transport before it stops serving: every work request published
 * before is performed first, then the NIC stops. */
static void soft_drain(void *arg) {
    ibgda_ctx *c = arg;
    soft_ctx *x = c->bctx;
    if (!x || !x->nic) return;
    if (!gshmemi_sn_drain(x->nic, c->timeout))
        gshmemi_warn("ibgda (software NIC): work requests still outstanding at finalize after %.0f s: "
                     "they are dropped", c->timeout);
}

/* The channel of another transport of this process that performs descriptors for in-process
 * producers (transport.h, desc_chan). */
static gshmemi_status soft_start(ibgda_ctx *c) {
    soft_ctx *x = c->bctx;
    gshmemi_state *s = c->s;
    for (int t = 0; t < s->n_transports; t++) {
        const struct gshmemi_transport_ops *o = s->transports[t];
        if (t == c->my_index || !o->desc_chan || !s->tctx[t]) continue;
        gshmemi_status st = o->desc_chan(s->tctx[t], &x->chan, soft_drain, c);
        if (st == GSHMEM_ERR_NOT_AVAILABLE) continue;
        GSHMEMI_CHECK(st);
        gshmemi_info("ibgda: the software NIC performs work requests through the %s transport", o->name);
        return gshmemi_sn_start(x->nic);
    }
    gshmemi_error("ibgda: the software NIC (GSHMEM_IBGDA_NIC=soft) performs work requests over the proxy "
                  "transport's fabric link, and no transport of this build or job offers one: build with "
                  "libfabric (-Dlibfabric_root=..., docs/nodes.md) and run across nodes (gshmrun --nodes K)");
    return GSHMEM_ERR_NOT_AVAILABLE;
}

static void soft_stop(ibgda_ctx *c) {
    soft_ctx *x = c->bctx;
    if (!x || !x->nic) return;
    int vendor = 0;
    const char *msg = NULL;
    if (gshmemi_sn_error(x->nic, &vendor, &msg)) gshmemi_info("ibgda (software NIC): its first error was: %s", msg);
    gshmemi_sn_destroy(x->nic);   /* (a drain before stopped the thread) */
    x->nic = NULL;
}

static void soft_describe(ibgda_ctx *c, char *buf, size_t len) {
    soft_ctx *x = c->bctx;
    snprintf(buf, len, "software NIC (a test device: a host thread plays the mlx5 NIC on the queues and performs "
             "work requests over the proxy's fabric link)%s, %s queue shape", x && x->chaos ? ", adversarial" : "",
             gshmemi_ibgda_setup_name(c->setup));
}

static void soft_qp_destroy(ibgda_ctx *c, ibgda_qp *qp) {
    (void)c;
    soft_qp *m = qp->priv;
    if (!m) return;
    if (m->pinned) cudaFreeHost(m->mem);
    else free(m->mem);
    free(m);
    qp->priv = NULL;
}

static void soft_dereg(ibgda_ctx *c, ibgda_key *k) {
    soft_ctx *x = c->bctx;
    if (x && x->nic && k->priv) gshmemi_sn_unreg(x->nic, -1, (uint64_t)(uintptr_t)k->priv);
    k->priv = NULL;
}

static void soft_close(ibgda_ctx *c) {
    soft_ctx *x = c->bctx;
    if (!x) return;
    gshmemi_sn_destroy(x->nic);
    free(x);
    c->bctx = NULL;
}

const ibgda_backend gshmemi_ibgda_soft = {
    .name = "soft",
    .open = soft_open,
    .qp_create = soft_qp_create,
    .qp_connect = soft_qp_connect,
    .reg = soft_reg,
    .remote_region = soft_remote_region,
    .start = soft_start,
    .stop = soft_stop,
    .describe = soft_describe,
    .qp_destroy = soft_qp_destroy,
    .dereg = soft_dereg,
    .close = soft_close,
};
