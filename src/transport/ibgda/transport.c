/* The ibgda transport as the library sees it: GPU-initiated RDMA to the PEs of other nodes. At
 * init the PEs agree whether it serves them (GSHMEM_REMOTE_TRANSPORT; automatically when every PE
 * has a usable mlx5 NIC), then each PE makes one queue pair per remote PE for its GPU and one for
 * host-initiated calls, exchanges what connects them over the bootstrap and connects them; heap
 * chunks are registered as they are mapped, their keys exchanged and written into the tables the
 * GPU reads; the device state gets the QPs, the keys, the fetch slots and the route
 * GSHMEMI_ROUTE_NIC for the PEs served. Host calls post work requests to the host's QPs. The
 * device (a NIC through rdma-core, or the software NIC) is a backend (ibgda.h). docs/ibgda.md. */
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "cuda_util.h"
#include "ibgda.h"
#include "state.h"
#include "gshmem/device/state.h"
#include "gshmem/nic_wqe.h"
#include "gshmem/proxy_desc.h"

extern const struct gshmemi_transport_ops gshmemi_transport_ibgda;

#define MAXC GSHMEM_NIC_MAX_CHUNKS
#define BOUNCE_BYTES (4u << 20)   /* host calls' registered buffer: larger transfers go in pieces */

const char *gshmemi_ibgda_setup_name(int setup) { return setup == IBGDA_SETUP_DEVX ? "devx" : "verbs"; }

/* ---- which transport serves the other nodes ------------------------------------------ */
enum { WANT_AUTO = 0, WANT_PROXY = 1, WANT_IBGDA = 2, WANT_BAD = -1 };
enum { NIC_MLX5 = 0, NIC_SOFT = 1 };

/* What each PE says at init (allgathered): what it was asked and what it has. */
typedef struct vote {
    int32_t want, nic, setup, usable;
    char why[240];
} vote;

static int parse_want(const char *v) {
    if (!strcasecmp(v, "auto") || !v[0]) return WANT_AUTO;
    if (!strcasecmp(v, "proxy")) return WANT_PROXY;
    if (!strcasecmp(v, "ibgda")) return WANT_IBGDA;
    gshmemi_error("GSHMEM_REMOTE_TRANSPORT='%s' is not auto, proxy or ibgda", v);
    return WANT_BAD;
}

static void my_vote(gshmemi_state *s, vote *v) {
    const gshmemi_config *g = &gshmemi_cfg;
    memset(v, 0, sizeof *v);
    v->want = parse_want(g->REMOTE_TRANSPORT);
    if (!strcasecmp(g->IBGDA_NIC, "soft")) v->nic = NIC_SOFT;
    else if (strcasecmp(g->IBGDA_NIC, "mlx5") && g->IBGDA_NIC[0]) {
        gshmemi_error("GSHMEM_IBGDA_NIC='%s' is not mlx5 or soft", g->IBGDA_NIC);
        v->want = WANT_BAD;
    }
    if (!strcasecmp(g->IBGDA_SETUP, "devx")) v->setup = IBGDA_SETUP_DEVX;
    else if (strcasecmp(g->IBGDA_SETUP, "verbs") && g->IBGDA_SETUP[0]) {
        gshmemi_error("GSHMEM_IBGDA_SETUP='%s' is not verbs or devx", g->IBGDA_SETUP);
        v->want = WANT_BAD;
    }
    const int q = g->IBGDA_SQ_SLOTS;
    if (q < 64 || q > 16384 || (q & (q - 1))) {
        gshmemi_error("GSHMEM_IBGDA_SQ_SLOTS=%d is not a power of two from 64 to 16384", q);
        v->want = WANT_BAD;
    }
    if (v->want == WANT_PROXY || v->want == WANT_BAD) return;
    if (v->nic == NIC_SOFT) {
        v->usable = 1;
        snprintf(v->why, sizeof v->why, "the software NIC (GSHMEM_IBGDA_NIC=soft)");
        return;
    }
#ifdef GSHMEMI_HAVE_MLX5DV
    v->usable = gshmemi_ibgda_hw_probe(v->why, sizeof v->why);
#else
    snprintf(v->why, sizeof v->why, "this build has no rdma-core mlx5dv (install libibverbs-dev, or -Dibverbs_root=)");
#endif
    (void)s;
}

/* The PEs agree (every PE gets the same answer from the same votes). */
static gshmemi_status decide(gshmemi_state *s, ibgda_ctx *c, const vote *all, bool *serve) {
    const vote *me = &all[s->mype];
    *serve = false;
    for (int pe = 0; pe < s->npes; pe++) {
        const vote *v = &all[pe];
        if (v->want == WANT_BAD) {
            gshmemi_error("ibgda: PE %d has a bad GSHMEM_REMOTE_TRANSPORT / GSHMEM_IBGDA_* setting (its message says "
                          "which)", pe);
            return GSHMEM_ERR_INVALID_ARG;
        }
        if (v->want != me->want || v->nic != me->nic || v->setup != me->setup) {
            gshmemi_error("ibgda: PE %d and PE %d were started with different GSHMEM_REMOTE_TRANSPORT, "
                          "GSHMEM_IBGDA_NIC or GSHMEM_IBGDA_SETUP: every PE of a job must use the same", s->mype, pe);
            return GSHMEM_ERR_INVALID_ARG;
        }
    }
    if (me->want == WANT_PROXY) {
        snprintf(c->why, sizeof c->why, "not used: GSHMEM_REMOTE_TRANSPORT=proxy");
        return GSHMEM_SUCCESS;
    }
    if (me->nic == NIC_SOFT && me->want != WANT_IBGDA) {
        gshmemi_error("ibgda: GSHMEM_IBGDA_NIC=soft selects the software NIC, a test device, which is never chosen "
                      "by itself: set GSHMEM_REMOTE_TRANSPORT=ibgda too (docs/ibgda.md)");
        return GSHMEM_ERR_INVALID_ARG;
    }
    for (int pe = 0; pe < s->npes; pe++) {
        if (all[pe].usable) continue;
        if (me->want == WANT_IBGDA) {
            gshmemi_error("ibgda: GSHMEM_REMOTE_TRANSPORT=ibgda, but PE %d (node %d) cannot use it: %s "
                          "(gshmem-info --check on that node says more)", pe, s->boot.node_of[pe], all[pe].why);
            return GSHMEM_ERR_NOT_AVAILABLE;
        }
        snprintf(c->why, sizeof c->why, "not used: PE %d has no usable mlx5 NIC (%s); the proxy serves the other nodes",
                 pe, all[pe].why);
        gshmemi_info("ibgda: %s", c->why);
        return GSHMEM_SUCCESS;
    }
    snprintf(c->why, sizeof c->why, "%s: every PE has a NIC for it (%s)",
             me->want == WANT_IBGDA ? "chosen by GSHMEM_REMOTE_TRANSPORT=ibgda" : "chosen automatically", me->why);
    c->setup = me->setup;
    *serve = true;
    return GSHMEM_SUCCESS;
}

