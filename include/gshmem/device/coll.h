/* Collectives on teams, on the device: one implementation per collective, templated on the
 * group shape (thread, warp, block) and run on one channel c of nch. A user's kernel calls
 * them with one group (c = 0, nch = 1); the on-stream kernels run nch blocks, block c on
 * channel c, each moving slice c of the data. Two algorithm families:
 *
 * one-shot (small messages, teams with scratch): every member pushes what the others need
 *   into their scratch buffer as LL words (data and flag in one store; parity = this team's
 *   one-shot count & 1), and each member finishes locally from its scratch as the words
 *   arrive, with no separate flag round. A member can be at most one one-shot ahead of
 *   another (it cannot finish one without a word from everybody), so two buffers per sender
 *   suffice. The on-stream kernels split one message between up to ONESHOT_CHANNELS blocks
 *   (slice c at the same offset of every buffer).
 * two-round (everything else): a round announces arrival (sources ready, destinations free),
 *   the members move data straight between the symmetric user buffers over NVLink, and a
 *   second round announces completion (all reads of my source and writes to my destination
 *   done). Reductions and scans are "owner computes": member o reads element range o of
 *   every member's source, combines, and writes the results to every member's destination,
 *   so in-place calls (dest == source) are safe and every PE gets bit-identical results.
 *
 * GSHMEM_DEBUG >= 1: the first round also exchanges a signature (collective, element size,
 * operator, count, root) and a member whose peers called something else stops the job with a
 * message naming both. */
#ifndef GSHMEM_DEVICE_COLL_H
#define GSHMEM_DEVICE_COLL_H

#include "team.h"

/* The 16-bit float types are declared, not defined, here (cuda_fp16.h and cuda_bf16.h begin
 * the same way): those two headers cost a unit that includes gshmem.h about as much as all of
 * gshmem's device code. Code that holds __half or __nv_bfloat16 values includes them anyway;
 * a reduction of them needs them included before it is called. */
struct __half;
struct __nv_bfloat16;

/* ---- operators ------------------------------------------------------------------------- */
/* Accumulator type: 16-bit floats combine in float, everything else in itself. */
template <class T> struct gshmemi_acc {
    typedef T t;
    static __device__ __forceinline__ t in(T x) { return x; }
    static __device__ __forceinline__ T out(t x) { return x; }
};
/* The conversions are found where a reduction of H is instantiated (argument-dependent lookup:
 * H, and gshmemi_f32<H>, belong to the global namespace, where cuda_fp16.h/cuda_bf16.h declare
 * them), so only units that reduce 16-bit floats need their headers. */
template <class H> struct gshmemi_f32 {
    float v;
    __device__ __forceinline__ operator float() const { return v; }
};
template <class H> struct gshmemi_acc_f16 {
    typedef float t;
    static __device__ __forceinline__ t in(H x) { return __half2float(x); }
    static __device__ __forceinline__ H out(t x) { return __float2half_rn(gshmemi_f32<H>{x}); }
};
template <class H> struct gshmemi_acc_bf16 {
    typedef float t;
    static __device__ __forceinline__ t in(H x) { return __bfloat162float(x); }
    static __device__ __forceinline__ H out(t x) { return __float2bfloat16_rn(gshmemi_f32<H>{x}); }
};
template <> struct gshmemi_acc<__half> : gshmemi_acc_f16<__half> {};
template <> struct gshmemi_acc<__nv_bfloat16> : gshmemi_acc_bf16<__nv_bfloat16> {};

template <int OP> struct gshmemi_rop;
#define GSHMEMI_DEF_ROP(CODE, EXPR)                                                          \
    template <> struct gshmemi_rop<CODE> {                                                   \
        template <class A> static __device__ __forceinline__ A f(A a, A b) { return EXPR; }  \
    };
GSHMEMI_DEF_ROP(GSHMEMI_OP_AND, a & b)
GSHMEMI_DEF_ROP(GSHMEMI_OP_OR, a | b)
GSHMEMI_DEF_ROP(GSHMEMI_OP_XOR, a ^ b)
GSHMEMI_DEF_ROP(GSHMEMI_OP_MIN, b < a ? b : a)
GSHMEMI_DEF_ROP(GSHMEMI_OP_MAX, a < b ? b : a)
GSHMEMI_DEF_ROP(GSHMEMI_OP_SUM, a + b)
GSHMEMI_DEF_ROP(GSHMEMI_OP_PROD, a * b)
#undef GSHMEMI_DEF_ROP

/* ---- addressing ---------------------------------------------------------------------- */
static __device__ __noinline__ void gshmemi_coll_unreachable(const char *call, int pe) {
    GSHMEMI_DEVICE_FAIL("%s: team member PE %d is on another node than PE %d: device collectives "
                        "on teams across nodes need this translation unit built with "
                        "-DGSHMEM_REMOTE=1 (the host and on-stream forms work without it)", call, pe,
                        gshmemi_dstate.mype);
}
static __device__ __noinline__ void gshmemi_coll_bad_buf(const char *call, const char *which,
                                                         const void *p, size_t n) {
    GSHMEMI_DEVICE_FAIL("%s: %s %p (+%llu bytes) is not inside the symmetric heap [%p, %p); "
                        "collective buffers must come from gshmem_malloc", call, which, p,
                        (unsigned long long)n, gshmemi_dstate.heap_base,
                        gshmemi_dstate.heap_base + gshmemi_dstate.heap_mapped);
}
static __device__ __noinline__ void gshmemi_coll_bad_root(const char *call, int root, int n) {
    GSHMEMI_DEVICE_FAIL("%s: PE_root %d is not a team PE number in [0, %d)", call, root, n);
}
static __device__ __noinline__ void gshmemi_coll_mismatch(const char *call, int team, int pe,
                                                          unsigned mine, unsigned theirs) {
    GSHMEMI_DEVICE_FAIL("%s on team %d: team PE %d called a different collective or passed "
                        "different arguments (signature 0x%08x here, 0x%08x there); every "
                        "member must make the same collective calls in the same order",
                        call, team, pe, mine, theirs);
}

/* Byte offset from this PE's copy of a symmetric object to member j's, as this GPU maps it. */
GSHMEMI_DEV ptrdiff_t gshmemi_member_off(const gshmemi_team *t, int j) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    return (ptrdiff_t)gshmemi_slot_of(s, gshmemi_team_pe(t, j)) * (ptrdiff_t)s->heap_window;
}
template <class T> GSHMEMI_DEV T *gshmemi_at(T *p, ptrdiff_t off) {
    return (T *)((char *)p + off);
}

/* Entry checks every thread runs (cheap, one branch each): members reachable, buffers in the
 * heap when GSHMEM_DEBUG >= 2. Inline (the reports are not), so an on-stream kernel's team
 * entry stays in parameter space instead of being copied to the stack for a call. */
GSHMEMI_DEV void gshmemi_coll_check_bufs(const void *dest, size_t dbytes, const void *src,
                                         size_t sbytes, const char *call) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    if (s->debug >= 2) {
        const char *lo = s->heap_base, *hi = s->heap_base + s->heap_mapped;
        if (dbytes && ((const char *)dest < lo || (const char *)dest + dbytes > hi))
            gshmemi_coll_bad_buf(call, "dest", dest, dbytes);
        if (sbytes && ((const char *)src < lo || (const char *)src + sbytes > hi))
            gshmemi_coll_bad_buf(call, "source", src, sbytes);
    }
}
GSHMEMI_DEV void gshmemi_coll_check(const gshmemi_team *t, const void *dest, size_t dbytes,
                                    const void *src, size_t sbytes, const char *call) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    for (int j = 0; j < t->size; j++)
        if (gshmemi_slot_of(s, gshmemi_team_pe(t, j)) < 0) gshmemi_coll_unreachable(call, gshmemi_team_pe(t, j));
    gshmemi_coll_check_bufs(dest, dbytes, src, sbytes, call);
}

