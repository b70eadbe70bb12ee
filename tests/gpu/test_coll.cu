/* Proves the collectives (docs/collectives.md). Every collective (broadcast, fcollect, collect
 * with per-PE counts, alltoall, alltoalls, <op>_reduce for sum/prod/min/max/and/or/xor,
 * <op>_reducescatter, sum_inscan, sum_exscan, and the byte forms) on every team shape (WORLD,
 * SHARED, NODE, SAME_MYPE_NODE, the even PEs, PEs 1..n-1, both axes of a 2-D split) in every form: one thread, a warp
 * and a block in a kernel, on a stream, and blocking from the host. Host forms run over every
 * type of each list (X-macros over gshmem/types.h); the device forms over a representative
 * subset (int, float, int64, uint8, double, half, bytes). Data is random each run (seed
 * printed; GSHMEM_TEST_SEED replays) and is checked against a CPU reference: exact for
 * integers, to a relative tolerance for float/double/half/bfloat16 (the data is chosen so the
 * float results are exact anyway). dest is poisoned before each call, and every byte around
 * the result (a guard after and before it, and the gaps of alltoalls) must still hold the
 * poison; the source must be unchanged. Sizes 1, 7, 1023, 33333 and random; on a stream also
 * 64 MiB and 256 MiB (float sum reduce, fcollect). In-place reduce and scans. Then: 200
 * back-to-back in-place reduces alternating two teams with no barrier (host, stream, thread,
 * warp, block); two teams reducing at once on two streams and in two blocks of one kernel; a
 * CUDA graph of 20 on-stream reduces + a kernel + a broadcast replayed 100 times.
 * Across nodes (gshmrun --nodes K, GSHMEM_NODES): teams whose members span nodes take the
 * cross-node algorithms, in every form (device forms included: routing is always compiled in).
 * usage: test_coll [--quick]   (--quick: small sizes, fewer rounds; for compute-sanitizer) */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>

#include <limits>
#include <type_traits>
#include <vector>

#include "common.h"

#define POISON 0xA5
#define GUARD 256        /* poisoned bytes before and after every result */
#define MAX_ELEMS 33333  /* largest count of the regular rounds */
#define MAX_STRIDE 3     /* alltoalls strides */

static bool quick;
static uint64_t g_seed;
static int g_me, g_np;

enum { C_BCAST, C_FCOLLECT, C_COLLECT, C_ALLTOALL, C_ALLTOALLS, C_REDUCE, C_RSCATTER, C_INSCAN, C_EXSCAN, N_COLLS };
static const char *coll_name[N_COLLS] = {"broadcast", "fcollect", "collect", "alltoall", "alltoalls",
                                         "reduce", "reducescatter", "inscan", "exscan"};
enum { OP_SUM, OP_PROD, OP_MIN, OP_MAX, OP_AND, OP_OR, OP_XOR, N_OPS, OP_NONE = 0 };
static const char *op_name[N_OPS] = {"sum", "prod", "min", "max", "and", "or", "xor"};
enum { F_THREAD, F_WARP, F_BLOCK, F_STREAM, F_HOST, N_FORMS };
static const char *form_name[N_FORMS] = {"device thread", "device warp", "device block", "on_stream", "host blocking"};
#define KEY(c, o) ((c) * 8 + (o))

/* Arguments of one collective call, the same for every form. */
struct cargs {
    int coll, op;
    gshmem_team_t team;
    void *dest;
    const void *src;
    size_t n;
    int root;
    ptrdiff_t dst, sst;
    int *status;   /* mapped host memory: the device forms' return value */
};

/* ---- host and on-stream forms: one dispatcher per (list, TYPENAME) --------------------- */
typedef int (*host_fn)(int form, const cargs &a, cudaStream_t st);

static int hmov_mem(int form, const cargs &a, cudaStream_t st) {
    void *d = a.dest;
    const void *s = a.src;
    bool S = form == F_STREAM;
    switch (a.coll) {
    case C_BCAST: return S ? gshmemx_broadcastmem_on_stream(a.team, d, s, a.n, a.root, st) : gshmem_broadcastmem(a.team, d, s, a.n, a.root);
    case C_FCOLLECT: return S ? gshmemx_fcollectmem_on_stream(a.team, d, s, a.n, st) : gshmem_fcollectmem(a.team, d, s, a.n);
    case C_COLLECT: return S ? gshmemx_collectmem_on_stream(a.team, d, s, a.n, st) : gshmem_collectmem(a.team, d, s, a.n);
    case C_ALLTOALL: return S ? gshmemx_alltoallmem_on_stream(a.team, d, s, a.n, st) : gshmem_alltoallmem(a.team, d, s, a.n);
    case C_ALLTOALLS:
        return S ? gshmemx_alltoallsmem_on_stream(a.team, d, s, a.dst, a.sst, a.n, st)
                 : gshmem_alltoallsmem(a.team, d, s, a.dst, a.sst, a.n);
    }
    return -999;
}

#define HOST_MOVERS(NAME, T)                                                                 \
    static int hmov_##NAME(int form, const cargs &a, cudaStream_t st) {                      \
        T *d = (T *)a.dest;                                                                  \
        const T *s = (const T *)a.src;                                                       \
        bool S = form == F_STREAM;                                                           \
        switch (a.coll) {                                                                    \
        case C_BCAST:                                                                        \
            return S ? gshmemx_##NAME##_broadcast_on_stream(a.team, d, s, a.n, a.root, st)   \
                     : gshmem_##NAME##_broadcast(a.team, d, s, a.n, a.root);                 \
        case C_FCOLLECT:                                                                     \
            return S ? gshmemx_##NAME##_fcollect_on_stream(a.team, d, s, a.n, st)            \
                     : gshmem_##NAME##_fcollect(a.team, d, s, a.n);                          \
        case C_COLLECT:                                                                      \
            return S ? gshmemx_##NAME##_collect_on_stream(a.team, d, s, a.n, st)             \
                     : gshmem_##NAME##_collect(a.team, d, s, a.n);                           \
        case C_ALLTOALL:                                                                     \
            return S ? gshmemx_##NAME##_alltoall_on_stream(a.team, d, s, a.n, st)            \
                     : gshmem_##NAME##_alltoall(a.team, d, s, a.n);                          \
        case C_ALLTOALLS:                                                                    \
            return S ? gshmemx_##NAME##_alltoalls_on_stream(a.team, d, s, a.dst, a.sst, a.n, st) \
                     : gshmem_##NAME##_alltoalls(a.team, d, s, a.dst, a.sst, a.n);           \
        }                                                                                    \
        return -999;                                                                         \
    }
GSHMEM_RMA_TYPES(HOST_MOVERS)

/* reductions: one case per (collective, op) of the list */
#define RED_CASES(NAME, OPN, OPC)                                                            \
    case KEY(C_REDUCE, OPC):                                                                 \
        return S ? gshmemx_##NAME##_##OPN##_reduce_on_stream(a.team, d, s, a.n, st)          \
                 : gshmem_##NAME##_##OPN##_reduce(a.team, d, s, a.n);                        \
    case KEY(C_RSCATTER, OPC):                                                               \
        return S ? gshmemx_##NAME##_##OPN##_reducescatter_on_stream(a.team, d, s, a.n, st)   \
                 : gshmem_##NAME##_##OPN##_reducescatter(a.team, d, s, a.n);
#define HOST_RED(PFX, NAME, T, CASES)                                                        \
    static int PFX##_##NAME(int form, const cargs &a, cudaStream_t st) {                     \
        T *d = (T *)a.dest;                                                                  \
        const T *s = (const T *)a.src;                                                       \
        bool S = form == F_STREAM;                                                           \
        switch (KEY(a.coll, a.op)) { CASES }                                                 \
        return -999;                                                                         \
    }