/* ---- queue pairs ------------------------------------------------------------------------ */
typedef struct conn_pair {
    ibgda_conn gpu, host;
} conn_pair;

/* Device memory the GPU's QPs share: QP table, counters (zero) and ring-CQ error copies
 * ("invalid" entries). */
static gshmemi_status alloc_device(ibgda_ctx *c) {
    const int n = c->s->npes;
    GSHMEMI_CUDA(cudaMalloc((void **)&c->d_qps, (size_t)n * sizeof *c->d_qps));
    GSHMEMI_CUDA(cudaMemset(c->d_qps, 0, (size_t)n * sizeof *c->d_qps));
    GSHMEMI_CUDA(cudaMalloc((void **)&c->d_ctr, (size_t)n * GSHMEM_NIC_CTR_WORDS * sizeof(uint64_t)));
    GSHMEMI_CUDA(cudaMemset(c->d_ctr, 0, (size_t)n * GSHMEM_NIC_CTR_WORDS * sizeof(uint64_t)));
    uint8_t *err = calloc((size_t)n, 64);
    if (!err) return GSHMEM_ERR_NO_MEMORY;
    for (int pe = 0; pe < n; pe++) err[64 * pe + GSHMEM_NIC_CQE_OP_OWN] = GSHMEM_NIC_CQE_INVALID << 4;
    cudaError_t e = cudaMalloc((void **)&c->d_err, (size_t)n * 64);
    if (e == cudaSuccess) e = cudaMemcpy(c->d_err, err, (size_t)n * 64, cudaMemcpyHostToDevice);
    free(err);
    GSHMEMI_CUDA(e);
    GSHMEMI_CUDA(cudaMalloc((void **)&c->d_rkeys, (size_t)n * MAXC * sizeof(uint32_t)));
    GSHMEMI_CUDA(cudaMalloc((void **)&c->d_lkeys, MAXC * sizeof(uint32_t)));
    GSHMEMI_CUDA(cudaMalloc((void **)&c->d_range, sizeof c->h_range));
    GSHMEMI_CUDA(cudaMemset(c->d_range, 0, sizeof c->h_range));
    if (!(c->h_rkeys = calloc((size_t)n * MAXC, sizeof *c->h_rkeys))) return GSHMEM_ERR_NO_MEMORY;
    /* local regions: a team's landing buffer each at most */
    const uint32_t nl = (uint32_t)(gshmemi_cfg.TEAMS_MAX > 0 ? gshmemi_cfg.TEAMS_MAX : 1);
    c->local_key = calloc(nl, sizeof *c->local_key);
    c->h_lrange = calloc(2 * (size_t)nl + 1, sizeof *c->h_lrange);
    c->h_llkeys = calloc(nl, sizeof *c->h_llkeys);
    if (!c->local_key || !c->h_lrange || !c->h_llkeys) return GSHMEM_ERR_NO_MEMORY;
    c->n_local = nl;
    GSHMEMI_CUDA(cudaMalloc((void **)&c->d_lrange, (2 * (size_t)nl + 1) * sizeof *c->d_lrange));
    GSHMEMI_CUDA(cudaMemset(c->d_lrange, 0, (2 * (size_t)nl + 1) * sizeof *c->d_lrange));
    GSHMEMI_CUDA(cudaMalloc((void **)&c->d_llkeys, nl * sizeof *c->d_llkeys));
    return GSHMEM_SUCCESS;
}

