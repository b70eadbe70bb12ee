/* Misuse that must end in a clear message and a non-zero status, never a hang, crash or
 * corruption. One mode per run (argv[1]); run_gpu_tests.sh checks the status and the
 * message of each. Exit 0 from a mode means the misuse was NOT caught. */
#include <unistd.h>

#include "common.h"

__global__ void use_before_init(int *out) { *out = gshmem_my_pe(); }
__global__ void put_to_pe(int *dst, int pe) { gshmem_int_p(dst, 1, pe); }
__global__ void wait_forever(long *ivar) { gshmem_long_wait_until(ivar, GSHMEM_CMP_EQ, 42); }
__global__ void put_from_plain(int *dst, int pe) { gshmem_int_p(dst, 7, pe); }
/* PE 0 sums, the others take the max: the same call shape, a different operator */
__global__ void reduce_ops_differ(float *d, const float *s, size_t n, int me) {
    if (me == 0) gshmem_float_sum_reduce(GSHMEM_TEAM_WORLD, d, s, n);
    else gshmem_float_max_reduce(GSHMEM_TEAM_WORLD, d, s, n);
}

static int finish_kernel(const char *what) {
    cudaError_t e = cudaDeviceSynchronize();
    fprintf(stderr, "%s: kernel ended with %s\n", what, cudaGetErrorName(e));
    return e == cudaSuccess ? 0 : 3;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "before_init")) {
        int *out;
        CK(cudaMalloc(&out, sizeof(int)));
        use_before_init<<<1, 1>>>(out);
        return finish_kernel("before_init");
    }
    if (!strcmp(mode, "init_status_no_gpu")) {   /* run with CUDA_VISIBLE_DEVICES= */
        int st = gshmemx_init_status();
        fprintf(stderr, "gshmemx_init_status returned %d\n", st);
        return st == 0 ? 0 : 3;
    }
    if (!strcmp(mode, "die_before_init")) {   /* PE 1 leaves before init: PE 0 must not hang */
        if (getenv("GSHMEM_RANK") && atoi(getenv("GSHMEM_RANK")) == 1) return 0;
        gshmem_init();
        return 0;
    }
    gshmem_init();
    int me = gshmem_my_pe(), np = gshmem_n_pes();
    if (!strcmp(mode, "free_foreign")) {
        void *p;
        CK(cudaMalloc(&p, 64));
        gshmem_free(p);
        return 0;
    }
    if (!strcmp(mode, "double_free")) {
        void *p = gshmem_malloc(1000);
        gshmem_free(p);
        gshmem_free(p);
        return 0;
    }
    if (!strcmp(mode, "bad_pe_device")) {
        int *x = (int *)gshmem_malloc(sizeof(int));
        put_to_pe<<<1, 1>>>(x, np + 3);
        return finish_kernel("bad_pe_device");
    }
    if (!strcmp(mode, "bad_pe_host")) {
        int *x = (int *)gshmem_malloc(sizeof(int));
        gshmem_int_p(x, 1, -1);
        return 0;
    }
    if (!strcmp(mode, "oom")) {   /* with GSHMEM_HEAP_MAX=256M */
        void *p = gshmem_malloc(1ull << 30);
        if (p) return 0;
        void *q = gshmem_malloc(1u << 20);   /* the heap still works after a failed malloc */
        fprintf(stderr, "after the failed malloc a 1 MiB malloc %s\n", q ? "succeeded" : "FAILED");
        return q ? 3 : 0;
    }
    if (!strcmp(mode, "wait_timeout")) {   /* with GSHMEM_WAIT_TIMEOUT=2 */
        long *ivar = (long *)gshmem_calloc(1, sizeof(long));
        wait_forever<<<1, 1>>>(ivar);
        return finish_kernel("wait_timeout");
    }
    if (!strcmp(mode, "debug_addr")) {     /* with GSHMEM_DEBUG=2 */
        int *plain;
        CK(cudaMalloc(&plain, sizeof(int)));
        put_from_plain<<<1, 1>>>(plain, (me + 1) % np);
        return finish_kernel("debug_addr");
    }
    if (!strcmp(mode, "mismatched_malloc")) {
        void *p = gshmem_malloc(me == 0 ? 4096 : 8192);
        return p ? 0 : 3;
    }
    /* a member dies before a collective the others are in (across nodes: their rounds wait
     * for its signal): the job ends, naming it, within the wait timeout */
    if (!strcmp(mode, "coll_die")) {
        size_t n = 1u << 20;
        float *s = (float *)gshmem_calloc(n, sizeof(float)), *d = (float *)gshmem_calloc(n, sizeof(float));
        if (!s || !d) return 0;
        gshmem_barrier_all();
        if (me == np - 1) _exit(7);
        int rc = gshmem_float_sum_reduce(GSHMEM_TEAM_WORLD, d, s, n);
        fprintf(stderr, "coll_die: PE %d's reduce returned %d\n", me, rc);
        return 0;
    }
    /* with GSHMEM_DEBUG=1: members that call collectives with different arguments are told so
     * (not left to hang or to read each other's buffers wrongly) */
    if (!strncmp(mode, "coll_mismatch_", 14)) {
        const char *what = mode + 14;
        size_t big = 1u << 20;   /* floats: 4 MiB, the two-round path */
        float *s = (float *)gshmem_calloc(2 * big, sizeof(float)), *d = (float *)gshmem_calloc(2 * big, sizeof(float));
        if (!s || !d) return 0;
        cudaStream_t st;
        CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        int rc = 0;
        if (!strcmp(what, "oneshot"))   /* 16 KiB and 20 KiB: one-shots of 4 and 5 blocks */
            rc = gshmemx_float_sum_reduce_on_stream(GSHMEM_TEAM_WORLD, d, s, me == 0 ? 4096 : 5120, st);
        else if (!strcmp(what, "tworound"))
            rc = gshmemx_float_sum_reduce_on_stream(GSHMEM_TEAM_WORLD, d, s, me == 0 ? big : 2 * big, st);
        else if (!strcmp(what, "kind"))   /* a broadcast against an fcollect of the same size */
            rc = me == 0 ? gshmemx_float_broadcast_on_stream(GSHMEM_TEAM_WORLD, d, s, 256, 0, st)
                         : gshmemx_float_fcollect_on_stream(GSHMEM_TEAM_WORLD, d, s, 256, st);
        else if (!strcmp(what, "device_op")) {
            reduce_ops_differ<<<1, 1, 0, st>>>(d, s, 64, me);
            rc = (int)cudaGetLastError();
        }
        cudaError_t e = cudaStreamSynchronize(st);
        fprintf(stderr, "coll_mismatch_%s: call returned %d, stream ended with %s\n", what, rc, cudaGetErrorName(e));
        return e == cudaSuccess ? 0 : 3;
    }
    fprintf(stderr, "unknown mode '%s'\n", mode);
    return 0;
}
