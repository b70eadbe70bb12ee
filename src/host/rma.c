/* Host RMA: blocking put/get from the host, the on-stream forms, quiet, barrier_all,
 * gshmem_ptr and the host wait. Load/store peers are reached through their mapping in
 * this process (window slot), so a host put is one copy-engine transfer. A remote PE
 * (another node) is reached through its transport's host operations (blocking forms) or,
 * for the on-stream forms, by a one-thread kernel on the stream that makes the device call
 * (which reaches the PE through its remote channel): stream-ordered and capturable in a CUDA
 * graph. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <string.h>

#include "entry.h"
#include "host_ops.h"
#include "kernels.h"
#include "state.h"
#include "gshmem.h"

/* Validates (call, pe, symmetric range) and returns where this PE reaches `sym` on `pe` by
 * load/store, or NULL for a PE reached by a remote transport (tops and tctx then name it). */
static char *route(const char *call, const void *sym, size_t n, int pe, const char *which,
                   const struct gshmemi_transport_ops **tops, void **tctx) {
    gshmemi_state *s = &gshmemi_g;
    *tops = NULL;
    *tctx = NULL;
    if (!s->initialized) gshmemi_fatal("%s: called before gshmem_init", call);
    if (pe < 0 || pe >= s->npes)
        gshmemi_fatal("%s: PE %d is out of range [0, %d)", call, pe, s->npes);
    const char *p = sym;
    if (!gshmemi_heap_contains(&s->heap, p) || (n && !gshmemi_heap_contains(&s->heap, p + n - 1)))
        gshmemi_fatal("%s: %s %p (+%zu bytes) is not inside the symmetric heap [%p, %p); it must "
                      "come from gshmem_malloc", call, which, sym, n, (void *)s->heap.base,
                      (void *)(s->heap.base + s->heap.mapped));
    if (s->pe_slot[pe] >= 0) return (char *)sym + (size_t)s->pe_slot[pe] * s->heap.window;
    *tops = NULL;
    const struct gshmemi_transport_ops *t = gshmemi_transport_of(pe, tctx);
    if (!t || !t->put) gshmemi_fatal("%s: PE %d is not reachable from PE %d", call, pe, s->mype);
    *tops = t;
    return NULL;
}

char *gshmemi_host_peer_addr(const char *call, const void *sym, size_t n, int pe,
                             const char *which) {
    const struct gshmemi_transport_ops *t;
    void *tctx;
    char *a = route(call, sym, n, pe, which, &t, &tctx);
    if (!a)
        gshmemi_fatal("%s: PE %d is on another node than PE %d, and this call has no remote form "
                      "yet (collectives across nodes: docs/api.md)", call, pe, gshmemi_g.mype);
    return a;
}

void gshmemi_host_cuda(int err, const char *call, const char *what) {
    if (err != cudaSuccess)
        gshmemi_fatal("%s: %s failed: %s (%s); if a device message is printed above, it names "
                      "the stuck or bad call", call, what, cudaGetErrorName((cudaError_t)err),
                      cudaGetErrorString((cudaError_t)err));
}
#define check_cuda gshmemi_host_cuda

void gshmemi_host_remote_done(gshmemi_status st, const char *call, int pe) {
    if (st != GSHMEM_SUCCESS)
        gshmemi_fatal("%s to PE %d: the remote transport failed (%s); see the message above", call,
                      pe, gshmemi_status_str(st));
}

#define ROUTE(call, sym, n, pe, which) route(call, sym, n, pe, which, &tops, &tctx)

static void copy_on(const char *call, void *dst, const void *src, size_t n, cudaStream_t st,
                    bool sync) {
    if (n == 0) return;
    check_cuda(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, st), call, "cudaMemcpyAsync");
    if (sync) check_cuda(cudaStreamSynchronize(st), call, "cudaStreamSynchronize");
}

/* A blocking call to a remote PE reads (writes) device memory through the transport, outside
 * the program's streams. It first waits for the work queued before it on the legacy stream, as a
 * load/store peer's copy on the library's blocking stream does: a pageable cudaMemcpy to the
 * source returns before its DMA has landed, and the transport must not read the old bytes. */