static gshmemi_status make_qps(ibgda_ctx *c) {
    gshmemi_state *s = c->s;
    const int n = s->npes;
    c->gpu_qps = calloc((size_t)n, sizeof *c->gpu_qps);
    c->host_qps = calloc((size_t)n, sizeof *c->host_qps);
    conn_pair *mine = calloc((size_t)n, sizeof *mine), *theirs = calloc((size_t)n, sizeof *theirs);
    gshmemi_status st = GSHMEM_SUCCESS;
    if (!c->gpu_qps || !c->host_qps || !mine || !theirs) st = GSHMEM_ERR_NO_MEMORY;
    for (int pe = 0; pe < n && st == GSHMEM_SUCCESS; pe++) {
        if (!c->reach[pe]) continue;
        ibgda_qp *g = &c->gpu_qps[pe], *h = &c->host_qps[pe];
        g->pe = h->pe = pe;
        g->gpu = true;
        st = c->be->qp_create(c, g, &mine[pe].gpu);
        if (st == GSHMEM_SUCCESS) st = c->be->qp_create(c, h, &mine[pe].host);
        if (st != GSHMEM_SUCCESS) break;
        g->dev.ctr = c->d_ctr + (size_t)pe * GSHMEM_NIC_CTR_WORDS;
        g->dev.pe = pe;
        if (g->dev.cq) g->dev.cqe = c->d_err + (size_t)pe * 64;
    }
    /* every PE takes part in the exchange, failed or not, so none waits for another in vain */
    int failed = st != GSHMEM_SUCCESS, *all = calloc((size_t)n, sizeof *all);
    gshmemi_status xs = all ? s->boot.ops->allgather(&s->boot, &failed, all, sizeof failed) : GSHMEM_ERR_NO_MEMORY;
    for (int pe = 0; xs == GSHMEM_SUCCESS && pe < n; pe++)
        if (all[pe] && st == GSHMEM_SUCCESS) {
            gshmemi_error("ibgda: PE %d could not make its queue pairs (its message says why)", pe);
            st = GSHMEM_ERR_NOT_AVAILABLE;
        }
    free(all);
    if (st == GSHMEM_SUCCESS) st = xs;
    if (st == GSHMEM_SUCCESS) st = s->boot.ops->alltoall(&s->boot, mine, theirs, sizeof *mine);
    for (int pe = 0; pe < n && st == GSHMEM_SUCCESS; pe++) {
        if (!c->reach[pe]) continue;
        /* my GPU's QP meets PE pe's GPU QP, my host's QP its host QP */
        st = c->be->qp_connect(c, &c->gpu_qps[pe], &theirs[pe].gpu);
        if (st == GSHMEM_SUCCESS) st = c->be->qp_connect(c, &c->host_qps[pe], &theirs[pe].host);
    }
    free(mine);
    free(theirs);
    GSHMEMI_CHECK(st);
    gshmem_nic_qp *table = calloc((size_t)n, sizeof *table);
    if (!table) return GSHMEM_ERR_NO_MEMORY;
    for (int pe = 0; pe < n; pe++)
        if (c->reach[pe]) table[pe] = c->gpu_qps[pe].dev;
    cudaError_t e = cudaMemcpy(c->d_qps, table, (size_t)n * sizeof *table, cudaMemcpyHostToDevice);
    free(table);
    GSHMEMI_CUDA(e);
    /* every QP connected before any PE posts */
    return s->boot.ops->barrier(&s->boot);
}

/* Fetch slots (nic_desc.h) and the host calls' buffer, both registered. */
static gshmemi_status alloc_buffers(ibgda_ctx *c) {
    int sms = 0;
    GSHMEMI_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, c->s->cuda_dev));
    uint32_t slots = 1;
    while (slots < (uint32_t)sms * 64u * 32u) slots <<= 1;
    c->fetch_slots = slots;
    c->fetch_bytes = (size_t)slots * 8;
    /* Host memory mapped for the GPU where the completions are host memory too (the verbs
     * setup; the software NIC, a host thread, places fetched values itself): PCIe orders a NIC's
     * writes to one destination, not its write of a value into GPU memory before its completion
     * into host memory. The DEVX setup's completions are GPU memory, so its fetch slots are. */
    c->fetch_host = c->be == &gshmemi_ibgda_soft || c->setup == IBGDA_SETUP_VERBS;
    if (c->fetch_host) {
        GSHMEMI_CUDA(cudaHostAlloc((void **)&c->fetch, c->fetch_bytes, cudaHostAllocMapped | cudaHostAllocPortable));
        GSHMEMI_CUDA(cudaHostGetDevicePointer((void **)&c->d_fetch, c->fetch, 0));
    } else {
        GSHMEMI_CUDA(cudaMalloc((void **)&c->d_fetch, c->fetch_bytes));
        c->fetch = c->d_fetch;
    }
    GSHMEMI_CHECK(c->be->reg(c, c->fetch, c->fetch_bytes, !c->fetch_host, &c->fetch_key));
    c->bounce_bytes = BOUNCE_BYTES;
    GSHMEMI_CUDA(cudaHostAlloc((void **)&c->bounce, c->bounce_bytes, cudaHostAllocPortable));
    return c->be->reg(c, c->bounce, c->bounce_bytes, false, &c->bounce_key);
}

static gshmemi_status ibgda_init(gshmemi_state *s, void **tctx, bool *reach) {
    *tctx = NULL;
    if (s->boot.n_nodes <= 1) return GSHMEM_SUCCESS;   /* every PE is a load/store peer */
    ibgda_ctx *c = calloc(1, sizeof *c);
    vote *all = calloc((size_t)s->npes, sizeof *all);
    if (!c || !all) {
        free(c);
        free(all);
        return GSHMEM_ERR_NO_MEMORY;
    }
    *tctx = c;
    c->s = s;
    c->my_index = -1;
    for (int t = 0; gshmemi_transports[t]; t++)
        if (gshmemi_transports[t] == &gshmemi_transport_ibgda) c->my_index = t;
    c->timeout = gshmemi_cfg.BOOTSTRAP_TIMEOUT > 0 ? gshmemi_cfg.BOOTSTRAP_TIMEOUT : 120;
    pthread_mutex_init(&c->host_lock, NULL);
    vote mine;
    my_vote(s, &mine);
    gshmemi_status st = s->boot.ops->allgather(&s->boot, &mine, all, sizeof mine);
    bool serve = false;
    if (st == GSHMEM_SUCCESS) st = decide(s, c, all, &serve);
    free(all);
    if (st != GSHMEM_SUCCESS || !serve) return st;
    if (!(c->reach = calloc((size_t)s->npes, sizeof *c->reach))) return GSHMEM_ERR_NO_MEMORY;
    for (int pe = 0; pe < s->npes; pe++)
        if (s->boot.node_of[pe] != s->boot.node_id) {
            c->reach[pe] = true;
            c->n_reach++;
        }
    c->wqe_cnt = (uint32_t)gshmemi_cfg.IBGDA_SQ_SLOTS;
    if (mine.nic == NIC_SOFT) c->be = &gshmemi_ibgda_soft;
#ifdef GSHMEMI_HAVE_MLX5DV
    else c->be = c->setup == IBGDA_SETUP_DEVX ? &gshmemi_ibgda_devx : &gshmemi_ibgda_verbs;
#endif
    if (!c->be) return GSHMEM_ERR_INTERNAL;   /* (decide() refused: no device without mlx5dv) */
    GSHMEMI_CHECK(c->be->open(c));
    GSHMEMI_CHECK(alloc_device(c));
    GSHMEMI_CHECK(make_qps(c));
    GSHMEMI_CHECK(alloc_buffers(c));
    for (int pe = 0; pe < s->npes; pe++) reach[pe] = c->reach[pe];
    char what[256];
    c->be->describe(c, what, sizeof what);
    gshmemi_info("ibgda: %s; %d remote PEs, %u-block send queues; %s", what, c->n_reach, c->wqe_cnt, c->why);
    return GSHMEM_SUCCESS;
}

