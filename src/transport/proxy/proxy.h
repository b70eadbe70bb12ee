/* The proxy transport's interface to the rest of the library: create a proxy for this PE
 * (libfabric endpoint, address exchange, registration), hand out descriptor rings, run the
 * proxy thread, host-initiated blocking operations, finalize. The transport ops table calls
 * these; nothing here names CUDA: device memory is reached through gshmemi_proxy_memops.
 * The ring, the wire messages and the relay: docs/proxy.md. */
#ifndef GSHMEMI_PROXY_H
#define GSHMEMI_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "config.h"   /* the proxy reads its settings from gshmemi_cfg, which its user loads */
#include "status.h"
#include "gshmem/proxy_desc.h"

typedef struct gshmemi_proxy gshmemi_proxy;

enum { GSHMEMI_PROXY_AUTO = 0, GSHMEMI_PROXY_DIRECT = 1, GSHMEMI_PROXY_STAGED = 2 };

/* How the proxy reaches the "device" heap (and any local address of a descriptor) in staged
 * mode. In the library these are CUDA calls; in the unit tests they touch a region that
 * nothing else in the process may touch. Each returns 0 or a GSHMEM_ERR_* code; they are
 * called from the proxy thread only.
 * The four operations are *enqueued* on one queue, each ordered after every earlier one,
 * and may complete later: the proxy never waits for the device (a copy or an atomic that
 * waits for the target GPU must not stop the proxy serving its other peers).
 * - copy_to / copy_from: dst_dev/src_dev may be any address a descriptor may carry (heap or
 *   private device buffer). The host side (src_host, dst_host) must stay untouched until the
 *   operation completed.
 * - atomic: one atomic of size 4|8 (GSHMEM_PROXY_AMO_* op) at dev_addr, atomic with respect
 *   to the device's own atomics on that location; *old gets the previous value on completion
 *   (old NULL: not wanted; consecutive such adds to one word may be applied as one).
 * - signal: 64-bit SET or ADD at dev_addr, visible to device waiters after every earlier
 *   operation's data.
 * - mark: a ticket covering everything enqueued so far; done: the highest complete ticket
 *   (never blocks; completes the host side of finished operations). NULL: every operation is
 *   complete when it returns.
 * - flush: blocks until everything enqueued is complete (NULL: nothing to wait for).
 * - room: how many more atomics and signals can be enqueued without waiting for the device
 *   (NULL: no limit); the proxy serves a request only when its atomics fit. */
typedef struct gshmemi_proxy_memops {
    void *ctx;
    int (*copy_to)(void *ctx, void *dst_dev, const void *src_host, size_t n);
    int (*copy_from)(void *ctx, void *dst_host, const void *src_dev, size_t n);
    int (*atomic)(void *ctx, void *dev_addr, int op, size_t size, uint64_t operand,
                  uint64_t compare, uint64_t *old);
    int (*signal)(void *ctx, uint64_t *dev_addr, int sig_op, uint64_t value);
    uint64_t (*mark)(void *ctx);
    uint64_t (*done)(void *ctx);
    int (*flush)(void *ctx);
    unsigned (*room)(void *ctx);
    /* may be NULL: page-lock the staging buffers for fast copies (unpin before they are freed) */
    void (*pin)(void *ctx, void *host, size_t n);
    void (*unpin)(void *ctx, void *host);
} gshmemi_proxy_memops;

typedef struct gshmemi_proxy_params {
    int mype, npes;
    /* Collective exchange over the bootstrap: out[r*len ..] receives PE r's `in`. */
    gshmemi_status (*allgather)(void *ctx, const void *in, void *out, size_t len);
    void *allgather_ctx;
    /* The symmetric heap: the same [heap_base, heap_base + heap_size) on every PE, so the
     * remote address of a descriptor is the symmetric address itself. */
    void *heap_base;
    size_t heap_size;
    bool heap_is_device;        /* AUTO picks staged for device memory (no FI_HMEM here) */
    bool single_host;           /* all PEs on this host: a loopback address may be used */
    int mode;                   /* GSHMEMI_PROXY_*; AUTO defers to GSHMEM_PROXY_MODE */
    gshmemi_proxy_memops mem;   /* required in staged mode */
} gshmemi_proxy_params;

