/* mlx5 send work requests (WQEs) for GPU-initiated RDMA: one builder per operation gshmem posts
 * to a NIC queue pair, each writing a whole WQE, byte for byte as the NIC reads it. Plain C,
 * C++ and CUDA (the same functions on host and device); no rdma-core header is needed, the
 * layouts below are the mlx5 ones. tests/unit/test_nic_wqe.c proves the bytes equal rdma-core's
 * (mlx5dv.h), tests/gpu/test_nic_wqe.cu that the GPU builds the same; docs/ibgda.md explains.
 *
 * A WQE is 16-byte units ("ds", 1 to 5 here) in basic blocks ("BBs") of 64 bytes, the send queue's
 * slots. Every builder writes exactly ds * 16 bytes (padding zeroed, nothing past the WQE) and
 * returns its BBs: 1, or 2 for the 8-byte masked compare-swap forms (swap, set, and, or of 8
 * bytes), whose last 16 bytes go to the next slot `wqe_next` (the ring's first slot when `wqe`
 * is its last). Slots are 64-byte aligned. Builders are pure: they only store; the poster
 * orders the stores before the doorbell record and the doorbell (gshmem/device/chan_nic.h).
 *
 * Arguments every builder takes: idx, the WQE's 16-bit index (the BB counter, wrapping);
 * qpn, the QP number (24 bits); flags, the control byte fm_ce_se (GSHMEMI_WQE_FENCE, _CQ_UPDATE,
 * ...). Addresses and keys are host values (the builder converts them to big-endian): raddr
 * and rkey the remote side; laddr and lkey the local buffer a put reads, a get fills, or where
 * an atomic's old value lands (every mlx5 atomic fetches: a non-fetching one names a sink).
 * Atomics take size 4 or 8 (value and compare: the low 4 bytes when 4); the target is aligned
 * to its size. */
#ifndef GSHMEM_NIC_WQE_H
#define GSHMEM_NIC_WQE_H

#include <stdint.h>

#include "gshmem/types.h"   /* GSHMEMI_AMO_* (gshmemi_wqe_amo) */

#ifdef __CUDACC__
#define GSHMEMI_WQE_FN static __host__ __device__ __forceinline__
#else
#define GSHMEMI_WQE_FN static inline
#endif

/* ---- constants (values of the mlx5 PRM, as rdma-core's mlx5dv.h names them) ---- */
#define GSHMEMI_MLX5_OPCODE_NOP 0x00
#define GSHMEMI_MLX5_OPCODE_RDMA_WRITE 0x08
#define GSHMEMI_MLX5_OPCODE_RDMA_READ 0x10
#define GSHMEMI_MLX5_OPCODE_ATOMIC_CS 0x11
#define GSHMEMI_MLX5_OPCODE_ATOMIC_FA 0x12
#define GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS 0x14
#define GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_FA 0x15
/* opmod of the masked ("extended") atomics: 0x08 | (log2(size) - 2). mlx5dv.h has no name
 * for it; UCX and NVSHMEM write these values. */
#define GSHMEMI_MLX5_OPMOD_EXT_ATOMIC_4 0x08
#define GSHMEMI_MLX5_OPMOD_EXT_ATOMIC_8 0x09
#define GSHMEMI_MLX5_INLINE_SEG 0x80000000u

/* The flags byte (ctrl fm_ce_se): fence mode in bits 7..5 (one value), completion mode in
 * bits 3..2, solicited event in bit 1. */
#define GSHMEMI_WQE_SOLICITED (1u << 1)
#define GSHMEMI_WQE_CQ_UPDATE (2u << 2)            /* a completion for this WQE */
#define GSHMEMI_WQE_SMALL_FENCE (1u << 5)          /* initiator small fence */
#define GSHMEMI_WQE_FENCE (4u << 5)                /* after every earlier RDMA read / atomic */

#define GSHMEMI_WQE_BB 64                          /* bytes of a basic block (a slot) */
#define GSHMEMI_WQE_INLINE_MAX 12                  /* inline bytes of a one-BB put (DC's address
                                                      vector would take the other 16) */