#define BIT_CASES(NAME) RED_CASES(NAME, and, OP_AND) RED_CASES(NAME, or, OP_OR) RED_CASES(NAME, xor, OP_XOR)
#define MM_CASES(NAME) RED_CASES(NAME, min, OP_MIN) RED_CASES(NAME, max, OP_MAX)
#define AR_CASES(NAME)                                                                       \
    RED_CASES(NAME, sum, OP_SUM) RED_CASES(NAME, prod, OP_PROD)                              \
    case KEY(C_INSCAN, OP_SUM):                                                              \
        return S ? gshmemx_##NAME##_sum_inscan_on_stream(a.team, d, s, a.n, st)              \
                 : gshmem_##NAME##_sum_inscan(a.team, d, s, a.n);                            \
    case KEY(C_EXSCAN, OP_SUM):                                                              \
        return S ? gshmemx_##NAME##_sum_exscan_on_stream(a.team, d, s, a.n, st)              \
                 : gshmem_##NAME##_sum_exscan(a.team, d, s, a.n);
#define HOST_BIT(NAME, T) HOST_RED(hbit, NAME, T, BIT_CASES(NAME))
#define HOST_MM(NAME, T) HOST_RED(hmm, NAME, T, MM_CASES(NAME))
#define HOST_AR(NAME, T) HOST_RED(har, NAME, T, AR_CASES(NAME))
GSHMEM_REDUCE_BIT_TYPES(HOST_BIT)
GSHMEM_REDUCE_MINMAX_TYPES(HOST_MM)
GSHMEM_REDUCE_ARITH_TYPES(HOST_AR)
#define HOST_HALF(NAME, T) HOST_RED(hhalf, NAME, T, MM_CASES(NAME) AR_CASES(NAME))
GSHMEM_REDUCE_HALF_TYPES(HOST_HALF)

/* ---- device forms: a representative subset ------------------------------------------------
 * Each entry X(NAME, T, SCOPE, WHAT) is one small kernel calling the WHAT group of
 * collectives at SCOPE: bytes (the *mem movers), movers (the typed movers), sumscan (sum
 * reduce/reducescatter and both scans), or one operator (reduce and reducescatter). Kernels
 * stay small (one collective inlined per case) and the (type, operator) pairs rotate over the
 * scopes, so every device type meets every operator it has in some scope without ~300
 * instantiations. The same list answers "is this round's device form compiled?". */
#define DEV_SET(X)                                                                           \
    X(mem, uint8_t, thread, bytes) X(int, int, thread, movers) X(int, int, thread, sumscan)  \
    X(int, int, thread, min) X(float, float, thread, sumscan) X(float, float, thread, prod)   \
    X(int64, int64_t, thread, xor) X(int64, int64_t, thread, max)                           \
    X(uint8, uint8_t, thread, and) X(uint8, uint8_t, thread, sum)                           \
    X(double, double, thread, min) X(double, double, thread, sum)                           \
    X(half, __half, thread, sumscan) X(half, __half, thread, max)                           \
    X(mem, uint8_t, warp, bytes) X(int64, int64_t, warp, movers) X(int, int, warp, prod)     \
    X(int, int, warp, max) X(float, float, warp, min) X(float, float, warp, sum)             \
    X(int64, int64_t, warp, sumscan) X(int64, int64_t, warp, or)                            \
    X(uint8, uint8_t, warp, xor) X(uint8, uint8_t, warp, max)                               \
    X(double, double, warp, sumscan) X(double, double, warp, prod)                          \
    X(half, __half, warp, sum) X(half, __half, warp, prod)                                  \
    X(mem, uint8_t, block, bytes) X(double, double, block, movers) X(int, int, block, sumscan) \
    X(int, int, block, max) X(float, float, block, sum) X(float, float, block, max)          \
    X(int64, int64_t, block, and) X(int64, int64_t, block, prod) X(int64, int64_t, block, min) \
    X(uint8, uint8_t, block, or) X(uint8, uint8_t, block, min) X(uint8, uint8_t, block, prod) \
    X(uint8, uint8_t, block, sumscan) X(double, double, block, max)                         \
    X(half, __half, block, sumscan) X(half, __half, block, min)

#define SCALL_thread(FN) gshmem_##FN
#define SCALL_warp(FN) gshmemx_##FN##_warp
#define SCALL_block(FN) gshmemx_##FN##_block
static const int SCOPE_thread = F_THREAD, SCOPE_warp = F_WARP, SCOPE_block = F_BLOCK;

#define DK_RED(NAME, SC, OPN, OPC)                                                           \
    case KEY(C_REDUCE, OPC): r = SCALL_##SC(NAME##_##OPN##_reduce)(a.team, d, s, a.n); break; \
    case KEY(C_RSCATTER, OPC): r = SCALL_##SC(NAME##_##OPN##_reducescatter)(a.team, d, s, a.n); break;
#define DK_sum(NAME, SC) DK_RED(NAME, SC, sum, OP_SUM)
#define DK_prod(NAME, SC) DK_RED(NAME, SC, prod, OP_PROD)
#define DK_min(NAME, SC) DK_RED(NAME, SC, min, OP_MIN)
#define DK_max(NAME, SC) DK_RED(NAME, SC, max, OP_MAX)
#define DK_and(NAME, SC) DK_RED(NAME, SC, and, OP_AND)
#define DK_or(NAME, SC) DK_RED(NAME, SC, or, OP_OR)
#define DK_xor(NAME, SC) DK_RED(NAME, SC, xor, OP_XOR)
#define DK_sumscan(NAME, SC)                                                                 \
    DK_RED(NAME, SC, sum, OP_SUM)                                                            \
    case KEY(C_INSCAN, OP_SUM): r = SCALL_##SC(NAME##_sum_inscan)(a.team, d, s, a.n); break; \
    case KEY(C_EXSCAN, OP_SUM): r = SCALL_##SC(NAME##_sum_exscan)(a.team, d, s, a.n); break;
#define DK_movers(NAME, SC)                                                                  \
    case KEY(C_BCAST, 0): r = SCALL_##SC(NAME##_broadcast)(a.team, d, s, a.n, a.root); break; \
    case KEY(C_FCOLLECT, 0): r = SCALL_##SC(NAME##_fcollect)(a.team, d, s, a.n); break;      \
    case KEY(C_COLLECT, 0): r = SCALL_##SC(NAME##_collect)(a.team, d, s, a.n); break;        \
    case KEY(C_ALLTOALL, 0): r = SCALL_##SC(NAME##_alltoall)(a.team, d, s, a.n); break;      \
    case KEY(C_ALLTOALLS, 0): r = SCALL_##SC(NAME##_alltoalls)(a.team, d, s, a.dst, a.sst, a.n); break;
#define DK_bytes(NAME, SC)                                                                   \
    case KEY(C_BCAST, 0): r = SCALL_##SC(broadcastmem)(a.team, d, s, a.n, a.root); break;    \
    case KEY(C_FCOLLECT, 0): r = SCALL_##SC(fcollectmem)(a.team, d, s, a.n); break;          \
    case KEY(C_COLLECT, 0): r = SCALL_##SC(collectmem)(a.team, d, s, a.n); break;            \
    case KEY(C_ALLTOALL, 0): r = SCALL_##SC(alltoallmem)(a.team, d, s, a.n); break;          \
    case KEY(C_ALLTOALLS, 0): r = SCALL_##SC(alltoallsmem)(a.team, d, s, a.dst, a.sst, a.n); break;

/* Declared for 768-thread blocks, as docs/collectives.md tells users to: without the hint a
 * kernel calling several block-scope collectives takes 74..82 registers (the count moves with
 * unrelated code), one over the 80 that a 768-thread block allows; with it ptxas fits them in
 * 80 without spilling. back_to_back's block kernel holds the no-hint line (640 threads). */
