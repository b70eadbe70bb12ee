/* The proxy transport as the library sees it: the ops table entry that reaches the PEs of
 * other nodes. It creates this PE's proxy (libfabric endpoint, address exchange) on the first
 * heap chunk, one descriptor ring for the GPU (slots, control words and ring-owned completion
 * slots in pinned host memory mapped to the GPU; the producers' ticket counter in GPU memory),
 * starts the proxy thread, and gives the device state the channel. Staged mode reaches the
 * GPU heap through the memory operations below (CUDA copies, stream memory operations and
 * batched atomic kernels on a stream of the proxy's own, completed asynchronously; atomics
 * stay atomic with the GPU's own), in a CUDA context of the proxy's own: a program thread
 * waiting in a blocking CUDA call (cudaMemcpy while its kernel waits for data from another
 * node) holds a lock of its context that the proxy's calls would wait for, a deadlock
 * (bench/probes/ctx_lock.cu), and the proxy's stream never shares a hardware queue with the
 * program's streams. The proxy itself (the other files of this folder) names no CUDA. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "cuda_driver.h"
#include "cuda_util.h"
#include "amo_batch.h"
#include "memq.h"
#include "placement.h"
#include "proxy.h"
#include "relay.h"
#include "state.h"
#include "trace.h"
#include "gshmem/device/state.h"

typedef struct proxy_tctx {
    gshmemi_proxy *x;
    gshmem_proxy_chan host_chan;  /* the ring as the proxy sees it (host addresses) */
    gshmem_proxy_chan dev_chan;   /* the same ring as the GPU sees it */
    void *ring_mem;               /* host registration of the ring (slots .. rets) */
    size_t ring_bytes;
    uint64_t *d_words;            /* GPU memory: [0] producers' tail, [D_GW ..] the ring's
                                     gpu_words (chan_seen is its GW_RETIRED) */
    int cuda_dev;
    bool remote_any;
    /* staged mode's memory operations (proxy thread only): memq.c on this stream, in this
     * context (the heap is VMM memory: every context of the process on this GPU reaches it) */
    CUcontext ctx;                /* the proxy's own CUDA context on this PE's GPU */
    cudaStream_t stream;          /* copies, atomic batches and stream memory operations */
    uint64_t *words;              /* pinned, mapped: [0] the last ticket the stream passed,
                                     [1 ..] the atomics' old values */
    uint64_t *d_words_host;       /* the same, as the GPU sees it */
    gshmemi_amo_desc *amos;       /* pinned, mapped: the atomics' descriptors */
    gshmemi_amo_desc *d_amos;     /* the same, as the GPU sees it */
    gshmemi_memq q;
    /* the relay (under MPS; docs/proxy.md, "The relay"): entries, and its words (performed, stop,
     * its ticket word: GSHMEMI_RELAY_DONE / _STOP / _TICKET; pinned, mapped) */
    gshmemi_relay_slot *relay, *d_relay;
    uint64_t *relay_ctrl, *d_relay_ctrl;
    uint64_t relay_k;             /* entries written */
    cudaStream_t relay_stream;
    bool relay_running;           /* its kernel runs (stop_relay ends it; the memory stays until
                                   * close_context, where the memory queue may still read it) */
    /* How long the memory queue's CUDA calls took (GSHMEM_DEBUG=1 prints it at finalize): they
     * only enqueue, so a long one means the driver held the proxy thread (a full stream queue,
     * a lock), which nothing outside the proxy can tell */
    struct {
        uint64_t n;
        double sum, max;
    } ct[3];
    /* another transport's producer on the host ring (proxy_desc_chan): its drain, before finalize */
    void (*drain)(void *);
    void *drain_ctx;
} proxy_tctx;

enum { CT_COPY, CT_WRITE, CT_ATOMICS };
enum { D_GW = 8, D_WORDS = D_GW + GSHMEM_PROXY_GPU_WORDS };   /* tail alone on its line */