/* ---- the heap's registration ------------------------------------------------------------ */
/* The tables the GPU reads, from their host copies: keys before ranges, so that a range found
 * has its keys (one stream, in order). The library's non-blocking stream: a kernel of the
 * program that runs meanwhile does not hold it up. */
static gshmemi_status push_tables(ibgda_ctx *c) {
    cudaStream_t st = (cudaStream_t)c->s->nb_stream;
    GSHMEMI_CUDA(cudaMemcpyAsync(c->d_rkeys, c->h_rkeys, (size_t)c->s->npes * MAXC * sizeof(uint32_t),
                                 cudaMemcpyHostToDevice, st));
    GSHMEMI_CUDA(cudaMemcpyAsync(c->d_lkeys, c->h_lkeys, sizeof c->h_lkeys, cudaMemcpyHostToDevice, st));
    GSHMEMI_CUDA(cudaMemcpyAsync(c->d_range, c->h_range, sizeof c->h_range, cudaMemcpyHostToDevice, st));
    GSHMEMI_CUDA(cudaStreamSynchronize(st));
    return GSHMEM_SUCCESS;
}

/* A key table's range list (nic_desc.h: [2 * cap + 1], an entry in use has a range end other
 * than 0): its last word, the entries in use counting from 0, which the GPU's walk stops at. */
static void count_entries(uint64_t *range, uint32_t cap) {
    uint64_t used = 0;
    for (uint32_t i = 0; i < cap; i++)
        if (range[2 * i + 1]) used = (uint64_t)i + 1;
    range[2 * (size_t)cap] = used;
}

static gshmemi_status ibgda_chunk_added(gshmemi_state *s, void *tctx, const gshmemi_chunk *ch) {
    ibgda_ctx *c = tctx;
    if (!c || !c->n_reach) return GSHMEM_SUCCESS;
    /* the same entry on every PE: chunks come and go collectively, in the same order */
    int e = 0;
    while (e < MAXC && c->chunk_used[e]) e++;
    const int full = e == MAXC;
    ibgda_key k = {0};
    gshmemi_status st = full ? GSHMEM_ERR_NO_MEMORY : c->be->reg(c, s->heap.base + ch->off, ch->size, true, &k);
    if (full)
        gshmemi_error("ibgda: the symmetric heap has %d registered chunks, the most the NIC's key tables hold "
                      "(GSHMEM_NIC_MAX_CHUNKS): start with a larger first chunk (GSHMEM_HEAP_CHUNK_MIN)", MAXC);
    /* everyone exchanges, failed or not: its key, or 0 and the failure */
    uint32_t out[2] = {st == GSHMEM_SUCCESS ? k.rkey : 0, st != GSHMEM_SUCCESS}, *keys = calloc((size_t)s->npes, sizeof out);
    gshmemi_status xs = keys ? s->boot.ops->allgather(&s->boot, out, keys, sizeof out) : GSHMEM_ERR_NO_MEMORY;
    for (int pe = 0; xs == GSHMEM_SUCCESS && pe < s->npes; pe++)
        if (keys[2 * pe + 1] && st == GSHMEM_SUCCESS) {
            gshmemi_error("ibgda: PE %d could not register heap chunk at offset %#llx (%llu MiB) with its NIC (its "
                          "message says why)", pe, (unsigned long long)ch->off, (unsigned long long)(ch->size >> 20));
            st = GSHMEM_ERR_NOT_AVAILABLE;
        }
    if (st == GSHMEM_SUCCESS) st = xs;
    for (int pe = 0; st == GSHMEM_SUCCESS && pe < s->npes; pe++) {
        c->h_rkeys[(size_t)pe * MAXC + e] = keys[2 * pe];
        if (c->reach[pe] && c->be->remote_region)
            st = c->be->remote_region(c, pe, (uint64_t)(uintptr_t)(s->heap.base + ch->off), ch->size, keys[2 * pe]);
    }
    free(keys);
    GSHMEMI_CHECK(st);
    c->chunk_key[e] = k;
    c->chunk_used[e] = true;
    c->h_lkeys[e] = k.lkey;
    c->h_range[2 * e] = ch->off;
    c->h_range[2 * e + 1] = ch->off + ch->size;
    count_entries(c->h_range, MAXC);
    return push_tables(c);
}

