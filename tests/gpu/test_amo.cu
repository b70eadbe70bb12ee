/* Proves the atomics. Every AMO (fetch, set, swap, compare_swap, fetch_inc/inc, fetch_add/add,
 * fetch_and/or/xor, and/or/xor, and the fetching _nbi forms) on every type of its class returns
 * the old values a sequential CPU model predicts for random operands and leaves the final
 * value it predicts — from kernels and from the host, on the next PE and on this PE. Under
 * contention from every PE at once (the target PE on its own word included, host threads
 * mixed with kernels): fetch_add/fetch_inc and a compare_swap lock-free counter hand out
 * every value exactly once, add/inc/fetch_add spread over many words of every PE end at exact
 * counts, swap loses no token (float/double too), and and/or/xor on shared words are
 * bit-exact. */
#include <type_traits>
#include <vector>

#include "common.h"

#define POISON 0xA5
#define GUARD_W 8    /* guard words on each side of a script's words */
#define SCRIPT_W 32  /* words (= threads) of a device script */

/* The ops; a class's ops are a prefix of this list (extended ⊂ standard ⊂ bitwise types). */
enum {
    OP_FETCH, OP_SET, OP_SWAP, OP_FETCH_NBI, OP_SWAP_NBI,                       /* extended */
    OP_CSWAP, OP_FINC, OP_INC, OP_FADD, OP_ADD, OP_CSWAP_NBI, OP_FINC_NBI,     /* standard */
    OP_FADD_NBI,
    OP_FAND, OP_AND, OP_FOR, OP_OR, OP_FXOR, OP_XOR, OP_FAND_NBI, OP_FOR_NBI,  /* bitwise */
    OP_FXOR_NBI,
    N_OPS
};
static const char *op_name[N_OPS] = {
    "fetch", "set", "swap", "fetch_nbi", "swap_nbi", "compare_swap", "fetch_inc", "inc",
    "fetch_add", "add", "compare_swap_nbi", "fetch_inc_nbi", "fetch_add_nbi", "fetch_and", "and",
    "fetch_or", "or", "fetch_xor", "xor", "fetch_and_nbi", "fetch_or_nbi", "fetch_xor_nbi"};

static __host__ __device__ bool op_fetches(int op) {
    return op != OP_SET && op != OP_INC && op != OP_ADD && op != OP_AND && op != OP_OR && op != OP_XOR;
}

/* After an op that did not return directly: an _nbi result is in *f once quiet returns; a
 * non-fetching op is ordered before this thread's next AMO on the word only by a fence
 * (OpenSHMEM orders non-fetching AMOs like puts). */
template <typename T>
static __host__ __device__ __forceinline__ T amo_finish(int op, T v, T *f) {
    if (op_fetches(op)) {
        gshmem_quiet();
        return *f;
    }
    gshmem_fence();
    return v;
}

/* One tag type per (class, TYPENAME): apply(op, ...) runs the named call, from a kernel or
 * from the host. v is the value operand, c the compare_swap condition, f the _nbi target. */
#define EXT_CASES(NAME)                                                                      \
    case OP_FETCH: return gshmem_##NAME##_atomic_fetch(d, pe);                               \
    case OP_SET: gshmem_##NAME##_atomic_set(d, v, pe); break;                                \
    case OP_SWAP: return gshmem_##NAME##_atomic_swap(d, v, pe);                              \
    case OP_FETCH_NBI: gshmem_##NAME##_atomic_fetch_nbi(f, d, pe); break;                    \
    case OP_SWAP_NBI: gshmem_##NAME##_atomic_swap_nbi(f, d, v, pe); break;
#define STD_CASES(NAME)                                                                      \
    case OP_CSWAP: return gshmem_##NAME##_atomic_compare_swap(d, c, v, pe);                  \
    case OP_FINC: return gshmem_##NAME##_atomic_fetch_inc(d, pe);                            \
    case OP_INC: gshmem_##NAME##_atomic_inc(d, pe); break;                                   \
    case OP_FADD: return gshmem_##NAME##_atomic_fetch_add(d, v, pe);                         \
    case OP_ADD: gshmem_##NAME##_atomic_add(d, v, pe); break;                                \
    case OP_CSWAP_NBI: gshmem_##NAME##_atomic_compare_swap_nbi(f, d, c, v, pe); break;       \
    case OP_FINC_NBI: gshmem_##NAME##_atomic_fetch_inc_nbi(f, d, pe); break;                 \
    case OP_FADD_NBI: gshmem_##NAME##_atomic_fetch_add_nbi(f, d, v, pe); break;