static void ct_add(proxy_tctx *c, int k, double t0) {
    double w = gshmemi_proxy_now() - t0;
    c->ct[k].n++;
    c->ct[k].sum += w;
    if (w > c->ct[k].max) c->ct[k].max = w;
}

/* ---- the memory queue's CUDA backend (proxy thread only) -----------------------------
 * Everything goes on one stream of the proxy (high priority, non-blocking). A ticket is a
 * cuStreamWriteValue64 of its number into pinned host memory (the write carries a memory
 * barrier: everything before it is visible first), which memq.c polls: the proxy never
 * synchronizes with the GPU, and an operation that waits for the target GPU (an atomic batch
 * needs a free block slot) delays only what is queued behind it. Atomics run as one
 * gshmemi_launch_amo_batch kernel per batch, system scope: atomic with the GPU's own atomics
 * on the location (they all meet in its L2), like the host forms of the atomics (amo.c). */
static int cu_fail(const char *what, CUresult r) {
    const char *name = "?";
    cuGetErrorName(r, &name);
    gshmemi_error("proxy: %s failed: %s", what, name);
    return GSHMEM_ERR_INTERNAL;
}

/* The proxy thread makes the proxy's context current once and keeps it. */
static __thread CUcontext thread_bound;

static int bind_thread(proxy_tctx *c) {
    if (thread_bound == c->ctx) return 0;
    CUresult r = cuCtxSetCurrent(c->ctx);
    if (r != CUDA_SUCCESS) return cu_fail("making the proxy's CUDA context current (cuCtxSetCurrent)", r);
    thread_bound = c->ctx;
    return 0;
}

/* Other threads (init, finalize) push the proxy's context around what they do in it. */
static int ctx_enter(proxy_tctx *c) {
    CUresult r = cuCtxPushCurrent(c->ctx);
    return r == CUDA_SUCCESS ? 0 : cu_fail("entering the proxy's CUDA context (cuCtxPushCurrent)", r);
}

static void ctx_leave(void) {
    CUcontext popped;
    cuCtxPopCurrent(&popped);
}

static int mem_fail(const char *what, cudaError_t e) {
    gshmemi_error("proxy: %s failed: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
    return GSHMEM_ERR_INTERNAL;
}

static int be_copy(void *ctx, void *dst, const void *src, size_t n, bool to_device) {
    proxy_tctx *c = ctx;
    if (bind_thread(c)) return GSHMEM_ERR_INTERNAL;
    double t0 = gshmemi_proxy_now();
    cudaError_t e = cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, c->stream);
    ct_add(c, CT_COPY, t0);
    if (e != cudaSuccess)
        return mem_fail(to_device ? "copy to GPU memory (cudaMemcpyAsync)" : "copy from GPU memory (cudaMemcpyAsync)", e);
    return 0;
}

/* A 64-bit stream write (no SM needed), after everything before it on the stream. */
static int stream_write(proxy_tctx *c, uint64_t *addr, uint64_t value, const char *what) {
    if (bind_thread(c)) return GSHMEM_ERR_INTERNAL;
    const bool ticket = addr == c->d_words_host;   /* GSHMEM_PROXY_TRACE tells the two apart */
    gshmemi_ptrace(ticket ? TR_TICKET_B : TR_WRITE_B, 0);
    double t0 = gshmemi_proxy_now();
    CUresult r = cuStreamWriteValue64((CUstream)c->stream, (CUdeviceptr)(uintptr_t)addr, value,
                                      CU_STREAM_WRITE_VALUE_DEFAULT);
    ct_add(c, CT_WRITE, t0);
    gshmemi_ptrace(ticket ? TR_TICKET_E : TR_WRITE_E, 0);
    return r == CUDA_SUCCESS ? 0 : cu_fail(what, r);
}

static int be_write64(void *ctx, uint64_t *dev_addr, uint64_t value) {
    return stream_write(ctx, dev_addr, value, "signal update in GPU memory (cuStreamWriteValue64)");
}

