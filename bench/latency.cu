/* Latency between PE 0 and PE 1 (other PEs, when started, join the barriers only: several
 * PEs on one GPU measure with their neighbours alive): p ping-pong (one-way), g round trip (pointer chase), dependent
 * long fetch_add round trip, put ping-pong from 8 B to 1 MiB (block scope) both as put +
 * quiet + flag and as putmem_signal + signal_wait_until (and putmem_signal at thread scope
 * for 8 B), device barrier_all (thread and block scope) and barrier_all_on_stream. One
 * kernel runs all iterations, CUDA events around it, first trial dropped, median of 5;
 * every result is checked after its trials (data, final signal and counter values). */
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

__global__ void g_chase(const long *next, long start, int iters, int peer, long *out) {
    long idx = start;
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

/* putmem_signal (SET, value = iteration) replaces the quiet + flag: the peer waits on the
 * signal and answers the same way. Block: all threads call the block form; else one thread
 * calls the thread form. */
template <bool Block>
__global__ void put_signal_pingpong(char *buf, const char *src, size_t size, uint64_t *sig, uint64_t start,
                                    int iters, int peer) {
    int me = bench_my_pe();
    for (int i = 0; i < iters; i++) {
        uint64_t v = start + i;
        if (me == 1) {
            if (threadIdx.x == 0) bench_signal_wait_until(sig, BENCH_CMP_EQ, v);
            __syncthreads();
        }
        if (Block) bench_putmem_signal_block(buf, src, size, sig, v, BENCH_SIGNAL_SET, peer);
        else bench_putmem_signal(buf, src, size, sig, v, BENCH_SIGNAL_SET, peer);
        if (me == 0) {
            if (threadIdx.x == 0) bench_signal_wait_until(sig, BENCH_CMP_EQ, v);
            __syncthreads();
        }
    }
}

/* Dependent fetch_adds on the peer's word: each adds (r >> 62) + 1, always 1 for the small
 * counts reached here but unknown to the compiler, so every call waits for the previous
 * result (one round trip each). */
__global__ void fadd_chase(long *word, int iters, int peer, long *out) {
    long r = 0;
    for (int i = 0; i < iters; i++) r = bench_long_atomic_fetch_add(word, (r >> 62) + 1, peer);
    *out = r;
}

/* One kernel per scope, as a user's kernel would be: a 32-thread kernel that also holds the
 * block scope's code reads the thread-scope barrier 0.1-0.15 us slower than
 * bench/probes/probe_sync's one-thread loop of the same call */
__global__ void barrier_loop_thread(int iters) {
    for (int i = 0; i < iters; i++) bench_barrier_all();
}
__global__ void barrier_loop_block(int iters) {
    for (int i = 0; i < iters; i++) bench_barrier_all_block();
}

static const char usage[] =
    "usage: gshmem-perftest-latency [--iters N]   (run on 2 or more PEs: gshmrun -n 2 ...)\n"
    "  one-way latency of p/g/put/get/atomics/signals between PEs 0 and 1, and barrier time over\n"
    "  all PEs, in microseconds (median of trials)\n"
    "  --iters N   round trips per trial (default 10000)\n"
    "  --p-only    the p ping-pong alone (with GSHMEM_DEBUG=1 across nodes the proxy then prints\n"
    "              the time split of p alone at finalize)\n"
    "  --help      this text\n";

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    int iters = 10000;
    bool p_only = false;
    for (int a = 1; a < argc; a++) {
        const char *v;
        if (bench_is_help(argv[a])) bench_usage_exit(usage, 0);
        else if (!strcmp(argv[a], "--p-only")) p_only = true;
        else if (bench_opt(argc, argv, &a, "--iters", &v) && (iters = (int)bench_parse_count(v)) >= 4) continue;
        else bench_usage_exit(usage, 2);
    }
    bench_init();
    int me = bench_my_pe(), np = bench_n_pes();
    bool pair = me < 2;   /* PEs 0 and 1 measure; the others take part in barriers only */
    int peer = pair ? 1 - me : me;
    if (np < 2) {
        if (me == 0) fprintf(stderr, "latency: run on 2 or more PEs (gshmrun -n 2)\n");
        bench_finalize();
        return 2;
    }
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    /* Flags and counters are measured at PLACES placements, PLACE_STEP bytes apart (each in
     * another 2 MiB page and another 4 KiB of it), and the median over placements reported:
     * the same code reads 0.62 or 0.77 us one-way depending only on where the flag lies
     * (which L2 partition of each GPU is its home: bench/probes/probe_nvlink, docs/performance.md),
     * so one placement would report the allocator's luck. */
    const int PLACES = 16;
    const size_t PLACE_STEP = (1 << 20) + 4096, place_l = PLACE_STEP / sizeof(long);
    long *flags = (long *)bench_calloc(PLACES * place_l, sizeof(long));
    long *flag = flags;   /* the put ping-pongs below use placement 0 */
    long seq = 1;
    std::vector<float> t, per_place;
    for (int k = 0; k < PLACES; k++) {
        long *f = flags + k * place_l, start = seq;
        t.clear();
        for (int trial = 0; trial < 6; trial++) {
            bench_barrier_all();
            CK(cudaEventRecord(e0));
            if (pair) pingpong<<<1, 1>>>(f, seq, iters / 4, peer);
            CK(cudaEventRecord(e1));
            CK(cudaGetLastError());
            float ms = elapsed_ms(e0, e1);
            seq += iters / 4;
            if (trial) t.push_back(ms * 1000.f / (2 * (iters / 4)));
        }
        per_place.push_back(median(t));
        bench_barrier_all();
        long f_end = 0;
        CK(cudaMemcpy(&f_end, f, sizeof f_end, cudaMemcpyDeviceToHost));
        if (pair && f_end != seq - 1) {
            fprintf(stderr, "latency: PE %d: flag %d is %ld after the p ping-pong, expected %ld (from %ld)\n",
                    me, k, f_end, seq - 1, start);
            return 1;
        }
    }
    float p_us = median(per_place);
    float p_min = *std::min_element(per_place.begin(), per_place.end());
    float p_max = *std::max_element(per_place.begin(), per_place.end());
    bench_barrier_all();
    if (p_only) {
        if (me == 0)
            printf(BENCH_LIB " p ping-pong one-way: %.3f us (median over %d flag placements of each one's median "
                   "of 5 x %d round trips; placements %.3f .. %.3f)\n", p_us, PLACES, iters / 4, p_min, p_max);
        bench_finalize();
        return 0;
    }

    /* The chase visits one 8-byte entry per 128-byte line of a 64 MiB array (more than the
     * 50 MiB L2), each step a line it has not visited before, and every trial goes on where
     * the last one stopped: no step can be served from a cache, whatever kind of load the
     * library's g issues (a chase over a small array, revisited by every trial, let cached
     * loads read faster than the remote round trip). */
    const long lines = (64L << 20) / 128, per_line = 128 / sizeof(long), chase_n = lines * per_line;
    long *next = (long *)bench_malloc(chase_n * sizeof(long));
    std::vector<long> h(chase_n, 0);
    for (long l = 0; l < lines; l++) h[l * per_line] = (l * 7919L + 1) % lines * per_line;
    CK(cudaMemcpy(next, h.data(), chase_n * sizeof(long), cudaMemcpyHostToDevice));
    long *out;
    CK(cudaMalloc(&out, sizeof(long)));
    bench_barrier_all();
    t.clear();
    if (me == 0) {
        const int steps = 5000;
        long at = 0;
        for (int trial = 0; trial < 6; trial++) {
            CK(cudaEventRecord(e0));
            g_chase<<<1, 1>>>(next, at, steps, peer, out);
            CK(cudaEventRecord(e1));
            float ms = elapsed_ms(e0, e1);
            if (trial) t.push_back(ms * 1000.f / steps);
            long got, want = at;
            CK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
            for (int i = 0; i < steps; i++) want = h[want];
            if (got != want) { fprintf(stderr, "latency: g chase ended at %ld, expected %ld\n", got, want); return 1; }
            at = got;
        }
    }
    float g_us = median(t);

    /* fetch_add round trip: PE 0 adds to PE 1's counters (placed as the flags), from 0 */
    const int fadd_n = 2000;
    long *counters = (long *)bench_calloc(PLACES * place_l, sizeof(long));
    bench_barrier_all();
    per_place.clear();
    for (int k = 0; k < PLACES && me == 0; k++) {
        long *counter = counters + k * place_l;
        t.clear();
        for (int trial = 0; trial < 6; trial++) {
            CK(cudaEventRecord(e0));
            fadd_chase<<<1, 1>>>(counter, fadd_n, peer, out);
            CK(cudaEventRecord(e1));
            CK(cudaGetLastError());
            float ms = elapsed_ms(e0, e1);
            if (trial) t.push_back(ms * 1000.f / fadd_n);
            long got;
            CK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
            if (got != (trial + 1L) * fadd_n - 1) {
                fprintf(stderr, "latency: fetch_add chase %d on counter %d returned %ld, expected %ld\n", trial, k,
                        got, (trial + 1L) * fadd_n - 1);
                return 1;
            }
        }
        per_place.push_back(median(t));
    }
    float fadd_us = me == 0 ? median(per_place) : 0.f;
    float fadd_min = me == 0 ? *std::min_element(per_place.begin(), per_place.end()) : 0.f;
    float fadd_max = me == 0 ? *std::max_element(per_place.begin(), per_place.end()) : 0.f;
    bench_barrier_all();
    for (int k = 0; k < PLACES && me == 1; k++) {
        long got;
        CK(cudaMemcpy(&got, counters + k * place_l, sizeof got, cudaMemcpyDeviceToHost));
        if (got != 6L * fadd_n) {
            fprintf(stderr, "latency: PE 1: counter %d is %ld after 6 x %d fetch_adds\n", k, got, fadd_n);
            return 1;
        }
    }
    bench_barrier_all();
    if (me == 0) {
        printf(BENCH_LIB " p ping-pong one-way: %.3f us (median over %d flag placements of each one's median "
               "of 5 x %d round trips; placements %.3f .. %.3f)\n", p_us, PLACES, iters / 4, p_min, p_max);
        printf(BENCH_LIB " g round trip: %.3f us\n", g_us);
        printf(BENCH_LIB " long atomic_fetch_add round trip: %.3f us (dependent chain; median over %d counter "
               "placements, %.3f .. %.3f)\n", fadd_us, PLACES, fadd_min, fadd_max);
    }

    /* put ping-pongs: put + quiet + flag, then putmem_signal; `buf` is cleared before each
     * run and must hold the peer's data after it, the signal the last iteration number */
    const size_t maxsz = 1 << 20;
    /* (the source is symmetric too: a NIC reaches registered memory only, docs/ibgda.md) */
    char *buf = (char *)bench_malloc(maxsz), *src = (char *)bench_malloc(maxsz);
    uint64_t *sig = (uint64_t *)bench_calloc(1, sizeof(uint64_t));
    bench_fill<<<64, 256>>>((unsigned char *)src, maxsz, 11 + me);
    CK(cudaDeviceSynchronize());
    auto put_run = [&](int kind, size_t sz, int it, int threads) -> float {
        CK(cudaMemset(buf, 0, sz));
        CK(cudaDeviceSynchronize());
        t.clear();
        for (int trial = 0; trial < 6; trial++) {
            bench_barrier_all();
            CK(cudaEventRecord(e0));
            if (!pair) {}
            else if (kind == 0) put_pingpong<<<1, threads>>>(buf, src, sz, flag, seq, it, peer);
            else if (threads > 1) put_signal_pingpong<true><<<1, threads>>>(buf, src, sz, sig, seq, it, peer);
            else put_signal_pingpong<false><<<1, 1>>>(buf, src, sz, sig, seq, it, peer);
            CK(cudaEventRecord(e1));
            CK(cudaGetLastError());
            float ms = elapsed_ms(e0, e1);
            seq += it;
            if (trial) t.push_back(ms * 1000.f / (2 * it));
        }
        bench_barrier_all();
        const char *what = kind ? "put_signal" : "put+quiet+flag";
        if (!pair) return median(t);
        unsigned long long bad = bench_check(buf, sz, 11 + peer);   /* holds the peer's data */
        if (bad) {
            fprintf(stderr, "latency: PE %d: %llu bad bytes after %s ping-pong of %zu\n", me, bad, what, sz);
            exit(1);
        }
        long f_got = 0;   /* the flag or the signal word: the last iteration's value */
        CK(cudaMemcpy(&f_got, kind ? (void *)sig : (void *)flag, sizeof f_got, cudaMemcpyDeviceToHost));
        if (f_got != seq - 1) {
            fprintf(stderr, "latency: PE %d: %s is %ld after %s ping-pong of %zu, expected %ld\n", me,
                    kind ? "signal" : "flag", f_got, what, sz, seq - 1);
            exit(1);
        }
        return median(t);
    };
    if (me == 0)
        printf("put ping-pong one-way us, block of 512 threads: put+quiet+flag = putmem_block, quiet, p(flag), "
               "wait; put_signal = putmem_signal_block (SET), signal_wait_until\n%-10s %16s %16s\n",
               "size", "put+quiet+flag", "put_signal");
    for (size_t sz = 8;; sz = std::min(sz * 4, maxsz)) {   /* 8 B, 32 B, ... 512 KiB, 1 MiB */
        int it = sz <= 65536 ? 2000 : 500;
        float flag_us = put_run(0, sz, it, 512);
        float sig_us = put_run(1, sz, it, 512);
        char s[32];
        if (me == 0) printf("%-10s %16.3f %16.3f\n", fmt_size(sz, s), flag_us, sig_us);
        if (sz == maxsz) break;
    }
    float sig1_us = put_run(1, 8, 2000, 1);
    if (me == 0) printf(BENCH_LIB " put_signal one-way 8B (thread): %.3f us\n", sig1_us);

    /* barriers */
    const char *names[2] = {"device barrier_all (thread)", "device barrier_all (block)"};
    for (int scope = 0; scope < 2; scope++) {
        t.clear();
        for (int trial = 0; trial < 6; trial++) {
            bench_barrier_all();
            CK(cudaEventRecord(e0));
            if (scope) barrier_loop_block<<<1, 256>>>(2000);
            else barrier_loop_thread<<<1, 1>>>(2000);
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
