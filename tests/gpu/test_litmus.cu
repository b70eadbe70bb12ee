/* Proves the orderings docs/memory-model.md promises, as litmus tests between PE 0 (writer)
 * and PE 1 (reader), each repeated --iters times (default 10000) inside one long-running
 * kernel per litmus with random 0-2 us delays on both sides: message passing through
 * put + fence / quiet + p(flag) at thread and block scope, put_signal (SET and ADD, blocking
 * and _nbi), wait_until/test on a value written by p after a fenced earlier p, and atomics
 * under contention from every PE (exact totals; no two fetching atomics on a word ever see
 * overlapping old values). `--negative` instead runs two broken protocols that live only in
 * this file (a reader without acquire, a writer without fence) and exits 3 with "NEGATIVE
 * CONTROL DETECTED" when the same checks catch them, showing the checks can fail. Every
 * random choice comes from agree_seed(); GSHMEM_TEST_SEED replays it. */
#include <stdarg.h>

#include <algorithm>
#include <vector>

#include "common.h"

/* ---- random streams and data patterns -------------------------------------------------- */
static __host__ __device__ inline uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* xorshift seeded per (seed, litmus, iteration, stream): both sides derive the shared
 * parameters of an iteration from stream 0 and their own delays from streams 1 and 2, so a
 * seed replays every size, offset, operation and delay of a failing run. */
struct xrng {
    uint64_t s;
    __host__ __device__ xrng(uint64_t seed, uint64_t lit, uint64_t iter, uint64_t stream)
        : s(mix64(seed ^ mix64(lit * 0x9E3779B97F4A7C15ull ^ mix64(iter + (stream << 56)))) | 1) {}
    __host__ __device__ uint64_t next() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    }
    __host__ __device__ uint32_t below(uint32_t n) { return (uint32_t)(next() % n); }
};

/* Word j written in epoch e: a hash, so a word left from any earlier epoch mismatches. */
static __host__ __device__ inline uint64_t wpat(uint64_t seed, uint64_t e, uint64_t j) {
    return mix64(seed + mix64(e * 0xD6E8FEB86659FD93ull + j));
}

/* ~0-2 us at the H100/H200 clock (~1.7-2 GHz); an NVLink round trip is ~1.5 us, so the two
 * sides' delays shuffle which of them arrives first. */
