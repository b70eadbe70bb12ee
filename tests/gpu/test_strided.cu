/* Proves strided and sized RMA: TYPENAME_iput/iget for every RMA type (thread scope, and
 * gshmemx_TYPENAME_iput/iget_warp/_block), iput8..128/iget8..128 at each scope, and the
 * contiguous sized put8..128/get8..128 (+_nbi) at each scope, with random source and
 * destination strides 1..7, random counts (0 included) and element-aligned offsets: every
 * element lands where a CPU reference puts it, and every other byte (the gaps between strided
 * elements, the guard bytes around them) keeps its poison. The host forms of typed and sized
 * iput/iget and sized put/get likewise, from and to device and pageable host memory. */
#include <vector>

#include "common.h"

enum scope { THREAD, WARP, BLOCK };
enum form { IPUT, IGET, PUT, GET };
static const char *form_name[] = {"iput", "iget", "put", "get"};
#define POISON 0xA5
#define GUARD 256
#define MAX_N 2048
#define MAX_SPAN (MAX_N * 7 * 16 + 8 * 16)

/* One interface per API: typed TYPENAME (iput/iget) or sized SIZE (iput/iget and contiguous
 * put/get). Device calls per scope; host() runs the host form. */
#define SCOPED(S, FN, XFN, ...)                                                              \
    do {                                                                                     \
        if constexpr (S == THREAD) FN(__VA_ARGS__);                                          \
        if constexpr (S == WARP) XFN##_warp(__VA_ARGS__);                                    \
        if constexpr (S == BLOCK) XFN##_block(__VA_ARGS__);                                  \
    } while (0)