#define BIT_CASES(NAME)                                                                      \
    case OP_FAND: return gshmem_##NAME##_atomic_fetch_and(d, v, pe);                         \
    case OP_AND: gshmem_##NAME##_atomic_and(d, v, pe); break;                                \
    case OP_FOR: return gshmem_##NAME##_atomic_fetch_or(d, v, pe);                           \
    case OP_OR: gshmem_##NAME##_atomic_or(d, v, pe); break;                                  \
    case OP_FXOR: return gshmem_##NAME##_atomic_fetch_xor(d, v, pe);                         \
    case OP_XOR: gshmem_##NAME##_atomic_xor(d, v, pe); break;                                \
    case OP_FAND_NBI: gshmem_##NAME##_atomic_fetch_and_nbi(f, d, v, pe); break;              \
    case OP_FOR_NBI: gshmem_##NAME##_atomic_fetch_or_nbi(f, d, v, pe); break;                \
    case OP_FXOR_NBI: gshmem_##NAME##_atomic_fetch_xor_nbi(f, d, v, pe); break;
#define EXT_STD_CASES(NAME) EXT_CASES(NAME) STD_CASES(NAME)
#define ALL_CASES(NAME) EXT_CASES(NAME) STD_CASES(NAME) BIT_CASES(NAME)

#define DEF_TAG(CLASS, NAME, T, NOPS, CASES)                                                 \
    struct CLASS##_##NAME {                                                                  \
        typedef T type;                                                                      \
        static const int nops = NOPS;                                                        \
        static const char *name() { return #NAME; }                                          \
        static __host__ __device__ __forceinline__ T apply(int op, T *d, T v, T c, int pe, T *f) { \
            (void)c;                                                                         \
            switch (op) { CASES(NAME) }                                                      \
            return amo_finish(op, v, f);                                                     \
        }                                                                                    \
    };
#define DEF_EXT(NAME, T) DEF_TAG(ext, NAME, T, OP_CSWAP, EXT_CASES)
#define DEF_STD(NAME, T) DEF_TAG(std, NAME, T, OP_FAND, EXT_STD_CASES)
#define DEF_BIT(NAME, T) DEF_TAG(bit, NAME, T, N_OPS, ALL_CASES)
GSHMEM_AMO_EXT_TYPES(DEF_EXT)
GSHMEM_AMO_STD_TYPES(DEF_STD)
GSHMEM_AMO_BIT_TYPES(DEF_BIT)

/* ---- values as bit patterns (the CPU model works on these) ----------------------------- */
template <typename T> struct ubits { typedef typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type t; };
template <typename T> static __host__ __device__ unsigned long long to_bits(T v) {
    typename ubits<T>::t u;
    memcpy(&u, &v, sizeof u);
    return u;
}
template <typename T> static __host__ __device__ T from_bits(unsigned long long b) {
    typename ubits<T>::t u = (typename ubits<T>::t)b;
    T v;
    memcpy(&v, &u, sizeof v);
    return v;
}
/* A random operand: any bit pattern for integers, an exactly representable number for
 * float/double (no NaN, whose payload a copy need not keep). */
template <typename T> static T rand_val(uint64_t *rng) {
    if constexpr (std::is_floating_point<T>::value) return (T)((double)(int32_t)rng_next(rng) / 64.0);
    else return (T)rng_next(rng);
}
/* A returned counter value as a number; anything that is not a small non-negative integer
 * (poison, a negative, a fraction) maps to ~0 so it fails the range check. */
template <typename T> static unsigned long long as_count(T v) {
    if constexpr (std::is_floating_point<T>::value) {
        double d = (double)v;
        return d >= 0 && d < 1e15 && d == (double)(unsigned long long)d ? (unsigned long long)d : ~0ull;
    } else {
        return (unsigned long long)v;
    }
}

