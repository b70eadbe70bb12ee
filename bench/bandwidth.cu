/* Put/get bandwidth on 2 PEs, PE 0 to/from PE 1: sizes 1 KiB .. 256 MiB. Block scope: 1, 8
 * and 132 blocks of 1024 threads, each block its own slice, non-blocking block puts/gets
 * (putmem_nbi_block / getmem_nbi_block) completed by one quiet at the end of the launch, the
 * way NVSHMEM's own put/get bandwidth tests measure. Thread scope: 1, 8
 * and 132 blocks of 32 threads, each thread its own putmem of a slice; warp scope: 1, 8 and
 * 132 blocks of 1024 threads, each warp its own putmem_warp of a slice (thread and warp
 * slices are rounded down to 16 bytes). Each timed launch moves `reps` transfers cycling
 * over up to 64 size-sized slots of a 512 MiB region, so gets are not served from cache.
 * Every column's data is checked once per size: the receiving slot is cleared first.
 * --csv FILE also writes the table (columns in the order printed). */
#include "shim.h"
#include "common.h"

/* The offset of transfer r: slot r % nslots, kept as a running offset (a runtime modulo per
 * transfer cost the 64 KiB x 8-block column a quarter of its rate: bench/probes/probe_sync). */
struct Slots {
    size_t base, o, stride;
    int slot, nslots;
    __device__ Slots(size_t b, size_t s, int n) : base(b), o(b), stride(s), slot(0), nslots(n) {}
    __device__ void next() {
        o += stride;
        if (++slot == nslots) { slot = 0; o = base; }
    }
};
__global__ void __launch_bounds__(1024) put_bw(char *dst, const char *src, size_t n, int peer, int reps, size_t stride, int nslots) {
    size_t chunk = n / gridDim.x;
    Slots sl(blockIdx.x * chunk, stride, nslots);
    for (int r = 0; r < reps; r++, sl.next()) bench_putmem_nbi_block(dst + sl.o, src + sl.o, chunk, peer);
    bench_quiet_block();
}
__global__ void __launch_bounds__(1024) get_bw(char *dst, const char *src, size_t n, int peer, int reps, size_t stride, int nslots) {
    size_t chunk = n / gridDim.x;
    Slots sl(blockIdx.x * chunk, stride, nslots);
    for (int r = 0; r < reps; r++, sl.next()) bench_getmem_nbi_block(dst + sl.o, src + sl.o, chunk, peer);
    bench_quiet_block();
}
/* every thread (Warp false) or every warp (Warp true) puts its own `chunk`-byte slice */
template <bool Warp>
__global__ void __launch_bounds__(1024) put_bw_group(char *dst, const char *src, size_t chunk, int peer, int reps, size_t stride, int nslots) {
    size_t slice = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / (Warp ? 32 : 1);
    Slots sl(slice * chunk, stride, nslots);
    for (int r = 0; r < reps; r++, sl.next()) {
        if (Warp) bench_putmem_warp(dst + sl.o, src + sl.o, chunk, peer);
        else bench_putmem(dst + sl.o, src + sl.o, chunk, peer);
    }
}

enum Kind { PUT_BLOCK, GET_BLOCK, PUT_THREAD, PUT_WARP };
struct Col {
    const char *name;
    Kind kind;
    int blocks;
};
/* existing columns first, new ones at the end (the CSV keeps its column order) */
static const Col cols[] = {
    {"put1", PUT_BLOCK, 1},     {"put8", PUT_BLOCK, 8},       {"put132", PUT_BLOCK, 132},
    {"get1", GET_BLOCK, 1},     {"get8", GET_BLOCK, 8},       {"get132", GET_BLOCK, 132},
    {"putthr1", PUT_THREAD, 1}, {"putthr8", PUT_THREAD, 8},   {"putthr132", PUT_THREAD, 132},
    {"putwarp1", PUT_WARP, 1},  {"putwarp8", PUT_WARP, 8},    {"putwarp132", PUT_WARP, 132},
};
#define NCOLS (int)(sizeof cols / sizeof cols[0])

