/* Device atomics: every OpenSHMEM AMO on every AMO type, as one system-scope PTX atomic on
 * the target's mapping. All atomics on a location go through one agent — the L2 of the GPU
 * that owns it, reached over NVLink from peers and directly from the owner — so they are
 * atomic with respect to each other from every PE, the local one included. Atomics are
 * relaxed: like puts, they are ordered with other operations only by fence/quiet. */
#ifndef GSHMEM_DEVICE_AMO_H
#define GSHMEM_DEVICE_AMO_H

#include "state.h"
#include "remote.h"

/* Raw 32/64-bit atomics, X(bits, type, constraint). */
#define GSHMEMI_AMO_SIZES(X) X(32, uint32_t, "r") X(64, uint64_t, "l")
/* The two-operand PTX operations, X(GSHMEMI_AMO_* code, PTX operation and type class, ...);
 * XOR is the switches' default. */
#define GSHMEMI_AMO_BINARY_OPS(X, ...)                                                       \
    X(GSHMEMI_AMO_ADD, "add.u", __VA_ARGS__) X(GSHMEMI_AMO_AND, "and.b", __VA_ARGS__)        \
    X(GSHMEMI_AMO_OR, "or.b", __VA_ARGS__)
#define GSHMEMI_ATOM_CASE(CODE, OPS, BITS, C)                                                \
    case CODE:                                                                               \
        asm volatile("atom.relaxed.sys.global." OPS BITS " %0, [%1], %2;"                    \
                     : "=" C(r) : "l"(p), C(v) : "memory");                                  \
        break;
#define GSHMEMI_RED_CASE(CODE, OPS, BITS, C)                                                 \
    case CODE:                                                                               \
        asm volatile("red.relaxed.sys.global." OPS BITS " [%0], %1;" ::"l"(p), C(v) : "memory"); \
        break;