/* The sequential model of one word: applies op, returns the old value (all mod 2^bits). */
static unsigned long long model_step(int op, unsigned long long *cur, unsigned long long v,
                                     unsigned long long c, unsigned long long mask) {
    unsigned long long old = *cur;
    switch (op) {
    case OP_SET: case OP_SWAP: case OP_SWAP_NBI: *cur = v; break;
    case OP_CSWAP: case OP_CSWAP_NBI: if (old == c) *cur = v; break;
    case OP_FINC: case OP_INC: case OP_FINC_NBI: *cur = (old + 1) & mask; break;
    case OP_FADD: case OP_ADD: case OP_FADD_NBI: *cur = (old + v) & mask; break;
    case OP_FAND: case OP_AND: case OP_FAND_NBI: *cur = old & v; break;
    case OP_FOR: case OP_OR: case OP_FOR_NBI: *cur = old | v; break;
    case OP_FXOR: case OP_XOR: case OP_FXOR_NBI: *cur = old ^ v; break;
    default: break;   /* fetch */
    }
    return old;
}

/* ---- 1. scripts: random op sequences against the CPU model -------------------------------- */
/* Thread j runs its k ops on word j of PE pe. out[x] receives the returned (or _nbi fetched)
 * old value of op x. */
template <class Tag>
__global__ void script_kernel(typename Tag::type *words, const int *ops, const typename Tag::type *vals,
                              const typename Tag::type *conds, typename Tag::type *out, int k, int pe) {
    int j = threadIdx.x;
    for (int i = 0; i < k; i++) {
        int x = j * k + i;
        out[x] = Tag::apply(ops[x], words + j, vals[x], conds[x], pe, out + x);
    }
}

