/* halo: a 1-D Jacobi-style smoothing on a periodic domain split across the PEs. Each PE owns
 * N cells plus one halo cell on each side; after computing a step, the kernel stores its edge
 * cells straight into the neighbours' halos (gshmem_double_p over NVLink), and a barrier on
 * the stream makes them visible before the next step. The stencil keeps the total, which the
 * end checks with a sum reduction.
 *   gshmrun -n 2 ./halo */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>

#include "gshmem.h"

#define N 4096
#define STEPS 100

/* v[1..N] from u[0..N+1]; then my edge cells go to the halos of the PEs beside me:
 * v[1] is the left PE's right halo (its v[N+1]), v[N] the right PE's left halo (its v[0]). */
__global__ void step(const double *u, double *v, int left, int right) {
    int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (i > N) return;
    v[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]);
    if (i == 1) gshmem_double_p(&v[N + 1], v[1], left);
    if (i == N) gshmem_double_p(&v[0], v[N], right);
}

/* Cell i of PE p starts at (p * N + i) % 97; the halos start as the neighbours' edge cells. */
__device__ double start(int pe, int i) { return (double)((pe * N + i) % 97); }
__global__ void init(double *u, int me, int left, int right) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 1 && i <= N) u[i] = start(me, i);
    if (i == 0) u[0] = start(left, N);
    if (i == N + 1) u[N + 1] = start(right, 1);
}

__global__ void local_sum(const double *u, double *out) {
    double s = 0;
    for (int i = 1; i <= N; i++) s += u[i];
    *out = s;
}

int main(void) {
    gshmem_init();
    int me = gshmem_my_pe(), n = gshmem_n_pes();
    int left = (me + n - 1) % n, right = (me + 1) % n;
    double *u = (double *)gshmem_malloc((N + 2) * sizeof(double));
    double *v = (double *)gshmem_malloc((N + 2) * sizeof(double));
    double *part = (double *)gshmem_malloc(sizeof(double)), *total = (double *)gshmem_malloc(sizeof(double));
    int threads = 256, blocks = (N + 2 + threads - 1) / threads;

    init<<<blocks, threads>>>(u, me, left, right);
    local_sum<<<1, 1>>>(u, part);
    gshmem_double_sum_reduce(GSHMEM_TEAM_WORLD, total, part, 1);
    double before;
    cudaMemcpy(&before, total, sizeof before, cudaMemcpyDeviceToHost);

    for (int s = 0; s < STEPS; s++) {
        step<<<blocks, threads>>>(u, v, left, right);
        gshmemx_barrier_all_on_stream(0);   /* halos delivered and the step done everywhere */
        double *t = u; u = v; v = t;
    }
    local_sum<<<1, 1>>>(u, part);
    gshmem_double_sum_reduce(GSHMEM_TEAM_WORLD, total, part, 1);
    double after;
    cudaMemcpy(&after, total, sizeof after, cudaMemcpyDeviceToHost);
    int ok = fabs(after - before) <= 1e-9 * fabs(before);
    if (me == 0)
        printf("halo: %d PEs x %d cells, %d steps: total %.6f -> %.6f: %s\n", n, N, STEPS, before,
               after, ok ? "OK" : "WRONG");
    gshmem_free(total);
    gshmem_free(part);
    gshmem_free(v);
    gshmem_free(u);
    gshmem_finalize();
    return !ok;
}
