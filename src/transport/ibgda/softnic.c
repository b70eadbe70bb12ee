/* The software NIC (softnic.h): per queue pair, the doorbell and the doorbell record say which
 * work requests are published and rung; each is copied out of the send queue, checked as an
 * mlx5 NIC checks it, turned into the executor's operations and performed in the QP's order;
 * fetched values land where the request says; completions are written in order, one entry per
 * signaled request (collapsed or ring CQ), an error entry for the first request that fails.
 * Why each rule holds and what the model leaves out: docs/ibgda.md, "The software NIC". */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "softnic.h"
#include "gshmem/nic_wqe.h"

#define SN_MAX_SUB 8              /* executor operations per work request */
#define SN_MAX_WQE_BYTES (63 * 16) /* ds is 6 bits */

/* ---- small helpers ------------------------------------------------------------------ */
static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}
static uint32_t rd_be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static uint64_t rd_be64(const uint8_t *p) { return (uint64_t)rd_be32(p) << 32 | rd_be32(p + 4); }
/* A be32 word the poster writes (doorbell record, CQ record): one load, then the byte swap. */
static uint32_t ld_be32(const volatile uint32_t *p) {
    return __builtin_bswap32(__atomic_load_n((const uint32_t *)(uintptr_t)p, __ATOMIC_ACQUIRE));
}
static void wr_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static void wr_be16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static const char *synd_name(int s) {
    switch (s) {
    case GSHMEMI_SN_SYND_LOCAL_LENGTH: return "local length error";
    case GSHMEMI_SN_SYND_LOCAL_QP_OP: return "local QP operation error";
    case GSHMEMI_SN_SYND_LOCAL_PROT: return "local protection error";
    case GSHMEMI_SN_SYND_REMOTE_INVAL_REQ: return "remote invalid request";
    case GSHMEMI_SN_SYND_REMOTE_ACCESS: return "remote access error";
    case GSHMEMI_SN_SYND_REMOTE_OP: return "remote operation error";
    case GSHMEMI_SN_SYND_TRANSPORT_RETRY: return "transport retry counter exceeded";
    default: return "?";
    }
}
static const char *sub_name(int op) {
    switch (op) {
    case GSHMEM_PROXY_OP_PUT: return "put";
    case GSHMEM_PROXY_OP_GET: return "get";
    case GSHMEM_PROXY_OP_P: return "p";
    case GSHMEM_PROXY_OP_G: return "g";
    case GSHMEM_PROXY_OP_AMO: return "atomic";
    default: return "operation";
    }
}
static const char *opcode_name(int op) {
    switch (op) {
    case GSHMEMI_MLX5_OPCODE_NOP: return "NOP";
    case GSHMEMI_MLX5_OPCODE_RDMA_WRITE: return "RDMA_WRITE";
    case GSHMEMI_MLX5_OPCODE_RDMA_READ: return "RDMA_READ";
    case GSHMEMI_MLX5_OPCODE_ATOMIC_CS: return "ATOMIC_CS";
    case GSHMEMI_MLX5_OPCODE_ATOMIC_FA: return "ATOMIC_FA";
    case GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS: return "ATOMIC_MASKED_CS";
    case GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_FA: return "ATOMIC_MASKED_FA";
    default: return "unknown opcode";
    }
}

/* ---- state ---------------------------------------------------------------------------- */
enum { OS_FREE = 0, OS_PARSED, OS_RUNNING, OS_EFFECT, OS_COMPLETE, OS_ERROR };
enum { K_NOP, K_WRITE, K_READ, K_ATOMIC, K_MASKED };   /* K_MASKED: a compare-and-swap loop */

/* One executor operation of a work request. */
typedef struct sn_sub {
    uint8_t op, amo;              /* GSHMEM_PROXY_OP_*, GSHMEM_PROXY_AMO_* */
    uint32_t size;
    uint64_t raddr, laddr;        /* laddr: a local address, or P's value */
    uint64_t compare;             /* AMO CSWAP; G: the bytes read, until placed */
    uint8_t *place;               /* G: where the NIC itself puts the bytes (host memory) */
} sn_sub;

typedef struct sn_op {
    uint64_t idx;                 /* first basic block */
    uint32_t nbb, bytes;
    uint8_t opcode, flags, kind, state;
    uint8_t n_sub, sub;           /* operations, and the one running */
    sn_sub s[SN_MAX_SUB];
    gshmem_proxy_ret ret;
    uint64_t tag;
    uint8_t *res;                 /* an atomic's old value lands here (host memory) */
    uint32_t res_size;
    uint64_t value;               /* the old value */
    uint64_t swap, compare, swap_mask, compare_mask;   /* K_MASKED operands */
    uint8_t masked_fa, mstep;     /* K_MASKED: fetch-add form; 0 fetch, 1 compare-swap */
    double start_at, place_at;
    uint8_t syndrome, vendor;     /* OS_ERROR */
} sn_op;

typedef struct sn_q {
    gshmemi_sn_qp q;
    uint32_t mask;
    uint64_t pi;                  /* blocks published (the doorbell record), 64-bit */
    uint64_t rung;                /* WQEs starting below it were rung */
    uint64_t parsed;              /* next block to read */
    uint64_t head;                /* oldest WQE not retired */
    uint64_t db_last;
    bool db_any;
    uint64_t reported_end;        /* end of the last WQE a written completion covers */
    uint64_t cqes;                /* completion entries written */
    sn_op *pend;                  /* the newest signaled WQE retired, its entry not written */
    uint64_t pend_end;
    unsigned pend_n;
    double pend_since;
    bool stopped;                 /* an error WQE was queued: read nothing after it */
    sn_op qerr;                   /* an error found before a WQE could be read (doorbell, record,
                                     control segment): it completes at the next index once
                                     everything before it retired */
    bool error;                   /* in error: nothing more is performed */
    sn_op *ops;                   /* [wqe_cnt], by first block */
} sn_q;

typedef struct sn_region {
    uint64_t addr, len;
    uint32_t key;
    bool host;
} sn_region;

typedef struct sn_regions {
    sn_region *r;
    int n, cap;
} sn_regions;

struct gshmemi_softnic {
    gshmemi_sn_params p;
    sn_q *qs;
    int n_qs, cap_qs;
    pthread_mutex_t reg_lock;
    sn_regions local;
    sn_regions *remote;           /* [npes] */
    uint64_t rng;
    pthread_t thread;
    int started, stop;            /* atomics */
    uint64_t performed;           /* atomic */
    int err_synd, err_vendor;     /* the first error entry */
    char err_msg[1024];
};

