/* The incumbent's numbers measured the same way as bench/latency.cu and bench/bandwidth.cu:
 * NVIDIA NVSHMEM p ping-pong one-way latency, g round trip, and put/get bandwidth with
 * 1/8/132 blocks of 1024 threads. Built only on machines where the NVSHMEM wheel is found
 * (tools/gpu-run.sh builds it with -rdc, as NVSHMEM requires). Launched by gshmrun: ranks
 * come from GSHMEM_RANK/GSHMEM_NPES, and the NVSHMEM unique id travels through a file. */
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>
#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <vector>

#define CK(x)                                                                                \
    do {                                                                                     \
        cudaError_t e = (x);                                                                 \
        if (e != cudaSuccess) {                                                              \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

static void init_uid(int rank, int n) {
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    char path[256], tmp[300];
    const char *job = getenv("GSHMEM_UID") ? strrchr(getenv("GSHMEM_UID"), ':') : NULL;
    snprintf(path, sizeof path, "/tmp/nvshmem-uid-%s", job ? job + 1 : "x");
    if (rank == 0) {
        nvshmemx_get_uniqueid(&id);
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        FILE *f = fopen(tmp, "wb");
        fwrite(&id, sizeof id, 1, f);
        fclose(f);
        rename(tmp, path);
    } else {
        FILE *f = NULL;
        for (int i = 0; i < 3000 && !(f = fopen(path, "rb")); i++) usleep(10000);
        if (!f || fread(&id, sizeof id, 1, f) != 1) { fprintf(stderr, "no uid file\n"); exit(1); }
        fclose(f);
    }
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    nvshmemx_set_attr_uniqueid_args(rank, n, &id, &attr);
    nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr);
    if (rank == 0) { sleep(1); unlink(path); }
}

__global__ void pingpong(long *flag, long start, int iters, int peer) {
    int me = nvshmem_my_pe();
    for (int i = 0; i < iters; i++) {
        long v = start + i;
        if (me == 0) {
            nvshmem_long_p(flag, v, peer);
            nvshmem_long_wait_until(flag, NVSHMEM_CMP_EQ, v);
        } else {
            nvshmem_long_wait_until(flag, NVSHMEM_CMP_EQ, v);
            nvshmem_long_p(flag, v, peer);
        }
    }
}

__global__ void g_chase(const long *next, int iters, int peer, long *out) {
    long idx = 0;
    for (int i = 0; i < iters; i++) idx = nvshmem_long_g(next + idx, peer);
    *out = idx;
}

__global__ void put_bw(char *dst, const char *src, size_t n, int peer, int reps, size_t stride, int nslots) {
    size_t chunk = n / gridDim.x;
    for (int r = 0; r < reps; r++) {
        size_t o = (size_t)(r % nslots) * stride + blockIdx.x * chunk;
        nvshmemx_putmem_block(dst + o, src + o, chunk, peer);
    }
}
__global__ void get_bw(char *dst, const char *src, size_t n, int peer, int reps, size_t stride, int nslots) {
    size_t chunk = n / gridDim.x;
    for (int r = 0; r < reps; r++) {
        size_t o = (size_t)(r % nslots) * stride + blockIdx.x * chunk;
        nvshmemx_getmem_block(dst + o, src + o, chunk, peer);
    }
}

static float time_ms(cudaEvent_t a, cudaEvent_t b) {
    float ms;
    CK(cudaEventSynchronize(b));
    CK(cudaEventElapsedTime(&ms, a, b));
    return ms;
}
static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char **argv) {
    int rank = atoi(getenv("GSHMEM_RANK") ? getenv("GSHMEM_RANK") : "0");
    int n = atoi(getenv("GSHMEM_NPES") ? getenv("GSHMEM_NPES") : "1");
    CK(cudaSetDevice(rank));
    init_uid(rank, n);
    int me = nvshmem_my_pe(), peer = 1 - me;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    long *flag = (long *)nvshmem_malloc(sizeof(long));
    CK(cudaMemset(flag, 0, sizeof(long)));
    nvshmem_barrier_all();
    const int iters = 10000;
    long seq = 1;
    std::vector<float> t;
    for (int trial = 0; trial < 6; trial++) {
        nvshmem_barrier_all();
        CK(cudaEventRecord(e0));
        pingpong<<<1, 1>>>(flag, seq, iters, peer);
        CK(cudaEventRecord(e1));
        CK(cudaGetLastError());
        float ms = time_ms(e0, e1);
        seq += iters;
        if (trial) t.push_back(ms * 1000.f / (2 * iters));
    }
    if (me == 0) printf("nvshmem p ping-pong one-way: %.3f us (median of 5 x %d round trips)\n", median(t), iters);

    /* g round trip: pointer chase through PE 1's array */
    const int chase_n = 1 << 16;
    long *next = (long *)nvshmem_malloc(chase_n * sizeof(long));
    std::vector<long> h(chase_n);
    for (int i = 0; i < chase_n; i++) h[i] = (i * 7919L + 1) % chase_n;
    CK(cudaMemcpy(next, h.data(), chase_n * sizeof(long), cudaMemcpyHostToDevice));
    long *out;
    CK(cudaMalloc(&out, sizeof(long)));
    nvshmem_barrier_all();
    t.clear();
    if (me == 0) {
        for (int trial = 0; trial < 6; trial++) {
            CK(cudaEventRecord(e0));
            g_chase<<<1, 1>>>(next, 5000, peer, out);
            CK(cudaEventRecord(e1));
            float ms = time_ms(e0, e1);
            if (trial) t.push_back(ms * 1000.f / 5000);
        }
        printf("nvshmem g round trip: %.3f us\n", median(t));
    }
    nvshmem_barrier_all();

    /* bandwidth */
    const size_t region = 512ull << 20;
    char *a = (char *)nvshmem_malloc(region), *b = (char *)nvshmem_malloc(region);
    CK(cudaMemset(a, 1, region));
    CK(cudaMemset(b, 2, region));
    CK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    if (me == 0) printf("nvshmem bandwidth GB/s\n%10s %9s %9s %9s %9s %9s %9s\n", "size", "put1", "put8", "put132", "get1", "get8", "get132");
    for (size_t sz = 1024; sz <= (256ull << 20); sz *= 4) {
        float r[6];
        int blocks[3] = {1, 8, 132};
        for (int op = 0; op < 2; op++)
            for (int bi = 0; bi < 3; bi++) {
                int nb = blocks[bi];
                size_t n_eff = sz / nb * nb;
                if (n_eff == 0) { r[op * 3 + bi] = 0; continue; }
                int nslots = (int)std::min<size_t>(region / sz, 64);
                int reps = (int)std::max<size_t>(4, std::min<size_t>(1000, (256ull << 20) / sz));
                t.clear();
                for (int trial = 0; trial < 6 && me == 0; trial++) {
                    CK(cudaEventRecord(e0));
                    if (op == 0) put_bw<<<nb, 1024>>>(b, a, n_eff, peer, reps, sz, nslots);
                    else get_bw<<<nb, 1024>>>(b, a, n_eff, peer, reps, sz, nslots);
                    CK(cudaEventRecord(e1));
                    float ms = time_ms(e0, e1);
                    if (trial) t.push_back(ms);
                }
                r[op * 3 + bi] = me == 0 ? (float)(n_eff * (double)reps / (median(t) * 1e-3) / 1e9) : 0;
            }
        if (me == 0) printf("%10zu %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", sz, r[0], r[1], r[2], r[3], r[4], r[5]);
        nvshmem_barrier_all();
    }
    nvshmem_finalize();
    return 0;
}
