/* ring: each PE puts its number and a small array into the next PE's symmetric buffer from
 * a kernel, then all PEs meet at a barrier on the stream and check what the previous PE sent.
 *   gshmrun -n 2 ./ring        or        mpirun -np 2 ./ring
 *   gshmrun -n 4 --nodes 2 ./ring    (the next PE may be on another node: the same calls reach it) */
#include <cuda_runtime.h>
#include <stdio.h>

#include "gshmem.h"

#define N 1024

/* msg: a symmetric buffer (the source of a put to another node must be memory the copy
 * engines reach: global or heap memory, not shared memory) */
__global__ void send_to_next(int *inbox, int *msg, int *from) {
    int me = gshmem_my_pe(), next = (me + 1) % gshmem_n_pes();
    for (int i = threadIdx.x; i < N; i += blockDim.x) msg[i] = me * 1000000 + i;
    __syncthreads();
    /* the whole block copies the array into the next PE's inbox: over NVLink on this node,
     * through the remote transport to another node (returns once the data is delivered) */
    gshmemx_int_put_block(inbox, msg, N, next);
    if (threadIdx.x == 0) gshmem_int_p(from, me, next);   /* one value, the same way */
}

int main(void) {
    gshmem_init();
    int me = gshmem_my_pe(), n = gshmem_n_pes(), prev = (me + n - 1) % n;
    int *inbox = (int *)gshmem_calloc(N, sizeof(int));
    int *msg = (int *)gshmem_malloc(N * sizeof(int));
    int *from = (int *)gshmem_calloc(1, sizeof(int));
    send_to_next<<<1, 256>>>(inbox, msg, from);
    gshmemx_barrier_all_on_stream(0);   /* every PE's puts are complete and visible after it */
    if (cudaDeviceSynchronize() != cudaSuccess) {
        fprintf(stderr, "ring: kernel failed\n");
        return 1;
    }
    static int got[N];
    int sender = -1;
    cudaMemcpy(got, inbox, sizeof got, cudaMemcpyDeviceToHost);
    cudaMemcpy(&sender, from, sizeof sender, cudaMemcpyDeviceToHost);
    int bad = sender != prev;
    for (int i = 0; i < N; i++) bad += got[i] != prev * 1000000 + i;
    if (bad) printf("ring: PE %d of %d: %d of %d values from PE %d are wrong (first: %d)\n", me, n, bad, N, prev, got[0]);
    else {
        gshmemx_placement_info_t where;   /* which GPU, and whether PEs share it */
        gshmemx_get_placement(&where);
        printf("ring: PE %d of %d (GPU %d, %s) received from PE %d: OK\n", me, n, where.device,
               where.gpu_pes == 1 ? "its own" : where.mps ? "shared under MPS" : "shared, time-sliced",
               prev);
    }
    gshmem_free(from);
    gshmem_free(msg);
    gshmem_free(inbox);
    gshmem_finalize();
    return bad != 0;
}