/* ---- segment layouts: every multi-byte field holds its value big-endian ---- */
typedef struct gshmemi_mlx5_ctrl_seg {
    uint32_t opmod_idx_opcode;   /* opmod << 24 | idx << 8 | opcode */
    uint32_t qpn_ds;             /* qpn << 8 | ds (16-byte units of the whole WQE) */
    uint8_t signature;           /* 0 */
    uint8_t dci_stream_channel_id[2];   /* 0 */
    uint8_t fm_ce_se;            /* flags */
    uint32_t imm;                /* 0 */
} gshmemi_mlx5_ctrl_seg;
typedef struct gshmemi_mlx5_raddr_seg {
    uint64_t raddr;
    uint32_t rkey;
    uint32_t reserved;
} gshmemi_mlx5_raddr_seg;
typedef struct gshmemi_mlx5_data_seg {
    uint32_t byte_count;
    uint32_t lkey;
    uint64_t addr;
} gshmemi_mlx5_data_seg;
typedef struct gshmemi_mlx5_inline_seg {
    uint32_t byte_count;         /* len | GSHMEMI_MLX5_INLINE_SEG; the bytes follow */
} gshmemi_mlx5_inline_seg;
typedef struct gshmemi_mlx5_atomic_seg {          /* ATOMIC_CS / ATOMIC_FA, 8 bytes */
    uint64_t swap_add;
    uint64_t compare;
} gshmemi_mlx5_atomic_seg;
typedef struct gshmemi_mlx5_masked_fa32_seg {     /* MASKED_FA, opmod 0x08 */
    uint32_t add;
    uint32_t field_boundary;     /* a set bit ends a field: no carry out of it */
    uint64_t reserved;
} gshmemi_mlx5_masked_fa32_seg;
typedef struct gshmemi_mlx5_masked_fa64_seg {     /* MASKED_FA, opmod 0x09 */
    uint64_t add;
    uint64_t field_boundary;
} gshmemi_mlx5_masked_fa64_seg;
typedef struct gshmemi_mlx5_masked_cs32_seg {     /* MASKED_CS, opmod 0x08 */
    uint32_t swap;
    uint32_t compare;
    uint32_t swap_mask;          /* new = (old & ~swap_mask) | (swap & swap_mask) ... */
    uint32_t compare_mask;       /* ... when (old ^ compare) & compare_mask == 0 */
} gshmemi_mlx5_masked_cs32_seg;
typedef struct gshmemi_mlx5_masked_cs64_seg {     /* MASKED_CS, opmod 0x09: two segments */
    uint64_t swap;               /* first: {swap, compare} */
    uint64_t compare;            /* second: {swap_mask, compare_mask} */
} gshmemi_mlx5_masked_cs64_seg;

/* ---- WQE layouts (ds = size / 16) ---- */
typedef struct gshmemi_mlx5_wqe_rdma {          /* put, get: 48 bytes, ds 3, 1 BB */
    gshmemi_mlx5_ctrl_seg ctrl;
    gshmemi_mlx5_raddr_seg raddr;
    gshmemi_mlx5_data_seg data;
} gshmemi_mlx5_wqe_rdma;
typedef struct gshmemi_mlx5_wqe_inline {        /* put_inline: 48 bytes, ds 3, 1 BB */
    gshmemi_mlx5_ctrl_seg ctrl;
    gshmemi_mlx5_raddr_seg raddr;
    gshmemi_mlx5_inline_seg inl;
    uint8_t bytes[GSHMEMI_WQE_INLINE_MAX];
} gshmemi_mlx5_wqe_inline;
typedef struct gshmemi_mlx5_wqe_atomic {        /* one atomic segment: 64 bytes, ds 4, 1 BB */
    gshmemi_mlx5_ctrl_seg ctrl;
    gshmemi_mlx5_raddr_seg raddr;
    uint8_t op[16];                        /* one of the atomic segments above */
    gshmemi_mlx5_data_seg data;
} gshmemi_mlx5_wqe_atomic;
typedef struct gshmemi_mlx5_wqe_masked_cs64 {   /* 80 bytes, ds 5, 2 BBs: these 64, then the data */
    gshmemi_mlx5_ctrl_seg ctrl;            /* segment in the next slot */
    gshmemi_mlx5_raddr_seg raddr;
    gshmemi_mlx5_masked_cs64_seg values;
    gshmemi_mlx5_masked_cs64_seg masks;
} gshmemi_mlx5_wqe_masked_cs64;

