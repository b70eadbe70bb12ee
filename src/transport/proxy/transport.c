/* The proxy transport as the library sees it: the ops table entry that reaches the PEs of
 * other nodes. It creates this PE's proxy (libfabric endpoint, address exchange) on the first
 * heap chunk, one descriptor ring for the GPU (slots, control words and ring-owned completion
 * slots in pinned host memory mapped to the GPU; the producers' ticket counter in GPU memory),
 * starts the proxy thread, and gives the device state the channel. Staged mode reaches the
 * GPU heap through the memory operations below (CUDA copies, stream memory operations and
 * batched atomic kernels on a stream of the proxy's own, completed asynchronously; atomics
 * stay atomic with the GPU's own). The proxy itself (the other files of this folder) names no
 * CUDA. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "proxy.h"
#include "gshmem/device/state.h"

#define AMO_SLOTS GSHMEMI_AMO_BATCH_MAX   /* atomics in flight at once (a full table waits for the oldest) */

typedef struct amo_pend {
    uint64_t t;        /* the ticket that covers it */
    uint64_t *old;     /* where the proxy wants the previous value */
} amo_pend;

typedef struct proxy_tctx {
    gshmemi_proxy *x;
    gshmem_proxy_chan host_chan;  /* the ring as the proxy sees it (host addresses) */
    gshmem_proxy_chan dev_chan;   /* the same ring as the GPU sees it */
    void *ring_mem;               /* host registration of the ring (slots .. rets) */
    size_t ring_bytes;
    uint64_t *d_words;            /* GPU memory: [0] producers' tail, [1] chan_seen */
    int cuda_dev;
    bool remote_any;
    /* staged mode's memory operations (proxy thread only) */
    cudaStream_t stream;          /* copies, atomic kernels and stream memory operations */
    uint64_t *words;              /* pinned, mapped: [0] the last ticket the stream passed,
                                     [1 ..] AMO_SLOTS atomics' old values */
    uint64_t *d_words_host;       /* the same, as the GPU sees it */
    gshmemi_amo_desc *amos;       /* pinned, mapped: AMO_SLOTS atomics' descriptors */
    gshmemi_amo_desc *d_amos;     /* the same, as the GPU sees it */
    uint64_t issued;              /* tickets whose stream write is enqueued */
    bool dirty;                   /* operations enqueued that no ticket covers yet */
    bool marked;                  /* ticket issued + 1 was handed out; its write is not enqueued */
    amo_pend pend[AMO_SLOTS];     /* atomics whose old value is still on its way */
    unsigned pend_h, pend_n;
    unsigned batch_first, batch_n; /* atomics recorded, not yet launched (pend's newest batch_n) */
    struct {                      /* the last 64 operations: what a stall waits for */
        uint64_t t;
        const char *what;
        uint64_t addr, n;
    } oplog[64];
    unsigned n_ops;
    uint64_t stall_at;            /* done() value when it last moved ... */
    double stall_since, stall_warned;  /* ... and when; the last "no progress" warning */
} proxy_tctx;

/* ---- memory operations of staged mode (proxy thread only) -----------------------------
 * Every operation goes on one stream of the proxy (high priority, non-blocking). A ticket is
 * a cuStreamWriteValue64 of its number into pinned host memory behind the operations it
 * covers (the write carries a memory barrier: everything before it is visible first), and
 * done reads that word. So the proxy polls host memory instead of synchronizing: it never
 * blocks on the GPU, and an operation that waits for the target GPU (an atomic kernel needs
 * a free block slot) delays only what is queued behind it.
 * Batching: mark hands out the next ticket number without enqueuing its write; the write
 * goes in when the proxy next asks what is done (commit), so the requests of one pass over
 * the completion queue share one write. Atomics (and signal adds) are recorded in a ring of
 * descriptors and launched as one kernel when anything else must be enqueued after them
 * (a copy, a stream write, a ticket): one launch for every atomic of a pass instead of one
 * each, in the same stream order. */
