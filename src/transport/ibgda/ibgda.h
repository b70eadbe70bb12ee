/* What the files of the ibgda transport share: the transport's state (transport.c) and the
 * device backends that make its queue pairs and registrations: the software NIC (soft.c, a test
 * device), and on an mlx5 NIC the verbs setup (verbs.c: rdma-core makes QP and CQ, their queues
 * in host memory mapped for the GPU, a ring CQ) or the DEVX setup (devx.c: the queues in GPU
 * memory, a collapsed CQ), both over hw.c (device, protection domain, port, registrations,
 * connection). Not seen outside this folder. docs/ibgda.md describes the whole. */
#ifndef GSHMEMI_IBGDA_H
#define GSHMEMI_IBGDA_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "hostq.h"
#include "state.h"
#include "status.h"
#include "gshmem/nic_desc.h"

enum { IBGDA_SETUP_VERBS = 0, IBGDA_SETUP_DEVX = 1 };

/* A queue pair to one PE: the GPU's (the device state holds `dev`) or the host's (host-initiated
 * operations post through `host`). `host` is also this process's view of a GPU QP's memory
 * (the software NIC reads it there). */
typedef struct ibgda_qp {
    int pe;
    bool gpu;
    gshmem_nic_qp dev;            /* GPU addresses (GPU QPs) */
    gshmemi_hostq host;           /* host addresses */
    void *priv;                   /* the backend's */
} ibgda_qp;

/* What the peer of a queue pair needs to connect to it (exchanged over the bootstrap). */
typedef struct ibgda_conn {
    uint32_t qpn;
    uint16_t lid;                 /* InfiniBand */
    uint8_t gid[16];              /* RoCE (and InfiniBand across subnets) */
    uint8_t link_layer;           /* IBV_LINK_LAYER_* */
    uint8_t mtu;                  /* enum ibv_mtu */
    uint8_t port;
    uint8_t gid_index;
    uint8_t pad_[4];
} ibgda_conn;

/* A registration: its keys, and the backend's handle. */
typedef struct ibgda_key {
    uint32_t lkey, rkey;
    void *priv;
} ibgda_key;

struct ibgda_ctx;
typedef struct ibgda_backend {
    const char *name;
    /* The device: called once, collectively (it may exchange what it needs). */
    gshmemi_status (*open)(struct ibgda_ctx *c);
    /* A queue pair to qp->pe (qp->gpu says whose): fills qp->dev (GPU QPs) and qp->host (every
     * QP) except the counters, and *mine for the peer. */
    gshmemi_status (*qp_create)(struct ibgda_ctx *c, ibgda_qp *qp, ibgda_conn *mine);
    /* Connects it to the peer's QP (RESET -> INIT -> RTR -> RTS); messages name the peer. */
    gshmemi_status (*qp_connect)(struct ibgda_ctx *c, ibgda_qp *qp, const ibgda_conn *peer);
    /* Registers [addr, addr + len): GPU memory (gpu) or host memory; host_rw: the NIC may place
     * fetched values there (every NIC can; the software NIC only in host memory). */
    gshmemi_status (*reg)(struct ibgda_ctx *c, void *addr, size_t len, bool gpu, ibgda_key *k);
    /* PE pe registered [addr, addr + len) with rkey, or (len 0) dropped the registration at addr
     * (NULL where the NIC learns it by itself). */
    gshmemi_status (*remote_region)(struct ibgda_ctx *c, int pe, uint64_t addr, uint64_t len, uint32_t rkey);
    /* Every QP exists and the device state is filled: start what runs beside the GPU. */
    gshmemi_status (*start)(struct ibgda_ctx *c);
    /* Finalize: stop it, after what was posted completed (bounded by c->timeout). */
    void (*stop)(struct ibgda_ctx *c);
    /* One line: what the device is and how the queues are set up. */
    void (*describe)(struct ibgda_ctx *c, char *buf, size_t len);
    void (*qp_destroy)(struct ibgda_ctx *c, ibgda_qp *qp);
    void (*dereg)(struct ibgda_ctx *c, ibgda_key *k);
    void (*close)(struct ibgda_ctx *c);
} ibgda_backend;