template <typename T> static T *to_device(const std::vector<T> &v) {
    T *d;
    CK(cudaMalloc(&d, v.size() * sizeof(T)));
    CK(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

/* sym: symmetric scratch of (2 * GUARD_W + SCRIPT_W) words. Each PE runs its own script (its
 * own random stream) on `target`; whoever targets this PE must leave its guard words alone. */
template <class Tag>
static void script(void *sym_v, bool host, int target, uint64_t *rng) {
    typedef typename Tag::type T;
    int me = gshmem_my_pe();
    T *sym = (T *)sym_v, *words = sym + GUARD_W;
    const int nw = host ? 2 : SCRIPT_W, k = host || test_light() ? 16 : 64, n = nw * k;
    const unsigned long long mask = sizeof(T) == 8 ? ~0ull : 0xffffffffull;
    std::vector<int> ops(n);
    std::vector<T> vals(n), conds(n), want(n), got(n);
    std::vector<unsigned long long> fin(nw);
    for (int j = 0; j < nw; j++) {
        unsigned long long cur = 0;
        for (int i = 0; i < k; i++) {
            int x = j * k + i;
            ops[x] = i == 0 ? OP_SET : (int)(rng_next(rng) % Tag::nops);
            vals[x] = rand_val<T>(rng);
            /* compare_swap: half the time the condition holds */
            conds[x] = rng_next(rng) & 1 ? from_bits<T>(cur) : rand_val<T>(rng);
            want[x] = from_bits<T>(model_step(ops[x], &cur, to_bits(vals[x]), to_bits(conds[x]), mask));
        }
        fin[j] = cur;
    }
    size_t symbytes = (2 * GUARD_W + SCRIPT_W) * sizeof(T);
    fill_byte<<<1, 256>>>((uint8_t *)sym, symbytes, POISON);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();
    memset(got.data(), POISON, n * sizeof(T));
    if (host) {
        for (int x = 0; x < n; x++) got[x] = Tag::apply(ops[x], words + x / k, vals[x], conds[x], target, &got[x]);
    } else {
        int *d_ops = to_device(ops);
        T *d_vals = to_device(vals), *d_conds = to_device(conds), *d_out = to_device(got);
        script_kernel<Tag><<<1, nw>>>(words, d_ops, d_vals, d_conds, d_out, k, target);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(got.data(), d_out, n * sizeof(T), cudaMemcpyDeviceToHost));
        cudaFree(d_ops);
        cudaFree(d_vals);
        cudaFree(d_conds);
        cudaFree(d_out);
    }
    gshmem_barrier_all();
    const char *from = host ? "host" : "device";
    first_bad b;
    for (int x = 0; x < n; x++)
        if (op_fetches(ops[x]) && to_bits(got[x]) != to_bits(want[x])) b.note(x, to_bits(want[x]), to_bits(got[x]));
    EXPECT(b.count == 0,
           "%s script on gshmem_%s_atomic_* to PE %d: %zu wrong old values; first at word %zu op %zu "
           "(gshmem_%s_atomic_%s): expected 0x%llx, got 0x%llx",
           from, Tag::name(), target, b.count, b.index / k, b.index % k, Tag::name(),
           op_name[ops[b.count ? b.index : 0]], b.expected, b.actual);
    /* the words as the target holds them now */
    std::vector<T> tv(nw);
    gshmem_getmem(tv.data(), words, nw * sizeof(T), target);
    first_bad f;
    for (int j = 0; j < nw; j++)
        if (to_bits(tv[j]) != fin[j]) f.note(j, fin[j], to_bits(tv[j]));
    EXPECT(f.count == 0,
           "%s script on gshmem_%s_atomic_* to PE %d: %zu wrong final words; word %zu: expected 0x%llx, got 0x%llx",
           from, Tag::name(), target, f.count, f.index, f.expected, f.actual);
    /* my guard words and unused words (whoever targeted me used the first nw) are poison */
    std::vector<uint8_t> img(symbytes);
    CK(cudaMemcpy(img.data(), sym, symbytes, cudaMemcpyDeviceToHost));
    first_bad g;
    for (size_t i = 0; i < symbytes; i++) {
        bool used = i >= GUARD_W * sizeof(T) && i < (GUARD_W + nw) * sizeof(T);
        if (!used && img[i] != POISON) g.note(i, POISON, img[i]);
    }
    EXPECT(g.count == 0,
           "%s script on gshmem_%s_atomic_*: PE %d's bytes outside the words changed: %zu bytes, first at "
           "byte %lld of the words: expected 0x%02llx, got 0x%02llx",
           from, Tag::name(), me, g.count, (long long)g.index - (long long)(GUARD_W * sizeof(T)), g.expected, g.actual);
    gshmem_barrier_all();
}

/* ---- 2. counters on one word: every returned value exactly once ------------------------- */
/* Checked on the target: v (all PEs' returned values, per_pe each) must be 0..v.size()-1,
 * each once. */
static void check_permutation(const char *what, const std::vector<unsigned long long> &v, size_t per_pe) {
    size_t n = v.size();
    std::vector<uint8_t> seen(n, 0);
    first_bad b;
    for (size_t i = 0; i < n; i++) {
        if (v[i] >= n) b.note(i, n, v[i]);
        else if (seen[v[i]]++) b.note(i, n, v[i]);
    }
    EXPECT(b.count == 0,
           "%s: %zu of %zu returned values out of range [0, %llu) or repeated; first: PE %zu's value %zu is %llu",
           what, b.count, n, b.expected, b.index / per_pe, b.index % per_pe, b.actual);
}

template <class Tag>
static __host__ __device__ typename Tag::type fetch_one(int how, typename Tag::type *ctr, int pe,
                                                        typename Tag::type *f) {
    typedef typename Tag::type T;
    switch (how & 3) {
    case 0: return Tag::apply(OP_FADD, ctr, (T)1, (T)0, pe, f);
    case 1: return Tag::apply(OP_FINC, ctr, (T)0, (T)0, pe, f);
    case 2: return Tag::apply(OP_FADD_NBI, ctr, (T)1, (T)0, pe, f);
    default: return Tag::apply(OP_FINC_NBI, ctr, (T)0, (T)0, pe, f);
    }
}

/* The lock-free counter: read, then compare_swap old -> old + 1 until it sticks. */
template <class Tag>
static __host__ __device__ typename Tag::type cas_increment(typename Tag::type *ctr, int pe) {
    typedef typename Tag::type T;
    T old = Tag::apply(OP_FETCH, ctr, (T)0, (T)0, pe, (T *)0);
    for (;;) {
        T seen = Tag::apply(OP_CSWAP, ctr, (T)(old + (T)1), old, pe, (T *)0);
        if (seen == old) return old;
        old = seen;
    }
}

enum { CNT_FADD, CNT_CAS };
template <class Tag>
__global__ void counter_kernel(typename Tag::type *ctr, int pe, int reps, int mode, typename Tag::type *out) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < reps; r++) {
        typename Tag::type *o = out + (size_t)t * reps + r;
        *o = mode == CNT_CAS ? cas_increment<Tag>(ctr, pe) : fetch_one<Tag>(t + r, ctr, pe, o);
    }
}

