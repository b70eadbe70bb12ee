/* Host services shared by every file of the library: status codes and the check macro,
 * logging, configuration, the bootstrap interface, the symmetric heap and the transport
 * ops table. Not installed: users see include/gshmem.h only. */
#ifndef GSHMEMI_INTERNAL_H
#define GSHMEMI_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>

#include "gshmem/types.h"

/* A file that includes <cuda.h> (before this header) calls the driver through the table of
 * cuda_driver.h: the library does not link libcuda. */
#if defined(CUDA_VERSION) && !defined(GSHMEMI_NO_CUDA)
#include "cuda_driver.h"
#endif

/* ---- status codes and propagation -------------------------------------------------- */
/* Internal calls return one of these (0 = success); public calls turn them into a message
 * plus the documented status. The values are the public GSHMEM_ERR_* of gshmem/types.h. */
typedef int gshmemi_status;

/* Records file:line of the first failure so the message at the public boundary can say
 * where it broke, then propagates. */
#define GSHMEMI_CHECK(expr)                                                                  \
    do {                                                                                     \
        gshmemi_status st_ = (expr);                                                         \
        if (st_ != GSHMEM_SUCCESS) {                                                         \
            gshmemi_trace(__FILE__, __LINE__, #expr, st_);                                   \
            return st_;                                                                      \
        }                                                                                    \
    } while (0)

/* Same, for a goto-cleanup style function: sets `st` and jumps to `label`. */
#define GSHMEMI_CHECK_GOTO(expr, st, label)                                                  \
    do {                                                                                     \
        (st) = (expr);                                                                       \
        if ((st) != GSHMEM_SUCCESS) {                                                        \
            gshmemi_trace(__FILE__, __LINE__, #expr, (st));                                  \
            goto label;                                                                      \
        }                                                                                    \
    } while (0)

void gshmemi_trace(const char *file, int line, const char *expr, gshmemi_status st);

/* ---- logging (error.c) ------------------------------------------------------------- */
/* Every message starts with "gshmem PE <n>:" (or "gshmem:" before the rank is known). */
void gshmemi_set_log_rank(int rank);
void gshmemi_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gshmemi_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gshmemi_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));  /* GSHMEM_DEBUG>=1 */
/* Prints the message and ends the process with exit status 1 (after a best-effort
 * notification of the launcher/peers through the bootstrap's abort, if any). */
void gshmemi_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
const char *gshmemi_status_str(gshmemi_status st);
/* Set by init.c to the bootstrap's abort once the job is up; called once by gshmemi_fatal. */
extern void (*gshmemi_abort_hook)(int code, const char *msg);

/* ---- configuration (config.c, env_defs.h) ------------------------------------------ */
/* Every environment variable is declared once in env_defs.h; this struct has one field per
 * row. gshmemi_config_load parses them (bad values are an error naming the variable). */
typedef struct gshmemi_config {
#define GSHMEMI_ENV_FIELD(name, kind, ctype, def, help) ctype name;
#include "env_defs.h"
#undef GSHMEMI_ENV_FIELD
} gshmemi_config;

extern gshmemi_config gshmemi_cfg;
gshmemi_status gshmemi_config_load(gshmemi_config *cfg);
/* Warns about each GSHMEM_* variable of the environment that env_defs.h does not declare
 * (GSHMEM_TEST_* excepted: the test suite's), with the nearest name; returns how many. The
 * first gshmemi_config_load of a process calls it. */
int gshmemi_config_warn_unknown(void);
/* Prints the table (name, value, default, help) — for gshmem-info. */
void gshmemi_config_print(const gshmemi_config *cfg, FILE *out);
/* Parses "1G", "512M", "4096", "64k" (binary units). Returns false on junk. */
bool gshmemi_parse_size(const char *s, uint64_t *out);

/* ---- bootstrap (bootstrap*.c) -------------------------------------------------------- */
/* The rendezvous every PE uses before GPU memory can be shared: who am I, how many are we,
 * and three collectives over small host buffers. Each implementation fills an ops table;
 * the core never names an implementation except in the selection list of bootstrap.c. */
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

/* Chooses by GSHMEM_BOOTSTRAP (auto|pmix|uid|self), then fills node info. */
gshmemi_status gshmemi_bootstrap_init(gshmemi_bootstrap *b);
/* From an allgather of (hostname, boot id); also agrees on job_id. */
gshmemi_status gshmemi_bootstrap_node_info(gshmemi_bootstrap *b);
void gshmemi_bootstrap_finalize(gshmemi_bootstrap *b);

/* ---- symmetric heap (heap.c, alloc.c) ---------------------------------------------- */
#include "alloc.h"

