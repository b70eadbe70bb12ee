/* Atomic throughput on 2 PEs: on every PE G blocks x 256 threads, each thread K long adds
 * of 1, fetching (atomic_fetch_add) or not (atomic_add, then quiet), on (a) one word on
 * PE 1, which PE 1 hammers too, or (b) its own word of a 1 MiB array on the peer (an odd
 * multiplier scatters neighbouring threads' words over the whole array). Both PEs start
 * together (barrier_all_on_stream before each launch); a pair's rate is both PEs' ops over
 * the slower PE's time, median of 5 trials after a warm-up. Every run is checked exactly:
 * the arrays' final contents and, for fetch_add, the sum of every fetched value on both PEs
 * (on one word the values 0..M-1 each come back once; on an own word 0..6K-1). */
#include "shim.h"
#include "common.h"

#define THREADS 256
#define WORDS ((1 << 20) / sizeof(long))   /* the 1 MiB array; a power of two */
#define TRIALS 6                            /* warm-up + 5 timed */

/* gid -> word: a bijection on [0, WORDS) (odd multiplier modulo a power of two) */
__host__ __device__ static inline size_t word_of(unsigned gid) { return (size_t)(gid * 40503u) & (WORDS - 1); }

template <bool Fetch, bool OneWord>
__global__ void amo(long *words, int k, int peer, unsigned long long *fsum) {
    unsigned gid = blockIdx.x * blockDim.x + threadIdx.x;
    long *w = OneWord ? words : words + word_of(gid);
    int pe = OneWord ? 1 : peer;
    unsigned long long acc = 0;   /* using the fetched values keeps the fetch a fetch */
    for (int i = 0; i < k; i++) {
        if (Fetch) acc += (unsigned long long)bench_long_atomic_fetch_add(w, 1, pe);
        else bench_long_atomic_add(w, 1, pe);
    }
    if (Fetch) atomicAdd(fsum, acc);
    else bench_quiet();
}

__global__ void get_longs(const long *src, int n, int pe, long *out) {
    for (int i = 0; i < n; i++) out[i] = bench_long_g(src + i, pe);
}

struct Run {
    bool fetch, one_word;
    int blocks, k;
};

static void launch(const Run &r, long *words, int peer, unsigned long long *fsum, cudaStream_t st) {
    dim3 g(r.blocks), b(THREADS);
    if (r.fetch && r.one_word) amo<true, true><<<g, b, 0, st>>>(words, r.k, peer, fsum);
    else if (r.fetch) amo<true, false><<<g, b, 0, st>>>(words, r.k, peer, fsum);
    else if (r.one_word) amo<false, true><<<g, b, 0, st>>>(words, r.k, peer, fsum);
    else amo<false, false><<<g, b, 0, st>>>(words, r.k, peer, fsum);
}

/* This PE's array after TRIALS launches of r: one word on PE 1 got every op of both PEs;
 * on the many-words run each of this PE's threads' words on the peer got 6K, so this PE's
 * array holds the peer's threads' counts (same grid). Everything else stays 0. */
static bool check_words(const Run &r, const long *words, int me) {
    std::vector<long> h(WORDS), want(WORDS, 0);
    CK(cudaMemcpy(h.data(), words, WORDS * sizeof(long), cudaMemcpyDeviceToHost));
    long T = (long)r.blocks * THREADS;
    if (r.one_word && me == 1) want[0] = TRIALS * 2 * T * r.k;
    if (!r.one_word)
        for (unsigned gid = 0; gid < T; gid++) want[word_of(gid)] = (long)TRIALS * r.k;
    for (size_t i = 0; i < WORDS; i++)
        if (h[i] != want[i]) {
            fprintf(stderr, "atomics: PE %d: %s %s %dx%d: word %zu is %ld, expected %ld\n", me,
                    r.fetch ? "fetch_add" : "add", r.one_word ? "one-word" : "many-words", r.blocks,
                    THREADS, i, h[i], want[i]);
            return false;
        }
    return true;
}