#define GSHMEMI_WQE_DS(layout) ((uint32_t)(sizeof(layout) / 16))
#define GSHMEMI_WQE_DS_MASKED_CS64 (GSHMEMI_WQE_DS(gshmemi_mlx5_wqe_masked_cs64) + 1)
#ifdef __cplusplus
#define GSHMEMI_WQE_ASSERT static_assert
#else
#define GSHMEMI_WQE_ASSERT _Static_assert
#endif
GSHMEMI_WQE_ASSERT(sizeof(gshmemi_mlx5_ctrl_seg) == 16 && sizeof(gshmemi_mlx5_raddr_seg) == 16 &&
                   sizeof(gshmemi_mlx5_data_seg) == 16 && sizeof(gshmemi_mlx5_atomic_seg) == 16 &&
                   sizeof(gshmemi_mlx5_masked_fa32_seg) == 16 &&
                   sizeof(gshmemi_mlx5_masked_fa64_seg) == 16 &&
                   sizeof(gshmemi_mlx5_masked_cs32_seg) == 16 &&
                   sizeof(gshmemi_mlx5_masked_cs64_seg) == 16,
                   "mlx5 segments are 16 bytes");
GSHMEMI_WQE_ASSERT(sizeof(gshmemi_mlx5_wqe_rdma) == 48 && sizeof(gshmemi_mlx5_wqe_inline) == 48 &&
                   sizeof(gshmemi_mlx5_wqe_atomic) == 64 &&
                   sizeof(gshmemi_mlx5_wqe_masked_cs64) == 64,
                   "WQE layouts");

/* ---- big-endian values: a byte swap on the little-endian host and GPU ---- */
GSHMEMI_WQE_FN uint32_t gshmemi_wqe_be32(uint32_t v) {
#ifdef __CUDA_ARCH__
    return __byte_perm(v, 0, 0x0123);
#else
    return __builtin_bswap32(v);
#endif
}
GSHMEMI_WQE_FN uint64_t gshmemi_wqe_be64(uint64_t v) {
#ifdef __CUDA_ARCH__
    return (uint64_t)gshmemi_wqe_be32((uint32_t)v) << 32 | gshmemi_wqe_be32((uint32_t)(v >> 32));
#else
    return __builtin_bswap64(v);
#endif
}

/* ---- segments ---- */
GSHMEMI_WQE_FN void gshmemi_wqe_set_ctrl(gshmemi_mlx5_ctrl_seg *c, uint8_t opcode, uint8_t opmod,
                                         uint16_t idx, uint32_t qpn, uint32_t ds, uint8_t flags) {
    c->opmod_idx_opcode = gshmemi_wqe_be32((uint32_t)opmod << 24 | (uint32_t)idx << 8 | opcode);
    c->qpn_ds = gshmemi_wqe_be32(qpn << 8 | ds);
    c->signature = 0;
    c->dci_stream_channel_id[0] = 0;
    c->dci_stream_channel_id[1] = 0;
    c->fm_ce_se = flags;
    c->imm = 0;
}
GSHMEMI_WQE_FN void gshmemi_wqe_set_raddr(gshmemi_mlx5_raddr_seg *r, uint64_t raddr,
                                          uint32_t rkey) {
    r->raddr = gshmemi_wqe_be64(raddr);
    r->rkey = gshmemi_wqe_be32(rkey);
    r->reserved = 0;
}
GSHMEMI_WQE_FN void gshmemi_wqe_set_data(gshmemi_mlx5_data_seg *d, uint32_t bytes, uint32_t lkey,
                                         uint64_t laddr) {
    d->byte_count = gshmemi_wqe_be32(bytes);
    d->lkey = gshmemi_wqe_be32(lkey);
    d->addr = gshmemi_wqe_be64(laddr);
}

/* ---- builders; each returns the BBs it wrote ---- */

/* No operation (1 BB, ds 1): fills a slot, or carries a completion or a fence of its own. */
GSHMEMI_WQE_FN int gshmemi_wqe_nop(void *wqe, uint16_t idx, uint32_t qpn, uint8_t flags) {
    gshmemi_wqe_set_ctrl((gshmemi_mlx5_ctrl_seg *)wqe, GSHMEMI_MLX5_OPCODE_NOP, 0, idx, qpn, 1,
                         flags);
    return 1;
}

