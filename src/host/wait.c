/* Host point-to-point synchronization: wait_until / test and their _all/_any/_some/_vector
 * forms block (or test once) in the calling thread by polling this PE's copy through the
 * non-blocking internal stream — never behind user kernels on the legacy stream, which may
 * be the writers. Same deadline (GSHMEM_WAIT_TIMEOUT) as device waits. The on-stream forms
 * enqueue a waiting kernel instead. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cuda_runtime_api.h>

#include "config.h"
#include "entry.h"
#include "host_ops.h"
#include "kernels.h"
#include "state.h"
#include "gshmem.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Element i of a host buffer of `size`-byte integers, sign- or zero-extended. */
static int64_t elem(const void *buf, size_t i, size_t size, int is_signed) {
    uint64_t raw = 0;
    memcpy(&raw, (const char *)buf + i * size, size);
    int shift = 64 - 8 * (int)size;
    return is_signed ? (int64_t)(raw << shift) >> shift : (int64_t)raw;
}

static int compare(int64_t a, int64_t b, int is_signed, int cmp) {
    int c = is_signed ? (a > b) - (a < b)
                      : ((uint64_t)a > (uint64_t)b) - ((uint64_t)a < (uint64_t)b);
    switch (cmp) {
    case GSHMEM_CMP_EQ: return c == 0;
    case GSHMEM_CMP_NE: return c != 0;
    case GSHMEM_CMP_GT: return c > 0;
    case GSHMEM_CMP_LE: return c <= 0;
    case GSHMEM_CMP_LT: return c < 0;
    default: return c >= 0;
    }
}

static void check_args(const char *call, size_t size, int cmp) {
    if (!gshmemi_g.initialized) gshmemi_fatal("%s: called before gshmem_init", call);
    if (cmp < GSHMEM_CMP_EQ || cmp > GSHMEM_CMP_GE)
        gshmemi_fatal("%s: comparison %d is not one of GSHMEM_CMP_EQ/NE/GT/LE/LT/GE", call, cmp);
    if (size != 2 && size != 4 && size != 8)
        gshmemi_fatal("%s: variables of %zu bytes are not a point-to-point sync type", call, size);
}

size_t gshmemi_host_wait_set(int mode, int wait, void *ivars, size_t n, size_t size, int is_signed,
                             const int *status, int cmp, const void *values, const void *value,
                             size_t *indices, void *snapshot, const char *call) {
    static const char *ops[] = {"==", "!=", ">", "<=", "<", ">="};
    check_args(call, size, cmp);
    if (n == 0) return mode == GSHMEMI_WAIT_ALL ? 1 : mode == GSHMEMI_WAIT_ANY ? SIZE_MAX : 0;
    (void)gshmemi_host_peer_addr(call, ivars, n * size, gshmemi_g.mype, "ivars");
    if (mode == GSHMEMI_WAIT_SOME && !indices) gshmemi_fatal("%s: indices is NULL", call);
    char *buf = malloc(n * size);
    if (!buf) gshmemi_fatal("%s: out of host memory for %zu variables", call, n);
    cudaStream_t st = (cudaStream_t)gshmemi_g.nb_stream;
    int64_t single = value ? elem(value, 0, size, is_signed) : 0;
    double t0 = now_s(), limit = gshmemi_cfg.WAIT_TIMEOUT;
    size_t result;
    for (unsigned polls = 0;; polls++) {
        gshmemi_host_cuda(cudaMemcpyAsync(buf, ivars, n * size, cudaMemcpyDeviceToHost, st), call,
                          "cudaMemcpyAsync");
        gshmemi_host_cuda(cudaStreamSynchronize(st), call, "cudaStreamSynchronize");
        size_t included = 0, hits = 0, first = SIZE_MAX;
        for (size_t i = 0; i < n; i++) {
            if (status && status[i]) continue;
            included++;
            int64_t want = values ? elem(values, i, size, is_signed) : single;
            if (compare(elem(buf, i, size, is_signed), want, is_signed, cmp)) {
                if (first == SIZE_MAX) first = i;
                if (mode == GSHMEMI_WAIT_SOME) indices[hits] = i;
                hits++;
            }
        }
        if (mode == GSHMEMI_WAIT_ALL && hits == included) { result = 1; break; }
        if (mode == GSHMEMI_WAIT_ANY && (hits || !included)) { result = first; break; }
        if (mode == GSHMEMI_WAIT_SOME && (hits || !included)) { result = hits; break; }
        if (!wait) { result = mode == GSHMEMI_WAIT_ANY ? SIZE_MAX : 0; break; }
        double t = now_s() - t0;
        if (limit > 0 && t > limit)
            gshmemi_fatal("%s: waited %.1f s for %zu variable(s) at %p to satisfy %s %lld (first "
                          "value now %lld); did the PE that should write them exit, hang or take "
                          "another path? (GSHMEM_WAIT_TIMEOUT sets the limit, 0 = none)",
                          call, t, n, ivars, ops[cmp],
                          (long long)(values ? elem(values, 0, size, is_signed) : single),
                          (long long)elem(buf, 0, size, is_signed));
        if (polls > 200) usleep(polls > 2000 ? 200 : 20);   /* back off: a wait of seconds */
    }
    if (snapshot) memcpy(snapshot, buf, n * size);
    free(buf);
    return result;
}

void gshmemi_stream_wait(void *ivars, size_t n, size_t size, int is_signed, const int *status,
                         int cmp, const void *values, uint64_t value, gshmemx_stream_t stream,
                         const char *call) {
    check_args(call, size, cmp);
    if (n == 0) return;
    (void)gshmemi_host_peer_addr(call, ivars, n * size, gshmemi_g.mype, "ivars");
    gshmemi_host_cuda(gshmemi_launch_wait_all(stream, ivars, n, size, is_signed, status, cmp,
                                              values, value), call, "kernel launch");
}

void gshmemx_signal_wait_until_on_stream(uint64_t *sig_addr, int cmp, uint64_t cmp_value,
                                         gshmemx_stream_t stream) {
    gshmemi_stream_wait(sig_addr, 1, sizeof *sig_addr, 0, NULL, cmp, NULL, cmp_value, stream,
                        "gshmemx_signal_wait_until_on_stream");
}
