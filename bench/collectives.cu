/* Collectives on a stream, team WORLD, float data, all PEs (gshmrun -n N): allreduce (sum),
 * broadcast (root 0), fcollect, alltoall, reducescatter (sum), barrier_all, and a small
 * allreduce replayed from a CUDA graph (100 back-to-back calls captured in one graph).
 *
 * The library side is bench/shim.h's (gshmem, or NVSHMEM with -DBENCH_NVSHMEM). With
 * -DBENCH_NCCL the same program also times NCCL (ncclAllReduce, ncclBroadcast, ncclAllGather,
 * ncclAlltoAll or grouped ncclSend/ncclRecv before NCCL 2.28.3, ncclReduceScatter) in the
 * same job, on the same GPUs and the same stream, on cudaMalloc buffers; the NCCL unique id
 * travels through the symmetric heap (no MPI). Each size is run for every library before the
 * next size.
 *
 * size (the "bytes" column) is per PE: allreduce and broadcast: the vector; fcollect: each
 * PE's contribution (dest holds n_pes of them); alltoall: the block sent to each PE;
 * reducescatter: each PE's result (source holds n_pes blocks). Sizes double from 8 B to
 * 256 MiB; the families whose buffers are n_pes blocks stop where n_pes blocks reach 256 MiB.
 *
 * Method: per (library, family, size): fresh source data, destination set to NaN, one call,
 * its result checked against the formula of every PE's data (small integers, so every
 * summation order gives the exact float), then 1 warm-up + 5 timed trials, each trial an
 * on-stream barrier, CUDA event, `iters` back-to-back calls, event; the result is checked
 * again after the trials. A wrong element of gshmem aborts the job with a message naming
 * family, size, PE, index, value and expected value; an incumbent's wrong result is printed
 * the same way, its row shows WRONG and the run goes on. A wrong answer is never reported.
 * us = per-call time: each PE's median trial / iters, the largest over PEs. GB/s is bus
 * bandwidth as nccl-tests defines it (allreduce: size/t * 2(n-1)/n; broadcast: size/t;
 * fcollect, alltoall, reducescatter: size*(n-1)/t), so libraries compare on one scale.
 * iters: 100 for small sizes, fewer as the size grows (at least 5), fewer again when one
 * call is slow (a trial is kept near 20 ms), agreed across PEs. Each family starts with one
 * untimed round of its first size (set-up, GPU clocks).
 *
 * Across nodes (gshmrun --nodes K, or PEs on several hosts) WORLD spans nodes, so the rows are
 * the cross-node algorithms; a line before them gives the link's remote put bandwidth.
 *
 * usage: collectives [--csv FILE] [--min BYTES] [--max BYTES] [--family NAME] [--no-nccl]
 *   --csv FILE: rows lib,family,npes,bytes,us,GBps (rank 0)
 *   --min/--max BYTES: smallest/largest size (default 8 B / 256 MiB)
 *   --family NAME: only this family (its CSV name: allreduce, broadcast, ...; for tuning runs)
 *   --no-nccl: skip NCCL in a BENCH_NCCL build */
#include "shim.h"
#include "common.h"
#include <string>
#include <time.h>
#include <unistd.h>
#ifdef BENCH_NCCL
#include <nccl.h>
#endif

#ifdef BENCH_NCCL
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 3)
#define NCCL_ALLTOALL "ncclAlltoAll"
#else
#define NCCL_ALLTOALL "grouped ncclSend/ncclRecv"
#endif
#endif
#define NCCLCK(x)                                                                            \
    do {                                                                                     \
        ncclResult_t r_ = (x);                                                               \
        if (r_ != ncclSuccess) {                                                             \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x,                \
                    ncclGetErrorString(r_));                                                 \
            bench_global_exit(1);                                                            \
        }                                                                                    \
    } while (0)

enum Fam { F_ALLREDUCE, F_BROADCAST, F_FCOLLECT, F_ALLTOALL, F_REDUCESCATTER, F_BARRIER, F_GRAPH_ALLREDUCE,
           F_GRAPH_BARRIER, F_GRAPH_EMPTY, F_NFAM };
static const char *fam_name[F_NFAM] = {"allreduce", "broadcast", "fcollect", "alltoall",
                                     "reducescatter", "barrier", "allreduce_graph", "barrier_graph",
                                     "empty_kernel_graph"};
