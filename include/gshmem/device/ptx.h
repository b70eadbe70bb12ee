/* Tiny named memory operations with the PTX semantics spelled out. Every ordering the
 * device API promises is built from these; each comment says what it orders. */
#ifndef GSHMEM_DEVICE_PTX_H
#define GSHMEM_DEVICE_PTX_H

#include <stdint.h>

#define GSHMEMI_DEV static __device__ __forceinline__
/* The typed API families (one definition per type, scope and operation: thousands) are
 * function templates with one defaulted parameter: called exactly like plain functions, but
 * a body (and every template it instantiates) is compiled only in a unit that calls it. As
 * plain inline functions every body was analyzed in every unit that includes gshmem.h
 * (about 8 s of cicc per .cu file on this project's CI machine); the generated code of a
 * call is the same. */
#define GSHMEMI_API template <int gshmemi_lazy_ = 0> static __device__ __forceinline__

/* Orders all prior memory operations of this thread before all later ones, at system
 * scope (other GPUs and the CPU); a later strong store makes it a release, an earlier
 * strong load an acquire. This is quiet/fence for load/store peers. */
GSHMEMI_DEV void gshmemi_fence_acq_rel_sys(void) { asm volatile("fence.acq_rel.sys;" ::: "memory"); }
/* The same at device scope: enough between PEs that all run on one GPU, whose L2 every SM of
 * every process reaches (a barrier round 0.63 against 0.93 us on an H100 under MPS,
 * bench/probe_sync). */
