/* Init over an MPI communicator (gshmemx_init_flags with GSHMEMX_INIT_WITH_MPI_COMM): rank 0
 * of the communicator makes a unique id and broadcasts it, and every rank then joins the
 * unique-id bootstrap with its rank and the communicator's size. libgshmem never links MPI:
 * the program's libmpi, already loaded and initialized, is found in the process, and only
 * MPI_Get_library_version, MPI_Comm_rank, MPI_Comm_size and MPI_Bcast are called. Handles
 * follow the library's ABI: Open MPI's are pointers to its predefined objects, the MPICH
 * family's (MPICH, Intel MPI, MVAPICH, Cray MPICH) are integer constants. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap.h"
#include "gshmem/types.h"

/* The MPICH family's predefined handles (mpi.h of MPICH: MPI_COMM_WORLD, MPI_BYTE). */
#define MPICH_COMM_WORLD 0x44000000
#define MPICH_BYTE 0x4c00010d

typedef int (*version_fn)(char *version, int *len);

/* The process's libmpi: the global namespace first (a program linked with -lmpi), then the
 * usual sonames, only if already loaded (a program that dlopened MPI; loading a second,
 * uninitialized copy would not help). */
static bool find_mpi(void **h) {
    *h = RTLD_DEFAULT;   /* (a null pointer) */
    if (dlsym(RTLD_DEFAULT, "MPI_Comm_rank")) return true;
    static const char *const names[] = {"libmpi.so.40", "libmpi.so.12", "libmpi.so",
                                        "libmpi_abi.so", "libmpich.so.12", "libmpich.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        *h = dlopen(names[i], RTLD_NOW | RTLD_NOLOAD);
        if (*h && dlsym(*h, "MPI_Comm_rank")) return true;
    }
    return false;
}

gshmemi_status gshmemi_mpi_uid(const void *comm, int *rank, int *size, char *uid, size_t uid_len) {
    const char *call = "gshmemx_init_flags(GSHMEMX_INIT_WITH_MPI_COMM)";
    void *h;
    if (!find_mpi(&h)) {
        gshmemi_error("%s: no MPI library is loaded in this process (looked for MPI_Comm_rank, "
                      "libmpi.so.40, libmpi.so.12); call MPI_Init first, with the program linked "
                      "to MPI or libmpi dlopened RTLD_GLOBAL", call);
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    version_fn version = (version_fn)dlsym(h, "MPI_Get_library_version");
    void *rank_fn = dlsym(h, "MPI_Comm_rank"), *size_fn = dlsym(h, "MPI_Comm_size");
    void *bcast_fn = dlsym(h, "MPI_Bcast");
    if (!version || !rank_fn || !size_fn || !bcast_fn) {
        gshmemi_error("%s: the loaded MPI library lacks MPI_Get_library_version, MPI_Comm_rank, "
                      "MPI_Comm_size or MPI_Bcast (an MPI 3 library is needed)", call);
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    char lib[8192] = "";
    int len = 0;
    version(lib, &len);
    int r = -1, n = -1, e1, e2, e3;
    int open_mpi = strstr(lib, "Open MPI") != NULL;
    if (open_mpi) {
        void *world = dlsym(h, "ompi_mpi_comm_world"), *byte = dlsym(h, "ompi_mpi_byte");
        void *c = comm ? *(void *const *)comm : world;
        if (!c || !byte) {
            gshmemi_error("%s: Open MPI's predefined objects (ompi_mpi_comm_world, ompi_mpi_byte) "
                          "were not found in the loaded library", call);
            return GSHMEM_ERR_NOT_AVAILABLE;
        }
        e1 = ((int (*)(void *, int *))rank_fn)(c, &r);
        e2 = ((int (*)(void *, int *))size_fn)(c, &n);
        if (!e1 && !e2 && r == 0) gshmemi_uid_text_or_empty(uid, uid_len);
        e3 = e1 || e2 ? 1 : ((int (*)(void *, int, void *, int, void *))bcast_fn)(uid, (int)uid_len, byte, 0, c);
    } else if (strstr(lib, "MPICH") || strstr(lib, "Intel(R) MPI") || strstr(lib, "MVAPICH")) {
        int c = comm ? *(const int *)comm : MPICH_COMM_WORLD;
        e1 = ((int (*)(int, int *))rank_fn)(c, &r);
        e2 = ((int (*)(int, int *))size_fn)(c, &n);
        if (!e1 && !e2 && r == 0) gshmemi_uid_text_or_empty(uid, uid_len);
        e3 = e1 || e2 ? 1 : ((int (*)(void *, int, int, int, int))bcast_fn)(uid, (int)uid_len, MPICH_BYTE, 0, c);
    } else {
        gshmemi_error("%s: the loaded MPI library ('%.80s') is neither Open MPI nor of the MPICH "
                      "family, whose handles gshmem knows; share a unique id instead "
                      "(GSHMEMX_INIT_WITH_UNIQUEID, docs/api.md)", call, lib);
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    if (e1 || e2 || e3) {
        gshmemi_error("%s: MPI_Comm_rank/MPI_Comm_size/MPI_Bcast on the communicator failed "
                      "(errors %d/%d/%d): is MPI initialized and the communicator valid?", call, e1,
                      e2, e3);
        return GSHMEM_ERR_BOOTSTRAP;
    }
    if (!uid[0]) {
        gshmemi_error("%s: rank 0 of the communicator could not make a unique id (its message "
                      "says why)", call);
        return GSHMEM_ERR_BOOTSTRAP;
    }
    *rank = r;
    *size = n;
    return GSHMEM_SUCCESS;
}

/* Rank 0: a new unique id (the bootstrap finds its listening socket again by the text), or an
 * empty one the other ranks recognise as a failure after the broadcast. */
void gshmemi_uid_text_or_empty(char *uid, size_t uid_len) {
    int fd;
    memset(uid, 0, uid_len);
    if (gshmemi_uid_create(uid, uid_len, &fd, false) != GSHMEM_SUCCESS) memset(uid, 0, uid_len);
}
