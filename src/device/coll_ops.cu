// Kernels behind the host forms of the movers, and the launchers' entry points: block c of
// the grid runs channel c of the same header-inline code a user's kernel calls
// (gshmem/device/coll.h), so the device, on-stream and blocking host forms share one
// implementation. Each launcher launches what the host's plan (src/team/plan.c) says: the
// kernel of its algorithm, p.nch blocks of p.threads threads. The reduction kernels, one per
// (element type, operator), are coll_reduce.cu's.
#include <type_traits>
#include "gshmem.h"
#include "coll_kernels.cuh"


// The names device-side messages give (the host already checked the arguments; what is
// left to report from here is a mismatch between PEs or a wait that timed out).
// Every kernel gets the team's entry by value (the host's copy), so its first flag store
// does not wait behind loads from the team table, and starts with gshmemi_pdl_enter.

__global__ void __launch_bounds__(GSHMEMI_COLL_MAX_THREADS) gshmemi_move_kernel(gshmemi_team t, int what, int team, void *dest,
                                    const void *src, size_t n, size_t es, int root, ptrdiff_t dst,
                                    ptrdiff_t sst) {
    gshmemi_pdl_enter();
    gshmemi_move_t<gshmemi_scope_block>(&t, team, what, dest, src, n, es, root, dst, sst,
                                        (int)blockIdx.x, (int)gridDim.x, gshmemi_move_name(what));
}

// Copy-engine moves (gshmemi_host_move, large broadcast / fcollect / alltoall): the copy engine
// carries the data to the other members and these kernels do the rest. The rounds are the
// two-round move kernel's, channel for channel (arrival with its debug signature, then
// completion), so a member that took one path works with members that took the other.
__global__ void gshmemi_move_rounds_kernel(gshmemi_team t, int what, int team, int first, size_t n,
                                           size_t es, int root, ptrdiff_t dst, ptrdiff_t sst) {
    gshmemi_pdl_enter();
    const char *call = gshmemi_move_name(what);
    if (first)
        gshmemi_arrive<gshmemi_scope_warp>(&t, team, (int)blockIdx.x,
                                           gshmemi_move_sig(what, n, es, root, dst, sst), call);
    else
        gshmemi_coll_round<gshmemi_scope_warp>(&t, (int)blockIdx.x, call);
}
// This member's own part (an HBM copy), on the SMs while the copy engine sends.
__global__ void __launch_bounds__(GSHMEMI_COLL_MAX_THREADS) gshmemi_local_copy_kernel(char *dest, const char *src, size_t n) {
    gshmemi_pdl_enter();
    size_t lo, hi;
    gshmemi_slice(n, (int)blockIdx.x, (int)gridDim.x, 16, &lo, &hi);
    gshmemi_move_copy<gshmemi_scope_block>(dest + lo, src + lo, hi - lo);
}

// One-shot forms (launched for GSHMEMI_ALGO_ONESHOT plans, which plan.c makes by the rule the
// general kernels apply, gshmemi_oneshot): only the one-shot code, inlined, so the kernel is small and reads
// the team entry from parameter space, and without the device-side entry checks the host
// has made (in a CUDA graph the general kernel's one-shot took ~2 us more than a raw LL
// exchange; of that the entry checks were ~0.7 us: bench/probe_sync). The plan (slice,
// first target, from parameters and the constant bank) is made before the PDL wait.
__global__ void __launch_bounds__(GSHMEMI_COLL_MAX_THREADS) gshmemi_move_oneshot_kernel(gshmemi_team t, int what, int team,
                                    void *dest, const void *src, size_t n, size_t es, int root) {
    const gshmemi_oneshot_plan P = gshmemi_oneshot_plan_of(&t, n * es, 16, 1, (int)blockIdx.x, (int)gridDim.x);
    gshmemi_pdl_enter();
    gshmemi_move_oneshot_run<gshmemi_scope_block>(&t, team, what, dest, src, n, es, root, P,
                                                  (int)blockIdx.x, (int)gridDim.x,
                                                  gshmemi_move_name(what));
}

extern "C" int gshmemi_launch_move(void *stream, gshmemi_coll_plan p, const void *team_entry,
                                   int what, int team, void *dest, const void *src, size_t n,
                                   size_t es, int root, ptrdiff_t dst, ptrdiff_t sst) {
    const gshmemi_team *t = (const gshmemi_team *)team_entry;
    switch (p.algo) {
    case GSHMEMI_ALGO_ONESHOT:
        return launch_k(gshmemi_move_oneshot_kernel, p.nch, p.threads, stream, *t, what, team,
                        dest, src, n, es, root);
    case GSHMEMI_ALGO_TWO_ROUND:
        return launch_k(gshmemi_move_kernel, p.nch, p.threads, stream, *t, what, team, dest, src,
                        n, es, root, dst, sst);
    case GSHMEMI_ALGO_XNODE:
        return gshmemi_launch_xnode_move(stream, p, team_entry, what, team, dest, src, n, es, root,
                                         dst, sst);
    default: return (int)cudaErrorInvalidValue;
    }
}

// The rounds kernel runs one warp per channel: its rounds are one flag store and wait per
// member.
extern "C" int gshmemi_launch_move_rounds(void *stream, gshmemi_coll_plan p, const void *team_entry,
                                          int what, int team, int first, size_t n, size_t es,
                                          int root, ptrdiff_t dst, ptrdiff_t sst) {
    // the completion rounds follow an event wait (the copy engine's join): launched plainly
    const gshmemi_team *t = (const gshmemi_team *)team_entry;
    return first ? launch_k(gshmemi_move_rounds_kernel, p.nch, 32, stream, *t, what, team, first, n,
                            es, root, dst, sst)
                 : launch_k_serial(gshmemi_move_rounds_kernel, p.nch, 32, stream, *t, what, team,
                                   first, n, es, root, dst, sst);
}

extern "C" int gshmemi_launch_local_copy(void *stream, gshmemi_coll_plan p, void *dest,
                                         const void *src, size_t n) {
    return launch_k(gshmemi_local_copy_kernel, p.nch, p.threads, stream, (char *)dest,
                    (const char *)src, n);
}

// Storage types by GSHMEMI_TYPE_CODE: every OpenSHMEM reduction type is one of these; each
// type's kernels are a translation unit of their own (coll_reduce.cu built per type), so the
// build compiles them in parallel.
#define GSHMEMI_TC(KIND, T, NAME)                                                            \
    case GSHMEMI_KIND_##KIND * 16 + (int)sizeof(T):                                          \
        return gshmemi_launch_reduce_##NAME(op, stream, p, te, what, team, dest, src, n);
extern "C" int gshmemi_launch_reduce(void *stream, gshmemi_coll_plan p, const void *te, int what,
                                     int op, int type_code, int team, void *dest, const void *src,
                                     size_t n) {
    if (p.algo == GSHMEMI_ALGO_XNODE)
        return gshmemi_launch_xnode_reduce(stream, p, te, what, op, type_code, team, dest, src, n);
    // the 2-member variants are the general kernel's, told apart by its `what`
    if (p.algo == GSHMEMI_ALGO_ALLREAD) what = GSHMEMI_COLL_REDUCE_ALLREAD;
    if (p.algo == GSHMEMI_ALGO_PUSH) what = GSHMEMI_COLL_REDUCE_PUSH;
    switch (type_code) {
        GSHMEMI_REDUCE_STORAGE_TYPES(GSHMEMI_TC)
    default: return (int)cudaErrorInvalidValue;
    }
}
#undef GSHMEMI_TC