static gshmemi_status ibgda_chunk_removed(gshmemi_state *s, void *tctx, const gshmemi_chunk *ch) {
    ibgda_ctx *c = tctx;
    if (!c || !c->n_reach) return GSHMEM_SUCCESS;
    int e = 0;
    while (e < MAXC && !(c->chunk_used[e] && c->h_range[2 * e] == ch->off)) e++;
    if (e == MAXC) return GSHMEM_SUCCESS;   /* never registered */
    /* the GPU stops finding it first, then the registration goes */
    c->chunk_used[e] = false;
    c->h_range[2 * e] = c->h_range[2 * e + 1] = 0;
    count_entries(c->h_range, MAXC);
    GSHMEMI_CHECK(push_tables(c));
    for (int pe = 0; pe < s->npes; pe++)
        if (c->reach[pe] && c->be->remote_region)
            GSHMEMI_CHECK(c->be->remote_region(c, pe, (uint64_t)(uintptr_t)(s->heap.base + ch->off), 0, 0));
    c->be->dereg(c, &c->chunk_key[e]);
    return GSHMEM_SUCCESS;
}

/* ---- local regions (memory of this PE outside the heap) ---------------------------------- */
/* The local-region tables the GPU reads, from their host copies: keys before ranges, as
 * push_tables. */
static gshmemi_status push_local(ibgda_ctx *c) {
    cudaStream_t st = (cudaStream_t)c->s->nb_stream;
    count_entries(c->h_lrange, c->n_local);
    GSHMEMI_CUDA(cudaMemcpyAsync(c->d_llkeys, c->h_llkeys, c->n_local * sizeof *c->h_llkeys,
                                 cudaMemcpyHostToDevice, st));
    GSHMEMI_CUDA(cudaMemcpyAsync(c->d_lrange, c->h_lrange, (2 * (size_t)c->n_local + 1) * sizeof *c->h_lrange,
                                 cudaMemcpyHostToDevice, st));
    GSHMEMI_CUDA(cudaStreamSynchronize(st));
    return GSHMEM_SUCCESS;
}

static gshmemi_status ibgda_local_added(gshmemi_state *s, void *tctx, void *addr, size_t len, const char *call) {
    ibgda_ctx *c = tctx;
    if (!c || !c->n_reach) return GSHMEM_SUCCESS;
    uint32_t e = 0;
    while (e < c->n_local && c->h_lrange[2 * e + 1]) e++;
    if (e == c->n_local) {
        gshmemi_error("%s on PE %d: the NIC's table of local regions is full (%u: one per team that spans "
                      "nodes, GSHMEM_TEAMS_MAX): destroy teams no longer used", call, s->mype, c->n_local);
        return GSHMEM_ERR_NO_MEMORY;
    }
    ibgda_key k = {0};
    const gshmemi_status st = c->be->reg(c, addr, len, true, &k);
    if (st != GSHMEM_SUCCESS) {
        gshmemi_error("%s on PE %d: could not register %zu bytes of GPU memory at %p with the NIC (the message "
                      "above says why)", call, s->mype, len, addr);
        return st;
    }
    c->local_key[e] = k;
    c->h_llkeys[e] = k.lkey;
    c->h_lrange[2 * e] = (uint64_t)(uintptr_t)addr;
    c->h_lrange[2 * e + 1] = (uint64_t)(uintptr_t)addr + len;
    return push_local(c);
}

static void ibgda_local_removed(gshmemi_state *s, void *tctx, void *addr) {
    ibgda_ctx *c = tctx;
    (void)s;
    if (!c || !c->n_reach) return;
    for (uint32_t e = 0; e < c->n_local; e++) {
        if (!c->h_lrange[2 * e + 1] || c->h_lrange[2 * e] != (uint64_t)(uintptr_t)addr) continue;
        /* the GPU stops finding it first, then the registration goes */
        c->h_lrange[2 * e] = c->h_lrange[2 * e + 1] = 0;
        ibgda_key k = c->local_key[e];
        memset(&c->local_key[e], 0, sizeof c->local_key[e]);
        if (push_local(c) != GSHMEM_SUCCESS)
            gshmemi_warn("ibgda: could not update the GPU's table of local regions on PE %d", s->mype);
        c->be->dereg(c, &k);
        return;
    }
}

/* ---- the device state ------------------------------------------------------------------- */
static gshmemi_status ibgda_fill_device(gshmemi_state *s, void *tctx, gshmemi_device_state *d) {
    ibgda_ctx *c = tctx;
    if (!c || !c->n_reach) return GSHMEM_SUCCESS;
    d->nic.qps = c->d_qps;
    d->nic.rkeys = c->d_rkeys;
    d->nic.lkeys = c->d_lkeys;
    d->nic.chunk_range = c->d_range;
    d->nic.n_chunks = MAXC;
    d->nic.fetch = c->d_fetch;
    d->nic.fetch_lkey = c->fetch_key.lkey;
    d->nic.fetch_slots = c->fetch_slots;
    d->nic.local_range = c->d_lrange;
    d->nic.local_keys = c->d_llkeys;
    d->nic.n_local = c->n_local;
    /* the PEs this transport serves are reached through their QPs */
    int16_t *route = malloc((size_t)s->npes * sizeof *route);
    if (!route) return GSHMEM_ERR_NO_MEMORY;
    memcpy(route, s->pe_slot, (size_t)s->npes * sizeof *route);
    for (int pe = 0; pe < s->npes; pe++)
        if (c->reach[pe] && s->transports[s->pe_transport[pe]] == &gshmemi_transport_ibgda) route[pe] = GSHMEMI_ROUTE_NIC;
    cudaError_t e = cudaMemcpy((void *)(uintptr_t)d->pe_slot, route, (size_t)s->npes * sizeof *route,
                               cudaMemcpyHostToDevice);
    free(route);
    GSHMEMI_CUDA(e);
    if (!c->started) {
        GSHMEMI_CHECK(c->be->start(c));
        c->started = true;
    }
    return GSHMEM_SUCCESS;
}

