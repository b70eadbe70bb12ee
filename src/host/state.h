/* The library's state on this PE (state.c): who the PEs are, the heap, which transport
 * reaches each PE, the internal streams, the device view pushed to every module, and the
 * library's own symmetric objects. Filled by init.c, read by the services above it. */
#ifndef GSHMEMI_STATE_H
#define GSHMEMI_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "bootstrap.h"
#include "heap.h"
#include "status.h"
#include "transport.h"

typedef struct gshmemi_state {
    bool initialized;
    int mype, npes;
    gshmemi_bootstrap boot;
    gshmemi_heap heap;
    int cuda_dev;                /* CUDA ordinal */
    uint8_t *dev_uuids;          /* [npes*16] GPU UUID of every PE */
    int cu_ctx_set_by_us;
    const struct gshmemi_transport_ops *transports[GSHMEMI_MAX_TRANSPORTS];
    void *tctx[GSHMEMI_MAX_TRANSPORTS];
    int n_transports;
    int8_t *pe_transport;        /* [npes] index into transports, -1 = unreachable */
    bool has_remote;             /* some PE is reached by a transport that is not load/store */
    int16_t *pe_slot;            /* [npes] window slot for load/store peers, -1 otherwise */
    void *stream;                /* cudaStream_t internal, blocking (after the legacy stream) */
    void *nb_stream;             /* cudaStream_t internal, non-blocking: host AMOs, polls */
    void *ce_stream;             /* cudaStream_t internal, non-blocking: copy-engine collectives */
    void *ce_fork, *ce_join;     /* cudaEvent_t: fork to / join from ce_stream */
    void *legacy_ev;             /* cudaEvent_t: host calls to remote PEs wait for the legacy stream (rma.c) */
    /* device-state mirror: pushed to every registered translation unit */
    void *dstate;                /* gshmemi_device_state* (host copy) */
    void *d_pe_slot;             /* device copy of pe_slot */
    /* library-internal symmetric objects */
    uint64_t *sync_flags;        /* [npes] barrier flags (symmetric) */
    uint64_t *sync_epoch;        /* my barrier epoch (symmetric, only local use) */
    void *d_teams;               /* gshmemi_team[teams_max] device team table */
    int teams_max;
    double init_seconds;
} gshmemi_state;

extern gshmemi_state gshmemi_g;

/* The transport that reaches pe (host forms of the operations) and its context; NULL if
 * none (pe out of range, or not initialized). */
const struct gshmemi_transport_ops *gshmemi_transport_of(int pe, void **tctx);

/* Public-boundary helper: `call` is the public function name for the message. */
#define GSHMEMI_REQUIRE_INIT(call)                                                          \
    do {                                                                                     \
        if (!gshmemi_g.initialized) {                                                        \
            gshmemi_error("%s: called before gshmem_init (or after gshmem_finalize); "       \
                          "call gshmem_init() first", call);                                 \
            return GSHMEM_ERR_NOT_INITIALIZED;                                               \
        }                                                                                    \
    } while (0)

#endif
