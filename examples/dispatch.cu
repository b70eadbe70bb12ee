/* dispatch: the all-to-all of a mixture-of-experts layer, done from a kernel. Every PE holds T
 * tokens of H floats, each routed to the PE of its expert. One warp per token reserves a row in
 * the destination's receive buffer (an atomic fetch-add on that PE's counter) and copies the
 * token there with a warp-scope put; a barrier completes the exchange, and each PE checks the
 * tokens it received.
 *   gshmrun -n 2 ./dispatch */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "gshmem.h"

#define T 512    /* tokens per PE */
#define H 1024   /* floats per token; element 0 carries the token's global id */

__host__ __device__ int route(int pe, int t, int n) { return (pe * 7 + t * 13 + t / 5) % n; }
__host__ __device__ float value(int id, int j) { return j ? (float)(id % 1000) + j * 0.5f : (float)id; }

__global__ void fill(float *tokens, int me) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < T * H; i += gridDim.x * blockDim.x)
        tokens[i] = value(me * T + i / H, i % H);
}

__global__ void dispatch(const float *tokens, float *recv, int *count, int n) {
    int t = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (t >= T) return;
    int dest = route(gshmem_my_pe(), t, n), row = 0;
    if (threadIdx.x % 32 == 0) row = gshmem_int_atomic_fetch_add(count, 1, dest);
    row = __shfl_sync(0xffffffffu, row, 0);
    gshmemx_float_put_warp(recv + (size_t)row * H, tokens + (size_t)t * H, H, dest);
}

int main(void) {
    gshmem_init();
    int me = gshmem_my_pe(), n = gshmem_n_pes();
    float *tokens = (float *)gshmem_malloc((size_t)T * H * sizeof(float));
    float *recv = (float *)gshmem_malloc((size_t)n * T * H * sizeof(float));   /* room for all */
    int *count = (int *)gshmem_calloc(1, sizeof(int));
    fill<<<64, 256>>>(tokens, me);
    gshmem_barrier_all();   /* every counter is zero and every token filled before any arrives */
    dispatch<<<T / 8, 256>>>(tokens, recv, count, n);
    gshmem_barrier_all();   /* all puts delivered */

    int got = 0, want = 0, bad = 0;
    for (int pe = 0; pe < n; pe++)
        for (int t = 0; t < T; t++) want += route(pe, t, n) == me;
    cudaMemcpy(&got, count, sizeof got, cudaMemcpyDeviceToHost);
    float *h = (float *)malloc((size_t)got * H * sizeof(float));
    cudaMemcpy(h, recv, (size_t)got * H * sizeof(float), cudaMemcpyDeviceToHost);
    for (int r = 0; r < got; r++) {
        int id = (int)h[(size_t)r * H];
        bad += route(id / T, id % T, n) != me;
        for (int j = 1; j < H; j++) bad += h[(size_t)r * H + j] != value(id, j);
    }
    int ok = got == want && !bad;
    printf("dispatch: PE %d of %d received %d tokens (expected %d), %d wrong values: %s\n", me, n,
           got, want, bad, ok ? "OK" : "WRONG");
    free(h);
    gshmem_free(count);
    gshmem_free(recv);
    gshmem_free(tokens);
    gshmem_finalize();
    return !ok;
}
