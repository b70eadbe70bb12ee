/* Proves init over an MPI communicator without a GPU: under mpirun (3 ranks), a program that
 * dlopened Open MPI (as NVSHMEM's own tests do) hands gshmem MPI_COMM_WORLD and then a split
 * communicator; gshmemi_mpi_uid gives every rank the communicator's rank and size and one
 * unique id, on which the unique-id bootstrap then connects them (an allgather of ranks checks
 * who is who). gshmem includes no mpi.h: Open MPI's handles are pointers to its objects. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "config.h"

#include "unit.h"

typedef void *comm_t;   /* Open MPI: MPI_Comm is a pointer */

static void *mpi;
#define FN(name, type) ((type)dlsym(mpi, name))

/* Bootstraps on the id gshmemi_mpi_uid gives for `comm` and checks rank, size and an allgather. */
static void over(const char *what, comm_t *comm, int want_rank, int want_size) {
    int rank = -1, size = -1;
    char uid[GSHMEMX_UNIQUEID_BYTES];
    gshmemi_status st = gshmemi_mpi_uid(comm, &rank, &size, uid, sizeof uid);
    EXPECT(st == GSHMEM_SUCCESS, "%s: gshmemi_mpi_uid failed (%d)", what, st);
    if (st != GSHMEM_SUCCESS) return;
    EXPECT(rank == want_rank && size == want_size, "%s: rank %d of %d, MPI says %d of %d", what,
           rank, size, want_rank, want_size);
    gshmemi_bootstrap b;
    memset(&b, 0, sizeof b);
    st = gshmemi_bootstrap_uid_init(&b, uid, rank, size, -1);
    EXPECT(st == GSHMEM_SUCCESS, "%s: the unique-id bootstrap on the broadcast id failed (%d)", what, st);
    if (st != GSHMEM_SUCCESS) return;
    int *all = calloc((size_t)size, sizeof *all);
    st = b.ops->allgather(&b, &rank, all, sizeof rank);
    EXPECT(st == GSHMEM_SUCCESS, "%s: allgather failed", what);
    for (int r = 0; st == GSHMEM_SUCCESS && r < size; r++)
        EXPECT(all[r] == r, "%s: allgather slot %d holds rank %d", what, r, all[r]);
    free(all);
    b.ops->finalize(&b);
}

int main(void) {
    mpi = dlopen("libmpi.so.40", RTLD_NOW | RTLD_GLOBAL);
    if (!mpi) {
        printf("bootstrap_mpi: Open MPI (libmpi.so.40) not found: nothing to test\n");
        printf("bootstrap_mpi: 0 passed, 0 failed\n");
        return 77;   /* meson: skipped */
    }
    gshmemi_config_load(&gshmemi_cfg);
    FN("MPI_Init", int (*)(int *, char ***))(NULL, NULL);
    comm_t world = dlsym(mpi, "ompi_mpi_comm_world");
    int rank = -1, size = -1;
    FN("MPI_Comm_rank", int (*)(comm_t, int *))(world, &rank);
    FN("MPI_Comm_size", int (*)(comm_t, int *))(world, &size);

    over("MPI_COMM_WORLD (NULL)", NULL, rank, size);
    over("MPI_COMM_WORLD", &world, rank, size);
    /* ranks 0, 2, ... and 1, 3, ...: two bootstraps at once, each with its own id */
    comm_t half = NULL;
    FN("MPI_Comm_split", int (*)(comm_t, int, int, comm_t *))(world, rank % 2, rank, &half);
    over("a split communicator", &half, rank / 2, (size + 1 - rank % 2) / 2);

    int bad = failed;
    int any = 0;
    FN("MPI_Allreduce", int (*)(const void *, void *, int, void *, void *, comm_t))(
        &bad, &any, 1, dlsym(mpi, "ompi_mpi_int"), dlsym(mpi, "ompi_mpi_op_max"), world);
    FN("MPI_Finalize", int (*)(void))();
    printf("bootstrap_mpi rank %d: %d passed, %d failed\n", rank, passed, failed);
    return any != 0;
}
