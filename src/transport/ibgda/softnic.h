/* The software NIC: a test device that plays an mlx5 NIC on the very memory a poster (a GPU,
 * or a CPU in the unit tests) writes. One host thread per PE watches each queue pair's doorbell
 * and doorbell record, reads the work requests (gshmem/nic_wqe.h) from the send queue, checks
 * every one as the hardware would, performs it through an executor (in the library: this PE's
 * proxy, over the fabric link to the target PE; in the unit tests: host memory), writes the
 * fetched values where the work request says and the completion entries (gshmem/nic_desc.h),
 * errors included. It names no CUDA and no rdma-core. docs/ibgda.md, "The software NIC", says
 * what it checks and what it cannot. */
#ifndef GSHMEMI_SOFTNIC_H
#define GSHMEMI_SOFTNIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"
#include "gshmem/nic_desc.h"
#include "gshmem/proxy_desc.h"

/* Syndromes of its error completions (byte 55): the mlx5 values (mlx5dv.h, MLX5_CQE_SYNDROME_*). */
enum {
    GSHMEMI_SN_SYND_LOCAL_LENGTH = 0x01,
    GSHMEMI_SN_SYND_LOCAL_QP_OP = 0x02,
    GSHMEMI_SN_SYND_LOCAL_PROT = 0x04,
    GSHMEMI_SN_SYND_REMOTE_INVAL_REQ = 0x12,
    GSHMEMI_SN_SYND_REMOTE_ACCESS = 0x13,
    GSHMEMI_SN_SYND_REMOTE_OP = 0x14,
    GSHMEMI_SN_SYND_TRANSPORT_RETRY = 0x15,
};

/* Which check failed (the error entry's vendor syndrome, byte 54: the software NIC's own codes,
 * not the hardware's). docs/ibgda.md lists them. */
enum {
    GSHMEMI_SN_BAD_OPCODE = 1,      /* an opcode the QP does not take */
    GSHMEMI_SN_BAD_OPMOD,           /* opmod not legal for the opcode */
    GSHMEMI_SN_BAD_DS,              /* ds (16-byte units) not what the opcode's segments take */
    GSHMEMI_SN_BAD_INDEX,           /* the WQE's index is not the next one (continuity, 16-bit wrap) */
    GSHMEMI_SN_BAD_QPN,             /* the WQE or the doorbell names another QP */
    GSHMEMI_SN_OVERRUN,             /* WQEs published over slots whose WQEs were not completed */
    GSHMEMI_SN_BAD_DOORBELL,        /* a doorbell for a WQE the doorbell record does not cover */
    GSHMEMI_SN_BAD_INLINE,          /* inline length beyond what ds holds, or no inline flag */
    GSHMEMI_SN_BAD_LKEY,            /* a local key that names no registration */
    GSHMEMI_SN_LOCAL_BOUNDS,        /* local range outside its registration */
    GSHMEMI_SN_BAD_RKEY,            /* a remote key the target never registered */
    GSHMEMI_SN_REMOTE_BOUNDS,       /* remote range outside its registration */
    GSHMEMI_SN_ATOMIC_SIZE,         /* atomic size not 4/8, or its data segment's length differs */
    GSHMEMI_SN_ATOMIC_ALIGN,        /* atomic target not aligned to its size */
    GSHMEMI_SN_BAD_FENCE,           /* a fence mode mlx5 does not define */
    GSHMEMI_SN_EXEC_FAILED,         /* the executor (the fabric link) failed the operation */
    GSHMEMI_SN_UNMODELLED,          /* legal on hardware, not performed by this model */
    GSHMEMI_SN_CQ_OVERRUN,          /* ring CQ: an entry was due with no room (readers too slow) */
    GSHMEMI_SN_SPAN,                /* the WQE's blocks reach past the doorbell record */
};

/* How operations reach their target. start() begins d (a descriptor of gshmem/proxy_desc.h:
 * PUT, GET, P, G, AMO with GSHMEM_PROXY_F_FETCH, to PE d->pe) and gives its tag; the
 * operation is complete once ret->done == tag + 1 (stored with release after ret->value and
 * ret->status): a write in the target's memory, a read's bytes at d->laddr (or, G, in
 * ret->value), an atomic applied with its old value in ret->value. Operations started for one
 * queue pair are started one at a time (the software NIC keeps a QP's order itself). Returns 0
 * or a GSHMEM_ERR_* (then nothing was started). */
