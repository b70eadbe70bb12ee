/* Host forms of the collectives: check the arguments here (a message that names the call,
 * the PE and the argument, instead of a fault in a kernel), choose how many channels
 * (blocks) the kernel runs, and launch it on the caller's stream (on-stream forms: nothing
 * else, so they are safe inside CUDA graph capture) or on the internal stream and wait (the
 * blocking host forms). The same rule picks the channel count on every PE, since it depends
 * only on arguments every member passes alike. */
#include <pthread.h>
#include <cuda_runtime.h>

#include "internal.h"
#include "gshmem.h"
#include "geometry.h"
#include "placement.h"

/* Messages up to half the team's scratch size take the one-shot path, one block per
 * COLL_ONESHOT_CHUNK bytes of the message (up to COLL_ONESHOT_CHANNELS); larger ones get
 * one block per CHANNEL_BYTES of traffic, up to the family's cap. */
#define CHANNEL_BYTES ((size_t)gshmemi_cfg.COLL_CHANNEL_BYTES)

/* Threads per block of the two-round kernels (their __launch_bounds__ is 512) and the most
 * channels they run, per family, as measured on 2xH200 (session 6): reductions (NVLink loads
 * and stores) did best with 128 blocks of 256 threads, moves (stores only) with 128 blocks of
 * 512 (128 MiB broadcast: 432 us; 256 threads 442; 64 blocks 444; 32 blocks 482; 16: 566). */
static int threads_of(int t, int dflt) { return t >= 32 && t <= 512 && t % 32 == 0 ? t : dflt; }
static int most_of(int n) { return n >= 1 && n <= GSHMEMI_MAX_CHANNELS ? n : GSHMEMI_MAX_CHANNELS; }
static int oneshot_most(int n) { return n >= 1 && n <= GSHMEMI_ONESHOT_CHANNELS ? n : GSHMEMI_ONESHOT_CHANNELS; }
#define REDUCE_THREADS threads_of(gshmemi_cfg.COLL_THREADS, 256)
#define MOVE_THREADS threads_of(gshmemi_cfg.COLL_MOVE_THREADS, 512)
#define REDUCE_CHANNELS most_of(gshmemi_cfg.COLL_MAX_CHANNELS)
#define MOVE_CHANNELS most_of(gshmemi_cfg.COLL_MOVE_CHANNELS)
#define COLLECT_CHANNELS 8   /* collect: counts differ per PE, so a fixed count */

/* Whether a message of per_sender bytes fits the one-shot path (the device's gshmemi_oneshot
 * rule: the team has scratch and the message fits half of it). */
static bool oneshot_fits(const gshmemi_team *t, size_t per_sender) {
    return t->scratch && per_sender <= t->scratch_bytes / 2;
}

/* per_sender: bytes of one member's message (units of g: how the device slices it); most: the
 * family's channel cap for the two-round path. */
static int channels(const gshmemi_team *t, size_t per_sender, size_t units, size_t g,
                    size_t total, bool oneshot_ok, int most) {
    if (oneshot_ok && oneshot_fits(t, per_sender))
        return gshmemi_geom_oneshot_channels(per_sender, units, g, gshmemi_cfg.COLL_ONESHOT_CHUNK,
                                             gshmemi_place_cap_blocks(
                                                 oneshot_most(gshmemi_cfg.COLL_ONESHOT_CHANNELS)));
    size_t n = total / CHANNEL_BYTES;
    if (n < 1) n = 1;
    if (n > (size_t)most) n = (size_t)most;
    return gshmemi_place_cap_blocks((int)n);
}

static int check_buf(const char *call, const char *which, const void *p, size_t n) {
    const gshmemi_heap *h = &gshmemi_g.heap;
    if (n == 0) return 0;
    if ((const char *)p < h->base || (const char *)p + n > h->base + h->mapped) {
        gshmemi_error("%s: %s %p (+%zu bytes) is not inside the symmetric heap [%p, %p) on PE %d; "
                      "collective buffers must come from gshmem_malloc and be large enough",
                      call, which, p, n, (void *)h->base, (void *)(h->base + h->mapped),
                      gshmemi_g.mype);
        return GSHMEM_ERR_INVALID_ARG;
    }
    return 0;
}

static int finish(int err, int blocking, const char *call) {
    if (!err && blocking) err = (int)cudaStreamSynchronize((cudaStream_t)gshmemi_g.stream);
    if (err) {
        gshmemi_host_cuda(err, call, blocking ? "collective kernel" : "kernel launch");
        return GSHMEM_ERR_CUDA;
    }
    return 0;
}

int gshmemi_host_team_sync(gshmem_team_t team, gshmemx_stream_t stream, int blocking,
                           const char *call) {
    const gshmemi_team *t = gshmemi_team_lookup(team, call);
    if (!t) return GSHMEM_ERR_INVALID_ARG;
    void *st = blocking ? gshmemi_g.stream : (void *)stream;
    return finish(gshmemi_launch_team_sync(st, t), blocking, call);
}

