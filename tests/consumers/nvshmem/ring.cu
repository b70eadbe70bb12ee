// An NVSHMEM program, unchanged: built against gshmem's compatibility layer through the CMake
// package NVSHMEM or pkg-config gshmem-nvshmem (tests/consumers/run.sh), with and without
// -rdc. Each PE puts its number into the next PE's buffer from a kernel started by
// nvshmemx_collective_launch, then checks what it received (gshmrun -n 2 ./ring).
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdio.h>

__global__ void ring(int *dst, uint64_t *sig) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    int next = (me + 1) % n;
    nvshmem_int_p(dst, me, next);
    nvshmem_fence();
    nvshmemx_signal_op(sig, 1, NVSHMEM_SIGNAL_ADD, next);
    nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, 1);
}

int main(void) {
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    nvshmemx_init_attr(0, &attr);
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    int *dst = (int *)nvshmem_malloc(sizeof(int));
    uint64_t *sig = (uint64_t *)nvshmem_calloc(1, sizeof(uint64_t));
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    void *args[] = {&dst, &sig};
    int grid = 0;
    int st = nvshmemx_collective_launch_query_gridsize((const void *)ring, 1, args, 0, &grid);
    if (st != NVSHMEMX_SUCCESS || grid < 1) return 1;
    st = nvshmemx_collective_launch((const void *)ring, 1, 1, args, 0, stream);
    if (st != NVSHMEMX_SUCCESS) return 1;
    nvshmemx_barrier_all_on_stream(stream);
    cudaStreamSynchronize(stream);
    int got = nvshmem_int_g(dst, me);
    int want = (me + n - 1) % n;
    printf("PE %d received %d%s\n", me, got, got == want ? "" : " (wrong)");
    nvshmem_free(sig);
    nvshmem_free(dst);
    nvshmem_finalize();
    return got == want ? 0 : 1;
}
