/* A queue pair driven from the host: the same protocol as the GPU's (gshmem/nic_desc.h) for one
 * poster at a time (the caller serializes), with the work requests of gshmem/nic_wqe.h. The
 * transport posts host-initiated operations to PEs it reaches with it; the unit tests use it as
 * the CPU producer of the software NIC. No CUDA, no rdma-core: the memory is the caller's (a
 * NIC's queues mapped into the process, or the software NIC's). */
#ifndef GSHMEMI_HOSTQ_H
#define GSHMEMI_HOSTQ_H

#include <stdbool.h>
#include <stdint.h>

#include "status.h"
#include "gshmem/nic_desc.h"

typedef struct gshmemi_hostq {
    uint8_t *sq;                  /* wqe_cnt basic blocks */
    uint32_t wqe_cnt, qpn;
    volatile uint32_t *dbrec;     /* [1]: send counter (be32) */
    volatile uint64_t *db;        /* doorbell: a NIC's register, or a word the software NIC reads */
    uint8_t *cq;                  /* cq_cnt entries */
    uint32_t cq_cnt;              /* 1: collapsed */
    volatile uint32_t *cq_dbrec;  /* ring: [0] entries read */
    int pe;                       /* the PE at the other end (messages) */
    /* the poster's counters (basic blocks; ring: entries read) */
    uint64_t posted, done, cq_ci;
    uint8_t err[64];              /* the error entry, once one came */
    bool failed;
} gshmemi_hostq;

/* The slot of block t. */
static inline uint8_t *gshmemi_hostq_slot(const gshmemi_hostq *q, uint64_t t) {
    return q->sq + (size_t)(t & (q->wqe_cnt - 1)) * 64;
}
/* Looks at the completion queue once: raises q->done, sets q->failed on an error entry. */
void gshmemi_hostq_poll(gshmemi_hostq *q);
/* The next nbb blocks once their slots are free (polling for completions), or UINT64_MAX after
 * an error entry or `timeout` seconds without room (a message names the PE then). */
uint64_t gshmemi_hostq_reserve(gshmemi_hostq *q, unsigned nbb, double timeout);
/* Publishes the WQE written at t (nbb blocks): doorbell record, then the doorbell. */
void gshmemi_hostq_ring(gshmemi_hostq *q, uint64_t t, unsigned nbb);
/* Until the WQE at t completed: GSHMEM_SUCCESS; GSHMEM_ERR_INTERNAL after an error entry
 * (q->failed; the entry in q->err, its syndrome at GSHMEM_NIC_CQE_SYNDROME: the caller says
 * what failed); GSHMEM_ERR_TIMEOUT after `timeout` seconds (a message names the PE). */
gshmemi_status gshmemi_hostq_wait(gshmemi_hostq *q, uint64_t t, double timeout);

#endif
