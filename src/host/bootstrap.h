/* The bootstrap: the rendezvous every PE uses before GPU memory can be shared — who am I, how
 * many are we, which node is each PE on, and three collectives over small host buffers. Each
 * implementation fills an ops table; the core names an implementation only in the selection
 * of bootstrap.c. */
#ifndef GSHMEMI_BOOTSTRAP_H
#define GSHMEMI_BOOTSTRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

struct gshmemi_bootstrap;

struct gshmemi_bootstrap_ops {
    const char *name;
    /* out[r*len .. (r+1)*len) receives rank r's `in` (len bytes) on every rank. */
    gshmemi_status (*allgather)(struct gshmemi_bootstrap *b, const void *in, void *out, size_t len);
    /* out[r*len ..) receives what rank r put at in[me*len ..). */
    gshmemi_status (*alltoall)(struct gshmemi_bootstrap *b, const void *in, void *out, size_t len);
    gshmemi_status (*barrier)(struct gshmemi_bootstrap *b);
    /* Best effort: tell the others this job is failing (may be NULL). */
    void (*abort)(struct gshmemi_bootstrap *b, int code, const char *msg);
    void (*finalize)(struct gshmemi_bootstrap *b);
};

typedef struct gshmemi_bootstrap {
    const struct gshmemi_bootstrap_ops *ops;
    int rank, size;
    /* Filled by gshmemi_bootstrap_node_info from an allgather of host identities: */
    int local_rank, local_size;  /* index among PEs of this node, count on this node */
    int node_id, n_nodes;        /* dense node index (order of first appearance) */
    int n_hosts;                 /* machines (n_nodes unless GSHMEM_NODES splits them) */
    int host_rank;               /* index among PEs of this machine (local_rank unless split) */
    int *node_of;                /* [size] node index of each rank */
    int *local_rank_of;          /* [size] local index of each rank on its node */
    uint64_t job_id;             /* random, equal on all ranks: names per-job resources */
    void *priv;                  /* implementation state */
} gshmemi_bootstrap;

/* Implementations. Each returns GSHMEM_ERR_NOT_AVAILABLE when its environment is absent
 * (so "auto" can try the next), any other error when it is present but broken. */
gshmemi_status gshmemi_bootstrap_self_init(gshmemi_bootstrap *b);
gshmemi_status gshmemi_bootstrap_pmix_init(gshmemi_bootstrap *b);
/* uid: rank/size given; `uid` is the text form made by gshmemi_uid_create. */
gshmemi_status gshmemi_bootstrap_uid_init(gshmemi_bootstrap *b, const char *uid, int rank,
                                          int size, int listen_fd);

/* Unique id: "<ipv4>:<port>:<secret hex32>" text, fits in GSHMEMX_UNIQUEID_BYTES.
 * Creates a listening TCP socket and returns its fd (kept by the creating process, which
 * must become rank 0). Address chosen from GSHMEM_BOOTSTRAP_IFADDR, else the host's first
 * non-loopback IPv4 address, else 127.0.0.1 (loopback=true forces 127.0.0.1). */
gshmemi_status gshmemi_uid_create(char *uid, size_t uid_len, int *listen_fd, bool loopback);

/* MPI (bootstrap_mpi.c): rank and size in the communicator *comm (an MPI_Comm; NULL is
 * MPI_COMM_WORLD) of the program's MPI library, and a unique id made by its rank 0 and
 * broadcast over it (uid[uid_len], text). */
gshmemi_status gshmemi_mpi_uid(const void *comm, int *rank, int *size, char *uid, size_t uid_len);
/* A new unique id into uid, or an empty one when it cannot be made (after a message). */
void gshmemi_uid_text_or_empty(char *uid, size_t uid_len);

/* Chooses by GSHMEM_BOOTSTRAP (auto|pmix|uid|self), then fills node info. */
gshmemi_status gshmemi_bootstrap_init(gshmemi_bootstrap *b);
/* From an allgather of (hostname, boot id); also agrees on job_id. */
gshmemi_status gshmemi_bootstrap_node_info(gshmemi_bootstrap *b);
void gshmemi_bootstrap_finalize(gshmemi_bootstrap *b);

#endif
