/* The LL (low-latency) protocol of the one-shot path: 8-byte words of 4 data bytes and a
 * 4-byte flag, stored and polled with single-copy-atomic accesses. */
#ifndef GSHMEM_DEVICE_COLL_LL_H
#define GSHMEM_DEVICE_COLL_LL_H

#include "rounds.h"

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
 * their register limit.) */
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

#endif