extern const ibgda_backend gshmemi_ibgda_soft;
#ifdef GSHMEMI_HAVE_MLX5DV
extern const ibgda_backend gshmemi_ibgda_verbs, gshmemi_ibgda_devx;
/* hw.c: whether this process has a usable mlx5 device (by GSHMEM_IBGDA_DEVICE): 1 and a line
 * naming it, or 0 and why not, in why[len]. Opens and closes what it looks at. */
int gshmemi_ibgda_hw_probe(char *why, size_t len);
/* hw.c: the RDMA devices, ports and GIDs of this machine, as lines (gshmem-info); deep: also
 * whether GPU memory registers with the chosen device and its doorbell page maps for the GPU. */
void gshmemi_ibgda_hw_report(char *buf, size_t len, bool deep);
#endif

typedef struct ibgda_ctx {
    gshmemi_state *s;
    const ibgda_backend *be;
    void *bctx;                   /* the backend's state */
    int setup;                    /* IBGDA_SETUP_* */
    int my_index;                 /* this transport's index in s->transports */
    bool *reach;                  /* [npes] the PEs it serves */
    int n_reach;
    uint32_t wqe_cnt;             /* send queue blocks */
    ibgda_qp *gpu_qps, *host_qps; /* [npes], valid where reach[pe] */
    gshmem_nic_qp *d_qps;         /* GPU memory: [npes] the GPU's QPs */
    uint64_t *d_ctr;              /* GPU memory: [npes * GSHMEM_NIC_CTR_WORDS] the GPU QPs' counters */
    uint8_t *d_err;               /* GPU memory: [npes * 64] ring CQ: the first error entry's copy */
    /* heap registration: per table entry (nic_desc.h) the chunk's keys; the tables the GPU
     * reads, and their host copies */
    ibgda_key chunk_key[GSHMEM_NIC_MAX_CHUNKS];
    bool chunk_used[GSHMEM_NIC_MAX_CHUNKS];
    uint32_t *h_rkeys;            /* [npes * MAX_CHUNKS] */
    uint32_t h_lkeys[GSHMEM_NIC_MAX_CHUNKS];
    uint64_t h_range[2 * GSHMEM_NIC_MAX_CHUNKS + 1];
    uint32_t *d_rkeys, *d_lkeys;
    uint64_t *d_range;
    /* registered local regions (nic_desc.h: memory of this PE outside the heap, such as a team's
     * landing buffer): n_local entries, their keys, and the tables the GPU reads with their host
     * copies (h_lrange by address, as h_range) */
    uint32_t n_local;
    ibgda_key *local_key;         /* [n_local]; an entry is used while its range's end is not 0 */
    uint64_t *h_lrange, *d_lrange; /* [2 * n_local + 1] */
    uint32_t *h_llkeys, *d_llkeys; /* [n_local] */
    /* the fetch slots (nic_desc.h) */
    uint8_t *fetch, *d_fetch;     /* host and GPU addresses (the same memory) */
    bool fetch_host;              /* pinned host memory (cudaFreeHost), else GPU memory (cudaFree) */
    size_t fetch_bytes;
    uint32_t fetch_slots;
    ibgda_key fetch_key;
    /* host-initiated operations: one at a time, through the host QPs and a registered buffer */
    pthread_mutex_t host_lock;
    uint8_t *bounce;
    size_t bounce_bytes;
    ibgda_key bounce_key;
    double timeout;               /* seconds a host operation may wait (GSHMEM_BOOTSTRAP_TIMEOUT) */
    bool started;
    char why[384];                /* why this transport serves the remote PEs or does not */
} ibgda_ctx;

/* "PE 3 (node 1)" style names for messages. */
const char *gshmemi_ibgda_setup_name(int setup);

#endif
