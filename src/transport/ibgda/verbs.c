/* ibgda's verbs setup (GSHMEM_IBGDA_SETUP=verbs): rdma-core makes the RC queue pair and its
 * completion queue the standard way (mlx5dv_create_cq, ibv_create_qp_ex), mlx5dv_init_obj
 * exposes their memory (send queue, doorbell records, CQ entries: host memory rdma-core
 * allocated) and the doorbell register (BlueFlame), which are mapped for the GPU; the QP is
 * connected with ibv_modify_qp. The CQ is a ring (a verbs CQ cannot be collapsed), twice the send
 * queue (gshmem/nic_desc.h). The path most likely to work on a NIC nobody here has tried: the
 * hardware only ever sees objects rdma-core made. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "hw.h"

typedef struct vqp {
    struct ibv_cq *cq;
    struct ibv_qp *qp;
} vqp;

static gshmemi_status v_open(ibgda_ctx *c) {
    hw_dev *h = calloc(1, sizeof *h);
    if (!h) return GSHMEM_ERR_NO_MEMORY;
    c->bctx = h;
    return gshmemi_hw_open(h);
}

/* A CQ with 64-byte entries (the layout the GPU reads), at least `n` of them. */
static struct ibv_cq *make_cq(hw_dev *h, uint32_t n, int pe) {
    struct ibv_cq_init_attr_ex ca = {.cqe = n, .wc_flags = 0, .comp_mask = 0};
    struct mlx5dv_cq_init_attr da = {.comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE, .cqe_size = 64};
    struct ibv_cq_ex *cq = mlx5dv_create_cq(h->ctx, &ca, &da);
    if (!cq) {
        gshmemi_error("ibgda: mlx5dv_create_cq (%u entries of 64 bytes) on %s for the queue pair to PE %d failed: %s",
                      n, h->name, pe, strerror(errno));
        return NULL;
    }
    return ibv_cq_ex_to_cq(cq);
}