#define DEV_KERNEL(NAME, T, SC, WHAT)                                                        \
    __global__ void __launch_bounds__(768) dk_##NAME##_##SC##_##WHAT(cargs a) {              \
        T *d = (T *)a.dest;                                                                  \
        const T *s = (const T *)a.src;                                                       \
        int r = -999;                                                                        \
        switch (KEY(a.coll, a.op)) { DK_##WHAT(NAME, SC) }                                   \
        if (threadIdx.x == 0) *a.status = r;                                                 \
    }
DEV_SET(DEV_KERNEL)

static bool covers_(const char *what, int coll, int op) {
    if (!strcmp(what, "bytes") || !strcmp(what, "movers")) return coll < C_REDUCE;
    if (!strcmp(what, "sumscan")) return coll >= C_REDUCE && op == OP_SUM;
    if (coll != C_REDUCE && coll != C_RSCATTER) return false;
    return !strcmp(what, op_name[op]);
}
/* Launches the device form of (name, form, coll, op) if one is compiled (dry: only says so). */
static bool dev_launch(const char *name, int form, const cargs &a, int threads, cudaStream_t st, bool dry) {
#define DEV_TRY(NAME, T, SC, WHAT)                                                           \
    if (form == SCOPE_##SC && !strcmp(name, #NAME) && covers_(#WHAT, a.coll, a.op)) {        \
        if (!dry)                                                                            \
            dk_##NAME##_##SC##_##WHAT<<<1, form == F_THREAD ? 1 : form == F_WARP ? 32 : threads, 0, st>>>(a); \
        return true;                                                                         \
    }
    DEV_SET(DEV_TRY)
#undef DEV_TRY
    return false;
}

/* ---- numeric traits: host reference arithmetic ------------------------------------------ */
template <class T> struct num {
    static const bool flt = std::is_floating_point<T>::value;
    static double d(T v) { return (double)v; }
    static T f(double x) { return (T)x; }
    static double tol() { return std::is_same<T, float>::value ? 1e-6 : 1e-12; }
};
template <> struct num<__half> {
    static const bool flt = true;
    static double d(__half v) { return __half2float(v); }
    static __half f(double x) { return __float2half((float)x); }
    static double tol() { return 1e-2; }
};
template <> struct num<__nv_bfloat16> {
    static const bool flt = true;
    static double d(__nv_bfloat16 v) { return __bfloat162float(v); }
    static __nv_bfloat16 f(double x) { return __float2bfloat16((float)x); }
    static double tol() { return 2e-2; }
};

/* A value for member `pidx` of the team, drawn so that the reference never overflows and
 * float sums/products are exact: bitwise/min/max get random bits (integers) or a wide range
 * (floats); sums get values small enough for 16 PEs; products get 0 (rarely), ±1 and ±2
 * (few enough 2s for the type), or ±0.5/1/2 for floats. */
template <class T> static T gen_val(int coll, int op, uint64_t *rng, int pidx) {
    uint64_t x = rng_next(rng);
    T v;
    if (coll < C_REDUCE) {
        memcpy((void *)&v, &x, sizeof v);
        return v;
    }
    if constexpr (!num<T>::flt) {
        const bool sgn = std::numeric_limits<T>::is_signed;
        switch (op) {
        case OP_AND: x |= rng_next(rng); memcpy((void *)&v, &x, sizeof v); return v;
        case OP_OR: x &= rng_next(rng); memcpy((void *)&v, &x, sizeof v); return v;
        case OP_XOR: case OP_MIN: case OP_MAX: memcpy((void *)&v, &x, sizeof v); return v;
        case OP_PROD: {
            if ((x >> 1) % 32 == 0) return (T)0;
            long long m = (pidx < (int)(8 * sizeof(T)) - 2 && (x & 1)) ? 2 : 1;
            if (sgn && (x >> 8 & 1)) m = -m;
            return (T)m;
        }
        default: { /* sum, scans */
            uint64_t lim = (uint64_t)std::numeric_limits<T>::max() >> 4;
            if (sgn) return (T)((long long)(x % (2 * lim + 1)) - (long long)lim);
            return (T)(x % (lim + 1));
        }
        }
    } else {
        bool narrow = sizeof(T) == 2;
        switch (op) {
        case OP_MIN: case OP_MAX:
            return num<T>::f(narrow ? (double)((long long)(x % 2001) - 1000)
                                    : (double)((long long)(x % 2000001) - 1000000) / 16.0);
        case OP_PROD: {
            if ((x >> 1) % 64 == 0) return num<T>::f(0.0);
            static const double m[3] = {0.5, 1.0, 2.0};
            double y = m[(x >> 8) % 3];
            return num<T>::f(x & 1 ? -y : y);
        }
        default:
            return num<T>::f(narrow ? (double)((long long)(x % 17) - 8)
                                    : (double)((long long)(x % 512001) - 256000) / 256.0);
        }
    }
}

/* acc op= v. Integers in T (no overflow by construction); floats in double. */
template <class T> struct acc_of { typedef typename std::conditional<num<T>::flt, double, T>::type type; };
template <class T> static typename acc_of<T>::type acc_val(T v) {
    if constexpr (num<T>::flt) return num<T>::d(v);
    else return v;
}
template <class A> static A combine(int op, A a, A b) {
    switch (op) {
    case OP_SUM: return (A)(a + b);
    case OP_PROD: return (A)(a * b);
    case OP_MIN: return b < a ? b : a;
    case OP_MAX: return b > a ? b : a;
    }
    if constexpr (std::is_integral<A>::value) {
        switch (op) {
        case OP_AND: return (A)(a & b);
        case OP_OR: return (A)(a | b);
        case OP_XOR: return (A)(a ^ b);
        }
    }
    return a;
}
template <class T> static bool value_ok(T got, typename acc_of<T>::type want, double *g, double *w) {
    if constexpr (num<T>::flt) {
        *g = num<T>::d(got);
        *w = want;
        if (*g != *g) return false;
        return fabs(*g - want) <= num<T>::tol() * fmax(1.0, fabs(want));
    } else {
        *g = (double)got;
        *w = (double)want;
        return got == want;
    }
}

/* ---- team shapes ------------------------------------------------------------------------ */
enum { SH_WORLD, SH_SHARED, SH_EVEN, SH_TAIL, SH_X, SH_Y, SH_NODE, SH_SAME_MYPE, N_SHAPES };
static const char *shape_name[N_SHAPES] = {"WORLD", "SHARED", "even PEs (split_strided 0,2)",
                                           "PEs 1..n-1 (split_strided 1,1)", "2-D x axis (xrange 2)",
                                           "2-D y axis (xrange 2)", "NODE", "SAME_MYPE_NODE"};
static gshmem_team_t shape_team[N_SHAPES];

/* The node of world PE pe as gshmrun --nodes K (GSHMEM_NODES) splits one host: consecutive
 * PEs, as even as the count allows (src/host/bootstrap.c), and its index within the node. */
static int g_nodes = 1;
static int node_of(int pe) {
    int parts = g_np < g_nodes ? g_np : g_nodes;
    return (int)((long long)pe * parts / g_np);
}
static int local_of(int pe) {
    int i = 0;
    for (int p = 0; p < pe; p++) i += node_of(p) == node_of(pe);
    return i;
}