/* Every PE's kernel (and its host thread, concurrently) increments one word of `target`. */
template <class Tag>
static void counter(void *ctr_v, void *gather_v, int target, int mode, cudaStream_t s) {
    typedef typename Tag::type T;
    int me = gshmem_my_pe(), np = gshmem_n_pes();
    T *ctr = (T *)ctr_v, *gather = (T *)gather_v;
    const bool light = test_light();   /* (common.h: the same checks, fewer requests) */
    const int blocks = light ? 1 : mode == CNT_CAS ? 4 : 16, threads = light ? 32 : mode == CNT_CAS ? 64 : 256;
    const int reps = light ? 2 : mode == CNT_CAS ? 2 : 4, hops = light ? 4 : mode == CNT_CAS ? 4 : 32;
    const size_t dev = (size_t)blocks * threads * reps, per_pe = dev + hops, total = per_pe * np;
    T *out;
    CK(cudaMalloc(&out, dev * sizeof(T)));
    CK(cudaMemset(out, POISON, dev * sizeof(T)));
    CK(cudaMemset(ctr, 0, sizeof(T)));
    CK(cudaMemset(gather, POISON, total * sizeof(T)));
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();
    counter_kernel<Tag><<<blocks, threads, 0, s>>>(ctr, target, reps, mode, out);
    CK(cudaGetLastError());
    std::vector<T> hout(hops);
    for (int h = 0; h < hops; h++)
        hout[h] = mode == CNT_CAS ? cas_increment<Tag>(ctr, target) : fetch_one<Tag>(h, ctr, target, &hout[h]);
    CK(cudaStreamSynchronize(s));
    gshmem_putmem(gather + me * per_pe, out, dev * sizeof(T), target);
    gshmem_putmem(gather + me * per_pe + dev, hout.data(), hops * sizeof(T), target);
    gshmem_barrier_all();
    const char *what = mode == CNT_CAS ? "compare_swap counter" : "fetch_add/fetch_inc(+_nbi) counter";
    T fin = Tag::apply(OP_FETCH, ctr, (T)0, (T)0, target, (T *)0);
    EXPECT(as_count(fin) == total,
           "gshmem_%s %s on PE %d from %d PEs x (%d threads x %d + host %d): final %llu, expected %zu",
           Tag::name(), what, target, np, blocks * threads, reps, hops, as_count(fin), total);
    if (me == target) {
        std::vector<T> all(total);
        CK(cudaMemcpy(all.data(), gather, total * sizeof(T), cudaMemcpyDeviceToHost));
        std::vector<unsigned long long> v(total);
        for (size_t i = 0; i < total; i++) v[i] = as_count(all[i]);
        char buf[160];
        snprintf(buf, sizeof buf, "gshmem_%s %s on PE %d", Tag::name(), what, target);
        check_permutation(buf, v, per_pe);
    }
    gshmem_barrier_all();
    cudaFree(out);
}

/* ---- 3. many words of every PE: exact final counts -------------------------------------- */
/* Op r of agent g (a device thread, or a PE's host thread) adds to word w of PE pe: kind 0
 * inc, 1 add(k), 2 fetch_add(k), 3 fetch_inc. */
struct spread_op { int pe, w, kind; unsigned k; };
static __host__ __device__ spread_op spread_at(unsigned g, unsigned r, int np, int nw) {
    spread_op o;
    o.pe = (int)((g + r) % (unsigned)np);
    o.w = (int)((g * 7u + r * 13u) % (unsigned)nw);
    o.kind = (int)((g + 3 * r) & 3);
    o.k = o.kind == 1 || o.kind == 2 ? 1 + (g + r) % 3 : 1;
    return o;
}
template <class Tag>
static __host__ __device__ void spread_apply(typename Tag::type *words, spread_op o) {
    typedef typename Tag::type T;
    int op = o.kind == 0 ? OP_INC : o.kind == 1 ? OP_ADD : o.kind == 2 ? OP_FADD : OP_FINC;
    Tag::apply(op, words + o.w, (T)o.k, (T)0, o.pe, (T *)0);
}

#define SPREAD_W 64
#define SPREAD_BLOCKS 8
#define SPREAD_THREADS 256
#define SPREAD_REPS 8
#define SPREAD_HOST_OPS 16
template <class Tag>
__global__ void spread_kernel(typename Tag::type *words) {
    int me = gshmem_my_pe(), np = gshmem_n_pes();
    unsigned nthreads = gridDim.x * blockDim.x;
    unsigned g = me * nthreads + blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned r = 0; r < SPREAD_REPS; r++) spread_apply<Tag>(words, spread_at(g, r, np, SPREAD_W));
    gshmem_quiet();
}

