/* uid_init: starting PEs without gshmrun or mpirun, as a framework that launches its own
 * processes does (torchrun-style): the process that will be PE 0 makes a unique id, the id
 * reaches every process by the framework's own means, and each calls gshmemx_init_attr with
 * its rank. Here the "framework" is fork(): the id is made before forking (no CUDA yet) and
 * each child inherits a copy. A real one would send the 128 bytes through its store, MPI_Bcast
 * or a file.
 *   ./uid_init 2        (2 PEs; several may share one GPU) */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gshmem.h"

__global__ void hello(int *box) {
    gshmem_int_atomic_add(box, gshmem_my_pe() + 1, 0);   /* every PE adds me+1 on PE 0 */
}

static int run_pe(int rank, int n, const gshmemx_uniqueid_t *uid) {
    gshmemx_init_attr_t attr = {rank, n, *uid};
    if (gshmemx_init_attr(&attr) != GSHMEM_SUCCESS) return 1;   /* the message says why */
    int *box = (int *)gshmem_calloc(1, sizeof(int));
    hello<<<1, 1>>>(box);
    gshmem_barrier_all();
    int ok = 1;
    if (rank == 0) {
        int sum = 0;
        cudaMemcpy(&sum, box, sizeof sum, cudaMemcpyDeviceToHost);
        ok = sum == n * (n + 1) / 2;
        printf("uid_init: %d PEs started by fork, sum on PE 0 = %d: %s\n", n, sum, ok ? "OK" : "WRONG");
    }
    gshmem_free(box);
    gshmem_finalize();
    return !ok;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 2;
    if (n < 1) {
        fprintf(stderr, "usage: %s [N_PES]\n", argv[0]);
        return 2;
    }
    gshmemx_uniqueid_t uid;   /* by the process that becomes PE 0, before any CUDA call */
    if (gshmemx_get_uniqueid(&uid) != GSHMEM_SUCCESS) return 1;
    for (int r = 1; r < n; r++)
        if (fork() == 0) return run_pe(r, n, &uid);
    int rc = run_pe(0, n, &uid), st;
    while (wait(&st) > 0) rc |= !WIFEXITED(st) || WEXITSTATUS(st);
    return rc;
}
