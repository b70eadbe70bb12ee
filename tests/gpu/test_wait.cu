/* Proves point-to-point synchronization on arrays, for every point-to-point type and all six
 * comparisons. Against a CPU model on random arrays: test, test_all/any/some and their
 * _vector forms, and the waits whose condition already holds, with status NULL, with some
 * entries excluded, with all excluded (any: SIZE_MAX, some: 0, all: vacuously true) and with
 * no entries — in kernels and from the host. While the previous PE writes the entries one by
 * one (excluded decoys first): wait_until_any/_some/_all and their _vector forms return only
 * included entries that satisfy the condition, and wait_until_all returns only once every
 * included entry does — in kernels and in the blocking host forms. The on-stream forms
 * (wait_until, _all, _all_vector) hold back later stream work until the condition holds.
 * gshmem_pe_quiet from a kernel and from the host completes puts before a flag. */
#include <vector>

#include "common.h"

#define NE 12          /* entries per array */
#define POISON 0xA5

/* One tag per point-to-point TYPENAME: the calls under test, callable from kernels and the
 * host (the on-stream forms from the host). */
#define DEF_P2P(NAME, T)                                                                     \
    struct p2p_##NAME {                                                                      \
        typedef T type;                                                                      \
        static const char *name() { return #NAME; }                                          \
        static __host__ __device__ void p(T *d, T v, int pe) { gshmem_##NAME##_p(d, v, pe); } \
        static __host__ __device__ int test(T *iv, int cmp, T v) { return gshmem_##NAME##_test(iv, cmp, v); } \
        static __host__ __device__ void wait(T *iv, int cmp, T v) { gshmem_##NAME##_wait_until(iv, cmp, v); } \
        static __host__ __device__ void wait_all(T *iv, size_t n, const int *st, int cmp, T v) { \
            gshmem_##NAME##_wait_until_all(iv, n, st, cmp, v);                               \
        }                                                                                    \
        static __host__ __device__ size_t wait_any(T *iv, size_t n, const int *st, int cmp, T v) { \
            return gshmem_##NAME##_wait_until_any(iv, n, st, cmp, v);                        \
        }                                                                                    \
        static __host__ __device__ size_t wait_some(T *iv, size_t n, size_t *idx, const int *st, int cmp, T v) { \
            return gshmem_##NAME##_wait_until_some(iv, n, idx, st, cmp, v);                  \
        }                                                                                    \
        static __host__ __device__ void wait_all_v(T *iv, size_t n, const int *st, int cmp, T *vs) { \
            gshmem_##NAME##_wait_until_all_vector(iv, n, st, cmp, vs);                       \
        }                                                                                    \
        static __host__ __device__ size_t wait_any_v(T *iv, size_t n, const int *st, int cmp, T *vs) { \
            return gshmem_##NAME##_wait_until_any_vector(iv, n, st, cmp, vs);                \
        }                                                                                    \
        static __host__ __device__ size_t wait_some_v(T *iv, size_t n, size_t *idx, const int *st, int cmp, T *vs) { \
            return gshmem_##NAME##_wait_until_some_vector(iv, n, idx, st, cmp, vs);          \
        }                                                                                    \
        static __host__ __device__ int test_all(T *iv, size_t n, const int *st, int cmp, T v) { \
            return gshmem_##NAME##_test_all(iv, n, st, cmp, v);                              \
        }                                                                                    \
        static __host__ __device__ size_t test_any(T *iv, size_t n, const int *st, int cmp, T v) { \
            return gshmem_##NAME##_test_any(iv, n, st, cmp, v);                              \
        }                                                                                    \
        static __host__ __device__ size_t test_some(T *iv, size_t n, size_t *idx, const int *st, int cmp, T v) { \
            return gshmem_##NAME##_test_some(iv, n, idx, st, cmp, v);                        \
        }                                                                                    \
        static __host__ __device__ int test_all_v(T *iv, size_t n, const int *st, int cmp, T *vs) { \
            return gshmem_##NAME##_test_all_vector(iv, n, st, cmp, vs);                      \
        }                                                                                    \
        static __host__ __device__ size_t test_any_v(T *iv, size_t n, const int *st, int cmp, T *vs) { \
            return gshmem_##NAME##_test_any_vector(iv, n, st, cmp, vs);                      \
        }                                                                                    \
        static __host__ __device__ size_t test_some_v(T *iv, size_t n, size_t *idx, const int *st, int cmp, T *vs) { \
            return gshmem_##NAME##_test_some_vector(iv, n, idx, st, cmp, vs);                \
        }                                                                                    \
        static void wait_on_stream(T *iv, int cmp, T v, cudaStream_t s) {                    \
            gshmemx_##NAME##_wait_until_on_stream(iv, cmp, v, s);                            \
        }                                                                                    \
        static void wait_all_on_stream(T *iv, size_t n, const int *st, int cmp, T v, cudaStream_t s) { \
            gshmemx_##NAME##_wait_until_all_on_stream(iv, n, st, cmp, v, s);                 \
        }                                                                                    \
        static void wait_all_v_on_stream(T *iv, size_t n, const int *st, int cmp, T *vs, cudaStream_t s) { \
            gshmemx_##NAME##_wait_until_all_vector_on_stream(iv, n, st, cmp, vs, s);         \
        }                                                                                    \
    };
GSHMEM_P2P_SYNC_TYPES(DEF_P2P)

static const char *cmp_name[] = {"EQ", "NE", "GT", "LE", "LT", "GE"};
static bool holds(long long a, int cmp, long long b) {
    switch (cmp) {
    case GSHMEM_CMP_EQ: return a == b;
    case GSHMEM_CMP_NE: return a != b;
    case GSHMEM_CMP_GT: return a > b;
    case GSHMEM_CMP_LE: return a <= b;
    case GSHMEM_CMP_LT: return a < b;
    default: return a >= b;
    }
}

/* First failure of a batch of checks, as text, plus the count: one EXPECT per batch. */
struct verdict {
    int bad;
    char first[512];
    verdict() : bad(0) { first[0] = 0; }
};
#define CHECK(vd, cond, ...)                                                                 \
    do {                                                                                     \
        if (!(cond) && !(vd).bad++) snprintf((vd).first, sizeof (vd).first, __VA_ARGS__);    \
    } while (0)

/* ---- 1. static arrays against the model ------------------------------------------------- */
enum { W_ALL = 1, W_ALL_V = 2, W_ANY = 4, W_ANY_V = 8 };
struct trial {
    int cmp, n, use_status, waits, wait_one;   /* wait_one: an entry whose single wait holds, or -1 */
    long long v, vals[NE], vs[NE];
    int status[NE];
};
struct trial_out {
    int single[NE], t_all, t_all_v, w_all, w_all_v;
    size_t t_any, t_any_v, t_some, t_some_v, w_any, w_any_v, w_some, w_some_v;
    size_t i_t_some[NE], i_t_some_v[NE], i_w_some[NE], i_w_some_v[NE];
};

/* Runs one trial's calls; iv/vs/st are where the caller (kernel or host) may pass them. */
template <class P>
static __host__ __device__ void run_trial(typename P::type *iv, typename P::type *vs, const int *st,
                                          const trial &tr, trial_out *o) {
    typedef typename P::type T;
    size_t n = tr.n;
    T v = (T)tr.v;
    for (size_t i = 0; i < n; i++) o->single[i] = P::test(iv + i, tr.cmp, v);
    o->t_all = P::test_all(iv, n, st, tr.cmp, v);
    o->t_any = P::test_any(iv, n, st, tr.cmp, v);
    o->t_some = P::test_some(iv, n, o->i_t_some, st, tr.cmp, v);
    o->t_all_v = P::test_all_v(iv, n, st, tr.cmp, vs);
    o->t_any_v = P::test_any_v(iv, n, st, tr.cmp, vs);
    o->t_some_v = P::test_some_v(iv, n, o->i_t_some_v, st, tr.cmp, vs);
    if (tr.waits & W_ALL) { P::wait_all(iv, n, st, tr.cmp, v); o->w_all = 1; }
    if (tr.waits & W_ALL_V) { P::wait_all_v(iv, n, st, tr.cmp, vs); o->w_all_v = 1; }
    if (tr.waits & W_ANY) {
        o->w_any = P::wait_any(iv, n, st, tr.cmp, v);
        o->w_some = P::wait_some(iv, n, o->i_w_some, st, tr.cmp, v);
    }
    if (tr.waits & W_ANY_V) {
        o->w_any_v = P::wait_any_v(iv, n, st, tr.cmp, vs);
        o->w_some_v = P::wait_some_v(iv, n, o->i_w_some_v, st, tr.cmp, vs);
    }
    if (tr.wait_one >= 0) P::wait(iv + tr.wait_one, tr.cmp, v);
}

template <class P>
__global__ void trial_kernel(typename P::type *iv, typename P::type *vs, const int *st, const trial *trs,
                             int ntr, trial_out *outs) {
    for (int t = 0; t < ntr; t++)
        run_trial<P>(iv + t * NE, vs + t * NE, trs[t].use_status ? st + t * NE : NULL, trs[t], outs + t);
}

static trial make_trial(int t, uint64_t *rng) {
    trial tr;
    memset(&tr, 0, sizeof tr);
    tr.cmp = t % 6;
    int kind = (t / 6) % 5;   /* 0 NULL, 1 some excluded, 2 all excluded, 3 none excluded, 4 no entries */
    tr.n = kind == 4 ? 0 : NE;
    tr.use_status = kind == 1 || kind == 2 || kind == 3;
    tr.v = rng_next(rng) % 8;
    for (int i = 0; i < NE; i++) {
        tr.vals[i] = rng_next(rng) % 8;
        tr.vs[i] = rng_next(rng) % 8;
        tr.status[i] = kind == 2 || (kind == 1 && rng_next(rng) % 3 == 0) ? 1 + (int)(rng_next(rng) % 5) : 0;
    }
    int ninc = 0, nsat = 0, nsatv = 0;
    tr.wait_one = -1;
    for (int i = 0; i < tr.n; i++) {
        bool inc = !tr.use_status || !tr.status[i];
        ninc += inc;
        nsat += inc && holds(tr.vals[i], tr.cmp, tr.v);
        nsatv += inc && holds(tr.vals[i], tr.cmp, tr.vs[i]);
        if (tr.wait_one < 0 && holds(tr.vals[i], tr.cmp, tr.v)) tr.wait_one = i;
    }
    /* only the waits that return at once: the entries never change */
    tr.waits = (nsat == ninc ? W_ALL : 0) | (nsatv == ninc ? W_ALL_V : 0) |
               (nsat || !ninc ? W_ANY : 0) | (nsatv || !ninc ? W_ANY_V : 0);
    return tr;
}

/* Checks one "some" result: count `c`, indices idx; exact: they must be all satisfying
 * entries (a test), else at least one (a wait). sat[i]: entry i included and satisfying. */
static bool some_ok(size_t c, const size_t *idx, const bool *sat, int n, bool exact) {
    int nsat = 0;
    for (int i = 0; i < n; i++) nsat += sat[i];
    if (c > (size_t)n || (exact ? (int)c != nsat : (nsat > 0) != (c > 0))) return false;
    bool seen[NE] = {false};
    for (size_t k = 0; k < c; k++) {
        if (idx[k] >= (size_t)n || !sat[idx[k]] || seen[idx[k]]) return false;
        seen[idx[k]] = true;
    }
    return true;
}
static bool any_ok(size_t r, const bool *sat, int n) {
    int nsat = 0;
    for (int i = 0; i < n; i++) nsat += sat[i];
    if (!nsat) return r == SIZE_MAX;
    return r < (size_t)n && sat[r];
}

static void check_trial(verdict &vd, const char *type, const char *where, int t, const trial &tr, const trial_out &o) {
    bool sat[NE], satv[NE];
    int ninc = 0, nsat = 0, nsatv = 0;
    for (int i = 0; i < tr.n; i++) {
        bool inc = !tr.use_status || !tr.status[i];
        sat[i] = inc && holds(tr.vals[i], tr.cmp, tr.v);
        satv[i] = inc && holds(tr.vals[i], tr.cmp, tr.vs[i]);
        ninc += inc;
        nsat += sat[i];
        nsatv += satv[i];
        CHECK(vd, o.single[i] == holds(tr.vals[i], tr.cmp, tr.v),
              "%s gshmem_%s_test(entry %d = %lld, %s, %lld) returned %d (trial %d)", where, type, i, tr.vals[i],
              cmp_name[tr.cmp], tr.v, o.single[i], t);
    }
    const char *stn = !tr.use_status ? "status NULL"
                      : ninc == 0       ? "all excluded"
                      : ninc == tr.n    ? "none excluded"
                                        : "some excluded";
#define CTX "%s gshmem_%s_%s (%s, %d entries, %s, %d included, %d satisfy, trial %d): "
#define CTXA(call, ns) where, type, call, cmp_name[tr.cmp], tr.n, stn, ninc, ns, t
    CHECK(vd, o.t_all == (nsat == ninc), CTX "returned %d", CTXA("test_all", nsat), o.t_all);
    CHECK(vd, o.t_all_v == (nsatv == ninc), CTX "returned %d", CTXA("test_all_vector", nsatv), o.t_all_v);
    CHECK(vd, any_ok(o.t_any, sat, tr.n), CTX "returned %zu", CTXA("test_any", nsat), o.t_any);
    CHECK(vd, any_ok(o.t_any_v, satv, tr.n), CTX "returned %zu", CTXA("test_any_vector", nsatv), o.t_any_v);
    CHECK(vd, some_ok(o.t_some, o.i_t_some, sat, tr.n, true), CTX "returned %zu (first index %zu)",
          CTXA("test_some", nsat), o.t_some, o.t_some ? o.i_t_some[0] : 0);
    CHECK(vd, some_ok(o.t_some_v, o.i_t_some_v, satv, tr.n, true), CTX "returned %zu (first index %zu)",
          CTXA("test_some_vector", nsatv), o.t_some_v, o.t_some_v ? o.i_t_some_v[0] : 0);
    if (tr.waits & W_ALL) CHECK(vd, o.w_all == 1, CTX "did not return", CTXA("wait_until_all", nsat));
    if (tr.waits & W_ALL_V) CHECK(vd, o.w_all_v == 1, CTX "did not return", CTXA("wait_until_all_vector", nsatv));
    if (tr.waits & W_ANY) {
        CHECK(vd, any_ok(o.w_any, sat, tr.n), CTX "returned %zu", CTXA("wait_until_any", nsat), o.w_any);
        CHECK(vd, some_ok(o.w_some, o.i_w_some, sat, tr.n, false), CTX "returned %zu (first index %zu)",
              CTXA("wait_until_some", nsat), o.w_some, o.w_some ? o.i_w_some[0] : 0);
    }
    if (tr.waits & W_ANY_V) {
        CHECK(vd, any_ok(o.w_any_v, satv, tr.n), CTX "returned %zu", CTXA("wait_until_any_vector", nsatv), o.w_any_v);
        CHECK(vd, some_ok(o.w_some_v, o.i_w_some_v, satv, tr.n, false), CTX "returned %zu (first index %zu)",
              CTXA("wait_until_some_vector", nsatv), o.w_some_v, o.w_some_v ? o.i_w_some_v[0] : 0);
    }
#undef CTX
#undef CTXA
}

template <typename T> static T *dev_copy(const std::vector<T> &v) {
    T *d;
    CK(cudaMalloc(&d, v.size() * sizeof(T)));
    CK(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

/* Device: ntr trials in one kernel; host: the first few trials through the host forms. */
template <class P>
static void static_trials(void *sym, uint64_t *rng) {
    typedef typename P::type T;
    const int ntr = 60, nhost = 12;
    std::vector<trial> trs(ntr);
    std::vector<T> vals(ntr * NE), vs(ntr * NE);
    std::vector<int> st(ntr * NE);
    for (int t = 0; t < ntr; t++) {
        trs[t] = make_trial(t, rng);
        for (int i = 0; i < NE; i++) {
            vals[t * NE + i] = (T)trs[t].vals[i];
            vs[t * NE + i] = (T)trs[t].vs[i];
            st[t * NE + i] = trs[t].status[i];
        }
    }
    T *iv = (T *)sym;
    CK(cudaMemcpy(iv, vals.data(), vals.size() * sizeof(T), cudaMemcpyHostToDevice));
    T *d_vs = dev_copy(vs);
    int *d_st = dev_copy(st);
    trial *d_trs = dev_copy(trs);
    std::vector<trial_out> outs(ntr);
    memset(outs.data(), POISON, ntr * sizeof(trial_out));
    trial_out *d_outs = dev_copy(outs);
    trial_kernel<P><<<1, 1>>>(iv, d_vs, d_st, d_trs, ntr, d_outs);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(outs.data(), d_outs, ntr * sizeof(trial_out), cudaMemcpyDeviceToHost));
    verdict vd;
    for (int t = 0; t < ntr; t++) check_trial(vd, P::name(), "device", t, trs[t], outs[t]);
    EXPECT(vd.bad == 0, "%d wrong results in %d device trials; first: %s", vd.bad, ntr, vd.first);
    /* host forms: status, values and indices in ordinary host memory */
    verdict vh;
    for (int t = 0; t < nhost; t++) {
        trial_out o;
        memset(&o, POISON, sizeof o);
        run_trial<P>(iv + t * NE, vs.data() + t * NE, trs[t].use_status ? st.data() + t * NE : NULL, trs[t], &o);
        check_trial(vh, P::name(), "host", t, trs[t], o);
    }
    EXPECT(vh.bad == 0, "%d wrong results in %d host trials; first: %s", vh.bad, nhost, vh.first);
    cudaFree(d_vs);
    cudaFree(d_st);
    cudaFree(d_trs);
    cudaFree(d_outs);
}

/* ---- 2. waits while the previous PE writes ---------------------------------------------- */
/* Per comparison: entries start at I (condition false) and are written F (true) once. The
 * comparison values lie strictly between, so every value the waiter may see is I or F. */
struct dyn_plan {
    int cmp, use_status, form, norder;
    long long I, F, v, vs[NE];
    int status[NE], order[NE];
};
static dyn_plan make_dyn(int cmp, int run, uint64_t *rng) {
    dyn_plan d;
    memset(&d, 0, sizeof d);
    d.cmp = cmp;
    d.form = run & 1;
    d.use_status = !(run & 2);
    bool up = cmp == GSHMEM_CMP_EQ || cmp == GSHMEM_CMP_NE || cmp == GSHMEM_CMP_GT || cmp == GSHMEM_CMP_GE;
    d.I = up ? 0 : 20;
    d.F = up ? 20 : 0;
    if (cmp == GSHMEM_CMP_NE) d.I = 5;
    for (int i = -1; i < NE; i++) {
        long long r = (long long)(rng_next(rng) % 20), x;
        switch (cmp) {
        case GSHMEM_CMP_EQ: x = d.F; break;
        case GSHMEM_CMP_NE: x = d.I; break;
        case GSHMEM_CMP_GT: case GSHMEM_CMP_LE: x = r; break;       /* 0..19 */
        default: x = r + 1; break;                                   /* GE, LT: 1..20 */
        }
        if (i < 0) d.v = x;
        else d.vs[i] = x;
    }
    /* excluded: half are decoys written first (satisfying, must never be reported), the
     * rest are never written (wait_until_all must not wait for them) */
    int excl[NE], nex = 0, inc[NE], ninc = 0;
    for (int i = 0; i < NE; i++) {
        d.status[i] = d.use_status && rng_next(rng) % 3 == 0 && i != 0;
        if (d.status[i]) excl[nex++] = i;
        else inc[ninc++] = i;
    }
    for (int k = ninc - 1; k > 0; k--) {  /* shuffle the included ones */
        int j = (int)(rng_next(rng) % (k + 1)), t = inc[k];
        inc[k] = inc[j];
        inc[j] = t;
    }
    for (int k = 0; k < nex; k += 2) d.order[d.norder++] = excl[k];
    for (int k = 0; k < ninc; k++) d.order[d.norder++] = inc[k];
    return d;
}

struct dyn_out {
    size_t any, some, idx[NE];
    int any_ok, some_ok, unsat_all, unsat_all2;
};

/* form 0: any, some_vector, all, then all_vector; form 1: any_vector, some, all_vector, then
 * all. Each result is checked against the entries right after the call. */
template <class P>
static __host__ __device__ void run_dyn(typename P::type *iv, const int *st, int cmp, typename P::type v,
                                        typename P::type *vs, int form, dyn_out *o) {
    bool vf = form & 1;
    o->any = vf ? P::wait_any_v(iv, NE, st, cmp, vs) : P::wait_any(iv, NE, st, cmp, v);
    o->any_ok = o->any < NE && !(st && st[o->any]) && P::test(iv + o->any, cmp, vf ? vs[o->any] : v);
    o->some = vf ? P::wait_some(iv, NE, o->idx, st, cmp, v) : P::wait_some_v(iv, NE, o->idx, st, cmp, vs);
    o->some_ok = o->some >= 1 && o->some <= NE;
    for (size_t k = 0; o->some_ok && k < o->some; k++) {
        size_t i = o->idx[k];
        o->some_ok = i < NE && !(st && st[i]) && P::test(iv + i, cmp, vf ? v : vs[i]);
        for (size_t j = 0; j < k; j++) o->some_ok = o->some_ok && o->idx[j] != i;
    }
    if (vf) P::wait_all_v(iv, NE, st, cmp, vs);
    else P::wait_all(iv, NE, st, cmp, v);
    o->unsat_all = 0;
    for (int i = 0; i < NE; i++) o->unsat_all += !(st && st[i]) && !P::test(iv + i, cmp, vf ? vs[i] : v);
    if (vf) P::wait_all(iv, NE, st, cmp, v);
    else P::wait_all_v(iv, NE, st, cmp, vs);
    o->unsat_all2 = 0;
    for (int i = 0; i < NE; i++) o->unsat_all2 += !(st && st[i]) && !P::test(iv + i, cmp, vf ? v : vs[i]);
}

template <class P>
__global__ void dyn_waiter(typename P::type *iv, const int *st, int cmp, typename P::type v,
                           typename P::type *vs, int form, dyn_out *o) {
    run_dyn<P>(iv, st, cmp, v, vs, form, o);
}

static __device__ void spin_ns(uint64_t ns) {
    uint64_t t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

/* Writes F into the entries of `pe` in order, one every gap_ns. */
template <class P>
__global__ void dyn_writer(typename P::type *iv, const int *order, int n, typename P::type fin, int pe,
                           unsigned gap_ns) {
    for (int k = 0; k < n; k++) {
        spin_ns(gap_ns);
        P::p(iv + order[k], fin, pe);
    }
}

enum { WAIT_DEVICE, WAIT_HOST, WAIT_STREAM_ONE, WAIT_STREAM_ALL, WAIT_STREAM_ALL_V, N_WAITERS };
static const char *waiter_name[] = {"device", "host", "gshmemx_%s_wait_until_on_stream",
                                    "gshmemx_%s_wait_until_all_on_stream",
                                    "gshmemx_%s_wait_until_all_vector_on_stream"};

__global__ void snapshot(const void *iv, size_t bytes, uint8_t *out) {
    for (size_t i = threadIdx.x; i < bytes; i += blockDim.x) out[i] = ((const volatile uint8_t *)iv)[i];
}

/* One run: set my entries to I, let prev write them while this PE waits (in a kernel, on the
 * host, or on a stream), then check what the waiter saw. */
/* Device-side arguments and results of the runs, allocated once. */
struct dyn_scratch {
    void *vs;          /* device: NE values */
    int *st, *order;   /* device: NE each */
    dyn_out *o;        /* mapped host */
    uint8_t *snap;     /* mapped host: NE values */
};

template <class P>
static void dyn_run(void *sym, const dyn_plan &d, int waiter, const dyn_scratch &sc, cudaStream_t s1,
                    cudaStream_t s2) {
    typedef typename P::type T;
    int me = gshmem_my_pe(), np = gshmem_n_pes();
    T *iv = (T *)sym;
    std::vector<T> init(NE, (T)d.I), vs(NE);
    for (int i = 0; i < NE; i++) vs[i] = (T)d.vs[i];
    const int *hst = d.use_status ? d.status : NULL;
    T *d_vs = (T *)sc.vs;
    const int *dst_ = d.use_status ? sc.st : NULL;
    dyn_out *o = sc.o;
    uint8_t *snap = sc.snap;
    CK(cudaMemcpy(d_vs, vs.data(), NE * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(sc.st, d.status, NE * sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(sc.order, d.order, NE * sizeof(int), cudaMemcpyHostToDevice));
    memset(o, POISON, sizeof *o);
    memset(snap, POISON, NE * sizeof(T));
    CK(cudaMemcpy(iv, init.data(), NE * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();
    dyn_writer<P><<<1, 1, 0, s2>>>(iv, sc.order, d.norder, (T)d.F, (me + 1) % np, 20000);  /* first */
    CK(cudaGetLastError());
    int one = d.order[d.norder - 1];   /* the last entry written: included */
    switch (waiter) {
    case WAIT_DEVICE: dyn_waiter<P><<<1, 1, 0, s1>>>(iv, dst_, d.cmp, (T)d.v, d_vs, d.form, o); break;
    case WAIT_HOST: run_dyn<P>(iv, hst, d.cmp, (T)d.v, vs.data(), d.form, o); break;
    case WAIT_STREAM_ONE: P::wait_on_stream(iv + one, d.cmp, (T)d.v, s1); break;
    case WAIT_STREAM_ALL: P::wait_all_on_stream(iv, NE, dst_, d.cmp, (T)d.v, s1); break;
    default: P::wait_all_v_on_stream(iv, NE, dst_, d.cmp, d_vs, s1); break;
    }
    if (waiter >= WAIT_STREAM_ONE) snapshot<<<1, 64, 0, s1>>>(iv, NE * sizeof(T), snap);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(s1));
    CK(cudaStreamSynchronize(s2));
    gshmem_barrier_all();
    char what[160];
    const char *stn = d.use_status ? "some excluded" : "status NULL";
    if (waiter <= WAIT_HOST) {
        const char *f0 = d.form ? "any_vector, some, all_vector, all" : "any, some_vector, all, all_vector";
        snprintf(what, sizeof what, "%s gshmem_%s_wait_until_{%s} (%s, %s)", waiter_name[waiter], P::name(), f0,
                 cmp_name[d.cmp], stn);
        EXPECT(o->any_ok == 1, "%s: wait_until_any%s returned %zu: not an included entry that satisfies",
               what, d.form ? "_vector" : "", o->any);
        EXPECT(o->some_ok == 1, "%s: wait_until_some%s returned %zu (first index %zu): an index is repeated, "
               "excluded or not satisfying", what, d.form ? "" : "_vector", o->some, o->some ? o->idx[0] : 0);
        EXPECT(o->unsat_all == 0 && o->unsat_all2 == 0,
               "%s: after wait_until_all returned, %d (then %d) included entries did not satisfy", what, o->unsat_all,
               o->unsat_all2);
    } else {
        char call[96];
        snprintf(call, sizeof call, waiter_name[waiter], P::name());
        std::vector<T> got(NE);
        memcpy(got.data(), snap, NE * sizeof(T));
        first_bad b;
        for (int i = 0; i < NE; i++) {
            bool watched = waiter == WAIT_STREAM_ONE ? i == one : !d.status[i];
            long long cv = waiter == WAIT_STREAM_ALL_V ? d.vs[i] : d.v;
            if (watched && !holds((long long)got[i], d.cmp, cv))
                b.note(i, (unsigned long long)d.F, (unsigned long long)(long long)got[i]);
        }
        EXPECT(b.count == 0, "%s (%s, %s): work after it on the stream saw %zu watched entries unsatisfied; entry %zu: "
               "expected %lld, got %lld", call, cmp_name[d.cmp], stn, b.count, b.index, (long long)b.expected,
               (long long)b.actual);
    }
    gshmem_barrier_all();
}

template <class P>
static void dyn_all(void *sym, uint64_t *rng, int k, const dyn_scratch &sc, cudaStream_t s1, cudaStream_t s2) {
    for (int cmp = 0; cmp < 6; cmp++)
        for (int run = 0; run < 4; run++) dyn_run<P>(sym, make_dyn(cmp, run, rng), WAIT_DEVICE, sc, s1, s2);
    /* host and on-stream waiters: two comparisons per type, rotating over the types */
    for (int j = 0; j < 2; j++) {
        int cmp = (2 * k + j) % 6;
        dyn_run<P>(sym, make_dyn(cmp, j, rng), WAIT_HOST, sc, s1, s2);
        dyn_run<P>(sym, make_dyn(cmp, j + 2, rng), WAIT_HOST, sc, s1, s2);
        for (int w = WAIT_STREAM_ONE; w < N_WAITERS; w++) dyn_run<P>(sym, make_dyn(cmp, j * 2, rng), w, sc, s1, s2);
    }
}

/* ---- 3. pe_quiet ------------------------------------------------------------------------------ */
/* put_nbi of n bytes, then pe_quiet over the listed PEs, then the flag: the receiver that
 * sees the flag must see the data. */
__global__ void pq_sender(uint8_t *data, const uint8_t *src, size_t n, uint64_t *flag, uint64_t round,
                          const int *pes, size_t npes, int pe) {
    gshmem_putmem_nbi(data, src, n, pe);
    gshmem_pe_quiet(pes, npes);
    gshmem_uint64_p(flag, round, pe);
}
__global__ void pq_receiver(const uint8_t *data, size_t n, uint64_t *flag, uint64_t round, uint64_t seed,
                            int from, mismatch *m) {
    if (threadIdx.x == 0) gshmem_uint64_wait_until(flag, GSHMEM_CMP_EQ, round);
    __syncthreads();
    verify_range(data, n, seed, from, 0, 0, POISON, m);
}

static void pe_quiet_tests(uint64_t seed, uint8_t *data, uint64_t *flag, cudaStream_t s1, cudaStream_t s2) {
    int me = gshmem_my_pe(), np = gshmem_n_pes(), next = (me + 1) % np, prev = (me + np - 1) % np;
    const size_t n = (256u << 10) + 5;
    uint8_t *src, *hsrc = (uint8_t *)malloc(n);
    src = (uint8_t *)test_local_alloc(n);
    CK(src ? cudaSuccess : cudaErrorMemoryAllocation);
    mismatch *m;
    CK(cudaHostAlloc((void **)&m, sizeof *m, cudaHostAllocMapped));
    /* lists: {next}, every PE, {me, next} */
    std::vector<int> lists[3];
    lists[0].push_back(next);
    for (int p = 0; p < np; p++) lists[1].push_back((me + p) % np);
    lists[2].push_back(me);
    lists[2].push_back(next);
    int *d_lists[3];
    for (int l = 0; l < 3; l++) d_lists[l] = dev_copy(lists[l]);
    CK(cudaMemset(flag, 0, sizeof *flag));
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();
    int bad_dev = 0, bad_host = 0;
    unsigned long long first_dev = 0, first_host = 0;
    for (uint64_t r = 1; r <= 24; r++) {
        bool host = r > 12;
        int l = (int)(r % 3);
        fill_pattern<<<64, 256>>>(src, n, seed + r, me, 0);
        fill_byte<<<64, 256>>>(data, n, POISON);
        CK(cudaDeviceSynchronize());
        m->count = 0;
        m->first = ~0ull;
        gshmem_barrier_all();
        if (host) {
            CK(cudaMemcpy(hsrc, src, n, cudaMemcpyDeviceToHost));
            gshmem_putmem_nbi(data, r & 1 ? hsrc : src, n, next);
            gshmem_pe_quiet(lists[l].data(), lists[l].size());
            gshmem_uint64_p(flag, r, next);
        } else {
            pq_sender<<<1, 1, 0, s2>>>(data, src, n, flag, r, d_lists[l], lists[l].size(), next);
        }
        pq_receiver<<<4, 256, 0, s1>>>(data, n, flag, r, seed + r, prev, m);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        if (m->count) {
            if (host && !bad_host++) first_host = m->first;
            if (!host && !bad_dev++) first_dev = m->first;
        }
        gshmem_barrier_all();
    }
    EXPECT(bad_dev == 0, "device putmem_nbi + gshmem_pe_quiet + uint64_p(flag): %d of 12 rounds saw stale data "
           "after the flag (first bad byte %llu)", bad_dev, first_dev);
    EXPECT(bad_host == 0, "host putmem_nbi + gshmem_pe_quiet + uint64_p(flag): %d of 12 rounds saw stale data "
           "after the flag (first bad byte %llu)", bad_host, first_host);
    for (int l = 0; l < 3; l++) cudaFree(d_lists[l]);
    cudaFreeHost(m);
    test_local_free(src);
    free(hsrc);
}

int main(void) {
    gshmem_init();
    int me = gshmem_my_pe();
    uint64_t seed = agree_seed();
    uint64_t rng_own = (seed ^ (0x2545F4914F6CDD1Dull * (uint64_t)(me + 1))) | 1;  /* static trials: per PE */
    uint64_t rng_all = seed | 1;                                                     /* runs: same on all PEs */
    void *sym = gshmem_malloc(64 * NE * 8);
    uint8_t *data = (uint8_t *)gshmem_malloc(1 << 20);
    uint64_t *flag = (uint64_t *)gshmem_calloc(1, sizeof(uint64_t));
    if (!sym || !data || !flag) { fprintf(stderr, "allocation failed\n"); return 2; }
    cudaStream_t s1, s2;
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    dyn_scratch sc;
    CK(cudaMalloc(&sc.vs, NE * 8));
    CK(cudaMalloc(&sc.st, NE * sizeof(int)));
    CK(cudaMalloc(&sc.order, NE * sizeof(int)));
    CK(cudaHostAlloc((void **)&sc.o, sizeof *sc.o, cudaHostAllocMapped));
    CK(cudaHostAlloc((void **)&sc.snap, NE * 8, cudaHostAllocMapped));
    int k = 0;
#define RUN_P2P(NAME, T)                                                                     \
    {                                                                                        \
        static_trials<p2p_##NAME>(sym, &rng_own);                                            \
        gshmem_barrier_all();                                                                \
        dyn_all<p2p_##NAME>(sym, &rng_all, k++, sc, s1, s2);                                 \
    }
    GSHMEM_P2P_SYNC_TYPES(RUN_P2P)
    pe_quiet_tests(seed, data, flag, s1, s2);
    cudaFree(sc.vs);
    cudaFree(sc.st);
    cudaFree(sc.order);
    cudaFreeHost(sc.o);
    cudaFreeHost(sc.snap);
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
    gshmem_free(flag);
    gshmem_free(data);
    gshmem_free(sym);
    int rc = summary("test_wait");
    gshmem_finalize();
    return rc;
}