static int be_atomics(void *ctx, unsigned first, unsigned n) {
    proxy_tctx *c = ctx;
    if (bind_thread(c)) return GSHMEM_ERR_INTERNAL;
    double t0 = gshmemi_proxy_now();
    cudaError_t e = (cudaError_t)gshmemi_launch_amo_batch(c->stream, c->d_amos, c->d_words_host + 1, first, n,
                                                          GSHMEMI_MEMQ_SLOTS);
    ct_add(c, CT_ATOMICS, t0);
    return e == cudaSuccess ? 0 : mem_fail("atomics on GPU memory (batch kernel)", e);
}

static int be_ticket(void *ctx, uint64_t t) {
    proxy_tctx *c = ctx;
    return stream_write(c, c->d_words_host, t, "marking memory operations (cuStreamWriteValue64 to host memory)");
}

static int be_sync(void *ctx) {
    proxy_tctx *c = ctx;
    if (bind_thread(c)) return GSHMEM_ERR_INTERNAL;
    cudaError_t e = cudaStreamSynchronize(c->stream);
    return e == cudaSuccess ? 0 : mem_fail("completing memory operations (cudaStreamSynchronize)", e);
}

static void be_describe(void *ctx, char *buf, size_t len) {
    proxy_tctx *c = ctx;
    cudaError_t e = cudaStreamQuery(c->stream);
    snprintf(buf, len, "stream: %s): data and atomics from other nodes wait for this GPU, which runs nothing "
             "of the proxy's stream (its own CUDA context): an atomic batch needs one block slot, which kernels "
             "holding every SM while they wait deny it (docs/design.md, the proxy's memory queue",
             e == cudaErrorNotReady ? "busy" : cudaGetErrorString(e));
}

/* The relay's side of the memory queue (proxy thread only). */
static int be_relay_write(void *ctx, uint64_t *addr, uint64_t value) {
    proxy_tctx *c = ctx;
    if (!c->relay_running) return 1;   /* stopped: the stream takes it */
    if (c->relay_k - __atomic_load_n(&c->relay_ctrl[GSHMEMI_RELAY_DONE], __ATOMIC_ACQUIRE) >= GSHMEMI_RELAY_SLOTS)
        return 1;
    gshmemi_relay_slot *s = &c->relay[c->relay_k % GSHMEMI_RELAY_SLOTS];
    /* the ticket word is host memory: the relay stores through its GPU address */
    uint64_t a = addr == &c->relay_ctrl[GSHMEMI_RELAY_TICKET]
                     ? (uint64_t)(uintptr_t)&c->d_relay_ctrl[GSHMEMI_RELAY_TICKET]
                     : (uint64_t)(uintptr_t)addr;
    if (a >> 48) return 1;   /* outside what a tag holds: the stream takes it */
    s->value = value;
    __atomic_store_n(&s->tag, a << 16 | (++c->relay_k & 0xffff), __ATOMIC_RELEASE);
    return 0;
}

static uint64_t be_relay_done(void *ctx) {
    proxy_tctx *c = ctx;
    return __atomic_load_n(&c->relay_ctrl[GSHMEMI_RELAY_DONE], __ATOMIC_ACQUIRE);
}

static int be_wait_relay(void *ctx, uint64_t n) {
    proxy_tctx *c = ctx;
    if (bind_thread(c)) return GSHMEM_ERR_INTERNAL;
    CUresult r = cuStreamWaitValue64((CUstream)c->stream, (CUdeviceptr)(uintptr_t)c->d_relay_ctrl, n,
                                     CU_STREAM_WAIT_VALUE_GEQ);
    return r == CUDA_SUCCESS ? 0 : cu_fail("ordering the stream after the relay (cuStreamWaitValue64)", r);
}

