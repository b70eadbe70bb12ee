/* Proves that a translation unit built GSHMEM_LOAD_STORE_ONLY (device calls to load/store peers
 * only) ends the job with a message naming the call, the PE and the setting when one of its
 * kernels meets a PE of another node, within seconds: no launch failure left unexplained, no
 * hang. Run across nodes (gshmrun -n 2 --nodes 2): run_gpu_tests.sh expects the failure. On one
 * node the same p reaches the next PE and the test passes. usage: test_ls_only */
#define GSHMEM_LOAD_STORE_ONLY 1
#include <stdio.h>
#include "gshmem.h"

__global__ void p_next(int *x) {
    const int me = gshmem_my_pe(), next = (me + 1) % gshmem_n_pes();
    gshmem_int_p(x, me, next);
}

int main(void) {
    gshmem_init();
    const int me = gshmem_my_pe(), n = gshmem_n_pes();
    int *x = (int *)gshmem_calloc(1, sizeof(int));
    p_next<<<1, 1>>>(x);
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        /* the kernel's own message (printf) said which call, PE and setting; end the job */
        fprintf(stderr, "test_ls_only: PE %d: the kernel stopped (%s)\n", me, cudaGetErrorString(e));
        gshmem_global_exit(3);
    }
    gshmem_barrier_all();
    int got = -1;
    cudaMemcpy(&got, x, sizeof got, cudaMemcpyDeviceToHost);
    const int ok = got == (me + n - 1) % n;
    printf("test_ls_only: PE %d: %s (got %d)\n", me, ok ? "passed" : "FAILED", got);
    gshmem_free(x);
    gshmem_finalize();
    return ok ? 0 : 1;
}
