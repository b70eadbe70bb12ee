/* Proves the host-side API: blocking putmem/getmem from host (pageable) and device memory,
 * typed host p/g, putmem_on_stream + barrier_all_on_stream ordering on a user stream, the
 * same sequence captured in a CUDA graph and replayed, init timing, and that the barriers
 * behind host calls order a writer kernel's peer stores before a reader kernel's loads
 * (test_stream_ordered_release). */
#include <vector>

#include "common.h"

/* ---- stream-ordered release: the host-call barriers issue no fence of their own ---------
 * A writer kernel stores (plain, weak 8-byte stores, every SM) into the next PE's buffer
 * through its peer mapping; a barrier on the stream; a reader kernel checks what the previous
 * PE stored. No host synchronization between rounds, so with programmatic dependent launch
 * the barrier kernel is resident while the writer still runs. The round number lives in
 * device memory (advanced by its own kernel), so a CUDA graph of one round replays with fresh
 * values. A stale word means the barrier let the reader past stores not yet performed.
 * With the next PE on another node (GSHMEM_NODES) the writer fills a local buffer and
 * gshmemx_putmem_on_stream sends it through the remote transport, in stream order. */
static __device__ __forceinline__ uint64_t word_of(uint64_t seed, uint64_t gen, int pe, uint64_t i) {
    uint64_t x = (seed + gen * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)pe << 56) ^ (i * 0xff51afd7ed558ccdull);
    x ^= x >> 31;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 29);
}
__global__ void ordered_write(uint64_t *peer, size_t n, uint64_t seed, const uint64_t *gen, int me) {
    const uint64_t g = *gen;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        peer[i] = word_of(seed, g, me, i);
}
__global__ void ordered_check(const uint64_t *mine, size_t n, uint64_t seed, const uint64_t *gen, int prev,
                              unsigned long long *bad) {
    const uint64_t g = *gen;
    unsigned long long c = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        c += mine[i] != word_of(seed, g, prev, i);
    if (c) atomicAdd(bad, c);
}
__global__ void ordered_advance(uint64_t *gen) { *gen += 1; }

enum { SYNC_BARRIER_ON_STREAM, SYNC_TEAM_SYNC_ON_STREAM, SYNC_BARRIER_HOST };
/* One round on stream st: write, sync, check, advance, sync. */
static uint64_t *remote_stage;   /* the writer's local buffer when the next PE is remote */
static int ordered_next;
static void ordered_round(int how, cudaStream_t st, uint64_t *buf, uint64_t *peer, size_t n, uint64_t seed,
                          uint64_t *gen, int me, int prev, unsigned long long *bad) {
    ordered_write<<<132, 512, 0, st>>>(remote_stage ? remote_stage : peer, n, seed, gen, me);
    CK(cudaGetLastError());
    if (remote_stage) gshmemx_putmem_on_stream(buf, remote_stage, n * 8, ordered_next, st);
    for (int k = 0; k < 2; k++) {
        if (how == SYNC_BARRIER_ON_STREAM) gshmemx_barrier_all_on_stream(st);
        else if (how == SYNC_TEAM_SYNC_ON_STREAM) {
            int rc = gshmemx_team_sync_on_stream(GSHMEM_TEAM_WORLD, st);
            if (rc) EXPECT(rc == 0, "gshmemx_team_sync_on_stream(TEAM_WORLD) returned %d", rc);
        }
        else gshmem_barrier_all();   /* the writer ran on the legacy stream, which it follows */
        if (k == 0) {
            ordered_check<<<132, 512, 0, st>>>(buf, n, seed, gen, prev, bad);
            ordered_advance<<<1, 1, 0, st>>>(gen);
            CK(cudaGetLastError());
        }
    }
}