static const char *fam_title[F_NFAM] = {
    "allreduce (float sum; size = the vector; NCCL: ncclAllReduce)",
    "broadcast (root 0; size = the vector; NCCL: ncclBroadcast)",
    "fcollect (size = each PE's contribution; NCCL: ncclAllGather)",
    "alltoall (size = the block for each PE; NCCL: ncclAlltoAll / grouped send+recv)",
    "reducescatter (float sum; size = each PE's result; NCCL: ncclReduceScatter)",
    "barrier_all_on_stream (no NCCL counterpart)",
    "allreduce replayed from a CUDA graph of 100 back-to-back calls (us per call)",
    "barrier_all_on_stream replayed from a CUDA graph of 100 calls (us per call)",
    "floor: an empty kernel replayed from a CUDA graph of 100 (us per kernel; no communication)"};
/* families timed as one graph of GRAPH_CALLS calls, and those with no data to check */
static bool graph_fam(int fam) { return fam == F_GRAPH_ALLREDUCE || fam == F_GRAPH_BARRIER || fam == F_GRAPH_EMPTY; }
static bool dataless(int fam) { return fam == F_BARRIER || fam == F_GRAPH_BARRIER || fam == F_GRAPH_EMPTY; }
__global__ void empty_kernel(void) {}
static const int ROOT = 0;
static const int TRIALS = 6;       /* the first is dropped */
static const int GRAPH_CALLS = 100;
static const size_t CAP = 256ull << 20;   /* bytes of each source and destination buffer */

enum Lib { SHMEM, NCCL, NLIB };
static const char *lib_name[NLIB] = {BENCH_LIB, "nccl"};

static int me, np;
static cudaStream_t st;
static float *agree;   /* symmetric float[np]: allmax() */

/* ---- data: small integers, so sums are exact in any order ------------------------------ */
__host__ __device__ static inline float cval(unsigned seed, int pe, size_t i) {
    unsigned x = (unsigned)i * 2654435761u ^ seed * 40503u ^ (unsigned)(pe + 1) * 0x9E3779B9u;
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    x ^= x >> 12;
    return (float)((int)(x & 15) - 8);
}
/* what element d of PE me's destination must hold; n = elements per block */
__host__ __device__ static inline float expected(int fam, unsigned seed, int me, int np, size_t n, size_t d) {
    float s = 0;
    switch (fam) {
    case F_ALLREDUCE:
    case F_GRAPH_ALLREDUCE:
        for (int j = 0; j < np; j++) s += cval(seed, j, d);
        return s;
    case F_BROADCAST: return cval(seed, ROOT, d);
    case F_FCOLLECT: return cval(seed, (int)(d / n), d % n);
    case F_ALLTOALL: return cval(seed, (int)(d / n), (size_t)me * n + d % n);
    case F_REDUCESCATTER:
        for (int j = 0; j < np; j++) s += cval(seed, j, (size_t)me * n + d);
        return s;
    }
    return 0;
}
__global__ void fill_src(float *p, size_t count, unsigned seed, int me) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
        p[i] = cval(seed, me, i);
}
__global__ void check_dst(const float *p, size_t count, int fam, unsigned seed, int me, int np, size_t n,
                          unsigned long long *bad) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
        if (!(p[i] == expected(fam, seed, me, np, n, i))) {   /* NaN (untouched) fails too */
            atomicAdd(&bad[0], 1ull);
            atomicMin(&bad[1], (unsigned long long)i);
        }
}

static size_t src_elems(int fam, size_t n) { return fam == F_ALLTOALL || fam == F_REDUCESCATTER ? n * np : n; }
static size_t dst_elems(int fam, size_t n) { return fam == F_ALLTOALL || fam == F_FCOLLECT ? n * np : n; }
/* bytes one PE moves per call, for picking iters */
static size_t moved(int fam, size_t bytes) { return fam == F_ALLREDUCE || fam == F_BROADCAST ? bytes : bytes * np; }
static double busbw(int fam, size_t bytes, double us) {
    if (us <= 0 || !bytes) return 0;
    double f = fam == F_ALLREDUCE || fam == F_GRAPH_ALLREDUCE ? 2.0 * (np - 1) / np
             : fam == F_BROADCAST ? 1.0 : (double)(np - 1);
    return bytes * f / (us * 1e-6) / 1e9;
}