#define DEF_STRIDED(ID, E, LABEL, PT, IPUT_FN, IGET_FN)                                      \
    static const size_t esize = E;                                                           \
    static const char *name() { return LABEL; }                                              \
    template <int S>                                                                         \
    static __device__ void iput(void *d, const void *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) { \
        SCOPED(S, gshmem_##IPUT_FN, gshmemx_##IPUT_FN, (PT *)d, (const PT *)s, dst, sst, n, pe); \
    }                                                                                        \
    template <int S>                                                                         \
    static __device__ void iget(void *d, const void *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) { \
        SCOPED(S, gshmem_##IGET_FN, gshmemx_##IGET_FN, (PT *)d, (const PT *)s, dst, sst, n, pe); \
    }                                                                                        \
    static void host_strided(int f, void *d, const void *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) { \
        if (f == IPUT) gshmem_##IPUT_FN((PT *)d, (const PT *)s, dst, sst, n, pe);            \
        else gshmem_##IGET_FN((PT *)d, (const PT *)s, dst, sst, n, pe);                      \
    }

#define DEF_TYPED(NAME, T)                                                                   \
    struct api_##NAME {                                                                      \
        static const bool sized = false;                                                     \
        DEF_STRIDED(NAME, sizeof(T), #NAME, T, NAME##_iput, NAME##_iget)                     \
    };
GSHMEM_RMA_TYPES(DEF_TYPED)

#define DEF_SIZED(BITS)                                                                      \
    struct api_##BITS {                                                                      \
        static const bool sized = true;                                                      \
        DEF_STRIDED(BITS, BITS / 8, #BITS, void, iput##BITS, iget##BITS)                     \
        template <int S, bool NBI> static __device__ void put(void *d, const void *s, size_t n, int pe) { \
            if constexpr (NBI) SCOPED(S, gshmem_put##BITS##_nbi, gshmemx_put##BITS##_nbi, d, s, n, pe); \
            else SCOPED(S, gshmem_put##BITS, gshmemx_put##BITS, d, s, n, pe);               \
        }                                                                                    \
        template <int S, bool NBI> static __device__ void get(void *d, const void *s, size_t n, int pe) { \
            if constexpr (NBI) SCOPED(S, gshmem_get##BITS##_nbi, gshmemx_get##BITS##_nbi, d, s, n, pe); \
            else SCOPED(S, gshmem_get##BITS, gshmemx_get##BITS, d, s, n, pe);               \
        }                                                                                    \
        static void host_contig(int f, bool nbi, void *d, const void *s, size_t n, int pe) { \
            if (f == PUT) nbi ? gshmem_put##BITS##_nbi(d, s, n, pe) : gshmem_put##BITS(d, s, n, pe); \
            else nbi ? gshmem_get##BITS##_nbi(d, s, n, pe) : gshmem_get##BITS(d, s, n, pe);  \
            if (nbi) gshmem_quiet();                                                         \
        }                                                                                    \
    };
GSHMEM_SIZED_BITS(DEF_SIZED)

struct xfer {
    uint8_t *d;
    const uint8_t *s;
    ptrdiff_t dst, sst;   /* strides in elements (1 for the contiguous forms) */
    size_t n;
    int pe, groups;
};

/* Block g of `groups` moves its share of the elements (thread and warp forms: one group). */
template <class A, int F, int S, bool NBI>
__global__ void xfer_kernel(xfer x) {
    int g = S == BLOCK ? blockIdx.x : 0;
    size_t lo = x.n * g / x.groups, hi = x.n * (g + 1) / x.groups;
    uint8_t *d = x.d + lo * x.dst * A::esize;
    const uint8_t *s = x.s + lo * x.sst * A::esize;
    if constexpr (F == IPUT) A::template iput<S>(d, s, x.dst, x.sst, hi - lo, x.pe);
    if constexpr (F == IGET) A::template iget<S>(d, s, x.dst, x.sst, hi - lo, x.pe);
    if constexpr (F == PUT) A::template put<S, NBI>(d, s, hi - lo, x.pe);
    if constexpr (F == GET) A::template get<S, NBI>(d, s, hi - lo, x.pe);
    if constexpr (NBI) {
        if (S == THREAD) gshmem_quiet();
        else if (S == WARP) gshmemx_quiet_warp();
        else gshmemx_quiet_block();
    }
}

template <class A, int F, bool NBI> static void launch_f(int s, const xfer &x) {
    if (s == THREAD) xfer_kernel<A, F, THREAD, NBI><<<1, 1>>>(x);
    if (s == WARP) xfer_kernel<A, F, WARP, NBI><<<1, 32>>>(x);
    if (s == BLOCK) xfer_kernel<A, F, BLOCK, NBI><<<x.groups, 256>>>(x);
}
template <class A> static void launch(int f, int s, bool nbi, const xfer &x) {
    if (f == IPUT) launch_f<A, IPUT, false>(s, x);
    if (f == IGET) launch_f<A, IGET, false>(s, x);
    if constexpr (A::sized) {
        if (f == PUT) nbi ? launch_f<A, PUT, true>(s, x) : launch_f<A, PUT, false>(s, x);
        if (f == GET) nbi ? launch_f<A, GET, true>(s, x) : launch_f<A, GET, false>(s, x);
    }
}
template <class A> static void host_call(int f, bool nbi, const xfer &x) {
    if (f == IPUT || f == IGET) A::host_strided(f, x.d, x.s, x.dst, x.sst, x.n, x.pe);
    if constexpr (A::sized) {
        if (f == PUT || f == GET) A::host_contig(f, nbi, x.d, x.s, x.n, x.pe);
    }
}

struct api_entry {
    const char *name;
    size_t esize;
    bool sized;
    void (*launch)(int, int, bool, const xfer &);
    void (*host)(int, bool, const xfer &);
};
#define TYPED_ENTRY(NAME, T) {#NAME, sizeof(T), false, launch<api_##NAME>, host_call<api_##NAME>},
#define SIZED_ENTRY(BITS) {"", BITS / 8, true, launch<api_##BITS>, host_call<api_##BITS>},
static const api_entry apis[] = {GSHMEM_RMA_TYPES(TYPED_ENTRY) GSHMEM_SIZED_BITS(SIZED_ENTRY)};
static const int n_apis = sizeof apis / sizeof apis[0];

struct bufs {
    uint8_t *a, *b;      /* symmetric: source (pattern), destination (poisoned) */
    uint8_t *ha, *hb;    /* pageable host copies */
};

/* One transfer, the same on every PE: next gets my data (iput/put) or I get next's (iget/get). */
static void round_trip(const api_entry &api, int f, int s, bool nbi, bool host, bool hostmem, uint64_t seed,
                       bufs &b, uint64_t *rng) {
    int me = gshmem_my_pe(), np = gshmem_n_pes(), next = (me + 1) % np, prev = (me + np - 1) % np;
    const size_t E = api.esize;
    bool contig = f == PUT || f == GET, put = f == IPUT || f == PUT;
    xfer x;
    x.dst = contig ? 1 : 1 + (ptrdiff_t)(rng_next(rng) % 7);
    x.sst = contig ? 1 : 1 + (ptrdiff_t)(rng_next(rng) % 7);
    unsigned lg = rng_next(rng) % (test_light() ? 8 : 12);   /* light: up to 128 elements */
    x.n = rng_next(rng) % 16 == 0 ? 0 : 1 + rng_next(rng) % ((size_t)1 << lg);   /* 0 .. 2048 */
    size_t soff = E * (rng_next(rng) % 8), doff = GUARD + E * (rng_next(rng) % 8);
    x.groups = s == BLOCK ? 1 + (int)(rng_next(rng) % 3) : 1;
    if (x.groups > 1 && (size_t)x.groups > x.n) x.groups = x.n ? (int)x.n : 1;
    x.pe = next;
    size_t sspan = x.n ? ((x.n - 1) * x.sst + 1) * E : 0, dspan = x.n ? ((x.n - 1) * x.dst + 1) * E : 0;
    size_t check = doff + dspan + GUARD;

    char call[96];
    bool plain = host || s == THREAD;
    const char *suffix = plain ? "" : s == WARP ? "_warp" : "_block";
    if (api.sized)
        snprintf(call, sizeof call, "%s%s%d%s%s", plain ? "gshmem_" : "gshmemx_", form_name[f], (int)(8 * E),
                 nbi ? "_nbi" : "", suffix);
    else
        snprintf(call, sizeof call, "%s%s_%s%s", plain ? "gshmem_" : "gshmemx_", api.name, form_name[f], suffix);
    if (test_trace())
        fprintf(stderr, "PE %d: %s %s%s (%d group(s)): %zu elements of %zu bytes, strides %td/%td, to PE %d\n", me,
                host ? "host" : "device", call, hostmem ? " (pageable)" : "", x.groups, x.n, E, x.dst, x.sst, x.pe);
    fill_pattern<<<64, 256>>>(b.a, soff + sspan, seed, me, 0);
    fill_byte<<<64, 256>>>(b.b, check, POISON);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    if (hostmem && put) CK(cudaMemcpy(b.ha, b.a, soff + sspan, cudaMemcpyDeviceToHost));
    if (hostmem && !put) memset(b.hb, POISON, check);
    gshmem_barrier_all();
    /* put: my a -> next's b; get: next's a -> my b (or my pageable hb) */
    x.s = (hostmem && put ? b.ha : b.a) + soff;
    x.d = (hostmem && !put ? b.hb : b.b) + doff;
    if (host) {
        api.host(f, nbi, x);
    } else {
        api.launch(f, s, nbi, x);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
    }
    gshmem_barrier_all();

    int from = put ? prev : next;
    std::vector<uint8_t> got(check), want(check, POISON);
    if (hostmem && !put) memcpy(got.data(), b.hb, check);
    else CK(cudaMemcpy(got.data(), b.b, check, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < x.n; i++)
        for (size_t k = 0; k < E; k++) want[doff + i * x.dst * E + k] = pattern(seed, from, soff + i * x.sst * E + k);
    first_bad bad;
    for (size_t i = 0; i < check; i++)
        if (got[i] != want[i]) bad.note(i, want[i], got[i]);
    long long rel = (long long)bad.index - (long long)doff;
    bool in_elem = rel >= 0 && (size_t)rel < dspan && (size_t)rel % (x.dst * E) < E;
    EXPECT(bad.count == 0,
           "%s %s%s (%d group(s)): %zu elements of %zu bytes, dst stride %td, src stride %td, src off %zu, "
           "dst off %zu, from PE %d: %zu bad bytes; first at byte %lld of the destination (%s %lld): "
           "expected 0x%02llx, got 0x%02llx",
           host ? "host" : "device", call, hostmem ? (put ? " from pageable memory" : " into pageable memory") : "",
           x.groups, x.n, E, x.dst, x.sst, soff, doff - GUARD, from, bad.count, rel,
           in_elem ? "in element" : "outside the elements; element stride",
           in_elem ? rel / (long long)(x.dst * E) : (long long)(x.dst * E), bad.expected, bad.actual);
    gshmem_barrier_all();
}

int main(void) {
    gshmem_init();
    uint64_t seed = agree_seed(), rng = seed | 1;   /* same plan on every PE */
    bufs b;
    b.a = (uint8_t *)gshmem_malloc(MAX_SPAN + 2 * GUARD + 256);
    b.b = (uint8_t *)gshmem_malloc(MAX_SPAN + 2 * GUARD + 256);
    if (!b.a || !b.b) { fprintf(stderr, "allocation failed\n"); return 2; }
    b.ha = (uint8_t *)malloc(MAX_SPAN + 2 * GUARD + 256);
    b.hb = (uint8_t *)malloc(MAX_SPAN + 2 * GUARD + 256);
    int round = 0;
    for (int a = 0; a < n_apis; a++) {
        const api_entry &api = apis[a];
        int nforms = api.sized ? 4 : 2;
        for (int f = 0; f < nforms; f++)
            for (int s = THREAD; s <= BLOCK; s++)
                for (int nbi = 0; nbi <= (f >= PUT); nbi++)
                    round_trip(api, f, s, nbi, false, false, seed + ++round, b, &rng);
        for (int f = 0; f < nforms; f++)
            for (int nbi = 0; nbi <= (f >= PUT); nbi++)
                round_trip(api, f, THREAD, nbi, true, (f + nbi + a) & 1, seed + ++round, b, &rng);
    }
    free(b.ha);
    free(b.hb);
    gshmem_free(b.b);
    gshmem_free(b.a);
    int rc = summary("test_strided");
    gshmem_finalize();
    return rc;
}
