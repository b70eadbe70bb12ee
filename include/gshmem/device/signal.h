/* Signals: put-with-signal in every scope (mem, typed, sized; blocking and _nbi), signal_op,
 * signal_fetch and signal_wait_until. The group copies the data, gathers (so every thread's
 * stores precede in causality order), and one thread updates the signal with a system-scope
 * release (st.release / red.release): whoever observes the signal with an acquire also
 * observes the whole group's data. One fence per call, not one per thread. */
#ifndef GSHMEM_DEVICE_SIGNAL_H
#define GSHMEM_DEVICE_SIGNAL_H

#include "state.h"
#include "copy.h"
#include "sync.h"

/* Release-update of a signal word at its mapping: SET is a release store, ADD a release
 * reduction. Everything this thread (and, by cumulativity, its group before the gathering
 * barrier) wrote earlier is visible to whoever acquires the new value. */
GSHMEMI_DEV void gshmemi_signal_release(uint64_t *p, uint64_t v, int op) {
    if (op == GSHMEM_SIGNAL_SET)
        asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
    else
        asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
/* Same without ordering: gshmemx_signal_op is an atomic, ordered only by fence/quiet. */
GSHMEMI_DEV void gshmemi_signal_relaxed(uint64_t *p, uint64_t v, int op) {
    if (op == GSHMEM_SIGNAL_SET)
        asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
    else
        asm volatile("red.relaxed.sys.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

static __device__ __noinline__ void gshmemi_bad_sig_op(const char *call, int op) {
    GSHMEMI_DEVICE_FAIL("%s: sig_op %d is not GSHMEM_SIGNAL_SET (0) or GSHMEM_SIGNAL_ADD (1)",
                        call, op);
}

template <class S, bool BLOCKING>
GSHMEMI_DEV void gshmemi_put_signal(void *dest, const void *src, size_t n, uint64_t *sig_addr,
                                    uint64_t signal, int sig_op, int pe, const char *call) {
    int slot = gshmemi_route(dest, pe, n, call);
    (void)gshmemi_route(sig_addr, pe, sizeof(uint64_t), call);
    void *d = gshmemi_at(dest, slot);
    uint64_t *sp = gshmemi_at(sig_addr, slot);
    if ((unsigned)sig_op > GSHMEM_SIGNAL_ADD) gshmemi_bad_sig_op(call, sig_op);
    if (GSHMEMI_ROUTED && slot < 0)
        return gshmemi_remote_put_signal<S, BLOCKING>(dest, src, n, sig_addr, signal, sig_op, pe,
                                                      call);
    gshmemi_copy_group<false>(d, src, n, S::rank(), S::size());
    S::sync();
    if (S::rank() == 0) gshmemi_signal_release(sp, signal, sig_op);
}

/* putmem_signal in every scope (for load/store peers the blocking and _nbi forms are the
 * same work: the group barrier before the signal already makes the source reusable; to a
 * remote PE the blocking form waits until the proxy has completed the transfer). */
#define GSHMEMI_DEF_PUTMEM_SIGNAL(prefix, suffix, scope, blocking, unused)                   \
    GSHMEMI_API void prefix##putmem_signal##suffix(void *dest, const void *src, size_t nbytes, \
                                                   uint64_t *sig_addr, uint64_t signal,      \
                                                   int sig_op, int pe) {                     \
        gshmemi_put_signal<gshmemi_scope_##scope, blocking>(dest, src, nbytes, sig_addr, signal, \
                                                            sig_op, \
                                                  pe, #prefix "putmem_signal" #suffix);      \
    }
GSHMEMI_FOR_SCOPES(GSHMEMI_DEF_PUTMEM_SIGNAL, 0)

#define GSHMEMI_DEF_PUT_SIGNAL_TYPED(prefix, suffix, scope, blocking, NAME, T)               \
    GSHMEMI_API void prefix##NAME##_put_signal##suffix(T *dest, const T *src, size_t nelems, \
                                                       uint64_t *sig_addr, uint64_t signal,  \
                                                       int sig_op, int pe) {                 \
        gshmemi_put_signal<gshmemi_scope_##scope, blocking>(dest, src, nelems * sizeof(T), sig_addr, \
                                                  signal, sig_op, pe,                        \
                                                  #prefix #NAME "_put_signal" #suffix);      \
    }
#define GSHMEMI_DEF_PUT_SIGNAL_T(NAME, T) GSHMEMI_FOR_SCOPES(GSHMEMI_DEF_PUT_SIGNAL_TYPED, NAME, T)
GSHMEM_RMA_TYPES(GSHMEMI_DEF_PUT_SIGNAL_T)

#define GSHMEMI_DEF_PUT_SIGNAL_SIZED(prefix, suffix, scope, blocking, BITS)                  \
    GSHMEMI_API void prefix##put##BITS##_signal##suffix(void *dest, const void *src,         \
                                                        size_t nelems, uint64_t *sig_addr,   \
                                                        uint64_t signal, int sig_op, int pe) { \
        gshmemi_put_signal<gshmemi_scope_##scope, blocking>(dest, src, nelems * (BITS / 8), sig_addr, \
                                                  signal, sig_op, pe,                        \
                                                  #prefix "put" #BITS "_signal" #suffix);    \
    }
#define GSHMEMI_DEF_PUT_SIGNAL_S(BITS) GSHMEMI_FOR_SCOPES(GSHMEMI_DEF_PUT_SIGNAL_SIZED, BITS)
GSHMEM_SIZED_BITS(GSHMEMI_DEF_PUT_SIGNAL_S)

GSHMEMI_DEV void gshmemi_dev_signal_op(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) {
    int slot = gshmemi_route(sig_addr, pe, sizeof(uint64_t), "gshmemx_signal_op");
    uint64_t *sp = gshmemi_at(sig_addr, slot);
    if ((unsigned)sig_op > GSHMEM_SIGNAL_ADD) gshmemi_bad_sig_op("gshmemx_signal_op", sig_op);
    if (GSHMEMI_ROUTED && slot < 0) return gshmemi_remote_signal(sig_addr, signal, sig_op, pe, "gshmemx_signal_op");
    gshmemi_signal_relaxed(sp, signal, sig_op);
}

GSHMEMI_DEV uint64_t gshmemi_dev_signal_fetch(const uint64_t *sig_addr) {
    const uint64_t *p = gshmemi_peer(sig_addr, gshmemi_dstate.mype, sizeof(uint64_t),
                                     "gshmem_signal_fetch");
    return gshmemi_ld_acquire(p);
}

GSHMEMI_DEV uint64_t gshmemi_dev_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t value) {
    return gshmemi_wait((const uint64_t *)sig_addr, cmp, value, "gshmem_signal_wait_until");
}

#endif
