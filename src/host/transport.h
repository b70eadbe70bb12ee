/* The transport interface: a transport reaches some PEs, and the core reaches a peer only
 * through its ops table (the list is src/transport/registry.c, the one file that names
 * transports). The core asks every transport built in, in registration order; a PE is served
 * by the first that reaches it. */
#ifndef GSHMEMI_TRANSPORT_H
#define GSHMEMI_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heap.h"
#include "status.h"

struct gshmemi_state;
struct gshmemi_device_state;
struct gshmem_proxy_chan;

struct gshmemi_transport_ops {
    const char *name;
    /* true: the PEs it reaches are mapped into window slots (device loads and stores, host
     * copies through the mapping); false: they are reached by the operations below */
    bool load_store;
    /* Decide which PEs it reaches; set reach[pe] = true for those (reach has n_pes). */
    gshmemi_status (*init)(struct gshmemi_state *s, void **tctx, bool *reach);
    /* Called collectively after this PE mapped a new chunk at heap offset c->off. */
    gshmemi_status (*chunk_added)(struct gshmemi_state *s, void *tctx, const gshmemi_chunk *c);
    /* Called collectively before this PE unmaps the chunk at heap offset c->off (a user buffer
     * made symmetric and now unregistered): drop what chunk_added made of it. May be NULL
     * when chunk_added keeps nothing per chunk. */
    gshmemi_status (*chunk_removed)(struct gshmemi_state *s, void *tctx, const gshmemi_chunk *c);
    /* Optional, called by one PE (not collectively): after it made device memory of its own
     * outside the heap (heap.h, gshmemi_local_mem: a team's landing buffer) that its device calls
     * pass as the local buffer of a put or get, and before it frees that memory. A transport
     * whose device reaches only memory it registered registers it here; `call` names the API
     * call for messages. */
    gshmemi_status (*local_added)(struct gshmemi_state *s, void *tctx, void *addr, size_t len, const char *call);
    void (*local_removed)(struct gshmemi_state *s, void *tctx, void *addr);
    /* Its part of the device view (may be NULL). */
    gshmemi_status (*fill_device)(struct gshmemi_state *s, void *tctx, struct gshmemi_device_state *d);
    /* Host-initiated blocking operations to a PE it reaches (only when !load_store): done
     * (delivered / value fetched) when they return; `src`/`dst` any host or device memory. */
    gshmemi_status (*put)(void *tctx, void *dst_sym, const void *src, size_t n, int pe);
    gshmemi_status (*get)(void *tctx, void *dst, const void *src_sym, size_t n, int pe);
    gshmemi_status (*amo)(void *tctx, int op, size_t size, void *dst_sym, uint64_t value,
                          uint64_t cond, int pe, uint64_t *old);
    gshmemi_status (*signal)(void *tctx, uint64_t *sig_sym, uint64_t value, int sig_op, int pe);
    gshmemi_status (*put_signal)(void *tctx, void *dst_sym, const void *src, size_t n,
                                 uint64_t *sig_sym, uint64_t value, int sig_op, int pe);
    /* What it is, for gshmem-info and GSHMEM_DEBUG (may be NULL). */
    void (*describe)(void *tctx, char *buf, size_t len);
    /* Optional, for another transport's producer in this process (the ibgda transport's
     * software NIC): a channel (gshmem/proxy_desc.h, its host producer helpers; thread safe)
     * whose descriptors this transport performs like its own host operations, each answered in
     * the producer's own completion slot. Before this transport's finalize stops serving, it
     * calls drain(drain_ctx), which returns once the producer posts nothing more.
     * GSHMEM_ERR_NOT_AVAILABLE: no channel in this job. */
    gshmemi_status (*desc_chan)(void *tctx, struct gshmem_proxy_chan *out, void (*drain)(void *drain_ctx),
                                void *drain_ctx);
    /* Optional, for gshmem-info without a job: what it finds on this machine (devices,
     * addresses; deep: also what a job would try, such as registering GPU memory), as lines
     * into buf[len]. */
    void (*probe)(char *buf, size_t len, bool deep);
    /* Collective, while the heap is still mapped. */
    void (*finalize)(struct gshmemi_state *s, void *tctx);
};

/* The transports built in, NULL-terminated (src/transport/registry.c). */
extern const struct gshmemi_transport_ops *const gshmemi_transports[];
#define GSHMEMI_MAX_TRANSPORTS 4

#endif
