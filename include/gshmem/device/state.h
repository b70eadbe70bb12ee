/* Device state: one __constant__ copy per translation unit (no -rdc needed). Each unit
 * registers an updater at load time; gshmem_init calls every registered updater, which
 * copies the state into that unit's symbol with that unit's own CUDA runtime. The first
 * word is a version; device calls check it, so a kernel run before init, or headers and
 * library of different versions, fail with a message instead of misreading memory. */
#ifndef GSHMEM_DEVICE_STATE_H
#define GSHMEM_DEVICE_STATE_H

#include <stdint.h>
#include <stdio.h>

#include "gshmem/proxy_desc.h"
#include "gshmem/nic_desc.h"
#include "gshmem/types.h"

/* Routes. A device call reaches any PE: the state's route of a PE is its window slot (>= 0)
 * when this GPU reaches it by load/store (NVLink, PCIe, the same GPU), else a channel kind:
 * GSHMEMI_ROUTE_PROXY, this PE's proxy ring (the remote branch, gshmem/device/remote.h), or
 * GSHMEMI_ROUTE_NIC, a NIC queue. Nothing needs defining for it; the remote branch costs the
 * load/store paths nothing (docs/design.md, "Device routing").
 * A translation unit that defines GSHMEM_LOAD_STORE_ONLY before including gshmem.h opts out:
 * its device calls have no remote branch, and one that meets a remote PE ends the job with a
 * message naming the call, the PE and the setting. */
#define GSHMEMI_ROUTE_PROXY (-1)
#define GSHMEMI_ROUTE_NIC (-2)
#ifdef GSHMEM_LOAD_STORE_ONLY
#define GSHMEMI_ROUTED 0
#else
#define GSHMEMI_ROUTED 1
#endif

#define GSHMEMI_STATE_LAYOUT 4u

/* Channels: a collective run by several blocks (the on-stream kernels for large messages)
 * gives each block its own flags and epoch counter, so blocks never wait for each other. */
#define GSHMEMI_MAX_CHANNELS 128
/* One-shot collectives run on up to this many channels (slices of one message; the host
 * forms use up to GSHMEM_COLL_ONESHOT_CHANNELS of them); every one-shot call advances
 * seqs[0 .. ONESHOT_CHANNELS) together, so each block reads the team's one-shot count from
 * its own counter. */
#define GSHMEMI_ONESHOT_CHANNELS 64

/* One team as the device sees it: members are world PEs start + i * stride (or pes[i]).
 * A team owns one slot of the team pool: a symmetric area laid out as below, at the same
 * address on every member, so a peer's copy of any field is one gshmemi_peer away.
 *   flags  [MAX_CHANNELS][size]: flags[c * size + j] = last epoch member j announced on c
 *   sigs   [2][size]: debug signatures of collectives (mismatch detection)
 *   vals   [size]: small values a collective exchanges (collect: element counts)
 *   epochs [MAX_CHANNELS]: this PE's epoch per channel (local use only)
 *   seqs   [MAX_CHANNELS]: this PE's count of one-shot collectives, one copy per one-shot
 *          channel (local)
 *   ncoll  [1]: this PE's count of collectives (debug signature parity; local) */
typedef struct gshmemi_team {
    int32_t start, stride, size;   /* size 0: the slot is free */
    int32_t my_idx;                /* this PE's index in the team, -1 if not a member */
    const int32_t *pes;            /* member list when not strided (GSHMEM_TEAM_SHARED on a
                                      node whose PEs are not consecutive), else NULL */
    uint64_t *flags, *sigs, *vals, *epochs, *seqs, *ncoll;
    char *scratch;                 /* symmetric [2][MAX_CHANNELS-independent][size] buffers of
                                      scratch_bytes each for one-shot collectives, or NULL */
    uint64_t scratch_bytes;
    int32_t remote;                /* members reached only through a remote transport (other
                                      nodes): the team takes the cross-node algorithms */
    int32_t node_size;             /* members per node when the team is node-blocked (member j
                                      on the node of member j / node_size * node_size, every node
                                      node_size members, two nodes at least), else 0: the
                                      hierarchical algorithms across nodes (coll/xnode.h) */
    char *xtmp;                    /* this PE's landing buffer for data of other nodes (heap
                                      memory, this PE's use alone), when remote */
    uint64_t xtmp_bytes;
} gshmemi_team;