/* A CUDA tool injected into this process, or NULL: the Nsight tools name their library in
 * CUDA_INJECTION64_PATH; compute-sanitizer sets NV_SANITIZER_INJECTION_* (and names its
 * library in NVTX_INJECTION64_PATH). */
static const char *cuda_tool(void) {
    extern char **environ;
    const char *v = getenv("CUDA_INJECTION64_PATH");
    if (v && *v) return "CUDA_INJECTION64_PATH";
    for (char **e = environ; e && *e; e++)
        if (!strncmp(*e, "NV_SANITIZER_INJECTION", 22)) return "compute-sanitizer";
    return NULL;
}

/* The relay's pinned memory (its kernel stopped or never started). */
static void free_relay(proxy_tctx *c) {
    if (c->relay) cudaFreeHost(c->relay);
    if (c->relay_ctrl) cudaFreeHost(c->relay_ctrl);
    c->relay = NULL;
    c->relay_ctrl = NULL;
}

/* The relay runs where the proxy's context shares the GPU with the program's (MPS: the
 * placement's flag, which the no-MPS warning reads too) and GSHMEM_PROXY_RELAY allows it.
 * Called in the proxy's context. */
static gshmemi_status open_relay(proxy_tctx *c) {
    if (!gshmemi_cfg.PROXY_RELAY || gshmemi_place.mps <= 0) return GSHMEM_SUCCESS;
    /* A CUDA tool (compute-sanitizer, Nsight Compute or Systems) is attached: a kernel that
     * never ends would stall a profiler that replays each kernel alone, and memcheck flags
     * the relay's stores into heap chunks mapped after its launch ("Invalid __global__ write
     * ... out of bounds ... inside the nearest allocation"), then kills it. Stream memory
     * operations do the relay's work then. */
    const char *tool = cuda_tool();
    if (tool) {
        gshmemi_info("proxy: a CUDA tool is attached (%s): the relay stays off", tool);
        return GSHMEM_SUCCESS;
    }
    gshmemi_status st = GSHMEM_SUCCESS;
#define STEP(call)                                                                                   \
    if (st == GSHMEM_SUCCESS) st = gshmemi_cuda_check((int)(call), #call, __FILE__, __LINE__)
    STEP(cudaHostAlloc((void **)&c->relay, GSHMEMI_RELAY_SLOTS * sizeof *c->relay,
                       cudaHostAllocMapped | cudaHostAllocPortable));
    if (st == GSHMEM_SUCCESS) memset(c->relay, 0, GSHMEMI_RELAY_SLOTS * sizeof *c->relay);
    STEP(cudaHostGetDevicePointer((void **)&c->d_relay, c->relay, 0));
    STEP(cudaHostAlloc((void **)&c->relay_ctrl, 4096, cudaHostAllocMapped | cudaHostAllocPortable));
    if (st == GSHMEM_SUCCESS) memset(c->relay_ctrl, 0, 4096);
    STEP(cudaHostGetDevicePointer((void **)&c->d_relay_ctrl, c->relay_ctrl, 0));
    STEP(gshmemi_relay_load());
    STEP(cudaStreamCreateWithFlags(&c->relay_stream, cudaStreamNonBlocking));
    STEP(gshmemi_launch_relay(c->relay_stream, c->d_relay, c->d_relay_ctrl));
#undef STEP
    if (st != GSHMEM_SUCCESS) {
        gshmemi_warn("proxy: the relay could not start: stores into GPU memory from other nodes go by stream "
                     "memory operations (slower; GSHMEM_PROXY_RELAY=0 says so without this warning)");
        if (c->relay_stream) cudaStreamDestroy(c->relay_stream);
        c->relay_stream = NULL;
        free_relay(c);
        cudaGetLastError();
    } else {
        c->relay_running = true;
    }
    return GSHMEM_SUCCESS;
}

/* Stops the relay's kernel (its last entries performed first); in the proxy's context. Its
 * entries and words stay until close_context: the memory queue still reads the relay's ticket
 * word, and a store after this goes by the stream (be_relay_write refuses it). */
static void stop_relay(proxy_tctx *c) {
    if (!c->relay_running) return;
    __atomic_store_n(&c->relay_ctrl[GSHMEMI_RELAY_STOP], 1, __ATOMIC_RELEASE);
    if (cudaStreamSynchronize(c->relay_stream) != cudaSuccess) cudaGetLastError();
    cudaStreamDestroy(c->relay_stream);
    c->relay_stream = NULL;
    c->relay_running = false;
}

/* memops.pin / unpin: ctx is the memory queue; its backend's context is ours */
static void mem_pin(void *ctx, void *host, size_t n) {
    proxy_tctx *c = ((gshmemi_memq *)ctx)->be.ctx;
    if (ctx_enter(c)) return;
    cudaError_t e = cudaHostRegister(host, n, cudaHostRegisterPortable);
    ctx_leave();
    if (e != cudaSuccess) {
        cudaGetLastError();   /* not fatal: copies of pageable memory are slower, not wrong */
        gshmemi_warn("proxy: page-locking %zu bytes of staging buffers failed (%s): copies to and from GPU memory "
                     "stay pageable, which makes them synchronous and slow (raise the locked-memory limit, "
                     "ulimit -l)", n, cudaGetErrorString(e));
    }
}

static void mem_unpin(void *ctx, void *host) {
    proxy_tctx *c = ((gshmemi_memq *)ctx)->be.ctx;
    if (ctx_enter(c)) return;
    /* unpinning synchronizes the proxy's context, which would wait for the relay forever: the
     * staging buffers are unpinned only at finalize, after the memory queue's last flush */
    stop_relay(c);
    if (cudaHostUnregister(host) != cudaSuccess) cudaGetLastError();
    ctx_leave();
}

/* The proxy's context and what lives in it: its stream, the tickets' word and the atomics'
 * old values and descriptors (pinned, mapped), and the batch kernel loaded before any kernel
 * of the program can wait for it. Leaves the caller's context current. */
static gshmemi_status open_context(proxy_tctx *c) {
#if CUDA_VERSION >= 13000
    CUresult r = cuCtxCreate(&c->ctx, NULL, 0, (CUdevice)c->cuda_dev);
#else
    CUresult r = cuCtxCreate(&c->ctx, 0, (CUdevice)c->cuda_dev);
#endif
    if (r != CUDA_SUCCESS) {
        c->ctx = NULL;
        cu_fail("creating the proxy's CUDA context (cuCtxCreate; a job across nodes uses two contexts per PE, "
                "two MPS clients where PEs share a GPU: check the MPS server's client limit and GPU memory)", r);
        return GSHMEM_ERR_INTERNAL;
    }
    /* cuCtxCreate made it current on this thread */
    gshmemi_status st = GSHMEM_SUCCESS;
    int lo = 0, hi = 0;
    size_t words = (1 + GSHMEMI_MEMQ_SLOTS) * sizeof *c->words, amos = GSHMEMI_MEMQ_SLOTS * sizeof *c->amos;
#define STEP(call)                                                                                   \
    if (st == GSHMEM_SUCCESS) st = gshmemi_cuda_check((int)(call), #call, __FILE__, __LINE__)
    STEP(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    STEP(cudaStreamCreateWithPriority(&c->stream, cudaStreamNonBlocking, hi));
    STEP(cudaHostAlloc((void **)&c->words, words, cudaHostAllocMapped | cudaHostAllocPortable));
    if (st == GSHMEM_SUCCESS) memset(c->words, 0, words);
    STEP(cudaHostGetDevicePointer((void **)&c->d_words_host, c->words, 0));
    STEP(cudaHostAlloc((void **)&c->amos, amos, cudaHostAllocMapped | cudaHostAllocPortable));
    if (st == GSHMEM_SUCCESS) memset(c->amos, 0, amos);
    STEP(cudaHostGetDevicePointer((void **)&c->d_amos, c->amos, 0));
    STEP(gshmemi_amo_batch_load());
#undef STEP
    if (st == GSHMEM_SUCCESS) st = open_relay(c);
    ctx_leave();
    return st;
}

static void close_context(proxy_tctx *c) {
    if (c->q.n_relayed) gshmemi_info("proxy: %llu stores into GPU memory went by the relay",
                                     (unsigned long long)c->q.n_relayed);
    if (c->ct[CT_COPY].n || c->ct[CT_WRITE].n || c->ct[CT_ATOMICS].n) {
        double mean[3];
        for (int k = 0; k < 3; k++) mean[k] = c->ct[k].n ? 1e6 * c->ct[k].sum / (double)c->ct[k].n : 0.0;
        gshmemi_info("proxy: the memory queue's CUDA calls: %llu copies (mean %.2f us, max %.1f), %llu stream "
                     "writes (mean %.2f, max %.1f), %llu atomic batches (mean %.2f, max %.1f)",
                     (unsigned long long)c->ct[CT_COPY].n, mean[CT_COPY], 1e6 * c->ct[CT_COPY].max,
                     (unsigned long long)c->ct[CT_WRITE].n, mean[CT_WRITE], 1e6 * c->ct[CT_WRITE].max,
                     (unsigned long long)c->ct[CT_ATOMICS].n, mean[CT_ATOMICS], 1e6 * c->ct[CT_ATOMICS].max);
    }
    if (!c->ctx || ctx_enter(c)) return;
    stop_relay(c);
    free_relay(c);
    if (c->words) cudaFreeHost(c->words);
    if (c->amos) cudaFreeHost(c->amos);
    if (c->stream) cudaStreamDestroy(c->stream);
    ctx_leave();
    cuCtxDestroy(c->ctx);
    c->ctx = NULL;
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

/* Staged mode without MPS: the proxy's context and the program's share the GPU by time slices,
 * so a placement the program's spinning kernel waits for waits for a slice: a p one way takes
 * a millisecond instead of microseconds (docs/performance.md has the numbers). Said once per
 * node (its first PE), with what to do. */
static void warn_no_mps(const gshmemi_state *s, const proxy_tctx *c) {
    if (gshmemi_proxy_mode(c->x) != GSHMEMI_PROXY_STAGED || s->boot.local_rank != 0 || gshmemi_place.mps > 0)
        return;
    gshmemi_warn("proxy transport (staged mode) without CUDA MPS on this node: the proxy's CUDA context and the "
                 "program's share each GPU by time slices, so device calls to other nodes that wait for their data "
                 "to be placed (p/signal then wait, g, fetching atomics, barriers) take milliseconds while a kernel "
                 "runs. Start MPS on every node before the job (nvidia-cuda-mps-control -d, as the GPUs' owner); "
                 "gshmrun starts one itself for jobs across nodes");
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
    GSHMEMI_CHECK(open_context(c));
    gshmemi_memq_backend be = {.ctx = c, .copy = be_copy, .write64 = be_write64, .atomics = be_atomics,
                               .ticket = be_ticket, .sync = be_sync, .describe = be_describe};
    if (c->relay) {
        be.relay_write = be_relay_write;
        be.relay_done = be_relay_done;
        be.wait_relay = be_wait_relay;
    }
    gshmemi_memq_init(&c->q, &be, c->amos, c->words + 1, c->words);
    if (c->relay) gshmemi_memq_set_relay(&c->q, &c->relay_ctrl[GSHMEMI_RELAY_TICKET]);
    gshmemi_proxy_memops mem = gshmemi_memq_ops(&c->q);
    mem.pin = mem_pin;
    mem.unpin = mem_unpin;
    GSHMEMI_CUDA(cudaMalloc((void **)&c->d_words, D_WORDS * sizeof(uint64_t)));
    GSHMEMI_CUDA(cudaMemset(c->d_words, 0, D_WORDS * sizeof(uint64_t)));
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
        .mem = mem,
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
    /* The ring's GPU-memory copies of head and retired (gshmem_proxy_chan.gpu_words): waiting
     * producers and quiets read GPU memory, one reader at a time reads the host word
     * (docs/proxy.md). GSHMEM_PROXY_GPU_COPIES picks them (3 both, 1 head, 2 retired, 0 none:
     * every waiter reads across PCIe). */
    c->dev_chan.gpu_words = NULL;
    const uint64_t mode = (uint64_t)(gshmemi_cfg.PROXY_GPU_COPIES & 3);
    if (mode) {
        GSHMEMI_CUDA(cudaMemcpy(c->d_words + D_GW + GSHMEM_PROXY_GW_MODE, &mode, sizeof mode, cudaMemcpyHostToDevice));
        c->dev_chan.gpu_words = c->d_words + D_GW;
    }
    GSHMEMI_CHECK(gshmemi_proxy_start(c->x));
    char what[256];
    snprintf(what, sizeof what, "%s, %s mode, address %s", gshmemi_proxy_provider(c->x),
             gshmemi_proxy_mode_name(c->x), gshmemi_proxy_address(c->x));
    gshmemi_info("proxy transport: %s; %llu-slot ring", what, (unsigned long long)c->host_chan.n_slots);
    warn_no_mps(s, c);
    return GSHMEM_SUCCESS;
}

static gshmemi_status proxy_fill_device(gshmemi_state *s, void *tctx, gshmemi_device_state *d) {
    proxy_tctx *c = tctx;
    (void)s;
    if (!c || !c->x) return GSHMEM_SUCCESS;
    d->chan = c->dev_chan;
    d->chan_seen = c->d_words + D_GW + GSHMEM_PROXY_GW_RETIRED;   /* quiet's shortcut word */
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

/* The host ring for another transport's producer in this process (transport.h, desc_chan). */
static gshmemi_status proxy_desc_chan(void *tctx, gshmem_proxy_chan *out, void (*drain)(void *), void *drain_ctx) {
    proxy_tctx *c = tctx;
    if (!c || !c->x) return GSHMEM_ERR_NOT_AVAILABLE;
    *out = gshmemi_proxy_host_chan(c->x);
    c->drain = drain;
    c->drain_ctx = drain_ctx;
    return GSHMEM_SUCCESS;
}

static void proxy_describe(void *tctx, char *buf, size_t len) {
    proxy_tctx *c = tctx;
    if (!c || !c->x) {
        snprintf(buf, len, "proxy: not used (one node)");
        return;
    }
    snprintf(buf, len, "proxy: %s, %s mode", gshmemi_proxy_provider(c->x), gshmemi_proxy_mode_name(c->x));
}

static void proxy_finalize(gshmemi_state *s, void *tctx) {
    proxy_tctx *c = tctx;
    (void)s;
    if (!c) return;
    /* another producer on the host ring finishes what it posted while the proxy still serves */
    if (c->drain) c->drain(c->drain_ctx);
    /* the GPU is done with the ring (finalize synchronized); the proxy frees it */
    if (c->ring_mem) cudaHostUnregister(c->ring_mem);
    if (c->x) {
        gshmemi_status st = gshmemi_proxy_error(c->x, NULL);
        if (gshmemi_proxy_finalize(c->x) != GSHMEM_SUCCESS && !st)
            gshmemi_warn("gshmem_finalize: the proxy transport did not finalize cleanly");
    }
    /* the relay is stopped before anything that may synchronize the proxy's context: this
     * thread has it current once the memory queue was flushed (bind_thread), and cudaFree
     * below would wait for a kernel that never ends */
    if (c->relay_running && !ctx_enter(c)) {
        stop_relay(c);
        ctx_leave();
    }
    if (c->d_words) cudaFree(c->d_words);
    close_context(c);
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
    .desc_chan = proxy_desc_chan,
    .finalize = proxy_finalize,
};