GSHMEMI_DEV void gshmemi_fence_acq_rel_gpu(void) { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

/* Relaxed (strong, unordered) accesses of 1/2/4/8 bytes: never torn, never cached stale,
 * never elided by the compiler; ordered only by fences. Used by p/g and waits. */
template <int N> struct gshmemi_uint;
template <> struct gshmemi_uint<1> { typedef uint8_t t; };
template <> struct gshmemi_uint<2> { typedef uint16_t t; };
template <> struct gshmemi_uint<4> { typedef uint32_t t; };
template <> struct gshmemi_uint<8> { typedef uint64_t t; };

/* X(bits, C type, register type, asm constraint): 8-bit values travel in 16-bit registers */
#define GSHMEMI_PTX_SIZES(X)                                                                 \
    X(8, uint8_t, uint16_t, "h") X(16, uint16_t, uint16_t, "h") X(32, uint32_t, uint32_t, "r") \
    X(64, uint64_t, uint64_t, "l")
#define GSHMEMI_DEF_RAW(BITS, T, R, C)                                                       \
    GSHMEMI_DEV void gshmemi_st_relaxed_raw(T *p, T v) {                                     \
        asm volatile("st.relaxed.sys.global.u" #BITS " [%0], %1;" ::"l"(p), C((R)v) : "memory"); \
    }                                                                                        \
    GSHMEMI_DEV T gshmemi_ld_relaxed_raw(const T *p) {                                       \
        R v;                                                                                 \
        asm volatile("ld.relaxed.sys.global.u" #BITS " %0, [%1];" : "=" C(v) : "l"(p) : "memory"); \
        return (T)v;                                                                         \
    }                                                                                        \
    GSHMEMI_DEV T gshmemi_ld_acquire_raw(const T *p) {                                       \
        R v;                                                                                 \
        asm volatile("ld.acquire.sys.global.u" #BITS " %0, [%1];" : "=" C(v) : "l"(p) : "memory"); \
        return (T)v;                                                                         \
    }
GSHMEMI_PTX_SIZES(GSHMEMI_DEF_RAW)

template <typename T> GSHMEMI_DEV void gshmemi_st_relaxed(T *p, T v) {
    typedef typename gshmemi_uint<sizeof(T)>::t U;
    U u;
    memcpy(&u, &v, sizeof u);
    gshmemi_st_relaxed_raw((U *)p, u);
}
template <typename T> GSHMEMI_DEV T gshmemi_ld_relaxed(const T *p) {
    typedef typename gshmemi_uint<sizeof(T)>::t U;
    U u = gshmemi_ld_relaxed_raw((const U *)p);
    T v;
    memcpy(&v, &u, sizeof v);
    return v;
}
template <typename T> GSHMEMI_DEV T gshmemi_ld_acquire(const T *p) {
    typedef typename gshmemi_uint<sizeof(T)>::t U;
    U u = gshmemi_ld_acquire_raw((const U *)p);
    T v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* Nanoseconds from the GPU's global timer: coarse (~1 us ticks on some parts), enough
 * for wait deadlines measured in seconds. */
GSHMEMI_DEV uint64_t gshmemi_globaltimer(void) {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Warp-uniform loops. A loop whose exit differs between the threads of a warp, or whose body
 * branches differently for them, reached through a branch the warp may split on (the remote
 * branch of a device call), makes the compiler guard the caller's own loops with reconvergence
 * barriers and yields (BSSY/BSYNC/YIELD): measured 0.07 us of a 0.77 us NVLink p ping-pong
 * (bench/probes/route_cost.cu). A loop that exits on a vote is uniform over the threads running it,
 * and a body without branches (its per-thread work predicated: the _if operations below) needs
 * no reconvergence. So the code behind a remote branch loops only this way: `m` is the set of
 * threads that entered together (gshmemi_lanes), and the loop runs while any of them needs it
 * (docs/design.md, "Device routing"). */
GSHMEMI_DEV unsigned gshmemi_lanes(void) { return __activemask(); }
#define GSHMEMI_WHILE_ANY(m, cond) while (__any_sync((m), (cond)))
/* A condition made warp-uniform (the same for every thread of m by construction): branches on
 * it need no reconvergence either. The threads of m need not have come from the same call or
 * the same turn of a loop (threads that reached a function at different times may run
 * together), so the body of such a branch acts on each thread's own condition and touches
 * only what that thread's own values say is there. */
GSHMEMI_DEV bool gshmemi_uniform(unsigned m, bool c) { return __any_sync(m, c); }
/* Whether c holds in every thread of m (a uniform value too). */
GSHMEMI_DEV bool gshmemi_all(unsigned m, bool c) { return __all_sync(m, c); }
/* The largest of the 64-bit values of the threads of m (two 32-bit reductions). */
GSHMEMI_DEV uint64_t gshmemi_max_of(unsigned m, uint64_t v) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    const unsigned hi = __reduce_max_sync(m, (unsigned)(v >> 32));
    const unsigned lo = __reduce_max_sync(m, (unsigned)(v >> 32) == hi ? (unsigned)v : 0u);
    return ((uint64_t)hi << 32) | lo;
#else   /* no redux.sync before sm_80: every lane of m in turn (m is the same in all of them) */
    uint64_t r = v;
    for (unsigned b = m; b; b &= b - 1) {
        const uint64_t x = __shfl_sync(m, v, __ffs(b) - 1);
        r = x > r ? x : r;
    }
    return r;
#endif
}
/* The lowest thread of m. */
GSHMEMI_DEV bool gshmemi_is_first(unsigned m) {
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    return (int)lane == __ffs(m) - 1;
}

/* Predicated operations: performed by the threads where p holds, without a branch. */
GSHMEMI_DEV uint64_t gshmemi_ld_acquire_if(bool p, const uint64_t *a, uint64_t otherwise) {
    uint64_t v = otherwise;
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %2, 0;\n\t@q ld.acquire.sys.global.u64 %0, [%1];\n\t}"
                 : "+l"(v) : "l"(a), "r"((unsigned)p) : "memory");
    return v;
}
GSHMEMI_DEV uint32_t gshmemi_ld_acquire32_if(bool p, const uint32_t *a, uint32_t otherwise) {
    uint32_t v = otherwise;
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %2, 0;\n\t@q ld.acquire.sys.global.u32 %0, [%1];\n\t}"
                 : "+r"(v) : "l"(a), "r"((unsigned)p) : "memory");
    return v;
}
GSHMEMI_DEV uint64_t gshmemi_ld_relaxed_gpu_if(bool p, const uint64_t *a, uint64_t otherwise) {
    uint64_t v = otherwise;
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %2, 0;\n\t@q ld.relaxed.gpu.global.u64 %0, [%1];\n\t}"
                 : "+l"(v) : "l"(a), "r"((unsigned)p) : "memory");
    return v;
}
/* compare-and-swap at device scope; returns the old value, or ~cmp where p is false */
GSHMEMI_DEV uint64_t gshmemi_cas_if(bool p, uint64_t *a, uint64_t cmp, uint64_t val) {
    uint64_t v = ~cmp;
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %4, 0;\n\t@q atom.relaxed.gpu.global.cas.b64 %0, [%1], %2, %3;\n\t}"
                 : "+l"(v) : "l"(a), "l"(cmp), "l"(val), "r"((unsigned)p) : "memory");
    return v;
}
/* raises *a to v with release at device scope */
GSHMEMI_DEV void gshmemi_red_max_release_if(bool p, uint64_t *a, uint64_t v) {
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %2, 0;\n\t@q red.release.gpu.global.max.u64 [%0], %1;\n\t}"
                 ::"l"(a), "l"(v), "r"((unsigned)p) : "memory");
}
GSHMEMI_DEV void gshmemi_red_add_sys_if(bool p, uint64_t *a, uint64_t v) {
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %2, 0;\n\t@q red.relaxed.sys.global.add.u64 [%0], %1;\n\t}"
                 ::"l"(a), "l"(v), "r"((unsigned)p) : "memory");
}
GSHMEMI_DEV void gshmemi_nanosleep_if(bool p, unsigned ns) {
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %1, 0;\n\t@q nanosleep.u32 %0;\n\t}" ::"r"(ns), "r"((unsigned)p));
}
#endif