/* ---- host-initiated operations ---------------------------------------------------------- */
/* The table entry holding heap offset off, or -1. */
static int entry_of(const ibgda_ctx *c, uint64_t off) {
    for (int i = 0; i < MAXC; i++)
        if (c->chunk_used[i] && off >= c->h_range[2 * i] && off < c->h_range[2 * i + 1]) return i;
    return -1;
}

/* Bytes of [a, a + n) inside its chunk from a (0: a is in no registered chunk). */
static uint64_t in_chunk(const ibgda_ctx *c, uint64_t a, uint64_t n, int *entry) {
    const uint64_t base = (uint64_t)(uintptr_t)c->s->heap.base;
    *entry = a >= base ? entry_of(c, a - base) : -1;
    if (*entry < 0) return 0;
    const uint64_t left = c->h_range[2 * *entry + 1] - (a - base);
    return n < left ? n : left;
}

static const char *synd_text(int s) {
    switch (s) {
    case 0x01: return "local length error";
    case 0x02: return "local QP operation error";
    case 0x04: return "local protection error";
    case 0x05: return "flushed: an earlier work request of the QP failed";
    case 0x10: return "bad response";
    case 0x11: return "local access error";
    case 0x12: return "remote invalid request";
    case 0x13: return "remote access error";
    case 0x14: return "remote operation error";
    case 0x15: return "transport retry counter exceeded (the peer did not answer)";
    case 0x16: return "RNR retry counter exceeded";
    case 0x22: return "remote aborted";
    default: return "see the mlx5 syndromes";
    }
}

/* Waits for WQE t of the host QP to pe; a failure says what, where and why. */
static gshmemi_status host_wait(ibgda_ctx *c, gshmemi_hostq *q, uint64_t t, const char *op, uint64_t raddr,
                                uint64_t n) {
    gshmemi_status st = gshmemi_hostq_wait(q, t, c->timeout);
    if (st == GSHMEM_SUCCESS) return st;
    if (q->failed)
        gshmemi_error("ibgda: %s of %llu bytes to PE %d at %#llx: the NIC completed it with an error (syndrome "
                      "%#04x: %s; vendor syndrome %#04x; docs/ibgda.md, \"Errors\")", op, (unsigned long long)n, q->pe,
                      (unsigned long long)raddr, q->err[GSHMEM_NIC_CQE_SYNDROME],
                      synd_text(q->err[GSHMEM_NIC_CQE_SYNDROME]), q->err[GSHMEM_NIC_CQE_VENDOR_SYNDROME]);
    return st;
}

static gshmemi_status host_reserve(ibgda_ctx *c, gshmemi_hostq *q, unsigned nbb, uint64_t *t, const char *op) {
    *t = gshmemi_hostq_reserve(q, nbb, c->timeout);
    if (*t != UINT64_MAX) return GSHMEM_SUCCESS;
    if (q->failed)
        gshmemi_error("ibgda: %s to PE %d: the host's queue pair is in error since an earlier work request failed "
                      "(syndrome %#04x: %s)", op, q->pe, q->err[GSHMEM_NIC_CQE_SYNDROME],
                      synd_text(q->err[GSHMEM_NIC_CQE_SYNDROME]));
    return q->failed ? GSHMEM_ERR_INTERNAL : GSHMEM_ERR_TIMEOUT;
}

/* The remote key of a symmetric range at pe, and how much of it one chunk holds. */
static gshmemi_status remote_piece(ibgda_ctx *c, const char *op, int pe, uint64_t raddr, uint64_t n,
                                   uint32_t *rkey, uint64_t *len) {
    int e;
    *len = in_chunk(c, raddr, n, &e);
    if (!*len) {
        gshmemi_error("ibgda: %s to PE %d: address %#llx is not in a registered chunk of the symmetric heap",
                      op, pe, (unsigned long long)raddr);
        return GSHMEM_ERR_INVALID_ARG;
    }
    *rkey = c->h_rkeys[(size_t)pe * MAXC + e];
    return GSHMEM_SUCCESS;
}

/* put / get of n bytes: in pieces of one chunk (both ends), at most 1 GiB, through the
 * registered buffer unless the local side is in this PE's heap. */
static gshmemi_status host_rma(ibgda_ctx *c, bool get, uint64_t raddr, uint8_t *local, uint64_t n, int pe,
                               const char *op) {
    gshmemi_hostq *q = &c->host_qps[pe].host;
    const uint64_t l0 = (uint64_t)(uintptr_t)local;
    for (uint64_t off = 0; off < n;) {
        uint32_t rkey, lkey;
        uint64_t len, llen;
        GSHMEMI_CHECK(remote_piece(c, op, pe, raddr + off, n - off, &rkey, &len));
        int e;
        uint64_t laddr = l0 + off;
        if ((llen = in_chunk(c, laddr, len, &e))) {
            lkey = c->chunk_key[e].lkey;
            len = llen;
        } else {
            laddr = (uint64_t)(uintptr_t)c->bounce;
            lkey = c->bounce_key.lkey;
            if (len > c->bounce_bytes) len = c->bounce_bytes;
        }
        if (len > (1u << 30)) len = 1u << 30;
        const bool bounce = laddr == (uint64_t)(uintptr_t)c->bounce;
        if (!get && bounce) GSHMEMI_CUDA(cudaMemcpy(c->bounce, local + off, len, cudaMemcpyDefault));
        uint64_t t;
        GSHMEMI_CHECK(host_reserve(c, q, 1, &t, op));
        uint8_t *w = gshmemi_hostq_slot(q, t);
        if (get)
            gshmemi_wqe_get(w, (uint16_t)t, q->qpn, GSHMEMI_WQE_CQ_UPDATE, raddr + off, rkey, laddr, lkey, (uint32_t)len);
        else
            gshmemi_wqe_put(w, (uint16_t)t, q->qpn, GSHMEMI_WQE_CQ_UPDATE, raddr + off, rkey, laddr, lkey, (uint32_t)len);
        gshmemi_hostq_ring(q, t, 1);
        GSHMEMI_CHECK(host_wait(c, q, t, op, raddr + off, len));
        if (get && bounce) GSHMEMI_CUDA(cudaMemcpy(local + off, c->bounce, len, cudaMemcpyDefault));
        off += len;
    }
    return GSHMEM_SUCCESS;
}