typedef struct gshmemi_device_state {
    uint32_t version;          /* GSHMEMI_STATE_VERSION once initialized, else 0 */
    int32_t mype, npes;
    int32_t node_first;        /* first PE of my node if its PEs are contiguous, else -1 */
    int32_t node_n;            /* PEs on my node reached by load/store */
    int32_t my_local;          /* my index among them */
    int32_t debug;             /* GSHMEM_DEBUG: >= 2 checks every call's address */
    int32_t fence_gpu;         /* 1: every PE of the job runs on this GPU (barrier fences: .gpu) */
    char *heap_base;           /* symmetric heap base B, identical on all PEs */
    uint64_t heap_window;      /* W: peer in window slot s is at addr + s * W */
    uint64_t heap_mapped;      /* bytes mapped (valid symmetric range is [B, B+mapped)) */
    const int16_t *pe_slot;    /* [npes] route: window slot, or GSHMEMI_ROUTE_* (remote) */
    uint64_t *sync_flags;      /* symmetric [npes]: barrier arrival epochs */
    uint64_t *sync_epoch;      /* symmetric: this PE's barrier count */
    uint64_t wait_timeout_ns;  /* device waits give up after this (0 = never) */
    const gshmemi_team *teams; /* [teams_max] team table (device memory) */
    int32_t teams_max;
    int32_t pad1;
    /* The remote channel: PEs with pe_slot -1 are reached through this PE's proxy ring
     * (gshmem/device/remote.h); chan.slots == NULL when no PE is remote. */
    gshmem_proxy_chan chan;
    uint64_t *chan_seen;       /* GPU memory: a `retired` value already observed (quiet's
                                  shortcut when nothing was posted since) */
    /* The NIC channel (GPU-initiated RDMA): PEs whose route is GSHMEMI_ROUTE_NIC are reached
     * through this PE's queue pairs (gshmem/device/chan_nic.h); nic.qps == NULL when none is. */
    gshmem_nic_chan nic;
} gshmemi_device_state;

#define GSHMEMI_STATE_VERSION ((GSHMEMI_STATE_LAYOUT << 16) | (uint32_t)sizeof(gshmemi_device_state))