static const char usage[] =
    "usage: gshmem-perftest-atomics   (run on exactly 2 PEs: gshmrun -n 2 ...)\n"
    "  remote atomic throughput (add, fetch_add) in Mop/s on one word and on many words, from 1,\n"
    "  8 and all SMs' blocks of both PEs; every result is checked\n"
    "  --help   this text\n";

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int a = 1; a < argc; a++) bench_usage_exit(usage, bench_is_help(argv[a]) ? 0 : 2);
    bench_init();
    if (!bench_two_pes("atomics")) return 2;
    const int me = bench_my_pe(), peer = 1 - me, sms = bench_sm_count();
    long *words = (long *)bench_calloc(WORDS, sizeof(long));
    unsigned long long *fsum = (unsigned long long *)bench_calloc(1, sizeof(*fsum));
    long *xch = (long *)bench_calloc(TRIALS, sizeof(long));   /* 5 times (ns) + fetched sum */
    long *peer_x;
    CK(cudaMalloc(&peer_x, TRIALS * sizeof(long)));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    if (me == 0)
        printf("atomics: 2 PEs x G blocks x %d threads, each thread K long adds of 1 (K = max(32, 4096/G)); "
               "Mops/s per PE pair = both PEs' ops / the slower PE's time; one-word: one word on PE 1 "
               "(PE 1 included); many-words: each thread its own word of a 1 MiB array on the peer\n",
               THREADS);

    /* a peer on another node (no load/store path): every op crosses the network, so fewer
     * (1 and 8 blocks, K = 4) keep a run to seconds */
    bool remote = bench_ptr(words, peer) == NULL;
    if (me == 0 && remote) printf("atomics: the peer is on another node: 1 and 8 blocks, K = 4\n");
    for (int one_word = 1; one_word >= 0; one_word--)
        for (int fetch = 1; fetch >= 0; fetch--)
            for (int blocks : {1, 8, std::min(sms, (int)(WORDS / THREADS))}) {   /* own words stay distinct */
                if (remote && blocks > 8) continue;
                Run r = {fetch == 1, one_word == 1, blocks, remote ? 4 : std::max(32, 4096 / blocks)};
                CK(cudaMemset(words, 0, WORDS * sizeof(long)));
                CK(cudaMemset(fsum, 0, sizeof *fsum));
                CK(cudaDeviceSynchronize());
                bench_barrier_all();
                std::vector<float> t;
                for (int trial = 0; trial < TRIALS; trial++) {
                    bench_barrier_all_on_stream(st);
                    CK(cudaEventRecord(e0, st));
                    launch(r, words, peer, fsum, st);
                    CK(cudaEventRecord(e1, st));
                    CK(cudaGetLastError());
                    float ms = elapsed_ms(e0, e1);
                    if (trial) t.push_back(ms);
                }
                CK(cudaStreamSynchronize(st));
                bench_barrier_all();   /* both PEs' kernels are done: every op has landed */
                if (!check_words(r, words, me)) exit(1);

                /* exchange the trial times and fetched sums */
                long mine[TRIALS], theirs[TRIALS];
                for (int i = 0; i < TRIALS - 1; i++) mine[i] = (long)(t[i] * 1e6);
                CK(cudaMemcpy(&mine[TRIALS - 1], fsum, sizeof(long), cudaMemcpyDeviceToHost));
                CK(cudaMemcpy(xch, mine, sizeof mine, cudaMemcpyHostToDevice));
                bench_barrier_all();
                get_longs<<<1, 1>>>(xch, TRIALS, peer, peer_x);
                CK(cudaMemcpy(theirs, peer_x, sizeof theirs, cudaMemcpyDeviceToHost));
                bench_barrier_all();   /* the peer has read xch before it is rewritten */

                unsigned long long T = (unsigned long long)blocks * THREADS, ops = 2 * T * r.k;
                if (r.fetch) {
                    unsigned long long got = (unsigned long long)mine[TRIALS - 1] + (unsigned long long)theirs[TRIALS - 1];
                    unsigned long long m = TRIALS * ops, per = (unsigned long long)TRIALS * r.k;
                    unsigned long long want = r.one_word ? m * (m - 1) / 2 : 2 * T * (per * (per - 1) / 2);
                    if (got != want) {
                        fprintf(stderr, "atomics: PE %d: fetch_add %s %dx%d: fetched values sum to %llu, expected %llu\n",
                                me, r.one_word ? "one-word" : "many-words", blocks, THREADS, got, want);
                        exit(1);
                    }
                }
                std::vector<float> pair(TRIALS - 1);
                for (int i = 0; i < TRIALS - 1; i++) pair[i] = std::max(mine[i], theirs[i]) * 1e-6f;
                if (me == 0)
                    printf(BENCH_LIB " %s %s %dx%d: %.2f Mops/s (K=%d)\n", r.fetch ? "fetch_add" : "add",
                           r.one_word ? "one-word" : "many-words", blocks, THREADS,
                           ops / (median(pair) * 1e-3) / 1e6, r.k);
            }
    bench_barrier_all();
    bench_finalize();
    return 0;
}
