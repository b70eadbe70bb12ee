/* ibgda's DEVX setup (GSHMEM_IBGDA_SETUP=devx): the GPU's queues live in GPU memory, registered
 * with the NIC as a DEVX umem (dma-buf, or peer memory); the completion queue is collapsed (one
 * entry the NIC overwrites, overrun ignored) and made with the PRM's CREATE_CQ; the RC queue
 * pair is made with CREATE_QP (no receive queue) and moved RST -> INIT -> RTR -> RTS with the
 * PRM's commands (devx_prm.h); its doorbell is a DEVX UAR page mapped for the GPU. The host's
 * queue pairs are made alike in host memory. Every command's status and syndrome is checked and
 * named. A queue pair's memory: [send queue][4 KiB: CQ entry, CQ record, QP record], rounded up
 * to 64 KiB. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "cuda_util.h"
#include "devx_prm.h"
#include "hw.h"

#define QMEM_ALIGN (64u << 10)
enum { OFF_CQE = 0, OFF_CQ_REC = 64, OFF_QP_REC = 128 };   /* in the 4 KiB after the send queue */

typedef struct dx_ctx {
    hw_dev h;
    uint32_t eqn;
    int log_rd_atom;              /* log2 of the outstanding reads and atomics the NIC allows */
} dx_ctx;

typedef struct dx_qp {
    void *raw;                    /* the allocation */
    uint8_t *mem;                 /* its 64 KiB-aligned part: the queues */
    size_t bytes;
    bool gpu;
    struct mlx5dv_devx_umem *umem;
    struct mlx5dv_devx_uar *uar;
    struct mlx5dv_devx_obj *cq, *qp;
    struct ibv_ah *ah;
    uint32_t cqn, qpn;
} dx_qp;

static int ilog2(uint32_t v) {
    int l = 0;
    while ((1u << (l + 1)) <= v) l++;
    return l;
}

