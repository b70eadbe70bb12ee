/* Proves the host-side API: blocking putmem/getmem from host (pageable) and device memory,
 * typed host p/g, putmem_on_stream + barrier_all_on_stream ordering on a user stream, the
 * same sequence captured in a CUDA graph and replayed, and init timing. */
#include "common.h"

int main(void) {
    gshmem_init();
    int me = gshmem_my_pe(), np = gshmem_n_pes();
    int next = (me + 1) % np, prev = (me + np - 1) % np;
    uint64_t seed = agree_seed();
    printf("PE %d: gshmem_init took %.3f s\n", me, gshmemx_init_seconds());
    const size_t n = (8u << 20) + 13;
    uint8_t *sym = (uint8_t *)gshmem_malloc(n + 128);
    uint8_t *host = (uint8_t *)malloc(n);
    for (size_t i = 0; i < n; i++) host[i] = pattern(seed, me, i);
    fill_byte<<<64, 256>>>(sym, n + 128, 0xA5);
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();

    /* host put from pageable memory to next, then check what prev put here */
    gshmem_putmem(sym + 64, host, n, next);
    gshmem_barrier_all();
    mismatch m = check_pattern(sym + 64, n, seed, prev, 0, 64, 0xA5);
    EXPECT(m.count == 0, "host gshmem_putmem: %llu bad bytes, first at %lld", m.count, (long long)m.first - 64);
    gshmem_barrier_all();
    /* host get from next into pageable memory: next holds data from me */
    uint8_t *back = (uint8_t *)malloc(n);
    memset(back, 0, n);
    gshmem_getmem(back, sym + 64, n, next);
    size_t badi = n;
    for (size_t i = 0; i < n && badi == n; i++) if (back[i] != host[i]) badi = i;
    EXPECT(badi == n, "host gshmem_getmem: first bad byte %zu", badi);
    gshmem_barrier_all();

    /* typed host p/g */
    long *lv = (long *)gshmem_calloc(np, sizeof(long));
    gshmem_long_p(lv + me, 1000 + me, next);
    gshmem_barrier_all();
    EXPECT(gshmem_long_g(lv + prev, me) == 1000 + prev, "host long_p/g: got %ld", gshmem_long_g(lv + prev, me));
    EXPECT(gshmem_long_test(lv + prev, GSHMEM_CMP_EQ, 1000 + prev) == 1, "host long_test EQ false");
    EXPECT(gshmem_long_test(lv + prev, GSHMEM_CMP_LT, 1000 + prev) == 0, "host long_test LT true");
    gshmem_barrier_all();

    /* on-stream: put device data to next, barrier on the stream, check on the stream's host */
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    uint8_t *dsrc;
    CK(cudaMalloc(&dsrc, n));
    for (int round = 0; round < 20; round++) {
        fill_pattern<<<64, 256, 0, st>>>(dsrc, n, seed + round, me, 0);
        gshmemx_putmem_on_stream(sym + 64, dsrc, n, next, st);
        gshmemx_quiet_on_stream(st);
        gshmemx_barrier_all_on_stream(st);
        CK(cudaStreamSynchronize(st));
        m = check_pattern(sym + 64, n, seed + round, prev, 0, 64, 0xA5);
        EXPECT(m.count == 0, "round %d putmem_on_stream+barrier_all_on_stream: %llu bad bytes", round, m.count);
        gshmemx_barrier_all_on_stream(st);
        CK(cudaStreamSynchronize(st));
    }
    /* getmem_on_stream: read next's buffer (which holds my last round) into device memory */
    CK(cudaMemsetAsync(dsrc, 0, n, st));
    gshmemx_getmem_on_stream(dsrc, sym + 64, n, next, st);
    CK(cudaStreamSynchronize(st));
    m = check_pattern(dsrc, n, seed + 19, me, 0, 0, 0);
    EXPECT(m.count == 0, "getmem_on_stream: %llu bad bytes", m.count);
    gshmem_barrier_all();

    /* graph: capture fill + put + barrier, replay with the same result each time */
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    fill_pattern<<<64, 256, 0, st>>>(dsrc, n, seed + 77, me, 0);
    gshmemx_barrier_all_on_stream(st);
    gshmemx_putmem_on_stream(sym + 64, dsrc, n, next, st);
    gshmemx_barrier_all_on_stream(st);
    CK(cudaStreamEndCapture(st, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    for (int rep = 0; rep < 50; rep++) CK(cudaGraphLaunch(ge, st));
    CK(cudaStreamSynchronize(st));
    m = check_pattern(sym + 64, n, seed + 77, prev, 0, 64, 0xA5);
    EXPECT(m.count == 0, "graph-replayed putmem_on_stream: %llu bad bytes", m.count);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    gshmem_barrier_all();

    cudaStreamDestroy(st);
    cudaFree(dsrc);
    free(host);
    free(back);
    gshmem_free(lv);
    gshmem_free(sym);
    int rc = summary("test_host");
    gshmem_finalize();
    gshmem_finalize();  /* idempotent */
    return rc;
}
