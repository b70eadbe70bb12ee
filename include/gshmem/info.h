/* gshmem/info.h: what tools ask of libgshmem without a job — the build, the GSHMEM_*
 * environment variables, the driver and GPUs of this machine — and the rendezvous a
 * launcher hands to the PEs it starts. gshmem-info and gshmrun use nothing else of the
 * library (docs/api.md, "Tools"). None of these needs gshmem_init except
 * gshmemx_info_placement. C and C++; host code only. */
#ifndef GSHMEM_INFO_H
#define GSHMEM_INFO_H

#include <stddef.h>
#include <stdio.h>

#include "gshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* This build of the library. The strings are the library's own (never freed). */
typedef struct gshmemx_build_info {
    const char *version;        /* GSHMEM_VERSION_STRING the library was built as */
    int cuda_version;           /* CUDA toolkit it was built with: 1000 * major + 10 * minor */
    const char *gpu_archs;      /* device code it carries: "sm_90, PTX compute_90" */
    const char *bootstraps;     /* "self, uid, pmix": how PEs may find each other */
    const char *transports;     /* "p2p, proxy": built in, in the order they are asked */
    int pmix, libfabric, ibverbs, mlx5dv;   /* 1: the library was found at build time */
} gshmemx_build_info_t;

/* One GPU as the driver reports it. */
typedef struct gshmemx_gpu_info {
    char name[128];
    int sm_major, sm_minor;     /* compute capability */
    size_t memory;              /* bytes of device memory */
    int vmm;                    /* 1: CUDA virtual memory management (the symmetric heap needs it) */
    int fd_sharing;             /* 1: memory exports as POSIX file descriptors (PEs of a node
                                   share heap chunks so) */
} gshmemx_gpu_info_t;

GSHMEM_EXPORT void gshmemx_info_build(gshmemx_build_info_t *info);

/* Reads every GSHMEM_* variable into the library's configuration, as gshmem_init does: a bad
 * value is reported on stderr naming the variable (its default stays), an unknown GSHMEM_*
 * name is warned about with the nearest known one. GSHMEM_SUCCESS, or GSHMEM_ERR_INVALID_ARG
 * when some value is bad. */
GSHMEM_EXPORT int gshmemx_env_check(void);
/* Every variable of the library's configuration, one a line: name, current value (the
 * default until gshmemx_env_check or gshmem_init read the environment), meaning; the
 * values in one column. */
GSHMEM_EXPORT void gshmemx_env_print(FILE *out);
/* The current value of variable `name` ("GSHMEM_NODES") as text into value[len]:
 * GSHMEM_SUCCESS, or GSHMEM_ERR_INVALID_ARG if name is not a gshmem variable or len is too
 * small (value then holds what fits). */
GSHMEM_EXPORT int gshmemx_env_get(const char *name, char *value, size_t len);

/* Loads the NVIDIA driver (the library never links it) and counts the GPUs this process
 * sees. GSHMEM_SUCCESS with *driver_version (1000 * major + 10 * minor) and *n_gpus >= 1;
 * else GSHMEM_ERR_NO_DEVICE with *why (if why is not NULL) a sentence saying what is missing
 * and what to do. Prints nothing. */
GSHMEM_EXPORT int gshmemx_info_driver(int *driver_version, int *n_gpus, const char **why);
/* GPU `gpu` (0 .. n_gpus-1) after gshmemx_info_driver succeeded: GSHMEM_SUCCESS, or
 * GSHMEM_ERR_INVALID_ARG for no such GPU, GSHMEM_ERR_NO_DEVICE without a driver. */
GSHMEM_EXPORT int gshmemx_info_gpu(int gpu, gshmemx_gpu_info_t *info);
/* 1 if GPU `gpu` can access GPU `peer`'s memory directly (NVLink or PCIe peer access), 0 if
 * not, -1 if either is no GPU of this process. */
GSHMEM_EXPORT int gshmemx_info_peer_access(int gpu, int peer);

/* How a job across nodes would reach the other nodes from this machine: for each transport
 * between nodes built in, what it finds here (devices, ports, addresses) and whether a job would
 * take it with the current GSHMEM_* settings, and why, as lines into buf[len] (cut to fit).
 * deep != 0: also tries what a job would do first, such as registering GPU memory with a NIC
 * and mapping its doorbell for the GPU (it loads the driver and makes a CUDA context on GPU 0).
 * No gshmem_init needed. GSHMEM_SUCCESS, or GSHMEM_ERR_INVALID_ARG for no buffer. */
GSHMEM_EXPORT int gshmemx_info_remote(char *buf, size_t len, int deep);

/* One line saying where this PE runs (its GPU, the PEs sharing it, MPS, its SM share), as
 * GSHMEM_DEBUG=1 prints it at init, into buf[len]. GSHMEM_ERR_NOT_INITIALIZED before init. */
GSHMEM_EXPORT int gshmemx_info_placement(char *buf, size_t len);

/* For a launcher that starts the PEs of a job on this machine (as gshmrun does): a unique id
 * whose rendezvous listens on the loopback address, and the listening socket behind it. The
 * launcher gives every PE the id as GSHMEM_UID (with GSHMEM_RANK, GSHMEM_NPES) and lets only
 * the PE of rank 0 inherit the socket, its number in GSHMEM_UID_FD; it closes its own copy
 * once the PEs are started. GSHMEM_SUCCESS or GSHMEM_ERR_BOOTSTRAP (after a message). */
GSHMEM_EXPORT int gshmemx_launcher_uniqueid(gshmemx_uniqueid_t *uid, int *listen_fd);

#ifdef __cplusplus
}
#endif

#endif