static __thread int thread_bound = -1;

static int bind_thread(proxy_tctx *c) {
    if (thread_bound == c->cuda_dev) return 0;
    if (cudaSetDevice(c->cuda_dev) != cudaSuccess) return GSHMEM_ERR_INTERNAL;
    thread_bound = c->cuda_dev;
    return 0;
}

static double mono_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static int mem_fail(const char *what, cudaError_t e) {
    gshmemi_error("proxy: %s failed: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
    return GSHMEM_ERR_INTERNAL;
}

static int cu_fail(const char *what, CUresult r) {
    const char *name = "?";
    cuGetErrorName(r, &name);
    gshmemi_error("proxy: %s failed: %s", what, name);
    return GSHMEM_ERR_INTERNAL;
}

static void logop(proxy_tctx *c, const char *what, const void *addr, uint64_t n) {
    c->dirty = true;   /* the next ticket covers it, whether or not it was handed out already */
    unsigned k = c->n_ops++ % 64;
    c->oplog[k].t = c->issued + 1;   /* the next mark covers it */
    c->oplog[k].what = what;
    c->oplog[k].addr = (uint64_t)(uintptr_t)addr;
    c->oplog[k].n = n;
}

/* The recorded atomics as one kernel, before whatever is enqueued next. */
static int launch_batch(proxy_tctx *c) {
    if (!c->batch_n) return 0;
    cudaError_t e = (cudaError_t)gshmemi_launch_amo_batch(c->stream, c->d_amos, c->d_words_host + 1, c->batch_first,
                                                          c->batch_n, AMO_SLOTS);
    c->batch_n = 0;
    if (e != cudaSuccess) return mem_fail("atomics on GPU memory (batch kernel)", e);
    return 0;
}

/* One copy on the proxy's stream, either way; `dev` is the GPU side (what a stall names). */
static int enqueue_copy(proxy_tctx *c, void *dst, const void *src, size_t n, const void *dev, const char *what) {
    if (bind_thread(c) || launch_batch(c)) return GSHMEM_ERR_INTERNAL;
    cudaError_t e = cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, c->stream);
    if (e != cudaSuccess) {
        char msg[64];
        snprintf(msg, sizeof msg, "%s GPU memory (cudaMemcpyAsync)", what);
        return mem_fail(msg, e);
    }
    logop(c, what, dev, n);
    return 0;
}

static int mem_copy_to(void *ctx, void *dst_dev, const void *src_host, size_t n) {
    return enqueue_copy(ctx, dst_dev, src_host, n, dst_dev, "copy to");
}

static int mem_copy_from(void *ctx, void *dst_host, const void *src_dev, size_t n) {
    return enqueue_copy(ctx, dst_host, src_dev, n, src_dev, "copy from");
}

static uint64_t mem_mark(void *ctx) {
    proxy_tctx *c = ctx;
    if (!c->dirty && !c->marked) return c->issued;
    c->marked = true;   /* commit enqueues its write */
    c->dirty = false;
    return c->issued + 1;
}

/* Enqueues the handed-out ticket's write (after the recorded atomics). */
static void commit(proxy_tctx *c) {
    if (!c->marked && !c->batch_n) return;
    if (bind_thread(c)) return;
    launch_batch(c);   /* a failure was said; the ticket still passes, the records time out */
    if (!c->marked) return;
    CUresult r = cuStreamWriteValue64((CUstream)c->stream, (CUdeviceptr)(uintptr_t)c->d_words_host, c->issued + 1,
                                      CU_STREAM_WRITE_VALUE_DEFAULT);
    if (r != CUDA_SUCCESS)   /* the operations' records time out with their own messages */
        cu_fail("marking memory operations (cuStreamWriteValue64 to host memory)", r);
    c->marked = false;
    c->issued++;
}