/* RDMA write or read of `bytes` (1 .. 1 GiB) between laddr/lkey and raddr/rkey (1 BB). */
GSHMEMI_WQE_FN int gshmemi_wqe_rdma(void *wqe, uint8_t opcode, uint16_t idx, uint32_t qpn,
                                    uint8_t flags, uint64_t raddr, uint32_t rkey, uint64_t laddr,
                                    uint32_t lkey, uint32_t bytes) {
    gshmemi_mlx5_wqe_rdma *w = (gshmemi_mlx5_wqe_rdma *)wqe;
    gshmemi_wqe_set_ctrl(&w->ctrl, opcode, 0, idx, qpn, GSHMEMI_WQE_DS(gshmemi_mlx5_wqe_rdma),
                         flags);
    gshmemi_wqe_set_raddr(&w->raddr, raddr, rkey);
    gshmemi_wqe_set_data(&w->data, bytes, lkey, laddr);
    return 1;
}
/* put: the NIC reads bytes at laddr (lkey) and writes them at raddr (rkey). */
GSHMEMI_WQE_FN int gshmemi_wqe_put(void *wqe, uint16_t idx, uint32_t qpn, uint8_t flags,
                                   uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t lkey,
                                   uint32_t bytes) {
    return gshmemi_wqe_rdma(wqe, GSHMEMI_MLX5_OPCODE_RDMA_WRITE, idx, qpn, flags, raddr, rkey,
                            laddr, lkey, bytes);
}
/* get: the NIC reads bytes at raddr (rkey) and writes them at laddr (lkey). */
GSHMEMI_WQE_FN int gshmemi_wqe_get(void *wqe, uint16_t idx, uint32_t qpn, uint8_t flags,
                                   uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t lkey,
                                   uint32_t bytes) {
    return gshmemi_wqe_rdma(wqe, GSHMEMI_MLX5_OPCODE_RDMA_READ, idx, qpn, flags, raddr, rkey,
                            laddr, lkey, bytes);
}

/* put of len (1 .. 12) bytes carried in the WQE itself (1 BB): src is read now, not by the NIC,
 * so it needs no key and may be reused at once. */
GSHMEMI_WQE_FN int gshmemi_wqe_put_inline(void *wqe, uint16_t idx, uint32_t qpn, uint8_t flags,
                                          uint64_t raddr, uint32_t rkey, const void *src,
                                          uint32_t len) {
    gshmemi_mlx5_wqe_inline *w = (gshmemi_mlx5_wqe_inline *)wqe;
    const uint8_t *s = (const uint8_t *)src;
    gshmemi_wqe_set_ctrl(&w->ctrl, GSHMEMI_MLX5_OPCODE_RDMA_WRITE, 0, idx, qpn,
                         GSHMEMI_WQE_DS(gshmemi_mlx5_wqe_inline), flags);
    gshmemi_wqe_set_raddr(&w->raddr, raddr, rkey);
    w->inl.byte_count = gshmemi_wqe_be32(len | GSHMEMI_MLX5_INLINE_SEG);
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (uint32_t i = 0; i < GSHMEMI_WQE_INLINE_MAX; i++) w->bytes[i] = i < len ? s[i] : 0;
    return 1;
}

/* The frame of a one-segment atomic (1 BB): ctrl, raddr and the data segment where the old
 * value lands; returns the 16-byte atomic segment for the caller to fill. */
GSHMEMI_WQE_FN uint8_t *gshmemi_wqe_atomic_frame(void *wqe, uint8_t opcode, uint8_t opmod,
                                                 uint16_t idx, uint32_t qpn, uint8_t flags,
                                                 uint64_t raddr, uint32_t rkey, uint64_t laddr,
                                                 uint32_t lkey, uint32_t size) {
    gshmemi_mlx5_wqe_atomic *w = (gshmemi_mlx5_wqe_atomic *)wqe;
    gshmemi_wqe_set_ctrl(&w->ctrl, opcode, opmod, idx, qpn,
                         GSHMEMI_WQE_DS(gshmemi_mlx5_wqe_atomic), flags);
    gshmemi_wqe_set_raddr(&w->raddr, raddr, rkey);
    gshmemi_wqe_set_data(&w->data, size, lkey, laddr);
    return w->op;
}

/* Masked fetch-and-add: each field of the target (bits up to and including a set bit of
 * field_boundary) gets its part of add, without carry into the next field (1 BB, both sizes). */