#ifdef __cplusplus
extern "C" {
#endif
/* Returns a cudaError_t value from the unit's own runtime. */
typedef int (*gshmemi_state_updater)(const gshmemi_device_state *s);
/* Called from each unit's constructor. If gshmem is already initialized the updater runs
 * at once (a module loaded after init). Returns 0 or a GSHMEM_ERR_* status. */
GSHMEM_EXPORT int gshmemx_register_state_updater(gshmemi_state_updater fn, uint32_t version);
GSHMEM_EXPORT void gshmemx_unregister_state_updater(gshmemi_state_updater fn);
#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#include <cuda_runtime.h>

static __constant__ gshmemi_device_state gshmemi_dstate;

static int gshmemi_update_this_unit(const gshmemi_device_state *s) {
    return (int)cudaMemcpyToSymbol(gshmemi_dstate, s, sizeof *s);
}
__attribute__((constructor)) static void gshmemi_register_this_unit(void) {
    gshmemx_register_state_updater(gshmemi_update_this_unit, GSHMEMI_STATE_VERSION);
}
__attribute__((destructor)) static void gshmemi_unregister_this_unit(void) {
    gshmemx_unregister_state_updater(gshmemi_update_this_unit);
}

/* Report and stop the kernel: the host sees cudaErrorIllegalInstruction (or launch
 * failure) at its next synchronization and gshmem turns that into a job exit. */
#define GSHMEMI_DEVICE_MSG(fmt, ...)                                                         \
    printf("gshmem PE %d: error in device call: " fmt "\n", gshmemi_dstate.mype, ##__VA_ARGS__)
#define GSHMEMI_DEVICE_FAIL(fmt, ...)                                                        \
    do {                                                                                     \
        GSHMEMI_DEVICE_MSG(fmt, ##__VA_ARGS__);                                              \
        __trap();                                                                            \
    } while (0)

/* Reporters of the calls on the fast path (p, g, put, get, atomics, waits): NAME_msg prints
 * out of line and returns; NAME calls it and traps inline, so the compiler sees the failing
 * branch end where it is taken. A reporter that traps inside its own out-of-line body looks
 * to the compiler like a call that returns into the loop: it then keeps a reconvergence
 * barrier (BSSY/BSYNC) and a YIELD in every polling loop that can reach it — measured 0.06 to
 * 0.11 us of a 0.7 us ping-pong. Declaring the reporters noreturn instead raised the
 * block-scope collectives from 78 to 96..116 registers (no 768-thread blocks); this form
 * lowers both (docs/performance.md). The collectives' own reporters (team.h, coll.h) keep
 * the trap inside: they are checked once per call, and inlining their traps cost registers. */
#define GSHMEMI_REPORTER(NAME, PARAMS, ARGS)                                                 \
    static __device__ __forceinline__ void NAME PARAMS {                                     \
        NAME##_msg ARGS;                                                                     \
        __trap();                                                                            \
    }

static __device__ __noinline__ void gshmemi_bad_state_msg(const char *call) {
    if (gshmemi_dstate.version == 0)
        printf("gshmem: %s called in a kernel before gshmem_init (or in a module loaded "
               "without gshmem's header constructor); call gshmem_init() before launching\n",
               call);
    else
        printf("gshmem: %s: device state version 0x%x but this header expects 0x%x: headers "
               "and libgshmem are from different versions; rebuild against one install\n",
               call, gshmemi_dstate.version, (unsigned)GSHMEMI_STATE_VERSION);
}
GSHMEMI_REPORTER(gshmemi_bad_state, (const char *call), (call))

static __device__ __forceinline__ const gshmemi_device_state *gshmemi_st(const char *call) {
    if (gshmemi_dstate.version != GSHMEMI_STATE_VERSION) gshmemi_bad_state(call);
    return &gshmemi_dstate;
}

static __device__ __noinline__ void gshmemi_bad_pe_msg(const char *call, int pe) {
    GSHMEMI_DEVICE_MSG("%s: PE %d is out of range [0, %d)", call, pe, gshmemi_dstate.npes);
}
GSHMEMI_REPORTER(gshmemi_bad_pe, (const char *call, int pe), (call, pe))
static __device__ __noinline__ void gshmemi_unreachable_pe_msg(const char *call, int pe) {
    if (!GSHMEMI_ROUTED)
        GSHMEMI_DEVICE_MSG("%s: PE %d is on another node than PE %d, and this translation unit was "
                           "built with GSHMEM_LOAD_STORE_ONLY (device calls to load/store peers "
                           "only): build it without that macro to reach every PE (docs/api.md)",
                           call, pe, gshmemi_dstate.mype);
    else if (gshmemi_dstate.chan.slots || gshmemi_dstate.nic.qps)
        GSHMEMI_DEVICE_MSG("%s: PE %d is on another node than PE %d, and this call has no remote "
                           "form (docs/api.md, \"Across nodes\")", call, pe, gshmemi_dstate.mype);
    else
        GSHMEMI_DEVICE_MSG("%s: PE %d is not reachable by load/store from PE %d and no remote "
                           "transport serves it (gshmem-info --check says which transports this "
                           "build and machine have)", call, pe, gshmemi_dstate.mype);
}
GSHMEMI_REPORTER(gshmemi_unreachable_pe, (const char *call, int pe), (call, pe))
static __device__ __noinline__ void gshmemi_bad_addr_msg(const char *call, const void *p, size_t n) {
    GSHMEMI_DEVICE_MSG("%s: address %p (+%llu bytes) is not inside the symmetric heap "
                       "[%p, %p); pass memory from gshmem_malloc", call, p,
                       (unsigned long long)n, gshmemi_dstate.heap_base,
                       gshmemi_dstate.heap_base + gshmemi_dstate.heap_mapped);
}
GSHMEMI_REPORTER(gshmemi_bad_addr, (const char *call, const void *p, size_t n), (call, p, n))

/* Window slot of a PE reached by load/store, or -1. Local peer k of my node lives in
 * slot (k - me) mod L, so slot 0 is always this PE's own memory at the symmetric address.
 * pe must be in range. */
static __device__ __forceinline__ int gshmemi_slot_of(const gshmemi_device_state *s, int pe) {
    unsigned lr = (unsigned)(pe - s->node_first);
    if (s->node_first >= 0 && lr < (unsigned)s->node_n) {
        int slot = (int)lr - s->my_local;
        return slot < 0 ? slot + s->node_n : slot;
    }
    return s->pe_slot[pe];
}

/* Slow path of gshmemi_peer: says which of its checks failed. */
static __device__ __noinline__ void gshmemi_bad_call_msg(const char *call, int pe, const void *p,
                                                        size_t n) {
    if (gshmemi_dstate.version != GSHMEMI_STATE_VERSION) gshmemi_bad_state_msg(call);
    else if ((unsigned)pe >= (unsigned)gshmemi_dstate.npes) gshmemi_bad_pe_msg(call, pe);
    else gshmemi_bad_addr_msg(call, p, n);
}
GSHMEMI_REPORTER(gshmemi_bad_call, (const char *call, int pe, const void *p, size_t n),
                 (call, pe, p, n))

/* gshmemi_peer without the argument checks, for the library's own flags and scratch on PEs
 * it has already checked (the members of a team the call validated): only reachability. */
template <typename T>
static __device__ __forceinline__ T *gshmemi_peer_known(T *p, int pe, const char *call) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    int slot = gshmemi_slot_of(s, pe);
    if (slot < 0) gshmemi_unreachable_pe(call, pe);
    return (T *)((char *)p + (size_t)slot * s->heap_window);
}

/* The route to symmetric object `p` on PE `pe`: the window slot through which this GPU reaches
 * it, or a negative channel kind when `pe` is remote (no load/store path): the caller then
 * takes its out-of-line remote branch (gshmem/device/remote.h). The callers branch on the slot itself, not on a NULL address
 * made from it: that keeps the load/store path to the instructions it had before remote PEs
 * existed (tools/sass_compare.sh). Every check (state version, PE range, and with
 * GSHMEM_DEBUG=2 the heap range) is computed from independent constant loads and tested by
 * one branch: a p costs one round of loads, not a chain of load-compare-branch steps
 * (measured: 0.13 us of a 0.85 us ping-pong). */
template <typename T>
static __device__ __forceinline__ int gshmemi_route(const T *p, int pe, size_t n, const char *call) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    const char *c = (const char *)p;
    bool out = c < s->heap_base || c + n > s->heap_base + s->heap_mapped;
    bool bad = (s->version != GSHMEMI_STATE_VERSION) | ((unsigned)pe >= (unsigned)s->npes) |
               ((s->debug >= 2) & out);
    if (bad) gshmemi_bad_call(call, pe, p, n);
    int slot = gshmemi_slot_of(s, pe);
    if (!GSHMEMI_ROUTED && slot < 0) gshmemi_unreachable_pe(call, pe);
    return slot;
}
/* p as seen through window slot `slot` (>= 0). */
template <typename T> static __device__ __forceinline__ T *gshmemi_at(T *p, int slot) {
    return (T *)((char *)p + (size_t)slot * gshmemi_dstate.heap_window);
}
/* gshmemi_route as an address: NULL when pe is remote. */
template <typename T>
static __device__ __forceinline__ T *gshmemi_peer(T *p, int pe, size_t n, const char *call) {
    int slot = gshmemi_route(p, pe, n, call);
    return slot < 0 ? (T *)0 : gshmemi_at(p, slot);
}
#endif /* __CUDACC__ */

#endif