static uint64_t rnd(gshmemi_softnic *n) {
    uint64_t x = n->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return n->rng = x;
}
static double rnd_delay(gshmemi_softnic *n, unsigned max_us) {
    return max_us ? (double)(rnd(n) % (max_us + 1)) * 1e-6 : 0.0;
}

/* ---- registrations ------------------------------------------------------------------ */
static gshmemi_status add_region(sn_regions *rs, uint64_t addr, uint64_t len, uint32_t key, bool host) {
    if (rs->n == rs->cap) {
        int cap = rs->cap ? 2 * rs->cap : 16;
        sn_region *r = realloc(rs->r, (size_t)cap * sizeof *r);
        if (!r) return GSHMEM_ERR_NO_MEMORY;
        rs->r = r;
        rs->cap = cap;
    }
    rs->r[rs->n++] = (sn_region){.addr = addr, .len = len, .key = key, .host = host};
    return GSHMEM_SUCCESS;
}

gshmemi_status gshmemi_sn_reg_local(gshmemi_softnic *n, uint64_t addr, uint64_t len, uint32_t lkey, bool host_rw) {
    pthread_mutex_lock(&n->reg_lock);
    gshmemi_status st = add_region(&n->local, addr, len, lkey, host_rw);
    pthread_mutex_unlock(&n->reg_lock);
    return st;
}

gshmemi_status gshmemi_sn_reg_remote(gshmemi_softnic *n, int pe, uint64_t addr, uint64_t len, uint32_t rkey) {
    if (pe < 0 || pe >= n->p.npes) {
        gshmemi_error("software NIC: gshmemi_sn_reg_remote: PE %d is out of range [0, %d)", pe, n->p.npes);
        return GSHMEM_ERR_INVALID_ARG;
    }
    pthread_mutex_lock(&n->reg_lock);
    gshmemi_status st = add_region(&n->remote[pe], addr, len, rkey, false);
    pthread_mutex_unlock(&n->reg_lock);
    return st;
}

void gshmemi_sn_unreg(gshmemi_softnic *n, int pe, uint64_t addr) {
    if (pe >= n->p.npes) return;
    pthread_mutex_lock(&n->reg_lock);
    sn_regions *rs = pe < 0 ? &n->local : &n->remote[pe];
    for (int i = 0; i < rs->n; i++)
        if (rs->r[i].addr == addr) {
            rs->r[i--] = rs->r[--rs->n];
            break;
        }
    pthread_mutex_unlock(&n->reg_lock);
}

/* The region with key `key`: 0 and *out, or the vendor code of what is wrong (bad key, or the
 * range outside the registration). */
static int find_key(gshmemi_softnic *n, const sn_regions *rs, uint32_t key, uint64_t a, uint64_t len, bool local,
                    sn_region *out) {
    int found = -1;
    pthread_mutex_lock(&n->reg_lock);
    for (int i = 0; i < rs->n; i++)
        if (rs->r[i].key == key) {
            found = i;
            *out = rs->r[i];
            break;
        }
    pthread_mutex_unlock(&n->reg_lock);
    if (found < 0) return local ? GSHMEMI_SN_BAD_LKEY : GSHMEMI_SN_BAD_RKEY;
    if (a < out->addr || len > out->len || a - out->addr > out->len - len)
        return local ? GSHMEMI_SN_LOCAL_BOUNDS : GSHMEMI_SN_REMOTE_BOUNDS;
    return 0;
}

/* ---- errors --------------------------------------------------------------------------- */
/* Queues an error at the next WQE to read: it completes with an error entry once every WQE
 * before it has completed (in order, as the NIC reports), and the QP reads nothing after it. */