/* ---- rounds ------------------------------------------------------------------------------ */
/* Debug signature exchange, done by the leader of channel 0 before the first round's flags
 * (cell parity = this team's collective count & 1: a member is at most one collective
 * ahead). Checked after the round by gshmemi_sig_check. */
GSHMEMI_DEV unsigned gshmemi_sig(int what, int esize, int op, uint64_t n, int root) {
    uint64_t h = 1469598103934665603ull;
    uint64_t v[5] = {(uint64_t)what, (uint64_t)esize, (uint64_t)op, n, (uint64_t)root};
    for (int i = 0; i < 5; i++) h = (h ^ v[i]) * 1099511628211ull;
    return (unsigned)(h ^ (h >> 32));
}
template <class S>
GSHMEMI_DEV uint64_t gshmemi_sig_post(const gshmemi_team *t, int c, unsigned sig, const char *call) {
    if (c != 0 || gshmemi_dstate.debug < 1) return 0;
    uint64_t n = 0;
    if (S::rank() == 0) {
        n = *(volatile uint64_t *)t->ncoll + 1;
        *(volatile uint64_t *)t->ncoll = n;
        uint64_t word = (n << 32) | sig;
        for (int j = 0; j < t->size; j++)
            gshmemi_st_relaxed(gshmemi_peer_known(t->sigs + (n & 1) * t->size + t->my_idx,
                                                  gshmemi_team_pe(t, j), call), word);
    }
    return n;
}
template <class S>
GSHMEMI_DEV void gshmemi_sig_check(const gshmemi_team *t, int team, int c, uint64_t n,
                                   unsigned sig, const char *call) {
    if (c != 0 || gshmemi_dstate.debug < 1 || S::rank() != 0) return;
    uint64_t want = (n << 32) | sig;
    for (int j = 0; j < t->size; j++) {
        uint64_t w = gshmemi_ld_relaxed(t->sigs + (n & 1) * t->size + j);
        if (w != want) gshmemi_coll_mismatch(call, team, j, sig, (unsigned)w);
    }
}

/* Not inlined (nor the rounds and copies below): each collective inlines several of these,
 * and inlined together they pushed block-scope callers past the 64 registers a 1024-thread
 * block allows, or (a kernel calling several movers) the 80 a 768-thread block allows. */
#define GSHMEMI_COLL_FN static __device__ __noinline__

/* A team round, out of line for the two-round collectives: the inlined polling loops of a
 * kernel's several collectives took it to 90 registers (team_sync keeps its round inline). */
template <class S>
GSHMEMI_COLL_FN void gshmemi_coll_round(const gshmemi_team *t, int c, const char *call) {
    gshmemi_team_round<S>(t, c, call);
}

/* The arrival round on channel c, carrying the debug signature: the first round of every
 * two-round collective, and the debug-only round before a one-shot. */
template <class S>
GSHMEMI_DEV void gshmemi_arrive(const gshmemi_team *t, int team, int c, unsigned sig,
                                const char *call) {
    uint64_t ns = gshmemi_sig_post<S>(t, c, sig, call);
    S::sync();
    gshmemi_coll_round<S>(t, c, call);
    gshmemi_sig_check<S>(t, team, c, ns, sig, call);
}

/* Slice c of nch of [0, n), in multiples of g elements. */
GSHMEMI_DEV void gshmemi_slice(size_t n, int c, int nch, size_t g, size_t *lo, size_t *hi) {
    if (nch == 1) {
        *lo = c ? n : 0;
        *hi = n;
        return;
    }
    size_t per = (n + (size_t)nch - 1) / (size_t)nch;
    per = (per + g - 1) / g * g;
    size_t a = (size_t)c * per;
    *lo = a < n ? a : n;
    *hi = a + per < n ? a + per : n;
}

/* ---- element-wise combine ---------------------------------------------------------------- */
/* Where member j's input and output for element k live, and what to write. */
#define GSHMEMI_OUT_ALL 0      /* reduce (two-round): the result to every member's dest */
#define GSHMEMI_OUT_OWN 1      /* result only to my dest */
#define GSHMEMI_OUT_SCAN_IN 2  /* inclusive prefix of member j to member j's dest */
#define GSHMEMI_OUT_SCAN_EX 3  /* exclusive prefix */

template <class T> GSHMEMI_DEV T gshmemi_ldcg(const T *p) {
    typedef typename gshmemi_uint<sizeof(T)>::t U;
    U u = __ldcg((const U *)p);
    T v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* U vectors (V elements each) at k0, k0 + step, ...: loads of all U from one member are in
 * flight together (NVLink latency hides only behind many outstanding loads). */
template <class T, int OP, int OUT, int U, class In>
GSHMEMI_DEV void gshmemi_combine_vecs(const gshmemi_team *t, const In &in, T *dest, int m,
                                      size_t k0, size_t step) {
    typedef gshmemi_acc<T> AC;
    typedef typename AC::t A;
    typedef gshmemi_rop<OP> R;
    constexpr int V = 16 / sizeof(T);
    constexpr bool SCAN = OUT == GSHMEMI_OUT_SCAN_IN || OUT == GSHMEMI_OUT_SCAN_EX;
    A acc[U][V];
    if (SCAN) {
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int i = 0; i < V; i++) acc[u][i] = AC::in((T)0);
    }
    for (int j = 0; j < m; j++) {
        const T *p = in.ptr(j) + k0;
        int4 r[U];
#pragma unroll
        for (int u = 0; u < U; u++) r[u] = __ldcg((const int4 *)(p + u * step));
        T *dj = SCAN ? gshmemi_at(dest, gshmemi_member_off(t, j)) + k0 : dest;
#pragma unroll
        for (int u = 0; u < U; u++) {
            T x[V], o[V];
            memcpy(x, &r[u], 16);
            if (OUT == GSHMEMI_OUT_SCAN_EX) {  /* write before adding: in place is safe */
#pragma unroll
                for (int i = 0; i < V; i++) o[i] = AC::out(acc[u][i]);
                memcpy(&r[u], o, 16);
                *(int4 *)(dj + u * step) = r[u];
            }
#pragma unroll
            for (int i = 0; i < V; i++)
                acc[u][i] = (j == 0 && !SCAN) ? AC::in(x[i]) : R::f(acc[u][i], AC::in(x[i]));
            if (OUT == GSHMEMI_OUT_SCAN_IN) {
#pragma unroll
                for (int i = 0; i < V; i++) o[i] = AC::out(acc[u][i]);
                memcpy(&r[u], o, 16);
                *(int4 *)(dj + u * step) = r[u];
            }
        }
    }
    if constexpr (!SCAN) {
        int4 res[U];
    #pragma unroll
        for (int u = 0; u < U; u++) {
            T o[V];
    #pragma unroll
            for (int i = 0; i < V; i++) o[i] = AC::out(acc[u][i]);
            memcpy(&res[u], o, 16);
        }
        if (OUT == GSHMEMI_OUT_OWN) {
    #pragma unroll
            for (int u = 0; u < U; u++) *(int4 *)(dest + k0 + u * step) = res[u];
        } else {
            for (int j = 0; j < t->size; j++) {
                T *dj = gshmemi_at(dest, gshmemi_member_off(t, j)) + k0;
    #pragma unroll
                for (int u = 0; u < U; u++) *(int4 *)(dj + u * step) = res[u];
            }
        }
    }
}