GSHMEMI_WQE_FN int gshmemi_wqe_masked_fa(void *wqe, uint16_t idx, uint32_t qpn, uint8_t flags,
                                         uint64_t raddr, uint32_t rkey, uint64_t laddr,
                                         uint32_t lkey, uint32_t size, uint64_t add,
                                         uint64_t field_boundary) {
    const uint8_t opmod =
        size == 4 ? GSHMEMI_MLX5_OPMOD_EXT_ATOMIC_4 : GSHMEMI_MLX5_OPMOD_EXT_ATOMIC_8;
    uint8_t *seg = gshmemi_wqe_atomic_frame(wqe, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_FA, opmod, idx,
                                            qpn, flags, raddr, rkey, laddr, lkey, size);
    if (size == 4) {
        gshmemi_mlx5_masked_fa32_seg *a = (gshmemi_mlx5_masked_fa32_seg *)seg;
        a->add = gshmemi_wqe_be32((uint32_t)add);
        a->field_boundary = gshmemi_wqe_be32((uint32_t)field_boundary);
        a->reserved = 0;
    } else {
        gshmemi_mlx5_masked_fa64_seg *a = (gshmemi_mlx5_masked_fa64_seg *)seg;
        a->add = gshmemi_wqe_be64(add);
        a->field_boundary = gshmemi_wqe_be64(field_boundary);
    }
    return 1;
}

/* Masked compare-and-swap: where (old ^ compare) & compare_mask == 0, the target becomes
 * (old & ~swap_mask) | (swap & swap_mask). 4 bytes: 1 BB. 8 bytes: 2 BBs, the data segment in
 * wqe_next (unused for 4 bytes). */
GSHMEMI_WQE_FN int gshmemi_wqe_masked_cs(void *wqe, void *wqe_next, uint16_t idx, uint32_t qpn,
                                         uint8_t flags, uint64_t raddr, uint32_t rkey,
                                         uint64_t laddr, uint32_t lkey, uint32_t size,
                                         uint64_t swap, uint64_t compare, uint64_t swap_mask,
                                         uint64_t compare_mask) {
    if (size == 4) {
        gshmemi_mlx5_masked_cs32_seg *a = (gshmemi_mlx5_masked_cs32_seg *)gshmemi_wqe_atomic_frame(
            wqe, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS, GSHMEMI_MLX5_OPMOD_EXT_ATOMIC_4, idx, qpn,
            flags, raddr, rkey, laddr, lkey, size);
        a->swap = gshmemi_wqe_be32((uint32_t)swap);
        a->compare = gshmemi_wqe_be32((uint32_t)compare);
        a->swap_mask = gshmemi_wqe_be32((uint32_t)swap_mask);
        a->compare_mask = gshmemi_wqe_be32((uint32_t)compare_mask);
        return 1;
    }
    gshmemi_mlx5_wqe_masked_cs64 *w = (gshmemi_mlx5_wqe_masked_cs64 *)wqe;
    gshmemi_wqe_set_ctrl(&w->ctrl, GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS,
                         GSHMEMI_MLX5_OPMOD_EXT_ATOMIC_8, idx, qpn, GSHMEMI_WQE_DS_MASKED_CS64,
                         flags);
    gshmemi_wqe_set_raddr(&w->raddr, raddr, rkey);
    w->values.swap = gshmemi_wqe_be64(swap);
    w->values.compare = gshmemi_wqe_be64(compare);
    w->masks.swap = gshmemi_wqe_be64(swap_mask);
    w->masks.compare = gshmemi_wqe_be64(compare_mask);
    gshmemi_wqe_set_data((gshmemi_mlx5_data_seg *)wqe_next, size, lkey, laddr);
    return 2;
}

