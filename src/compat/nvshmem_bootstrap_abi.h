/* NVSHMEM's bootstrap plugin interface, version 3 (NVSHMEM 3.x: bootstrap_handle_v1 of its
 * src/include/internal/bootstrap_host_transport/nvshmemi_bootstrap_defines.h): the structure
 * NVSHMEM hands a plugin's nvshmemi_bootstrap_plugin_init to fill, and the version numbers it
 * passes (major * 10000 + minor * 100 + patch). Declared here from that layout so gshmem's
 * plugin (nvshmem_bootstrap.c) and its test agree on it. */
#ifndef GSHMEMI_NVSHMEM_BOOTSTRAP_ABI_H
#define GSHMEMI_NVSHMEM_BOOTSTRAP_ABI_H

#define GSHMEMI_NV_BOOTSTRAP_VERSION 30000

typedef struct gshmemi_nv_init_ops {
    void *cookie;
    int (*get_unique_id)(void *cookie);
} gshmemi_nv_init_ops;

typedef struct gshmemi_nv_bootstrap {
    int version;
    int pg_rank, pg_size;
    int mype_node, npes_node;
    int (*allgather)(const void *sendbuf, void *recvbuf, int bytes, struct gshmemi_nv_bootstrap *h);
    int (*alltoall)(const void *sendbuf, void *recvbuf, int bytes, struct gshmemi_nv_bootstrap *h);
    int (*barrier)(struct gshmemi_nv_bootstrap *h);
    void (*global_exit)(int status);
    int (*finalize)(struct gshmemi_nv_bootstrap *h);
    int (*show_info)(struct gshmemi_nv_bootstrap *h, int style);
    gshmemi_nv_init_ops *pre_init_ops;
    void *comm_state;
} gshmemi_nv_bootstrap;

#endif