/* The world PEs of the team of shape `sh` that world PE `pe` belongs to (empty: none). */
static std::vector<int> group_of(int sh, int pe) {
    std::vector<int> g;
    switch (sh) {
    case SH_WORLD: for (int p = 0; p < g_np; p++) g.push_back(p); break;
    case SH_EVEN: if (pe % 2 == 0) for (int p = 0; p < g_np; p += 2) g.push_back(p); break;
    case SH_TAIL: if (pe >= 1) for (int p = 1; p < g_np; p++) g.push_back(p); break;
    case SH_X: for (int p = pe / 2 * 2; p < pe / 2 * 2 + 2 && p < g_np; p++) g.push_back(p); break;
    case SH_Y: for (int p = pe % 2; p < g_np; p += 2) g.push_back(p); break;
    case SH_SHARED:   /* the PEs of the node, as NODE */
    case SH_NODE:
        for (int p = 0; p < g_np; p++) if (node_of(p) == node_of(pe)) g.push_back(p);
        break;
    case SH_SAME_MYPE: for (int p = 0; p < g_np; p++) if (local_of(p) == local_of(pe)) g.push_back(p); break;
    }
    return g;
}

static void make_shapes(void) {
    int np = g_np;
    shape_team[SH_WORLD] = GSHMEM_TEAM_WORLD;
    shape_team[SH_SHARED] = GSHMEM_TEAM_SHARED;
    shape_team[SH_NODE] = GSHMEMX_TEAM_NODE;
    shape_team[SH_SAME_MYPE] = GSHMEMX_TEAM_SAME_MYPE_NODE;
    const char *nodes = getenv("GSHMEM_NODES");
    if (nodes && atoi(nodes) > 1) g_nodes = atoi(nodes);
    int rc = gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 2, (np + 1) / 2, NULL, 0, &shape_team[SH_EVEN]);
    EXPECT(rc == 0, "split_strided(WORLD, 0, 2, %d) returned %d", (np + 1) / 2, rc);
    rc = gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 1, 1, np - 1, NULL, 0, &shape_team[SH_TAIL]);
    EXPECT(rc == 0, "split_strided(WORLD, 1, 1, %d) returned %d", np - 1, rc);
    rc = gshmem_team_split_2d(GSHMEM_TEAM_WORLD, 2, NULL, 0, &shape_team[SH_X], NULL, 0, &shape_team[SH_Y]);
    EXPECT(rc == 0, "split_2d(WORLD, 2) returned %d", rc);
    /* the formulas above must agree with the library's view */
    for (int sh = 0; sh < N_SHAPES; sh++) {
        std::vector<int> g = group_of(sh, g_me);
        gshmem_team_t t = shape_team[sh];
        if (g.empty()) {
            EXPECT(t == GSHMEM_TEAM_INVALID, "team %s: PE %d is not a member but got handle %d", shape_name[sh], g_me, (int)t);
            continue;
        }
        EXPECT(t != GSHMEM_TEAM_INVALID && gshmem_team_n_pes(t) == (int)g.size(),
               "team %s: n_pes %d, expected %zu", shape_name[sh], t == GSHMEM_TEAM_INVALID ? -1 : gshmem_team_n_pes(t), g.size());
        for (size_t i = 0; i < g.size() && t != GSHMEM_TEAM_INVALID; i++) {
            int w = gshmem_team_translate_pe(t, (int)i, GSHMEM_TEAM_WORLD);
            EXPECT(w == g[i], "team %s: team PE %zu is world PE %d, expected %d", shape_name[sh], i, w, g[i]);
            if (g[i] == g_me) EXPECT(gshmem_team_my_pe(t) == (int)i, "team %s: my_pe %d, expected %zu", shape_name[sh], gshmem_team_my_pe(t), i);
        }
    }
}

/* ---- buffers and status ------------------------------------------------------------------ */
static uint8_t *g_src, *g_dst;   /* symmetric */
static size_t g_buf_bytes;
static int *g_status;            /* mapped */
static cudaStream_t g_stream;

__global__ void fill_poison(uint8_t *p, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = POISON;
}

/* ---- one round -------------------------------------------------------------------------- */
struct tentry;
struct round_t {
    int id, coll, op, form, shape, threads;
    size_t n, doff, soff;       /* elements; offsets of dest and source past the guard */
    ptrdiff_t dst, sst;
    int root;
    bool inplace;
    const tentry *te;
};
typedef void (*round_fn)(const round_t &r);
struct tentry {
    const char *name;
    size_t size;
    round_fn run;
    host_fn host;
};

static uint64_t mix(uint64_t a, uint64_t b) {
    uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull);
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    return (x ^ (x >> 29)) | 1;
}

/* elements of world PE gpe's collect contribution: 0 .. n, drawn per round */
static size_t collect_count(const round_t &r, int gpe) {
    if (r.n == 1) return (size_t)(gpe % 2);
    uint64_t s = mix(g_seed ^ ((uint64_t)r.id << 20), 0xC011EC7u + gpe);
    return rng_next(&s) % (r.n + 1);
}

static size_t g_rounds;