/* In: pointer of member j's inputs (symmetric src + member offset). Out: see GSHMEMI_OUT_*.
 * upto: members combined. Threads handle whole 16-byte vectors (V elements), U at a time, where dest
 * and all inputs are 16-byte aligned; single elements otherwise. */
template <class T, int OP, int OUT, int U, class In>
GSHMEMI_COLL_FN void gshmemi_combine(const gshmemi_team *t, const In &in, T *dest, int upto,
                                     size_t lo, size_t hi, unsigned rank, unsigned size) {
    typedef gshmemi_acc<T> AC;
    typedef typename AC::t A;
    typedef gshmemi_rop<OP> R;
    constexpr int V = 16 / sizeof(T);
    const int m = upto;
    size_t k = lo;
    if (((uintptr_t)dest & 15) == 0 && in.aligned16()) {
        size_t nv = (hi - lo) / V, v = rank;
        if (U > 1)
            for (; v + (size_t)(U - 1) * size < nv; v += (size_t)U * size)
                gshmemi_combine_vecs<T, OP, OUT, U>(t, in, dest, m, lo + v * V, (size_t)size * V);
        for (; v < nv; v += size) gshmemi_combine_vecs<T, OP, OUT, 1>(t, in, dest, m, lo + v * V, 0);
        k = lo + nv * V;
    }
    for (k += rank; k < hi; k += size) {
        A acc = AC::in((T)0);
        for (int j = 0; j < m; j++) {
            T x = gshmemi_ldcg(in.ptr(j) + k);
            if (OUT == GSHMEMI_OUT_SCAN_EX) *(gshmemi_at(dest, gshmemi_member_off(t, j)) + k) = AC::out(acc);
            acc = (j == 0 && OUT != GSHMEMI_OUT_SCAN_EX && OUT != GSHMEMI_OUT_SCAN_IN)
                      ? AC::in(x) : R::f(acc, AC::in(x));
            if (OUT == GSHMEMI_OUT_SCAN_IN) *(gshmemi_at(dest, gshmemi_member_off(t, j)) + k) = AC::out(acc);
        }
        if (OUT == GSHMEMI_OUT_OWN) dest[k] = AC::out(acc);
        else if (OUT == GSHMEMI_OUT_ALL)
            for (int j = 0; j < t->size; j++) *(gshmemi_at(dest, gshmemi_member_off(t, j)) + k) = AC::out(acc);
    }
}

/* Inputs of the two-round path: every member's symmetric source (+ base elements). */
template <class T> struct gshmemi_in_peers {
    const gshmemi_team *t;
    const T *src;
    __device__ __forceinline__ const T *ptr(int j) const { return gshmemi_at(src, gshmemi_member_off(t, j)); }
    __device__ __forceinline__ bool aligned16() const { return ((uintptr_t)src & 15) == 0; }
};
/* Inputs of the push path's second step: what the other member wrote into my dest, and my
 * own source, in member order (so the result is the same bits as on the other paths). */
template <class T> struct gshmemi_in_pushed {
    const T *src, *dest;
    int me;
    __device__ __forceinline__ const T *ptr(int j) const { return j == me ? src : dest; }
    __device__ __forceinline__ bool aligned16() const {
        return (((uintptr_t)src | (uintptr_t)dest) & 15) == 0;
    }
};
/* Copies n bytes (or, for alltoalls, n elements of es bytes with strides) for the group. */
template <class S>
GSHMEMI_COLL_FN void gshmemi_move_copy(void *to, const void *from, size_t nbytes) {
    gshmemi_copy_group<false>(to, from, nbytes, S::rank(), S::size());
}
template <class S>
GSHMEMI_COLL_FN void gshmemi_move_strided(void *to, const void *from, ptrdiff_t dst, ptrdiff_t sst,
                                      size_t n, size_t es) {
    unsigned r = S::rank(), z = S::size();
    switch (es) {
    case 1: gshmemi_copy_strided<false, 1>(to, from, dst, sst, n, r, z); break;
    case 2: gshmemi_copy_strided<false, 2>(to, from, dst, sst, n, r, z); break;
    case 4: gshmemi_copy_strided<false, 4>(to, from, dst, sst, n, r, z); break;
    case 8: gshmemi_copy_strided<false, 8>(to, from, dst, sst, n, r, z); break;
    default: gshmemi_copy_strided<false, 16>(to, from, dst, sst, n, r, z); break;
    }
}

/* ---- LL (low-latency) messages of the one-shot path --------------------------------------- */
/* A message is a run of 8-byte words, 4 bytes of data and 4 bytes of flag (the one-shot
 * count), written with single-copy-atomic stores: a reader that sees the flag sees the data,
 * so no fence and no separate flag round (the fence would wait for the NVLink round trip of
 * every store). Threads move 16 bytes (two words, two flags) at a time. Every member sends
 * every other member a message (at least one word), so finishing one-shot q still proves
 * every member has started it, which is what the two scratch parities rely on. */
/* 4 data bytes at byte i of an nb-byte buffer: one aligned load, or (the message's tail, or an
 * unaligned buffer) bytes one by one. (Moving the byte loops out of line, to keep the hot path
 * contiguous, measured slower in a CUDA graph and pushed 768-thread block-scope callers past
 * their register limit: session 6.) */
GSHMEMI_DEV uint32_t gshmemi_ll_load4(const char *p, size_t i, size_t nb) {
    if (i + 4 <= nb && ((uintptr_t)(p + i) & 3) == 0) return *(const uint32_t *)(p + i);
    uint32_t v = 0;
    for (int b = 0; b < 4; b++)
        if (i + b < nb) v |= (uint32_t)(uint8_t)p[i + b] << (8 * b);
    return v;
}
GSHMEMI_DEV void gshmemi_ll_store4(char *p, size_t i, size_t nb, uint32_t v) {
    if (i + 4 <= nb && ((uintptr_t)(p + i) & 3) == 0) {
        *(uint32_t *)(p + i) = v;
        return;
    }
    for (int b = 0; b < 4; b++)
        if (i + b < nb) p[i + b] = (char)(v >> (8 * b));
}
/* Words of an nb-byte message, in pairs (16-byte units). */
GSHMEMI_DEV size_t gshmemi_ll_pairs(size_t nb) { return nb ? (nb + 7) / 8 : 1; }

/* This thread's first pair (pair `rank`) of an nb-byte message: loaded before the one-shot
 * count is read, so that the two loads are in flight together. */
GSHMEMI_DEV uint2 gshmemi_ll_first(const char *from, size_t nb, unsigned rank) {
    return make_uint2(gshmemi_ll_load4(from, 8 * (size_t)rank, nb),
                      gshmemi_ll_load4(from, 8 * (size_t)rank + 4, nb));
}
/* Send nb bytes of `from` as LL words to `to` (a peer's scratch), flag f; `first`, when
 * given, is this thread's first pair already loaded. */
template <class S>
GSHMEMI_DEV void gshmemi_ll_send(char *to, const char *from, size_t nb, uint32_t f,
                                 const uint2 *first) {
    size_t np = gshmemi_ll_pairs(nb);
    for (size_t p = S::rank(); p < np; p += S::size()) {
        uint2 d = first && p == S::rank() ? *first
                                          : make_uint2(gshmemi_ll_load4(from, 8 * p, nb),
                                                       gshmemi_ll_load4(from, 8 * p + 4, nb));
        uint64_t lo = (uint64_t)f << 32 | d.x, hi = (uint64_t)f << 32 | d.y;
        asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(to + 16 * p), "l"(lo), "l"(hi)
                     : "memory");
    }
}
/* Waits until pair p of the LL message at `from` (my scratch) carries flag f in both words;
 * returns its 8 data bytes. */