static gshmemi_status d_open(ibgda_ctx *c) {
    dx_ctx *x = calloc(1, sizeof *x);
    if (!x) return GSHMEM_ERR_NO_MEMORY;
    c->bctx = x;
    GSHMEMI_CHECK(gshmemi_hw_open(&x->h));
    int e = mlx5dv_devx_query_eqn(x->h.ctx, 0, &x->eqn);
    if (e) {
        gshmemi_error("ibgda (devx setup): mlx5dv_devx_query_eqn on %s failed: %s (DEVX needs the mlx5_ib driver's "
                      "DEVX support and, as a user, CAP_NET_RAW or a kernel that allows DEVX to users; "
                      "GSHMEM_IBGDA_SETUP=verbs does without)", x->h.name, strerror(e));
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    struct ibv_device_attr da;
    if ((e = ibv_query_device(x->h.ctx, &da))) {
        gshmemi_error("ibgda (devx setup): ibv_query_device on %s failed: %s", x->h.name, strerror(e));
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    x->log_rd_atom = ilog2(da.max_qp_rd_atom > 0 ? (uint32_t)da.max_qp_rd_atom : 1);
    return GSHMEM_SUCCESS;
}

/* A command's failure: the call, its status and syndrome (the PRM's; the kernel's log says more). */
static gshmemi_status cmd_failed(const dx_ctx *x, const char *cmd, int pe, const char *what, const void *out, int e) {
    gshmemi_error("ibgda (devx setup): %s for %s to PE %d on %s failed: %s (command status %#x, syndrome %#x; dmesg "
                  "shows the NIC's reason)", cmd, what, pe, x->h.name, strerror(e ? e : EIO),
                  PRM_GET(out, PRM_OUT_STATUS), PRM_GET(out, PRM_OUT_SYNDROME));
    return GSHMEM_ERR_NOT_AVAILABLE;
}

/* The queues' memory, registered as one umem: GPU memory by dma-buf (else by address, through
 * peer memory), host memory by address. */
static gshmemi_status alloc_queues(dx_ctx *x, dx_qp *q, size_t sq_bytes, int pe, const char *what) {
    q->bytes = (sq_bytes + 4096 + QMEM_ALIGN - 1) & ~(size_t)(QMEM_ALIGN - 1);
    const uint32_t access = IBV_ACCESS_LOCAL_WRITE;
    if (q->gpu) {
        GSHMEMI_CUDA(cudaMalloc(&q->raw, q->bytes + QMEM_ALIGN));
        q->mem = (uint8_t *)(((uintptr_t)q->raw + QMEM_ALIGN - 1) & ~(uintptr_t)(QMEM_ALIGN - 1));
        GSHMEMI_CUDA(cudaMemset(q->mem, 0, q->bytes));
        typedef CUresult (*fn_t)(void *, CUdeviceptr, size_t, CUmemRangeHandleType, unsigned long long);
        void *fn = NULL;
        enum cudaDriverEntryPointQueryResult qr = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
        cudaError_t ce = cudaGetDriverEntryPointByVersion("cuMemGetHandleForAddressRange", &fn, 11070, cudaEnableDefault, &qr);
#else
        cudaError_t ce = cudaGetDriverEntryPoint("cuMemGetHandleForAddressRange", &fn, cudaEnableDefault, &qr);
#endif
        int fd = -1;
        if (ce == cudaSuccess && qr == cudaDriverEntryPointSuccess &&
            ((fn_t)fn)(&fd, (CUdeviceptr)(uintptr_t)q->mem, q->bytes, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0) ==
                CUDA_SUCCESS) {
            struct mlx5dv_devx_umem_in in = {.addr = 0, .size = q->bytes, .access = access,
                                             .pgsz_bitmap = ~(uint64_t)4095, .comp_mask = MLX5DV_UMEM_MASK_DMABUF,
                                             .dmabuf_fd = fd};
            q->umem = mlx5dv_devx_umem_reg_ex(x->h.ctx, &in);
            close(fd);
        }
        cudaGetLastError();
        if (!q->umem) q->umem = mlx5dv_devx_umem_reg(x->h.ctx, q->mem, q->bytes, access);
    } else {
        if (posix_memalign(&q->raw, QMEM_ALIGN, q->bytes)) return GSHMEM_ERR_NO_MEMORY;
        q->mem = q->raw;
        memset(q->mem, 0, q->bytes);
        q->umem = mlx5dv_devx_umem_reg(x->h.ctx, q->mem, q->bytes, access);
    }
    if (!q->umem) {
        gshmemi_error("ibgda (devx setup): registering the queues of %s to PE %d (%zu bytes of %s memory) as a DEVX "
                      "umem on %s failed: %s%s", what, pe, q->bytes, q->gpu ? "GPU" : "host", x->h.name,
                      strerror(errno), q->gpu ? " (GPU memory needs dma-buf support or nvidia-peermem; "
                                                "GSHMEM_IBGDA_SETUP=verbs keeps the queues in host memory)" : "");
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    /* the CQ entry starts "invalid", as the NIC expects of an entry it has not written */
    const uint8_t invalid = GSHMEM_NIC_CQE_INVALID << 4 | 1;
    uint8_t *op_own = q->mem + sq_bytes + OFF_CQE + GSHMEM_NIC_CQE_OP_OWN;
    if (q->gpu) GSHMEMI_CUDA(cudaMemcpy(op_own, &invalid, 1, cudaMemcpyHostToDevice));
    else *op_own = invalid;
    return GSHMEM_SUCCESS;
}

static gshmemi_status create_cq(dx_ctx *x, dx_qp *q, size_t sq_bytes, int pe, const char *what) {
    uint8_t in[PRM_CREATE_CQ_IN_BYTES] = {0}, out[PRM_OUT_BYTES] = {0};
    PRM_SET(in, PRM_OPCODE, PRM_CMD_CREATE_CQ);
    PRM_SET(in, PRM_CQC_CQE_SZ, PRM_CQE_SIZE_64);
    PRM_SET(in, PRM_CQC_CC, 1);
    PRM_SET(in, PRM_CQC_OI, 1);
    PRM_SET(in, PRM_CQC_LOG_CQ_SIZE, 0);
    PRM_SET(in, PRM_CQC_UAR_PAGE, q->uar->page_id);
    PRM_SET(in, PRM_CQC_C_EQN, x->eqn);
    PRM_SET(in, PRM_CQC_LOG_PAGE_SIZE, ilog2(QMEM_ALIGN) - 12);
    PRM_SET(in, PRM_CQC_DBR_UMEM_VALID, 1);
    PRM_SET(in, PRM_CQC_DBR_UMEM_ID, q->umem->umem_id);
    PRM_SET(in, PRM_CQC_DBR_ADDR, sq_bytes + OFF_CQ_REC);
    PRM_SET(in, PRM_CQ_UMEM_VALID, 1);
    PRM_SET(in, PRM_CQ_UMEM_ID, q->umem->umem_id);
    PRM_SET(in, PRM_CQ_UMEM_OFFSET, sq_bytes + OFF_CQE);
    if (!(q->cq = mlx5dv_devx_obj_create(x->h.ctx, in, sizeof in, out, sizeof out)))
        return cmd_failed(x, "CREATE_CQ (collapsed, one 64-byte entry)", pe, what, out, errno);
    q->cqn = PRM_GET(out, PRM_OUT_OBJ_NUMBER);
    return GSHMEM_SUCCESS;
}

static gshmemi_status create_qp(ibgda_ctx *c, dx_ctx *x, dx_qp *q, size_t sq_bytes, int pe, const char *what) {
    uint8_t in[PRM_QP_CMD_IN_BYTES] = {0}, out[PRM_OUT_BYTES] = {0};
    PRM_SET(in, PRM_OPCODE, PRM_CMD_CREATE_QP);
    PRM_SET(in, PRM_QPC_ST, PRM_QPC_ST_RC);
    PRM_SET(in, PRM_QPC_PM_STATE, PRM_QPC_PM_STATE_MIGRATED);
    PRM_SET(in, PRM_QPC_PD, x->h.pdn);
    PRM_SET(in, PRM_QPC_UAR_PAGE, q->uar->page_id);
    PRM_SET(in, PRM_QPC_RQ_TYPE, PRM_QPC_RQ_TYPE_ZERO_LEN);
    PRM_SET(in, PRM_QPC_CQN_SND, q->cqn);
    PRM_SET(in, PRM_QPC_CQN_RCV, q->cqn);
    PRM_SET(in, PRM_QPC_LOG_SQ_SIZE, ilog2(c->wqe_cnt));
    PRM_SET(in, PRM_QPC_LOG_RQ_SIZE, 0);
    PRM_SET(in, PRM_QPC_LOG_PAGE_SIZE, ilog2(QMEM_ALIGN) - 12);
    PRM_SET(in, PRM_QPC_PAGE_OFFSET, 0);
    PRM_SET(in, PRM_QPC_DBR_UMEM_VALID, 1);
    PRM_SET(in, PRM_QPC_DBR_UMEM_ID, q->umem->umem_id);
    PRM_SET(in, PRM_QPC_DBR_ADDR, sq_bytes + OFF_QP_REC);
    PRM_SET(in, PRM_QP_WQ_UMEM_VALID, 1);
    PRM_SET(in, PRM_QP_WQ_UMEM_ID, q->umem->umem_id);   /* the send queue at offset 0 */
    if (!(q->qp = mlx5dv_devx_obj_create(x->h.ctx, in, sizeof in, out, sizeof out)))
        return cmd_failed(x, "CREATE_QP (RC, no receive queue)", pe, what, out, errno);
    q->qpn = PRM_GET(out, PRM_OUT_OBJ_NUMBER);
    return GSHMEM_SUCCESS;
}

static gshmemi_status d_qp_create(ibgda_ctx *c, ibgda_qp *qp, ibgda_conn *mine) {
    dx_ctx *x = c->bctx;
    const char *what = qp->gpu ? "the GPU's queue pair" : "the host's queue pair";
    dx_qp *q = calloc(1, sizeof *q);
    if (!q) return GSHMEM_ERR_NO_MEMORY;
    qp->priv = q;
    q->gpu = qp->gpu;
    const size_t sq_bytes = (size_t)c->wqe_cnt * 64;
    GSHMEMI_CHECK(alloc_queues(x, q, sq_bytes, qp->pe, what));
    if (!(q->uar = mlx5dv_devx_alloc_uar(x->h.ctx, MLX5DV_UAR_ALLOC_TYPE_NC)) &&
        !(q->uar = mlx5dv_devx_alloc_uar(x->h.ctx, MLX5DV_UAR_ALLOC_TYPE_BF))) {
        gshmemi_error("ibgda (devx setup): mlx5dv_devx_alloc_uar on %s for %s to PE %d failed: %s", x->h.name, what,
                      qp->pe, strerror(errno));
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    GSHMEMI_CHECK(create_cq(x, q, sq_bytes, qp->pe, what));
    GSHMEMI_CHECK(create_qp(c, x, q, sq_bytes, qp->pe, what));
    uint8_t *ctl = q->mem + sq_bytes;
    gshmemi_hostq *h = &qp->host;   /* (for a GPU QP: GPU addresses; only the host QPs post from here) */
    h->sq = q->mem;
    h->wqe_cnt = c->wqe_cnt;
    h->qpn = q->qpn;
    h->dbrec = (volatile uint32_t *)(ctl + OFF_QP_REC);
    h->db = q->uar->reg_addr;
    h->cq = ctl + OFF_CQE;
    h->cq_cnt = 1;
    h->cq_dbrec = (volatile uint32_t *)(ctl + OFF_CQ_REC);
    h->pe = qp->pe;
    if (qp->gpu) {
        gshmem_nic_qp *d = &qp->dev;
        d->sq = q->mem;
        d->dbrec = (uint32_t *)(ctl + OFF_QP_REC);
        d->cqe = ctl + OFF_CQE;
        d->qpn = q->qpn;
        d->wqe_cnt = c->wqe_cnt;
        GSHMEMI_CHECK(gshmemi_hw_doorbell(&x->h, q->uar->reg_addr, what, &d->db));
    }
    gshmemi_hw_conn(&x->h, q->qpn, mine);
    return GSHMEM_SUCCESS;
}

static gshmemi_status modify(dx_ctx *x, ibgda_qp *qp, uint8_t *in, const char *step) {
    dx_qp *q = qp->priv;
    uint8_t out[PRM_OUT_BYTES] = {0};
    PRM_SET(in, PRM_QP_CMD_QPN, q->qpn);
    int e = mlx5dv_devx_obj_modify(q->qp, in, PRM_QP_CMD_IN_BYTES, out, sizeof out);
    if (!e) return GSHMEM_SUCCESS;
    char cmd[96];
    snprintf(cmd, sizeof cmd, "%s of queue pair 0x%x (port %d)", step, q->qpn, x->h.port);
    return cmd_failed(x, cmd, qp->pe, qp->gpu ? "the GPU's queue pair" : "the host's queue pair", out, e);
}

/* The peer's address on Ethernet: its MAC and GID as the NIC resolves them for an address
 * handle of its GID (the kernel's neighbour table). */
static gshmemi_status roce_path(dx_ctx *x, dx_qp *q, const ibgda_conn *peer, uint8_t *in, int pe) {
    struct ibv_ah_attr a;
    gshmemi_hw_ah_attr(&x->h, peer, &a);
    if (!(q->ah = ibv_create_ah(x->h.pd, &a))) {
        gshmemi_error("ibgda (devx setup): resolving PE %d's address (ibv_create_ah to its GID) on %s failed: %s (is "
                      "there an IP route to it on this port's interface?)", pe, x->h.name, strerror(errno));
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    struct mlx5dv_ah dah;
    struct mlx5dv_obj obj = {.ah = {.in = q->ah, .out = &dah}};
    int e = mlx5dv_init_obj(&obj, MLX5DV_OBJ_AH);
    if (e) {
        gshmemi_error("ibgda (devx setup): mlx5dv_init_obj(address handle) on %s failed: %s", x->h.name, strerror(e));
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    memcpy(in + PRM_QPC_ADS_RMAC_BYTE, dah.av->rmac, 6);
    memcpy(in + PRM_QPC_ADS_RGID_BYTE, dah.av->rgid, 16);
    PRM_SET(in, PRM_QPC_ADS_HOP_LIMIT, 64);
    PRM_SET(in, PRM_QPC_ADS_SRC_ADDR_INDEX, x->h.gid_index);
    /* RoCE v2's UDP source port spreads QPs over the fabric's paths */
    PRM_SET(in, PRM_QPC_ADS_UDP_SPORT, 0xc000 | (q->qpn & 0x3fff));
    return GSHMEM_SUCCESS;
}

static gshmemi_status d_qp_connect(ibgda_ctx *c, ibgda_qp *qp, const ibgda_conn *peer) {
    dx_ctx *x = c->bctx;
    dx_qp *q = qp->priv;
    if (peer->link_layer != x->h.pattr.link_layer) {
        gshmemi_error("ibgda: PE %d's NIC and this PE's (%s) are on different link layers (InfiniBand and Ethernet)",
                      qp->pe, x->h.name);
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    uint8_t in[PRM_QP_CMD_IN_BYTES];
    memset(in, 0, sizeof in);
    PRM_SET(in, PRM_OPCODE, PRM_CMD_RST2INIT_QP);
    PRM_SET(in, PRM_QPC_RWE, 1);
    PRM_SET(in, PRM_QPC_RRE, 1);
    PRM_SET(in, PRM_QPC_RAE, 1);
    PRM_SET(in, PRM_QPC_ATOMIC_MODE, PRM_QPC_ATOMIC_MODE_UP_TO_64);
    PRM_SET(in, PRM_QPC_ADS_VHCA_PORT_NUM, x->h.port);
    PRM_SET(in, PRM_QPC_ADS_PKEY_INDEX, 0);
    PRM_SET(in, PRM_QPC_PM_STATE, PRM_QPC_PM_STATE_MIGRATED);
    PRM_SET(in, PRM_QPC_COUNTER_SET_ID, 0);
    GSHMEMI_CHECK(modify(x, qp, in, "RST2INIT_QP"));

    memset(in, 0, sizeof in);
    PRM_SET(in, PRM_OPCODE, PRM_CMD_INIT2RTR_QP);
    const int mtu = peer->mtu < x->h.pattr.active_mtu ? peer->mtu : x->h.pattr.active_mtu;
    PRM_SET(in, PRM_QPC_MTU, mtu);
    PRM_SET(in, PRM_QPC_LOG_MSG_MAX, 30);
    PRM_SET(in, PRM_QPC_REMOTE_QPN, peer->qpn);
    PRM_SET(in, PRM_QPC_MIN_RNR_NAK, 12);
    PRM_SET(in, PRM_QPC_LOG_RRA_MAX, x->log_rd_atom);
    PRM_SET(in, PRM_QPC_ADS_VHCA_PORT_NUM, x->h.port);
    if (x->h.roce) {
        GSHMEMI_CHECK(roce_path(x, q, peer, in, qp->pe));
    } else {
        PRM_SET(in, PRM_QPC_ADS_RLID, peer->lid);
        PRM_SET(in, PRM_QPC_ADS_GRH, 0);
    }
    GSHMEMI_CHECK(modify(x, qp, in, "INIT2RTR_QP"));

    memset(in, 0, sizeof in);
    PRM_SET(in, PRM_OPCODE, PRM_CMD_RTR2RTS_QP);
    PRM_SET(in, PRM_QPC_LOG_ACK_REQ_FREQ, 0);
    PRM_SET(in, PRM_QPC_LOG_SRA_MAX, x->log_rd_atom);
    PRM_SET(in, PRM_QPC_NEXT_SEND_PSN, 0);
    PRM_SET(in, PRM_QPC_RETRY_COUNT, 7);
    PRM_SET(in, PRM_QPC_RNR_RETRY, 7);
    PRM_SET(in, PRM_QPC_ADS_ACK_TIMEOUT, 20);
    return modify(x, qp, in, "RTR2RTS_QP");
}

static gshmemi_status d_reg(ibgda_ctx *c, void *addr, size_t len, bool gpu, ibgda_key *k) {
    return gshmemi_hw_reg(&((dx_ctx *)c->bctx)->h, addr, len, gpu, k);
}
static gshmemi_status d_start(ibgda_ctx *c) { return gshmemi_hw_start(&((dx_ctx *)c->bctx)->h); }
static void d_stop(ibgda_ctx *c) { gshmemi_hw_stop(&((dx_ctx *)c->bctx)->h); }

static void d_describe(ibgda_ctx *c, char *buf, size_t len) {
    char d[200];
    gshmemi_hw_describe(&((dx_ctx *)c->bctx)->h, d, sizeof d);
    snprintf(buf, len, "%s, DEVX setup (queues in GPU memory, collapsed CQ)", d);
}

static void d_qp_destroy(ibgda_ctx *c, ibgda_qp *qp) {
    dx_ctx *x = c->bctx;
    dx_qp *q = qp->priv;
    if (!q) return;
    if (q->qp && mlx5dv_devx_obj_destroy(q->qp)) gshmemi_warn("ibgda: destroying queue pair 0x%x on %s failed", q->qpn, x->h.name);
    if (q->cq && mlx5dv_devx_obj_destroy(q->cq)) gshmemi_warn("ibgda: destroying CQ 0x%x on %s failed", q->cqn, x->h.name);
    if (q->ah) ibv_destroy_ah(q->ah);
    if (q->uar) mlx5dv_devx_free_uar(q->uar);
    if (q->umem && mlx5dv_devx_umem_dereg(q->umem)) gshmemi_warn("ibgda: deregistering a DEVX umem on %s failed", x->h.name);
    if (q->gpu) cudaFree(q->raw);
    else free(q->raw);
    free(q);
    qp->priv = NULL;
}

static void d_dereg(ibgda_ctx *c, ibgda_key *k) { gshmemi_hw_dereg(&((dx_ctx *)c->bctx)->h, k); }

static void d_close(ibgda_ctx *c) {
    dx_ctx *x = c->bctx;
    if (!x) return;
    gshmemi_hw_close(&x->h);
    free(x);
    c->bctx = NULL;
}

const ibgda_backend gshmemi_ibgda_devx = {
    .name = "devx",
    .open = d_open,
    .qp_create = d_qp_create,
    .qp_connect = d_qp_connect,
    .reg = d_reg,
    .start = d_start,
    .stop = d_stop,
    .describe = d_describe,
    .qp_destroy = d_qp_destroy,
    .dereg = d_dereg,
    .close = d_close,
};