/* fetch-add (1 BB): 8 bytes as ATOMIC_FA, 4 bytes as MASKED_FA with no field boundary. */
GSHMEMI_WQE_FN int gshmemi_wqe_fetch_add(void *wqe, uint16_t idx, uint32_t qpn, uint8_t flags,
                                         uint64_t raddr, uint32_t rkey, uint64_t laddr,
                                         uint32_t lkey, uint32_t size, uint64_t value) {
    if (size == 4)
        return gshmemi_wqe_masked_fa(wqe, idx, qpn, flags, raddr, rkey, laddr, lkey, size, value,
                                     0);
    gshmemi_mlx5_atomic_seg *a = (gshmemi_mlx5_atomic_seg *)gshmemi_wqe_atomic_frame(
        wqe, GSHMEMI_MLX5_OPCODE_ATOMIC_FA, 0, idx, qpn, flags, raddr, rkey, laddr, lkey, size);
    a->swap_add = gshmemi_wqe_be64(value);
    a->compare = 0;
    return 1;
}
/* add without a result: the fetch-add WQE, its old value landing in the sink laddr/lkey. */
GSHMEMI_WQE_FN int gshmemi_wqe_add(void *wqe, uint16_t idx, uint32_t qpn, uint8_t flags,
                                   uint64_t raddr, uint32_t rkey, uint64_t sink, uint32_t sink_lkey,
                                   uint32_t size, uint64_t value) {
    return gshmemi_wqe_fetch_add(wqe, idx, qpn, flags, raddr, rkey, sink, sink_lkey, size, value);
}

/* compare-swap (1 BB): 8 bytes as ATOMIC_CS, 4 bytes as MASKED_CS with both masks full. */
GSHMEMI_WQE_FN int gshmemi_wqe_compare_swap(void *wqe, uint16_t idx, uint32_t qpn, uint8_t flags,
                                            uint64_t raddr, uint32_t rkey, uint64_t laddr,
                                            uint32_t lkey, uint32_t size, uint64_t value,
                                            uint64_t compare) {
    if (size == 4)
        return gshmemi_wqe_masked_cs(wqe, 0, idx, qpn, flags, raddr, rkey, laddr, lkey, size,
                                     value, compare, ~0ull, ~0ull);
    gshmemi_mlx5_atomic_seg *a = (gshmemi_mlx5_atomic_seg *)gshmemi_wqe_atomic_frame(
        wqe, GSHMEMI_MLX5_OPCODE_ATOMIC_CS, 0, idx, qpn, flags, raddr, rkey, laddr, lkey, size);
    a->swap_add = gshmemi_wqe_be64(value);
    a->compare = gshmemi_wqe_be64(compare);
    return 1;
}

/* swap (and set): MASKED_CS that always matches (compare_mask 0) and replaces every bit.
 * 4 bytes 1 BB, 8 bytes 2 BBs. */
GSHMEMI_WQE_FN int gshmemi_wqe_swap(void *wqe, void *wqe_next, uint16_t idx, uint32_t qpn,
                                    uint8_t flags, uint64_t raddr, uint32_t rkey, uint64_t laddr,
                                    uint32_t lkey, uint32_t size, uint64_t value) {
    return gshmemi_wqe_masked_cs(wqe, wqe_next, idx, qpn, flags, raddr, rkey, laddr, lkey, size,
                                 value, 0, ~0ull, 0);
}
/* and: always-matching MASKED_CS that clears the bits value lacks (swap_mask = ~value, their
 * swap bits 0). 4 bytes 1 BB, 8 bytes 2 BBs. */
GSHMEMI_WQE_FN int gshmemi_wqe_and(void *wqe, void *wqe_next, uint16_t idx, uint32_t qpn,
                                   uint8_t flags, uint64_t raddr, uint32_t rkey, uint64_t laddr,
                                   uint32_t lkey, uint32_t size, uint64_t value) {
    return gshmemi_wqe_masked_cs(wqe, wqe_next, idx, qpn, flags, raddr, rkey, laddr, lkey, size,
                                 value, 0, ~value, 0);
}
/* or: always-matching MASKED_CS that sets the bits of value (swap_mask = value).
 * 4 bytes 1 BB, 8 bytes 2 BBs. */
GSHMEMI_WQE_FN int gshmemi_wqe_or(void *wqe, void *wqe_next, uint16_t idx, uint32_t qpn,
                                  uint8_t flags, uint64_t raddr, uint32_t rkey, uint64_t laddr,
                                  uint32_t lkey, uint32_t size, uint64_t value) {
    return gshmemi_wqe_masked_cs(wqe, wqe_next, idx, qpn, flags, raddr, rkey, laddr, lkey, size,
                                 value, 0, value, 0);
}
/* xor: MASKED_FA with every bit a field of its own (field_boundary all ones): each bit adds
 * modulo 2 with no carry, which is xor (1 BB, both sizes). */