GSHMEMI_DEV uint64_t gshmemi_ll_pair(const char *from, size_t p, uint32_t f, const char *call) {
    const gshmemi_device_state *s = &gshmemi_dstate;
    uint64_t lo, hi;
    gshmemi_deadline dl = {0, 0};
    double secs;
    for (;;) {
        asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(lo), "=l"(hi)
                     : "l"(from + 16 * p) : "memory");
        if ((uint32_t)(lo >> 32) == f && (uint32_t)(hi >> 32) == f) break;
        if (dl.expired(s, &secs))
            gshmemi_wait_expired(call, from + 16 * p, GSHMEM_CMP_EQ, f,
                                 (uint32_t)(lo >> 32) != f ? lo >> 32 : hi >> 32, secs);
    }
    return (uint32_t)lo | (uint64_t)(uint32_t)hi << 32;
}
/* The debug-only signature round before a one-shot (out of line: debug builds alone pay). It
 * finds the team entry by handle (the device table) rather than taking the caller's pointer,
 * so an on-stream kernel's entry, in parameter space, is never copied to a stack frame. */
template <class S>
static __device__ __noinline__ void gshmemi_oneshot_debug(int team, int c, unsigned sig,
                                                          const char *call) {
    gshmemi_arrive<S>(gshmemi_team_member(team, call), team, c, sig, call);
}
/* The one-shot hand-out on channel c of nch: this team's one-shot count (flag and parity).
 * Channel c reads its own copy of the count and advances copies c, c + nch, ... so that all
 * ONESHOT_CHANNELS copies stay equal whatever nch the next call uses, and no block waits for
 * another. With GSHMEM_DEBUG the members also exchange signatures in a flag round first. */
template <class S>
GSHMEMI_DEV uint32_t gshmemi_oneshot_begin(const gshmemi_team *t, int team, int c, int nch,
                                           int debug, unsigned sig, const char *call) {
    if (debug >= 1) gshmemi_oneshot_debug<S>(team, c, sig, call);
    /* (the group's last one-shot ended with a group barrier: its count stores are seen) */
    uint64_t q = *(volatile uint64_t *)(t->seqs + c) + 1;
    S::sync();
    for (int k = c + (int)S::rank() * nch; k < GSHMEMI_ONESHOT_CHANNELS; k += nch * (int)S::size())
        *(volatile uint64_t *)(t->seqs + k) = q;
    return (uint32_t)q;
}
/* Whether a message of nb bytes per member takes the one-shot path on nch channels: it fits
 * half the scratch, and one group (a user's kernel, or a small on-stream call) handles at most
 * 32 KiB: a lone thread or warp polling 16-byte words one by one is slower than two rounds
 * beyond that, where the on-stream kernels spread larger messages over several blocks. */
#define GSHMEMI_ONESHOT_GROUP_MAX (32u << 10)
static __host__ __device__ __forceinline__ bool gshmemi_oneshot(const gshmemi_team *t, size_t nb,
                                                                int nch) {
    return t->scratch && nb <= t->scratch_bytes / 2 && nch <= GSHMEMI_ONESHOT_CHANNELS &&
           (nch > 1 || nb <= GSHMEMI_ONESHOT_GROUP_MAX);
}
/* Scratch buffers: [parity][sender] of scratch_bytes each. The byte offset of parity f & 1. */
GSHMEMI_DEV size_t gshmemi_ll_parity(const gshmemi_team *t, uint32_t f) {
    return (size_t)(f & 1) * (size_t)t->size * t->scratch_bytes;
}
/* The LL area for sender j on this PE (parity of f). */
GSHMEMI_DEV char *gshmemi_ll_area(const gshmemi_team *t, uint32_t f, int j) {
    return t->scratch + gshmemi_ll_parity(t, f) + (size_t)j * t->scratch_bytes;
}
/* Where my message to member j goes: byte `off` of my area (LL words take twice the bytes)
 * in j's scratch, parity 0 (add gshmemi_ll_parity). Computed for the first member before the
 * one-shot count is read, so that its constant-bank loads overlap that load. */
GSHMEMI_DEV char *gshmemi_ll_to(const gshmemi_team *t, int j, size_t off) {
    return gshmemi_at(t->scratch + (size_t)t->my_idx * t->scratch_bytes + 2 * off,
                      gshmemi_member_off(t, j));
}
/* What a one-shot call on channel c can work out before it may touch any data, from the
 * parameters and the constant bank alone: its slice, the first member it sends to and where
 * that message goes, the debug level. The on-stream kernels make the plan before their PDL
 * wait, so these loads (cold in a block's first instructions) overlap the previous kernel's
 * end instead of adding to the critical path. n elements of es bytes, sliced in units of g. */
struct gshmemi_oneshot_plan {
    size_t lo, hi;   /* my channel's slice of each member's message, in elements */
    char *to1;       /* my message's place in member j1's scratch (parity 0) */
    int j1, debug;
};
GSHMEMI_DEV gshmemi_oneshot_plan gshmemi_oneshot_plan_of(const gshmemi_team *t, size_t n, size_t g,
                                                         size_t es, int c, int nch) {
    gshmemi_oneshot_plan P;
    gshmemi_slice(n, c, nch, g, &P.lo, &P.hi);
    P.j1 = t->my_idx + 1 < t->size ? t->my_idx + 1 : 0;
    P.to1 = gshmemi_ll_to(t, P.j1, P.lo * es);
    P.debug = gshmemi_dstate.debug;
    return P;
}

/* One-shot combine straight from the LL words: pair p of the slice (8 bytes: 8 / sizeof(T)
 * elements) combines members 0 .. upto-1 in order (mine from `own`, the others' from my
 * scratch, at byte `off` of every buffer) into dest. Members past upto (scans) sent one
 * empty word, which is waited for all the same. The thread that sent pair p combines it, so
 * dest == own is safe. */
template <class T, int OP>
GSHMEMI_DEV void gshmemi_ll_reduce(const gshmemi_team *t, uint32_t f, T *dest, const T *own,
                                       size_t off, size_t nb, int upto, unsigned rank,
                                       unsigned size, const char *call) {
    typedef gshmemi_acc<T> AC;
    typedef typename AC::t A;
    typedef gshmemi_rop<OP> R;
    constexpr int E = 8 / sizeof(T);
    const int m = t->size, me = t->my_idx;
    const size_t np = gshmemi_ll_pairs(nb);
    for (size_t p = rank; p < np; p += size) {
        const size_t left = nb > 8 * p ? (nb - 8 * p) / sizeof(T) : 0;
        const int ne = left < (size_t)E ? (int)left : E;
        A acc[E];
#pragma unroll
        for (int i = 0; i < E; i++) acc[i] = AC::in((T)0);
        T mine[E];   /* loaded before the waits: its latency hides behind them */
        if (me < upto)
#pragma unroll
            for (int i = 0; i < E; i++) mine[i] = i < ne ? own[p * E + i] : (T)0;
        bool first = true;
        for (int j = 0; j < m; j++) {
            T x[E];
            if (j == me) {
                if (j >= upto) continue;
#pragma unroll
                for (int i = 0; i < E; i++) x[i] = mine[i];
            } else {
                const char *area = gshmemi_ll_area(t, f, j) + 2 * off;
                if (j >= upto) {
                    if (p == 0) (void)gshmemi_ll_pair(area, 0, f, call);
                    continue;
                }
                uint64_t d = gshmemi_ll_pair(area, p, f, call);
                memcpy(x, &d, 8);
            }
#pragma unroll
            for (int i = 0; i < E; i++) acc[i] = first ? AC::in(x[i]) : R::f(acc[i], AC::in(x[i]));
            first = false;
        }
#pragma unroll
        for (int i = 0; i < E; i++)
            if (i < ne) dest[p * E + i] = AC::out(acc[i]);
    }
}

