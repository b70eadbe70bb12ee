/* Put/get bandwidth on 2 PEs, PE 0 to/from PE 1: sizes 1 KiB .. 256 MiB, 1, 8 and 132
 * blocks of 1024 threads (block-scope calls, each block its own slice). Each timed launch
 * moves `reps` transfers cycling over up to 64 size-sized slots of a 512 MiB region, so
 * gets are not served from cache. Data is checked once per size. Same method as
 * bench/nvshmem/nvshmem_p2p.cu. --csv FILE also writes the table. */
#include "shim.h"
#include "common.h"

__global__ void put_bw(char *dst, const char *src, size_t n, int peer, int reps, size_t stride, int nslots) {
    size_t chunk = n / gridDim.x;
    for (int r = 0; r < reps; r++) {
        size_t o = (size_t)(r % nslots) * stride + blockIdx.x * chunk;
        bench_putmem_block(dst + o, src + o, chunk, peer);
    }
}
__global__ void get_bw(char *dst, const char *src, size_t n, int peer, int reps, size_t stride, int nslots) {
    size_t chunk = n / gridDim.x;
    for (int r = 0; r < reps; r++) {
        size_t o = (size_t)(r % nslots) * stride + blockIdx.x * chunk;
        bench_getmem_block(dst + o, src + o, chunk, peer);
    }
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    bench_init();
    int me = bench_my_pe(), np = bench_n_pes(), peer = 1 - me;
    if (np != 2) {
        if (me == 0) fprintf(stderr, "bandwidth: run on exactly 2 PEs (gshmrun -n 2)\n");
        return 2;
    }
    FILE *csv = NULL;
    if (argc > 2 && !strcmp(argv[1], "--csv") && me == 0) csv = fopen(argv[2], "w");
    if (csv) fprintf(csv, "size,put1,put8,put132,get1,get8,get132\n");
    const size_t region = 512ull << 20;
    char *a = (char *)bench_malloc(region), *b = (char *)bench_malloc(region);
    bench_fill<<<264, 512>>>((unsigned char *)a, region, 100 + me);
    CK(cudaDeviceSynchronize());
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    if (me == 0) printf(BENCH_LIB " bandwidth GB/s\n%10s %9s %9s %9s %9s %9s %9s\n", "size", "put1", "put8", "put132", "get1", "get8", "get132");
    int blocks[3] = {1, 8, 132};
    for (size_t sz = 1024; sz <= (256ull << 20); sz *= 4) {
        CK(cudaMemset(b, 0, sz));
        CK(cudaDeviceSynchronize());
        bench_barrier_all();
        float r[6] = {0};
        size_t checked_put = 0, checked_get = 0;
        for (int op = 0; op < 2 && me == 0; op++)
            for (int bi = 0; bi < 3; bi++) {
                int nb = blocks[bi];
                size_t n_eff = sz / nb * nb;
                if (!n_eff) continue;
                int nslots = (int)std::min<size_t>(region / sz, 64);
                int reps = (int)std::max<size_t>(4, std::min<size_t>(1000, (256ull << 20) / sz));
                std::vector<float> t;
                for (int trial = 0; trial < 6; trial++) {
                    CK(cudaEventRecord(e0));
                    if (op == 0) put_bw<<<nb, 1024>>>(b, a, n_eff, peer, reps, sz, nslots);
                    else get_bw<<<nb, 1024>>>(b, a, n_eff, peer, reps, sz, nslots);
                    CK(cudaEventRecord(e1));
                    CK(cudaGetLastError());
                    float ms = elapsed_ms(e0, e1);
                    if (trial) t.push_back(ms);
                }
                r[op * 3 + bi] = (float)(n_eff * (double)reps / (median(t) * 1e-3) / 1e9);
                if (op == 0) checked_put = std::max(checked_put, n_eff);
                else checked_get = std::max(checked_get, n_eff);
            }
        bench_barrier_all();
        /* the 1-block runs covered all sz bytes of slot 0: PE 1's b holds PE 0's a (puts),
         * PE 0's b holds PE 1's a (gets) */
        (void)checked_put;
        if (me == 1 || checked_get) {
            unsigned long long bad = bench_check(b, sz, me == 1 ? 100 : 101);
            if (bad) {
                fprintf(stderr, "bandwidth: PE %d: %llu bad bytes after %s of %zu bytes\n", me, bad,
                        me == 1 ? "puts" : "gets", sz);
                return 1;
            }
        }
        bench_barrier_all();
        if (me == 0) {
            printf("%10zu %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", sz, r[0], r[1], r[2], r[3], r[4], r[5]);
            if (csv) fprintf(csv, "%zu,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f\n", sz, r[0], r[1], r[2], r[3], r[4], r[5]);
        }
    }
    if (csv) fclose(csv);
    bench_finalize();
    return 0;
}