static gshmemi_status host_put(void *tctx, void *dst_sym, const void *src, size_t n, int pe) {
    ibgda_ctx *c = tctx;
    pthread_mutex_lock(&c->host_lock);
    gshmemi_status st = host_rma(c, false, (uint64_t)(uintptr_t)dst_sym, (uint8_t *)(uintptr_t)src, n, pe, "put");
    pthread_mutex_unlock(&c->host_lock);
    return st;
}

static gshmemi_status host_get(void *tctx, void *dst, const void *src_sym, size_t n, int pe) {
    ibgda_ctx *c = tctx;
    pthread_mutex_lock(&c->host_lock);
    gshmemi_status st = host_rma(c, true, (uint64_t)(uintptr_t)src_sym, dst, n, pe, "get");
    pthread_mutex_unlock(&c->host_lock);
    return st;
}

/* One atomic into the registered buffer (4-byte results arrive big-endian: nic_wqe.h). */
static gshmemi_status host_atomic(ibgda_ctx *c, int op, size_t size, uint64_t raddr, uint64_t value, uint64_t cond,
                                  int pe, uint8_t flags, uint64_t *old, const char *what) {
    gshmemi_hostq *q = &c->host_qps[pe].host;
    uint32_t rkey;
    uint64_t len;
    GSHMEMI_CHECK(remote_piece(c, what, pe, raddr, size, &rkey, &len));
    const unsigned nbb = (unsigned)gshmemi_wqe_amo_bbs(op, (uint32_t)size);
    uint64_t t;
    GSHMEMI_CHECK(host_reserve(c, q, nbb, &t, what));
    if (!gshmemi_wqe_amo(gshmemi_hostq_slot(q, t), gshmemi_hostq_slot(q, t + 1), (uint16_t)t, q->qpn,
                         GSHMEMI_WQE_CQ_UPDATE | flags, op, (uint32_t)size, raddr, rkey,
                         (uint64_t)(uintptr_t)c->bounce, c->bounce_key.lkey, value, cond)) {
        gshmemi_error("ibgda: %s to PE %d: unknown atomic operation %d", what, pe, op);
        return GSHMEM_ERR_INVALID_ARG;
    }
    gshmemi_hostq_ring(q, t, nbb);
    GSHMEMI_CHECK(host_wait(c, q, t, what, raddr, size));
    if (old) {
        if (size == 4) {
            uint32_t v;
            memcpy(&v, c->bounce, 4);
            *old = __builtin_bswap32(v);
        } else {
            memcpy(old, c->bounce, 8);
        }
    }
    return GSHMEM_SUCCESS;
}

static gshmemi_status host_amo(void *tctx, int op, size_t size, void *dst_sym, uint64_t value, uint64_t cond, int pe,
                               uint64_t *old) {
    ibgda_ctx *c = tctx;
    pthread_mutex_lock(&c->host_lock);
    gshmemi_status st = host_atomic(c, op, size, (uint64_t)(uintptr_t)dst_sym, value, cond, pe, 0, old, "atomic");
    pthread_mutex_unlock(&c->host_lock);
    return st;
}

/* A signal: SET an 8-byte inline write, ADD an 8-byte add; `flags` orders it (put_signal's fence). */
static gshmemi_status host_sig(ibgda_ctx *c, uint64_t *sig, uint64_t value, int sig_op, int pe, uint8_t flags) {
    const uint64_t raddr = (uint64_t)(uintptr_t)sig;
    if (sig_op != GSHMEM_PROXY_SIG_SET)
        return host_atomic(c, GSHMEMI_AMO_ADD, 8, raddr, value, 0, pe, flags, NULL, "signal");
    gshmemi_hostq *q = &c->host_qps[pe].host;
    uint32_t rkey;
    uint64_t len;
    GSHMEMI_CHECK(remote_piece(c, "signal", pe, raddr, 8, &rkey, &len));
    uint64_t t;
    GSHMEMI_CHECK(host_reserve(c, q, 1, &t, "signal"));
    gshmemi_wqe_put_inline(gshmemi_hostq_slot(q, t), (uint16_t)t, q->qpn, GSHMEMI_WQE_CQ_UPDATE | flags, raddr, rkey,
                           &value, 8);
    gshmemi_hostq_ring(q, t, 1);
    return host_wait(c, q, t, "signal", raddr, 8);
}

static gshmemi_status host_signal(void *tctx, uint64_t *sig_sym, uint64_t value, int sig_op, int pe) {
    ibgda_ctx *c = tctx;
    pthread_mutex_lock(&c->host_lock);
    gshmemi_status st = host_sig(c, sig_sym, value, sig_op, pe, 0);
    pthread_mutex_unlock(&c->host_lock);
    return st;
}

