/* What the two mlx5 setups of the ibgda transport share (hw.c): the device and port chosen by
 * GSHMEM_IBGDA_DEVICE, the protection domain, the GID, registrations (GPU memory by dma-buf, or
 * by peer memory), the connection of a queue pair (what a peer needs, the address a QP connects
 * to), host memory and the NIC's doorbell page mapped for the GPU, and the CPU-assisted doorbell
 * (a host thread that rings for the GPU where the page cannot be mapped). Built with rdma-core's
 * mlx5dv only. */
#ifndef GSHMEMI_IBGDA_HW_H
#define GSHMEMI_IBGDA_HW_H

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "ibgda.h"

/* A host range registered with CUDA for the GPU by hw_map (unregistered at hw_close). */
typedef struct hw_map {
    void *base;
    size_t len;
} hw_map;

/* A doorbell the CPU rings for the GPU: the GPU stores the WQE's first 8 bytes in `word` (host
 * memory), the relay thread copies each new value to the NIC's register. */
typedef struct hw_bell {
    volatile uint64_t *word;
    volatile uint64_t *reg;
    uint64_t last;
} hw_bell;

typedef struct hw_dev {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    uint32_t pdn;
    int port;
    struct ibv_port_attr pattr;
    bool roce;
    int gid_index;
    union ibv_gid gid;
    char name[64];
    hw_map *maps;
    int n_maps, cap_maps;
    hw_bell *bells;
    int n_bells, cap_bells;
    pthread_t relay;
    int relay_on, relay_stop;
} hw_dev;

/* Opens the device and port GSHMEM_IBGDA_DEVICE names (else the first mlx5 device with an active
 * port), allocates the protection domain, picks the GID. */
gshmemi_status gshmemi_hw_open(hw_dev *h);
void gshmemi_hw_close(hw_dev *h);
gshmemi_status gshmemi_hw_reg(hw_dev *h, void *addr, size_t len, bool gpu, ibgda_key *k);
void gshmemi_hw_dereg(hw_dev *h, ibgda_key *k);
/* What a peer needs to connect to QP qpn of this device. */
void gshmemi_hw_conn(const hw_dev *h, uint32_t qpn, ibgda_conn *out);
/* The address of the peer's port: `ah` for verbs (RoCE: a global route to its GID). */
void gshmemi_hw_ah_attr(const hw_dev *h, const ibgda_conn *peer, struct ibv_ah_attr *ah);
/* The GPU's address of [p, p + len) of host memory (registered with CUDA for it, once). */
gshmemi_status gshmemi_hw_map(hw_dev *h, void *p, size_t len, void **gpu);
/* The GPU's address of the doorbell register `reg` (a NIC page registered as I/O memory), or,
 * with the CPU-assisted doorbell (GSHMEM_IBGDA_CPU_DOORBELL, or where the page cannot be
 * mapped), of a host word the relay thread copies to the register. `what` names the QP. */
gshmemi_status gshmemi_hw_doorbell(hw_dev *h, void *reg, const char *what, uint64_t **gpu);
/* Starts the relay thread when a doorbell needs it. */
gshmemi_status gshmemi_hw_start(hw_dev *h);
void gshmemi_hw_stop(hw_dev *h);
void gshmemi_hw_describe(const hw_dev *h, char *buf, size_t len);
const char *gshmemi_hw_mtu_name(int mtu);

#endif