static void test_stream_ordered_release(uint64_t seed, int me, int next, int prev) {
    const size_t n = (4u << 20) / 8 + 5;   /* 4 MiB and an odd tail */
    uint64_t *buf = (uint64_t *)gshmem_malloc(n * 8);
    uint64_t *peer = (uint64_t *)gshmem_ptr(buf, next);
    ordered_next = next;
    /* (every PE allocates: from the heap, a collective call, where the NIC carries remote calls) */
    uint64_t *stage = (uint64_t *)test_local_alloc(n * 8);
    if (!stage) CK(cudaErrorMemoryAllocation);
    remote_stage = NULL;
    if (test_is_remote(me, next, gshmem_n_pes())) {
        EXPECT(peer == NULL, "gshmem_ptr(next) is not NULL for a PE of another node");
        remote_stage = stage;
    } else {
        EXPECT(peer != NULL, "gshmem_ptr(next) is NULL: the next PE is not load/store reachable");
        if (!peer) { gshmem_free(buf); test_local_free(stage); return; }
    }
    uint64_t *gen;
    unsigned long long *bad;
    CK(cudaMalloc(&gen, 8));
    CK(cudaHostAlloc((void **)&bad, sizeof *bad, cudaHostAllocMapped));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    const char *names[] = {"barrier_all_on_stream", "team_sync_on_stream", "host barrier_all"};
    /* fewer rounds when the job spans nodes (every PE the same count: the rounds are barriers) */
    const bool split = test_node_of(0, gshmem_n_pes()) != test_node_of(gshmem_n_pes() - 1, gshmem_n_pes());
    const int rounds[] = {split ? 20 : 300, split ? 20 : 300, split ? 10 : 60};
    for (int how = 0; how < 3; how++) {
        CK(cudaMemset(gen, 0, 8));
        *bad = 0;
        CK(cudaDeviceSynchronize());
        gshmem_barrier_all();
        cudaStream_t s = how == SYNC_BARRIER_HOST ? (cudaStream_t)0 : st;
        for (int r = 0; r < rounds[how]; r++) ordered_round(how, s, buf, peer, n, seed, gen, me, prev, bad);
        CK(cudaDeviceSynchronize());
        EXPECT(*bad == 0, "%s: %llu stale words over %d back-to-back rounds of write, sync, check",
               names[how], *bad, rounds[how]);
    }
    /* the same round of barrier_all_on_stream captured once and replayed (programmatic edges) */
    CK(cudaMemset(gen, 0, 8));
    *bad = 0;
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    ordered_round(SYNC_BARRIER_ON_STREAM, st, buf, peer, n, seed, gen, me, prev, bad);
    CK(cudaStreamEndCapture(st, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    const int reps = split ? 20 : 300;
    for (int rep = 0; rep < reps; rep++) CK(cudaGraphLaunch(ge, st));
    CK(cudaStreamSynchronize(st));
    uint64_t gens = 0;
    CK(cudaMemcpy(&gens, gen, 8, cudaMemcpyDeviceToHost));
    EXPECT(*bad == 0 && gens == (uint64_t)reps, "graph-replayed write, barrier_all_on_stream, check: %llu stale words, %llu rounds ran",
           *bad, (unsigned long long)gens);
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    CK(cudaStreamDestroy(st));
    CK(cudaFree(gen));
    CK(cudaFreeHost(bad));
    test_local_free(stage);
    remote_stage = NULL;
    gshmem_barrier_all();
    gshmem_free(buf);
}

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

    /* a device source written by a pageable cudaMemcpy just before the host put (cudaMemcpy may
     * return before its DMA lands): the put must send the new bytes, to a load/store peer and
     * to a remote one alike (what bench/collectives' allmax does: a remote put that read the
     * source at once, on the proxy's own stream, would send the old bytes) */
    {
        uint64_t *agree = (uint64_t *)gshmem_calloc(np, sizeof(uint64_t));
        const size_t big = 1u << 20;
        uint8_t *bsym = (uint8_t *)gshmem_malloc(big);
        std::vector<uint8_t> bh(big), bback(big);
        int bad_small = 0, bad_big = 0;
        for (int r = 0; r < 64; r++) {
            uint64_t v = seed * 1000003u + (uint64_t)r * 977u + (uint64_t)me;
            CK(cudaMemcpy(agree + me, &v, sizeof v, cudaMemcpyHostToDevice));
            for (int p = 0; p < np; p++)
                if (p != me) gshmem_putmem(agree + me, agree + me, sizeof v, p);
            for (size_t i = 0; i < big; i++) bh[i] = (uint8_t)(i * 7u + (unsigned)r * 13u + (unsigned)me);
            CK(cudaMemcpy(bsym, bh.data(), big, cudaMemcpyHostToDevice));
            gshmem_putmem(sym + 64, bsym, big, next);
            gshmem_barrier_all();
            std::vector<uint64_t> all(np);
            CK(cudaMemcpy(all.data(), agree, np * sizeof(uint64_t), cudaMemcpyDeviceToHost));
            for (int p = 0; p < np; p++)
                if (all[p] != seed * 1000003u + (uint64_t)r * 977u + (uint64_t)p) bad_small++;
            CK(cudaMemcpy(bback.data(), sym + 64, big, cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < big; i++)
                if (bback[i] != (uint8_t)(i * 7u + (unsigned)r * 13u + (unsigned)prev)) {
                    bad_big++;
                    break;
                }
            gshmem_barrier_all();
        }
        EXPECT(bad_small == 0, "host putmem of a source just written by cudaMemcpy: %d stale words in 64 rounds", bad_small);
        EXPECT(bad_big == 0, "host putmem of 1 MiB just written by cudaMemcpy: %d stale rounds of 64", bad_big);
        gshmem_free(bsym);
        gshmem_free(agree);
        gshmem_barrier_all();
    }

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
    uint8_t *dsrc = (uint8_t *)test_local_alloc(n);
    if (!dsrc) CK(cudaErrorMemoryAllocation);
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
    test_local_free(dsrc);
    test_stream_ordered_release(seed, me, next, prev);
    free(host);
    free(back);
    gshmem_free(lv);
    gshmem_free(sym);
    int rc = summary("test_host");
    gshmem_finalize();
    gshmem_finalize();  /* idempotent */
    return rc;
}