#define MAX_DELAY_CYCLES 4000
static __device__ void spin_cycles(uint32_t c) {
    long long t0 = clock64();
    while (clock64() - t0 < (long long)c) {
    }
}
static __device__ uint64_t globaltimer_ns(void) {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* ---- layout ------------------------------------------------------------------------------ */
enum litmus { MP_FENCE_THREAD, MP_FENCE_BLOCK, MP_QUIET_THREAD, MP_QUIET_BLOCK, SIG_THREAD,
              SIG_BLOCK, WAIT_P, NEG_ACQUIRE, NEG_FENCE, AMO_CONTENTION, AMO_SB };

/* Control words, one 128-byte line each: the flag spins never share a line with data, so the
 * negative control's cached data lines are not disturbed by them. */
enum slot { S_FLAG, S_ACK, S_SIG, S_GO, S_RESULT, S_VAR0, N_SLOTS = S_VAR0 + 8 };
#define SLOT_WORDS 16

/* Data region on the reader: MP words at word 0, WAIT_P's "earlier" words at word 16, the
 * bulk (puts of random size and offset, the negative controls' data) from byte 256. */
#define N_WORDS 8
#define EARLIER_WORD 16
#define N_EARLIER 4
#define BULK_OFF 256
#define THREAD_MAX_BULK 4096
#define BLOCK_MAX_BULK 8192
#define NEG_A_WORDS 256          /* missing acquire: 2 KiB, one word per reader thread */
#define NEG_B_BYTES (64 << 10)   /* missing fence: 64 KiB of raw stores */
#define PAIR_THREADS 256
#define NEG_B_PER_THREAD (NEG_B_BYTES / 8 / PAIR_THREADS)
#define DATA_BYTES (BULK_OFF + NEG_B_BYTES + 256)

/* What the reader found first (device memory; copied back after the kernel). */
struct vlog {
    unsigned long long count;            /* iterations with at least one bad value */
    unsigned long long iter, index, expected, actual;
    int what, set;
};
enum what { W_FLAG, W_WORD, W_BYTE };
static const char *what_name[] = {"flag/signal value", "word", "bulk byte"};

struct pair_args {
    uint64_t *ctl;     /* symmetric control slots */
    uint8_t *data;     /* symmetric data region (the reader's copy is written) */
    uint8_t *src;      /* the writer's local source buffer */
    vlog *log;         /* the reader's record */
    uint64_t seed;
    uint64_t ebase;    /* iteration i uses epoch ebase + i + 1 (flags never reset) */
    uint64_t prev;     /* value the signal / WAIT_P variable held before this run */
    long iters;
    int peer, writer, lit, vslot;
};

/* Parameters both sides agree on for one iteration. */
struct prm {
    uint32_t n, doff, soff, op, nbi, how;
};
static __device__ prm params(const pair_args &a, uint64_t e) {
    xrng r(a.seed, a.lit, e, 0);
    bool block = a.lit == MP_FENCE_BLOCK || a.lit == MP_QUIET_BLOCK || a.lit == SIG_BLOCK;
    prm p;
    p.n = 1 + r.below(block ? BLOCK_MAX_BULK : THREAD_MAX_BULK);
    p.doff = r.below(16);
    p.soff = r.below(16);
    p.op = r.below(2);
    p.nbi = r.below(2);
    p.how = r.below(2);
    return p;
}

static __device__ void note_bad(const pair_args &a, int *bad, long iter, int what, uint64_t idx,
                                uint64_t want, uint64_t got) {
    *bad = 1;
    if (atomicCAS(&a.log->set, 0, 1) == 0) {
        a.log->iter = iter;
        a.log->what = what;
        a.log->index = idx;
        a.log->expected = want;
        a.log->actual = got;
    }
}

static __device__ uint64_t *slot_of(const pair_args &a, int s) { return a.ctl + s * SLOT_WORDS; }

/* ---- message passing and put_signal ------------------------------------------------------ */
static __device__ void fill_src(const pair_args &a, const prm &p, uint64_t e) {
    uint8_t *s = a.src + p.soff;
    for (uint32_t k = threadIdx.x; k < p.n; k += blockDim.x) s[k] = pattern(a.seed + e, a.lit, k);
    __syncthreads();
}

static __device__ void check_bulk(const pair_args &a, const prm &p, long i, uint64_t e, int *bad) {
    const uint8_t *d = a.data + BULK_OFF + p.doff;
    for (uint32_t k = threadIdx.x; k < p.n; k += blockDim.x) {
        uint8_t want = pattern(a.seed + e, a.lit, k), got = d[k];
        if (got != want) note_bad(a, bad, i, W_BYTE, k, want, got);
    }
}

/* Thread scope: one thread p's the words, puts the bulk, fences (or quiets), p's the flag.
 * Block scope: thread 0 p's the words, the block puts the bulk, the group fence/quiet
 * (gshmemx_fence_block = gather + every thread fences), then thread 0 p's the flag. */
static __device__ void mp_write(const pair_args &a, const prm &p, uint64_t e) {
    bool block = a.lit == MP_FENCE_BLOCK || a.lit == MP_QUIET_BLOCK;
    bool quiet = a.lit == MP_QUIET_THREAD || a.lit == MP_QUIET_BLOCK;
    uint64_t *words = (uint64_t *)a.data, *flag = slot_of(a, S_FLAG);
    uint8_t *dst = a.data + BULK_OFF + p.doff;
    const uint8_t *src = a.src + p.soff;
    fill_src(a, p, e);
    if (threadIdx.x == 0)
        for (int j = 0; j < N_WORDS; j++) gshmem_uint64_p(words + j, wpat(a.seed, e, j), a.peer);
    if (block) {
        if (quiet) {
            gshmemx_putmem_nbi_block(dst, src, p.n, a.peer);
            gshmemx_quiet_block();
        } else {
            gshmemx_putmem_block(dst, src, p.n, a.peer);
            gshmemx_fence_block();
        }
        if (threadIdx.x == 0) gshmem_uint64_p(flag, e, a.peer);
    } else if (threadIdx.x == 0) {
        if (quiet) {
            gshmem_putmem_nbi(dst, src, p.n, a.peer);
            gshmem_quiet();
        } else {
            gshmem_putmem(dst, src, p.n, a.peer);
            gshmem_fence();
        }
        gshmem_uint64_p(flag, e, a.peer);
    }
}

static __device__ void mp_read(const pair_args &a, const prm &p, long i, uint64_t e, int *bad) {
    uint64_t *flag = slot_of(a, S_FLAG);
    if (threadIdx.x == 0) {
        gshmem_uint64_wait_until(flag, GSHMEM_CMP_GE, e);
        /* the writer cannot pass e before our ack, so anything else is a broken flag */
        uint64_t v = *(volatile uint64_t *)flag;
        if (v != e) note_bad(a, bad, i, W_FLAG, 0, e, v);
    }
    __syncthreads();  /* the other threads see what thread 0 acquired */
    const uint64_t *words = (const uint64_t *)a.data;
    if (threadIdx.x < N_WORDS) {
        uint64_t want = wpat(a.seed, e, threadIdx.x), got = words[threadIdx.x];
        if (got != want) note_bad(a, bad, i, W_WORD, threadIdx.x, want, got);
    }
    check_bulk(a, p, i, e, bad);
}

/* The signal ends each iteration equal to the epoch: SET writes e, ADD adds e - previous. */
static __device__ void sig_write(const pair_args &a, const prm &p, long i, uint64_t e) {
    uint64_t *sig = slot_of(a, S_SIG);
    uint64_t before = i ? e - 1 : a.prev;
    int op = p.op ? GSHMEM_SIGNAL_ADD : GSHMEM_SIGNAL_SET;
    uint64_t val = p.op ? e - before : e;
    uint8_t *dst = a.data + BULK_OFF + p.doff;
    const uint8_t *src = a.src + p.soff;
    fill_src(a, p, e);
    if (a.lit == SIG_BLOCK) {
        if (p.nbi) {
            gshmemx_putmem_signal_nbi_block(dst, src, p.n, sig, val, op, a.peer);
            gshmemx_quiet_block();  /* before the source is refilled */
        } else {
            gshmemx_putmem_signal_block(dst, src, p.n, sig, val, op, a.peer);
        }
    } else if (threadIdx.x == 0) {
        if (p.nbi) {
            gshmem_putmem_signal_nbi(dst, src, p.n, sig, val, op, a.peer);
            gshmem_quiet();
        } else {
            gshmem_putmem_signal(dst, src, p.n, sig, val, op, a.peer);
        }
    }
}

static __device__ void sig_read(const pair_args &a, const prm &p, long i, uint64_t e, int *bad) {
    if (threadIdx.x == 0) {
        uint64_t v = gshmem_signal_wait_until(slot_of(a, S_SIG), GSHMEM_CMP_GE, e);
        if (v != e) note_bad(a, bad, i, W_FLAG, 0, e, v);
    }
    __syncthreads();
    check_bulk(a, p, i, e, bad);
}

/* ---- wait_until / test on a value written by p ------------------------------------------- */
/* The variable is written (T)(prev + i + 1): consecutive values always differ, even for
 * short after wrap-around, so an EQ wait can only be satisfied by this iteration's p. */
#define WAIT_TYPES(X) X(short, short, 0) X(int, int, 1) X(long, long, 2) X(uint64, uint64_t, 3)
#define DEF_WAIT_OPS(NAME, T, IDX)                                                            \
    struct wait_##NAME {                                                                      \
        typedef T t;                                                                          \
        static __device__ void p(T *d, T v, int pe) { gshmem_##NAME##_p(d, v, pe); }          \
        static __device__ void wait(T *d, T v) { gshmem_##NAME##_wait_until(d, GSHMEM_CMP_EQ, v); } \
        static __device__ int test(T *d, T v) { return gshmem_##NAME##_test(d, GSHMEM_CMP_EQ, v); } \
    };
WAIT_TYPES(DEF_WAIT_OPS)

template <class O> static __device__ void wait_write(const pair_args &a, long i, uint64_t e) {
    if (threadIdx.x) return;
    typedef typename O::t T;
    uint64_t *earlier = (uint64_t *)a.data + EARLIER_WORD;
    for (int j = 0; j < N_EARLIER; j++) gshmem_uint64_p(earlier + j, wpat(a.seed, e, 100 + j), a.peer);
    gshmem_fence();
    O::p((T *)slot_of(a, a.vslot), (T)(a.prev + i + 1), a.peer);
}

template <class O>
static __device__ void wait_read(const pair_args &a, const prm &p, long i, uint64_t e, int *bad) {
    if (threadIdx.x) return;
    typedef typename O::t T;
    T *var = (T *)slot_of(a, a.vslot), want = (T)(a.prev + i + 1);
    if (p.how) O::wait(var, want);
    else /* test in a loop; after ~a second hand over to wait_until and its deadline message */
        for (unsigned k = 0; !O::test(var, want); k++)
            if (k == 1u << 22) {
                O::wait(var, want);
                break;
            }
    const uint64_t *earlier = (const uint64_t *)a.data + EARLIER_WORD;
    for (int j = 0; j < N_EARLIER; j++) {
        uint64_t w = wpat(a.seed, e, 100 + j), got = earlier[j];
        if (got != w) note_bad(a, bad, i, W_WORD, EARLIER_WORD + j, w, got);
    }
}

/* ---- negative controls (deliberately broken; nothing here is gshmem's protocol) ---------- */
static __device__ uint64_t ld_cached(const uint64_t *p) {  /* plain load, cached in L1 */
    uint64_t v;
    asm volatile("ld.global.ca.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

/* Missing acquire. The writer is correct (put, group fence, p(flag)). The reader pulls the
 * data lines into L1 with cached loads before the writer writes them (the writer starts at
 * least ~0.5 us after our ack), spins on the flag with relaxed volatile loads, which do not
 * invalidate L1, then reads the data again with cached loads: without an acquire nothing
 * forces those loads past the stale L1 lines. */
static __device__ void neg_acquire_write(const pair_args &a, uint64_t e) {
    uint64_t *s = (uint64_t *)a.src;
    for (int k = threadIdx.x; k < NEG_A_WORDS; k += blockDim.x) s[k] = wpat(a.seed, e, k);
    __syncthreads();
    gshmemx_putmem_block(a.data + BULK_OFF, s, NEG_A_WORDS * 8, a.peer);
    gshmemx_fence_block();
    if (threadIdx.x == 0) gshmem_uint64_p(slot_of(a, S_FLAG), e, a.peer);
}

static __device__ void neg_acquire_read(const pair_args &a, long i, uint64_t e, int *bad) {
    const uint64_t *d = (const uint64_t *)(a.data + BULK_OFF);
    for (int k = threadIdx.x; k < NEG_A_WORDS; k += blockDim.x) (void)ld_cached(d + k);
    __syncthreads();
    if (threadIdx.x == 0) {
        volatile uint64_t *flag = slot_of(a, S_FLAG);
        uint64_t t0 = globaltimer_ns();
        while (*flag < e)
            if (globaltimer_ns() - t0 > 20000000000ull) {
                printf("PE %d: negative control: flag %llu never arrived\n", gshmem_my_pe(),
                       (unsigned long long)e);
                __trap();
            }
    }
    __syncthreads();
    for (int k = threadIdx.x; k < NEG_A_WORDS; k += blockDim.x) {
        uint64_t want = wpat(a.seed, e, k), got = ld_cached(d + k);
        if (got != want) note_bad(a, bad, i, W_WORD, k, want, got);
    }
}

/* Missing fence. Every thread stores its share of 64 KiB through gshmem_ptr with plain
 * stores, and thread 0 writes the flag with a raw relaxed store right after its own share:
 * no gather, no fence, so the flag may overtake the other threads' data. The reader is
 * correct (wait_until, then checks). */
static __device__ void neg_fence_write(const pair_args &a, uint64_t e) {
    uint64_t *d = (uint64_t *)gshmem_ptr(a.data + BULK_OFF, a.peer);
    uint64_t *f = (uint64_t *)gshmem_ptr(slot_of(a, S_FLAG), a.peer);
    uint64_t v[NEG_B_PER_THREAD];
#pragma unroll
    for (int u = 0; u < NEG_B_PER_THREAD; u++) v[u] = wpat(a.seed, e, threadIdx.x + u * PAIR_THREADS);
#pragma unroll
    for (int u = 0; u < NEG_B_PER_THREAD; u++) d[threadIdx.x + u * PAIR_THREADS] = v[u];
    if (threadIdx.x == 0)
        asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(f), "l"(e) : "memory");
}

static __device__ void neg_fence_read(const pair_args &a, long i, uint64_t e, int *bad) {
    if (threadIdx.x == 0) gshmem_uint64_wait_until(slot_of(a, S_FLAG), GSHMEM_CMP_GE, e);
    __syncthreads();
    const uint64_t *d = (const uint64_t *)(a.data + BULK_OFF);
    for (int k = threadIdx.x; k < NEG_B_BYTES / 8; k += blockDim.x) {
        uint64_t want = wpat(a.seed, e, k), got = d[k];
        if (got != want) note_bad(a, bad, i, W_WORD, k, want, got);
    }
}

/* ---- the per-litmus kernel ----------------------------------------------------------------- */
/* Iteration i (epoch e): the writer waits for the reader's ack of e-1 (so the reader has
 * finished checking before anything of e is written), sleeps a random while, writes; the
 * reader sleeps a random while, waits, checks, then acks e with a release (fence + p). */
template <class O> __global__ void pair_kernel(pair_args a) {
    __shared__ int bad;
    uint64_t *ack = slot_of(a, S_ACK);
    for (long i = 0; i < a.iters; i++) {
        uint64_t e = a.ebase + i + 1;
        prm p = params(a, e);
        uint32_t delay = xrng(a.seed, a.lit, e, 1 + a.writer).below(MAX_DELAY_CYCLES);
        if (a.writer) {
            if (threadIdx.x == 0) {
                if (i > 0) gshmem_uint64_wait_until(ack, GSHMEM_CMP_GE, e - 1);
                spin_cycles(a.lit == NEG_ACQUIRE ? 1000 + delay : delay);
            }
            __syncthreads();
            switch (a.lit) {
            case SIG_THREAD:
            case SIG_BLOCK: sig_write(a, p, i, e); break;
            case WAIT_P: wait_write<O>(a, i, e); break;
            case NEG_ACQUIRE: neg_acquire_write(a, e); break;
            case NEG_FENCE: neg_fence_write(a, e); break;
            default: mp_write(a, p, e); break;
            }
            __syncthreads();
        } else {
            if (threadIdx.x == 0) {
                bad = 0;
                if (a.lit != NEG_ACQUIRE) spin_cycles(delay);  /* preload before the writer writes */
            }
            __syncthreads();
            switch (a.lit) {
            case SIG_THREAD:
            case SIG_BLOCK: sig_read(a, p, i, e, &bad); break;
            case WAIT_P: wait_read<O>(a, p, i, e, &bad); break;
            case NEG_ACQUIRE: neg_acquire_read(a, i, e, &bad); break;
            case NEG_FENCE: neg_fence_read(a, i, e, &bad); break;
            default: mp_read(a, p, i, e, &bad); break;
            }
            __syncthreads();
            if (threadIdx.x == 0) {
                if (bad) a.log->count++;
                gshmem_fence();  /* our checks' loads happen before the writer may overwrite */
                gshmem_uint64_p(ack, e, a.peer);
            }
        }
    }
}

/* ---- atomics under contention ------------------------------------------------------------- */
#define AMO_BLOCKS 16
#define AMO_THREADS 64
#define AMO_ARRAY 16
#define AMO_MAX_DELAY 500
#define CAS_LIMIT (1u << 20)
#define NO_OLD (~0ull)
#define STARVED 0x80000000u
enum kind { K_FETCH_ADD, K_FETCH_INC, K_ADD, K_INC, K_CAS, N_KINDS };

/* One operation as the issuing thread saw it: target 0 is the word on PE 0, 1 + q*M + k
 * element k of the array on PE q; old is the fetched value (NO_OLD for add/inc). */
struct arec {
    uint32_t target, v;
    uint64_t old;
};

#define AMO_TYPES(X) X(uint64, uint64_t) X(int, int)
#define DEF_AMO_OPS(NAME, T)                                                                  \
    struct amo_##NAME {                                                                       \
        typedef T t;                                                                          \
        static __device__ T fetch(T *d, int pe) { return gshmem_##NAME##_atomic_fetch(d, pe); } \
        static __device__ T fetch_add(T *d, T v, int pe) {                                    \
            return gshmem_##NAME##_atomic_fetch_add(d, v, pe);                                \
        }                                                                                     \
        static __device__ T fetch_inc(T *d, int pe) { return gshmem_##NAME##_atomic_fetch_inc(d, pe); } \
        static __device__ void add(T *d, T v, int pe) { gshmem_##NAME##_atomic_add(d, v, pe); } \
        static __device__ void inc(T *d, int pe) { gshmem_##NAME##_atomic_inc(d, pe); }       \
        static __device__ T cas(T *d, T c, T v, int pe) {                                     \
            return gshmem_##NAME##_atomic_compare_swap(d, c, v, pe);                          \
        }                                                                                     \
    };
AMO_TYPES(DEF_AMO_OPS)

/* Performs one operation; returns the old value it observed (NO_OLD when none). A CAS is an
 * increment by compare_swap retried with the value it last saw. */
template <class O> static __device__ uint64_t amo_do(typename O::t *d, int pe, int kind, uint32_t v,
                                                     uint32_t *target) {
    typedef typename O::t T;
    switch (kind) {
    case K_FETCH_ADD: return (uint64_t)O::fetch_add(d, (T)v, pe);
    case K_FETCH_INC: return (uint64_t)O::fetch_inc(d, pe);
    case K_ADD: O::add(d, (T)v, pe); return NO_OLD;
    case K_INC: O::inc(d, pe); return NO_OLD;
    default: {
        T cur = O::fetch(d, pe);
        for (unsigned k = 0; k < CAS_LIMIT; k++) {
            T old = O::cas(d, cur, (T)(cur + 1), pe);
            if (old == cur) return (uint64_t)cur;
            cur = old;
        }
        *target |= STARVED;
        return NO_OLD;
    }
    }
}

struct amo_args {
    uint64_t *word;
    int *arr;
    arec *rec;
    uint64_t seed;
    int R, me, npes;
};

__global__ void amo_kernel(amo_args a) {
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < a.R; r++) {
        xrng x(a.seed, AMO_CONTENTION, ((uint64_t)a.me << 32) | g, (uint64_t)r + 1);
        spin_cycles(x.below(AMO_MAX_DELAY));
        int kind = (int)x.below(N_KINDS);
        uint32_t v = kind == K_FETCH_ADD || kind == K_ADD ? 1 + x.below(16) : 1;
        arec rc;
        rc.v = v;
        if (x.below(2)) {
            rc.target = 0;
            rc.old = amo_do<amo_uint64>(a.word, 0, kind, v, &rc.target);
        } else {
            int q = (int)x.below(a.npes), k = (int)x.below(AMO_ARRAY);
            rc.target = 1 + q * AMO_ARRAY + k;
            rc.old = amo_do<amo_int>(a.arr + k, q, kind, v, &rc.target);
        }
        a.rec[(size_t)g * a.R + r] = rc;
    }
}

/* Store-buffering shape: PE 0 does fetch_add(x on PE 0) then fetch_add(y on PE 1), PE 1 does
 * y then x; both then exchange the epoch before the next iteration. Per word the two fetches
 * must return base and base + 1 in some order. */
struct sb_args {
    uint64_t *ctl, *x, *y, *rec;
    uint64_t seed, ebase;
    long iters;
    int me;
};
__global__ void sb_kernel(sb_args a) {
    uint64_t *go = a.ctl + S_GO * SLOT_WORDS;
    uint64_t *first = a.me == 0 ? a.x : a.y, *second = a.me == 0 ? a.y : a.x;
    int other = 1 - a.me;
    for (long i = 0; i < a.iters; i++) {
        uint64_t e = a.ebase + i + 1;
        xrng x(a.seed, AMO_SB, e, 1 + a.me);
        spin_cycles(x.below(MAX_DELAY_CYCLES));
        bool inc = x.below(2);
        uint64_t r1 = inc ? gshmem_uint64_atomic_fetch_inc(first, a.me)
                          : gshmem_uint64_atomic_fetch_add(first, 1, a.me);
        uint64_t r2 = inc ? gshmem_uint64_atomic_fetch_inc(second, other)
                          : gshmem_uint64_atomic_fetch_add(second, 1, other);
        a.rec[2 * i] = r1;
        a.rec[2 * i + 1] = r2;
        gshmem_uint64_p(go, e, other);
        gshmem_uint64_wait_until(go, GSHMEM_CMP_GE, e);
    }
}

/* ---- host --------------------------------------------------------------------------------- */
typedef unsigned long long ull;

/* Counts a violation found on the host; describes the first five. */
static void violation(uint64_t *viol, const char *fmt, ...) {
    if ((*viol)++ >= 5) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL PE %d: ", gshmem_my_pe());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static uint64_t g_seed, g_epoch;  /* g_epoch: last epoch used on flag/ack/go (never reset) */
static long g_iters = 10000;
static uint64_t *g_ctl;
static uint8_t *g_data, *g_src;
static vlog *g_log;

/* v as PE `from` has it, on every PE. Collective. */
static uint64_t share(int from, uint64_t v) {
    uint64_t *slot = g_ctl + S_RESULT * SLOT_WORDS;
    if (gshmem_my_pe() == from)
        for (int pe = 0; pe < gshmem_n_pes(); pe++) gshmem_putmem(slot, &v, sizeof v, pe);
    gshmem_barrier_all();
    CK(cudaMemcpy(&v, slot, sizeof v, cudaMemcpyDeviceToHost));
    gshmem_barrier_all();  /* nobody overwrites the slot before everyone has read it */
    return v;
}

static void judge(const char *name, uint64_t viol, uint64_t n, const char *note) {
    if (gshmem_my_pe() == 0) {
        printf("litmus %s: %llu violations in %llu iterations%s\n", name, (unsigned long long)viol,
               (unsigned long long)n, note ? note : "");
        fflush(stdout);
        EXPECT(viol == 0, "litmus %s: %llu violations in %llu iterations (seed %llu)", name,
               (unsigned long long)viol, (unsigned long long)n, (unsigned long long)g_seed);
    } else if (viol) t_failed++;
    else t_passed++;
}

typedef void (*pair_fn)(pair_args);

/* One litmus: PE 0 writes, PE 1 reads, the other PEs only join the barriers. Returns the
 * reader's violation count on every PE. */
static uint64_t run_pair(const char *name, pair_fn k, int lit, int threads, uint64_t prev, int vslot) {
    int me = gshmem_my_pe();
    pair_args a = {g_ctl, g_data, g_src, g_log, g_seed, g_epoch, prev, g_iters, me == 0 ? 1 : 0,
                   me == 0, lit, vslot};
    CK(cudaMemset(g_log, 0, sizeof *g_log));
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();
    if (me < 2) {
        k<<<1, threads>>>(a);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
    }
    gshmem_barrier_all();
    g_epoch += g_iters;
    vlog l;
    CK(cudaMemcpy(&l, g_log, sizeof l, cudaMemcpyDeviceToHost));
    if (me == 1 && l.count)
        fprintf(stderr, "PE 1: %s: %llu bad iterations; first at iteration %llu: %s %llu expected "
                "0x%llx, got 0x%llx (replay with GSHMEM_TEST_SEED=%llu)\n", name, l.count, l.iter,
                what_name[l.what], l.index, l.expected, l.actual, (unsigned long long)g_seed);
    return share(1, me == 1 ? l.count : 0);
}

static void litmus_pairs(void) {
    static const struct { const char *name; int lit; } mp[] = {
        {"mp_fence_thread", MP_FENCE_THREAD}, {"mp_fence_block", MP_FENCE_BLOCK},
        {"mp_quiet_thread", MP_QUIET_THREAD}, {"mp_quiet_block", MP_QUIET_BLOCK}};
    for (const auto &m : mp)
        judge(m.name, run_pair(m.name, pair_kernel<wait_uint64>, m.lit, PAIR_THREADS, 0, 0), g_iters,
              NULL);

    uint64_t sig_prev = 0;  /* the signal word holds the last epoch of the previous signal run */
    const char *sig_names[] = {"put_signal_thread", "put_signal_block"};
    for (int s = 0; s < 2; s++) {
        uint64_t first = g_epoch;
        judge(sig_names[s], run_pair(sig_names[s], pair_kernel<wait_uint64>, s ? SIG_BLOCK : SIG_THREAD,
                                     PAIR_THREADS, sig_prev, 0), g_iters, " (SET/ADD, blocking/_nbi)");
        sig_prev = first + g_iters;
    }

#define RUN_WAIT(NAME, T, IDX)                                                                \
    judge("wait_until_" #NAME,                                                                \
          run_pair("wait_until_" #NAME, pair_kernel<wait_##NAME>, WAIT_P, 32, 0, S_VAR0 + IDX), \
          g_iters, " (wait_until or test loop)");
    WAIT_TYPES(RUN_WAIT)
}

/* Every PE: AMO_BLOCKS x AMO_THREADS threads, ~iters operations in all, each a random kind on
 * the word on PE 0 or a random element of the arrays. PE 0 then checks, per location: the
 * final value is the sum of everything added, and the fetched old values, sorted, never
 * overlap (old_j + v_j <= old_j+1): no two operations observed the same value. */
static void litmus_atomics(void) {
    int me = gshmem_my_pe(), np = gshmem_n_pes();
    const int nthr = AMO_BLOCKS * AMO_THREADS;
    const int R = (int)((g_iters + nthr - 1) / nthr);
    const size_t nrec = (size_t)nthr * R;
    uint64_t *word = (uint64_t *)gshmem_calloc(1, sizeof(uint64_t));
    int *arr = (int *)gshmem_calloc(AMO_ARRAY, sizeof(int));
    arec *rec = (arec *)gshmem_malloc(nrec * sizeof(arec));
    if (!word || !arr || !rec) { fprintf(stderr, "allocation failed\n"); exit(2); }
    amo_args a = {word, arr, rec, g_seed, R, me, np};
    amo_kernel<<<AMO_BLOCKS, AMO_THREADS>>>(a);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();
    uint64_t viol = 0;
    if (me == 0) {
        std::vector<arec> all(nrec * np);
        for (int pe = 0; pe < np; pe++) gshmem_getmem(&all[nrec * pe], rec, nrec * sizeof(arec), pe);
        const int nt = 1 + np * AMO_ARRAY;
        std::vector<uint64_t> fin(nt), sum(nt, 0);
        gshmem_getmem(&fin[0], word, sizeof(uint64_t), 0);
        for (int q = 0; q < np; q++) {
            int v[AMO_ARRAY];
            gshmem_getmem(v, arr, sizeof v, q);
            for (int k = 0; k < AMO_ARRAY; k++) fin[1 + q * AMO_ARRAY + k] = (uint64_t)(uint32_t)v[k];
        }
        std::vector<std::vector<std::pair<uint64_t, uint32_t>>> chain(nt);
        for (const arec &r : all) {
            if (r.target & STARVED) {
                viol++;
                violation(&viol, "atomics: a compare_swap increment on target %u failed %u times",
                          r.target & ~STARVED, CAS_LIMIT);
                continue;
            }
            sum[r.target] += r.v;
            if (r.old != NO_OLD) chain[r.target].push_back({r.old, r.v});
        }
        for (int t = 0; t < nt; t++) {
            const char *where = t ? "array element" : "word";
            if (fin[t] != sum[t])
                violation(&viol, "atomics: %s %d ends at %llu, but the operations on it add up to %llu",
                          where, t, (ull)fin[t], (ull)sum[t]);
            auto &c = chain[t];
            std::sort(c.begin(), c.end());
            uint64_t end = 0;
            for (const auto &o : c) {
                if (o.first < end)
                    violation(&viol, "atomics: %s %d: an operation fetched %llu although an earlier "
                              "one had already taken it to %llu (two operations saw one value)",
                              where, t, (ull)o.first, (ull)end);
                end = std::max(end, o.first + o.second);
            }
            if (end > fin[t])
                violation(&viol, "atomics: %s %d: fetched values reach %llu, past the final %llu", where,
                          t, (ull)end, (ull)fin[t]);
        }
    }
    viol = share(0, viol);
    char note[96];
    snprintf(note, sizeof note, " (atomic operations from %d PEs x %d threads)", np, nthr);
    judge("atomics_contention", viol, nrec * np, note);
    gshmem_free(rec);
    gshmem_free(arr);
    gshmem_free(word);
}

static void litmus_sb(void) {
    int me = gshmem_my_pe();
    uint64_t *xy = (uint64_t *)gshmem_calloc(2 * SLOT_WORDS, sizeof(uint64_t));
    uint64_t *rec = (uint64_t *)gshmem_malloc(2 * g_iters * sizeof(uint64_t));
    if (!xy || !rec) { fprintf(stderr, "allocation failed\n"); exit(2); }
    uint64_t *x = xy, *y = xy + SLOT_WORDS;  /* x lives on PE 0, y on PE 1 */
    if (me < 2) {
        sb_args a = {g_ctl, x, y, rec, g_seed, g_epoch, g_iters, me};
        sb_kernel<<<1, 1>>>(a);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
    }
    gshmem_barrier_all();
    g_epoch += g_iters;
    uint64_t viol = 0, sb = 0;
    if (me == 0) {
        std::vector<uint64_t> r0(2 * g_iters), r1(2 * g_iters);
        gshmem_getmem(r0.data(), rec, r0.size() * sizeof(uint64_t), 0);
        gshmem_getmem(r1.data(), rec, r1.size() * sizeof(uint64_t), 1);
        uint64_t fx, fy;
        gshmem_getmem(&fx, x, sizeof fx, 0);
        gshmem_getmem(&fy, y, sizeof fy, 1);
        for (long i = 0; i < g_iters; i++) {
            uint64_t base = 2 * (uint64_t)i, rx0 = r0[2 * i], ry0 = r0[2 * i + 1], ry1 = r1[2 * i],
                     rx1 = r1[2 * i + 1];
            bool okx = (rx0 == base && rx1 == base + 1) || (rx0 == base + 1 && rx1 == base);
            bool oky = (ry0 == base && ry1 == base + 1) || (ry0 == base + 1 && ry1 == base);
            if (!okx || !oky)
                violation(&viol, "atomics_sb iteration %ld: x fetched %llu (PE 0), %llu (PE 1), y "
                          "fetched %llu (PE 0), %llu (PE 1); expected %llu and %llu for each word",
                          i, (ull)rx0, (ull)rx1, (ull)ry0, (ull)ry1, (ull)base, (ull)base + 1);
            sb += ry0 == base && rx1 == base;
        }
        uint64_t want = 2 * (uint64_t)g_iters;
        if (fx != want || fy != want)
            violation(&viol, "atomics_sb: x ends at %llu and y at %llu, expected %llu", (ull)fx, (ull)fy,
                      (ull)want);
    }
    viol = share(0, viol);
    char note[160];
    snprintf(note, sizeof note, " (store-buffering outcome, both second fetch_adds first: %llu times; "
             "allowed, atomics are relaxed)", (ull)sb);
    judge("atomics_sb", viol, g_iters, note);
    gshmem_free(rec);
    gshmem_free(xy);
}

static int run_negative(void) {
    pair_fn k = pair_kernel<wait_uint64>;
    uint64_t va = run_pair("missing-acquire", k, NEG_ACQUIRE, PAIR_THREADS, 0, 0);
    uint64_t vb = run_pair("missing-fence", k, NEG_FENCE, PAIR_THREADS, 0, 0);
    bool detected = va || vb;
    if (gshmem_my_pe() == 0) {
        const char *fmt = "negative control %s: %llu violations in %ld iterations\n";
        printf(fmt, "missing-acquire", (ull)va, g_iters);
        printf(fmt, "missing-fence", (ull)vb, g_iters);
        printf(detected ? "NEGATIVE CONTROL DETECTED\n" : "NEGATIVE CONTROL NOT DETECTED\n");
        fflush(stdout);
    }
    return detected ? 3 : 0;
}

int main(int argc, char **argv) {
    bool negative = false, iters_given = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--negative")) negative = true;
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) g_iters = atol(argv[++i]), iters_given = true;
        else if (!strncmp(argv[i], "--iters=", 8)) g_iters = atol(argv[i] + 8), iters_given = true;
        else {
            fprintf(stderr, "usage: %s [--iters N] [--negative]\n", argv[0]);
            return 2;
        }
    }
    if (g_iters < 1) {
        fprintf(stderr, "--iters must be at least 1\n");
        return 2;
    }
    if (test_light() && !iters_given) g_iters = 1000;   /* (common.h: fewer requests, the same checks) */
    gshmem_init();
    if (gshmem_n_pes() < 2) {
        printf("test_litmus needs at least 2 PEs; skipped\n");
        gshmem_finalize();
        return 0;
    }
    g_seed = agree_seed();
    g_ctl = (uint64_t *)gshmem_calloc(N_SLOTS * SLOT_WORDS, sizeof(uint64_t));
    g_data = (uint8_t *)gshmem_calloc(1, DATA_BYTES);
    if (!g_ctl || !g_data) { fprintf(stderr, "allocation failed\n"); return 2; }
    g_src = (uint8_t *)test_local_alloc(DATA_BYTES);
    if (!g_src) { fprintf(stderr, "allocation failed\n"); return 2; }
    CK(cudaMalloc(&g_log, sizeof *g_log));
    int rc;
    if (negative) rc = run_negative();
    else {
        litmus_pairs();
        litmus_atomics();
        litmus_sb();
        rc = summary("test_litmus");
    }
    cudaFree(g_log);
    test_local_free(g_src);
    gshmem_free(g_data);
    gshmem_free(g_ctl);
    gshmem_finalize();
    return rc;
}
