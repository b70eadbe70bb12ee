/* Proves that the GPU builds the mlx5 work requests the host builds: every case of
 * tests/unit/test_nic_wqe.c (which proves the host's bytes equal rdma-core's: every builder,
 * opcode and opmod, WQE index 0x0000 / 0x0001 / 0xffff / 0x12ab, QP number 0 / 0xffffff /
 * 0x123456, every fence and completion flag combination, atomic sizes 4 and 8, inline lengths
 * 1..12, in a ring's last slot too) is built by one GPU thread with gshmem/nic_wqe.h's device
 * code (__byte_perm byte swaps) into poisoned GPU memory, and its 128 bytes and basic-block
 * count are compared with the same builder's on the host. One GPU, no gshmem_init: the
 * builders are pure functions. A failure names the case, the field, the byte and both values.
 * usage: test_nic_wqe */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define NIC_WQE_CASES_ONLY   /* the cases and the builder dispatch, not the rdma-core reference */
#include "../unit/test_nic_wqe.c"

#define CK(call)                                                                             \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) {                                                             \
            fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call,        \
                    cudaGetErrorName(e_), cudaGetErrorString(e_));                           \
            exit(2);                                                                         \
        }                                                                                    \
    } while (0)

/* One thread per case: case i into out[i * 128 ...], its return value into bbs[i]. */
__global__ void build_all(const wqe_case *cases, int n, uint8_t *out, int *bbs) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) bbs[i] = wqe_build(&cases[i], out + (size_t)i * 128);
}

static wqe_case cases[WQE_VARIANTS * WQE_PER_VARIANT];

int main(void) {
    const int n = wqe_cases(cases);
    int dev = 0, passed = 0, failed = 0;
    cudaDeviceProp prop;
    CK(cudaGetDevice(&dev));
    CK(cudaGetDeviceProperties(&prop, dev));
    printf("nic_wqe (GPU): %d WQEs built on %s (sm_%d%d), one thread each, against the host's\n",
           n, prop.name, prop.major, prop.minor);

    wqe_case *d_cases;
    uint8_t *d_out;
    int *d_bbs;
    CK(cudaMalloc(&d_cases, n * sizeof *d_cases));
    CK(cudaMalloc(&d_out, (size_t)n * 128));
    CK(cudaMalloc(&d_bbs, n * sizeof *d_bbs));
    CK(cudaMemcpy(d_cases, cases, n * sizeof *d_cases, cudaMemcpyHostToDevice));
    CK(cudaMemset(d_out, T_POISON, (size_t)n * 128));
    build_all<<<(n + 127) / 128, 128>>>(d_cases, n, d_out, d_bbs);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    uint8_t *gpu = (uint8_t *)malloc((size_t)n * 128);
    int *gpu_bbs = (int *)malloc(n * sizeof *gpu_bbs);
    CK(cudaMemcpy(gpu, d_out, (size_t)n * 128, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(gpu_bbs, d_bbs, n * sizeof *gpu_bbs, cudaMemcpyDeviceToHost));

    for (int v = 0; v < n; v += WQE_PER_VARIANT) {
        int bad = 0;
        for (int i = v; i < v + WQE_PER_VARIANT; i++) {
            uint8_t host[128], lin[128];
            const uint8_t *g = gpu + (size_t)i * 128;
            memset(host, T_POISON, sizeof host);
            const int want = wqe_build(&cases[i], host);
            int off = 0;
            while (off < 128 && g[off] == host[off]) off++;
            const bool ok = off == 128 && gpu_bbs[i] == want;
            bad += !ok;
            if (ok || bad > 1) continue;   /* the first differing WQE of each operation */
            char what[160];
            wqe_describe(&cases[i], what, sizeof what);
            if (off == 128) {
                fprintf(stderr, "FAIL %s: the GPU's builder returned %d basic blocks, the host's "
                        "%d\n", what, gpu_bbs[i], want);
                continue;
            }
            wqe_linear(&cases[i], host, lin);
            const int woff = (off - (cases[i].wrapped ? 64 : 0) + 128) % 128;
            fprintf(stderr, "FAIL %s: field %s, WQE byte %d (buffer byte %d): GPU 0x%02x, "
                    "host 0x%02x\n", what, wqe_field(lin, woff), woff, off, g[off], host[off]);
        }
        passed += WQE_PER_VARIANT - bad;
        failed += bad;
        char what[160];
        wqe_describe(&cases[v], what, sizeof what);
        *strstr(what, " idx") = 0;
        printf("%s %-36s %d of %d WQEs equal to the host's\n", bad ? "FAIL" : "ok  ", what,
               WQE_PER_VARIANT - bad, WQE_PER_VARIANT);
    }
    printf("nic_wqe (GPU): %d passed, %d failed\n", passed, failed);
    CK(cudaFree(d_cases));
    CK(cudaFree(d_out));
    CK(cudaFree(d_bbs));
    free(gpu);
    free(gpu_bbs);
    return failed ? 1 : 0;
}
