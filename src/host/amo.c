/* Host forms of the atomics and of signal_op/signal_fetch: one single-thread kernel on the
 * internal non-blocking stream performs the same system-scope atomic a device call would
 * (so host and device atomics on one location stay atomic with each other); its result
 * comes back through a pinned, mapped word. Serialized by a lock (one result word). */
#include <pthread.h>
#include <string.h>
#include <cuda_runtime_api.h>

#include "entry.h"
#include "host_ops.h"
#include "kernels.h"
#include "state.h"

static pthread_mutex_t amo_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *amo_result;       /* pinned, mapped: written by the kernel */

static const char *op_name(int op) {
    static const char *names[] = {"fetch", "set", "swap", "compare_swap", "add", "and", "or", "xor"};
    return op >= 0 && op <= GSHMEMI_AMO_XOR ? names[op] : "?";
}

void gshmemi_host_amo(int op, void *dest, size_t size, const void *value, const void *cond,
                      void *result, int pe, const char *call) {
    if (op < 0 || op > GSHMEMI_AMO_XOR)
        gshmemi_fatal("%s: sig_op is not GSHMEM_SIGNAL_SET (0) or GSHMEM_SIGNAL_ADD (1)", call);
    if (size != 4 && size != 8)
        gshmemi_fatal("%s: atomics are 4 or 8 bytes wide, not %zu", call, size);
    if (((uintptr_t)dest & (size - 1)) != 0)
        gshmemi_fatal("%s: dest %p is not aligned to its %zu-byte type", call, dest, size);
    uint64_t v = 0, c = 0;
    memcpy(&v, value, size);
    memcpy(&c, cond, size);
    if (gshmemi_g.initialized && pe >= 0 && pe < gshmemi_g.npes && gshmemi_g.pe_slot[pe] < 0) {
        void *tctx;   /* another node: the transport's atomic (it checks the range) */
        const struct gshmemi_transport_ops *t = gshmemi_transport_of(pe, &tctx);
        if (t && t->amo) {
            uint64_t old = 0;
            bool fetch = op == GSHMEMI_AMO_FETCH || op == GSHMEMI_AMO_SWAP || op == GSHMEMI_AMO_CSWAP || result;
            gshmemi_status st = t->amo(tctx, op, size, dest, v, c, pe, fetch ? &old : NULL);
            gshmemi_host_remote_done(st, call, pe);
            if (result) memcpy(result, &old, size);
            return;
        }
    }
    char *p = gshmemi_host_peer_addr(call, dest, size, pe, op == GSHMEMI_AMO_FETCH ? "source" : "dest");
    pthread_mutex_lock(&amo_lock);
    if (!amo_result)
        gshmemi_host_cuda(cudaHostAlloc((void **)&amo_result, sizeof *amo_result, cudaHostAllocMapped),
                          call, "cudaHostAlloc");
    uint64_t *d_result = NULL;
    gshmemi_host_cuda(cudaHostGetDevicePointer((void **)&d_result, amo_result, 0), call,
                      "cudaHostGetDevicePointer");
    gshmemi_host_cuda(gshmemi_launch_amo(gshmemi_g.nb_stream, op, size, p, v, c, d_result), call,
                      "atomic kernel launch");
    gshmemi_host_cuda(cudaStreamSynchronize((cudaStream_t)gshmemi_g.nb_stream), call, op_name(op));
    uint64_t r = *(volatile uint64_t *)amo_result;
    pthread_mutex_unlock(&amo_lock);
    if (result) memcpy(result, &r, size);
}

void gshmemi_host_amo_finalize(void) {
    pthread_mutex_lock(&amo_lock);
    if (amo_result) cudaFreeHost(amo_result);
    amo_result = NULL;
    pthread_mutex_unlock(&amo_lock);
}
