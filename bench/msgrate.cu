/* Message rate on 2 PEs: PE 0 puts 8-byte words to PE 1 from G blocks of T threads (T / 32
 * warps), each thread K long p's (gshmem_long_p: posted, one request each where the peer is
 * reached through a network) to words of its own, then quiet. G = 1, 8 and one block per SM.
 * Rate = G * T * K puts / the launch's time (events), median of 5 trials (--trials) after a warm-up; both
 * PEs start together (barrier_all_on_stream). Every trial writes its own values and the last
 * one's are checked word by word on PE 1. Between nodes it is the remote transport's message
 * rate (the proxy, or GPU-initiated RDMA); within a node, NVLink stores'. */
#include "shim.h"
#include "common.h"


__host__ __device__ static inline long msg_value(int trial, size_t idx) { return ((long)(trial + 1) << 40) | (long)idx; }

__global__ void put_words(long *dst, int k, int peer, int trial) {
    const size_t gid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    for (int i = 0; i < k; i++) {
        const size_t idx = gid * (size_t)k + i;
        bench_long_p(dst + idx, msg_value(trial, idx), peer);
    }
    bench_quiet();
}

static const char usage[] =
    "usage: gshmem-perftest-msgrate [--threads T] [--k K] [--max-blocks G] [--trials N]   (run on 2 PEs: gshmrun -n 2 ...)\n"
    "  8-byte put rate (long p) from PE 0 to PE 1: 1, 8 and one block per SM (at most G) of T threads\n"
    "  (default 128), each K puts (default 16; 4 when the peer is on another node) then quiet;\n"
    "  every value is checked; the median of N timed launches (default 5) after a warm-up\n"
    "  --help   this text\n";

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    int threads = 128, k = 0, max_blocks = 1 << 30, trials = 5;
    for (int a = 1; a < argc; a++) {
        const char *v;
        if (bench_is_help(argv[a])) bench_usage_exit(usage, 0);
        else if (bench_opt(argc, argv, &a, "--threads", &v) && (threads = (int)bench_parse_count(v)) >= 32 &&
                 threads <= 1024 && threads % 32 == 0) continue;
        else if (bench_opt(argc, argv, &a, "--k", &v) && (k = (int)bench_parse_count(v)) >= 1) continue;
        else if (bench_opt(argc, argv, &a, "--max-blocks", &v) && (max_blocks = (int)bench_parse_count(v)) >= 1) continue;
        else if (bench_opt(argc, argv, &a, "--trials", &v) && (trials = (int)bench_parse_count(v)) >= 1) continue;
        else bench_usage_exit(usage, 2);
    }
    bench_init();
    if (!bench_two_pes("msgrate")) return 2;
    const int me = bench_my_pe(), sms = bench_sm_count();
    long *probe = (long *)bench_malloc(sizeof(long));
    const bool remote = bench_ptr(probe, 1 - me) == NULL;
    if (!k) k = remote ? 4 : 16;
    const int top = std::min(sms, max_blocks);
    const size_t words = (size_t)top * threads * k;
    long *dst = (long *)bench_calloc(words, sizeof(long));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    if (me == 0)
        printf("msgrate: PE 0 -> PE 1 (%s), G blocks x %d threads, each thread %d long p then quiet; "
               "Mputs/s = G * %d * %d / launch time, median of %d\n",
               remote ? "another node" : "this node", threads, k, threads, k, trials);
    std::vector<int> grid = {1, 8, top};
    for (size_t gi = 0; gi < grid.size(); gi++) {
        const int blocks = grid[gi];
        if (blocks > top || (gi && blocks <= grid[gi - 1])) continue;
        const size_t n = (size_t)blocks * threads * k;
        CK(cudaMemset(dst, 0, words * sizeof(long)));
        CK(cudaDeviceSynchronize());
        bench_barrier_all();
        std::vector<float> t;
        for (int trial = 0; trial <= trials; trial++) {   /* (trial 0: the warm-up) */
            bench_barrier_all_on_stream(st);
            CK(cudaEventRecord(e0, st));
            if (me == 0) put_words<<<blocks, threads, 0, st>>>(dst, k, 1, trial);
            CK(cudaEventRecord(e1, st));
            CK(cudaGetLastError());
            float ms = elapsed_ms(e0, e1);
            if (trial) t.push_back(ms);
        }
        CK(cudaStreamSynchronize(st));
        bench_barrier_all();   /* PE 0's quiet returned: every put has landed */
        int bad = 0;
        if (me == 1) {
            std::vector<long> h(n);
            CK(cudaMemcpy(h.data(), dst, n * sizeof(long), cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < n; i++)
                if (h[i] != msg_value(trials, i)) {
                    if (bad++ < 4)
                        fprintf(stderr, "msgrate: %d x %d: word %zu on PE 1 is %#lx, expected %#lx\n", blocks,
                                threads, i, (unsigned long)h[i], (unsigned long)msg_value(trials, i));
                }
            if (bad) bench_global_exit(1);
        }
        bench_barrier_all();
        if (me == 0)
            printf(BENCH_LIB " put8 %dx%d (%d warps), K=%d: %.3f Mputs/s (median %.3f ms)\n", blocks, threads,
                   blocks * threads / 32, k, (double)n / (median(t) * 1e-3) / 1e6, median(t));
    }
    bench_barrier_all();
    bench_free(dst);
    bench_free(probe);
    bench_finalize();
    return 0;
}