/* ---- large moves through the copy engine --------------------------------------------------
 * A broadcast, fcollect or alltoall whose per-member message is at least COLL_CE_MIN (past
 * the one-shot path) sends what goes to the other members with the copy engine (386 GB/s
 * over NVLink on H200, against ~350 for SM stores spread over the same channels) while the
 * SMs copy this member's own part: on the caller's stream, the move kernel's arrival rounds;
 * a fork to the internal copy-engine stream for one cudaMemcpyAsync per member (staggered
 * like the kernel's copies) while the stream runs the local copy; the join; the completion
 * rounds. The rounds are the move kernel's, channel for channel, so members need not agree
 * on the path: a stream being captured takes the kernel (the fork would pull the shared
 * copy-engine stream into the capture). The copy engine's writes are performed when the copy
 * completes, which the completion round's kernel waits for in stream order (as quiet_on_stream
 * relies on). The lock keeps the fork and join of concurrent callers apart. */
static pthread_mutex_t ce_lock = PTHREAD_MUTEX_INITIALIZER;

static bool ce_applies(const gshmemi_team *t, int what, size_t nb, cudaStream_t st) {
    uint64_t min = gshmemi_cfg.COLL_CE_MIN;
    if (what != GSHMEMI_MOVE_BROADCAST && what != GSHMEMI_MOVE_FCOLLECT && what != GSHMEMI_MOVE_ALLTOALL)
        return false;
    if (!min || nb < min || oneshot_fits(t, nb)) return false;
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(st, &cs) != cudaSuccess) {
        (void)cudaGetLastError();   /* e.g. the legacy stream while another thread captures */
        return false;
    }
    return cs == cudaStreamCaptureStatusNone;
}

static int move_ce(const gshmemi_team *t, int what, gshmem_team_t team, void *dest,
                   const void *src, size_t nelems, size_t es, int root, ptrdiff_t dst,
                   ptrdiff_t sst, int nch, cudaStream_t st, const char *call) {
    const int m = t->size, me = t->my_idx;
    const size_t nb = nelems * es;
    char *d = (char *)dest;
    const char *s = (const char *)src;
    int err = gshmemi_launch_move_rounds(st, t, what, team, 1, nelems, es, root, dst, sst, nch);
    if (err) return err;
    /* my own part: where it goes in my dest, where it comes from */
    char *ld = what == GSHMEMI_MOVE_BROADCAST ? d : d + (size_t)me * nb;
    const char *ls = what == GSHMEMI_MOVE_ALLTOALL ? s + (size_t)me * nb : s;
    const bool sends = what != GSHMEMI_MOVE_BROADCAST || me == root;   /* a broadcast's root alone */
    const bool local = sends && ld != ls;
    cudaStream_t ce = (cudaStream_t)gshmemi_g.ce_stream;
    cudaEvent_t fork = (cudaEvent_t)gshmemi_g.ce_fork, join = (cudaEvent_t)gshmemi_g.ce_join;
    pthread_mutex_lock(&ce_lock);
    err = (int)cudaEventRecord(fork, st);
    if (!err) err = (int)cudaStreamWaitEvent(ce, fork, 0);
    for (int k = 1; sends && k < m && !err; k++) {
        int j = (me + k) % m;
        int pe = gshmem_team_translate_pe(team, j, GSHMEM_TEAM_WORLD);
        const char *from = what == GSHMEMI_MOVE_ALLTOALL ? s + (size_t)j * nb : s;
        char *to = gshmemi_host_peer_addr(call, ld, nb, pe, "dest");
        err = (int)cudaMemcpyAsync(to, from, nb, cudaMemcpyDefault, ce);
    }
    if (!err) err = (int)cudaEventRecord(join, ce);
    if (!err && local) err = gshmemi_launch_local_copy(st, ld, ls, nb, nch, MOVE_THREADS);
    if (!err) err = (int)cudaStreamWaitEvent(st, join, 0);
    pthread_mutex_unlock(&ce_lock);
    if (err) return err;
    return gshmemi_launch_move_rounds(st, t, what, team, 0, nelems, es, root, dst, sst, nch);
}