template <class T> static void run_round(const round_t &r) {
    typedef typename acc_of<T>::type A;
    const size_t sz = sizeof(T);
    std::vector<int> grp = group_of(r.shape, g_me);
    const int nt = (int)grp.size();
    int me_t = -1;
    for (int i = 0; i < nt; i++)
        if (grp[i] == g_me) me_t = i;
    const bool member = me_t >= 0;
    const size_t n = r.n;
    const bool red = r.coll == C_REDUCE || r.coll == C_RSCATTER, scan = r.coll == C_INSCAN || r.coll == C_EXSCAN;
    char what[512];
    snprintf(what, sizeof what, "round %d: %s gshmem_%s_%s%s (team %s, %d PEs, team PE %d) %zu elements%s%s, "
             "dest +%zu, source +%zu elements", r.id, form_name[r.form], r.te->name,
             red ? op_name[r.op] : scan ? "sum_" : "", red ? (r.coll == C_REDUCE ? "_reduce" : "_reducescatter")
             : coll_name[r.coll], shape_name[r.shape], nt, me_t, n, r.inplace ? ", in place" : "",
             r.form == F_BLOCK ? (r.threads == 768 ? ", 768 threads" : ", 256 threads") : "", r.doff, r.soff);

    /* extents (elements) of sources and dest */
    std::vector<size_t> cnt(nt > 0 ? nt : 1, n);
    size_t src_elems = n, dest_elems = n;
    switch (r.coll) {
    case C_FCOLLECT: dest_elems = nt * n; break;
    case C_COLLECT:
        dest_elems = 0;
        for (int j = 0; j < nt; j++) dest_elems += cnt[j] = collect_count(r, grp[j]);
        break;
    case C_ALLTOALL: src_elems = dest_elems = nt * n; break;
    case C_ALLTOALLS:
        src_elems = nt ? r.sst * (nt * n - 1) + 1 : 0;
        dest_elems = nt ? r.dst * (nt * n - 1) + 1 : 0;
        break;
    case C_RSCATTER: src_elems = nt * n; break;
    }
    std::vector<std::vector<T>> data(nt);
    for (int j = 0; j < nt; j++) {
        size_t m = r.coll == C_COLLECT ? cnt[j] : src_elems;
        data[j].resize(m ? m : 1);
        uint64_t s = mix(g_seed ^ ((uint64_t)r.id << 20), grp[j]);
        for (size_t k = 0; k < m; k++) data[j][k] = gen_val<T>(r.coll, r.op, &s, j);
    }
    size_t my_src = member ? (r.coll == C_COLLECT ? cnt[me_t] : src_elems) : 0;
    size_t region = 2 * GUARD + (r.doff + dest_elems) * sz;
    size_t sregion = 2 * GUARD + (r.soff + src_elems) * sz;
    if (region > g_buf_bytes || sregion > g_buf_bytes) {   /* a bug of this test: stop everyone */
        fprintf(stderr, "%s: test buffers too small (%zu / %zu of %zu bytes)\n", what, region, sregion, g_buf_bytes);
        gshmem_global_exit(2);
    }
    uint8_t *dest = g_dst + GUARD + r.doff * sz;
    uint8_t *src = r.inplace ? dest : g_src + GUARD + r.soff * sz;
    fill_poison<<<128, 256>>>(g_dst, region);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    if (my_src) CK(cudaMemcpy(src, data[me_t].data(), my_src * sz, cudaMemcpyHostToDevice));
    gshmem_barrier_all();
    g_rounds++;

    if (member) {
        cargs a;
        a.coll = r.coll;
        a.op = r.coll >= C_REDUCE ? r.op : 0;
        a.team = shape_team[r.shape];
        a.dest = dest;
        a.src = src;
        a.n = r.coll == C_COLLECT ? cnt[me_t] : n;
        a.root = r.root % nt;
        a.dst = r.dst;
        a.sst = r.sst;
        a.status = g_status;
        int rc;
        if (r.form <= F_BLOCK) {
            *g_status = -12345;
            dev_launch(r.te->name, r.form, a, r.threads, g_stream, false);
            cudaError_t e = cudaGetLastError();
            if (e != cudaSuccess) {
                EXPECT(0, "%s: kernel launch failed: %s", what, cudaGetErrorString(e));
                summary("test_coll");
                gshmem_global_exit(3);   /* the team's other PEs would wait for this one */
            }
            CK(cudaStreamSynchronize(g_stream));
            rc = *g_status;
        } else {
            rc = r.te->host(r.form, a, g_stream);
            if (r.form == F_STREAM) CK(cudaStreamSynchronize(g_stream));
        }
        EXPECT(rc == 0, "%s: returned %d", what, rc);
    }
    CK(cudaDeviceSynchronize());

    if (member) {
        std::vector<uint8_t> got(region);
        CK(cudaMemcpy(got.data(), g_dst, region, cudaMemcpyDeviceToHost));
        const uint8_t *res = got.data() + GUARD + r.doff * sz;
        /* expected: bytes (movers) or values (reductions, scans); written[e] marks result
         * elements (alltoalls leaves gaps that must keep the poison) */
        std::vector<T> wt;
        std::vector<A> wa;
        std::vector<char> written(dest_elems, 1);
        const int i = me_t;
        if (!red && !scan) wt.resize(dest_elems ? dest_elems : 1);
        else wa.resize(dest_elems ? dest_elems : 1);
        switch (r.coll) {
        case C_BCAST:
            for (size_t k = 0; k < n; k++) wt[k] = data[r.root % nt][k];
            break;
        case C_FCOLLECT:
            for (int j = 0; j < nt; j++)
                for (size_t k = 0; k < n; k++) wt[j * n + k] = data[j][k];
            break;
        case C_COLLECT: {
            size_t o = 0;
            for (int j = 0; j < nt; j++)
                for (size_t k = 0; k < cnt[j]; k++) wt[o++] = data[j][k];
            break;
        }
        case C_ALLTOALL:
            for (int j = 0; j < nt; j++)
                for (size_t k = 0; k < n; k++) wt[j * n + k] = data[j][i * n + k];
            break;
        case C_ALLTOALLS:
            std::fill(written.begin(), written.end(), 0);
            for (int j = 0; j < nt; j++)
                for (size_t k = 0; k < n; k++) {
                    size_t e = r.dst * (j * n + k);
                    wt[e] = data[j][r.sst * (i * n + k)];
                    written[e] = 1;
                }
            break;
        case C_REDUCE:
        case C_RSCATTER: {
            size_t base = r.coll == C_RSCATTER ? i * n : 0;
            for (size_t k = 0; k < n; k++) {
                A v = acc_val(data[0][base + k]);
                for (int j = 1; j < nt; j++) v = combine<A>(r.op, v, acc_val(data[j][base + k]));
                wa[k] = v;
            }
            break;
        }
        default: /* scans */
            for (size_t k = 0; k < n; k++) {
                A v = A(0);
                for (int j = 0; j < (r.coll == C_INSCAN ? i + 1 : i); j++) v = combine<A>(OP_SUM, v, acc_val(data[j][k]));
                wa[k] = v;
            }
        }
        first_bad fb;
        double fg = 0, fw = 0;
        for (size_t e = 0; e < dest_elems; e++) {
            const uint8_t *p = res + e * sz;
            if (!written[e]) {
                for (size_t b = 0; b < sz; b++)
                    if (p[b] != POISON) { fb.note(e, POISON, p[b]); break; }
            } else if (!red && !scan) {
                if (memcmp(p, &wt[e], sz)) {
                    unsigned long long w = 0, g = 0;
                    memcpy(&w, &wt[e], sz < 8 ? sz : 8);
                    memcpy(&g, p, sz < 8 ? sz : 8);
                    fb.note(e, w, g);
                }
            } else {
                T g;
                memcpy(&g, p, sz);
                double gd, wd;
                if (!value_ok<T>(g, wa[e], &gd, &wd)) {
                    if (!fb.count) { fg = gd; fw = wd; }
                    fb.note(e, (unsigned long long)(long long)wd, (unsigned long long)(long long)gd);
                }
            }
        }
        if (fb.count && (red || scan) && written[fb.index])
            EXPECT(0, "%s: %zu of %zu results wrong, first dest[%zu] = %.17g, expected %.17g", what, fb.count,
                   dest_elems, fb.index, fg, fw);
        else
            EXPECT(fb.count == 0, "%s: %zu of %zu result elements wrong, first dest[%zu]: expected 0x%llx, got 0x%llx%s",
                   what, fb.count, dest_elems, fb.index, fb.expected, fb.actual,
                   fb.count && !written[fb.index] ? " (an alltoalls gap, must keep the poison)" : "");
        /* guards: the bytes before and after the result */
        size_t before = GUARD + r.doff * sz, after_at = before + dest_elems * sz;
        size_t bad_g = 0, first_g = 0;
        for (size_t b = 0; b < region; b++) {
            if (b == before) b = after_at;
            if (b < region && got[b] != POISON && !bad_g++) first_g = b;
        }
        EXPECT(bad_g == 0, "%s: %zu guard bytes around the result were written, first at byte %lld relative to dest",
               what, bad_g, (long long)first_g - (long long)before);
        /* the source is left as it was */
        if (!r.inplace && my_src) {
            std::vector<T> back(my_src);
            CK(cudaMemcpy(back.data(), src, my_src * sz, cudaMemcpyDeviceToHost));
            EXPECT(!memcmp(back.data(), data[me_t].data(), my_src * sz), "%s: the source was modified", what);
        }
    }
    gshmem_barrier_all();
}

/* ---- type tables ------------------------------------------------------------------------ */
#define MOV_ENTRY(NAME, T) {#NAME, sizeof(T), run_round<T>, hmov_##NAME},
#define BIT_ENTRY(NAME, T) {#NAME, sizeof(T), run_round<T>, hbit_##NAME},
#define MM_ENTRY(NAME, T) {#NAME, sizeof(T), run_round<T>, hmm_##NAME},
#define AR_ENTRY(NAME, T) {#NAME, sizeof(T), run_round<T>, har_##NAME},
static tentry movers[] = {{"mem", 1, run_round<uint8_t>, hmov_mem}, GSHMEM_RMA_TYPES(MOV_ENTRY)};
static tentry bits[] = {GSHMEM_REDUCE_BIT_TYPES(BIT_ENTRY)};
static tentry minmax[] = {GSHMEM_REDUCE_MINMAX_TYPES(MM_ENTRY)};
static tentry arith[] = {GSHMEM_REDUCE_ARITH_TYPES(AR_ENTRY)};
#define HALF_ENTRY(NAME, T) {#NAME, sizeof(T), run_round<T>, hhalf_##NAME},
static tentry halfs[] = {GSHMEM_REDUCE_HALF_TYPES(HALF_ENTRY)};
#define NELEM(a) (sizeof a / sizeof a[0])
/* ---- the regular rounds ------------------------------------------------------------------ */
static const size_t sizes[] = {1, 7, 1023, MAX_ELEMS};
static uint64_t g_rng;
static int g_round_id;

