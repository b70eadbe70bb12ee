/* nvshmemx.h of gshmem's NVSHMEM compatibility layer: NVSHMEM's status codes and init
 * structures, and inline wrappers for the calls whose NVSHMEM signature differs from gshmem's
 * (init with attributes, unique ids, status queries). Everything else maps by name
 * (nvshmem_names.h). Host code only, C and C++. */
#ifndef GSHMEM_NVSHMEMX_H
#define GSHMEM_NVSHMEMX_H

#include "nvshmem.h"

/* Status codes of NVSHMEM's host calls. Calls mapped by name return gshmem's statuses, which
 * agree on success (0); nvshmemi_status translates the others for the wrappers below. */
typedef enum {
    NVSHMEMX_SUCCESS = 0,
    NVSHMEMX_ERROR_INVALID_VALUE,
    NVSHMEMX_ERROR_OUT_OF_MEMORY,
    NVSHMEMX_ERROR_NOT_SUPPORTED,
    NVSHMEMX_ERROR_SYMMETRY,
    NVSHMEMX_ERROR_GPU_NOT_SELECTED,
    NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED,
    NVSHMEMX_ERROR_INTERNAL,
    NVSHMEMX_ERROR_SENTINEL = INT_MAX
} nvshmemx_status;

static inline int nvshmemi_status(int gshmem_status) {
    switch (gshmem_status) {
    case GSHMEM_SUCCESS: return NVSHMEMX_SUCCESS;
    case GSHMEM_ERR_INVALID_ARG: return NVSHMEMX_ERROR_INVALID_VALUE;
    case GSHMEM_ERR_NO_MEMORY: return NVSHMEMX_ERROR_OUT_OF_MEMORY;
    case GSHMEM_ERR_NOT_AVAILABLE: return NVSHMEMX_ERROR_NOT_SUPPORTED;
    case GSHMEM_ERR_NO_DEVICE: return NVSHMEMX_ERROR_GPU_NOT_SELECTED;
    case GSHMEM_ERR_LAUNCH: return NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED;
    default: return NVSHMEMX_ERROR_INTERNAL;
    }
}

/* ---- init with attributes (NVSHMEM's structures and flag values) -------------------------- */
enum nvshmemx_init_flags {
    NVSHMEMX_INIT_THREAD_PES = GSHMEMX_INIT_THREAD_PES,
    NVSHMEMX_INIT_WITH_MPI_COMM = GSHMEMX_INIT_WITH_MPI_COMM,
    NVSHMEMX_INIT_WITH_SHMEM = GSHMEMX_INIT_WITH_SHMEM,
    NVSHMEMX_INIT_WITH_UNIQUEID = GSHMEMX_INIT_WITH_UNIQUEID
};

/* The unique id travels between processes as these 128 bytes (sizeof, as in NVSHMEM): a
 * version word, then gshmem's id text. */
typedef struct {
    int version;
    char internal[124];
} nvshmemx_uniqueid_v1;
typedef nvshmemx_uniqueid_v1 nvshmemx_uniqueid_t;
typedef struct {
    int version;
    nvshmemx_uniqueid_v1 *id;
    int myrank;
    int nranks;
} nvshmemx_uniqueid_args_v1;
typedef nvshmemx_uniqueid_args_v1 nvshmemx_uniqueid_args_t;
typedef struct {
    int version;
    nvshmemx_uniqueid_args_t uid_args;
    char content[96];
} nvshmemx_init_args_t;
typedef struct {
    int version;
    void *mpi_comm;                  /* an MPI_Comm* (NULL: MPI_COMM_WORLD) */
    nvshmemx_init_args_t args;
} nvshmemx_init_attr_t;

#define NVSHMEMX_UNIQUEID_INITIALIZER {(1 << 16) + (int)sizeof(nvshmemx_uniqueid_t), {0}}
#define NVSHMEMX_UNIQUEID_ARGS_INITIALIZER                                                   \
    {(1 << 16) + (int)sizeof(nvshmemx_uniqueid_args_t), NULL, -1, -1}
#define NVSHMEMX_INIT_ARGS_INITIALIZER                                                       \
    {(1 << 16) + (int)sizeof(nvshmemx_init_args_t), NVSHMEMX_UNIQUEID_ARGS_INITIALIZER, {0}}
