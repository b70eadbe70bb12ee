// Proves gshmemx_init_flags on 2+ PEs. `uid`, under gshmrun: GSHMEMX_INIT_WITH_UNIQUEID with the
// rank, size and id gshmrun gives the PEs; `mpi`, under mpirun: GSHMEMX_INIT_WITH_MPI_COMM on
// MPI_COMM_WORLD of an Open MPI the program dlopened (as NVSHMEM's tests do), the PEs being the
// MPI ranks. Before init, flags gshmem cannot honour return GSHMEM_ERR_NOT_AVAILABLE and
// contradictory ones GSHMEM_ERR_INVALID_ARG; after it, a kernel's put reaches the next PE.
// usage: gshmrun -n 2 test_init_flags uid | mpirun -np 2 test_init_flags mpi
#include <dlfcn.h>

#include "common.h"

__global__ void put_right(int *dst) {
    int me = gshmem_my_pe(), n = gshmem_n_pes();
    gshmem_int_p(dst, 10 + me, (me + 1) % n);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "uid";
    int st = gshmemx_init_flags(GSHMEMX_INIT_THREAD_PES, NULL, NULL);
    EXPECT(st == GSHMEM_ERR_NOT_AVAILABLE, "GSHMEMX_INIT_THREAD_PES: status %d", st);
    st = gshmemx_init_flags(GSHMEMX_INIT_WITH_MPI_COMM | GSHMEMX_INIT_WITH_UNIQUEID, NULL, NULL);
    EXPECT(st == GSHMEM_ERR_INVALID_ARG, "MPI_COMM | UNIQUEID: status %d", st);
    int want_rank = -1, want_size = -1;
    void *mpi = NULL;
    if (!strcmp(mode, "mpi")) {
        mpi = dlopen("libmpi.so.40", RTLD_NOW | RTLD_GLOBAL);
        if (!mpi) {
            fprintf(stderr, "test_init_flags mpi: Open MPI (libmpi.so.40) not found\n");
            return 2;
        }
        ((int (*)(int *, char ***))dlsym(mpi, "MPI_Init"))(&argc, &argv);
        void *world = dlsym(mpi, "ompi_mpi_comm_world");
        ((int (*)(void *, int *))dlsym(mpi, "MPI_Comm_rank"))(world, &want_rank);
        ((int (*)(void *, int *))dlsym(mpi, "MPI_Comm_size"))(world, &want_size);
        st = gshmemx_init_flags(GSHMEMX_INIT_WITH_MPI_COMM, NULL, &world);
    } else {
        gshmemx_init_attr_t attr;
        memset(&attr, 0, sizeof attr);
        const char *uid = getenv("GSHMEM_UID"), *r = getenv("GSHMEM_RANK"), *n = getenv("GSHMEM_NPES");
        if (!uid || !r || !n) {
            fprintf(stderr, "test_init_flags uid: run it under gshmrun\n");
            return 2;
        }
        attr.rank = want_rank = atoi(r);
        attr.n_pes = want_size = atoi(n);
        snprintf(attr.uid.internal, sizeof attr.uid.internal, "%s", uid);
        st = gshmemx_init_flags(GSHMEMX_INIT_WITH_UNIQUEID, &attr, NULL);
    }
    if (st != GSHMEM_SUCCESS) {
        fprintf(stderr, "test_init_flags %s: init failed: %s\n", mode, gshmemx_status_str(st));
        return 1;
    }
    int me = gshmem_my_pe(), n = gshmem_n_pes(), left = (me + n - 1) % n;
    EXPECT(me == want_rank && n == want_size, "%s: PE %d of %d, the launcher says %d of %d", mode, me,
           n, want_rank, want_size);
    int *dst = (int *)gshmem_calloc(1, sizeof(int));
    put_right<<<1, 1>>>(dst);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();
    int got = 0;
    CK(cudaMemcpy(&got, dst, sizeof got, cudaMemcpyDeviceToHost));
    EXPECT(got == 10 + left, "%s: received %d, expected %d from PE %d", mode, got, 10 + left, left);
    gshmem_free(dst);
    int rc = summary(!strcmp(mode, "mpi") ? "test_init_flags mpi" : "test_init_flags uid");
    gshmem_finalize();
    if (mpi) ((int (*)(void))dlsym(mpi, "MPI_Finalize"))();
    return rc;
}