static void after_legacy(const char *call) {
    cudaEvent_t ev = (cudaEvent_t)gshmemi_g.legacy_ev;
    check_cuda(cudaEventRecord(ev, (cudaStream_t)gshmemi_g.stream), call, "cudaEventRecord");
    check_cuda(cudaEventSynchronize(ev), call, "cudaEventSynchronize");
}
#define REMOTE(call, op) (after_legacy(call), (op))

void gshmemi_host_putmem(void *dest, const void *src, size_t n, int pe) {
    const struct gshmemi_transport_ops *tops;
    void *tctx;
    char *d = ROUTE("gshmem_putmem", dest, n, pe, "dest");
    if (!d) return gshmemi_host_remote_done(n ? REMOTE("gshmem_putmem", tops->put(tctx, dest, src, n, pe)) : 0,
                                               "gshmem_putmem", pe);
    copy_on("gshmem_putmem", d, src, n, (cudaStream_t)gshmemi_g.stream, true);
}

void gshmemi_host_getmem(void *dest, const void *src, size_t n, int pe) {
    const struct gshmemi_transport_ops *tops;
    void *tctx;
    char *s = ROUTE("gshmem_getmem", src, n, pe, "source");
    if (!s) return gshmemi_host_remote_done(n ? REMOTE("gshmem_getmem", tops->get(tctx, dest, src, n, pe)) : 0,
                                               "gshmem_getmem", pe);
    copy_on("gshmem_getmem", dest, s, n, (cudaStream_t)gshmemi_g.stream, true);
}

/* On-stream RMA of n bytes (get: from src on pe into dest): one copy-engine transfer on the
 * stream for a load/store peer, a one-thread kernel that waits for the transfer for a remote
 * PE. Both are ordered with the stream's other work, so the _nbi forms are these too. */
void gshmemi_stream_rma(int get, void *dest, const void *src, size_t n, int pe,
                        struct CUstream_st *st, const char *call) {
    const struct gshmemi_transport_ops *tops;
    void *tctx;
    if (!get) {
        char *d = ROUTE(call, dest, n, pe, "dest");
        if (!d) {   /* (no bytes: nothing to post; a NIC would read a byte count of 0 as 2 GiB) */
            if (n) check_cuda(gshmemi_launch_remote(st, GSHMEMI_REMOTE_PUT, dest, src, n, NULL, 0, 0, pe), call,
                              "kernel launch");
            return;
        }
        return copy_on(call, d, src, n, (cudaStream_t)st, false);
    }
    char *s = ROUTE(call, src, n, pe, "source");
    if (!s) {
        if (n) check_cuda(gshmemi_launch_remote(st, GSHMEMI_REMOTE_GET, (void *)src, dest, n, NULL, 0, 0, pe), call,
                          "kernel launch");
        return;
    }
    copy_on(call, dest, s, n, (cudaStream_t)st, false);
}

void gshmemx_putmem_on_stream(void *dest, const void *src, size_t n, int pe, gshmemx_stream_t st) {
    gshmemi_stream_rma(0, dest, src, n, pe, st, "gshmemx_putmem_on_stream");
}

void gshmemx_getmem_on_stream(void *dest, const void *src, size_t n, int pe, gshmemx_stream_t st) {
    gshmemi_stream_rma(1, dest, src, n, pe, st, "gshmemx_getmem_on_stream");
}

/* A p on a stream: the value is read now and travels in the kernel's arguments. */
void gshmemi_stream_p(void *dest, const void *value, size_t size, int pe, struct CUstream_st *st,
                      const char *call) {
    const struct gshmemi_transport_ops *tops;
    void *tctx;
    (void)ROUTE(call, dest, size, pe, "dest");
    uint64_t v = 0;
    memcpy(&v, value, size);
    check_cuda(gshmemi_launch_p(st, dest, v, (int)size, pe), call, "kernel launch");
}

/* A g on a stream returns the value, so it waits for the stream: the read follows the
 * stream's earlier work and is done when this returns. */