/* One-shot moves, receiving side: pair p of my slice (bytes [lo, lo + bn) of each member's
 * part) from every member's message, straight into dest, and of my own part, copied
 * locally. A broadcast's non-roots sent one empty word, waited for all the same. */
GSHMEMI_DEV void gshmemi_ll_gather(const gshmemi_team *t, uint32_t f, int what, char *d,
                                       const char *s, size_t nb, size_t lo, size_t bn, int root,
                                       unsigned rank, unsigned size, const char *call) {
    const int m = t->size, me = t->my_idx;
    const bool bc = what == GSHMEMI_MOVE_BROADCAST, a2a = what == GSHMEMI_MOVE_ALLTOALL;
    const bool own = !bc || (me == root && d != s);
    const size_t np = gshmemi_ll_pairs(bn);
    for (size_t p = rank; p < np; p += size) {
        if (own) {   /* first: it waits for nothing */
            const char *from = (a2a ? s + (size_t)me * nb : s) + lo;
            char *to = (bc ? d : d + (size_t)me * nb) + lo;
            gshmemi_ll_store4(to, 8 * p, bn, gshmemi_ll_load4(from, 8 * p, bn));
            gshmemi_ll_store4(to, 8 * p + 4, bn, gshmemi_ll_load4(from, 8 * p + 4, bn));
        }
        for (int jj = 1; jj < m; jj++) {
            int j = me >= jj ? me - jj : me + m - jj;
            const char *area = gshmemi_ll_area(t, f, j) + 2 * lo;
            if (bc && j != root) {
                if (p == 0) (void)gshmemi_ll_pair(area, 0, f, call);
                continue;
            }
            uint64_t v = gshmemi_ll_pair(area, p, f, call);
            char *to = (bc ? d : d + (size_t)j * nb) + lo;
            gshmemi_ll_store4(to, 8 * p, bn, (uint32_t)v);
            gshmemi_ll_store4(to, 8 * p + 4, bn, (uint32_t)(v >> 32));
        }
    }
}

/* ---- reductions, reduce-scatter, scans ------------------------------------------------------ */
/* what: GSHMEMI_COLL_REDUCE / REDUCESCATTER / INSCAN / EXSCAN. n = nreduce (elements per PE
 * block for reducescatter) or nelems. */
/* Entry checks of a reduction on this PE: members reachable, buffers in the heap (debug). */
template <class T>
GSHMEMI_DEV void gshmemi_reduce_check(const gshmemi_team *t, int what, const T *dest, const T *src,
                                      size_t n, const char *call) {
    size_t sbytes = (what == GSHMEMI_COLL_REDUCESCATTER ? (size_t)t->size : 1) * n * sizeof(T);
    gshmemi_coll_check(t, dest, n * sizeof(T), src, sbytes, call);
}
/* One-shot reduction (the caller checked gshmemi_oneshot): LL messages to every member
 * (scans: data only to higher members), my channel's slice of them, combined as the words
 * arrive. `run` is inlined into the on-stream one-shot kernels (compact code, the team entry
 * read from parameter space, the plan made before the PDL wait, and no device-side entry
 * checks: the host checked the buffers and that every member is reachable, which measured
 * 0.7 us of a one-shot kernel's critical path, bench/probe_sync); `body` (checks, plan, run)
 * is called out of line by the device-side collectives. */
template <class T, int OP, class S>
GSHMEMI_DEV void gshmemi_reduce_oneshot_run(const gshmemi_team *t, int team, int what, T *dest,
                                            const T *src, size_t n, const gshmemi_oneshot_plan &P,
                                            int c, int nch, const char *call) {
    const int m = t->size, me = t->my_idx, j1 = P.j1;
    const size_t lo = P.lo, off = lo * sizeof(T), bn = (P.hi - lo) * sizeof(T);
    const bool rs = what == GSHMEMI_COLL_REDUCESCATTER;
    const bool scan = what == GSHMEMI_COLL_INSCAN || what == GSHMEMI_COLL_EXSCAN;
    /* the first member's message: what it gets, and this thread's first pair of it */
    const char *from1 = (const char *)((rs ? src + (size_t)j1 * n : src) + lo);
    const size_t bn1 = scan && j1 < me ? 0 : bn;
    const uint2 first = gshmemi_ll_first(from1, bn1, S::rank());
    const uint32_t f = gshmemi_oneshot_begin<S>(t, team, c, nch, P.debug,
                                                gshmemi_sig(100 + what, sizeof(T), OP, n, 0), call);
    for (int jj = 1; jj < m; jj++) {
        int j = me + jj < m ? me + jj : me + jj - m;   /* no integer division on the path */
        const T *from = (rs ? src + (size_t)j * n : src) + lo;
        char *to = (jj == 1 ? P.to1 : gshmemi_ll_to(t, j, off)) + gshmemi_ll_parity(t, f);
        gshmemi_ll_send<S>(to, (const char *)from, scan && j < me ? 0 : bn, f, jj == 1 ? &first : NULL);
    }
    const int upto = what == GSHMEMI_COLL_INSCAN ? me + 1 : what == GSHMEMI_COLL_EXSCAN ? me : m;
    gshmemi_ll_reduce<T, OP>(t, f, dest + lo, (rs ? src + (size_t)me * n : src) + lo, off, bn,
                             upto, S::rank(), S::size(), call);
    S::sync();
}
/* 8 bytes of elements at p (ne <= 8 / sizeof(T) of them, zero-padded): one load when whole
 * and aligned. */
template <class T> GSHMEMI_DEV uint2 gshmemi_ll_pack(const T *p, int ne) {
    constexpr int E = 8 / sizeof(T);
    if (ne == E && ((uintptr_t)p & 7) == 0) return *(const uint2 *)p;
    T x[E];
#pragma unroll
    for (int i = 0; i < E; i++) x[i] = i < ne ? p[i] : (T)0;
    uint2 d;
    memcpy(&d, x, 8);
    return d;
}
/* The one-pair form of the one-shot reduce (what == REDUCE only), for the on-stream kernels
 * when the block has a thread for every LL pair of its slice (the host's thread count is one
 * per pair up to 512, so every call whose slice is at most 4 KiB: all one-shot calls up to
 * 64 KiB per member by default). Same protocol, words and buffers as
 * gshmemi_reduce_oneshot_run (the two interoperate call after call), written without loops
 * over pairs and without byte-wise paths: thread r packs pair r of my slice, sends it to
 * every member, waits for pair r of every member's message and combines them in team order.
 * In a CUDA graph this shape runs the protocol at the raw exchange's speed (1.50 us per call
 * by hand against 2.63 for the looped form: bench/probe_sync oneshot, session 6). */