/* One physical chunk mapped at [base + off, base + off + size) of this PE's window. */
typedef struct gshmemi_chunk {
    uint64_t off, size;
    unsigned long long handle;   /* CUmemGenericAllocationHandle of the local allocation */
} gshmemi_chunk;

typedef struct gshmemi_heap {
    char *base;                  /* B: identical on every PE */
    uint64_t window;             /* W: VA per local PE; window k = local peer (me+k) mod L */
    uint64_t reserved;           /* VA reserved = window * n_windows */
    int n_windows;               /* = local_size */
    uint64_t mapped;             /* bytes of this PE's window backed by memory */
    uint64_t cap;                /* GSHMEM_HEAP_MAX, <= window */
    uint64_t granularity;        /* cuMemGetAllocationGranularity (recommended) */
    gshmemi_chunk *chunks;
    int n_chunks, chunks_cap;
    gshmemi_alloc alloc;         /* offsets within [0, mapped) */
    uint64_t internal_bytes;     /* what the library itself allocated from the heap */
    int cu_device;
} gshmemi_heap;

/* ---- transports (src/transport/<name>/) ------------------------------------------ */
/* A transport reaches some PEs; the core reaches a peer only through this table (the list
 * is src/transport/registry.c). p2p: PEs of this node by NVLink/PCIe load/store (their chunks
 * mapped into window slots). proxy: PEs of other nodes through this PE's proxy thread and
 * libfabric (device calls post descriptors to its ring). The core calls every transport
 * built in, in registration order; a PE is served by the first that reaches it. */
struct gshmemi_state;
struct gshmemi_device_state;
struct gshmemi_transport_ops {
    const char *name;
    /* true: the PEs it reaches are mapped into window slots (device loads and stores, host
     * copies through the mapping); false: they are reached by the operations below */
    bool load_store;
    /* Decide which PEs it reaches; set reach[pe] = true for those (reach has n_pes). */
    gshmemi_status (*init)(struct gshmemi_state *s, void **tctx, bool *reach);
    /* Called collectively after this PE mapped a new chunk at heap offset c->off. */
    gshmemi_status (*chunk_added)(struct gshmemi_state *s, void *tctx, const gshmemi_chunk *c);
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
    /* Collective, while the heap is still mapped. */
    void (*finalize)(struct gshmemi_state *s, void *tctx);
};
/* The transports built in, NULL-terminated (src/transport/registry.c). */
extern const struct gshmemi_transport_ops *const gshmemi_transports[];

#define GSHMEMI_MAX_TRANSPORTS 4
/* The transport that reaches pe (host forms of the operations); NULL if none. */
const struct gshmemi_transport_ops *gshmemi_transport_of(int pe, void **tctx);

/* ---- library state (init.c) -------------------------------------------------------- */
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

gshmemi_status gshmemi_heap_init(gshmemi_state *s);
/* Collective: allocate `size` bytes aligned to `align` (power of two); grows the mapping
 * when needed; returns the symmetric pointer. internal=true accounts it as library use. */
gshmemi_status gshmemi_heap_alloc(gshmemi_state *s, size_t size, size_t align, bool internal,
                                  void **out, const char *call);
gshmemi_status gshmemi_heap_free(gshmemi_state *s, void *ptr, const char *call);
void gshmemi_heap_finalize(gshmemi_state *s);
/* Device memory of this PE alone (not symmetric, outside the heap), reachable from every CUDA
 * context of the process on its GPU (heap.c). */
typedef struct gshmemi_local_mem {
    void *ptr;
    uint64_t size;
    unsigned long long handle;
} gshmemi_local_mem;
gshmemi_status gshmemi_local_mem_alloc(gshmemi_state *s, size_t size, gshmemi_local_mem *m, const char *call);
void gshmemi_local_mem_free(gshmemi_local_mem *m);
static inline bool gshmemi_heap_contains(const gshmemi_heap *h, const void *p) {
    return (const char *)p >= h->base && (const char *)p < h->base + h->mapped;
}

/* Device-state registry (device_state.c): pushes gshmemi_g's device view to every
 * translation unit that registered an updater (see include/gshmem/device/state.h). */
gshmemi_status gshmemi_device_state_publish(gshmemi_state *s);
void gshmemi_device_state_clear(void);

