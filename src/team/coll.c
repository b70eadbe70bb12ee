/* Host forms of the collectives: check the arguments here (a message that names the call,
 * the PE and the argument, instead of a fault in a kernel), ask plan.c for the plan (kernel,
 * channels, threads) and launch it on the caller's stream (on-stream forms: nothing else, so
 * they are safe inside CUDA graph capture) or on the internal stream and wait (the blocking
 * host forms). The copy-engine path's stream work is done here. */
#include <pthread.h>
#include <cuda_runtime.h>

#include "entry.h"
#include "host_ops.h"
#include "state.h"
#include "team.h"
#include "gshmem.h"
#include "plan.h"

static int check_buf(const char *call, const char *which, const void *p, size_t n) {
    const gshmemi_heap *h = &gshmemi_g.heap;
    if (n == 0) return 0;
    /* the heap, or a user buffer registered symmetric (symreg.c) */
    if (!gshmemi_heap_contains(h, p) || !gshmemi_heap_contains(h, (const char *)p + n - 1)) {
        gshmemi_error("%s: %s %p (+%zu bytes) is not inside the symmetric heap [%p, %p) on PE %d; "
                      "collective buffers must come from gshmem_malloc (or "
                      "gshmemx_buffer_register_symmetric) and be large enough",
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
    return finish(gshmemi_launch_team_sync(st, gshmemi_plan_sync(t), t), blocking, call);
}

/* ---- large moves through the copy engine --------------------------------------------------
 * A broadcast, fcollect or alltoall that plan.c sends through the copy engine (each member's
 * message at least COLL_CE_MIN, a stream not being captured) sends what goes to the other
 * members with cudaMemcpyAsync while the SMs copy this member's own part: on the caller's
 * stream, the move kernel's arrival rounds; a fork to the internal copy-engine stream for one
 * cudaMemcpyAsync per member (staggered like the kernel's copies) while the stream runs the
 * local copy; the join; the completion rounds. The rounds are the move kernel's, channel for
 * channel, so members need not agree on the path. The copy engine's writes are performed when
 * the copy completes, which the completion round's kernel waits for in stream order (as
 * quiet_on_stream relies on). The lock keeps the fork and join of concurrent callers apart. */
static pthread_mutex_t ce_lock = PTHREAD_MUTEX_INITIALIZER;

static int move_ce(gshmemi_coll_plan p, const gshmemi_team *t, int what, gshmem_team_t team,
                   void *dest, const void *src, size_t nelems, size_t es, int root, ptrdiff_t dst,
                   ptrdiff_t sst, cudaStream_t st, const char *call) {
    const int m = t->size, me = t->my_idx;
    const size_t nb = nelems * es;
    char *d = (char *)dest;
    const char *s = (const char *)src;
    int err = gshmemi_launch_move_rounds(st, p, t, what, team, 1, nelems, es, root, dst, sst);
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
        int pe = gshmemi_host_team_translate_pe(team, j, GSHMEM_TEAM_WORLD);
        const char *from = what == GSHMEMI_MOVE_ALLTOALL ? s + (size_t)j * nb : s;
        char *to = gshmemi_host_peer_addr(call, ld, nb, pe, "dest");
        err = (int)cudaMemcpyAsync(to, from, nb, cudaMemcpyDefault, ce);
    }
    if (!err) err = (int)cudaEventRecord(join, ce);
    if (!err && local) err = gshmemi_launch_local_copy(st, p, ld, ls, nb);
    if (!err) err = (int)cudaStreamWaitEvent(st, join, 0);
    pthread_mutex_unlock(&ce_lock);
    if (err) return err;
    return gshmemi_launch_move_rounds(st, p, t, what, team, 0, nelems, es, root, dst, sst);
}

int gshmemi_host_move(int what, gshmem_team_t team, void *dest, const void *src, size_t nelems,
                      size_t es, int root, ptrdiff_t dst, ptrdiff_t sst,
                      gshmemx_stream_t stream, int blocking, const char *call) {
    const gshmemi_team *t = gshmemi_team_lookup(team, call);
    if (!t) return GSHMEM_ERR_INVALID_ARG;
    size_t m = (size_t)t->size, nb = nelems * es;
    size_t dbytes = 0, sbytes = 0;
    switch (what) {
    case GSHMEMI_MOVE_BROADCAST:
        if (root < 0 || root >= t->size) {
            gshmemi_error("%s: PE_root %d is not a PE number of team %d (which has %d PEs)", call,
                          root, team, t->size);
            return GSHMEM_ERR_INVALID_ARG;
        }
        dbytes = sbytes = nb;
        break;
    case GSHMEMI_MOVE_FCOLLECT: dbytes = nb * m; sbytes = nb; break;
    case GSHMEMI_MOVE_COLLECT: sbytes = nb; break;  /* dest size depends on the others */
    case GSHMEMI_MOVE_ALLTOALL: dbytes = sbytes = nb * m; break;
    case GSHMEMI_MOVE_ALLTOALLS:
        if (dst < 1 || sst < 1) {
            gshmemi_error("%s: strides must be >= 1 (dst %td, sst %td)", call, dst, sst);
            return GSHMEM_ERR_INVALID_ARG;
        }
        if (nelems) {
            dbytes = ((m * nelems - 1) * (size_t)dst + 1) * es;
            sbytes = ((m * nelems - 1) * (size_t)sst + 1) * es;
        }
        break;
    default: return GSHMEM_ERR_INTERNAL;
    }
    if (check_buf(call, "dest", dest, dbytes) || check_buf(call, "source", src, sbytes))
        return GSHMEM_ERR_INVALID_ARG;
    void *st = blocking ? gshmemi_g.stream : (void *)stream;
    const gshmemi_coll_plan p = gshmemi_plan_move(t, what, nb, st);
    if (p.algo == GSHMEMI_ALGO_COPY_ENGINE)
        return finish(move_ce(p, t, what, team, dest, src, nelems, es, root, dst, sst,
                              (cudaStream_t)st, call), blocking, call);
    return finish(gshmemi_launch_move(st, p, t, what, team, dest, src, nelems, es, root, dst, sst),
                  blocking, call);
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
    void *st = blocking ? gshmemi_g.stream : (void *)stream;
    const gshmemi_coll_plan p = gshmemi_plan_reduce(t, what, nelems, es, dest == src);
    return finish(gshmemi_launch_reduce(st, p, t, what, op, type_code, team, dest, src, nelems),
                  blocking, call);
}