static uint64_t mem_done(void *ctx) {
    proxy_tctx *c = ctx;
    commit(c);
    uint64_t v = __atomic_load_n(&c->words[0], __ATOMIC_ACQUIRE);
    while (c->pend_n && c->pend[c->pend_h].t <= v) {
        amo_pend *p = &c->pend[c->pend_h];
        if (p->old) *p->old = __atomic_load_n(&c->words[1 + c->pend_h], __ATOMIC_RELAXED);   /* NULL: a signal add */
        c->pend_h = (c->pend_h + 1) % AMO_SLOTS;
        c->pend_n--;
    }
    if (v >= c->issued || v != c->stall_at) {   /* (issued: tickets whose write is enqueued) */
        c->stall_at = v;
        c->stall_since = c->stall_warned = 0;
        return v;
    }
    /* nothing passed since stall_since: say so (1 s, then every 10 s), with the stream's error */
    double now = mono_s();
    if (c->stall_since == 0) c->stall_since = now;
    else if (now - c->stall_since > 1.0 && now - c->stall_warned > 10.0) {
        c->stall_warned = now;
        cudaError_t e = cudaStreamQuery(c->stream);
        char first[256] = "";   /* the logged operations of the first mark not passed */
        size_t len = 0;
        for (unsigned i = c->n_ops > 64 ? c->n_ops - 64 : 0; i < c->n_ops && len < sizeof first - 64; i++) {
            unsigned k = i % 64;
            if (c->oplog[k].t != v + 1) continue;
            len += (size_t)snprintf(first + len, sizeof first - len, "%s%s %#llx (%llu B)", len ? ", " : "",
                                    c->oplog[k].what, (unsigned long long)c->oplog[k].addr,
                                    (unsigned long long)c->oplog[k].n);
        }
        gshmemi_warn("proxy: memory operations on the GPU made no progress for %.1f s (%llu of %llu marks "
                     "passed; stream: %s; waiting: %s): data and atomics from other nodes wait behind something "
                     "on this GPU, most likely a kernel queued behind a spinning wait in a stream that shares the "
                     "proxy stream's hardware queue; raise CUDA_DEVICE_MAX_CONNECTIONS (now %s) before the CUDA "
                     "context is made (docs/environment.md)", now - c->stall_since, (unsigned long long)v, (unsigned long long)c->issued,
                     e == cudaErrorNotReady ? "busy" : cudaGetErrorString(e), len ? first : "?",
                     getenv("CUDA_DEVICE_MAX_CONNECTIONS") ? getenv("CUDA_DEVICE_MAX_CONNECTIONS") : "unset: 8");
    }
    return v;
}

static int mem_flush(void *ctx) {
    proxy_tctx *c = ctx;
    if (bind_thread(c)) return GSHMEM_ERR_INTERNAL;
    uint64_t t = mem_mark(c);
    commit(c);
    cudaError_t e = cudaStreamSynchronize(c->stream);
    if (e != cudaSuccess) return mem_fail("completing memory operations (cudaStreamSynchronize)", e);
    for (long i = 0; mem_done(c) < t; i++)   /* the mark's write was performed with the stream */
        if (i > 100000000) {
            gshmemi_error("proxy: memory operations completed but their mark %llu never arrived in host memory",
                          (unsigned long long)t);
            return GSHMEM_ERR_INTERNAL;
        }
    return 0;
}

/* One system-scope atomic, recorded for the next batch kernel: atomic with the GPU's own
 * atomics on the location (they all meet in its L2), like the host forms of the atomics
 * (amo.c). Its old value goes to a slot of pinned host memory; done() hands it over. The
 * descriptor slot is written again only after its ticket passed (the kernel has read it). */