static round_t make_round(const tentry *te, int coll, int op, int form, int shape, int rot) {
    round_t r;
    r.id = ++g_round_id;
    r.te = te;
    r.coll = coll;
    r.op = op;
    r.form = form;
    r.shape = shape;
    int ns = quick ? 3 : 5;
    int si = rot % ns;
    r.n = si < 4 ? sizes[si] : 2 + rng_next(&g_rng) % 4090;  /* up to 32 KiB of 8-byte elements: one-shots of 1..8 channels */
    if (quick && r.n > 1023) r.n = 1023;
    r.doff = rng_next(&g_rng) % 4;
    r.soff = rng_next(&g_rng) % 4;
    r.dst = 1 + rng_next(&g_rng) % MAX_STRIDE;
    r.sst = 1 + rng_next(&g_rng) % MAX_STRIDE;
    r.root = (int)(rng_next(&g_rng) % 64);
    r.threads = rot & 1 ? 768 : 256;  /* the kernels' __launch_bounds__ (docs/collectives.md) */
    r.inplace = (coll == C_REDUCE || coll == C_INSCAN || coll == C_EXSCAN) && (rot / 2) % 2 == 1;
    return r;
}

/* Every (type, collective/op) of the list on every shape in every form: the host forms for
 * every type, the device forms for the types with a device kernel. The size rotates, so each
 * type sees every size over its shapes and forms. --quick: one shape and one form per
 * (type, collective/op), rotating. */
static void list_rounds(tentry *list, size_t nlist, const int *colls, int ncolls, const int *ops, int nops) {
    int rot = 0;
    for (size_t t = 0; t < nlist; t++)
        for (int c = 0; c < ncolls; c++)
            for (int o = 0; o < nops; o++) {
                int coll = colls[c], op = ops[o];
                if ((coll == C_INSCAN || coll == C_EXSCAN) && op != OP_SUM) continue;
                for (int f = 0; f < N_FORMS; f++) {
                    if (f <= F_BLOCK) {
                        cargs probe;
                        probe.coll = coll;
                        probe.op = coll >= C_REDUCE ? op : 0;
                        if (!dev_launch(list[t].name, f, probe, 0, 0, true)) continue;
                    }
                    for (int sh = 0; sh < N_SHAPES; sh++) {
                        rot++;
                        if (quick && (rot % (N_SHAPES * 2)) != 0) continue;
                        round_t r = make_round(&list[t], coll, op, f, sh, rot / 3 + sh);
                        list[t].run(r);
                    }
                }
            }
}

static void regular_rounds(void) {
    static const int mcolls[] = {C_BCAST, C_FCOLLECT, C_COLLECT, C_ALLTOALL, C_ALLTOALLS};
    static const int rcolls[] = {C_REDUCE, C_RSCATTER};
    static const int acolls[] = {C_REDUCE, C_RSCATTER, C_INSCAN, C_EXSCAN};
    static const int none[] = {0}, bops[] = {OP_AND, OP_OR, OP_XOR}, mops[] = {OP_MIN, OP_MAX}, aops[] = {OP_SUM, OP_PROD},
                     hops[] = {OP_SUM, OP_PROD, OP_MIN, OP_MAX};
    size_t f0 = t_failed;
    list_rounds(movers, NELEM(movers), mcolls, 5, none, 1);
    if (g_me == 0) printf("data movers: %zu rounds so far, %d failures\n", g_rounds, (int)(t_failed - f0));
    list_rounds(bits, NELEM(bits), rcolls, 2, bops, 3);
    list_rounds(minmax, NELEM(minmax), rcolls, 2, mops, 2);
    list_rounds(arith, NELEM(arith), acolls, 4, aops, 2);
    list_rounds(halfs, NELEM(halfs), acolls, 4, hops, 4);
    if (g_me == 0) printf("reductions and scans: %zu rounds in all\n", g_rounds);
}

/* ---- large on-stream cases: data made and checked on the GPU ----------------------------- */
static __host__ __device__ inline uint32_t h32(uint64_t seed, int pe, uint64_t k) {
    uint64_t x = seed * 0x9E3779B97F4A7C15ull ^ ((uint64_t)pe << 52) ^ k;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 29;
    return (uint32_t)(x ^ (x >> 32));
}
__global__ void large_fill(float *p, size_t n, uint64_t seed, int pe, int small) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t h = h32(seed, pe, i);
        p[i] = small ? (float)((int)(h % 17) - 8) : (float)(h % 1000003);
    }
}
/* sum: dest[k] = sum over PEs 0..np-1; fcollect: dest[j*n + k] = PE j's value; then `guard`
 * poisoned bytes */
__global__ void large_check(const float *d, size_t n, uint64_t seed, int np, int is_sum, size_t guard,
                            mismatch *m) {
    size_t total = is_sum ? n : n * np;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total + guard / 4; i += (size_t)gridDim.x * blockDim.x) {
        bool ok;
        unsigned want, got;
        if (i >= total) {
            got = ((const unsigned *)d)[i];
            want = POISON * 0x01010101u;
            ok = got == want;
        } else if (is_sum) {
            float s = 0;
            for (int j = 0; j < np; j++) s += (float)((int)(h32(seed, j, i) % 17) - 8);
            ok = d[i] == s;
            want = (unsigned)(int)s;
            got = (unsigned)(int)d[i];
        } else {
            float w = (float)(h32(seed, (int)(i / n), i % n) % 1000003);
            ok = d[i] == w;
            want = (unsigned)w;
            got = (unsigned)d[i];
        }
        if (!ok) {
            atomicAdd(&m->count, 1ull);
            unsigned long long old = atomicMin(&m->first, (unsigned long long)i);
            if (i < old) { m->expected = want; m->actual = got; }
        }
    }
}

