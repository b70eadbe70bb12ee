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

#endif