#define NVSHMEMX_INIT_ATTR_INITIALIZER                                                       \
    {(1 << 16) + (int)sizeof(nvshmemx_init_attr_t), NULL, NVSHMEMX_INIT_ARGS_INITIALIZER}

/* Made by the process that becomes PE 0 (it listens on the id's socket). */
static inline int nvshmemx_get_uniqueid(nvshmemx_uniqueid_t *uniqueid) {
    gshmemx_uniqueid_t u;
    if (!uniqueid) return NVSHMEMX_ERROR_INVALID_VALUE;
    int st = gshmemx_get_uniqueid(&u);
    if (st != GSHMEM_SUCCESS) return nvshmemi_status(st);
    const char *end = (const char *)memchr(u.internal, 0, sizeof u.internal);
    size_t len = end ? (size_t)(end - u.internal) : sizeof u.internal;
    if (len >= sizeof uniqueid->internal) {
        fprintf(stderr, "gshmem: nvshmemx_get_uniqueid: the id '%.*s' does not fit NVSHMEM's 124 "
                "bytes\n", (int)sizeof u.internal, u.internal);
        return NVSHMEMX_ERROR_INTERNAL;
    }
    uniqueid->version = (1 << 16) + (int)sizeof(nvshmemx_uniqueid_t);
    memset(uniqueid->internal, 0, sizeof uniqueid->internal);
    memcpy(uniqueid->internal, u.internal, len);
    return NVSHMEMX_SUCCESS;
}

static inline int nvshmemx_set_attr_uniqueid_args(const int myrank, const int nranks,
                                                  const nvshmemx_uniqueid_t *uniqueid,
                                                  nvshmemx_init_attr_t *attr) {
    if (!attr || !uniqueid) return NVSHMEMX_ERROR_INVALID_VALUE;
    attr->args.uid_args.id = (nvshmemx_uniqueid_t *)uniqueid;
    attr->args.uid_args.myrank = myrank;
    attr->args.uid_args.nranks = nranks;
    return NVSHMEMX_SUCCESS;
}

static inline int nvshmemx_set_attr_mpi_comm_args(void *mpi_comm, nvshmemx_init_attr_t *attr) {
    if (!attr) return NVSHMEMX_ERROR_INVALID_VALUE;
    attr->mpi_comm = mpi_comm;
    return NVSHMEMX_SUCCESS;
}

/* As NVSHMEM's: collective; a failure ends the process after gshmem's message. */
static inline int nvshmemx_init_attr(unsigned int flags, nvshmemx_init_attr_t *attr) {
    int st;
    if ((flags & NVSHMEMX_INIT_WITH_UNIQUEID) && attr && attr->args.uid_args.id) {
        gshmemx_init_attr_t a;
        memset(&a, 0, sizeof a);
        a.rank = attr->args.uid_args.myrank;
        a.n_pes = attr->args.uid_args.nranks;
        memcpy(a.uid.internal, attr->args.uid_args.id->internal,
               sizeof attr->args.uid_args.id->internal);
        st = gshmemx_init_flags(flags, &a, NULL);
    } else {
        st = gshmemx_init_flags(flags, NULL, attr ? attr->mpi_comm : NULL);
    }
    if (st != GSHMEM_SUCCESS) {
        fprintf(stderr, "gshmem: nvshmemx_init_attr(flags %#x) failed: %s; exiting\n", flags,
                gshmemx_status_str(st));
        exit(1);
    }
    return NVSHMEMX_SUCCESS;
}
static inline int nvshmemx_hostlib_init_attr(unsigned int flags, nvshmemx_init_attr_t *attr) {
    return nvshmemx_init_attr(flags, attr);
}
static inline void nvshmemx_hostlib_finalize(void) { gshmem_finalize(); }

/* Host-side queries. */
static inline int nvshmemx_init_status(void) {
    return gshmem_n_pes() > 0 ? NVSHMEM_STATUS_IS_INITIALIZED : NVSHMEM_STATUS_NOT_INITIALIZED;
}
static inline void nvshmemx_vendor_get_version_info(int *major, int *minor, int *patch) {
    if (major) *major = NVSHMEM_VENDOR_MAJOR_VERSION;
    if (minor) *minor = NVSHMEM_VENDOR_MINOR_VERSION;
    if (patch) *patch = NVSHMEM_VENDOR_PATCH_VERSION;
}

#endif