static int record_atomic(proxy_tctx *c, void *dev_addr, int op, size_t size, uint64_t operand, uint64_t compare,
                         uint64_t *old, const char *what) {
    if (bind_thread(c)) return GSHMEM_ERR_INTERNAL;
    if (c->pend_n == AMO_SLOTS) {
        int st = mem_flush(c);
        if (st) return st;
    }
    unsigned slot = (c->pend_h + c->pend_n) % AMO_SLOTS;
    c->amos[slot] = (gshmemi_amo_desc){.addr = (uint64_t)(uintptr_t)dev_addr, .operand = operand, .compare = compare,
                                       .op = (uint32_t)op, .size = (uint32_t)size};
    if (!c->batch_n) c->batch_first = slot;
    c->batch_n++;
    logop(c, what, dev_addr, size);
    c->pend[slot] = (amo_pend){.t = c->issued + 1, .old = old};   /* the next ticket covers it */
    c->pend_n++;
    return 0;
}

static int mem_atomic(void *ctx, void *dev_addr, int op, size_t size, uint64_t operand, uint64_t compare,
                      uint64_t *old) {
    return record_atomic(ctx, dev_addr, op, size, operand, compare, old, "atomic");
}

/* SET is a stream memory operation (cuStreamWriteValue64): no SM is needed, so a signal lands
 * even while the target's kernels fill its GPU share spinning for it (the remote barrier's
 * arrivals are SETs for that reason). ADD needs an atomic: a one-thread kernel, which waits
 * for a free block slot on the target GPU (docs/memory-model.md). Both are ordered after the
 * earlier operations of the stream (the data of earlier puts). */
static int mem_signal(void *ctx, uint64_t *dev_addr, int sig_op, uint64_t value) {
    proxy_tctx *c = ctx;
    if (sig_op != GSHMEM_SIGNAL_SET)   /* an add: an atomic of the batch, in stream order */
        return record_atomic(c, dev_addr, GSHMEM_PROXY_AMO_ADD, 8, value, 0, NULL, "signal add");
    if (bind_thread(c) || launch_batch(c)) return GSHMEM_ERR_INTERNAL;
    {
        CUresult r = cuStreamWriteValue64((CUstream)c->stream, (CUdeviceptr)(uintptr_t)dev_addr, value,
                                          CU_STREAM_WRITE_VALUE_DEFAULT);
        if (r != CUDA_SUCCESS) return cu_fail("signal update in GPU memory (cuStreamWriteValue64)", r);
        logop(c, "signal set (stream write)", dev_addr, 8);
    }
    return 0;
}

static void mem_pin(void *ctx, void *host, size_t n) {
    proxy_tctx *c = ctx;
    if (bind_thread(c)) return;
    if (cudaHostRegister(host, n, cudaHostRegisterDefault) != cudaSuccess) {
        cudaGetLastError();   /* not fatal: copies of pageable memory are slower, not wrong */
        gshmemi_info("proxy: page-locking %zu bytes of staging buffers failed; copies stay pageable", n);
    }
}

static void mem_unpin(void *ctx, void *host) {
    (void)ctx;
    if (cudaHostUnregister(host) != cudaSuccess) cudaGetLastError();
}

/* ---- the ops ------------------------------------------------------------------------- */
static gshmemi_status allgather_boot(void *ctx, const void *in, void *out, size_t len) {
    gshmemi_bootstrap *b = ctx;
    return b->ops->allgather(b, in, out, len);
}

static gshmemi_status proxy_init(gshmemi_state *s, void **tctx, bool *reach) {
    const gshmemi_bootstrap *b = &s->boot;
    *tctx = NULL;
    if (b->n_nodes <= 1) return GSHMEM_SUCCESS;   /* every PE is a load/store peer */
    proxy_tctx *c = calloc(1, sizeof *c);
    if (!c) return GSHMEM_ERR_NO_MEMORY;
    *tctx = c;
    c->cuda_dev = s->cuda_dev;
    for (int pe = 0; pe < s->npes; pe++)
        if (b->node_of[pe] != b->node_id) {
            reach[pe] = true;
            c->remote_any = true;
        }
    return GSHMEM_SUCCESS;
}