template <class T, int OP, class S>
GSHMEMI_DEV void gshmemi_reduce_oneshot_one(const gshmemi_team *t, int team, T *dest, const T *src,
                                            size_t n, const gshmemi_oneshot_plan &P, int c,
                                            int nch, const char *call) {
    typedef gshmemi_acc<T> AC;
    typedef typename AC::t A;
    typedef gshmemi_rop<OP> R;
    constexpr int E = 8 / sizeof(T);
    const int m = t->size, me = t->my_idx;
    const size_t lo = P.lo, off = lo * sizeof(T), bn = (P.hi - lo) * sizeof(T);
    const size_t r = S::rank();
    const bool act = r < gshmemi_ll_pairs(bn);
    const size_t left = bn > 8 * r ? (bn - 8 * r) / sizeof(T) : 0;
    const int ne = left < (size_t)E ? (int)left : E;
    const uint2 mine = act ? gshmemi_ll_pack(src + lo + r * E, ne) : make_uint2(0, 0);
    const uint32_t f = gshmemi_oneshot_begin<S>(t, team, c, nch, P.debug,
                                                gshmemi_sig(100 + GSHMEMI_COLL_REDUCE, sizeof(T), OP, n, 0), call);
    if (act) {
        const uint64_t fl = (uint64_t)f << 32, w0 = fl | mine.x, w1 = fl | mine.y;
#pragma unroll 1   /* compact code: unrolled copies for long teams only lengthen the path */
        for (int jj = 1; jj < m; jj++) {
            int j = me + jj < m ? me + jj : me + jj - m;
            char *to = (jj == 1 ? P.to1 : gshmemi_ll_to(t, j, off)) + gshmemi_ll_parity(t, f) + 16 * r;
            asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(to), "l"(w0), "l"(w1) : "memory");
        }
        A acc[E];
#pragma unroll 1
        for (int j = 0; j < m; j++) {
            uint64_t d = j == me ? ((uint64_t)mine.y << 32 | mine.x)
                                 : gshmemi_ll_pair(gshmemi_ll_area(t, f, j) + 2 * off, r, f, call);
            T x[E];
            memcpy(x, &d, 8);
#pragma unroll
            for (int i = 0; i < E; i++) acc[i] = j == 0 ? AC::in(x[i]) : R::f(acc[i], AC::in(x[i]));
        }
#pragma unroll
        for (int i = 0; i < E; i++)
            if (i < ne) dest[lo + r * E + i] = AC::out(acc[i]);
    }
    S::sync();
}
template <class T, int OP, class S>
GSHMEMI_DEV void gshmemi_reduce_oneshot_body(const gshmemi_team *t, int team, int what, T *dest,
                                             const T *src, size_t n, int c, int nch,
                                             const char *call) {
    gshmemi_reduce_check(t, what, dest, src, n, call);
    const gshmemi_oneshot_plan P = gshmemi_oneshot_plan_of(t, n, 16 / sizeof(T), sizeof(T), c, nch);
    gshmemi_reduce_oneshot_run<T, OP, S>(t, team, what, dest, src, n, P, c, nch, call);
}
template <class T, int OP, class S>
GSHMEMI_COLL_FN void gshmemi_reduce_oneshot(const gshmemi_team *t, int team, int what, T *dest,
                                            const T *src, size_t n, int c, int nch,
                                            const char *call) {
    gshmemi_reduce_oneshot_body<T, OP, S>(t, team, what, dest, src, n, c, nch, call);
}

template <class T, int OP, class S, int U = 1>
GSHMEMI_DEV void gshmemi_reduce_t(const gshmemi_team *t, int team, int what, T *dest,
                                  const T *src, size_t n, int c, int nch, const char *call) {
    if (gshmemi_oneshot(t, n * sizeof(T), nch)) {
        gshmemi_reduce_oneshot<T, OP, S>(t, team, what, dest, src, n, c, nch, call);
        return;
    }
    const int m = t->size, me = t->my_idx;
    gshmemi_reduce_check(t, what, dest, src, n, call);
    unsigned sig = gshmemi_sig(100 + what, sizeof(T), OP, n, 0);
    constexpr size_t G = 16 / sizeof(T);
    gshmemi_arrive<S>(t, team, c, sig, call);
    size_t lo, hi;
    if (what == GSHMEMI_COLL_REDUCESCATTER || what == GSHMEMI_COLL_REDUCE_ALLREAD) {
        gshmemi_slice(n, c, nch, G, &lo, &hi);
        gshmemi_in_peers<T> in{t, what == GSHMEMI_COLL_REDUCESCATTER ? src + (size_t)me * n : src};
        gshmemi_combine<T, OP, GSHMEMI_OUT_OWN, U>(t, in, dest, m, lo, hi, S::rank(), S::size());
    } else if (what == GSHMEMI_COLL_REDUCE_PUSH) {   /* 2 members, dest and src apart */
        const int peer = 1 - me;
        size_t plo, phi;   /* the other member's range, my channel's slice of it */
        gshmemi_slice(n, peer, m, G, &plo, &phi);
        gshmemi_slice(phi - plo, c, nch, G, &lo, &hi);
        gshmemi_move_copy<S>(gshmemi_at(dest + plo + lo, gshmemi_member_off(t, peer)), src + plo + lo,
                             (hi - lo) * sizeof(T));
        S::sync();
        gshmemi_coll_round<S>(t, c, call);   /* its part of my range is in my dest */
        size_t olo, ohi;
        gshmemi_slice(n, me, m, G, &olo, &ohi);
        gshmemi_slice(ohi - olo, c, nch, G, &lo, &hi);
        gshmemi_in_pushed<T> in{src, dest, me};
        gshmemi_combine<T, OP, GSHMEMI_OUT_ALL, U>(t, in, dest, m, olo + lo, olo + hi, S::rank(), S::size());
    } else {
        size_t olo, ohi;  /* my owner range, then my channel's slice of it */
        gshmemi_slice(n, me, m, G, &olo, &ohi);
        gshmemi_slice(ohi - olo, c, nch, G, &lo, &hi);
        lo += olo;
        hi += olo;
        gshmemi_in_peers<T> in{t, src};
        if (what == GSHMEMI_COLL_INSCAN)
            gshmemi_combine<T, OP, GSHMEMI_OUT_SCAN_IN, U>(t, in, dest, m, lo, hi, S::rank(), S::size());
        else if (what == GSHMEMI_COLL_EXSCAN)
            gshmemi_combine<T, OP, GSHMEMI_OUT_SCAN_EX, U>(t, in, dest, m, lo, hi, S::rank(), S::size());
        else
            gshmemi_combine<T, OP, GSHMEMI_OUT_ALL, U>(t, in, dest, m, lo, hi, S::rank(), S::size());
    }
    S::sync();
    gshmemi_coll_round<S>(t, c, call);
}

/* ---- data movers -------------------------------------------------------------------------- */
/* what: GSHMEMI_MOVE_*. n: elements of es bytes per PE (per block for alltoall[s]); root:
 * broadcast's team PE; dst/sst: alltoalls strides in elements. */
/* Entry checks of a mover on this PE: broadcast's root, members reachable, and the buffer
 * extents it touches (dest, source) in the heap (debug). */
GSHMEMI_DEV void gshmemi_move_check(const gshmemi_team *t, int what, const void *dest,
                                    const void *src, size_t nb, int root, const char *call) {
    const int m = t->size;
    if (what == GSHMEMI_MOVE_BROADCAST && (root < 0 || root >= m)) gshmemi_coll_bad_root(call, root, m);
    size_t db = what == GSHMEMI_MOVE_BROADCAST ? nb : what == GSHMEMI_MOVE_COLLECT ? 0 : nb * m;
    size_t sb = what == GSHMEMI_MOVE_ALLTOALL ? nb * m : what == GSHMEMI_MOVE_ALLTOALLS ? 0 : nb;
    gshmemi_coll_check(t, dest, db, src, sb, call);
}
GSHMEMI_DEV unsigned gshmemi_move_sig(int what, size_t n, size_t es, int root, ptrdiff_t dst,
                                      ptrdiff_t sst) {
    return gshmemi_sig(200 + what, (int)es, (int)(dst * 7919 + sst),
                       what == GSHMEMI_MOVE_COLLECT ? 0 : n, root);
}
/* Whether a mover takes the one-shot path (collect and alltoalls never do). */
static __host__ __device__ __forceinline__ bool gshmemi_move_oneshot_ok(const gshmemi_team *t, int what,
                                                                        size_t nb, int nch) {
    return what != GSHMEMI_MOVE_COLLECT && what != GSHMEMI_MOVE_ALLTOALLS && gshmemi_oneshot(t, nb, nch);
}
/* One-shot broadcast, fcollect, alltoall: LL messages (my channel's slice of them) to every
 * member, received straight into dest. `run` and `body` as for reductions. */