static void large_rounds(void) {
    mismatch *m;
    CK(cudaHostAlloc((void **)&m, sizeof *m, cudaHostAllocMapped));
    const size_t MiB = 1 << 20;
    for (int is_sum = 1; is_sum >= 0; is_sum--)
        for (size_t bytes : {64 * MiB, 256 * MiB}) {
            /* reduce: bytes per PE; fcollect: bytes of the whole result */
            size_t n = is_sum ? bytes / 4 : bytes / 4 / g_np + 3;
            size_t dbytes = (is_sum ? n : n * g_np) * 4 + GUARD;
            float *src = (float *)gshmem_malloc(n * 4);
            float *dst = (float *)gshmem_malloc(dbytes);
            if (!src || !dst) {
                EXPECT(0, "large %s: cannot allocate %zu + %zu bytes", is_sum ? "reduce" : "fcollect", n * 4, dbytes);
                continue;
            }
            uint64_t seed = g_seed + bytes + is_sum;
            large_fill<<<1024, 256>>>(src, n, seed, g_me, is_sum);
            fill_poison<<<1024, 256>>>((uint8_t *)dst, dbytes);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            gshmem_barrier_all();
            struct timespec a, b;
            clock_gettime(CLOCK_MONOTONIC, &a);
            int rc = is_sum ? gshmemx_float_sum_reduce_on_stream(GSHMEM_TEAM_WORLD, dst, src, n, g_stream)
                            : gshmemx_float_fcollect_on_stream(GSHMEM_TEAM_WORLD, dst, src, n, g_stream);
            CK(cudaStreamSynchronize(g_stream));
            clock_gettime(CLOCK_MONOTONIC, &b);
            m->count = 0;
            m->first = ~0ull;
            large_check<<<1024, 256>>>(dst, n, seed, g_np, is_sum, GUARD, m);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            const char *nm = is_sum ? "gshmemx_float_sum_reduce_on_stream" : "gshmemx_float_fcollect_on_stream";
            EXPECT(rc == 0, "%s (WORLD, %zu elements): returned %d", nm, n, rc);
            EXPECT(m->count == 0, "%s (WORLD, %zu elements): %llu wrong, first index %llu (past the result = guard): "
                   "expected %u, got %u", nm, n, m->count, m->first, m->expected, m->actual);
            if (g_me == 0)
                printf("%s %zu MiB: took %.2f ms\n", nm, bytes / MiB,
                       (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
            gshmem_barrier_all();
            gshmem_free(dst);
            gshmem_free(src);
        }
    cudaFreeHost(m);
}

/* ---- recurrences: in-place sum reduces over alternating teams, simulated on the host ------ */
#define REC_N 3001   /* uint64: 24 KiB, a one-shot of 6 channels on stream */
/* Element count of step s of the host/on-stream sequences: one-shots of 6, 1, 2, 5 and 1
 * channels in turn (the channel counts change between back-to-back calls), ending on all. */
static size_t rec_n(int s) {
    static const size_t n[] = {REC_N, 1, 517, 2049, 64};
    return n[s % 5];
}
/* x_j <- sum over j's team of x (for every world PE; PEs outside the shape keep x) */
static void simulate_step(std::vector<std::vector<uint64_t>> &x, int shape, size_t n = REC_N) {
    std::vector<std::vector<uint64_t>> nx = x;
    for (int p = 0; p < g_np; p++) {
        std::vector<int> g = group_of(shape, p);
        if (g.empty()) continue;
        for (size_t k = 0; k < n && k < x[p].size(); k++) {
            uint64_t s = 0;
            for (int q : g) s += x[q][k];
            nx[p][k] = s;
        }
    }
    x.swap(nx);
}
static uint64_t rec_init(uint64_t seed, int pe, size_t k) { return mix(seed + k, pe) >> 3; }

/* A kernel that may run the cross-node algorithms holds their registers too: 640 threads need
 * the bound (docs/collectives.md, "Block sizes"). */
#define REC_BOUNDS __launch_bounds__(640)
template <int S>
__global__ void REC_BOUNDS rec_kernel(uint64_t *x, size_t n, gshmem_team_t t0, gshmem_team_t t1, int steps, int *status) {
    int bad = 0;
    for (int s = 0; s < steps; s++) {
        gshmem_team_t t = s & 1 ? t1 : t0;
        if (t == GSHMEM_TEAM_INVALID) continue;
        int rc;
        if constexpr (S == F_THREAD) rc = gshmem_uint64_sum_reduce(t, x, x, n);
        else if constexpr (S == F_WARP) rc = gshmemx_uint64_sum_reduce_warp(t, x, x, n);
        else rc = gshmemx_uint64_sum_reduce_block(t, x, x, n);
        if (rc) bad = rc;
    }
    if (threadIdx.x == 0) *status = bad;
}
/* two teams at once in one kernel: block b works on team tb with buffer xb */
__global__ void two_team_kernel(uint64_t *x0, uint64_t *x1, size_t n, gshmem_team_t t0, gshmem_team_t t1,
                                int steps, int *status) {
    uint64_t *x = blockIdx.x ? x1 : x0;
    gshmem_team_t t = blockIdx.x ? t1 : t0;
    int bad = 0;
    if (t != GSHMEM_TEAM_INVALID)
        for (int s = 0; s < steps; s++) {
            int rc = gshmemx_uint64_sum_reduce_block(t, x, x, n);
            if (rc) bad = rc;
        }
    if (threadIdx.x == 0) status[blockIdx.x] = bad;
}

static void load_rec(uint64_t *x, uint64_t seed, std::vector<std::vector<uint64_t>> &sim) {
    sim.assign(g_np, std::vector<uint64_t>(REC_N));
    for (int p = 0; p < g_np; p++)
        for (size_t k = 0; k < REC_N; k++) sim[p][k] = rec_init(seed, p, k);
    CK(cudaMemcpy(x, sim[g_me].data(), REC_N * 8, cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize());
}
static void check_rec(const uint64_t *x, const std::vector<std::vector<uint64_t>> &sim, const char *what) {
    std::vector<uint64_t> got(REC_N);
    CK(cudaMemcpy(got.data(), x, REC_N * 8, cudaMemcpyDeviceToHost));
    first_bad fb;
    for (size_t k = 0; k < REC_N; k++)
        if (got[k] != sim[g_me][k]) fb.note(k, sim[g_me][k], got[k]);
    EXPECT(fb.count == 0, "%s: %zu of %d wrong, first [%zu]: expected %llu, got %llu", what, fb.count, REC_N,
           fb.index, fb.expected, fb.actual);
}

/* 200 in-place uint64 sum reduces alternating WORLD and the 2-D x-axis team (every PE is in
 * both), with no barrier between them, in each form. */
static void back_to_back(uint64_t *x) {
    const int steps = quick ? 40 : 200;
    std::vector<std::vector<uint64_t>> sim;
    for (int form = 0; form < N_FORMS; form++) {
        uint64_t seed = g_seed + 31337 + form;
        load_rec(x, seed, sim);
        gshmem_barrier_all();
        gshmem_team_t t0 = GSHMEM_TEAM_WORLD, t1 = shape_team[SH_X];
        int bad = 0;
        if (form <= F_BLOCK) {
            *g_status = -12345;
            if (form == F_THREAD) rec_kernel<F_THREAD><<<1, 1, 0, g_stream>>>(x, REC_N, t0, t1, steps, g_status);
            if (form == F_WARP) rec_kernel<F_WARP><<<1, 32, 0, g_stream>>>(x, REC_N, t0, t1, steps, g_status);
            /* no __launch_bounds__ here: 640 threads is what any kernel may use (docs/collectives.md) */
            if (form == F_BLOCK) rec_kernel<F_BLOCK><<<1, 640, 0, g_stream>>>(x, REC_N, t0, t1, steps, g_status);
            CK(cudaGetLastError());
            CK(cudaStreamSynchronize(g_stream));
            bad = *g_status;
        } else {
            for (int s = 0; s < steps; s++) {
                gshmem_team_t t = s & 1 ? t1 : t0;
                int rc = form == F_STREAM ? gshmemx_uint64_sum_reduce_on_stream(t, x, x, rec_n(s), g_stream)
                                          : gshmem_uint64_sum_reduce(t, x, x, rec_n(s));
                if (rc) bad = rc;
            }
            CK(cudaStreamSynchronize(g_stream));
        }
        for (int s = 0; s < steps; s++) simulate_step(sim, s & 1 ? SH_X : SH_WORLD, form <= F_BLOCK ? REC_N : rec_n(s));
        char what[200];
        snprintf(what, sizeof what, "%d back-to-back in-place uint64 sum reduces (%s) alternating WORLD and the x-axis team",
                 steps, form_name[form]);
        EXPECT(bad == 0, "%s: a call returned %d", what, bad);
        check_rec(x, sim, what);
        gshmem_barrier_all();
    }
}

/* Two teams reducing at the same time: on two streams of each PE (x and y axes: every PE is in
 * both; WORLD and SHARED; WORLD and the even PEs), and in two blocks of one kernel. */
static void two_teams(uint64_t *x0, uint64_t *x1) {
    const int steps = quick ? 20 : 100;
    static const int pairs[3][2] = {{SH_X, SH_Y}, {SH_WORLD, SH_SHARED}, {SH_WORLD, SH_EVEN}};
    cudaStream_t s2;
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    for (int dev = 0; dev < 2; dev++)
        for (int p = 0; p < 3; p++) {
            int sh0 = pairs[p][0], sh1 = pairs[p][1];
            gshmem_team_t t0 = shape_team[sh0], t1 = shape_team[sh1];
            std::vector<std::vector<uint64_t>> sim0, sim1;
            load_rec(x0, g_seed + 777 + p, sim0);
            load_rec(x1, g_seed + 888 + p, sim1);
            gshmem_barrier_all();
            int bad = 0;
            if (dev) {
                g_status[0] = g_status[1] = -12345;
                two_team_kernel<<<2, 256, 0, g_stream>>>(x0, x1, REC_N, t0, t1, steps, g_status);
                CK(cudaGetLastError());
                CK(cudaStreamSynchronize(g_stream));
                bad = g_status[0] ? g_status[0] : g_status[1];
            } else {
                for (int s = 0; s < steps; s++) {
                    if (t0 != GSHMEM_TEAM_INVALID) bad |= gshmemx_uint64_sum_reduce_on_stream(t0, x0, x0, REC_N, g_stream);
                    if (t1 != GSHMEM_TEAM_INVALID) bad |= gshmemx_uint64_sum_reduce_on_stream(t1, x1, x1, REC_N, s2);
                }
                CK(cudaStreamSynchronize(g_stream));
                CK(cudaStreamSynchronize(s2));
            }
            for (int s = 0; s < steps; s++) {
                simulate_step(sim0, sh0);
                simulate_step(sim1, sh1);
            }
            char what[300];
            snprintf(what, sizeof what, "teams %s and %s reducing concurrently (%s, %d steps each): team %s's data",
                     shape_name[sh0], shape_name[sh1], dev ? "two blocks of one kernel" : "two streams", steps, "%s");
            char w0[400], w1[400];
            snprintf(w0, sizeof w0, what, shape_name[sh0]);
            snprintf(w1, sizeof w1, what, shape_name[sh1]);
            EXPECT(bad == 0, "%s: a call returned %d", w0, bad);
            check_rec(x0, sim0, w0);
            check_rec(x1, sim1, w1);
            gshmem_barrier_all();
        }
    cudaStreamDestroy(s2);
}

/* ---- CUDA graph -------------------------------------------------------------------------- */
/* One step: y = sum_reduce(team, x); then a kernel x[k] = y[k] + me + 1. 20 steps alternate
 * WORLD and the x-axis team, then x is broadcast from team PE 1 % n of WORLD into b. The graph
 * is captured once on a non-blocking stream and replayed 100 times; the host simulates it. */
__global__ void graph_update(uint64_t *x, const uint64_t *y, size_t n, int me) {
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n; k += (size_t)gridDim.x * blockDim.x)
        x[k] = y[k] + (uint64_t)me + 1;
}
static void graph_test(uint64_t *x, uint64_t *y, uint64_t *b) {
    const int steps = 20, replays = quick ? 10 : 100;
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::vector<std::vector<uint64_t>> sim;
    load_rec(x, g_seed + 4242, sim);
    int root = 1 % g_np;
    auto enqueue = [&](int &bad) {
        for (int i = 0; i < steps; i++) {
            gshmem_team_t t = i & 1 ? shape_team[SH_X] : GSHMEM_TEAM_WORLD;
            bad |= gshmemx_uint64_sum_reduce_on_stream(t, y, x, rec_n(i), s);
            graph_update<<<4, 128, 0, s>>>(x, y, rec_n(i), g_me);
        }
        bad |= gshmemx_uint64_broadcast_on_stream(GSHMEM_TEAM_WORLD, b, x, REC_N, root, s);
    };
    auto sim_once = [&]() {
        for (int i = 0; i < steps; i++) {
            /* y = the first rec_n(i) sums (rest of y: the previous step's), x = y + me + 1 there */
            simulate_step(sim, i & 1 ? SH_X : SH_WORLD, rec_n(i));
            for (int p = 0; p < g_np; p++)
                for (size_t k = 0; k < rec_n(i); k++) sim[p][k] += (uint64_t)p + 1;
        }
    };
    auto check_b = [&](const char *what) {
        std::vector<uint64_t> got(REC_N);
        CK(cudaMemcpy(got.data(), b, REC_N * 8, cudaMemcpyDeviceToHost));
        first_bad fb;
        for (size_t k = 0; k < REC_N; k++)
            if (got[k] != sim[root][k]) fb.note(k, sim[root][k], got[k]);
        EXPECT(fb.count == 0, "%s: broadcast result: %zu wrong, first [%zu]: expected %llu, got %llu", what, fb.count,
               fb.index, fb.expected, fb.actual);
    };
    gshmem_barrier_all();
    int bad = 0;
    enqueue(bad);   /* warm-up outside the capture */
    CK(cudaStreamSynchronize(s));
    sim_once();
    check_rec(x, sim, "graph warm-up (same calls on a stream, not captured)");
    check_b("graph warm-up");
    gshmem_barrier_all();

    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    enqueue(bad);
    cudaError_t ce = cudaStreamEndCapture(s, &g);
    EXPECT(ce == cudaSuccess && bad == 0, "capturing on-stream collectives in a CUDA graph: %s, calls returned %d",
           cudaGetErrorString(ce), bad);
    if (ce != cudaSuccess) {
        cudaGetLastError();
        summary("test_coll");
        gshmem_global_exit(3);
    }
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    sim_once();
    check_rec(x, sim, "CUDA graph, first replay");
    check_b("CUDA graph, first replay");
    gshmem_barrier_all();   /* not needed by the graph; keeps the checks' reads apart from peers' replays */
    for (int r = 1; r < replays; r++) {
        CK(cudaGraphLaunch(ge, s));
        sim_once();
    }
    CK(cudaStreamSynchronize(s));
    char what[100];
    snprintf(what, sizeof what, "CUDA graph of %d reduces + broadcast replayed %d times", steps, replays);
    check_rec(x, sim, what);
    check_b(what);
    gshmem_barrier_all();
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    cudaStreamDestroy(s);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--quick")) quick = true;
    gshmem_init();
    g_me = gshmem_my_pe();
    g_np = gshmem_n_pes();
    g_seed = agree_seed();
    g_rng = g_seed | 1;
    CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
    CK(cudaHostAlloc((void **)&g_status, 4 * sizeof(int), cudaHostAllocMapped));
    g_buf_bytes = 2 * GUARD + (size_t)MAX_STRIDE * g_np * (MAX_ELEMS + 8) * 8;
    g_src = (uint8_t *)gshmem_malloc(g_buf_bytes);
    g_dst = (uint8_t *)gshmem_malloc(g_buf_bytes);
    uint64_t *rec = (uint64_t *)gshmem_malloc(3 * REC_N * sizeof(uint64_t));
    if (!g_src || !g_dst || !rec) { fprintf(stderr, "allocation failed\n"); return 2; }

    make_shapes();
    regular_rounds();
    if (!quick) large_rounds();
    back_to_back(rec);
    two_teams(rec, rec + REC_N);
    graph_test(rec, rec + REC_N, rec + 2 * REC_N);

    for (int sh = SH_EVEN; sh <= SH_Y; sh++)
        if (shape_team[sh] != GSHMEM_TEAM_INVALID) gshmem_team_destroy(shape_team[sh]);
    gshmem_free(rec);
    gshmem_free(g_dst);
    gshmem_free(g_src);
    cudaFreeHost(g_status);
    cudaStreamDestroy(g_stream);
    int rc = summary("test_coll");
    gshmem_finalize();
    return rc;
}