/* The first chunk: the heap base is known, so the proxy (collective) and its GPU ring are
 * made and the thread starts; later chunks widen the range descriptors may name. */
static gshmemi_status proxy_chunk_added(gshmemi_state *s, void *tctx, const gshmemi_chunk *ch) {
    proxy_tctx *c = tctx;
    (void)ch;
    if (!c) return GSHMEM_SUCCESS;
    if (c->x) {
        gshmemi_proxy_set_heap(c->x, s->heap.base, s->heap.mapped);
        return GSHMEM_SUCCESS;
    }
    int lo = 0, hi = 0;
    GSHMEMI_CUDA(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    GSHMEMI_CUDA(cudaStreamCreateWithPriority(&c->stream, cudaStreamNonBlocking, hi));
    GSHMEMI_CUDA(cudaHostAlloc((void **)&c->words, (1 + AMO_SLOTS) * sizeof *c->words, cudaHostAllocMapped));
    memset(c->words, 0, (1 + AMO_SLOTS) * sizeof *c->words);
    GSHMEMI_CUDA(cudaHostGetDevicePointer((void **)&c->d_words_host, c->words, 0));
    GSHMEMI_CUDA(cudaHostAlloc((void **)&c->amos, AMO_SLOTS * sizeof *c->amos, cudaHostAllocMapped));
    memset(c->amos, 0, AMO_SLOTS * sizeof *c->amos);
    GSHMEMI_CUDA(cudaHostGetDevicePointer((void **)&c->d_amos, c->amos, 0));
    GSHMEMI_CUDA(cudaMalloc((void **)&c->d_words, 2 * sizeof(uint64_t)));
    GSHMEMI_CUDA(cudaMemset(c->d_words, 0, 2 * sizeof(uint64_t)));
    gshmemi_proxy_params p = {
        .mype = s->mype,
        .npes = s->npes,
        .allgather = allgather_boot,
        .allgather_ctx = &s->boot,
        .heap_base = s->heap.base,
        .heap_size = s->heap.mapped,
        .heap_is_device = true,
        .single_host = s->boot.n_hosts == 1,
        .mode = GSHMEMI_PROXY_AUTO,
        .mem = {.ctx = c, .copy_to = mem_copy_to, .copy_from = mem_copy_from, .atomic = mem_atomic,
                .signal = mem_signal, .mark = mem_mark, .done = mem_done, .flush = mem_flush, .pin = mem_pin,
                .unpin = mem_unpin},
    };
    GSHMEMI_CHECK(gshmemi_proxy_create(&p, &c->x));
    GSHMEMI_CHECK(gshmemi_proxy_ring(c->x, 0, c->d_words, true, &c->host_chan));
    /* the ring's slots, control words and completion slots are one host allocation */
    c->ring_mem = c->host_chan.slots;
    c->ring_bytes = (size_t)c->host_chan.n_slots * (sizeof(gshmem_proxy_desc) + sizeof(gshmem_proxy_ret)) +
                    sizeof(gshmem_proxy_ctrl);
    GSHMEMI_CUDA(cudaHostRegister(c->ring_mem, c->ring_bytes, cudaHostRegisterMapped));
    char *d_mem = NULL;
    GSHMEMI_CUDA(cudaHostGetDevicePointer((void **)&d_mem, c->ring_mem, 0));
    c->dev_chan = c->host_chan;
    c->dev_chan.slots = (gshmem_proxy_desc *)d_mem;
    c->dev_chan.ctrl = (gshmem_proxy_ctrl *)(d_mem + ((char *)c->host_chan.ctrl - (char *)c->ring_mem));
    c->dev_chan.rets = (gshmem_proxy_ret *)(d_mem + ((char *)c->host_chan.rets - (char *)c->ring_mem));
    c->dev_chan.tail = c->d_words;
    GSHMEMI_CHECK(gshmemi_proxy_start(c->x));
    char what[256];
    snprintf(what, sizeof what, "%s, %s mode, address %s", gshmemi_proxy_provider(c->x),
             gshmemi_proxy_mode(c->x) == GSHMEMI_PROXY_STAGED ? "staged" : "direct",
             gshmemi_proxy_address(c->x));
    gshmemi_info("proxy transport: %s; %llu-slot ring", what, (unsigned long long)c->host_chan.n_slots);
    return GSHMEM_SUCCESS;
}

static gshmemi_status proxy_fill_device(gshmemi_state *s, void *tctx, gshmemi_device_state *d) {
    proxy_tctx *c = tctx;
    (void)s;
    if (!c || !c->x) return GSHMEM_SUCCESS;
    d->chan = c->dev_chan;
    d->chan_seen = c->d_words + 1;
    return GSHMEM_SUCCESS;
}

static gshmemi_status host_put(void *tctx, void *dst_sym, const void *src, size_t n, int pe) {
    return gshmemi_proxy_put(((proxy_tctx *)tctx)->x, dst_sym, src, n, pe);
}
static gshmemi_status host_get(void *tctx, void *dst, const void *src_sym, size_t n, int pe) {
    return gshmemi_proxy_get(((proxy_tctx *)tctx)->x, dst, src_sym, n, pe);
}
static gshmemi_status host_amo(void *tctx, int op, size_t size, void *dst_sym, uint64_t value, uint64_t cond,
                               int pe, uint64_t *old) {
    return gshmemi_proxy_amo(((proxy_tctx *)tctx)->x, op, size, dst_sym, value, cond, pe, old);
}
static gshmemi_status host_signal(void *tctx, uint64_t *sig_sym, uint64_t value, int sig_op, int pe) {
    return gshmemi_proxy_signal(((proxy_tctx *)tctx)->x, sig_sym, value, sig_op, pe);
}
static gshmemi_status host_put_signal(void *tctx, void *dst_sym, const void *src, size_t n, uint64_t *sig_sym,
                                      uint64_t value, int sig_op, int pe) {
    return gshmemi_proxy_put_signal(((proxy_tctx *)tctx)->x, dst_sym, src, n, sig_sym, value, sig_op, pe);
}

static void proxy_describe(void *tctx, char *buf, size_t len) {
    proxy_tctx *c = tctx;
    if (!c || !c->x) {
        snprintf(buf, len, "proxy: not used (one node)");
        return;
    }
    snprintf(buf, len, "proxy: %s, %s mode", gshmemi_proxy_provider(c->x),
             gshmemi_proxy_mode(c->x) == GSHMEMI_PROXY_STAGED ? "staged" : "direct");
}

static void proxy_finalize(gshmemi_state *s, void *tctx) {
    proxy_tctx *c = tctx;
    (void)s;
    if (!c) return;
    /* the GPU is done with the ring (finalize synchronized); the proxy frees it */
    if (c->ring_mem) cudaHostUnregister(c->ring_mem);
    if (c->x) {
        gshmemi_status st = gshmemi_proxy_error(c->x, NULL);
        if (gshmemi_proxy_finalize(c->x) != GSHMEM_SUCCESS && !st)
            gshmemi_warn("gshmem_finalize: the proxy transport did not finalize cleanly");
    }
    if (c->d_words) cudaFree(c->d_words);
    if (c->words) cudaFreeHost(c->words);
    if (c->amos) cudaFreeHost(c->amos);
    if (c->stream) cudaStreamDestroy(c->stream);
    free(c);
}

extern const struct gshmemi_transport_ops gshmemi_transport_proxy;
const struct gshmemi_transport_ops gshmemi_transport_proxy = {
    .name = "proxy",
    .load_store = false,
    .init = proxy_init,
    .chunk_added = proxy_chunk_added,
    .fill_device = proxy_fill_device,
    .put = host_put,
    .get = host_get,
    .amo = host_amo,
    .signal = host_signal,
    .put_signal = host_put_signal,
    .describe = proxy_describe,
    .finalize = proxy_finalize,
};
