// Kernels behind the host forms of team syncs and collectives: block c of the grid runs
// channel c of the same header-inline code a user's kernel calls (gshmem/device/coll.h), so
// the device, on-stream and blocking host forms share one implementation. One kernel per
// (element type, operator) for reductions, over the storage types the OpenSHMEM names map to.
#include <type_traits>
#include "gshmem.h"
#include "launch.cuh"

extern "C" {
#include "internal.h"
#include "src/team/geometry.h"
}

// The names device-side messages give (the host already checked the arguments; what is
// left to report from here is a mismatch between PEs or a wait that timed out).
__device__ static const char *gshmemi_move_name(int what) {
    switch (what) {
    case GSHMEMI_MOVE_BROADCAST: return "broadcast (host/on-stream form)";
    case GSHMEMI_MOVE_FCOLLECT: return "fcollect (host/on-stream form)";
    case GSHMEMI_MOVE_COLLECT: return "collect (host/on-stream form)";
    case GSHMEMI_MOVE_ALLTOALL: return "alltoall (host/on-stream form)";
    default: return "alltoalls (host/on-stream form)";
    }
}
__device__ static const char *gshmemi_reduce_name(int what) {
    switch (what) {
    case GSHMEMI_COLL_REDUCE: return "reduce (host/on-stream form)";
    case GSHMEMI_COLL_REDUCESCATTER: return "reducescatter (host/on-stream form)";
    case GSHMEMI_COLL_REDUCE_ALLREAD: return "reduce (host/on-stream form, all-read)";
    case GSHMEMI_COLL_REDUCE_PUSH: return "reduce (host/on-stream form, push)";
    case GSHMEMI_COLL_INSCAN: return "sum_inscan (host/on-stream form)";
    default: return "sum_exscan (host/on-stream form)";
    }
}

// Every kernel gets the team's entry by value (the host's copy), so its first flag store
// does not wait behind loads from the team table, and starts with gshmemi_pdl_enter.
__global__ void gshmemi_team_sync_kernel(gshmemi_team t) {
    gshmemi_pdl_enter();
    gshmemi_team_sync_t<gshmemi_scope_warp, false>(&t, "gshmem_team_sync (host/on-stream form)");
}