#define GSHMEMI_DEF_ATOM_RAW(BITS, U, C)                                                     \
    GSHMEMI_DEV U gshmemi_atom_raw(int op, U *p, U v, U cond) {                              \
        U r;                                                                                 \
        switch (op) {                                                                        \
            GSHMEMI_ATOM_CASE(GSHMEMI_AMO_SWAP, "exch.b", #BITS, C)                          \
        case GSHMEMI_AMO_CSWAP:                                                              \
            asm volatile("atom.relaxed.sys.global.cas.b" #BITS " %0, [%1], %2, %3;"          \
                         : "=" C(r) : "l"(p), C(cond), C(v) : "memory");                     \
            break;                                                                           \
            GSHMEMI_AMO_BINARY_OPS(GSHMEMI_ATOM_CASE, #BITS, C)                              \
            default : GSHMEMI_ATOM_CASE(GSHMEMI_AMO_XOR, "xor.b", #BITS, C)                  \
        }                                                                                    \
        return r;                                                                            \
    }                                                                                        \
    /* non-fetching add/and/or/xor: a reduction, no round trip to wait for */                \
    GSHMEMI_DEV void gshmemi_red_raw(int op, U *p, U v) {                                    \
        switch (op) {                                                                        \
            GSHMEMI_AMO_BINARY_OPS(GSHMEMI_RED_CASE, #BITS, C)                               \
            default : GSHMEMI_RED_CASE(GSHMEMI_AMO_XOR, "xor.b", #BITS, C)                   \
        }                                                                                    \
    }
GSHMEMI_AMO_SIZES(GSHMEMI_DEF_ATOM_RAW)

/* One atomic (GSHMEMI_AMO_*) on this GPU's mapping p, as every local atomic is applied (a
 * device call's load/store branch, a host call's kernel, the proxy's batches): FETCH is a load,
 * SET a store. */
template <typename U> GSHMEMI_DEV U gshmemi_apply_amo(int op, U *p, U value, U cond) {
    U r = 0;
    if (op == GSHMEMI_AMO_FETCH) r = gshmemi_ld_relaxed(p);
    else if (op == GSHMEMI_AMO_SET) gshmemi_st_relaxed(p, value);
    else r = gshmemi_atom_raw(op, p, value, cond);
    return r;
}

/* One atomic of any AMO type T (4 or 8 bytes) on `dest` at `pe`: the value travels as its
 * bit pattern, so float/double swap/fetch/set need no special case. op is a compile-time
 * constant at every call site, so the switches fold away. */
template <typename T>
GSHMEMI_DEV T gshmemi_amo(int op, T *dest, T value, T cond, int pe, const char *call) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "AMO types are 4 or 8 bytes");
    typedef typename gshmemi_uint<sizeof(T)>::t U;
    int slot = gshmemi_route(dest, pe, sizeof(T), call);
    U *p = (U *)gshmemi_at(dest, slot);
    U v, c, r;
    memcpy(&v, &value, sizeof v);
    memcpy(&c, &cond, sizeof c);
    if (GSHMEMI_ROUTED && slot < 0) r = (U)gshmemi_remote_amo(op, op != GSHMEMI_AMO_SET, dest, (int)sizeof(T), (uint64_t)v,
                                      (uint64_t)c, pe, call);
    else r = gshmemi_apply_amo(op, p, v, c);
    T out;
    memcpy(&out, &r, sizeof out);
    return out;
}

template <typename T>
GSHMEMI_DEV void gshmemi_amo_nofetch(int op, T *dest, T value, int pe, const char *call) {
    typedef typename gshmemi_uint<sizeof(T)>::t U;
    int slot = gshmemi_route(dest, pe, sizeof(T), call);
    U *p = (U *)gshmemi_at(dest, slot);
    U v;
    memcpy(&v, &value, sizeof v);
    if (GSHMEMI_ROUTED && slot < 0) {
        gshmemi_remote_amo(op, false, dest, (int)sizeof(T), (uint64_t)v, 0, pe, call);
        return;
    }
    gshmemi_red_raw(op, p, v);
}

/* Extended AMO types: fetch, set, swap (+ _nbi). */
#define GSHMEMI_DEF_AMO_EXT(NAME, T)                                                         \
    GSHMEMI_API T gshmemi_dev_##NAME##_atomic_fetch(const T *source, int pe) {               \
        return gshmemi_amo(GSHMEMI_AMO_FETCH, (T *)source, (T)0, (T)0, pe,                   \
                           "gshmem_" #NAME "_atomic_fetch");                                 \
    }                                                                                        \
    GSHMEMI_API void gshmemi_dev_##NAME##_atomic_set(T *dest, T value, int pe) {             \
        gshmemi_amo(GSHMEMI_AMO_SET, dest, value, (T)0, pe, "gshmem_" #NAME "_atomic_set");  \
    }                                                                                        \
    GSHMEMI_API T gshmemi_dev_##NAME##_atomic_swap(T *dest, T value, int pe) {               \
        return gshmemi_amo(GSHMEMI_AMO_SWAP, dest, value, (T)0, pe,                          \
                           "gshmem_" #NAME "_atomic_swap");                                  \
    }                                                                                        \
    GSHMEMI_API void gshmemi_dev_##NAME##_atomic_fetch_nbi(T *fetch, const T *source, int pe) { \
        *fetch = gshmemi_dev_##NAME##_atomic_fetch(source, pe);                              \
    }                                                                                        \
    GSHMEMI_API void gshmemi_dev_##NAME##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe) { \
        *fetch = gshmemi_dev_##NAME##_atomic_swap(dest, value, pe);                          \
    }
GSHMEM_AMO_EXT_TYPES(GSHMEMI_DEF_AMO_EXT)

/* Standard AMO types: compare_swap, fetch_inc, inc, fetch_add, add (+ _nbi). */
#define GSHMEMI_DEF_AMO_STD(NAME, T)                                                         \
    GSHMEMI_API T gshmemi_dev_##NAME##_atomic_compare_swap(T *dest, T cond, T value, int pe) { \
        return gshmemi_amo(GSHMEMI_AMO_CSWAP, dest, value, cond, pe,                         \
                           "gshmem_" #NAME "_atomic_compare_swap");                          \
    }                                                                                        \
    GSHMEMI_API T gshmemi_dev_##NAME##_atomic_fetch_add(T *dest, T value, int pe) {          \
        return gshmemi_amo(GSHMEMI_AMO_ADD, dest, value, (T)0, pe,                           \
                           "gshmem_" #NAME "_atomic_fetch_add");                             \
    }                                                                                        \
    GSHMEMI_API T gshmemi_dev_##NAME##_atomic_fetch_inc(T *dest, int pe) {                   \
        return gshmemi_amo(GSHMEMI_AMO_ADD, dest, (T)1, (T)0, pe,                            \
                           "gshmem_" #NAME "_atomic_fetch_inc");                             \
    }                                                                                        \
    GSHMEMI_API void gshmemi_dev_##NAME##_atomic_add(T *dest, T value, int pe) {             \
        gshmemi_amo_nofetch(GSHMEMI_AMO_ADD, dest, value, pe, "gshmem_" #NAME "_atomic_add"); \
    }                                                                                        \
    GSHMEMI_API void gshmemi_dev_##NAME##_atomic_inc(T *dest, int pe) {                      \
        gshmemi_amo_nofetch(GSHMEMI_AMO_ADD, dest, (T)1, pe, "gshmem_" #NAME "_atomic_inc"); \
    }                                                                                        \
    GSHMEMI_API void gshmemi_dev_##NAME##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, \
                                                                  T value, int pe) {         \
        *fetch = gshmemi_dev_##NAME##_atomic_compare_swap(dest, cond, value, pe);            \
    }                                                                                        \
    GSHMEMI_API void gshmemi_dev_##NAME##_atomic_fetch_add_nbi(T *fetch, T *dest, T value,   \
                                                               int pe) {                     \
        *fetch = gshmemi_dev_##NAME##_atomic_fetch_add(dest, value, pe);                     \
    }                                                                                        \
    GSHMEMI_API void gshmemi_dev_##NAME##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe) {  \
        *fetch = gshmemi_dev_##NAME##_atomic_fetch_inc(dest, pe);                            \
    }