static gshmemi_status host_put_signal(void *tctx, void *dst_sym, const void *src, size_t n, uint64_t *sig_sym,
                                      uint64_t value, int sig_op, int pe) {
    ibgda_ctx *c = tctx;
    pthread_mutex_lock(&c->host_lock);
    gshmemi_status st = host_rma(c, false, (uint64_t)(uintptr_t)dst_sym, (uint8_t *)(uintptr_t)src, n, pe,
                                 "put_signal");
    /* (the data completed before the signal is posted; the fence says so to the NIC as well) */
    if (st == GSHMEM_SUCCESS) st = host_sig(c, sig_sym, value, sig_op, pe, GSHMEMI_WQE_FENCE);
    pthread_mutex_unlock(&c->host_lock);
    return st;
}

/* ---- reports and the end ------------------------------------------------------------------ */
static void ibgda_describe(void *tctx, char *buf, size_t len) {
    ibgda_ctx *c = tctx;
    if (!c) {
        snprintf(buf, len, "ibgda: not used (one node)");
        return;
    }
    if (!c->n_reach) {
        snprintf(buf, len, "ibgda: %s", c->why);
        return;
    }
    char what[256];
    c->be->describe(c, what, sizeof what);
    snprintf(buf, len, "ibgda: %s; %s", what, c->why);
}

/* gshmem-info: which transport a job across nodes would take, with the devices found. */
static void ibgda_probe(char *buf, size_t len, bool deep) {
    const gshmemi_config *g = &gshmemi_cfg;
    const int want = parse_want(g->REMOTE_TRANSPORT);
    size_t o = 0;
#define OUT(...) (o += (size_t)snprintf(buf + o, o < len ? len - o : 0, __VA_ARGS__))
    if (want == WANT_PROXY) {
        OUT("ibgda: not used: GSHMEM_REMOTE_TRANSPORT=proxy (jobs across nodes take the proxy)\n");
        return;
    }
    if (!strcasecmp(g->IBGDA_NIC, "soft")) {
        OUT("ibgda: GSHMEM_IBGDA_NIC=soft: %s the software NIC, a test device (a host thread plays the NIC and "
            "performs work requests over the proxy's fabric link), %s queue shape\n",
            want == WANT_IBGDA ? "jobs across nodes use" : "taken only with GSHMEM_REMOTE_TRANSPORT=ibgda:",
            g->IBGDA_SETUP);
        return;
    }
#ifdef GSHMEMI_HAVE_MLX5DV
    char why[256];
    const int ok = gshmemi_ibgda_hw_probe(why, sizeof why);
    if (ok)
        OUT("ibgda: usable here: %s; a job across nodes takes it %s (%s setup)\n", why,
            want == WANT_IBGDA ? "(GSHMEM_REMOTE_TRANSPORT=ibgda)" : "when every node's PEs have one, else the proxy",
            g->IBGDA_SETUP);
    else
        OUT("ibgda: not usable here: %s; a job across nodes %s\n", why,
            want == WANT_IBGDA ? "fails at init (GSHMEM_REMOTE_TRANSPORT=ibgda)" : "takes the proxy");
    gshmemi_ibgda_hw_report(buf + (o < len ? o : len), o < len ? len - o : 0, deep);
#else
    (void)deep;
    OUT("ibgda: not in this build (rdma-core's mlx5dv was not found: install libibverbs-dev, or "
        "-Dibverbs_root=PREFIX); a job across nodes %s\n",
        want == WANT_IBGDA ? "fails at init (GSHMEM_REMOTE_TRANSPORT=ibgda)" : "takes the proxy");
#endif
#undef OUT
}

static void ibgda_finalize(gshmemi_state *s, void *tctx) {
    ibgda_ctx *c = tctx;
    (void)s;
    if (!c) return;
    if (c->be) {
        if (c->started && c->be->stop) c->be->stop(c);
        for (int pe = 0; c->reach && pe < s->npes; pe++) {
            if (!c->reach[pe]) continue;
            if (c->gpu_qps) c->be->qp_destroy(c, &c->gpu_qps[pe]);
            if (c->host_qps) c->be->qp_destroy(c, &c->host_qps[pe]);
        }
        for (int e = 0; e < MAXC; e++)
            if (c->chunk_used[e]) c->be->dereg(c, &c->chunk_key[e]);
        for (uint32_t e = 0; c->local_key && e < c->n_local; e++)
            if (c->h_lrange[2 * e + 1]) c->be->dereg(c, &c->local_key[e]);
        if (c->fetch) c->be->dereg(c, &c->fetch_key);
        if (c->bounce) c->be->dereg(c, &c->bounce_key);
        c->be->close(c);
    }
    if (c->fetch_host) cudaFreeHost(c->fetch);
    else if (c->d_fetch) cudaFree(c->d_fetch);
    if (c->bounce) cudaFreeHost(c->bounce);
    cudaFree(c->d_qps);
    cudaFree(c->d_ctr);
    cudaFree(c->d_err);
    cudaFree(c->d_rkeys);
    cudaFree(c->d_lkeys);
    cudaFree(c->d_range);
    cudaFree(c->d_lrange);
    cudaFree(c->d_llkeys);
    free(c->local_key);
    free(c->h_lrange);
    free(c->h_llkeys);
    free(c->h_rkeys);
    free(c->gpu_qps);
    free(c->host_qps);
    free(c->reach);
    pthread_mutex_destroy(&c->host_lock);
    free(c);
}

const struct gshmemi_transport_ops gshmemi_transport_ibgda = {
    .name = "ibgda",
    .load_store = false,
    .init = ibgda_init,
    .chunk_added = ibgda_chunk_added,
    .chunk_removed = ibgda_chunk_removed,
    .local_added = ibgda_local_added,
    .local_removed = ibgda_local_removed,
    .fill_device = ibgda_fill_device,
    .put = host_put,
    .get = host_get,
    .amo = host_amo,
    .signal = host_signal,
    .put_signal = host_put_signal,
    .describe = ibgda_describe,
    .probe = ibgda_probe,
    .finalize = ibgda_finalize,
};