void gshmemi_stream_g(void *out, const void *src, size_t size, int pe, struct CUstream_st *st,
                      const char *call) {
    const struct gshmemi_transport_ops *tops;
    void *tctx;
    char *s = ROUTE(call, src, size, pe, "source");
    if (!s) {
        check_cuda(cudaStreamSynchronize((cudaStream_t)st), call, "cudaStreamSynchronize");
        return gshmemi_host_remote_done(REMOTE(call, tops->get(tctx, out, src, size, pe)), call, pe);
    }
    copy_on(call, out, s, size, (cudaStream_t)st, true);
}

/* Host puts complete before they return, so quiet only drains our own stream. */
void gshmemi_host_quiet(void) {
    if (!gshmemi_g.initialized) gshmemi_fatal("gshmem_quiet: called before gshmem_init");
    check_cuda(cudaStreamSynchronize((cudaStream_t)gshmemi_g.stream), "gshmem_quiet",
               "cudaStreamSynchronize");
}

/* Work enqueued on a stream completes in stream order, and a kernel's stores to peers are
 * performed by the time the kernel completes, so for load/store peers there is nothing
 * left to wait for: later work on the stream already sees the puts complete. */
void gshmemx_quiet_on_stream(gshmemx_stream_t stream) {
    if (!gshmemi_g.initialized) gshmemi_fatal("gshmemx_quiet_on_stream: called before gshmem_init");
    /* remote PEs: what kernels posted to their remote channels completes at a device quiet */
    if (gshmemi_g.has_remote)
        check_cuda(gshmemi_launch_remote(stream, GSHMEMI_REMOTE_QUIET, NULL, NULL, 0, NULL, 0, 0, 0),
                   "gshmemx_quiet_on_stream", "kernel launch");
}

static void sync_internal(const char *call) {
    int err = cudaStreamSynchronize((cudaStream_t)gshmemi_g.stream);
    if (err != cudaSuccess)
        gshmemi_fatal("%s: a gshmem kernel failed (%s: %s); if a device message is printed "
                      "above, it names the stuck or bad call", call,
                      cudaGetErrorName((cudaError_t)err), cudaGetErrorString((cudaError_t)err));
}

void gshmemx_barrier_all_on_stream(gshmemx_stream_t stream) {
    if (!gshmemi_g.initialized) gshmemi_fatal("gshmemx_barrier_all_on_stream: called before gshmem_init");
    check_cuda(gshmemi_launch_barrier_all(stream), "gshmemx_barrier_all_on_stream", "kernel launch");
}

/* The barrier kernel runs on our blocking stream: it starts after work on the legacy default
 * stream, and returns once every PE's kernel has passed the barrier. */
void gshmemi_host_barrier_all(void) {
    if (!gshmemi_g.initialized) gshmemi_fatal("gshmem_barrier_all: called before gshmem_init");
    check_cuda(gshmemi_launch_barrier_all(gshmemi_g.stream), "gshmem_barrier_all", "kernel launch");
    sync_internal("gshmem_barrier_all");
}

/* Strided host copies: one 2-D copy-engine transfer (rows of one element, pitches = strides). */
static void strided_check(const char *call, ptrdiff_t dst, ptrdiff_t sst) {
    if (dst < 1 || sst < 1)
        gshmemi_fatal("%s: strides must be >= 1 element (dst %td, sst %td)", call, dst, sst);
}

/* To a remote PE: one transfer per element (the transport has no strided operation). */
static void remote_strided(const struct gshmemi_transport_ops *t, void *tctx, bool get, char *dest,
                           const char *src, ptrdiff_t dst, ptrdiff_t sst, size_t n, size_t es, int pe,
                           const char *call) {
    after_legacy(call);
    for (size_t i = 0; i < n; i++) {
        char *d = dest + i * (size_t)dst * es;
        const char *sp = src + i * (size_t)sst * es;
        gshmemi_host_remote_done(get ? t->get(tctx, d, sp, es, pe) : t->put(tctx, d, sp, es, pe), call, pe);
    }
}