template <class Tag>
static void spread(void *words_v, cudaStream_t s) {
    typedef typename Tag::type T;
    int me = gshmem_my_pe(), np = gshmem_n_pes();
    T *words = (T *)words_v;
    const unsigned blocks = test_light() ? 1 : SPREAD_BLOCKS, nthreads = blocks * SPREAD_THREADS;
    CK(cudaMemset(words, 0, SPREAD_W * sizeof(T)));
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();
    spread_kernel<Tag><<<blocks, SPREAD_THREADS, 0, s>>>(words);
    CK(cudaGetLastError());
    /* host agents are numbered after every device thread of every PE */
    unsigned hg = np * nthreads + me;
    for (unsigned r = 0; r < SPREAD_HOST_OPS; r++) spread_apply<Tag>(words, spread_at(hg, r, np, SPREAD_W));
    gshmem_quiet();
    CK(cudaStreamSynchronize(s));
    gshmem_barrier_all();
    std::vector<unsigned long long> want(SPREAD_W, 0);
    for (unsigned g = 0; g < np * nthreads + np; g++) {
        unsigned reps = g < np * nthreads ? SPREAD_REPS : SPREAD_HOST_OPS;
        for (unsigned r = 0; r < reps; r++) {
            spread_op o = spread_at(g, r, np, SPREAD_W);
            if (o.pe == me) want[o.w] += o.k;
        }
    }
    std::vector<T> got(SPREAD_W);
    CK(cudaMemcpy(got.data(), words, SPREAD_W * sizeof(T), cudaMemcpyDeviceToHost));
    first_bad b;
    for (int w = 0; w < SPREAD_W; w++)
        if (as_count(got[w]) != want[w]) b.note(w, want[w], as_count(got[w]));
    EXPECT(b.count == 0, "gshmem_%s inc/add/fetch_add/fetch_inc from all PEs (device and host) onto %d words of every PE: "
           "%zu wrong counts on PE %d; word %zu: expected %llu, got %llu",
           Tag::name(), SPREAD_W, b.count, me, b.index, b.expected, b.actual);
    gshmem_barrier_all();
}

/* ---- 4. bitwise on shared words: each thread owns one bit ------------------------------- */
#define BITS_BLOCKS 4
#define BITS_THREADS 128
#define BITS_OLDS 5
static __host__ __device__ bool keep_bit(uint64_t seed, unsigned g) { return pattern(seed, 0, g) & 1; }

/* Thread g owns bit g of the array on `pe` (32 or 64 threads share a word, from every PE).
 * It flips its bit through every bitwise call; the old values it gets back must show its own
 * bit as its own history says (others' bits change under it), and it ends set iff keep_bit. */
template <class Tag>
__global__ void bits_kernel(typename Tag::type *words, int pe, uint64_t seed, typename Tag::type *olds) {
    typedef typename Tag::type T;
    typedef typename ubits<T>::t U;
    const unsigned nb = 8 * sizeof(T);
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned g = gshmem_my_pe() * (gridDim.x * blockDim.x) + t;
    T *w = words + g / nb, *o = olds + (size_t)t * BITS_OLDS;
    T m = (T)((U)1 << (g % nb)), nm = (T)~(U)m;
    o[0] = Tag::apply(OP_FOR, w, m, (T)0, pe, o + 0);       /* clear -> set */
    Tag::apply(OP_XOR, w, m, (T)0, pe, (T *)0);              /* -> clear */
    o[1] = Tag::apply(OP_FXOR, w, m, (T)0, pe, o + 1);      /* clear -> set */
    Tag::apply(OP_AND, w, nm, (T)0, pe, (T *)0);             /* -> clear */
    Tag::apply(OP_OR, w, m, (T)0, pe, (T *)0);               /* -> set */
    o[2] = Tag::apply(OP_FAND_NBI, w, nm, (T)0, pe, o + 2); /* set -> clear */
    o[3] = Tag::apply(OP_FOR_NBI, w, m, (T)0, pe, o + 3);   /* clear -> set */
    o[4] = Tag::apply(OP_FXOR_NBI, w, m, (T)0, pe, o + 4);  /* set -> clear */
    if (keep_bit(seed, g)) Tag::apply(OP_OR, w, m, (T)0, pe, (T *)0);
    gshmem_quiet();
}