GSHMEM_AMO_STD_TYPES(GSHMEMI_DEF_AMO_STD)

/* Bitwise AMO types: fetch_and/and, fetch_or/or, fetch_xor/xor (+ _nbi). */
#define GSHMEMI_DEF_AMO_BIT_OP(NAME, T, op, OPC)                                            \
    GSHMEMI_API T gshmemi_dev_##NAME##_atomic_fetch_##op(T *dest, T value, int pe) {         \
        return gshmemi_amo(OPC, dest, value, (T)0, pe, "gshmem_" #NAME "_atomic_fetch_" #op); \
    }                                                                                        \
    GSHMEMI_API void gshmemi_dev_##NAME##_atomic_##op(T *dest, T value, int pe) {            \
        gshmemi_amo_nofetch(OPC, dest, value, pe, "gshmem_" #NAME "_atomic_" #op);           \
    }                                                                                        \
    GSHMEMI_API void gshmemi_dev_##NAME##_atomic_fetch_##op##_nbi(T *fetch, T *dest, T value, \
                                                                  int pe) {                  \
        *fetch = gshmemi_dev_##NAME##_atomic_fetch_##op(dest, value, pe);                    \
    }
#define GSHMEMI_DEF_AMO_BIT(NAME, T)                                                         \
    GSHMEMI_DEF_AMO_BIT_OP(NAME, T, and, GSHMEMI_AMO_AND)                                    \
    GSHMEMI_DEF_AMO_BIT_OP(NAME, T, or, GSHMEMI_AMO_OR)                                      \
    GSHMEMI_DEF_AMO_BIT_OP(NAME, T, xor, GSHMEMI_AMO_XOR)
GSHMEM_AMO_BIT_TYPES(GSHMEMI_DEF_AMO_BIT)

#endif
