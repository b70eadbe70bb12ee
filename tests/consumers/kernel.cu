// A CUDA program of a downstream project: a kernel that puts into the next PE, built by nvcc
// against the installed headers and library (runs where there is a GPU: gshmrun -n 2 ./kernel).
#include <gshmem.h>
#include <stdio.h>

__global__ void ring(int *dst) {
    int me = gshmem_my_pe(), n = gshmem_n_pes();
    gshmem_int_p(dst, me, (me + 1) % n);
}

int main(void) {
    gshmem_init();
    int *x = (int *)gshmem_malloc(sizeof(int));
    ring<<<1, 1>>>(x);
    gshmem_barrier_all();
    int got = gshmem_int_g(x, gshmem_my_pe());
    printf("PE %d received %d\n", gshmem_my_pe(), got);
    gshmem_free(x);
    gshmem_finalize();
    return 0;
}