/* Collective over the PEs of params->allgather. Opens the provider chosen by
 * GSHMEM_FABRIC_PROVIDER on the interface GSHMEM_FABRIC_IFACE, exchanges addresses and
 * (direct mode) the heap's registration keys, which are random per job. Creates the host
 * ring used by the blocking host operations below. */
gshmemi_status gshmemi_proxy_create(const gshmemi_proxy_params *p, gshmemi_proxy **out);

/* A new descriptor ring of n_slots (power of two; 0 = GSHMEM_PROXY_RING_SLOTS). `tail` is
 * where producers keep their ticket counter (GPU memory in the library; NULL = in host
 * memory next to the ring). with_rets: the ring owns a completion slot per descriptor slot
 * (chan.rets; docs/proxy.md, "The descriptor ring"). Only before gshmemi_proxy_start. */
gshmemi_status gshmemi_proxy_ring(gshmemi_proxy *x, uint64_t n_slots, uint64_t *tail,
                                  bool with_rets, gshmem_proxy_chan *out);

/* Starts / stops the proxy thread. Stop returns once the thread has exited; rings keep their
 * state (a later start resumes them). */
gshmemi_status gshmemi_proxy_start(gshmemi_proxy *x);
void gshmemi_proxy_stop(gshmemi_proxy *x);

/* Host-initiated operations (need the thread running). Each blocks until the operation is
 * complete: put/put_signal/signal delivered in target memory, get's data in dst, the atomic
 * applied (old value in *old when old != NULL). `src`/`dst` local buffers: any host memory in
 * direct mode; in staged mode anything memops can copy. Thread safe. */
gshmemi_status gshmemi_proxy_put(gshmemi_proxy *x, void *dst_sym, const void *src, size_t n, int pe);
gshmemi_status gshmemi_proxy_get(gshmemi_proxy *x, void *dst, const void *src_sym, size_t n, int pe);
gshmemi_status gshmemi_proxy_amo(gshmemi_proxy *x, int op, size_t size, void *dst_sym,
                                 uint64_t value, uint64_t compare, int pe, uint64_t *old);
gshmemi_status gshmemi_proxy_signal(gshmemi_proxy *x, uint64_t *sig_sym, uint64_t value,
                                    int sig_op, int pe);
gshmemi_status gshmemi_proxy_put_signal(gshmemi_proxy *x, void *dst_sym, const void *src, size_t n,
                                        uint64_t *sig_sym, uint64_t value, int sig_op, int pe);
/* The symmetric range descriptors may name grows with the heap (collective growth: every PE
 * sets the same range before any PE uses it). */
void gshmemi_proxy_set_heap(gshmemi_proxy *x, void *heap_base, size_t heap_size);
/* Every host operation issued before is complete. */
gshmemi_status gshmemi_proxy_quiet(gshmemi_proxy *x);
/* The channel of the host ring, for another producer of this process (docs/proxy.md, "Other
 * producers"): it posts with the host producer helpers of gshmem/proxy_desc.h (thread safe),
 * each descriptor with a completion slot of its own, and is quiet before gshmemi_proxy_finalize. */
gshmem_proxy_chan gshmemi_proxy_host_chan(const gshmemi_proxy *x);

/* What was chosen: "tcp;ofi_rxm", the mode (GSHMEMI_PROXY_DIRECT / _STAGED, and its name),
 * the published address. */
const char *gshmemi_proxy_provider(const gshmemi_proxy *x);
int gshmemi_proxy_mode(const gshmemi_proxy *x);
const char *gshmemi_proxy_mode_name(const gshmemi_proxy *x);
const char *gshmemi_proxy_address(const gshmemi_proxy *x);
/* First error this proxy reported (status; its message in msg if msg != NULL), 0 if none. */
gshmemi_status gshmemi_proxy_error(const gshmemi_proxy *x, const char **msg);
/* Descriptors this proxy has consumed since creation (all rings). */
uint64_t gshmemi_proxy_consumed(const gshmemi_proxy *x);
/* Responses its requests carried (staged mode: docs/proxy.md, "Carried responses"; 0 in direct). */
uint64_t gshmemi_proxy_carried(const gshmemi_proxy *x);

/* Collective: waits until every PE has completed its own rings (the thread keeps serving
 * peers meanwhile), stops the thread, closes the endpoint and frees everything. */
gshmemi_status gshmemi_proxy_finalize(gshmemi_proxy *x);

#endif