void gshmemi_host_iput(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t n,
                       size_t es, int pe, const char *call) {
    const struct gshmemi_transport_ops *tops;
    void *tctx;
    strided_check(call, dst, sst);
    if (n == 0) return;
    char *d = ROUTE(call, dest, ((n - 1) * (size_t)dst + 1) * es, pe, "dest");
    if (!d) return remote_strided(tops, tctx, false, dest, src, dst, sst, n, es, pe, call);
    cudaStream_t st = (cudaStream_t)gshmemi_g.stream;
    check_cuda(cudaMemcpy2DAsync(d, (size_t)dst * es, src, (size_t)sst * es, es, n,
                                 cudaMemcpyDefault, st), call, "cudaMemcpy2DAsync");
    check_cuda(cudaStreamSynchronize(st), call, "cudaStreamSynchronize");
}

void gshmemi_host_iget(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t n,
                       size_t es, int pe, const char *call) {
    const struct gshmemi_transport_ops *tops;
    void *tctx;
    strided_check(call, dst, sst);
    if (n == 0) return;
    const char *sp = ROUTE(call, src, ((n - 1) * (size_t)sst + 1) * es, pe, "source");
    if (!sp) return remote_strided(tops, tctx, true, dest, src, dst, sst, n, es, pe, call);
    cudaStream_t st = (cudaStream_t)gshmemi_g.stream;
    check_cuda(cudaMemcpy2DAsync(dest, (size_t)dst * es, sp, (size_t)sst * es, es, n,
                                 cudaMemcpyDefault, st), call, "cudaMemcpy2DAsync");
    check_cuda(cudaStreamSynchronize(st), call, "cudaStreamSynchronize");
}

/* Strided on a stream: one 2-D copy-engine transfer on the stream, or for a remote PE one
 * stream-ordered transfer per element. */
void gshmemi_stream_strided(int get, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst,
                            size_t n, size_t es, int pe, struct CUstream_st *st, const char *call) {
    const struct gshmemi_transport_ops *tops;
    void *tctx;
    strided_check(call, dst, sst);
    if (n == 0) return;
    const void *sym = get ? src : dest;
    char *p = ROUTE(call, sym, ((n - 1) * (size_t)(get ? sst : dst) + 1) * es, pe,
                    get ? "source" : "dest");
    if (p) {
        check_cuda(cudaMemcpy2DAsync(get ? dest : p, (size_t)dst * es, get ? p : src,
                                     (size_t)sst * es, es, n, cudaMemcpyDefault, (cudaStream_t)st),
                   call, "cudaMemcpy2DAsync");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        char *d = (char *)dest + i * (size_t)dst * es;
        const char *s = (const char *)src + i * (size_t)sst * es;
        int e = get ? gshmemi_launch_remote(st, GSHMEMI_REMOTE_GET, (void *)s, d, es, NULL, 0, 0, pe)
                    : gshmemi_launch_remote(st, GSHMEMI_REMOTE_PUT, d, s, es, NULL, 0, 0, pe);
        check_cuda(e, call, "kernel launch");
    }
}

static int sig_check(const char *call, int sig_op) {
    if (sig_op != GSHMEM_SIGNAL_SET && sig_op != GSHMEM_SIGNAL_ADD)
        gshmemi_fatal("%s: sig_op %d is not GSHMEM_SIGNAL_SET (0) or GSHMEM_SIGNAL_ADD (1)", call,
                      sig_op);
    return sig_op;
}

/* The copy completes (synchronized) before the signal is written, so the data is visible
 * at the target before the signal is. */
void gshmemi_host_put_signal(void *dest, const void *src, size_t n, uint64_t *sig_addr,
                             uint64_t signal, int sig_op, int pe, const char *call) {
    const struct gshmemi_transport_ops *tops;
    void *tctx;
    sig_check(call, sig_op);
    char *d = ROUTE(call, dest, n, pe, "dest");
    uint64_t *sp = (uint64_t *)ROUTE(call, sig_addr, sizeof *sig_addr, pe, "sig_addr");
    if (!d)
        return gshmemi_host_remote_done(REMOTE(call, tops->put_signal(tctx, dest, src, n, sig_addr, signal, sig_op, pe)),
                                        call, pe);
    copy_on(call, d, src, n, (cudaStream_t)gshmemi_g.stream, true);
    check_cuda(gshmemi_launch_signal(gshmemi_g.stream, sp, signal, sig_op, 1), call, "kernel launch");
    check_cuda(cudaStreamSynchronize((cudaStream_t)gshmemi_g.stream), call, "cudaStreamSynchronize");
}

