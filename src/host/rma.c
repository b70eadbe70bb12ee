/* Host RMA: blocking put/get from the host, the on-stream forms, quiet, barrier_all,
 * gshmem_ptr and the host wait. Load/store peers are reached through their mapping in
 * this process (window slot), so a host put is one copy-engine transfer. */
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "internal.h"
#include "gshmem.h"

/* Validates (call, pe, symmetric range) and returns where this PE reaches `sym` on `pe`;
 * ends the job with a message on bad arguments (the OpenSHMEM calls return void). */
static char *peer_addr(const char *call, const void *sym, size_t n, int pe, const char *which) {
    gshmemi_state *s = &gshmemi_g;
    if (!s->initialized) gshmemi_fatal("%s: called before gshmem_init", call);
    if (pe < 0 || pe >= s->npes)
        gshmemi_fatal("%s: PE %d is out of range [0, %d)", call, pe, s->npes);
    const char *p = sym;
    if (!gshmemi_heap_contains(&s->heap, p) || (n && !gshmemi_heap_contains(&s->heap, p + n - 1)))
        gshmemi_fatal("%s: %s %p (+%zu bytes) is not inside the symmetric heap [%p, %p); it must "
                      "come from gshmem_malloc", call, which, sym, n, (void *)s->heap.base,
                      (void *)(s->heap.base + s->heap.mapped));
    if (s->pe_slot[pe] < 0) gshmemi_fatal("%s: PE %d is not reachable from PE %d", call, pe, s->mype);
    return (char *)sym + (size_t)s->pe_slot[pe] * s->heap.window;
}

static void check_cuda(int err, const char *call, const char *what) {
    if (err != cudaSuccess)
        gshmemi_fatal("%s: %s failed: %s (%s)", call, what, cudaGetErrorName((cudaError_t)err),
                      cudaGetErrorString((cudaError_t)err));
}

static void copy_on(const char *call, void *dst, const void *src, size_t n, cudaStream_t st,
                    bool sync) {
    if (n == 0) return;
    check_cuda(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, st), call, "cudaMemcpyAsync");
    if (sync) check_cuda(cudaStreamSynchronize(st), call, "cudaStreamSynchronize");
}

void gshmemi_host_putmem(void *dest, const void *src, size_t n, int pe) {
    char *d = peer_addr("gshmem_putmem", dest, n, pe, "dest");
    copy_on("gshmem_putmem", d, src, n, (cudaStream_t)gshmemi_g.stream, true);
}

void gshmemi_host_getmem(void *dest, const void *src, size_t n, int pe) {
    char *s = peer_addr("gshmem_getmem", src, n, pe, "source");
    copy_on("gshmem_getmem", dest, s, n, (cudaStream_t)gshmemi_g.stream, true);
}

void gshmemx_putmem_on_stream(void *dest, const void *src, size_t n, int pe, gshmemx_stream_t st) {
    char *d = peer_addr("gshmemx_putmem_on_stream", dest, n, pe, "dest");
    copy_on("gshmemx_putmem_on_stream", d, src, n, (cudaStream_t)st, false);
}

void gshmemx_getmem_on_stream(void *dest, const void *src, size_t n, int pe, gshmemx_stream_t st) {
    char *s = peer_addr("gshmemx_getmem_on_stream", src, n, pe, "source");
    copy_on("gshmemx_getmem_on_stream", dest, s, n, (cudaStream_t)st, false);
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
    (void)stream;
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

void gshmemi_host_wait_until(void *ivar, size_t size, int cmp, uint64_t value, int is_signed) {
    (void)peer_addr("gshmem_wait_until", ivar, size, gshmemi_g.mype, "ivar");
    if (cmp < GSHMEM_CMP_EQ || cmp > GSHMEM_CMP_GE)
        gshmemi_fatal("gshmem_wait_until: comparison %d is not one of GSHMEM_CMP_*", cmp);
    check_cuda(gshmemi_launch_wait_until(gshmemi_g.stream, ivar, size, cmp, value, is_signed),
               "gshmem_wait_until", "kernel launch");
    sync_internal("gshmem_wait_until");
}

/* Reads this PE's copy of ivar and compares, as the sized signed or unsigned type. */
int gshmemi_host_test(void *ivar, size_t size, int cmp, uint64_t value, int is_signed) {
    (void)peer_addr("gshmem_test", ivar, size, gshmemi_g.mype, "ivar");
    if (cmp < GSHMEM_CMP_EQ || cmp > GSHMEM_CMP_GE)
        gshmemi_fatal("gshmem_test: comparison %d is not one of GSHMEM_CMP_*", cmp);
    uint64_t raw = 0;
    check_cuda(cudaMemcpy(&raw, ivar, size, cudaMemcpyDeviceToHost), "gshmem_test", "cudaMemcpy");
    int shift = 64 - 8 * (int)size;
    /* sign- or zero-extend both sides from `size` bytes, then compare as 64-bit */
    int64_t a = is_signed ? (int64_t)(raw << shift) >> shift : (int64_t)raw;
    int64_t b = is_signed ? (int64_t)(value << shift) >> shift : (int64_t)(value & (~0ull >> shift));
    int c = is_signed ? (a > b) - (a < b) : ((uint64_t)a > (uint64_t)b) - ((uint64_t)a < (uint64_t)b);
    switch (cmp) {
    case GSHMEM_CMP_EQ: return c == 0;
    case GSHMEM_CMP_NE: return c != 0;
    case GSHMEM_CMP_GT: return c > 0;
    case GSHMEM_CMP_LE: return c <= 0;
    case GSHMEM_CMP_LT: return c < 0;
    default: return c >= 0;
    }
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