static void fail_at(gshmemi_softnic *n, sn_q *q, sn_op *op, int syndrome, int vendor, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static void fail_at(gshmemi_softnic *n, sn_q *q, sn_op *op, int syndrome, int vendor, const char *fmt, ...) {
    char why[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    op->state = OS_ERROR;
    op->syndrome = (uint8_t)syndrome;
    op->vendor = (uint8_t)vendor;
    q->stopped = true;
    char msg[sizeof n->err_msg];
    snprintf(msg, sizeof msg,
             "software NIC of PE %d: %s 0x%06x to PE %d: WQE index %u (%s): %s; it completes with an error "
             "(syndrome 0x%02x, %s; software NIC check %d) and the QP stops (docs/ibgda.md, \"The software NIC\")",
             n->p.mype, q->q.what ? q->q.what : "QP", q->q.qpn, q->q.pe, (unsigned)(op->idx & 0xffff),
             opcode_name(op->opcode), why, syndrome, synd_name(syndrome), vendor);
    gshmemi_error("%s", msg);
    if (!n->err_synd) {
        n->err_synd = syndrome;
        n->err_vendor = vendor;
        snprintf(n->err_msg, sizeof n->err_msg, "%s", msg);
    }
}

/* ---- completions ---------------------------------------------------------------------- */
/* The entry for completion number q->cqes: its slot, or NULL when a ring has no room (the
 * readers are more than a ring behind). */
static uint8_t *next_entry(sn_q *q) {
    if (q->q.cq_cnt == 1) return q->q.cq;
    uint32_t ci24 = ld_be32(q->q.cq_dbrec) & 0xffffff;
    uint64_t read = q->cqes - ((q->cqes - ci24) & 0xffffff);
    if (q->cqes - read >= q->q.cq_cnt) return NULL;
    return q->q.cq + (size_t)(q->cqes & (q->q.cq_cnt - 1)) * 64;
}

/* Writes an entry: bytes 0..55 first, then the last 8 (counter, opcode, owner) in one release
 * store, the word a reader loads at once (gshmem/device/chan_nic.h). */
static bool write_entry(gshmemi_softnic *n, sn_q *q, const sn_op *op, int cqe_op) {
    uint8_t *e = next_entry(q);
    if (!e) {
        q->error = true;
        char msg[sizeof n->err_msg];
        snprintf(msg, sizeof msg,
                 "software NIC of PE %d: %s 0x%06x to PE %d: completion queue overrun: %llu entries written, the "
                 "readers' record says fewer than %llu were read (the ring has %u): the QP stops",
                 n->p.mype, q->q.what ? q->q.what : "QP", q->q.qpn, q->q.pe, (unsigned long long)q->cqes,
                 (unsigned long long)(q->cqes - q->q.cq_cnt + 1), q->q.cq_cnt);
        gshmemi_error("%s", msg);
        if (!n->err_synd) {
            n->err_synd = GSHMEMI_SN_SYND_LOCAL_QP_OP;
            n->err_vendor = GSHMEMI_SN_CQ_OVERRUN;
            snprintf(n->err_msg, sizeof n->err_msg, "%s", msg);
        }
        return false;
    }
    uint8_t b[64];
    memset(b, 0, sizeof b);
    wr_be32(b + GSHMEM_NIC_CQE_BYTE_CNT, op->bytes);
    if (cqe_op == GSHMEM_NIC_CQE_REQ_ERR) {
        b[GSHMEM_NIC_CQE_VENDOR_SYNDROME] = op->vendor;
        b[GSHMEM_NIC_CQE_SYNDROME] = op->syndrome;
    }
    wr_be32(b + GSHMEM_NIC_CQE_QPN, (uint32_t)op->opcode << 24 | (q->q.qpn & 0xffffff));
    wr_be16(b + GSHMEM_NIC_CQE_WQE_COUNTER, (uint16_t)op->idx);
    const uint64_t lap = q->q.cq_cnt == 1 ? q->cqes : q->cqes / q->q.cq_cnt;
    b[GSHMEM_NIC_CQE_OP_OWN] = (uint8_t)(cqe_op << 4 | (lap & 1));
    memcpy(e, b, 56);
    uint64_t last;
    memcpy(&last, b + 56, 8);
    __atomic_store_n((uint64_t *)(void *)(e + 56), last, __ATOMIC_RELEASE);
    q->cqes++;
    return true;
}

/* The entry of the newest retired signaled WQE, covering every WQE before it. */
static void flush_pending(gshmemi_softnic *n, sn_q *q) {
    if (!q->pend) return;
    if (write_entry(n, q, q->pend, GSHMEM_NIC_CQE_REQ)) q->reported_end = q->pend_end;
    q->pend = NULL;
    q->pend_n = 0;
}

/* ---- reading work requests ------------------------------------------------------------ */
static void copy_wqe(const sn_q *q, uint64_t idx, uint32_t nbb, uint8_t *buf) {
    for (uint32_t b = 0; b < nbb; b++)
        memcpy(buf + 64 * b, q->q.sq + (size_t)((idx + b) & q->mask) * 64, 64);
}

/* Checks a local data segment (key, bounds) and returns the vendor code of a failure (0: ok). */
static int check_local(gshmemi_softnic *n, uint32_t lkey, uint64_t a, uint64_t len, sn_region *r) {
    return find_key(n, &n->local, lkey, a, len, true, r);
}
static int check_remote(gshmemi_softnic *n, int pe, uint32_t rkey, uint64_t a, uint64_t len) {
    sn_region r;
    return find_key(n, &n->remote[pe], rkey, a, len, false, &r);
}
/* mlx5's byte count of a data segment: 0 stands for 2 GiB. */
static uint64_t seg_len(uint32_t bc) { return bc ? bc : 1ull << 31; }

static bool all_ones(uint64_t v, uint32_t size) { return size == 4 ? (uint32_t)v == 0xffffffffu : v == ~0ull; }

/* The masked atomics as the executor's operations where one fits (docs/ibgda.md, "Atomics"),
 * else the compare-and-swap loop. */
static void masked_kind(sn_op *op, uint32_t size) {
    sn_sub *s = &op->s[0];
    const uint64_t m = size == 4 ? 0xffffffffull : ~0ull;
    op->kind = K_ATOMIC;
    if (op->masked_fa) {
        if ((op->compare & m) == 0) { s->amo = GSHMEM_PROXY_AMO_ADD; s->laddr = op->swap & m; return; }
        if (all_ones(op->compare, size)) { s->amo = GSHMEM_PROXY_AMO_XOR; s->laddr = op->swap & m; return; }
    } else {
        const uint64_t sw = op->swap & m, sm = op->swap_mask & m, cm = op->compare_mask & m;
        if (all_ones(cm, size) && all_ones(sm, size)) {
            s->amo = GSHMEM_PROXY_AMO_CSWAP;
            s->laddr = sw;
            s->compare = op->compare & m;
            return;
        }
        if (cm == 0 && all_ones(sm, size)) { s->amo = GSHMEM_PROXY_AMO_SWAP; s->laddr = sw; return; }
        if (cm == 0 && sw == sm) { s->amo = GSHMEM_PROXY_AMO_OR; s->laddr = sw; return; }
        if (cm == 0 && (sw & sm) == 0 && (sw | sm) == m) { s->amo = GSHMEM_PROXY_AMO_AND; s->laddr = sw; return; }
    }
    op->kind = K_MASKED;
    op->mstep = 0;
    s->amo = GSHMEM_PROXY_AMO_FETCH;
    s->laddr = 0;
}

/* The masked operations' effect on an old value (the mlx5 definitions, nic_wqe.h):
 * *apply = false where a compare-swap's comparison fails. */
static uint64_t masked_new(const sn_op *op, uint64_t old, uint32_t size, bool *apply) {
    const uint64_t m = size == 4 ? 0xffffffffull : ~0ull;
    old &= m;
    *apply = true;
    if (op->masked_fa) {
        uint64_t out = 0, carry = 0;
        for (uint32_t i = 0; i < 8 * size; i++) {
            const uint64_t bit = 1ull << i;
            const uint64_t sum = ((old & bit) ? 1 : 0) + ((op->swap & bit) ? 1 : 0) + carry;
            out |= (sum & 1) ? bit : 0;
            carry = (op->compare & bit) ? 0 : sum >> 1;   /* a boundary bit drops the carry out of it */
        }
        return out & m;
    }
    if (((old ^ op->compare) & op->compare_mask & m) != 0) {
        *apply = false;
        return old;
    }
    return ((old & ~op->swap_mask) | (op->swap & op->swap_mask)) & m;
}

/* Reads and checks the WQE at q->parsed into an op (OS_PARSED), or queues its error. Returns
 * false when nothing more can be read now. */
/* The error slot of the next index, for errors found before the WQE could be read. */
static sn_op *queued_error(sn_q *q, uint8_t opcode) {
    memset(&q->qerr, 0, sizeof q->qerr);
    q->qerr.idx = q->parsed;
    q->qerr.nbb = 1;
    q->qerr.opcode = opcode;
    return &q->qerr;
}

static bool parse_one(gshmemi_softnic *n, sn_q *q) {
    if (q->stopped || q->parsed >= q->pi || q->parsed >= q->rung) return false;
    /* the slot of index parsed - wqe_cnt retired: parsed < pi <= reported_end + wqe_cnt <= head + wqe_cnt */
    sn_op *op = &q->ops[q->parsed & q->mask];
    memset(op, 0, sizeof *op);
    op->idx = q->parsed;
    op->nbb = 1;
    uint8_t w[SN_MAX_WQE_BYTES + 64];
    copy_wqe(q, q->parsed, 1, w);
    const uint32_t oic = rd_be32(w), qd = rd_be32(w + 4);
    op->opcode = (uint8_t)oic;
    op->flags = w[11];
    const uint8_t opmod = (uint8_t)(oic >> 24);
    const uint16_t idx = (uint16_t)(oic >> 8);
    const uint32_t ds = qd & 0xff, qpn = qd >> 8;
    const int pe = q->q.pe;
    if (idx != (uint16_t)q->parsed) {
        fail_at(n, q, queued_error(q, op->opcode), GSHMEMI_SN_SYND_LOCAL_QP_OP, GSHMEMI_SN_BAD_INDEX,
                "its index field says %u, but the next WQE of the queue is %u (WQE indices run on without gaps, "
                "modulo 65536; a poster that skipped or reused an index, or overwrote an unread slot)",
                idx, (unsigned)(q->parsed & 0xffff));
        return true;
    }
    if (qpn != (q->q.qpn & 0xffffff)) {
        fail_at(n, q, queued_error(q, op->opcode), GSHMEMI_SN_SYND_LOCAL_QP_OP, GSHMEMI_SN_BAD_QPN,
                "its control segment names QP 0x%06x", qpn);
        return true;
    }
    if (ds == 0 || ds > 63) {
        fail_at(n, q, queued_error(q, op->opcode), GSHMEMI_SN_SYND_LOCAL_QP_OP, GSHMEMI_SN_BAD_DS,
                "ds %u is not 1..63", ds);
        return true;
    }
    op->nbb = (ds * 16 + 63) / 64;
    if (q->parsed + op->nbb > q->pi) {
        fail_at(n, q, queued_error(q, op->opcode), GSHMEMI_SN_SYND_LOCAL_QP_OP, GSHMEMI_SN_SPAN,
                "ds %u takes %u basic blocks, but the doorbell record publishes only %llu from it", ds, op->nbb,
                (unsigned long long)(q->pi - q->parsed));
        return true;
    }
    if (op->flags >> 5 > 4) {
        fail_at(n, q, queued_error(q, op->opcode), GSHMEMI_SN_SYND_LOCAL_QP_OP, GSHMEMI_SN_BAD_FENCE,
                "fence mode %u (flags 0x%02x) is not one of mlx5's 0..4", op->flags >> 5, op->flags);
        return true;
    }
    copy_wqe(q, q->parsed, op->nbb, w);
    q->parsed += op->nbb;
    op->state = OS_PARSED;
    const uint8_t *raddr_seg = w + 16;
    const uint64_t raddr = rd_be64(raddr_seg);
    const uint32_t rkey = rd_be32(raddr_seg + 8);
    int v;
    sn_region lr;
    switch (op->opcode) {
    case GSHMEMI_MLX5_OPCODE_NOP:
        if (opmod) break;
        op->kind = K_NOP;
        return true;
    case GSHMEMI_MLX5_OPCODE_RDMA_WRITE:
    case GSHMEMI_MLX5_OPCODE_RDMA_READ: {
        const bool write = op->opcode == GSHMEMI_MLX5_OPCODE_RDMA_WRITE;
        if (opmod) break;
        if (ds < 2) {
            fail_at(n, q, op, GSHMEMI_SN_SYND_LOCAL_QP_OP, GSHMEMI_SN_BAD_DS,
                    "ds %u: an RDMA %s needs a control and a remote-address segment", ds, write ? "write" : "read");
            return true;
        }
        op->kind = write ? K_WRITE : K_READ;
        const uint8_t *seg = w + 32;
        if (ds > 2 && (rd_be32(seg) & GSHMEMI_MLX5_INLINE_SEG)) {
            const uint32_t len = rd_be32(seg) & ~GSHMEMI_MLX5_INLINE_SEG;
            if (!write) {
                fail_at(n, q, op, GSHMEMI_SN_SYND_LOCAL_QP_OP, GSHMEMI_SN_BAD_INLINE, "an RDMA read with inline data");
                return true;
            }
            if (4 + len > (ds - 2) * 16) {
                fail_at(n, q, op, GSHMEMI_SN_SYND_LOCAL_LENGTH, GSHMEMI_SN_BAD_INLINE,
                        "%u inline bytes do not fit its ds %u (at most %u)", len, ds, (ds - 2) * 16 - 4);
                return true;
            }
            if (len > 8 * SN_MAX_SUB) {
                fail_at(n, q, op, GSHMEMI_SN_SYND_LOCAL_QP_OP, GSHMEMI_SN_UNMODELLED,
                        "%u inline bytes: the software NIC performs at most %d", len, 8 * SN_MAX_SUB);
                return true;
            }
            if (len && (v = check_remote(n, pe, rkey, raddr, len))) {
                fail_at(n, q, op, GSHMEMI_SN_SYND_REMOTE_ACCESS, v,
                        "remote range 0x%llx + %u with rkey 0x%x is %s at PE %d", (unsigned long long)raddr, len,
                        rkey, v == GSHMEMI_SN_BAD_RKEY ? "not registered with that key" : "outside its registration", pe);
                return true;
            }
            op->bytes = len;
            for (uint32_t o = 0; o < len; o += 8) {   /* one 8-byte store (a signal) stays one */
                sn_sub *s = &op->s[op->n_sub++];
                s->op = GSHMEM_PROXY_OP_P;
                s->size = len - o < 8 ? len - o : 8;
                s->raddr = raddr + o;
                memcpy(&s->laddr, seg + 4 + o, s->size);
            }
            return true;
        }
        uint64_t off = 0;
        for (uint32_t i = 0; i < ds - 2; i++) {
            const uint8_t *d = w + 32 + 16 * i;
            const uint64_t len = seg_len(rd_be32(d));
            const uint32_t lkey = rd_be32(d + 4);
            const uint64_t laddr = rd_be64(d + 8);
            if (op->n_sub == SN_MAX_SUB) {
                fail_at(n, q, op, GSHMEMI_SN_SYND_LOCAL_QP_OP, GSHMEMI_SN_UNMODELLED,
                        "%u data segments: the software NIC performs at most %d", ds - 2, SN_MAX_SUB);
                return true;
            }
            if ((v = check_local(n, lkey, laddr, len, &lr))) {
                fail_at(n, q, op, GSHMEMI_SN_SYND_LOCAL_PROT, v,
                        "data segment %u: local range 0x%llx + %llu with lkey 0x%x is %s", i,
                        (unsigned long long)laddr, (unsigned long long)len, lkey,
                        v == GSHMEMI_SN_BAD_LKEY ? "not registered with that key" : "outside its registration");
                return true;
            }
            if ((v = check_remote(n, pe, rkey, raddr + off, len))) {
                fail_at(n, q, op, GSHMEMI_SN_SYND_REMOTE_ACCESS, v,
                        "remote range 0x%llx + %llu with rkey 0x%x is %s at PE %d", (unsigned long long)(raddr + off),
                        (unsigned long long)len, rkey,
                        v == GSHMEMI_SN_BAD_RKEY ? "not registered with that key" : "outside its registration", pe);
                return true;
            }
            sn_sub *s = &op->s[op->n_sub++];
            s->raddr = raddr + off;
            s->size = (uint32_t)len;
            s->laddr = laddr;
            if (write) s->op = GSHMEM_PROXY_OP_PUT;
            else if (lr.host && len <= 8) {   /* small reads into host memory: the NIC places them */
                s->op = GSHMEM_PROXY_OP_G;
                s->place = (uint8_t *)(uintptr_t)laddr;
            } else s->op = GSHMEM_PROXY_OP_GET;
            off += len;
        }
        op->bytes = (uint32_t)off;
        return true;
    }
    case GSHMEMI_MLX5_OPCODE_ATOMIC_CS:
    case GSHMEMI_MLX5_OPCODE_ATOMIC_FA:
    case GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS:
    case GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_FA: {
        const bool masked = op->opcode >= GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS;
        uint32_t size = 8;
        if (masked) {
            if ((opmod & 0xf8) != 0x08) break;
            if (opmod > GSHMEMI_MLX5_OPMOD_EXT_ATOMIC_8) {
                fail_at(n, q, op, GSHMEMI_SN_SYND_LOCAL_QP_OP, GSHMEMI_SN_UNMODELLED,
                        "extended atomic of %u bytes (opmod 0x%02x): the software NIC performs 4 and 8", 4u << (opmod & 7),
                        opmod);
                return true;
            }
            size = opmod == GSHMEMI_MLX5_OPMOD_EXT_ATOMIC_4 ? 4 : 8;
        } else if (opmod) {
            break;
        }
        const bool two = op->opcode == GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS && size == 8;
        const uint32_t want = two ? 5 : 4;
        if (ds != want) {
            fail_at(n, q, op, GSHMEMI_SN_SYND_LOCAL_QP_OP, GSHMEMI_SN_BAD_DS,
                    "ds %u: this %u-byte atomic takes %u (control, remote address, %s, data)", ds, size, want,
                    two ? "two atomic segments" : "atomic segment");
            return true;
        }
        const uint8_t *a = w + 32, *d = w + 16 * (want - 1);
        const uint32_t bc = rd_be32(d), lkey = rd_be32(d + 4);
        const uint64_t laddr = rd_be64(d + 8);
        if (bc != size) {
            fail_at(n, q, op, GSHMEMI_SN_SYND_LOCAL_LENGTH, GSHMEMI_SN_ATOMIC_SIZE,
                    "its data segment's byte count %u is not the atomic's size %u", bc, size);
            return true;
        }
        if (raddr & (size - 1)) {
            fail_at(n, q, op, GSHMEMI_SN_SYND_REMOTE_INVAL_REQ, GSHMEMI_SN_ATOMIC_ALIGN,
                    "remote address 0x%llx is not aligned to the atomic's %u bytes", (unsigned long long)raddr, size);
            return true;
        }
        if ((v = check_local(n, lkey, laddr, size, &lr))) {
            fail_at(n, q, op, GSHMEMI_SN_SYND_LOCAL_PROT, v,
                    "the old value's buffer 0x%llx + %u with lkey 0x%x is %s", (unsigned long long)laddr, size, lkey,
                    v == GSHMEMI_SN_BAD_LKEY ? "not registered with that key" : "outside its registration");
            return true;
        }
        if (!lr.host) {
            fail_at(n, q, op, GSHMEMI_SN_SYND_LOCAL_QP_OP, GSHMEMI_SN_UNMODELLED,
                    "the old value's buffer 0x%llx is registered memory the software NIC cannot write (it places "
                    "fetched values in host-mapped memory only, as the transport's fetch slots are)",
                    (unsigned long long)laddr);
            return true;
        }
        if ((v = check_remote(n, pe, rkey, raddr, size))) {
            fail_at(n, q, op, GSHMEMI_SN_SYND_REMOTE_ACCESS, v,
                    "remote word 0x%llx with rkey 0x%x is %s at PE %d", (unsigned long long)raddr, rkey,
                    v == GSHMEMI_SN_BAD_RKEY ? "not registered with that key" : "outside its registration", pe);
            return true;
        }
        op->res = (uint8_t *)(uintptr_t)laddr;
        op->res_size = size;
        op->bytes = size;
        op->n_sub = 1;
        sn_sub *s = &op->s[0];
        s->op = GSHMEM_PROXY_OP_AMO;
        s->size = size;
        s->raddr = raddr;
        if (!masked) {
            op->kind = K_ATOMIC;
            s->amo = op->opcode == GSHMEMI_MLX5_OPCODE_ATOMIC_FA ? GSHMEM_PROXY_AMO_ADD : GSHMEM_PROXY_AMO_CSWAP;
            s->laddr = rd_be64(a);
            s->compare = rd_be64(a + 8);
            return true;
        }
        op->masked_fa = op->opcode == GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_FA;
        if (size == 4) {   /* {swap|add, compare|boundary, swap_mask, compare_mask} of 4 bytes */
            op->swap = rd_be32(a);
            op->compare = rd_be32(a + 4);
            op->swap_mask = rd_be32(a + 8);
            op->compare_mask = rd_be32(a + 12);
        } else {
            op->swap = rd_be64(a);
            op->compare = rd_be64(a + 8);
            op->swap_mask = two ? rd_be64(a + 16) : 0;
            op->compare_mask = two ? rd_be64(a + 24) : 0;
        }
        masked_kind(op, size);
        return true;
    }
    default:
        fail_at(n, q, op, GSHMEMI_SN_SYND_LOCAL_QP_OP, GSHMEMI_SN_BAD_OPCODE,
                "opcode 0x%02x is not one this QP takes (NOP, RDMA write/read, atomics)", op->opcode);
        return true;
    }
    fail_at(n, q, op, GSHMEMI_SN_SYND_LOCAL_QP_OP, GSHMEMI_SN_BAD_OPMOD, "opmod 0x%02x is not legal for %s",
            opmod, opcode_name(op->opcode));
    return true;
}

/* Reads the doorbell and the doorbell record: what is published and what was rung. */
static void watch(gshmemi_softnic *n, sn_q *q) {
    if (q->stopped) return;
    const uint64_t db = __atomic_load_n(q->q.db, __ATOMIC_ACQUIRE);
    /* after the doorbell: the poster wrote the record first, so it covers the rung WQE */
    const uint32_t rec = ld_be32(&q->q.dbrec[1]);
    q->pi += (uint16_t)((uint16_t)rec - (uint16_t)q->pi);
    if (q->pi - q->reported_end > q->q.wqe_cnt) {
        fail_at(n, q, queued_error(q, 0), GSHMEMI_SN_SYND_LOCAL_QP_OP, GSHMEMI_SN_OVERRUN,
                "send queue overrun: the doorbell record publishes blocks up to %llu, but only those below %llu "
                "have been reported complete, more than the queue's %u slots apart (a poster reused slots whose "
                "WQEs had not completed)",
                (unsigned long long)q->pi, (unsigned long long)q->reported_end, q->q.wqe_cnt);
        return;
    }
    /* never rung (a doorbell is never 0: its ds is at least 1), or nothing new */
    if ((!q->db_any && db == 0) || (q->db_any && db == q->db_last)) return;
    uint8_t b[8];
    memcpy(b, &db, 8);
    const uint32_t oic = rd_be32(b), qpn = rd_be32(b + 4) >> 8;
    const uint16_t idx = (uint16_t)(oic >> 8);
    const uint64_t i64 = q->pi - 1 - (uint16_t)((uint16_t)(q->pi - 1) - idx);
    if (qpn != (q->q.qpn & 0xffffff)) {
        fail_at(n, q, queued_error(q, (uint8_t)oic), GSHMEMI_SN_SYND_LOCAL_QP_OP, GSHMEMI_SN_BAD_QPN,
                "the doorbell (0x%016llx) names QP 0x%06x", (unsigned long long)db, qpn);
        return;
    }
    if (q->pi == 0 || q->pi - i64 > q->q.wqe_cnt) {
        fail_at(n, q, queued_error(q, (uint8_t)oic), GSHMEMI_SN_SYND_LOCAL_QP_OP, GSHMEMI_SN_BAD_DOORBELL,
                "the doorbell rings WQE %u, which the doorbell record (%u) does not publish: the record must be "
                "written before the doorbell", idx, rec & 0xffff);
        return;
    }
    /* The rung WQE's slot, unless reused since, holds the doorbell's opcode word and ds (the QP
     * number has checks of its own). It cannot have been reused with the same index: that takes
     * completions, which only this thread writes. */
    const uint8_t *slot = q->q.sq + (size_t)(i64 & q->mask) * 64;
    if ((uint16_t)(rd_be32(slot) >> 8) == idx && (memcmp(slot, b, 4) != 0 || slot[7] != b[7])) {
        fail_at(n, q, queued_error(q, (uint8_t)oic), GSHMEMI_SN_SYND_LOCAL_QP_OP, GSHMEMI_SN_BAD_DOORBELL,
                "the doorbell (0x%016llx) is not the first 8 bytes of WQE %u", (unsigned long long)db, idx);
        return;
    }
    q->db_last = db;
    q->db_any = true;
    if (i64 + 1 > q->rung) q->rung = i64 + 1;
}

/* ---- performing ----------------------------------------------------------------------- */
static int start_sub(gshmemi_softnic *n, sn_q *q, sn_op *op) {
    const sn_sub *s = &op->s[op->sub];
    gshmem_proxy_desc d;
    memset(&d, 0, sizeof d);
    d.op = s->op;
    d.amo = s->amo;
    d.pe = q->q.pe;
    d.size = s->size;
    d.raddr = s->raddr;
    d.laddr = s->laddr;
    d.compare = s->compare;
    if (s->op == GSHMEM_PROXY_OP_AMO) d.flags = GSHMEM_PROXY_F_FETCH;
    memset(&op->ret, 0, sizeof op->ret);
    int st = n->p.exec.start(n->p.exec.ctx, &d, &op->ret, &op->tag);
    if (st) return st;
    op->state = OS_RUNNING;
    return 0;
}

static void effect_done(gshmemi_softnic *n, sn_op *op, double now) {
    op->state = OS_EFFECT;
    op->place_at = now + ((op->res || op->kind == K_READ) && n->p.chaos.on ? rnd_delay(n, n->p.chaos.late_us) : 0);
    __atomic_fetch_add(&n->performed, 1, __ATOMIC_RELAXED);
}

/* The executor's answer to the running operation: the next one, or the work request's effect
 * is complete. An executor failure completes the request with an error. */
static void finish_sub(gshmemi_softnic *n, sn_q *q, sn_op *op, double now) {
    const sn_sub *s = &op->s[op->sub];
    if (op->ret.status) {
        const int st = op->ret.status;
        fail_at(n, q, op, st == GSHMEM_ERR_TIMEOUT ? GSHMEMI_SN_SYND_TRANSPORT_RETRY
                          : st == GSHMEM_ERR_INVALID_ARG ? GSHMEMI_SN_SYND_REMOTE_ACCESS : GSHMEMI_SN_SYND_REMOTE_OP,
                GSHMEMI_SN_EXEC_FAILED, "the fabric link failed its %s of %u bytes at 0x%llx (%s; the message above "
                "says why)", sub_name(s->op), s->size, (unsigned long long)s->raddr, gshmemi_status_str(st));
        return;
    }
    if (s->op == GSHMEM_PROXY_OP_G) op->s[op->sub].compare = op->ret.value;   /* placed with the op */
    if (op->kind == K_MASKED) {
        const uint64_t got = op->ret.value;
        if (op->mstep == 0) op->value = got;
        else if (got == op->value) {   /* the compare-swap took: op->value is the old value */
            effect_done(n, op, now);
            return;
        } else op->value = got;        /* changed meanwhile: again from what it holds now */
        bool apply;
        const uint64_t nv = masked_new(op, op->value, op->res_size, &apply);
        if (!apply) {
            effect_done(n, op, now);
            return;
        }
        sn_sub *c = &op->s[0];
        c->amo = GSHMEM_PROXY_AMO_CSWAP;
        c->laddr = nv;
        c->compare = op->value;
        op->mstep = 1;
        op->sub = 0;
        if (start_sub(n, q, op)) fail_at(n, q, op, GSHMEMI_SN_SYND_REMOTE_OP, GSHMEMI_SN_EXEC_FAILED,
                                         "the executor refused a compare-and-swap");
        return;
    }
    if (op->res) op->value = op->ret.value;
    if (++op->sub < op->n_sub) {
        if (start_sub(n, q, op)) fail_at(n, q, op, GSHMEMI_SN_SYND_REMOTE_OP, GSHMEMI_SN_EXEC_FAILED,
                                         "the executor refused an operation");
        return;
    }
    effect_done(n, op, now);
}

/* Places an atomic's old value: 4 bytes big-endian (the masked forms' byte order), 8 bytes in
 * host order (an 8-byte responder in host-endian mode; docs/ibgda.md, "Byte order"). */
static void place(sn_op *op) {
    for (int i = 0; i < op->n_sub; i++)   /* small reads: the bytes as they were in memory */
        if (op->s[i].op == GSHMEM_PROXY_OP_G) memcpy(op->s[i].place, &op->s[i].compare, op->s[i].size);
    if (!op->res) return;
    if (op->res_size == 4) {
        uint8_t b[4];
        wr_be32(b, (uint32_t)op->value);
        memcpy(op->res, b, 4);
    } else {
        memcpy(op->res, &op->value, 8);
    }
}

/* Whether op may start: every earlier WQE's effect is complete (one QP performs in order), and
 * with a fence every earlier WQE is complete, fetched values placed. */
static bool may_start(const sn_q *q, const sn_op *op, double now) {
    for (uint64_t i = q->head; i < op->idx;) {
        const sn_op *e = &q->ops[i & q->mask];
        if (e->state < OS_EFFECT || e->state == OS_ERROR) return false;
        if (e->state != OS_COMPLETE && (op->flags >> 5)) return false;
        i += e->nbb;
    }
    return now >= op->start_at;
}

static int run_q(gshmemi_softnic *n, sn_q *q, double now) {
    int work = 0;
    watch(n, q);
    while (parse_one(n, q)) {
        sn_op *op = &q->ops[(q->parsed - 1) & q->mask];
        if (op->state == OS_PARSED && n->p.chaos.on) op->start_at = now + rnd_delay(n, n->p.chaos.max_delay_us);
        work++;
    }
    /* the one running operation, and the next to start */
    for (uint64_t i = q->head; i < q->parsed && !q->error;) {
        sn_op *op = &q->ops[i & q->mask];
        if (op->state == OS_RUNNING) {
            if (__atomic_load_n(&op->ret.done, __ATOMIC_ACQUIRE) != op->tag + 1) break;
            finish_sub(n, q, op, now);
            work++;
            if (op->state == OS_RUNNING || op->state == OS_ERROR) break;
        }
        if (op->state == OS_PARSED) {
            if (!may_start(q, op, now)) break;
            if (op->n_sub == 0) {
                effect_done(n, op, now);
            } else if (start_sub(n, q, op)) {
                fail_at(n, q, op, GSHMEMI_SN_SYND_REMOTE_OP, GSHMEMI_SN_EXEC_FAILED, "the executor refused it");
                break;
            } else {
                work++;
                break;   /* one operation of a QP at a time */
            }
        }
        if (op->state == OS_EFFECT && now >= op->place_at) {
            place(op);
            op->state = OS_COMPLETE;
            work++;
        }
        if (op->state == OS_ERROR) break;
        i += op->nbb;
    }
    /* retire in order; a signaled WQE's completion covers every one before it */
    while (q->head < q->parsed && !q->error) {
        sn_op *op = &q->ops[q->head & q->mask];
        if (op->state == OS_EFFECT && now >= op->place_at) {
            place(op);
            op->state = OS_COMPLETE;
        }
        if (op->state == OS_ERROR) {
            flush_pending(n, q);
            write_entry(n, q, op, GSHMEM_NIC_CQE_REQ_ERR);
            q->error = true;
            work++;
            break;
        }
        if (op->state != OS_COMPLETE) break;
        if (op->flags & GSHMEMI_WQE_CQ_UPDATE) {
            if (!q->pend_n) q->pend_since = now;
            q->pend = op;
            q->pend_end = op->idx + op->nbb;
            q->pend_n++;
        }
        op->state = OS_FREE;
        q->head += op->nbb;
        work++;
    }
    /* an error queued at the next index, once everything before it retired */
    if (!q->error && q->qerr.state == OS_ERROR && q->head == q->parsed) {
        flush_pending(n, q);
        write_entry(n, q, &q->qerr, GSHMEM_NIC_CQE_REQ_ERR);
        q->error = true;
        work++;
    }
    if (q->pend) {
        const gshmemi_sn_chaos *c = &n->p.chaos;
        const bool hold = c->on && c->cqe_batch > 1 && q->pend_n < c->cqe_batch &&
                          now - q->pend_since < c->cqe_delay_us * 1e-6;
        if (!hold) {
            flush_pending(n, q);
            work++;
        }
    }
    return work;
}

int gshmemi_sn_progress(gshmemi_softnic *n) {
    int work = 0;
    const double now = now_s();
    for (int i = 0; i < n->n_qs; i++)
        if (!n->qs[i].error) work += run_q(n, &n->qs[i], now);
    return work;
}

/* ---- the thread ------------------------------------------------------------------------ */
/* Work requests read and not retired, or completions held back: the thread keeps polling. */
static bool in_flight(const gshmemi_softnic *n) {
    for (int i = 0; i < n->n_qs; i++) {
        const sn_q *q = &n->qs[i];
        if (!q->error && (q->head != q->parsed || q->pend)) return true;
    }
    return false;
}

static const char *state_name(int st) {
    static const char *names[] = {"free", "read", "running", "performed", "complete", "failed"};
    return st >= 0 && st <= OS_ERROR ? names[st] : "?";
}

/* Where each QP with work in flight stands (report_s): what a slow or stuck job waits for. */
static void report(const gshmemi_softnic *n) {
    for (int i = 0; i < n->n_qs; i++) {
        const sn_q *q = &n->qs[i];
        if (q->error || (q->head == q->parsed && q->parsed == q->pi && !q->pend)) continue;
        const sn_op *h = q->head < q->parsed ? &q->ops[q->head & q->mask] : NULL;
        fprintf(stderr, "gshmem PE %d: software NIC: %s 0x%06x to PE %d: blocks published %llu, rung below %llu, "
                "read %llu, retired %llu, completions %llu; oldest: %s%s%s (%llu performed in all)\n", n->p.mype,
                q->q.what, q->q.qpn, q->q.pe, (unsigned long long)q->pi, (unsigned long long)q->rung,
                (unsigned long long)q->parsed, (unsigned long long)q->head, (unsigned long long)q->cqes,
                h ? opcode_name(h->opcode) : "none", h ? " " : "", h ? state_name(h->state) : "",
                (unsigned long long)__atomic_load_n(&n->performed, __ATOMIC_RELAXED));
    }
}

static void *sn_main(void *arg) {
    gshmemi_softnic *n = arg;
    double idle_since = 0, next_report = 0;
    while (!__atomic_load_n(&n->stop, __ATOMIC_ACQUIRE)) {
        if (gshmemi_sn_progress(n) || in_flight(n)) {
            idle_since = 0;
            if (n->p.report_s > 0) {
                const double t = now_s();
                if (next_report == 0) next_report = t + n->p.report_s;
                else if (t > next_report) {
                    report(n);
                    next_report = t + n->p.report_s;
                }
            }
            if (in_flight(n)) sched_yield();   /* (a core shared with the proxy thread) */
            continue;
        }
        next_report = 0;
        sched_yield();
        const double t = now_s();
        if (idle_since == 0) idle_since = t;
        else if (t - idle_since > 2e-3 && n->p.idle_us) {   /* idle a while: poll less often */
            struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)n->p.idle_us * 1000};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

gshmemi_status gshmemi_sn_create(const gshmemi_sn_params *p, gshmemi_softnic **out) {
    if (!p->exec.start || p->npes < 1 || p->mype < 0 || p->mype >= p->npes) {
        gshmemi_error("software NIC: gshmemi_sn_create: bad parameters (PE %d of %d, executor %s)", p->mype, p->npes,
                      p->exec.start ? "set" : "missing");
        return GSHMEM_ERR_INVALID_ARG;
    }
    gshmemi_softnic *n = calloc(1, sizeof *n);
    if (!n || !(n->remote = calloc((size_t)p->npes, sizeof *n->remote))) {
        free(n);
        return GSHMEM_ERR_NO_MEMORY;
    }
    n->p = *p;
    pthread_mutex_init(&n->reg_lock, NULL);
    n->rng = p->chaos.seed ? p->chaos.seed : (uint64_t)(now_s() * 1e9) ^ (uint64_t)p->mype << 32;
    if (!n->rng) n->rng = 0x9e3779b97f4a7c15ull;
    if (p->chaos.on)
        gshmemi_warn("software NIC of PE %d: adversarial mode, seed %llu (work requests start up to %u us late, "
                     "fetched values land up to %u us late, completions every %u signaled WQEs or %u us)",
                     p->mype, (unsigned long long)n->rng, p->chaos.max_delay_us, p->chaos.late_us, p->chaos.cqe_batch,
                     p->chaos.cqe_delay_us);
    *out = n;
    return GSHMEM_SUCCESS;
}

gshmemi_status gshmemi_sn_add_qp(gshmemi_softnic *n, const gshmemi_sn_qp *qp) {
    if (__atomic_load_n(&n->started, __ATOMIC_ACQUIRE)) {
        gshmemi_error("software NIC: gshmemi_sn_add_qp after gshmemi_sn_start");
        return GSHMEM_ERR_INVALID_ARG;
    }
    const uint32_t c = qp->wqe_cnt, k = qp->cq_cnt;
    if (!qp->sq || !qp->dbrec || !qp->db || !qp->cq || !c || (c & (c - 1)) || c > 32768 || !k || (k & (k - 1)) ||
        (k > 1 && (k < 2 * c || !qp->cq_dbrec)) || qp->pe < 0 || qp->pe >= n->p.npes) {
        gshmemi_error("software NIC: QP 0x%x to PE %d: bad queue (send queue %u blocks: a power of two <= 32768; "
                      "completion queue %u entries: 1, or a power of two >= twice the send queue with a record)",
                      qp->qpn, qp->pe, c, k);
        return GSHMEM_ERR_INVALID_ARG;
    }
    if (n->n_qs == n->cap_qs) {
        int cap = n->cap_qs ? 2 * n->cap_qs : 8;
        sn_q *qs = realloc(n->qs, (size_t)cap * sizeof *qs);
        if (!qs) return GSHMEM_ERR_NO_MEMORY;
        n->qs = qs;
        n->cap_qs = cap;
    }
    sn_q *q = &n->qs[n->n_qs];
    memset(q, 0, sizeof *q);
    q->q = *qp;
    q->mask = c - 1;
    if (!(q->ops = calloc(c, sizeof *q->ops))) return GSHMEM_ERR_NO_MEMORY;
    for (uint32_t i = 0; i < k; i++) qp->cq[64 * (size_t)i + GSHMEM_NIC_CQE_OP_OWN] = GSHMEM_NIC_CQE_INVALID << 4;
    n->n_qs++;
    return GSHMEM_SUCCESS;
}

gshmemi_status gshmemi_sn_start(gshmemi_softnic *n) {
    int e = pthread_create(&n->thread, NULL, sn_main, n);
    if (e) {
        gshmemi_error("software NIC: pthread_create failed: %s", strerror(e));
        return GSHMEM_ERR_INTERNAL;
    }
    __atomic_store_n(&n->started, 1, __ATOMIC_RELEASE);
    return GSHMEM_SUCCESS;
}

static void stop_thread(gshmemi_softnic *n) {
    if (!__atomic_load_n(&n->started, __ATOMIC_ACQUIRE)) return;
    __atomic_store_n(&n->stop, 1, __ATOMIC_RELEASE);
    pthread_join(n->thread, NULL);
    __atomic_store_n(&n->started, 0, __ATOMIC_RELEASE);
}

/* Nothing started or waiting to be: every WQE read has retired and its completion is written,
 * and nothing rung is left unread. */
static bool idle(const sn_q *q) {
    if (q->error) return true;
    return q->head == q->parsed && (q->parsed >= q->pi || q->parsed >= q->rung) && !q->pend &&
           q->qerr.state != OS_ERROR;
}

bool gshmemi_sn_drain(gshmemi_softnic *n, double timeout) {
    stop_thread(n);
    const double end = now_s() + timeout;
    for (;;) {
        gshmemi_sn_progress(n);
        bool all = true;
        for (int i = 0; i < n->n_qs && all; i++) all = idle(&n->qs[i]);
        if (all) return true;
        if (now_s() > end) return false;
        sched_yield();
    }
}

int gshmemi_sn_error(const gshmemi_softnic *n, int *vendor, const char **msg) {
    if (vendor) *vendor = n->err_vendor;
    if (msg) *msg = n->err_msg;
    return n->err_synd;
}

uint64_t gshmemi_sn_performed(const gshmemi_softnic *n) { return __atomic_load_n(&n->performed, __ATOMIC_RELAXED); }

void gshmemi_sn_destroy(gshmemi_softnic *n) {
    if (!n) return;
    stop_thread(n);
    for (int i = 0; i < n->n_qs; i++) free(n->qs[i].ops);
    free(n->qs);
    for (int pe = 0; pe < n->p.npes; pe++) free(n->remote[pe].r);
    free(n->remote);
    free(n->local.r);
    pthread_mutex_destroy(&n->reg_lock);
    free(n);
}