__global__ void __launch_bounds__(512) gshmemi_move_kernel(gshmemi_team t, int what, int team, void *dest,
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
__global__ void __launch_bounds__(512) gshmemi_local_copy_kernel(char *dest, const char *src, size_t n) {
    gshmemi_pdl_enter();
    size_t lo, hi;
    gshmemi_slice(n, (int)blockIdx.x, (int)gridDim.x, 16, &lo, &hi);
    gshmemi_move_copy<gshmemi_scope_block>(dest + lo, src + lo, hi - lo);
}

// One-shot forms (the host launches them when gshmemi_oneshot says so, the same rule the
// general kernels apply): only the one-shot code, inlined, so the kernel is small and reads
// the team entry from parameter space, and without the device-side entry checks the host
// has made (in a CUDA graph the general kernel's one-shot took ~2 us more than a raw LL
// exchange; of that the entry checks were ~0.7 us: bench/probe_sync). The plan (slice,
// first target, from parameters and the constant bank) is made before the PDL wait.
__global__ void __launch_bounds__(512) gshmemi_move_oneshot_kernel(gshmemi_team t, int what, int team,
                                    void *dest, const void *src, size_t n, size_t es, int root) {
    const gshmemi_oneshot_plan P = gshmemi_oneshot_plan_of(&t, n * es, 16, 1, (int)blockIdx.x, (int)gridDim.x);
    gshmemi_pdl_enter();
    gshmemi_move_oneshot_run<gshmemi_scope_block>(&t, team, what, dest, src, n, es, root, P,
                                                  (int)blockIdx.x, (int)gridDim.x,
                                                  gshmemi_move_name(what));
}
// One-shot reductions: the looped form, or (ONE) the one-pair form the host picks for a
// reduce whose block has a thread for every LL pair of its slice (same protocol, no loops).
template <class T, int OP, bool ONE>
__global__ void __launch_bounds__(512) gshmemi_reduce_oneshot_kernel(gshmemi_team t, int what, int team,
                                                                     T *dest, const T *src, size_t n) {
    const gshmemi_oneshot_plan P = gshmemi_oneshot_plan_of(&t, n, 16 / sizeof(T), sizeof(T),
                                                           (int)blockIdx.x, (int)gridDim.x);
    gshmemi_pdl_enter();
    if constexpr (ONE)
        gshmemi_reduce_oneshot_one<T, OP, gshmemi_scope_block>(&t, team, dest, src, n, P, (int)blockIdx.x,
                                                               (int)gridDim.x,
                                                               gshmemi_reduce_name(GSHMEMI_COLL_REDUCE));
    else
        gshmemi_reduce_oneshot_run<T, OP, gshmemi_scope_block>(&t, team, what, dest, src, n, P,
                                                               (int)blockIdx.x, (int)gridDim.x,
                                                               gshmemi_reduce_name(what));
}

// Vectors in flight per thread and member: 4 for 4- and 8-byte types; fewer for narrow
// ones, whose 16-byte vectors already hold 8 or 16 elements (and as many accumulators).
template <class T> __host__ __device__ constexpr int gshmemi_unroll() { return sizeof(T) >= 4 ? 4 : sizeof(T) == 2 ? 2 : 1; }

template <class T, int OP>
__global__ void __launch_bounds__(512) gshmemi_reduce_kernel(gshmemi_team t, int what, int team,
                                                             T *dest, const T *src, size_t n) {
    gshmemi_pdl_enter();
    gshmemi_reduce_t<T, OP, gshmemi_scope_block, gshmemi_unroll<T>()>(&t, team, what, dest, src, n,
                                                    (int)blockIdx.x, (int)gridDim.x,
                                                    gshmemi_reduce_name(what));
}

// Threads of a one-shot kernel: one per LL pair of a channel's slice, in whole warps, up to the
// kernels' __launch_bounds__ (GSHMEM_COLL_THREADS sizes the two-round kernels): an 8-byte call
// runs one warp, whose block barriers are nearly free.
static const size_t ONESHOT_MAX_THREADS = 512;
static int oneshot_threads(size_t pairs) {
    size_t want = (pairs + 31) / 32 * 32;
    return (int)(want < ONESHOT_MAX_THREADS ? want : ONESHOT_MAX_THREADS);
}

extern "C" int gshmemi_launch_team_sync(void *stream, const void *team_entry) {
    return launch_k(gshmemi_team_sync_kernel, 1, 32, stream, *(const gshmemi_team *)team_entry);
}

extern "C" int gshmemi_launch_move(void *stream, const void *team_entry, int what, int team,
                                   void *dest, const void *src, size_t n, size_t es, int root,
                                   ptrdiff_t dst, ptrdiff_t sst, int nch, int threads) {
    const gshmemi_team *t = (const gshmemi_team *)team_entry;
    if (gshmemi_move_oneshot_ok(t, what, n * es, nch))
        return launch_k(gshmemi_move_oneshot_kernel, nch, oneshot_threads(gshmemi_geom_oneshot_pairs(n * es, 16, 1, nch)),
                        stream, *t, what, team, dest,
                        src, n, es, root);
    return launch_k(gshmemi_move_kernel, nch, threads, stream, *t, what, team, dest, src, n, es,
                    root, dst, sst);
}

extern "C" int gshmemi_launch_move_rounds(void *stream, const void *team_entry, int what, int team,
                                          int first, size_t n, size_t es, int root, ptrdiff_t dst,
                                          ptrdiff_t sst, int nch) {
    // the completion rounds follow an event wait (the copy engine's join): launched plainly
    const gshmemi_team *t = (const gshmemi_team *)team_entry;
    return first ? launch_k(gshmemi_move_rounds_kernel, nch, 32, stream, *t, what, team, first, n,
                            es, root, dst, sst)
                 : launch_k_serial(gshmemi_move_rounds_kernel, nch, 32, stream, *t, what, team, first,
                                   n, es, root, dst, sst);
}

extern "C" int gshmemi_launch_local_copy(void *stream, void *dest, const void *src, size_t n,
                                         int blocks, int threads) {
    return launch_k(gshmemi_local_copy_kernel, blocks, threads, stream, (char *)dest,
                    (const char *)src, n);
}

template <class T, int OP>
static int launch(void *stream, const void *te, int what, int team, void *dest, const void *src,
                  size_t n, int nch, int threads) {
    const gshmemi_team *t = (const gshmemi_team *)te;
    if (gshmemi_oneshot(t, n * sizeof(T), nch)) {
        size_t pairs = gshmemi_geom_oneshot_pairs(n, 16 / sizeof(T), sizeof(T), nch);
        bool one = what == GSHMEMI_COLL_REDUCE && pairs <= ONESHOT_MAX_THREADS;
        return launch_k(one ? gshmemi_reduce_oneshot_kernel<T, OP, true>
                            : gshmemi_reduce_oneshot_kernel<T, OP, false>,
                        nch, oneshot_threads(pairs), stream, *t, what, team, (T *)dest, (const T *)src, n);
    }
    return launch_k(gshmemi_reduce_kernel<T, OP>, nch, threads, stream, *t, what, team, (T *)dest,
                    (const T *)src, n);
}

template <class T>
static int launch_op(int op, void *stream, const void *te, int what, int team, void *dest,
                     const void *src, size_t n, int nch, int threads) {
    switch (op) {
#define GSHMEMI_CASE(OPNAME, OPCODE, unused)                                                 \
    case OPCODE: return launch<T, OPCODE>(stream, te, what, team, dest, src, n, nch, threads);
        GSHMEM_REDUCE_ARITH_OPS(GSHMEMI_CASE, 0)
#undef GSHMEMI_CASE
    default: break;
    }
    if constexpr (std::is_integral<T>::value) {
        switch (op) {
#define GSHMEMI_CASE(OPNAME, OPCODE, unused)                                                 \
    case OPCODE: return launch<T, OPCODE>(stream, te, what, team, dest, src, n, nch, threads);
            GSHMEM_REDUCE_BIT_OPS(GSHMEMI_CASE, 0)
#undef GSHMEMI_CASE
        default: break;
        }
    }
    return (int)cudaErrorInvalidValue;
}

// Storage types by GSHMEMI_TYPE_CODE: every OpenSHMEM reduction type is one of these.
extern "C" int gshmemi_launch_reduce(void *stream, const void *te, int what, int op, int type_code,
                                     int team, void *dest, const void *src, size_t n, int nch,
                                     int threads) {
#define GSHMEMI_TC(KIND, T)                                                                  \
    case GSHMEMI_KIND_##KIND * 16 + (int)sizeof(T):                                          \
        return launch_op<T>(op, stream, te, what, team, dest, src, n, nch, threads);
    switch (type_code) {
        GSHMEMI_TC(UINT, uint8_t) GSHMEMI_TC(UINT, uint16_t) GSHMEMI_TC(UINT, uint32_t)
        GSHMEMI_TC(UINT, uint64_t) GSHMEMI_TC(SINT, int8_t) GSHMEMI_TC(SINT, int16_t)
        GSHMEMI_TC(SINT, int32_t) GSHMEMI_TC(SINT, int64_t) GSHMEMI_TC(FLOAT, float)
        GSHMEMI_TC(FLOAT, double) GSHMEMI_TC(FLOAT, __half) GSHMEMI_TC(BF16, __nv_bfloat16)
    default: return (int)cudaErrorInvalidValue;
    }
#undef GSHMEMI_TC
}