template <class S>
GSHMEMI_DEV void gshmemi_move_oneshot_run(const gshmemi_team *t, int team, int what, void *dest,
                                          const void *src, size_t n, size_t es, int root,
                                          const gshmemi_oneshot_plan &P, int c, int nch,
                                          const char *call) {
    const int m = t->size, me = t->my_idx, j1 = P.j1;
    const size_t nb = n * es, lo = P.lo, bn = P.hi - lo;
    char *d = (char *)dest;
    const char *s = (const char *)src;
    const bool bc = what == GSHMEMI_MOVE_BROADCAST, a2a = what == GSHMEMI_MOVE_ALLTOALL;
    const size_t sbn = bc && me != root ? 0 : bn;   /* what I send each member */
    const uint2 first = gshmemi_ll_first((a2a ? s + (size_t)j1 * nb : s) + lo, sbn, S::rank());
    const uint32_t f = gshmemi_oneshot_begin<S>(t, team, c, nch, P.debug,
                                                gshmemi_move_sig(what, n, es, root, 1, 1), call);
    for (int jj = 1; jj < m; jj++) {
        int j = me + jj < m ? me + jj : me + jj - m;
        const char *from = (a2a ? s + (size_t)j * nb : s) + lo;
        char *to = (jj == 1 ? P.to1 : gshmemi_ll_to(t, j, lo)) + gshmemi_ll_parity(t, f);
        gshmemi_ll_send<S>(to, from, sbn, f, jj == 1 ? &first : NULL);
    }
    gshmemi_ll_gather(t, f, what, d, s, nb, lo, bn, root, S::rank(), S::size(), call);
    S::sync();
}
template <class S>
GSHMEMI_DEV void gshmemi_move_oneshot_body(const gshmemi_team *t, int team, int what, void *dest,
                                           const void *src, size_t n, size_t es, int root,
                                           int c, int nch, const char *call) {
    gshmemi_move_check(t, what, dest, src, n * es, root, call);
    const gshmemi_oneshot_plan P = gshmemi_oneshot_plan_of(t, n * es, 16, 1, c, nch);
    gshmemi_move_oneshot_run<S>(t, team, what, dest, src, n, es, root, P, c, nch, call);
}
template <class S>
GSHMEMI_COLL_FN void gshmemi_move_oneshot(const gshmemi_team *t, int team, int what, void *dest,
                                          const void *src, size_t n, size_t es, int root, int c,
                                          int nch, const char *call) {
    gshmemi_move_oneshot_body<S>(t, team, what, dest, src, n, es, root, c, nch, call);
}

template <class S>
GSHMEMI_DEV void gshmemi_move_t(const gshmemi_team *t, int team, int what, void *dest,
                                const void *src, size_t n, size_t es, int root, ptrdiff_t dst,
                                ptrdiff_t sst, int c, int nch, const char *call) {
    if (gshmemi_move_oneshot_ok(t, what, n * es, nch)) {
        gshmemi_move_oneshot<S>(t, team, what, dest, src, n, es, root, c, nch, call);
        return;
    }
    const int m = t->size, me = t->my_idx;
    const size_t nb = n * es;
    char *d = (char *)dest;
    const char *s = (const char *)src;
    gshmemi_move_check(t, what, dest, src, nb, root, call);
    unsigned sig = gshmemi_move_sig(what, n, es, root, dst, sst);
    if (what == GSHMEMI_MOVE_COLLECT && S::rank() == 0)  /* my count, before my arrival flag */
        for (int j = 0; j < m; j++)
            gshmemi_st_relaxed(gshmemi_peer_known(t->vals + me, gshmemi_team_pe(t, j), call),
                               (uint64_t)n);
    gshmemi_arrive<S>(t, team, c, sig, call);
    size_t lo, hi;
    if (what == GSHMEMI_MOVE_ALLTOALLS) {
        gshmemi_slice(n, c, nch, 1, &lo, &hi);
        for (int j = 0; j < m; j++)
            gshmemi_move_strided<S>(gshmemi_at(d + ((size_t)me * n + lo) * dst * es, gshmemi_member_off(t, j)),
                                    s + ((size_t)j * n + lo) * sst * es, dst, sst, hi - lo, es);
    } else if (what == GSHMEMI_MOVE_COLLECT) {
        size_t off = 0;
        for (int j = 0; j < me; j++) off += gshmemi_ld_relaxed(t->vals + j);
        gshmemi_slice(nb, c, nch, 16, &lo, &hi);
        for (int j = 0; j < m; j++) {   /* staggered by channel as below */
            int jj = (me + 1 + j + c) % m;
            gshmemi_move_copy<S>(gshmemi_at(d + off * es + lo, gshmemi_member_off(t, jj)), s + lo, hi - lo);
        }
    } else {
        gshmemi_slice(nb, c, nch, 16, &lo, &hi);
        /* Each channel starts with another member (channel c with the c-th after me), so
         * the copy into my own dest (an HBM copy, fast) overlaps other channels' NVLink
         * copies instead of adding to them, and members do not all hit one member at once. */
        if (what == GSHMEMI_MOVE_BROADCAST) {
            if (me == root)
                for (int j = 0; j < m; j++) {
                    int jj = (me + 1 + j + c) % m;
                    char *to = gshmemi_at(d, gshmemi_member_off(t, jj)) + lo;
                    if (to != s + lo) gshmemi_move_copy<S>(to, s + lo, hi - lo);
                }
        } else {
            for (int j = 0; j < m; j++) {
                int jj = (me + 1 + j + c) % m;
                const char *from = (what == GSHMEMI_MOVE_ALLTOALL ? s + (size_t)jj * nb : s) + lo;
                gshmemi_move_copy<S>(gshmemi_at(d + (size_t)me * nb + lo, gshmemi_member_off(t, jj)), from, hi - lo);
            }
        }
    }
    S::sync();
    gshmemi_coll_round<S>(t, c, call);
}

#if GSHMEM_REMOTE
#include "coll_xnode.h"
#endif

/* Entry points by team handle (the on-stream kernels pass the host's copy of the entry
 * instead: no dependent loads from the team table before the first flag). A team whose
 * members span nodes takes the cross-node algorithms where this unit has device calls to
 * other nodes (GSHMEM_REMOTE=1); elsewhere the entry check stops it with a message. */
template <class T, int OP, class S, int U = 1>
GSHMEMI_DEV void gshmemi_reduce(int team, int what, T *dest, const T *src, size_t n, int c,
                                int nch, const char *call) {
    const gshmemi_team *t = gshmemi_team_member(team, call);
#if GSHMEM_REMOTE
    if (t->remote) return gshmemi_xnode_reduce<T, OP, S>(t, team, what, dest, src, n, call);
#endif
    gshmemi_reduce_t<T, OP, S, U>(t, team, what, dest, src, n, c, nch, call);
}
template <class S>
GSHMEMI_DEV void gshmemi_move(int team, int what, void *dest, const void *src, size_t n,
                              size_t es, int root, ptrdiff_t dst, ptrdiff_t sst, int c, int nch,
                              const char *call) {
    const gshmemi_team *t = gshmemi_team_member(team, call);
#if GSHMEM_REMOTE
    if (t->remote) return gshmemi_xnode_move<S>(t, team, what, dest, src, n, es, root, dst, sst, call);
#endif
    gshmemi_move_t<S>(t, team, what, dest, src, n, es, root, dst, sst, c, nch, call);
}