template <class Tag>
static void bits(void *words_v, int target, uint64_t seed, cudaStream_t s) {
    typedef typename Tag::type T;
    int me = gshmem_my_pe(), np = gshmem_n_pes();
    T *words = (T *)words_v;
    const unsigned nblocks = test_light() ? 1 : BITS_BLOCKS, nb = 8 * sizeof(T), nthreads = nblocks * BITS_THREADS;
    const unsigned nwords = (np * nthreads + nb - 1) / nb;
    T *olds;
    CK(cudaMalloc(&olds, nthreads * BITS_OLDS * sizeof(T)));
    CK(cudaMemset(olds, POISON, nthreads * BITS_OLDS * sizeof(T)));
    CK(cudaMemset(words, 0, nwords * sizeof(T)));
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();
    bits_kernel<Tag><<<nblocks, BITS_THREADS, 0, s>>>(words, target, seed, olds);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(s));
    gshmem_barrier_all();
    std::vector<T> o(nthreads * BITS_OLDS);
    CK(cudaMemcpy(o.data(), olds, o.size() * sizeof(T), cudaMemcpyDeviceToHost));
    static const bool was_set[BITS_OLDS] = {false, false, true, false, true};
    static const char *call[BITS_OLDS] = {"fetch_or", "fetch_xor", "fetch_and_nbi", "fetch_or_nbi", "fetch_xor_nbi"};
    first_bad b;
    for (unsigned t = 0; t < nthreads; t++) {
        unsigned g = me * nthreads + t;
        for (int k = 0; k < BITS_OLDS; k++) {
            bool set = (to_bits(o[t * BITS_OLDS + k]) >> (g % nb)) & 1;
            if (set != was_set[k]) b.note(t * BITS_OLDS + k, was_set[k], set);
        }
    }
    EXPECT(b.count == 0, "gshmem_%s bitwise on shared words of PE %d: %zu old values show the caller's own bit wrong; "
           "first: thread %zu's gshmem_%s_atomic_%s: expected bit %llu, got %llu",
           Tag::name(), target, b.count, b.index / BITS_OLDS, Tag::name(), call[b.count ? b.index % BITS_OLDS : 0],
           b.expected, b.actual);
    if (me == target) {
        std::vector<T> got(nwords);
        CK(cudaMemcpy(got.data(), words, nwords * sizeof(T), cudaMemcpyDeviceToHost));
        first_bad f;
        for (unsigned w = 0; w < nwords; w++) {
            unsigned long long want = 0;
            for (unsigned k = 0; k < nb && w * nb + k < np * nthreads; k++)
                if (keep_bit(seed, w * nb + k)) want |= 1ull << k;
            if (to_bits(got[w]) != want) f.note(w, want, to_bits(got[w]));
        }
        EXPECT(f.count == 0,
               "gshmem_%s bitwise on shared words: PE %d's final words not bit-exact: %zu words; word %zu: "
               "expected 0x%llx, got 0x%llx",
               Tag::name(), me, f.count, f.index, f.expected, f.actual);
    }
    gshmem_barrier_all();
    cudaFree(olds);
}

/* ---- 5. swap chain: tokens are exchanged, never lost or duplicated (float/double too) ---- */
#define SWAP_BLOCKS 8
#define SWAP_THREADS 128
#define SWAP_REPS 2
#define SWAP_HOST_OPS 8
template <class Tag>
__global__ void swap_kernel(typename Tag::type *word, int pe, size_t first_token, typename Tag::type *out) {
    typedef typename Tag::type T;
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < SWAP_REPS; r++) {
        size_t i = (size_t)t * SWAP_REPS + r;
        out[i] = Tag::apply((t + r) & 1 ? OP_SWAP_NBI : OP_SWAP, word, (T)(first_token + i), (T)0, pe, out + i);
    }
}

/* Tokens 1..total go in (device threads and host threads of every PE); the returned olds
 * plus the final value must be exactly 0..total. */
