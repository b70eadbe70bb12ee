/* The libfabric layer of the proxy (fabric.c), below the data modes: the provider and
 * interface, the RDM endpoint (FI_AV_TABLE: fi_addr = PE index), the address and key exchange
 * through the bootstrap's allgather, registrations, and the completion queue, whose entries
 * go up to the mode through the handler given at open. It knows nothing of rings or modes. */
#ifndef GSHMEMI_PROXY_FABRIC_H
#define GSHMEMI_PROXY_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "base.h"

struct op_rec;

/* One posted fabric operation; the context libfabric hands back (FI_CONTEXT2 first). */
typedef struct xfer {
    struct fi_context2 ctx;
    uint8_t kind;               /* the mode's tag (XF_*) */
    struct op_rec *rec;         /* the record it serves, if any */
    uint64_t ticket;            /* rec->ticket when posted: a stale completion is ignored */
    struct xfer *next;
} xfer;
enum { XF_RMA = 1, XF_TX, XF_RX };

/* A completed operation (err != 0: failed, a positive FI_E* code); len: bytes received. */
typedef void (*gshmemi_fab_handler)(void *ctx, xfer *f, size_t len, int err);

typedef struct gshmemi_fab_params {
    int npes;
    bool single_host;           /* all PEs on this host: a loopback address may be used */
    uint64_t caps;              /* what the mode needs: FI_RMA | FI_ATOMIC, or FI_MSG */
    bool mr_local;              /* the mode registers its local buffers (FI_MR_LOCAL accepted) */
    const char *mode;           /* its name: every PE must run the same */
    gshmemi_status (*allgather)(void *ctx, const void *in, void *out, size_t len);
    void *allgather_ctx;
    gshmemi_fab_handler on_completion;
    void *handler_ctx;
    gshmemi_perr *err;          /* where a failure of the completion queue is recorded */
} gshmemi_fab_params;

typedef struct pfabric {
    gshmemi_fab_params p;
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_ep *ep;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_mr *heap_mr;     /* the heap, where the provider reaches it (direct mode) */
    struct fid_mr *bufs_mr;     /* a mode's own buffers (staged mode); closed after the endpoint */
    void *heap_desc;
    uint64_t *rkey;             /* [npes] heap key of each PE */
    uint64_t *rbase;            /* [npes] what to subtract from a symmetric address (0: virt) */
    bool mr_local, mr_endpoint, virt_addr;
    size_t max_msg;
    char prov[64];
    char addr[96];              /* printable form of the published address */
    xfer *xfers, *free_xfers;
    size_t n_xfers;
} pfabric;

/* Chooses the provider (GSHMEM_FABRIC_PROVIDER) on the interface (GSHMEM_FABRIC_IFACE) and
 * opens the endpoint. */
gshmemi_status gshmemi_fab_open(pfabric *f, const gshmemi_fab_params *p);
/* Collective: publishes this PE's address, `key` (its heap key, 0 if none) and, where the
 * provider wants offsets, `heap_base`; learns every PE's. */
gshmemi_status gshmemi_fab_exchange(pfabric *f, uint64_t key, const void *heap_base);
void gshmemi_fab_close(pfabric *f);
/* Reads completions and hands each to the handler; returns how many. */
int gshmemi_fab_progress(pfabric *f);
/* A free operation context for rec (NULL: all in use, retry after progress). */
xfer *gshmemi_xfer_get(pfabric *f, struct op_rec *rec, uint64_t ticket);
void gshmemi_xfer_put(pfabric *f, xfer *x);
/* The address the provider wants for symmetric address `sym` on pe. */
uint64_t gshmemi_fab_raddr(const pfabric *f, int pe, uint64_t sym);
/* A random key for a registration (FI_MR_PROV_KEY aside, the application picks keys). */
uint64_t gshmemi_fab_random_key(const pfabric *f);
/* fi_mr_reg (+ bind/enable where FI_MR_ENDPOINT). */
gshmemi_status gshmemi_fab_register(pfabric *f, void *buf, size_t len, uint64_t access, uint64_t key,
                                    struct fid_mr **mr, const char *what);
/* libfabric's text for an error code (either sign). */
const char *gshmemi_fab_strerror(int ret);

#endif