static const char usage[] =
    "usage: gshmem-perftest-bandwidth [--min-size BYTES] [--max-size BYTES] [--only COLS] [--csv FILE]\n"
    "  (run on exactly 2 PEs: gshmrun -n 2 ...)\n"
    "  put/get bandwidth from PE 0 to PE 1 in GB/s by message size (x4 steps), block, warp and\n"
    "  thread scope on 1, 8 and 132 blocks; every transfer is checked\n"
    "  --min-size BYTES   smallest size (default 1K; K/M/G suffixes)\n"
    "  --max-size BYTES   largest size (default 256M, at most 256M)\n"
    "  --only COLS        only these columns, comma-separated (e.g. put1,get1; the others print 0)\n"
    "  --csv FILE         also write the table as CSV\n"
    "  --help             this text\n";

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    size_t min_size = 1024, max_size = 256ull << 20;
    const char *csv_path = NULL, *only = NULL;
    for (int a = 1; a < argc; a++) {
        const char *v;
        if (bench_is_help(argv[a])) bench_usage_exit(usage, 0);
        else if (bench_opt(argc, argv, &a, "--min-size", &v) && (min_size = bench_parse_count(v))) continue;
        else if (bench_opt(argc, argv, &a, "--max-size", &v) && (max_size = bench_parse_count(v)) &&
                 max_size <= (256ull << 20)) continue;
        else if (bench_opt(argc, argv, &a, "--csv", &csv_path)) continue;
        else if (bench_opt(argc, argv, &a, "--only", &only)) continue;
        else bench_usage_exit(usage, 2);
    }
    bench_init();
    if (!bench_two_pes("bandwidth")) return 2;
    const int me = bench_my_pe(), peer = 1 - me;
    FILE *csv = NULL;
    if (csv_path && me == 0) csv = fopen(csv_path, "w");
    if (csv) {
        fprintf(csv, "size");
        for (const Col &c : cols) fprintf(csv, ",%s", c.name);
        fprintf(csv, "\n");
    }
    const size_t region = 512ull << 20;
    char *a = (char *)bench_malloc(region), *b = (char *)bench_malloc(region);
    bench_fill<<<264, 512>>>((unsigned char *)a, region, 100 + me);
    CK(cudaDeviceSynchronize());
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    const bool remote = bench_ptr(b, peer) == NULL;   /* the peer is on another node */
    if (me == 0) {
        printf(BENCH_LIB " bandwidth GB/s (putN/getN: N blocks x 1024 threads, block scope; putthrN: N x 32 "
               "threads, thread scope; putwarpN: N x 1024 threads, warp scope)\n%10s", "size");
        for (const Col &c : cols) printf(" %10s", c.name);
        printf("\n");
    }
    for (size_t sz = min_size; sz <= max_size; sz *= 4) {
        float r[NCOLS] = {0};
        int nslots = (int)std::min<size_t>(region / sz, 64);
        for (int ci = 0; ci < NCOLS; ci++) {
            const Col &c = cols[ci];
            if (only && !bench_listed(only, c.name)) continue;
            int nb = c.blocks;
            /* block columns: n / nb bytes per block as before; thread and warp slices in 16 B */
            bool group = c.kind == PUT_THREAD || c.kind == PUT_WARP;
            size_t slices = group ? (size_t)nb * 32 : nb;
            size_t chunk = group ? sz / slices / 16 * 16 : sz / nb;
            size_t n_eff = chunk * slices;
            if (!n_eff) continue;
            /* thread and warp columns move at most 64 MiB a launch: a few threads are slow */
            int reps = group ? (int)std::max<size_t>(1, std::min<size_t>(1000, (64ull << 20) / sz))
                             : (int)std::max<size_t>(4, std::min<size_t>(1000, (256ull << 20) / sz));
            /* across nodes every slice is a descriptor for the proxy: at most ~2048 a launch */
            if (remote) reps = (int)std::max<size_t>(group ? 1 : 4, std::min<size_t>(reps, 2048 / slices));
            int receiver = c.kind == GET_BLOCK ? 0 : 1;   /* whose b slot 0 gets the data */
            CK(cudaMemset(b, 0, sz));
            CK(cudaDeviceSynchronize());
            bench_barrier_all();
            if (me == 0) {
                std::vector<float> t;
                for (int trial = 0; trial < 6; trial++) {
                    CK(cudaEventRecord(e0));
                    switch (c.kind) {
                    case PUT_BLOCK: put_bw<<<nb, 1024>>>(b, a, n_eff, peer, reps, sz, nslots); break;
                    case GET_BLOCK: get_bw<<<nb, 1024>>>(b, a, n_eff, peer, reps, sz, nslots); break;
                    case PUT_THREAD: put_bw_group<false><<<nb, 32>>>(b, a, chunk, peer, reps, sz, nslots); break;
                    case PUT_WARP: put_bw_group<true><<<nb, 1024>>>(b, a, chunk, peer, reps, sz, nslots); break;
                    }
                    CK(cudaEventRecord(e1));
                    CK(cudaGetLastError());
                    float ms = elapsed_ms(e0, e1);
                    if (trial) t.push_back(ms);
                }
                r[ci] = (float)(n_eff * (double)reps / (median(t) * 1e-3) / 1e9);
            }
            bench_barrier_all();
            /* slot 0 of the receiver's b now holds the sender's a (seed 100 + sender) */
            if (me == receiver) {
                unsigned long long bad = bench_check(b, n_eff, 100 + peer);
                if (bad) {
                    fprintf(stderr, "bandwidth: PE %d: %llu bad bytes of %zu after %s at size %zu\n", me, bad,
                            n_eff, c.name, sz);
                    return 1;
                }
            }
        }
        bench_barrier_all();
        if (me == 0) {
            printf("%10zu", sz);
            for (int ci = 0; ci < NCOLS; ci++) printf(" %10.1f", r[ci]);
            printf("\n");
            if (csv) {
                fprintf(csv, "%zu", sz);
                for (int ci = 0; ci < NCOLS; ci++) fprintf(csv, ",%.2f", r[ci]);
                fprintf(csv, "\n");
            }
        }
    }
    if (csv) fclose(csv);
    bench_finalize();
    return 0;
}