/* largest of every PE's v, on every PE (symmetric heap; host puts and barriers) */
static float allmax(float v) {
    CK(cudaMemcpy(agree + me, &v, sizeof v, cudaMemcpyHostToDevice));
    for (int p = 0; p < np; p++)
        if (p != me) bench_putmem(agree + me, agree + me, sizeof v, p);
    bench_barrier_all();
    std::vector<float> all(np);
    CK(cudaMemcpy(all.data(), agree, np * sizeof(float), cudaMemcpyDeviceToHost));
    bench_barrier_all();   /* nobody overwrites agree[] before everyone has read it */
    return *std::max_element(all.begin(), all.end());
}

[[noreturn]] static void die(const char *lib, int fam, size_t bytes, const char *what) {
    fprintf(stderr, "collectives: %s %s size %zu B on PE %d: %s\n", lib, fam_name[fam], bytes, me, what);
    fflush(stderr);
    bench_global_exit(1);
    exit(1);
}

/* ---- one call of (lib, fam) on stream st ------------------------------------------------ */
struct Bufs {
    float *src, *dst;
};
static Bufs bufs[NLIB];
#ifdef BENCH_NCCL
static ncclComm_t comm;
#endif

static void issue(int lib, int fam, size_t n) {
    float *s = bufs[lib].src, *d = bufs[lib].dst;
    int rc = 0;
    if (lib == SHMEM) {
        switch (fam) {
        case F_ALLREDUCE:
        case F_GRAPH_ALLREDUCE: rc = bench_float_sum_reduce_on_stream(BENCH_TEAM_WORLD, d, s, n, st); break;
        case F_BROADCAST: rc = bench_float_broadcast_on_stream(BENCH_TEAM_WORLD, d, s, n, ROOT, st); break;
        case F_FCOLLECT: rc = bench_float_fcollect_on_stream(BENCH_TEAM_WORLD, d, s, n, st); break;
        case F_ALLTOALL: rc = bench_float_alltoall_on_stream(BENCH_TEAM_WORLD, d, s, n, st); break;
        case F_REDUCESCATTER: rc = bench_float_sum_reducescatter_on_stream(BENCH_TEAM_WORLD, d, s, n, st); break;
        case F_BARRIER:
        case F_GRAPH_BARRIER: bench_barrier_all_on_stream(st); break;
        case F_GRAPH_EMPTY: empty_kernel<<<1, 32, 0, st>>>(); rc = (int)cudaGetLastError(); break;
        }
        if (rc) {
            char m[64];
            snprintf(m, sizeof m, "the call returned %d", rc);
            die(lib_name[lib], fam, n * sizeof(float), m);
        }
        return;
    }
#ifdef BENCH_NCCL
    switch (fam) {
    case F_ALLREDUCE:
    case F_GRAPH_ALLREDUCE: NCCLCK(ncclAllReduce(s, d, n, ncclFloat, ncclSum, comm, st)); break;
    case F_BROADCAST: NCCLCK(ncclBroadcast(s, d, n, ncclFloat, ROOT, comm, st)); break;
    case F_FCOLLECT: NCCLCK(ncclAllGather(s, d, n, ncclFloat, comm, st)); break;
    case F_ALLTOALL:
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 3)   /* NCCL_ALLTOALL above says which */
        NCCLCK(ncclAlltoAll(s, d, n, ncclFloat, comm, st));
#else
        NCCLCK(ncclGroupStart());
        for (int p = 0; p < np; p++) {
            NCCLCK(ncclSend(s + (size_t)p * n, n, ncclFloat, p, comm, st));
            NCCLCK(ncclRecv(d + (size_t)p * n, n, ncclFloat, p, comm, st));
        }
        NCCLCK(ncclGroupEnd());
#endif
        break;
    case F_REDUCESCATTER: NCCLCK(ncclReduceScatter(s, d, n, ncclFloat, ncclSum, comm, st)); break;
    }
#endif
}

