/* Proves put-with-signal and the signal calls. putmem_signal, TYPENAME_put_signal (every RMA
 * type) and putSIZE_signal (8 .. 128), blocking and _nbi, at thread, warp and block scope,
 * with SIGNAL_SET and SIGNAL_ADD (up to 4 groups each adding to one signal), 1 B .. 4 MiB at
 * unaligned offsets: a receiver that waits for the signal (gshmem_signal_wait_until in a
 * kernel, or its blocking host form) sees every byte of the data, and nothing around it
 * changed, as soon as it sees the signal; signal_fetch reads the final value. The host forms
 * of every put_signal family likewise. gshmemx_signal_op SET and ADD from kernels and the
 * host (concurrent ADDs from every PE sum exactly). A ring pipeline of 40 rounds built only
 * from putmem_signal_on_stream, signal_wait_until_on_stream and signal_op_on_stream moves
 * every byte without a host barrier. */
#include <vector>

#include "common.h"

enum scope { THREAD, WARP, BLOCK };
static const char *scope_name[] = {"thread", "warp", "block"};
#define GUARD 64
#define POISON 0xA5
#define MAXG 4                  /* groups adding to one signal */
#define MAX_BYTES (4ull << 20)

/* One interface over the put_signal families (bytes, typed, sized): esize is the element
 * size; put<S, NBI> is the device call of that scope, host() the host form. The byte and
 * sized families are launched at every scope, blocking and _nbi; each typed family at one
 * (scope, _nbi) combination, rotating over the type list (`combo`), so every combination
 * is covered by several types without 6 kernels per type. */
#define DEF_API(ID, E, COMBO, FN, XFN, PT)                                                   \
    struct api_##ID {                                                                        \
        static const size_t esize = E;                                                       \
        static const int combo = COMBO;                                                      \
        template <int S, bool NBI>                                                           \
        static __device__ void put(void *d, const void *s, size_t n, uint64_t *sig, uint64_t v, \
                                   int op, int pe) {                                         \
            PT *dd = (PT *)d;                                                                \
            const PT *ss = (const PT *)s;                                                    \
            if constexpr (S == THREAD && NBI) FN##_nbi(dd, ss, n, sig, v, op, pe);           \
            if constexpr (S == THREAD && !NBI) FN(dd, ss, n, sig, v, op, pe);                \
            if constexpr (S == WARP && NBI) XFN##_nbi_warp(dd, ss, n, sig, v, op, pe);       \
            if constexpr (S == WARP && !NBI) XFN##_warp(dd, ss, n, sig, v, op, pe);          \
            if constexpr (S == BLOCK && NBI) XFN##_nbi_block(dd, ss, n, sig, v, op, pe);     \
            if constexpr (S == BLOCK && !NBI) XFN##_block(dd, ss, n, sig, v, op, pe);        \
        }                                                                                    \
        static void host(void *d, const void *s, size_t n, uint64_t *sig, uint64_t v, int op, \
                         int pe, bool nbi) {                                                 \
            if (nbi) FN##_nbi((PT *)d, (const PT *)s, n, sig, v, op, pe);                    \
            else FN((PT *)d, (const PT *)s, n, sig, v, op, pe);                              \
        }                                                                                    \
    };
