/* Tiny named memory operations with the PTX semantics spelled out. Every ordering the
 * device API promises is built from these; each comment says what it orders. */
#ifndef GSHMEM_DEVICE_PTX_H
#define GSHMEM_DEVICE_PTX_H

#include <stdint.h>

#define GSHMEMI_DEV static __device__ __forceinline__

/* Orders all prior memory operations of this thread before all later ones, at system
 * scope (other GPUs and the CPU); a later strong store makes it a release, an earlier
 * strong load an acquire. This is quiet/fence for load/store peers. */
GSHMEMI_DEV void gshmemi_fence_acq_rel_sys(void) { asm volatile("fence.acq_rel.sys;" ::: "memory"); }

/* Release store: everything this thread did before is visible to a thread that observes
 * the value with an acquire load at system scope. */
GSHMEMI_DEV void gshmemi_st_release_sys(uint64_t *p, uint64_t v) {
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/* Acquire load: later memory operations of this thread see everything that was visible to
 * the writer of the observed value before its release. */
GSHMEMI_DEV uint64_t gshmemi_ld_acquire_sys(const uint64_t *p) {
    uint64_t v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

/* Relaxed (strong, unordered) accesses of 1/2/4/8 bytes: never torn, never cached stale,
 * never elided by the compiler; ordered only by fences. Used by p/g and waits. */
template <int N> struct gshmemi_uint;
template <> struct gshmemi_uint<1> { typedef uint8_t t; };
template <> struct gshmemi_uint<2> { typedef uint16_t t; };
template <> struct gshmemi_uint<4> { typedef uint32_t t; };
template <> struct gshmemi_uint<8> { typedef uint64_t t; };

GSHMEMI_DEV void gshmemi_st_relaxed_raw(uint8_t *p, uint8_t v) {
    asm volatile("st.relaxed.sys.global.u8 [%0], %1;" ::"l"(p), "h"((uint16_t)v) : "memory");
}
GSHMEMI_DEV void gshmemi_st_relaxed_raw(uint16_t *p, uint16_t v) {
    asm volatile("st.relaxed.sys.global.u16 [%0], %1;" ::"l"(p), "h"(v) : "memory");
}
GSHMEMI_DEV void gshmemi_st_relaxed_raw(uint32_t *p, uint32_t v) {
    asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
GSHMEMI_DEV void gshmemi_st_relaxed_raw(uint64_t *p, uint64_t v) {
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
GSHMEMI_DEV uint8_t gshmemi_ld_relaxed_raw(const uint8_t *p) {
    uint16_t v;
    asm volatile("ld.relaxed.sys.global.u8 %0, [%1];" : "=h"(v) : "l"(p) : "memory");
    return (uint8_t)v;
}
GSHMEMI_DEV uint16_t gshmemi_ld_relaxed_raw(const uint16_t *p) {
    uint16_t v;
    asm volatile("ld.relaxed.sys.global.u16 %0, [%1];" : "=h"(v) : "l"(p) : "memory");
    return v;
}
GSHMEMI_DEV uint32_t gshmemi_ld_relaxed_raw(const uint32_t *p) {
    uint32_t v;
    asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
GSHMEMI_DEV uint64_t gshmemi_ld_relaxed_raw(const uint64_t *p) {
    uint64_t v;
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
GSHMEMI_DEV uint8_t gshmemi_ld_acquire_raw(const uint8_t *p) {
    uint16_t v;
    asm volatile("ld.acquire.sys.global.u8 %0, [%1];" : "=h"(v) : "l"(p) : "memory");
    return (uint8_t)v;
}
GSHMEMI_DEV uint16_t gshmemi_ld_acquire_raw(const uint16_t *p) {
    uint16_t v;
    asm volatile("ld.acquire.sys.global.u16 %0, [%1];" : "=h"(v) : "l"(p) : "memory");
    return v;
}
GSHMEMI_DEV uint32_t gshmemi_ld_acquire_raw(const uint32_t *p) {
    uint32_t v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
GSHMEMI_DEV uint64_t gshmemi_ld_acquire_raw(const uint64_t *p) { return gshmemi_ld_acquire_sys(p); }

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