/* fresh data in every PE's source, NaN in every destination, all PEs past that */
static void prepare(int lib, int fam, size_t n, unsigned seed) {
    fill_src<<<264, 512, 0, st>>>(bufs[lib].src, src_elems(fam, n), seed, me);
    CK(cudaMemsetAsync(bufs[lib].dst, 0xff, dst_elems(fam, n) * sizeof(float), st));
    CK(cudaStreamSynchronize(st));
    CK(cudaGetLastError());
    bench_barrier_all();
}
/* gshmem's wrong result ends the job; an incumbent's is reported and its row left out */
static bool fatal(int lib) { return !strcmp(lib_name[lib], "gshmem"); }
static bool check(int lib, int fam, size_t n, unsigned seed, const char *when) {
    static unsigned long long *bad;
    if (!bad) CK(cudaMalloc(&bad, 2 * sizeof *bad));
    unsigned long long h[2] = {0, ~0ull};
    CK(cudaMemcpyAsync(bad, h, sizeof h, cudaMemcpyHostToDevice, st));
    size_t count = dst_elems(fam, n);
    check_dst<<<264, 512, 0, st>>>(bufs[lib].dst, count, fam, seed, me, np, n, bad);
    CK(cudaMemcpyAsync(h, bad, sizeof h, cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    CK(cudaGetLastError());
    if (h[0]) {
        float got;
        CK(cudaMemcpy(&got, bufs[lib].dst + h[1], sizeof got, cudaMemcpyDeviceToHost));
        char m[256];
        snprintf(m, sizeof m, "WRONG RESULT %s: %llu of %zu elements wrong; first dest[%llu] = %g, expected %g%s",
                 when, h[0], count, h[1], got, expected(fam, seed, me, np, n, h[1]),
                 fatal(lib) ? "" : " (incumbent: not reported, the run goes on)");
        if (fatal(lib)) die(lib_name[lib], fam, n * sizeof(float), m);
        fprintf(stderr, "collectives: %s %s size %zu B on PE %d: %s\n", lib_name[lib], fam_name[fam],
                n * sizeof(float), me, m);
        return false;
    }
    return true;
}

/* Waits for `ev` (recorded after collective calls), polling: a call that never completes (a
 * hung collective, a PE gone) ends the job after HANG_S seconds with a message naming it,
 * instead of sitting out the launcher's timeout. */
static const double HANG_S = 30;
static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
static void wait_done(cudaEvent_t ev, int lib, int fam, size_t bytes, const char *what) {
    double start = 0;
    for (long spins = 0;; spins++) {
        cudaError_t e = cudaEventQuery(ev);
        if (e == cudaSuccess) return;
        if (e != cudaErrorNotReady) CK(e);
        if (spins < 1000) continue;   /* short calls: spin, no clock */
        if (spins == 1000) start = now_s();
        if (now_s() - start > HANG_S) {
            fprintf(stderr, "collectives: %s %s size %zu B on PE %d: %s did not complete in %.0f s (hung); ending the job\n",
                    lib_name[lib], fam_name[fam], bytes, me, what, HANG_S);
            fflush(stdout);
            fflush(stderr);
            _exit(3);
        }
        usleep(20);
    }
}

static cudaEvent_t e0, e1;
/* median per-call us over trials of `iters` calls (or one graph launch of GRAPH_CALLS) */
static float time_calls(int lib, int fam, size_t n, int iters, cudaGraphExec_t g) {
    std::vector<float> t;
    for (int trial = 0; trial < TRIALS; trial++) {
        bench_barrier_all_on_stream(st);   /* every PE starts its clock at about the same time */
        CK(cudaEventRecord(e0, st));
        if (g) CK(cudaGraphLaunch(g, st));
        else
            for (int i = 0; i < iters; i++) issue(lib, fam, n);
        CK(cudaEventRecord(e1, st));
        wait_done(e1, lib, fam, n * sizeof(float), "a timed trial");
        float ms = elapsed_ms(e0, e1);
        CK(cudaGetLastError());
        if (trial) t.push_back(ms);
    }
    return median(t) * 1e3f / (g ? GRAPH_CALLS : iters);
}

/* Across nodes (a PE that PE 0 cannot reach by load/store): the remote put bandwidth of the
 * link, PE 0 to the first such PE, in the same job: 16 MiB on-stream puts, 1 warm-up then 8
 * timed, completed by an on-stream quiet. The bus bandwidth of the rows compares with it. */
#ifndef BENCH_NVSHMEM
/* ms of `reps` on-stream puts of n bytes to PE `to` after one warm-up, completed by an
 * on-stream quiet */
static float time_puts(int to, size_t n, int reps) {
    for (int r = 0; r <= reps; r++) {
        if (r == 1) CK(cudaEventRecord(e0, st));
        gshmemx_putmem_on_stream(bufs[SHMEM].dst, bufs[SHMEM].src, n, to, st);
    }
    gshmemx_quiet_on_stream(st);
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    return ms;
}
#endif

static void link_bandwidth(void) {
#ifndef BENCH_NVSHMEM
    int far = -1;
    for (int p = 1; p < np && far < 0; p++)
        if (!gshmem_ptr(bufs[SHMEM].dst, p)) far = p;
    if (far < 0) return;
    const size_t n = std::min<size_t>(16u << 20, CAP);
    const int reps = 8;
    if (me == 0)
        printf("across nodes: remote put bandwidth of the link, PE 0 -> PE %d (%zu MiB on-stream puts): %.2f GB/s\n",
               far, n >> 20, (double)n * reps / (time_puts(far, n, reps) * 1e-3) / 1e9);
    bench_barrier_all();
    /* The same with every PE putting at once to the PE of its local index on the next node:
     * what each PE gets of the network when all use it, as in a collective (on one machine
     * split into nodes, every PE shares the one loopback; across hosts, each node its NIC). */
    const int per_node = gshmem_team_n_pes(GSHMEM_TEAM_SHARED);
    const int to = (me + per_node) % np;
    float ms = allmax(to != me && !gshmem_ptr(bufs[SHMEM].dst, to) ? time_puts(to, n, reps) : 0.f);
    if (me == 0 && ms > 0)
        printf("across nodes: every PE at once to PE + %d (%zu MiB on-stream puts): %.2f GB/s per PE (the slowest)\n",
               per_node, n >> 20, (double)n * reps / (ms * 1e-3) / 1e9);
    bench_barrier_all();
#endif
}

static unsigned next_seed = 1;
static const float SKIPPED = -1, WRONG = -2;
/* validate, time, validate again; returns us per call (largest over PEs), SKIPPED (no CUDA
 * graph) or WRONG (an incumbent's wrong result, agreed by every PE) */
static float measure(int lib, int fam, size_t bytes) {
    size_t n = bytes / sizeof(float);
    unsigned seed = next_seed++ * 7919u + (unsigned)bytes;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t gexec = NULL;
    if (graph_fam(fam)) {
        CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < GRAPH_CALLS; i++) issue(lib, fam, n);
        cudaError_t e = cudaStreamEndCapture(st, &graph);
        if (e == cudaSuccess) e = cudaGraphInstantiate(&gexec, graph, 0);
        /* every PE must skip together: no collective call was made yet */
        float failed = allmax(e != cudaSuccess ? 1.f : 0.f);
        if (failed) {
            if (e != cudaSuccess)
                fprintf(stderr, "collectives: %s: capturing %d %s calls in a CUDA graph failed on PE %d: %s; skipped\n",
                        lib_name[lib], GRAPH_CALLS, fam_name[fam], me, cudaGetErrorString(e));
            (void)cudaGetLastError();
            if (gexec) cudaGraphExecDestroy(gexec);
            if (graph) cudaGraphDestroy(graph);
            return SKIPPED;
        }
    }
    int iters = 1;
    bool ok = true;
    if (!dataless(fam)) {
        prepare(lib, fam, n, seed);
        CK(cudaEventRecord(e0, st));
        if (gexec) CK(cudaGraphLaunch(gexec, st));
        else issue(lib, fam, n);
        CK(cudaEventRecord(e1, st));
        wait_done(e1, lib, fam, bytes, "the checked call");
        float one = elapsed_ms(e0, e1) / (gexec ? GRAPH_CALLS : 1);
        ok = allmax(check(lib, fam, n, seed, "before timing") ? 0.f : 1.f) == 0.f;
        if (ok && !gexec) {
            size_t m = moved(fam, bytes);
            iters = (int)std::max<size_t>(5, std::min<size_t>(100, (64ull << 20) / m));
            /* a slow call: keep a trial near 20 ms (agreed: every PE makes the same calls) */
            float worst = allmax(one);
            iters = std::max(1, std::min(iters, (int)(20.f / std::max(worst, 1e-4f))));
        }
    } else {
        iters = 200;
    }
    float us = 0;
    if (ok) {
        us = time_calls(lib, fam, n, iters, gexec);
        if (!dataless(fam)) ok = check(lib, fam, n, seed, "after timing");
        us = allmax(ok ? us : 1e30f);
        ok = us < 1e30f;
    }
    if (gexec) CK(cudaGraphExecDestroy(gexec));
    if (graph) CK(cudaGraphDestroy(graph));
    return ok ? us : WRONG;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* NVLink multicast stays off on shared machines, whoever starts this */
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    setenv("NVSHMEM_DISABLE_NVLS", "1", 0);
    const char *csv_path = NULL;
    size_t maxb = CAP, minb = 8;
    const char *only = NULL;
    [[maybe_unused]] bool use_nccl = true;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--csv") && a + 1 < argc) csv_path = argv[++a];
        else if (!strcmp(argv[a], "--max") && a + 1 < argc && bench_parse_count(argv[a + 1]))
            maxb = std::min<size_t>(CAP, bench_parse_count(argv[++a]));
        else if (!strcmp(argv[a], "--min") && a + 1 < argc && bench_parse_count(argv[a + 1]))
            minb = bench_parse_count(argv[++a]);
        else if (!strcmp(argv[a], "--family") && a + 1 < argc) only = argv[++a];
        else if (!strcmp(argv[a], "--no-nccl")) use_nccl = false;
        else {
            fprintf(bench_is_help(argv[a]) ? stdout : stderr, "usage: %s [--min BYTES] [--max BYTES] [--family NAME] [--csv FILE] [--no-nccl]\n"
                   "  (run on 2 or more PEs: gshmrun -n 2 ...)\n"
                   "  on-stream collectives (barrier, broadcast, fcollect, alltoall, reductions ...) over\n"
                   "  TEAM_WORLD by message size: microseconds and GB/s, each result checked\n"
                   "  --min BYTES     smallest message (default 8; K/M/G suffixes)\n"
                   "  --max BYTES     largest message (default and most: %zu MiB)\n"
                   "  --family NAME   only this collective family\n"
                   "  --csv FILE      also write the results as CSV\n"
                   "  --no-nccl       (builds with -DBENCH_NCCL) skip the NCCL columns\n"
                   "  --help          this text\n", argv[0], (size_t)CAP >> 20);
            return bench_is_help(argv[a]) ? 0 : 2;
        }
    }
    bench_init();
    me = bench_my_pe();
    np = bench_n_pes();
    if (np < 2) {
        fprintf(stderr, "collectives: run on 2 or more PEs (gshmrun -n 2 %s)\n", argv[0]);
        bench_finalize();
        return 2;
    }
    FILE *csv = NULL;
    if (csv_path && me == 0) {
        csv = fopen(csv_path, "w");
        if (!csv) { perror(csv_path); bench_global_exit(1); }
        fprintf(csv, "lib,family,npes,bytes,us,GBps\n");
    }
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    agree = (float *)bench_malloc(np * sizeof(float));
    bufs[SHMEM].src = (float *)bench_malloc(CAP);
    bufs[SHMEM].dst = (float *)bench_malloc(CAP);
    if (!agree || !bufs[SHMEM].src || !bufs[SHMEM].dst) {
        fprintf(stderr, "collectives: PE %d: symmetric allocation of 2 x %zu MiB failed\n", me, CAP >> 20);
        bench_global_exit(1);
    }
    int nlib = 1;
#ifdef BENCH_NCCL
    if (use_nccl) {
        /* PE 0's unique id reaches every PE through the symmetric heap */
        ncclUniqueId id;
        char *idsym = (char *)bench_malloc(sizeof id);
        if (me == 0) {
            NCCLCK(ncclGetUniqueId(&id));
            CK(cudaMemcpy(idsym, &id, sizeof id, cudaMemcpyHostToDevice));
            for (int p = 1; p < np; p++) bench_putmem(idsym, idsym, sizeof id, p);
        }
        bench_barrier_all();
        CK(cudaMemcpy(&id, idsym, sizeof id, cudaMemcpyDeviceToHost));
        NCCLCK(ncclCommInitRank(&comm, np, id, me));
        CK(cudaMalloc(&bufs[NCCL].src, CAP));
        CK(cudaMalloc(&bufs[NCCL].dst, CAP));
        nlib = 2;
        bench_barrier_all();
        bench_free(idsym);
        if (me == 0) {
            int v;
            ncclGetVersion(&v);
            printf("NCCL %d.%d.%d in the same job (cudaMalloc buffers, same stream; alltoall: %s)\n", v / 10000,
                   v / 100 % 100, v % 100, NCCL_ALLTOALL);
        }
    }
#endif
    if (me == 0)
        printf("%s collectives on %d PEs, team WORLD, float data; us per call: each PE's median of %d trials, "
               "the largest over PEs; GB/s: bus bandwidth (nccl-tests' busbw); every result checked before "
               "and after timing\n",
               BENCH_LIB, np, TRIALS - 1);

    link_bandwidth();
    /* the short families first: a hung incumbent (the job ends) costs only the tail */
    for (int fam : {F_BARRIER, F_GRAPH_EMPTY, F_GRAPH_BARRIER, F_GRAPH_ALLREDUCE, F_ALLREDUCE, F_BROADCAST,
                    F_FCOLLECT, F_ALLTOALL, F_REDUCESCATTER}) {
        if (only && strcmp(only, fam_name[fam])) continue;
        std::vector<size_t> sizes;
        if (dataless(fam)) sizes.push_back(0);
        else if (fam == F_GRAPH_ALLREDUCE) {
            for (size_t b : {(size_t)8, (size_t)1024, (size_t)65536})
                if (b >= minb && b <= maxb) sizes.push_back(b);
        } else {
            size_t top = fam == F_ALLREDUCE || fam == F_BROADCAST ? maxb : std::min(maxb, CAP / np);
            for (size_t b = 8; b <= top; b *= 2)
                if (b >= minb) sizes.push_back(b);
        }
        int libs = dataless(fam) ? 1 : nlib;   /* NCCL has no barrier; the empty kernel is no library's */
        if (me == 0) {
            printf("\n== %s ==\n%10s", fam_title[fam], "size");
            for (int l = 0; l < libs; l++) printf(" %11s %8s", (std::string(lib_name[l]) + " us").c_str(), "GB/s");
            if (libs > 1) printf(" %8s", "us ratio");
            printf("\n");
        }
        /* a family's first call pays set-up (and idle GPU clocks): one untimed round first */
        if (!sizes.empty())
            for (int l = 0; l < libs; l++) (void)measure(l, fam, sizes[0]);
        for (size_t b : sizes) {
            float us[NLIB];
            for (int l = 0; l < libs; l++) us[l] = measure(l, fam, b);
            if (me != 0) continue;
            char sb[32];
            printf("%10s", dataless(fam) ? "-" : fmt_size(b, sb));
            for (int l = 0; l < libs; l++) {
                if (us[l] < 0) printf(" %11s %8s", us[l] == WRONG ? "WRONG" : "skipped", "");
                else printf(" %11.2f %8.2f", us[l], busbw(fam, b, us[l]));
                if (csv && us[l] >= 0)
                    fprintf(csv, "%s,%s,%d,%zu,%.3f,%.3f\n", lib_name[l], fam_name[fam], np, b, us[l],
                            busbw(fam, b, us[l]));
            }
            if (libs > 1) printf(" %8.2f", us[0] > 0 && us[1] > 0 ? us[0] / us[1] : 0.f);
            printf("\n");
            if (csv) fflush(csv);
        }
    }
    if (csv) fclose(csv);
#ifdef BENCH_NCCL
    if (nlib > 1) {
        CK(cudaStreamSynchronize(st));
        NCCLCK(ncclCommDestroy(comm));
        CK(cudaFree(bufs[NCCL].src));
        CK(cudaFree(bufs[NCCL].dst));
    }
#endif
    bench_free(bufs[SHMEM].dst);
    bench_free(bufs[SHMEM].src);
    bench_free(agree);
    bench_finalize();
    return 0;
}