/* ---- public device names ------------------------------------------------------------------ */
/* The three scopes of every collective: DEF(prefix, suffix, scope). */
/* The name a scope's calls give in messages (the thread-scope functions are reached through
 * the gshmem_ names of gshmem.h). */
#define GSHMEMI_COLL_NAME_thread "gshmem_"
#define GSHMEMI_COLL_NAME_warp "gshmemx_"
#define GSHMEMI_COLL_NAME_block "gshmemx_"
#define GSHMEMI_COLL_SCOPES(DEF, ...)                                                        \
    DEF(gshmemi_dev_, , thread, __VA_ARGS__)                                                 \
    DEF(gshmemx_, _warp, warp, __VA_ARGS__)                                                  \
    DEF(gshmemx_, _block, block, __VA_ARGS__)

/* fcollect, collect and alltoall of one family (typed: T, sizeof(T); mem: void, 1 byte): no
 * root, no strides. NAME is the whole function name, STR the name messages give. */
#define GSHMEMI_DEF_MOVE1(NAME, T, ES, WHAT, scope, STR)                                      \
    GSHMEMI_API int NAME(int team, T *dest, const T *src, size_t n) {                        \
        gshmemi_move<gshmemi_scope_##scope>(team, WHAT, dest, src, n, ES, 0, 1, 1, 0, 1, STR); \
        return 0;                                                                            \
    }
#define GSHMEMI_DEF_MOVE_MEM(prefix, suffix, scope, unused)                                  \
    GSHMEMI_API int prefix##broadcastmem##suffix(int team, void *dest, const void *src,      \
                                                 size_t nbytes, int root) {                  \
        gshmemi_move<gshmemi_scope_##scope>(team, GSHMEMI_MOVE_BROADCAST, dest, src, nbytes, 1, \
                                            root, 1, 1, 0, 1, GSHMEMI_COLL_NAME_##scope "broadcastmem" #suffix); \
        return 0;                                                                            \
    }                                                                                        \
    GSHMEMI_DEF_MOVE1(prefix##fcollectmem##suffix, void, 1, GSHMEMI_MOVE_FCOLLECT, scope,      \
                      GSHMEMI_COLL_NAME_##scope "fcollectmem" #suffix)                       \
    GSHMEMI_DEF_MOVE1(prefix##collectmem##suffix, void, 1, GSHMEMI_MOVE_COLLECT, scope,        \
                      GSHMEMI_COLL_NAME_##scope "collectmem" #suffix)                        \
    GSHMEMI_DEF_MOVE1(prefix##alltoallmem##suffix, void, 1, GSHMEMI_MOVE_ALLTOALL, scope,      \
                      GSHMEMI_COLL_NAME_##scope "alltoallmem" #suffix)                       \
    GSHMEMI_API int prefix##alltoallsmem##suffix(int team, void *dest, const void *src,      \
                                                 ptrdiff_t dst, ptrdiff_t sst, size_t nelems) { \
        gshmemi_move<gshmemi_scope_##scope>(team, GSHMEMI_MOVE_ALLTOALLS, dest, src, nelems, 1, 0, \
                                            dst, sst, 0, 1, GSHMEMI_COLL_NAME_##scope "alltoallsmem" #suffix); \
        return 0;                                                                            \
    }
GSHMEMI_COLL_SCOPES(GSHMEMI_DEF_MOVE_MEM, 0)

#define GSHMEMI_DEF_MOVE_TYPED(prefix, suffix, scope, NAME, T)                               \
    GSHMEMI_API int prefix##NAME##_broadcast##suffix(int team, T *dest, const T *src,        \
                                                     size_t nelems, int root) {              \
        gshmemi_move<gshmemi_scope_##scope>(team, GSHMEMI_MOVE_BROADCAST, dest, src, nelems,   \
                                            sizeof(T), root, 1, 1, 0, 1,                     \
                                            GSHMEMI_COLL_NAME_##scope #NAME "_broadcast" #suffix);             \
        return 0;                                                                            \
    }                                                                                        \
    GSHMEMI_DEF_MOVE1(prefix##NAME##_fcollect##suffix, T, sizeof(T), GSHMEMI_MOVE_FCOLLECT, scope, \
                      GSHMEMI_COLL_NAME_##scope #NAME "_fcollect" #suffix)                   \
    GSHMEMI_DEF_MOVE1(prefix##NAME##_collect##suffix, T, sizeof(T), GSHMEMI_MOVE_COLLECT, scope, \
                      GSHMEMI_COLL_NAME_##scope #NAME "_collect" #suffix)                    \
    GSHMEMI_DEF_MOVE1(prefix##NAME##_alltoall##suffix, T, sizeof(T), GSHMEMI_MOVE_ALLTOALL, scope, \
                      GSHMEMI_COLL_NAME_##scope #NAME "_alltoall" #suffix)                   \
    GSHMEMI_API int prefix##NAME##_alltoalls##suffix(int team, T *dest, const T *src,        \
                                                     ptrdiff_t dst, ptrdiff_t sst,           \
                                                     size_t nelems) {                        \
        gshmemi_move<gshmemi_scope_##scope>(team, GSHMEMI_MOVE_ALLTOALLS, dest, src, nelems,   \
                                            sizeof(T), 0, dst, sst, 0, 1,                    \
                                            GSHMEMI_COLL_NAME_##scope #NAME "_alltoalls" #suffix);             \
        return 0;                                                                            \
    }
#define GSHMEMI_DEF_MOVE_TYPED_ALL(NAME, T) GSHMEMI_COLL_SCOPES(GSHMEMI_DEF_MOVE_TYPED, NAME, T)
GSHMEM_RMA_TYPES(GSHMEMI_DEF_MOVE_TYPED_ALL)

/* One reduction-family function (SUFFIX reduce/reducescatter/inscan/exscan) in one scope;
 * GSHMEMI_RED_BIT/ARITH (types.h) apply it to every operator and collective of a type. */
#define GSHMEMI_DEF_RED_SCOPED(prefix, suffix, scope, SUFFIX, WHAT, OPNAME, OPCODE, NAME, T)  \
    GSHMEMI_API int prefix##NAME##_##OPNAME##_##SUFFIX##suffix(int team, T *dest, const T *src, \
                                                               size_t nelems) {              \
        gshmemi_reduce<T, OPCODE, gshmemi_scope_##scope>(team, WHAT, dest, src, nelems, 0, 1,  \
                                                         GSHMEMI_COLL_NAME_##scope #NAME "_" #OPNAME "_" #SUFFIX #suffix); \
        return 0;                                                                            \
    }
#define GSHMEMI_DEF_RED(SUFFIX, WHAT, OPNAME, OPCODE, NAME, T, CODE)                         \
    GSHMEMI_COLL_SCOPES(GSHMEMI_DEF_RED_SCOPED, SUFFIX, WHAT, OPNAME, OPCODE, NAME, T)
#define GSHMEMI_DEF_RED_BIT(NAME, T) GSHMEMI_RED_BIT(GSHMEMI_DEF_RED, NAME, T)
#define GSHMEMI_DEF_RED_ARITH(NAME, T) GSHMEMI_RED_ARITH(GSHMEMI_DEF_RED, NAME, T, 0)
GSHMEM_REDUCE_BIT_TYPES(GSHMEMI_DEF_RED_BIT)
GSHMEM_REDUCE_ARITH_TYPES(GSHMEMI_DEF_RED_ARITH)
GSHMEM_REDUCE_HALF_TYPES(GSHMEMI_DEF_RED_ARITH)

#endif