/* ---- kernels the host side launches (src/device/stream_ops.cu) ------------------------- */
#ifdef __cplusplus
extern "C" {
#endif
/* Each returns a cudaError_t. Pointers are already translated to this PE's mapping. */
int gshmemi_launch_barrier_all(void *stream);
/* One atomic (GSHMEMI_AMO_*) of 4 or 8 bytes at p; the old value goes to *out (device-
 * accessible, may be NULL). */
int gshmemi_launch_amo(void *stream, int op, size_t size, void *p, uint64_t value, uint64_t cond,
                       uint64_t *out);
/* A batch of atomics (GSHMEMI_AMO_*, 4 or 8 bytes) applied by one kernel on the stream: the
 * descriptors ring[(first + i) % slots] for i < n (n <= GSHMEMI_AMO_BATCH_MAX; device-readable,
 * e.g. mapped pinned memory, untouched until the kernel completed), old values to
 * olds[(first + i) % slots]. Atomics on one 8-byte word apply in ring order. */
#define GSHMEMI_AMO_BATCH_MAX 256
typedef struct gshmemi_amo_desc {
    uint64_t addr, operand, compare;
    uint32_t op, size;
} gshmemi_amo_desc;
int gshmemi_launch_amo_batch(void *stream, const gshmemi_amo_desc *ring, uint64_t *olds, unsigned first,
                             unsigned n, unsigned slots);
/* Loads gshmemi_amo_batch_kernel into the current context (a cudaError_t). */
int gshmemi_amo_batch_load(void);
/* The proxy's relay (staged mode under MPS; memq.h, transport.c): one GPU thread of the
 * proxy's context performs the 64-bit stores of `slots` (pinned host memory mapped to the GPU)
 * in order. Entry k is valid once tag's low 16 bits are (k + 1) & 0xffff; tag's high 48 bits
 * are the address (GPU memory: a release store at GPU scope; host memory, the relay's ticket
 * word: at system scope). The proxy writes value, then tag with release: one 16-byte read
 * across PCIe sees both. The relay writes the count performed to ctrl[GSHMEMI_RELAY_DONE] (host
 * memory) before it waits for the next entry; it returns once ctrl[GSHMEMI_RELAY_STOP] is set
 * and no entry waits. ctrl[GSHMEMI_RELAY_TICKET] is the relay's ticket word (its own line). */
#define GSHMEMI_RELAY_SLOTS 1024u
enum { GSHMEMI_RELAY_DONE = 0, GSHMEMI_RELAY_STOP = 1, GSHMEMI_RELAY_TICKET = 8 };
typedef struct __attribute__((aligned(16))) gshmemi_relay_slot {
    uint64_t value, tag;
} gshmemi_relay_slot;
int gshmemi_launch_relay(void *stream, const gshmemi_relay_slot *slots, uint64_t *ctrl);
int gshmemi_relay_load(void);
/* The on-stream forms to a remote PE: a one-thread kernel makes the device call (which
 * posts to the proxy ring and, for PUT/GET/PUT_SIGNAL, waits until the proxy completed it).
 * sym: the symmetric address on pe; local: this PE's buffer. */
enum { GSHMEMI_REMOTE_PUT, GSHMEMI_REMOTE_GET, GSHMEMI_REMOTE_PUT_SIGNAL, GSHMEMI_REMOTE_SIGNAL,
       GSHMEMI_REMOTE_QUIET };
int gshmemi_launch_remote(void *stream, int what, void *sym, const void *local, size_t n,
                          uint64_t *sig, uint64_t value, int sig_op, int pe);
/* Signal update at p: release (after earlier stream work's data) or relaxed. */
int gshmemi_launch_signal(void *stream, uint64_t *p, uint64_t value, int sig_op, int release);
/* Waits until every included ivars[i] (size bytes, signedness) satisfies cmp against
 * values[i] or value. */
int gshmemi_launch_wait_all(void *stream, void *ivars, size_t n, size_t size, int is_signed,
                            const int *status, int cmp, const void *values, uint64_t value);
/* The team syncs and collectives take a plan: src/team/plan.h. */
#ifdef __cplusplus
}
#endif

/* ---- teams (src/team/team.c) --------------------------------------------------------------- */
/* Builds the team pool, the device team table, GSHMEM_TEAM_WORLD and GSHMEM_TEAM_SHARED. */
gshmemi_status gshmemi_teams_init(gshmemi_state *s);
/* Reports teams the program did not destroy; frees the host side. */
void gshmemi_teams_finalize(gshmemi_state *s);
struct gshmemi_team;
/* The host copy of a team's device entry if `team` is valid on this PE and this PE is a
 * member; else prints "<call>: ..." and returns NULL. */
const struct gshmemi_team *gshmemi_team_lookup(int team, const char *call);

/* ---- host RMA helpers (rma.c, amo.c, wait.c) ------------------------------------------ */
/* Validates (call, pe, symmetric range [sym, sym+n)) and returns where this PE reaches
 * `sym` on `pe`; ends the job with a message naming the call and argument otherwise. */