GSHMEMI_WQE_FN int gshmemi_wqe_xor(void *wqe, uint16_t idx, uint32_t qpn, uint8_t flags,
                                   uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t lkey,
                                   uint32_t size, uint64_t value) {
    return gshmemi_wqe_masked_fa(wqe, idx, qpn, flags, raddr, rkey, laddr, lkey, size, value,
                                 ~0ull);
}

/* ---- OpenSHMEM's atomics (GSHMEMI_AMO_* of gshmem/types.h) ---- */

/* The BBs gshmemi_wqe_amo writes for op and size: what a poster reserves before building. */
GSHMEMI_WQE_FN int gshmemi_wqe_amo_bbs(int op, uint32_t size) {
    const int masked_cs = op == GSHMEMI_AMO_SET || op == GSHMEMI_AMO_SWAP ||
                          op == GSHMEMI_AMO_AND || op == GSHMEMI_AMO_OR;
    return masked_cs && size == 8 ? 2 : 1;
}

/* The full block index of the WQE a completion names by its 16-bit `counter`: the latest index
 * below `bound` with those 16 bits, for a WQE known to lie in [bound - 65536, bound) (the host
 * passes its count of blocks rung, the device that plus the queue's size: chan_nic.h). */
GSHMEMI_WQE_FN uint64_t gshmemi_wqe_first_of(uint16_t counter, uint64_t bound) {
    return bound - 1 - (uint16_t)((uint16_t)(bound - 1) - counter);
}

/* The BBs of the WQE a completion names at block `first`, from the first word of the control
 * segment in its slot (ctrl0, host order): 2 for an 8-byte masked compare-swap whose index field
 * is first's, else 1. A slot that already holds a later WQE (its index differs) or the second
 * block of one (a data segment: no such opcode) reads as 1, a lower bound: the slot was reused
 * only after the WQE completed, so the completion count already covers it. */
GSHMEMI_WQE_FN unsigned gshmemi_wqe_bbs_at(uint32_t ctrl0, uint64_t first) {
    return (ctrl0 & 0xff) == GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS && (ctrl0 >> 24) == GSHMEMI_MLX5_OPMOD_EXT_ATOMIC_8 &&
                   ((ctrl0 >> 8) & 0xffff) == (uint16_t)first
               ? 2
               : 1;
}

/* Every OpenSHMEM atomic as one WQE: fetch = fetch-add of 0; set = swap into a sink; inc and
 * fetch_inc = add of 1; the non-fetching forms name a sink as laddr/lkey. compare is read by
 * CSWAP only; wqe_next by the 2-BB forms only. Returns the BBs written (0: unknown op, nothing
 * written). */
GSHMEMI_WQE_FN int gshmemi_wqe_amo(void *wqe, void *wqe_next, uint16_t idx, uint32_t qpn,
                                   uint8_t flags, int op, uint32_t size, uint64_t raddr,
                                   uint32_t rkey, uint64_t laddr, uint32_t lkey, uint64_t value,
                                   uint64_t compare) {
    switch (op) {
    case GSHMEMI_AMO_FETCH:
        return gshmemi_wqe_fetch_add(wqe, idx, qpn, flags, raddr, rkey, laddr, lkey, size, 0);
    case GSHMEMI_AMO_SET:
    case GSHMEMI_AMO_SWAP:
        return gshmemi_wqe_swap(wqe, wqe_next, idx, qpn, flags, raddr, rkey, laddr, lkey, size,
                                value);
    case GSHMEMI_AMO_CSWAP:
        return gshmemi_wqe_compare_swap(wqe, idx, qpn, flags, raddr, rkey, laddr, lkey, size,
                                        value, compare);
    case GSHMEMI_AMO_ADD:
        return gshmemi_wqe_fetch_add(wqe, idx, qpn, flags, raddr, rkey, laddr, lkey, size, value);
    case GSHMEMI_AMO_AND:
        return gshmemi_wqe_and(wqe, wqe_next, idx, qpn, flags, raddr, rkey, laddr, lkey, size,
                               value);
    case GSHMEMI_AMO_OR:
        return gshmemi_wqe_or(wqe, wqe_next, idx, qpn, flags, raddr, rkey, laddr, lkey, size,
                              value);
    case GSHMEMI_AMO_XOR:
        return gshmemi_wqe_xor(wqe, idx, qpn, flags, raddr, rkey, laddr, lkey, size, value);
    default:
        return 0;
    }
}

#endif