int gshmemi_host_move(int what, gshmem_team_t team, void *dest, const void *src, size_t nelems,
                      size_t es, int root, ptrdiff_t dst, ptrdiff_t sst,
                      gshmemx_stream_t stream, int blocking, const char *call) {
    const gshmemi_team *t = gshmemi_team_lookup(team, call);
    if (!t) return GSHMEM_ERR_INVALID_ARG;
    size_t m = (size_t)t->size, nb = nelems * es;
    size_t dbytes = 0, sbytes = 0, total = 0;
    switch (what) {
    case GSHMEMI_MOVE_BROADCAST:
        if (root < 0 || root >= t->size) {
            gshmemi_error("%s: PE_root %d is not a PE number of team %d (which has %d PEs)", call,
                          root, team, t->size);
            return GSHMEM_ERR_INVALID_ARG;
        }
        dbytes = sbytes = nb;
        total = nb * (m - 1);
        break;
    case GSHMEMI_MOVE_FCOLLECT: dbytes = nb * m; sbytes = nb; total = nb * m; break;
    case GSHMEMI_MOVE_COLLECT: sbytes = nb; break;  /* dest size depends on the others */
    case GSHMEMI_MOVE_ALLTOALL: dbytes = sbytes = nb * m; total = nb * m; break;
    case GSHMEMI_MOVE_ALLTOALLS:
        if (dst < 1 || sst < 1) {
            gshmemi_error("%s: strides must be >= 1 (dst %td, sst %td)", call, dst, sst);
            return GSHMEM_ERR_INVALID_ARG;
        }
        if (nelems) {
            dbytes = ((m * nelems - 1) * (size_t)dst + 1) * es;
            sbytes = ((m * nelems - 1) * (size_t)sst + 1) * es;
        }
        total = nb * m;
        break;
    default: return GSHMEM_ERR_INTERNAL;
    }
    if (check_buf(call, "dest", dest, dbytes) || check_buf(call, "source", src, sbytes))
        return GSHMEM_ERR_INVALID_ARG;
    if (t->remote)   /* members on other nodes: one block, reads between team rounds */
        return finish(gshmemi_launch_xnode_move(blocking ? gshmemi_g.stream : (void *)stream, t, what, team,
                                                dest, src, nelems, es, root, dst, sst), blocking, call);
    int nch = what == GSHMEMI_MOVE_COLLECT ? gshmemi_place_cap_blocks(COLLECT_CHANNELS)
              : channels(t, nb, nb, 16, total, what != GSHMEMI_MOVE_ALLTOALLS, MOVE_CHANNELS);
    void *st = blocking ? gshmemi_g.stream : (void *)stream;
    if (ce_applies(t, what, nb, (cudaStream_t)st))
        return finish(move_ce(t, what, team, dest, src, nelems, es, root, dst, sst, nch,
                              (cudaStream_t)st, call), blocking, call);
    return finish(gshmemi_launch_move(st, t, what, team, dest, src, nelems, es, root, dst, sst, nch,
                                      MOVE_THREADS), blocking, call);
}

int gshmemi_host_reduce(int what, int op, int type_code, gshmem_team_t team, void *dest,
                        const void *src, size_t nelems, gshmemx_stream_t stream, int blocking,
                        const char *call) {
    const gshmemi_team *t = gshmemi_team_lookup(team, call);
    if (!t) return GSHMEM_ERR_INVALID_ARG;
    size_t es = (size_t)(type_code & 15), m = (size_t)t->size, nb = nelems * es;
    size_t sbytes = what == GSHMEMI_COLL_REDUCESCATTER ? nb * m : nb;
    if (check_buf(call, "dest", dest, nb) || check_buf(call, "source", src, sbytes))
        return GSHMEM_ERR_INVALID_ARG;
    bool in_place_ok = what != GSHMEMI_COLL_REDUCESCATTER && dest == src;
    if (!in_place_ok && (char *)dest < (const char *)src + sbytes && (const char *)src < (char *)dest + nb) {
        gshmemi_error("%s: dest and source overlap%s", call,
                      what == GSHMEMI_COLL_REDUCESCATTER ? " (reducescatter cannot run in place)"
                                                         : " without being the same array");
        return GSHMEM_ERR_INVALID_ARG;
    }
    if (t->remote)
        return finish(gshmemi_launch_xnode_reduce(blocking ? gshmemi_g.stream : (void *)stream, t, what, op,
                                                  type_code, team, dest, src, nelems), blocking, call);
    /* two-round traffic per PE: reads and writes of about 2 * nb (reduce-scatter: nb * m) */
    size_t total = what == GSHMEMI_COLL_REDUCESCATTER ? nb * m : 2 * nb;
    int nch = channels(t, nb, nelems, 16 / es, total, true, REDUCE_CHANNELS);
    /* The 2-member variants of a two-round, out-of-place reduce, each from its own size
       threshold (0 = never): all-read, each member computes the whole vector (every byte
       crosses NVLink as a read); push, every byte crosses as a write (half of each source to
       the member that owns it, then each member's half of the result). */
    bool two_round_pair = what == GSHMEMI_COLL_REDUCE && t->size == 2 && dest != src &&
                          !oneshot_fits(t, nb);
    uint64_t allread = gshmemi_cfg.COLL_ALLREAD_MIN, push = gshmemi_cfg.COLL_PUSH_MIN;
    if (two_round_pair && allread && nb >= allread) {
        what = GSHMEMI_COLL_REDUCE_ALLREAD;
        nch = channels(t, nb, nelems, 16 / es, nb, false, REDUCE_CHANNELS);
    } else if (two_round_pair && push && nb >= push) {
        what = GSHMEMI_COLL_REDUCE_PUSH;
    }
    void *st = blocking ? gshmemi_g.stream : (void *)stream;
    return finish(gshmemi_launch_reduce(st, t, what, op, type_code, team, dest, src, nelems, nch,
                                        REDUCE_THREADS), blocking, call);
}