char *gshmemi_host_peer_addr(const char *call, const void *sym, size_t n, int pe, const char *which);
/* Ends the job with a message when a CUDA call of a host RMA call failed. */
void gshmemi_host_cuda(int err, const char *call, const char *what);
/* Ends the job when a remote operation of a host call failed (the transport printed why). */
void gshmemi_host_remote_done(gshmemi_status st, const char *call, int pe);
void gshmemi_host_ops_finalize(void);

/* ---- entry points behind the public calls ------------------------------------------- */
/* The host forms of the calls of both sides and the on-stream forms (api.c, generated from
 * the families of the public headers) call these; users never see them. */
#ifdef __cplusplus
extern "C" {
#endif
struct CUstream_st;  /* gshmemx_stream_t */
int gshmemi_host_my_pe(void);
int gshmemi_host_n_pes(void);
void gshmemi_host_putmem(void *dest, const void *src, size_t nbytes, int pe);
void gshmemi_host_getmem(void *dest, const void *src, size_t nbytes, int pe);
void gshmemi_host_quiet(void);
void gshmemi_host_barrier_all(void);
void *gshmemi_host_ptr(const void *dest, int pe);
void gshmemi_host_iput(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                       size_t elem_size, int pe, const char *call);
void gshmemi_host_iget(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                       size_t elem_size, int pe, const char *call);
void gshmemi_host_put_signal(void *dest, const void *src, size_t nbytes, uint64_t *sig_addr,
                             uint64_t signal, int sig_op, int pe, const char *call);
/* One atomic of `size` (4/8) bytes: GSHMEMI_AMO_* op; value/cond/result point to host
 * values of that size (result may be NULL). */
void gshmemi_host_amo(int op, void *dest, size_t size, const void *value, const void *cond,
                      void *result, int pe, const char *call);
/* Wait (wait=1) or test over ivars[0..n) of `size` bytes; mode GSHMEMI_WAIT_ALL/ANY/SOME;
 * values (NULL: every entry compares with *value); snapshot (may be NULL) receives the
 * values that satisfied the wait. Returns as the device forms do. */
size_t gshmemi_host_wait_set(int mode, int wait, void *ivars, size_t n, size_t size, int is_signed,
                             const int *status, int cmp, const void *values, const void *value,
                             size_t *indices, void *snapshot, const char *call);
void gshmemi_host_pe_quiet(const int *target_pes, size_t npes);
/* The on-stream waits: later work on `stream` waits until the condition holds. */
void gshmemi_stream_wait(void *ivars, size_t n, size_t size, int is_signed, const int *status,
                         int cmp, const void *values, uint64_t value, struct CUstream_st *stream,
                         const char *call);
int gshmemi_host_team_my_pe(gshmem_team_t team);
int gshmemi_host_team_n_pes(gshmem_team_t team);
int gshmemi_host_team_translate_pe(gshmem_team_t src_team, int src_pe, gshmem_team_t dest_team);
/* blocking != 0: the host form (runs on an internal stream and waits); else enqueued on
 * `stream`. Return 0 or a GSHMEM_ERR_* status (after a message naming `call`). */
int gshmemi_host_team_sync(gshmem_team_t team, struct CUstream_st *stream, int blocking,
                           const char *call);
int gshmemi_host_move(int what, gshmem_team_t team, void *dest, const void *src, size_t nelems,
                      size_t elem_size, int root, ptrdiff_t dst, ptrdiff_t sst,
                      struct CUstream_st *stream, int blocking, const char *call);
int gshmemi_host_reduce(int what, int op, int type_code, gshmem_team_t team, void *dest,
                        const void *src, size_t nelems, struct CUstream_st *stream, int blocking,
                        const char *call);
#ifdef __cplusplus
}
#endif

/* ---- CUDA error translation (cuda_util.c) --------------------------------------------- */
gshmemi_status gshmemi_cu_check(int cu_result, const char *call, const char *file, int line);
gshmemi_status gshmemi_cuda_check(int cuda_err, const char *call, const char *file, int line);
/* Whether `stream` is being captured into a CUDA graph (cuda_util.c; the plan asks it, and its
 * unit test, which links no CUDA, gives a stand-in). */
bool gshmemi_stream_capturing(void *stream);
#define GSHMEMI_CU(call) GSHMEMI_CHECK(gshmemi_cu_check((int)(call), #call, __FILE__, __LINE__))
#define GSHMEMI_CUDA(call) GSHMEMI_CHECK(gshmemi_cuda_check((int)(call), #call, __FILE__, __LINE__))

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