DEF_API(mem, 1, -1, gshmem_putmem_signal, gshmemx_putmem_signal, void)
enum { typed_base = __COUNTER__ };
#define DEF_TYPED_API(NAME, T)                                                               \
    DEF_API(NAME, sizeof(T), (__COUNTER__ - typed_base) % 6, gshmem_##NAME##_put_signal,     \
            gshmemx_##NAME##_put_signal, T)
GSHMEM_RMA_TYPES(DEF_TYPED_API)
#define DEF_SIZED_API(BITS)                                                                  \
    DEF_API(put##BITS, BITS / 8, -1, gshmem_put##BITS##_signal, gshmemx_put##BITS##_signal, void)
GSHMEM_SIZED_BITS(DEF_SIZED_API)

struct send_args {
    uint8_t *dst;
    const uint8_t *src;
    size_t nelems;
    uint64_t *sig;
    uint64_t sigval[MAXG];
    int groups, sig_op, pe;
};

/* Group g (thread, warp or block g) puts its share of the elements and updates the signal. */
template <class API, int S, bool NBI>
__global__ void sender(send_args a) {
    int g = S == THREAD ? threadIdx.x : S == WARP ? threadIdx.x / 32 : blockIdx.x;
    size_t lo = a.nelems * g / a.groups, hi = a.nelems * (g + 1) / a.groups;
    API::template put<S, NBI>(a.dst + lo * API::esize, a.src + lo * API::esize, hi - lo, a.sig,
                              a.sigval[g], a.sig_op, a.pe);
    if (NBI) {
        if (S == THREAD) gshmem_quiet();
        else if (S == WARP) gshmemx_quiet_warp();
        else gshmemx_quiet_block();
    }
}

template <class API, int S, bool NBI> static void launch_one(const send_args &a, cudaStream_t st) {
    if (S == THREAD) sender<API, S, NBI><<<1, a.groups, 0, st>>>(a);
    if (S == WARP) sender<API, S, NBI><<<1, 32 * a.groups, 0, st>>>(a);
    if (S == BLOCK) sender<API, S, NBI><<<a.groups, 512, 0, st>>>(a);
}
/* combo c: scope c % 3, _nbi (c / 3) % 2 (and, in a plan, SIGNAL_ADD (c / 6) % 2) */
template <class API, int C> static int launch_combo(const send_args &a, int s, bool nbi, cudaStream_t st) {
    if constexpr (API::combo < 0 || API::combo == C) {
        if (s == C % 3 && nbi == (C / 3 == 1)) {
            launch_one<API, C % 3, C / 3 == 1>(a, st);
            return 1;
        }
    }
    return 0;
}
template <class API> static void launch_sender(const send_args &a, int s, bool nbi, cudaStream_t st) {
    int n = launch_combo<API, 0>(a, s, nbi, st) + launch_combo<API, 1>(a, s, nbi, st) +
            launch_combo<API, 2>(a, s, nbi, st) + launch_combo<API, 3>(a, s, nbi, st) +
            launch_combo<API, 4>(a, s, nbi, st) + launch_combo<API, 5>(a, s, nbi, st);
    if (n != 1) {   /* a plan asked for a combination this family was not built for */
        fprintf(stderr, "test_signal: no sender kernel for scope %d nbi %d (test bug)\n", s, nbi);
        exit(2);
    }
}

struct api_entry {
    const char *name;
    size_t esize;
    int combo;   /* the one combination a typed family is launched at, or -1: all */
    void (*launch)(const send_args &, int, bool, cudaStream_t);
    void (*host)(void *, const void *, size_t, uint64_t *, uint64_t, int, int, bool);
};
#define ENTRY(ID, LABEL) {LABEL, api_##ID::esize, api_##ID::combo, launch_sender<api_##ID>, api_##ID::host},
#define TYPED_ENTRY(NAME, T) ENTRY(NAME, "gshmem_" #NAME "_put_signal")
#define SIZED_ENTRY(BITS) ENTRY(put##BITS, "gshmem_put" #BITS "_signal")
static const api_entry apis[] = {
    ENTRY(mem, "gshmem_putmem_signal") GSHMEM_RMA_TYPES(TYPED_ENTRY) GSHMEM_SIZED_BITS(SIZED_ENTRY)};
static const int n_apis = sizeof apis / sizeof apis[0];

/* Each block's thread 0 waits for the signal (acquire), then the whole grid checks the data
 * and the guard bytes around it. bad[0] counts wrong signal values; bad[1], bad[2] keep the
 * last wrong wait result and fetch. */
__global__ void receiver(const uint8_t *p, size_t n, uint64_t *sig, int cmp, uint64_t cmpval,
                         uint64_t want, uint64_t seed, int from, uint64_t first, mismatch *m,
                         unsigned long long *bad) {
    if (threadIdx.x == 0) {
        uint64_t got = gshmem_signal_wait_until(sig, cmp, cmpval);
        uint64_t f = gshmem_signal_fetch(sig);
        if (got != want || f != want) {
            atomicAdd(bad, 1ull);
            bad[1] = got;
            bad[2] = f;
        }
    }
    __syncthreads();
    verify_range(p, n, seed, from, first, GUARD, POISON, m);
}

/* ---- put_signal rounds --------------------------------------------------------------------- */
enum mode { DEV_TO_DEV, HOST_SENDS, HOST_WAITS };
static const char *mode_name[] = {"kernel -> kernel", "host put_signal -> kernel wait", "kernel -> host wait"};

struct plan {
    int api, scope, nbi, op, groups, cmp;
    size_t nelems, soff, doff;
    uint64_t sigval[MAXG], want, cmpval;
};

/* Same on every PE (shared random stream): each PE sends to next and receives from prev with
 * the same plan. `cum` is the signal's value so far; the plan's updates end at `want`, and
 * the wait condition holds only at `want`. */
static plan make_plan(int api, int combo, uint64_t *rng, uint64_t *cum) {
    plan p;
    size_t e = apis[api].esize;
    p.api = api;
    p.scope = combo % 3;
    p.nbi = (combo / 3) % 2;
    p.op = (combo / 6) % 2 ? GSHMEM_SIGNAL_ADD : GSHMEM_SIGNAL_SET;
    unsigned lg = rng_next(rng) % 23;
    size_t nb = 1 + rng_next(rng) % ((size_t)1 << lg);   /* 1 B .. 4 MiB, log-uniform */
    p.nelems = nb / e ? nb / e : 1;
    p.soff = rng_next(rng) % 64 / e * e;
    p.doff = rng_next(rng) % 64 / e * e;
    p.groups = p.op == GSHMEM_SIGNAL_SET ? 1 : 1 + (int)(rng_next(rng) % MAXG);
    if ((size_t)p.groups > p.nelems) p.groups = (int)p.nelems;
    if (p.op == GSHMEM_SIGNAL_SET) {
        p.sigval[0] = *cum + 1 + rng_next(rng) % 1000;
        p.want = p.sigval[0];
    } else {
        p.want = *cum;
        for (int g = 0; g < p.groups; g++) p.want += p.sigval[g] = 1 + rng_next(rng) % 1000;
    }
    *cum = p.want;
    static const int cmps[3] = {GSHMEM_CMP_EQ, GSHMEM_CMP_GE, GSHMEM_CMP_GT};
    p.cmp = cmps[rng_next(rng) % 3];
    p.cmpval = p.cmp == GSHMEM_CMP_GT ? p.want - 1 : p.want;
    return p;
}

struct bufs {
    uint8_t *dst;       /* symmetric: MAX_BYTES + 2 GUARD + 64 */
    uint8_t *src;       /* device, local */
    uint8_t *hsrc;      /* pageable host copy of src */
    uint64_t *sig;      /* symmetric */
    mismatch *m;        /* mapped host */
    unsigned long long *bad;
};

static void put_signal_round(const plan &p, int mode, uint64_t seed, bufs &b, cudaStream_t s1,
                             cudaStream_t s2, uint64_t *rng) {
    int me = gshmem_my_pe(), np = gshmem_n_pes(), next = (me + 1) % np, prev = (me + np - 1) % np;
    const api_entry &api = apis[p.api];
    size_t nbytes = p.nelems * api.esize;
    bool from_host_mem = mode == HOST_SENDS && (rng_next(rng) & 1);
    uint8_t *dest = b.dst + GUARD + p.doff;
    fill_pattern<<<264, 512>>>(b.src, p.soff + nbytes, seed, me, 0);
    fill_byte<<<264, 512>>>(b.dst, MAX_BYTES + 2 * GUARD + 64, POISON);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    if (from_host_mem) CK(cudaMemcpy(b.hsrc, b.src, p.soff + nbytes, cudaMemcpyDeviceToHost));
    b.m->count = 0;
    b.m->first = ~0ull;
    b.bad[0] = 0;
    gshmem_barrier_all();

    send_args a;
    a.dst = dest;
    a.src = (from_host_mem ? b.hsrc : b.src) + p.soff;
    a.nelems = p.nelems;
    a.sig = b.sig;
    for (int g = 0; g < MAXG; g++) a.sigval[g] = p.sigval[g];
    a.groups = p.groups;
    a.sig_op = p.op;
    a.pe = next;
    uint64_t got = p.want, fetched = p.want;
    if (mode == HOST_SENDS) {
        for (int g = 0; g < p.groups; g++) {
            size_t lo = p.nelems * g / p.groups, hi = p.nelems * (g + 1) / p.groups;
            api.host(a.dst + lo * api.esize, a.src + lo * api.esize, hi - lo, a.sig, a.sigval[g], p.op, next, p.nbi);
        }
        if (p.nbi) gshmem_quiet();
    } else {
        api.launch(a, p.scope, p.nbi, s2);   /* first: it depends on nothing of this PE */
        CK(cudaGetLastError());
    }
    if (mode == HOST_WAITS) {
        got = gshmem_signal_wait_until(b.sig, p.cmp, p.cmpval);
        fetched = gshmem_signal_fetch(b.sig);
        verify_pattern<<<264, 512>>>(dest, nbytes, seed, prev, p.soff, GUARD, POISON, b.m);
    } else {
        receiver<<<8, 512, 0, s1>>>(dest, nbytes, b.sig, p.cmp, p.cmpval, p.want, seed, prev, p.soff, b.m, b.bad);
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    if (mode == HOST_WAITS && (got != p.want || fetched != p.want)) {
        b.bad[0] = 1;
        b.bad[1] = got;
        b.bad[2] = fetched;
    }
    const char *opn = p.op == GSHMEM_SIGNAL_SET ? "SIGNAL_SET" : "SIGNAL_ADD";
    static const char *cmpn[] = {"EQ", "NE", "GT", "LE", "LT", "GE"};
    EXPECT(b.m->count == 0,
           "%s%s (%s scope, %s, %d group(s), %s): %zu bytes (src off %zu, dst off %zu) from PE %d "
           "seen after the signal: %llu bad bytes, first at %lld relative to the data: expected 0x%02x, got 0x%02x",
           api.name, p.nbi ? "_nbi" : "", mode == HOST_SENDS ? "host" : scope_name[p.scope], opn, p.groups,
           mode_name[mode], nbytes, p.soff, p.doff, prev, b.m->count, (long long)b.m->first - GUARD,
           b.m->expected, b.m->actual);
    EXPECT(b.bad[0] == 0,
           "%s%s (%s, %s): signal_wait_until(%s %llu) returned %llu and signal_fetch read %llu; expected %llu",
           api.name, p.nbi ? "_nbi" : "", opn, mode_name[mode], cmpn[p.cmp], (unsigned long long)p.cmpval,
           b.bad[1], b.bad[2], (unsigned long long)p.want);
    gshmem_barrier_all();
}

static void put_signal_rounds(uint64_t seed, bufs &b, cudaStream_t s1, cudaStream_t s2) {
    uint64_t rng = seed | 1, cum = 0;
    CK(cudaMemset(b.sig, 0, sizeof(uint64_t)));
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();
    int round = 0;
    for (int api = 0; api < n_apis; api++) {
        /* combination j of a family: all 12 (scope x _nbi x SET/ADD) in turn, or a typed
         * family's one (scope, _nbi) with SET and ADD */
        int fixed = apis[api].combo;
#define COMBO(j) (fixed >= 0 ? fixed + 6 * ((j) & 1) : (j) % 12)
        int dev_rounds = fixed >= 0 ? 4 : api == 0 ? 24 : 12, host_rounds = api == 0 ? 4 : 1;
        for (int j = 0; j < dev_rounds; j++) {
            plan p = make_plan(api, COMBO(j), &rng, &cum);
            put_signal_round(p, DEV_TO_DEV, seed + ++round, b, s1, s2, &rng);
        }
        for (int j = 0; j < host_rounds; j++) {
            plan p = make_plan(api, COMBO(api + j * 5), &rng, &cum);
            put_signal_round(p, HOST_SENDS, seed + ++round, b, s1, s2, &rng);
            p = make_plan(api, COMBO(api + j * 7 + 1), &rng, &cum);
            put_signal_round(p, HOST_WAITS, seed + ++round, b, s1, s2, &rng);
        }
#undef COMBO
    }
}

/* ---- signal_op ------------------------------------------------------------------------------ */
#define SIGOP_BLOCKS 8
#define SIGOP_THREADS 128
#define SIGOP_REPS 4
#define SIGOP_HOST 32
__global__ void sigop_add_kernel(uint64_t *sig) {
    int me = gshmem_my_pe(), np = gshmem_n_pes();
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned r = 0; r < SIGOP_REPS; r++)
        gshmemx_signal_op(sig, 1 + (t + r) % 7, GSHMEM_SIGNAL_ADD, (int)((me + t + r) % np));
    gshmem_quiet();
}
__global__ void sigop_set_kernel(uint64_t *sig, uint64_t v, int pe) {
    gshmemx_signal_op(sig, v, GSHMEM_SIGNAL_SET, pe);
    gshmem_quiet();
}
__global__ void sig_fetch_kernel(uint64_t *sig, unsigned long long *out) { *out = gshmem_signal_fetch(sig); }

static void signal_ops(uint64_t seed, uint64_t *sig, cudaStream_t s) {
    int me = gshmem_my_pe(), np = gshmem_n_pes(), next = (me + 1) % np, prev = (me + np - 1) % np;
    unsigned long long *out;
    CK(cudaHostAlloc((void **)&out, sizeof *out, cudaHostAllocMapped));
    /* ADD: every thread of every PE, and every PE's host, add to signals of all PEs at once */
    CK(cudaMemset(sig, 0, sizeof *sig));
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();
    sigop_add_kernel<<<SIGOP_BLOCKS, SIGOP_THREADS, 0, s>>>(sig);
    CK(cudaGetLastError());
    for (int h = 0; h < SIGOP_HOST; h++) gshmemx_signal_op(sig, 3, GSHMEM_SIGNAL_ADD, (me + h) % np);
    gshmem_quiet();
    CK(cudaStreamSynchronize(s));
    gshmem_barrier_all();
    uint64_t want = 0;
    for (int p = 0; p < np; p++) {
        for (unsigned t = 0; t < SIGOP_BLOCKS * SIGOP_THREADS; t++)
            for (unsigned r = 0; r < SIGOP_REPS; r++)
                if ((p + t + r) % np == (unsigned)me) want += 1 + (t + r) % 7;
        for (int h = 0; h < SIGOP_HOST; h++)
            if ((p + h) % np == me) want += 3;
    }
    uint64_t hf = gshmem_signal_fetch(sig);
    sig_fetch_kernel<<<1, 1>>>(sig, out);
    CK(cudaDeviceSynchronize());
    EXPECT(hf == want && *out == want,
           "gshmemx_signal_op ADD from all PEs (kernels and hosts): PE %d's signal is %llu (host fetch) / %llu "
           "(device fetch), expected %llu", me, (unsigned long long)hf, *out, (unsigned long long)want);
    gshmem_barrier_all();
    /* SET from a kernel, then from the host */
    uint64_t base = (seed & 0xffffffffull) << 16;
    sigop_set_kernel<<<1, 1, 0, s>>>(sig, base + me, next);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(s));
    gshmem_barrier_all();
    sig_fetch_kernel<<<1, 1>>>(sig, out);
    CK(cudaDeviceSynchronize());
    EXPECT(*out == base + prev, "device gshmemx_signal_op SET from PE %d: signal_fetch read %llu, expected %llu",
           prev, *out, (unsigned long long)(base + prev));
    gshmem_barrier_all();
    gshmemx_signal_op(sig, base + 1000 + me, GSHMEM_SIGNAL_SET, next);
    gshmem_quiet();
    gshmem_barrier_all();
    hf = gshmem_signal_fetch(sig);
    EXPECT(hf == base + 1000 + prev, "host gshmemx_signal_op SET from PE %d: host signal_fetch read %llu, expected %llu",
           prev, (unsigned long long)hf, (unsigned long long)(base + 1000 + prev));
    gshmem_barrier_all();
    cudaFreeHost(out);
}

/* ---- on-stream ring pipeline -------------------------------------------------------------- */
/* Round r on each PE's one stream: fill the source; wait until next has acknowledged round
 * r-1; put the data + signal (r, by SET or ADD 1) to next; wait for prev's signal r; check
 * the data; poison it again; acknowledge to prev (ack = r, by ADD 1 or SET). */
#define PIPE_ROUNDS 40
static void stream_pipeline(uint64_t seed, uint8_t *dst, uint8_t *src, uint64_t *sigs, cudaStream_t st) {
    int me = gshmem_my_pe(), np = gshmem_n_pes(), next = (me + 1) % np, prev = (me + np - 1) % np;
    const size_t n = (1u << 20) + 37;
    uint64_t *dsig = sigs, *ack = sigs + 1;
    uint8_t *d = dst + GUARD + 3;
    mismatch *m;
    CK(cudaHostAlloc((void **)&m, PIPE_ROUNDS * sizeof *m, cudaHostAllocMapped));
    for (int r = 0; r < PIPE_ROUNDS; r++) {
        m[r].count = 0;
        m[r].first = ~0ull;
    }
    CK(cudaMemset(sigs, 0, 2 * sizeof(uint64_t)));
    fill_byte<<<264, 512>>>(dst, n + 2 * GUARD + 3, POISON);
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();
    for (uint64_t r = 1; r <= PIPE_ROUNDS; r++) {
        fill_pattern<<<64, 256, 0, st>>>(src, n, seed + r, me, 0);
        if (r > 1) gshmemx_signal_wait_until_on_stream(ack, GSHMEM_CMP_GE, r - 1, st);
        if (r & 1) gshmemx_putmem_signal_on_stream(d, src, n, dsig, r, GSHMEM_SIGNAL_SET, next, st);
        else gshmemx_putmem_signal_on_stream(d, src, n, dsig, 1, GSHMEM_SIGNAL_ADD, next, st);
        /* prev cannot send r+1 before this PE's ack of r: EQ is exact */
        gshmemx_signal_wait_until_on_stream(dsig, r & 2 ? GSHMEM_CMP_EQ : GSHMEM_CMP_GE, r, st);
        verify_pattern<<<264, 512, 0, st>>>(d, n, seed + r, prev, 0, GUARD, POISON, m + r - 1);
        fill_byte<<<264, 512, 0, st>>>(d - GUARD, n + 2 * GUARD, POISON);
        if (r & 1) gshmemx_signal_op_on_stream(ack, 1, GSHMEM_SIGNAL_ADD, prev, st);
        else gshmemx_signal_op_on_stream(ack, r, GSHMEM_SIGNAL_SET, prev, st);
        CK(cudaGetLastError());
    }
    CK(cudaStreamSynchronize(st));
    first_bad b;
    for (int r = 0; r < PIPE_ROUNDS; r++)
        if (m[r].count) b.note(r + 1, m[r].expected, m[r].actual);
    int fr = b.count ? (int)b.index - 1 : 0;
    EXPECT(b.count == 0,
           "on-stream pipeline: %zu of %d rounds saw bad data from PE %d after signal_wait_until_on_stream; "
           "round %zu: %llu bad bytes, first at %lld: expected 0x%02llx, got 0x%02llx",
           b.count, PIPE_ROUNDS, prev, b.index, m[fr].count, (long long)m[fr].first - GUARD, b.expected, b.actual);
    gshmem_barrier_all();   /* next's last ack is in once its stream has drained */
    uint64_t s[2];
    CK(cudaMemcpy(s, sigs, sizeof s, cudaMemcpyDeviceToHost));
    EXPECT(s[0] == PIPE_ROUNDS && s[1] == PIPE_ROUNDS,
           "on-stream pipeline: data signal %llu and ack %llu after %d rounds",
           (unsigned long long)s[0], (unsigned long long)s[1], PIPE_ROUNDS);
    gshmem_barrier_all();
    cudaFreeHost(m);
}

int main(void) {
    gshmem_init();
    uint64_t seed = agree_seed();
    bufs b;
    b.dst = (uint8_t *)gshmem_malloc(MAX_BYTES + 2 * GUARD + 64);
    b.sig = (uint64_t *)gshmem_calloc(4, sizeof(uint64_t));
    if (!b.dst || !b.sig) { fprintf(stderr, "allocation failed\n"); return 2; }
    b.src = (uint8_t *)test_local_alloc(MAX_BYTES + 64);
    if (!b.src) { fprintf(stderr, "allocation failed\n"); return 2; }
    b.hsrc = (uint8_t *)malloc(MAX_BYTES + 64);
    CK(cudaHostAlloc((void **)&b.m, sizeof *b.m, cudaHostAllocMapped));
    CK(cudaHostAlloc((void **)&b.bad, 3 * sizeof *b.bad, cudaHostAllocMapped));
    cudaStream_t s1, s2;
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));

    put_signal_rounds(seed, b, s1, s2);
    signal_ops(seed, b.sig + 2, s2);
    stream_pipeline(seed + 7777, b.dst, b.src, b.sig, s1);

    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
    cudaFreeHost(b.m);
    cudaFreeHost(b.bad);
    free(b.hsrc);
    test_local_free(b.src);
    gshmem_free(b.sig);
    gshmem_free(b.dst);
    int rc = summary("test_signal");
    gshmem_finalize();
    return rc;
}