typedef struct gshmemi_sn_exec {
    void *ctx;
    int (*start)(void *ctx, const gshmem_proxy_desc *d, gshmem_proxy_ret *ret, uint64_t *tag);
} gshmemi_sn_exec;

/* Adversarial mode: what a NIC may do that a correct poster must survive. */
typedef struct gshmemi_sn_chaos {
    bool on;
    uint64_t seed;                  /* 0: from the clock (the message at start says which) */
    unsigned max_delay_us;          /* a work request starts after a random delay up to this */
    unsigned late_us;               /* fetched values land up to this late; later work requests
                                       without a fence go meanwhile */
    unsigned cqe_batch;             /* completions written for every so many signaled WQEs ... */
    unsigned cqe_delay_us;          /* ... or once the oldest unwritten one is this old */
} gshmemi_sn_chaos;

typedef struct gshmemi_sn_params {
    int mype, npes;
    gshmemi_sn_exec exec;
    gshmemi_sn_chaos chaos;
    unsigned idle_us;               /* the thread sleeps this long per idle turn once idle a while */
    double report_s;                /* > 0: while work requests are in flight, a line per QP that
                                       has any on stderr every report_s seconds (GSHMEM_DEBUG) */
} gshmemi_sn_params;

/* A queue pair as the device sees it: host addresses of the memory the poster writes (send
 * queue, doorbell record, doorbell word) and the NIC writes (completion queue). */
typedef struct gshmemi_sn_qp {
    uint8_t *sq;
    uint32_t wqe_cnt;               /* basic blocks, power of two <= 32768 */
    uint32_t qpn;
    const volatile uint32_t *dbrec; /* [1]: send counter (be32) */
    const volatile uint64_t *db;    /* doorbell: the rung WQE's first 8 bytes */
    uint8_t *cq;                    /* cq_cnt entries of 64 bytes */
    uint32_t cq_cnt;                /* 1: collapsed (overwritten); else a ring */
    const volatile uint32_t *cq_dbrec; /* ring: [0] entries read (be32, 24 bits) */
    int pe;                         /* the PE at the other end */
    const char *what;               /* for messages: "GPU QP", "host QP" */
} gshmemi_sn_qp;

typedef struct gshmemi_softnic gshmemi_softnic;

gshmemi_status gshmemi_sn_create(const gshmemi_sn_params *p, gshmemi_softnic **out);
/* Before gshmemi_sn_start. Fills the queue's completion entries with "invalid" (opcode 15). */
gshmemi_status gshmemi_sn_add_qp(gshmemi_softnic *n, const gshmemi_sn_qp *qp);
/* Registrations (thread safe, also while the thread runs): a range of this PE's memory with
 * its local key (host_rw: the NIC thread reads and writes it directly: fetched values may land
 * there), or a range of PE pe's memory with the remote key its owner registered. */
gshmemi_status gshmemi_sn_reg_local(gshmemi_softnic *n, uint64_t addr, uint64_t len, uint32_t lkey, bool host_rw);
gshmemi_status gshmemi_sn_reg_remote(gshmemi_softnic *n, int pe, uint64_t addr, uint64_t len, uint32_t rkey);
/* Drops the registration of this PE (pe < 0) or of PE pe that starts at addr (thread safe). */
void gshmemi_sn_unreg(gshmemi_softnic *n, int pe, uint64_t addr);
/* Runs the NIC on a thread of its own until gshmemi_sn_destroy. */
gshmemi_status gshmemi_sn_start(gshmemi_softnic *n);
/* One turn over every queue pair (tests without the thread): returns the work done. */
int gshmemi_sn_progress(gshmemi_softnic *n);
/* The first error completion it wrote: 0 if none, else the syndrome (vendor code in *vendor,
 * the message in *msg when not NULL). */
int gshmemi_sn_error(const gshmemi_softnic *n, int *vendor, const char **msg);
/* Stops the thread, then runs the NIC on the caller's thread until every published and rung work
 * request has completed (or failed), at most `timeout` seconds: false if it did not. Afterwards
 * the NIC is stopped: it starts nothing more (destroy it). */
bool gshmemi_sn_drain(gshmemi_softnic *n, double timeout);
/* Work requests performed (every QP). */
uint64_t gshmemi_sn_performed(const gshmemi_softnic *n);
/* Stops the thread (if any) and frees everything; the queues' memory is the caller's. */
void gshmemi_sn_destroy(gshmemi_softnic *n);

#endif
