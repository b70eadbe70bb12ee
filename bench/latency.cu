/* Latency on 2 PEs: p ping-pong (one-way), g round trip (pointer chase), put + quiet + flag
 * ping-pong from 8 B to 1 MiB (block scope), device barrier_all (thread and block scope)
 * and barrier_all_on_stream. Same method as bench/nvshmem/nvshmem_p2p.cu: one kernel runs
 * all iterations, CUDA events around it, first trial dropped, median of 5. */
#include "shim.h"
#include "common.h"

__global__ void pingpong(long *flag, long start, int iters, int peer) {
    int me = bench_my_pe();
    for (int i = 0; i < iters; i++) {
        long v = start + i;
        if (me == 0) {
            bench_long_p(flag, v, peer);
            bench_long_wait_eq(flag, v);
        } else {
            bench_long_wait_eq(flag, v);
            bench_long_p(flag, v, peer);
        }
    }
}

__global__ void g_chase(const long *next, int iters, int peer, long *out) {
    long idx = 0;
    for (int i = 0; i < iters; i++) idx = bench_long_g(next + idx, peer);
    *out = idx;
}

/* put `size` bytes then signal; the peer waits and answers the same way */
__global__ void put_pingpong(char *buf, const char *src, size_t size, long *flag, long start, int iters, int peer) {
    int me = bench_my_pe();
    for (int i = 0; i < iters; i++) {
        long v = start + i;
        if (me == 1) {
            if (threadIdx.x == 0) bench_long_wait_eq(flag, v);
            __syncthreads();
        }
        bench_putmem_block(buf, src, size, peer);
        bench_quiet_block();
        if (threadIdx.x == 0) bench_long_p(flag, v, peer);
        if (me == 0) {
            if (threadIdx.x == 0) bench_long_wait_eq(flag, v);
            __syncthreads();
        }
    }
}

__global__ void barrier_loop(int iters, int block_scope) {
    for (int i = 0; i < iters; i++) {
        if (block_scope) bench_barrier_all_block();
        else if (threadIdx.x == 0) bench_barrier_all();
    }
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    bench_init();
    int me = bench_my_pe(), np = bench_n_pes(), peer = 1 - me;
    if (np != 2) {
        if (me == 0) fprintf(stderr, "latency: run on exactly 2 PEs (gshmrun -n 2)\n");
        bench_finalize();
        return 2;
    }
    int iters = argc > 2 && !strcmp(argv[1], "--iters") ? atoi(argv[2]) : 10000;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    long *flag = (long *)bench_calloc(1, sizeof(long));
    long seq = 1;
    std::vector<float> t;

    for (int trial = 0; trial < 6; trial++) {
        bench_barrier_all();
        CK(cudaEventRecord(e0));
        pingpong<<<1, 1>>>(flag, seq, iters, peer);
        CK(cudaEventRecord(e1));
        CK(cudaGetLastError());
        float ms = elapsed_ms(e0, e1);
        seq += iters;
        if (trial) t.push_back(ms * 1000.f / (2 * iters));
    }
    float p_us = median(t);

    const int chase_n = 1 << 16;
    long *next = (long *)bench_malloc(chase_n * sizeof(long));
    std::vector<long> h(chase_n);
    for (int i = 0; i < chase_n; i++) h[i] = (i * 7919L + 1) % chase_n;
    CK(cudaMemcpy(next, h.data(), chase_n * sizeof(long), cudaMemcpyHostToDevice));
    long *out;
    CK(cudaMalloc(&out, sizeof(long)));
    bench_barrier_all();
    t.clear();
    if (me == 0) {
        for (int trial = 0; trial < 6; trial++) {
            CK(cudaEventRecord(e0));
            g_chase<<<1, 1>>>(next, 5000, peer, out);
            CK(cudaEventRecord(e1));
            float ms = elapsed_ms(e0, e1);
            if (trial) t.push_back(ms * 1000.f / 5000);
        }
        long got;
        CK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
        long want = 0;
        for (int i = 0; i < 5000; i++) want = h[want];
        if (got != want) { fprintf(stderr, "latency: g chase ended at %ld, expected %ld\n", got, want); return 1; }
    }
    float g_us = median(t);
    bench_barrier_all();
    if (me == 0) {
        printf(BENCH_LIB " p ping-pong one-way: %.3f us (median of 5 x %d round trips)\n", p_us, iters);
        printf(BENCH_LIB " g round trip: %.3f us\n", g_us);
    }

    /* put + quiet + flag ping-pong */
    const size_t maxsz = 1 << 20;
    char *buf = (char *)bench_malloc(maxsz), *src;
    CK(cudaMalloc(&src, maxsz));
    bench_fill<<<64, 256>>>((unsigned char *)src, maxsz, 11 + me);
    CK(cudaDeviceSynchronize());
    if (me == 0) printf("%-10s %14s\n", "size", "put+signal one-way us");
    for (size_t sz = 8; sz <= maxsz; sz *= 4) {
        int it = sz <= 65536 ? 2000 : 500;
        t.clear();
        for (int trial = 0; trial < 6; trial++) {
            bench_barrier_all();
            CK(cudaEventRecord(e0));
            put_pingpong<<<1, 512>>>(buf, src, sz, flag, seq, it, peer);
            CK(cudaEventRecord(e1));
            CK(cudaGetLastError());
            float ms = elapsed_ms(e0, e1);
            seq += it;
            if (trial) t.push_back(ms * 1000.f / (2 * it));
        }
        bench_barrier_all();
        unsigned long long bad = bench_check(buf, sz, 11 + peer);   /* holds the peer's data */
        if (bad) { fprintf(stderr, "latency: PE %d: %llu bad bytes after put ping-pong of %zu\n", me, bad, sz); return 1; }
        char s[32];
        if (me == 0) printf("%-10s %14.3f\n", fmt_size(sz, s), median(t));
    }

    /* barriers */
    const char *names[2] = {"device barrier_all (thread)", "device barrier_all (block)"};
    for (int scope = 0; scope < 2; scope++) {
        t.clear();
        for (int trial = 0; trial < 6; trial++) {
            bench_barrier_all();
            CK(cudaEventRecord(e0));
            barrier_loop<<<1, scope ? 256 : 32>>>(2000, scope);
            CK(cudaEventRecord(e1));
            CK(cudaGetLastError());
            float ms = elapsed_ms(e0, e1);
            if (trial) t.push_back(ms * 1000.f / 2000);
        }
        if (me == 0) printf(BENCH_LIB " %s: %.3f us\n", names[scope], median(t));
    }
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    t.clear();
    for (int trial = 0; trial < 6; trial++) {
        bench_barrier_all();
        CK(cudaEventRecord(e0, st));
        for (int i = 0; i < 1000; i++) bench_barrier_all_on_stream(st);
        CK(cudaEventRecord(e1, st));
        float ms = elapsed_ms(e0, e1);
        if (trial) t.push_back(ms * 1000.f / 1000);
    }
    if (me == 0) printf(BENCH_LIB " barrier_all_on_stream: %.3f us per call (back to back)\n", median(t));
    bench_barrier_all();
    bench_finalize();
    return 0;
}