/* Stream order: the signal kernel starts after the copy has completed. */
void gshmemx_putmem_signal_on_stream(void *dest, const void *src, size_t n, uint64_t *sig_addr,
                                     uint64_t signal, int sig_op, int pe, gshmemx_stream_t st) {
    gshmemi_stream_put_signal(dest, src, n, sig_addr, signal, sig_op, pe, st,
                              "gshmemx_putmem_signal_on_stream");
}

void gshmemi_stream_put_signal(void *dest, const void *src, size_t n, uint64_t *sig_addr,
                               uint64_t signal, int sig_op, int pe, struct CUstream_st *st,
                               const char *call) {
    const struct gshmemi_transport_ops *tops;
    void *tctx;
    sig_check(call, sig_op);
    char *d = ROUTE(call, dest, n, pe, "dest");
    uint64_t *sp = (uint64_t *)ROUTE(call, sig_addr, sizeof *sig_addr, pe, "sig_addr");
    if (!d)
        return check_cuda(gshmemi_launch_remote(st, GSHMEMI_REMOTE_PUT_SIGNAL, dest, src, n, sig_addr,
                                                signal, sig_op, pe), call, "kernel launch");
    copy_on(call, d, src, n, (cudaStream_t)st, false);
    check_cuda(gshmemi_launch_signal(st, sp, signal, sig_op, 1), call, "kernel launch");
}

void gshmemx_signal_op_on_stream(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                                 gshmemx_stream_t st) {
    const char *call = "gshmemx_signal_op_on_stream";
    const struct gshmemi_transport_ops *tops;
    void *tctx;
    sig_check(call, sig_op);
    uint64_t *sp = (uint64_t *)ROUTE(call, sig_addr, sizeof *sig_addr, pe, "sig_addr");
    if (!sp)
        return check_cuda(gshmemi_launch_remote(st, GSHMEMI_REMOTE_SIGNAL, NULL, NULL, 0, sig_addr, signal,
                                                sig_op, pe), call, "kernel launch");
    check_cuda(gshmemi_launch_signal(st, sp, signal, sig_op, 0), call, "kernel launch");
}

/* For load/store peers completing puts to some PEs is completing all of them. */
void gshmemi_host_pe_quiet(const int *target_pes, size_t npes) {
    if (!gshmemi_g.initialized) gshmemi_fatal("gshmem_pe_quiet: called before gshmem_init");
    if (npes && !target_pes) gshmemi_fatal("gshmem_pe_quiet: target_pes is NULL with npes %zu", npes);
    for (size_t i = 0; i < npes; i++)
        if (target_pes[i] < 0 || target_pes[i] >= gshmemi_g.npes)
            gshmemi_fatal("gshmem_pe_quiet: target_pes[%zu] = %d is out of range [0, %d)", i,
                          target_pes[i], gshmemi_g.npes);
    gshmemi_host_quiet();
}

void *gshmemi_host_ptr(const void *dest, int pe) {
    gshmemi_state *s = &gshmemi_g;
    if (!s->initialized || pe < 0 || pe >= s->npes || !gshmemi_heap_contains(&s->heap, dest) ||
        s->pe_slot[pe] < 0)
        return NULL;
    return (char *)dest + (size_t)s->pe_slot[pe] * s->heap.window;
}

int gshmem_addr_accessible(const void *addr, int pe) {
    gshmemi_state *s = &gshmemi_g;
    return s->initialized && pe >= 0 && pe < s->npes && gshmemi_heap_contains(&s->heap, addr) &&
           s->pe_transport[pe] >= 0;
}