template <class Tag>
static void swap_chain(void *word_v, void *gather_v, int target, cudaStream_t s) {
    typedef typename Tag::type T;
    int me = gshmem_my_pe(), np = gshmem_n_pes();
    T *word = (T *)word_v, *gather = (T *)gather_v;
    const int blocks = test_light() ? 1 : SWAP_BLOCKS;
    const size_t dev = (size_t)blocks * SWAP_THREADS * SWAP_REPS, per_pe = dev + SWAP_HOST_OPS, total = per_pe * np;
    T *out;
    CK(cudaMalloc(&out, dev * sizeof(T)));
    CK(cudaMemset(out, POISON, dev * sizeof(T)));
    CK(cudaMemset(word, 0, sizeof(T)));
    CK(cudaMemset(gather, POISON, (total + 1) * sizeof(T)));
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();
    size_t first = 1 + me * per_pe;
    swap_kernel<Tag><<<blocks, SWAP_THREADS, 0, s>>>(word, target, first, out);
    CK(cudaGetLastError());
    std::vector<T> hout(SWAP_HOST_OPS);
    for (int h = 0; h < SWAP_HOST_OPS; h++)
        hout[h] = Tag::apply(h & 1 ? OP_SWAP_NBI : OP_SWAP, word, (T)(first + dev + h), (T)0, target, &hout[h]);
    CK(cudaStreamSynchronize(s));
    gshmem_putmem(gather + me * per_pe, out, dev * sizeof(T), target);
    gshmem_putmem(gather + me * per_pe + dev, hout.data(), SWAP_HOST_OPS * sizeof(T), target);
    gshmem_barrier_all();
    if (me == target) {
        T fin = Tag::apply(OP_FETCH, word, (T)0, (T)0, me, (T *)0);
        std::vector<T> all(total);
        CK(cudaMemcpy(all.data(), gather, total * sizeof(T), cudaMemcpyDeviceToHost));
        std::vector<unsigned long long> v(total + 1);
        for (size_t i = 0; i < total; i++) v[i] = as_count(all[i]);
        v[total] = as_count(fin);
        char buf[160];
        snprintf(buf, sizeof buf, "gshmem_%s_atomic_swap(+_nbi) chain on PE %d (final value last)", Tag::name(), target);
        check_permutation(buf, v, per_pe);
    }
    gshmem_barrier_all();
    cudaFree(out);
}

int main(void) {
    gshmem_init();
    int me = gshmem_my_pe(), np = gshmem_n_pes(), next = (me + 1) % np;
    uint64_t seed = agree_seed();
    uint64_t rng = (seed ^ (0x2545F4914F6CDD1Dull * (uint64_t)(me + 1))) | 1;  /* per-PE scripts */
    void *sym = gshmem_malloc((2 * GUARD_W + SCRIPT_W) * 8);
    void *word = gshmem_malloc(64 * 1024);
    void *gather = gshmem_malloc((size_t)np * 32768 * 8);
    if (!sym || !word || !gather) { fprintf(stderr, "allocation failed\n"); return 2; }
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int k = 0;  /* rotates the contended PE */
#define RUN_SCRIPTS(TAG)                                                                     \
    script<TAG>(sym, false, next, &rng);                                                     \
    script<TAG>(sym, false, me, &rng);                                                       \
    script<TAG>(sym, true, next, &rng);                                                      \
    script<TAG>(sym, true, me, &rng);
#define RUN_EXT(NAME, T) { RUN_SCRIPTS(ext_##NAME) swap_chain<ext_##NAME>(word, gather, k++ % np, s); }
#define RUN_STD(NAME, T)                                                                     \
    {                                                                                        \
        RUN_SCRIPTS(std_##NAME)                                                              \
        counter<std_##NAME>(word, gather, k % np, CNT_FADD, s);                              \
        counter<std_##NAME>(word, gather, k++ % np, CNT_CAS, s);                             \
        spread<std_##NAME>(word, s);                                                         \
    }
#define RUN_BIT(NAME, T) { RUN_SCRIPTS(bit_##NAME) bits<bit_##NAME>(word, k % np, seed + k, s); k++; }
    GSHMEM_AMO_EXT_TYPES(RUN_EXT)
    GSHMEM_AMO_STD_TYPES(RUN_STD)
    GSHMEM_AMO_BIT_TYPES(RUN_BIT)
    cudaStreamDestroy(s);
    gshmem_free(gather);
    gshmem_free(word);
    gshmem_free(sym);
    int rc = summary("test_amo");
    gshmem_finalize();
    return rc;
}