static gshmemi_status v_qp_create(ibgda_ctx *c, ibgda_qp *qp, ibgda_conn *mine) {
    hw_dev *h = c->bctx;
    const char *what = qp->gpu ? "the GPU's queue pair" : "the host's queue pair";
    vqp *v = calloc(1, sizeof *v);
    if (!v) return GSHMEM_ERR_NO_MEMORY;
    qp->priv = v;
    /* a work request takes up to 2 blocks of 64 bytes: the CQ holds twice as many entries as
     * the queue may have blocks (checked below) */
    if (!(v->cq = make_cq(h, 4 * c->wqe_cnt, qp->pe))) return GSHMEM_ERR_NOT_AVAILABLE;
    struct ibv_qp_init_attr_ex qa = {
        .send_cq = v->cq,
        .recv_cq = v->cq,
        .cap = {.max_send_wr = c->wqe_cnt / 2, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
        .qp_type = IBV_QPT_RC,
        .sq_sig_all = 0,
        .comp_mask = IBV_QP_INIT_ATTR_PD,
        .pd = h->pd,
    };
    if (!(v->qp = ibv_create_qp_ex(h->ctx, &qa))) {
        gshmemi_error("ibgda: ibv_create_qp_ex (RC, %u send work requests) on %s for %s to PE %d failed: %s",
                      c->wqe_cnt / 2, h->name, what, qp->pe, strerror(errno));
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    struct mlx5dv_qp dq = {0};
    struct mlx5dv_cq dc = {0};
    struct mlx5dv_obj obj = {.qp = {.in = v->qp, .out = &dq}, .cq = {.in = v->cq, .out = &dc}};
    int e = mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ);
    if (e) {
        gshmemi_error("ibgda: mlx5dv_init_obj (QP and CQ) on %s for %s to PE %d failed: %s", h->name, what, qp->pe,
                      strerror(e));
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    const uint32_t n = dq.sq.wqe_cnt, k = dc.cqe_cnt;
    if (dq.sq.stride != 64 || !n || (n & (n - 1)) || n > 16384 || dc.cqe_size != 64 || (k & (k - 1)) || k < 2 * n) {
        gshmemi_error("ibgda: %s's %s to PE %d has a send queue of %u blocks of %u bytes and a CQ of %u entries of %u "
                      "bytes: the GPU's protocol needs blocks of 64, at most 16384 of them (a power of two), and a CQ "
                      "of 64-byte entries, at least twice the blocks (GSHMEM_IBGDA_SQ_SLOTS)", h->name, what, qp->pe,
                      n, dq.sq.stride, k, dc.cqe_size);
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    gshmemi_hostq *hq = &qp->host;
    hq->sq = dq.sq.buf;
    hq->wqe_cnt = n;
    hq->qpn = v->qp->qp_num;
    hq->dbrec = dq.dbrec;
    hq->db = dq.bf.reg;
    hq->cq = dc.buf;
    hq->cq_cnt = k;
    hq->cq_dbrec = dc.dbrec;
    hq->pe = qp->pe;
    if (qp->gpu) {
        gshmem_nic_qp *d = &qp->dev;
        void *p;
        GSHMEMI_CHECK(gshmemi_hw_map(h, dq.sq.buf, (size_t)n * 64, &p));
        d->sq = p;
        GSHMEMI_CHECK(gshmemi_hw_map(h, (void *)dq.dbrec, 8, &p));
        d->dbrec = p;
        GSHMEMI_CHECK(gshmemi_hw_map(h, dc.buf, (size_t)k * 64, &p));
        d->cq = p;
        GSHMEMI_CHECK(gshmemi_hw_map(h, (void *)dc.dbrec, 8, &p));
        d->cq_dbrec = p;
        GSHMEMI_CHECK(gshmemi_hw_doorbell(h, dq.bf.reg, what, &d->db));
        d->cq_cnt = k;
        d->qpn = hq->qpn;
        d->wqe_cnt = n;
    }
    gshmemi_hw_conn(h, v->qp->qp_num, mine);
    return GSHMEM_SUCCESS;
}

static gshmemi_status modify(hw_dev *h, ibgda_qp *qp, struct ibv_qp_attr *a, int mask, const char *step) {
    vqp *v = qp->priv;
    int e = ibv_modify_qp(v->qp, a, mask);
    if (!e) return GSHMEM_SUCCESS;
    gshmemi_error("ibgda: connecting %s queue pair 0x%x on %s port %d to PE %d failed at %s: ibv_modify_qp: %s "
                  "(is the peer reachable on this fabric: same subnet for InfiniBand, IP routes for RoCE; "
                  "GSHMEM_IBGDA_DEVICE / GSHMEM_IBGDA_GID_INDEX)", qp->gpu ? "the GPU's" : "the host's", v->qp->qp_num,
                  h->name, h->port, qp->pe, step, strerror(e));
    return GSHMEM_ERR_NOT_AVAILABLE;
}

/* RESET -> INIT -> RTR -> RTS, with the standard verbs attributes (PSN 0, 16 outstanding reads and
 * atomics each way, retries 7). */
static gshmemi_status v_qp_connect(ibgda_ctx *c, ibgda_qp *qp, const ibgda_conn *peer) {
    hw_dev *h = c->bctx;
    if (peer->link_layer != h->pattr.link_layer) {
        gshmemi_error("ibgda: PE %d's NIC is on %s, this PE's (%s) on %s: both ends of a queue pair need the same "
                      "link layer", qp->pe, peer->link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet (RoCE)" : "InfiniBand",
                      h->name, h->roce ? "Ethernet (RoCE)" : "InfiniBand");
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = (uint8_t)h->port,
                            .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC};
    GSHMEMI_CHECK(modify(h, qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, "INIT"));
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = peer->mtu < h->pattr.active_mtu ? (enum ibv_mtu)peer->mtu : h->pattr.active_mtu;
    a.dest_qp_num = peer->qpn;
    a.rq_psn = 0;
    a.max_dest_rd_atomic = 16;
    a.min_rnr_timer = 12;
    gshmemi_hw_ah_attr(h, peer, &a.ah_attr);
    GSHMEMI_CHECK(modify(h, qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                         IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER, "RTR"));
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.sq_psn = 0;
    a.max_rd_atomic = 16;
    return modify(h, qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                  IBV_QP_MAX_QP_RD_ATOMIC, "RTS");
}

static gshmemi_status v_reg(ibgda_ctx *c, void *addr, size_t len, bool gpu, ibgda_key *k) {
    return gshmemi_hw_reg(c->bctx, addr, len, gpu, k);
}
static gshmemi_status v_start(ibgda_ctx *c) { return gshmemi_hw_start(c->bctx); }
static void v_stop(ibgda_ctx *c) { gshmemi_hw_stop(c->bctx); }

static void v_describe(ibgda_ctx *c, char *buf, size_t len) {
    char d[200];
    gshmemi_hw_describe(c->bctx, d, sizeof d);
    snprintf(buf, len, "%s, verbs setup (rdma-core's QP and ring CQ, queues in host memory mapped for the GPU)", d);
}

static void v_qp_destroy(ibgda_ctx *c, ibgda_qp *qp) {
    hw_dev *h = c->bctx;
    vqp *v = qp->priv;
    if (!v) return;
    if (v->qp && ibv_destroy_qp(v->qp)) gshmemi_warn("ibgda: ibv_destroy_qp on %s failed: %s", h->name, strerror(errno));
    if (v->cq && ibv_destroy_cq(v->cq)) gshmemi_warn("ibgda: ibv_destroy_cq on %s failed: %s", h->name, strerror(errno));
    free(v);
    qp->priv = NULL;
}

static void v_dereg(ibgda_ctx *c, ibgda_key *k) { gshmemi_hw_dereg(c->bctx, k); }

static void v_close(ibgda_ctx *c) {
    if (!c->bctx) return;
    gshmemi_hw_close(c->bctx);
    free(c->bctx);
    c->bctx = NULL;
}

const ibgda_backend gshmemi_ibgda_verbs = {
    .name = "verbs",
    .open = v_open,
    .qp_create = v_qp_create,
    .qp_connect = v_qp_connect,
    .reg = v_reg,
    .start = v_start,
    .stop = v_stop,
    .describe = v_describe,
    .qp_destroy = v_qp_destroy,
    .dereg = v_dereg,
    .close = v_close,
};
