/* Proves that gshmem/nic_wqe.h writes the mlx5 work requests rdma-core defines, byte for byte:
 * every builder (and gshmemi_wqe_amo for every OpenSHMEM atomic), every opcode and opmod it
 * uses, at WQE index 0x0000, 0x0001, 0xffff, 0x12ab, QP number 0, 0xffffff, 0x123456, every
 * combination of fence mode, completion and solicited flags, atomic sizes 4 and 8, inline
 * lengths 1..12, starting in a slot followed by its next and in a ring's last slot (a 2-block
 * WQE continues in the first); operands have every byte distinct, so a swapped half or field
 * shows. The reference is rdma-core's infiniband/mlx5dv.h: mlx5dv_set_ctrl_seg,
 * mlx5dv_set_data_seg, struct mlx5_wqe_raddr_seg / _atomic_seg / _inl_data_seg filled with
 * htobe*, its opcodes and flags (it has no masked-atomic struct nor opmod: those are written
 * here from the PRM's layout). The 128 bytes around a WQE are compared, poisoned beforehand,
 * so a builder that writes past its WQE or leaves padding unwritten fails too. A failure names
 * the builder, the case, the field, its byte offset and both bytes.
 * Then what the bytes mean: a model of the NIC's atomics (the PRM's definitions of FA, CS and
 * the masked forms) applied to the built WQEs gives OpenSHMEM's result for each operation.
 *
 * tests/gpu/test_nic_wqe.cu builds the same cases on the GPU: it includes the part above
 * NIC_WQE_CASES_ONLY. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gshmem/nic_wqe.h"

/* ---- the cases (host and device) ---- */
enum wqe_kind { K_NOP, K_PUT, K_GET, K_PUT_INLINE, K_FETCH_ADD, K_ADD, K_CSWAP, K_SWAP, K_AND,
                K_OR, K_XOR, K_AMO, K_KINDS };
static const char *const kind_name[K_KINDS] = {
    "gshmemi_wqe_nop", "gshmemi_wqe_put", "gshmemi_wqe_get", "gshmemi_wqe_put_inline",
    "gshmemi_wqe_fetch_add", "gshmemi_wqe_add", "gshmemi_wqe_compare_swap", "gshmemi_wqe_swap",
    "gshmemi_wqe_and", "gshmemi_wqe_or", "gshmemi_wqe_xor", "gshmemi_wqe_amo"};
static const char *const amo_name[8] = {"FETCH", "SET", "SWAP", "CSWAP", "ADD", "AND", "OR", "XOR"};

struct wqe_case {
    uint8_t kind;      /* wqe_kind */
    uint8_t size;      /* atomics: 4 | 8; put_inline: its length */
    uint8_t op;        /* K_AMO: GSHMEMI_AMO_* */
    uint8_t flags;
    uint8_t wrapped;   /* the WQE starts at buf + 64 (a ring's last slot), its next slot is buf */
    uint16_t idx;
    uint32_t qpn;
};

/* operands: every byte distinct, within and across them */
#define T_RADDR 0x0102030405060708ull
#define T_RKEY 0x090a0b0cu
#define T_LADDR 0x1112131415161718ull
#define T_LKEY 0x191a1b1cu
#define T_BYTES 0x2a2b2c2du
#define T_VALUE 0x3132333435363738ull
#define T_COMPARE 0x4142434445464748ull
#define T_INLINE0 0xe1   /* inline byte i is T_INLINE0 + i */
#define T_POISON 0xa5    /* the 128 bytes around a WQE before it is built */

/* The operations: kind, size and op of each. */
#define WQE_VARIANTS 45   /* nop, put, get, 12 inline lengths, 2 sizes x (7 builders + 8 amo ops) */
static int wqe_variants(struct wqe_case *v) {
    int n = 0;
    const uint8_t one[3] = {K_NOP, K_PUT, K_GET};
    const uint8_t atomics[7] = {K_FETCH_ADD, K_ADD, K_CSWAP, K_SWAP, K_AND, K_OR, K_XOR};
    memset(v, 0, WQE_VARIANTS * sizeof *v);
    for (int i = 0; i < 3; i++) v[n++].kind = one[i];
    for (int len = 1; len <= GSHMEMI_WQE_INLINE_MAX; n++, len++) {
        v[n].kind = K_PUT_INLINE;
        v[n].size = (uint8_t)len;
    }
    for (int size = 4; size <= 8; size += 4) {
        for (int i = 0; i < 7; i++, n++) {
            v[n].kind = atomics[i];
            v[n].size = (uint8_t)size;
        }
        for (int op = 0; op < 8; op++, n++) {
            v[n].kind = K_AMO;
            v[n].size = (uint8_t)size;
            v[n].op = (uint8_t)op;
        }
    }
    return n;
}

/* Each variant at every index, QP number, flag byte and slot placement. */
#define WQE_IDXS 4
#define WQE_QPNS 3
#define WQE_FLAGS 12
#define WQE_PER_VARIANT (WQE_IDXS * WQE_QPNS * WQE_FLAGS * 2)
static int wqe_cases(struct wqe_case *out) {
    const uint16_t idxs[WQE_IDXS] = {0x0000, 0x0001, 0xffff, 0x12ab};
    const uint32_t qpns[WQE_QPNS] = {0x000000, 0xffffff, 0x123456};
    const uint8_t fences[3] = {0, GSHMEMI_WQE_SMALL_FENCE, GSHMEMI_WQE_FENCE};
    struct wqe_case v[WQE_VARIANTS];
    int nv = wqe_variants(v), n = 0;
    for (int i = 0; i < nv; i++)
        for (int a = 0; a < WQE_IDXS; a++)
            for (int b = 0; b < WQE_QPNS; b++)
                for (int f = 0; f < WQE_FLAGS; f++)
                    for (int w = 0; w < 2; w++) {
                        struct wqe_case c = v[i];
                        c.idx = idxs[a];
                        c.qpn = qpns[b];
                        c.flags = (uint8_t)(fences[f / 4] | (f & 1 ? GSHMEMI_WQE_CQ_UPDATE : 0) |
                                            (f & 2 ? GSHMEMI_WQE_SOLICITED : 0));
                        c.wrapped = (uint8_t)w;
                        out[n++] = c;
                    }
    return n;
}

/* Builds case c with nic_wqe.h into buf (128 bytes: two slots); returns the builder's BBs. */
GSHMEMI_WQE_FN int wqe_build(const struct wqe_case *c, uint8_t *buf) {
    uint8_t *wqe = buf + (c->wrapped ? 64 : 0), *next = buf + (c->wrapped ? 0 : 64);
    uint8_t src[GSHMEMI_WQE_INLINE_MAX];
    for (int i = 0; i < GSHMEMI_WQE_INLINE_MAX; i++) src[i] = (uint8_t)(T_INLINE0 + i);
    switch (c->kind) {
    case K_NOP: return gshmemi_wqe_nop(wqe, c->idx, c->qpn, c->flags);
    case K_PUT:
        return gshmemi_wqe_put(wqe, c->idx, c->qpn, c->flags, T_RADDR, T_RKEY, T_LADDR, T_LKEY,
                               T_BYTES);
    case K_GET:
        return gshmemi_wqe_get(wqe, c->idx, c->qpn, c->flags, T_RADDR, T_RKEY, T_LADDR, T_LKEY,
                               T_BYTES);
    case K_PUT_INLINE:
        return gshmemi_wqe_put_inline(wqe, c->idx, c->qpn, c->flags, T_RADDR, T_RKEY, src, c->size);
    case K_FETCH_ADD:
        return gshmemi_wqe_fetch_add(wqe, c->idx, c->qpn, c->flags, T_RADDR, T_RKEY, T_LADDR,
                                     T_LKEY, c->size, T_VALUE);
    case K_ADD:
        return gshmemi_wqe_add(wqe, c->idx, c->qpn, c->flags, T_RADDR, T_RKEY, T_LADDR, T_LKEY,
                               c->size, T_VALUE);
    case K_CSWAP:
        return gshmemi_wqe_compare_swap(wqe, c->idx, c->qpn, c->flags, T_RADDR, T_RKEY, T_LADDR,
                                        T_LKEY, c->size, T_VALUE, T_COMPARE);
    case K_SWAP:
        return gshmemi_wqe_swap(wqe, next, c->idx, c->qpn, c->flags, T_RADDR, T_RKEY, T_LADDR,
                                T_LKEY, c->size, T_VALUE);
    case K_AND:
        return gshmemi_wqe_and(wqe, next, c->idx, c->qpn, c->flags, T_RADDR, T_RKEY, T_LADDR,
                               T_LKEY, c->size, T_VALUE);
    case K_OR:
        return gshmemi_wqe_or(wqe, next, c->idx, c->qpn, c->flags, T_RADDR, T_RKEY, T_LADDR,
                              T_LKEY, c->size, T_VALUE);
    case K_XOR:
        return gshmemi_wqe_xor(wqe, c->idx, c->qpn, c->flags, T_RADDR, T_RKEY, T_LADDR, T_LKEY,
                               c->size, T_VALUE);
    default:
        return gshmemi_wqe_amo(wqe, next, c->idx, c->qpn, c->flags, c->op, c->size, T_RADDR,
                               T_RKEY, T_LADDR, T_LKEY, T_VALUE, T_COMPARE);
    }
}

static void wqe_describe(const struct wqe_case *c, char *s, size_t n) {
    int k = snprintf(s, n, "%s", kind_name[c->kind]);
    if (c->kind == K_AMO) k += snprintf(s + k, n - k, "(%s)", amo_name[c->op]);
    if (c->kind == K_PUT_INLINE) k += snprintf(s + k, n - k, " len %d", c->size);
    else if (c->kind >= K_FETCH_ADD) k += snprintf(s + k, n - k, " size %d", c->size);
    snprintf(s + k, n - k, " idx 0x%04x qpn 0x%06x flags 0x%02x%s", c->idx, c->qpn, c->flags,
             c->wrapped ? " (in the ring's last slot)" : "");
}

/* The WQE's layout, as the NIC reads it (ds 16-byte units from its ctrl segment). */
enum wqe_form { F_NOP, F_RDMA, F_INLINE, F_FA, F_CS, F_MFA32, F_MFA64, F_MCS32, F_MCS64 };
static enum wqe_form wqe_form_of(const uint8_t *lin) {
    const uint8_t opcode = lin[3], opmod = lin[0];
    switch (opcode) {
    case GSHMEMI_MLX5_OPCODE_RDMA_WRITE: return lin[32] & 0x80 ? F_INLINE : F_RDMA;
    case GSHMEMI_MLX5_OPCODE_RDMA_READ: return F_RDMA;
    case GSHMEMI_MLX5_OPCODE_ATOMIC_FA: return F_FA;
    case GSHMEMI_MLX5_OPCODE_ATOMIC_CS: return F_CS;
    case GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_FA: return opmod == 0x08 ? F_MFA32 : F_MFA64;
    case GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS: return opmod == 0x08 ? F_MCS32 : F_MCS64;
    default: return F_NOP;
    }
}

/* The field at byte off of a WQE (off counted from its ctrl segment, across the slot wrap). */
static const char *wqe_field(const uint8_t *lin, int off) {
    static const char *const ctrl[16] = {
        "ctrl.opmod_idx_opcode (opmod)", "ctrl.opmod_idx_opcode (idx high)",
        "ctrl.opmod_idx_opcode (idx low)", "ctrl.opmod_idx_opcode (opcode)",
        "ctrl.qpn_ds (qpn high)", "ctrl.qpn_ds (qpn)", "ctrl.qpn_ds (qpn low)", "ctrl.qpn_ds (ds)",
        "ctrl.signature", "ctrl.dci_stream_channel_id", "ctrl.dci_stream_channel_id",
        "ctrl.fm_ce_se", "ctrl.imm", "ctrl.imm", "ctrl.imm", "ctrl.imm"};
    static const char *const data[3] = {"data.byte_count", "data.lkey", "data.addr"};
    static const char *const seg[9][4] = {
        {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0},
        {"atomic.swap_add", "atomic.swap_add", "atomic.compare", "atomic.compare"},
        {"atomic.swap_add", "atomic.swap_add", "atomic.compare", "atomic.compare"},
        {"masked_fa32.add", "masked_fa32.field_boundary", "masked_fa32.reserved",
         "masked_fa32.reserved"},
        {"masked_fa64.add", "masked_fa64.add", "masked_fa64.field_boundary",
         "masked_fa64.field_boundary"},
        {"masked_cs32.swap", "masked_cs32.compare", "masked_cs32.swap_mask",
         "masked_cs32.compare_mask"},
        {"masked_cs64.swap", "masked_cs64.swap", "masked_cs64.compare", "masked_cs64.compare"}};
    const enum wqe_form f = wqe_form_of(lin);
    const int end = (lin[7] & 0x3f) * 16;   /* this WQE's ds */
    if (off < 16) return ctrl[off];
    if (off >= end) return "past the WQE (must stay untouched)";
    if (off < 32) return off < 24 ? "raddr.raddr" : off < 28 ? "raddr.rkey" : "raddr.reserved";
    if (f == F_INLINE) return off < 36 ? "inline.byte_count" : "inline data or its padding";
    if (f == F_RDMA) return data[off < 36 ? 0 : off < 40 ? 1 : 2];
    if (f == F_MCS64 && off >= 48 && off < 64)
        return off < 56 ? "masked_cs64.swap_mask" : "masked_cs64.compare_mask";
    if (off < 48) return seg[f][(off - 32) / 4];
    const int d = off - (f == F_MCS64 ? 64 : 48);
    return data[d < 4 ? 0 : d < 8 ? 1 : 2];
}

/* The WQE of buf in one line (its ctrl segment first). */
static void wqe_linear(const struct wqe_case *c, const uint8_t *buf, uint8_t *lin) {
    const int first = c->wrapped ? 64 : 0;
    memcpy(lin, buf + first, 64);
    memcpy(lin + 64, buf + (64 - first), 64);
}

#ifndef NIC_WQE_CASES_ONLY
/* ---- the reference: rdma-core ---- */
#include <endian.h>
#include <stddef.h>
#include <infiniband/mlx5dv.h>

#include "unit.h"

struct ref_seg32 { __be32 w[4]; };   /* a 16-byte segment of four 32-bit words */

/* The reference's statement of each operation: the opcode, opmod and atomic operands. */
struct ref_atomic {
    uint8_t opcode, opmod;
    int masked;   /* 0: ATOMIC_FA/CS {a, b}; 1: masked FA {a add, b boundary};
                     2: masked CS {a swap, b compare, c swap mask, d compare mask} */
    uint64_t a, b, c, d;
};
/* The builder each GSHMEMI_AMO_* is (FETCH: a fetch-add of 0; SET: a swap). */
static const int amo_kind[8] = {K_FETCH_ADD, K_SWAP, K_SWAP, K_CSWAP, K_FETCH_ADD, K_AND, K_OR, K_XOR};

static struct ref_atomic ref_atomic_of(int kind, int op, int size) {
    const uint64_t v = size == 4 ? (uint32_t)T_VALUE : T_VALUE;
    const uint64_t cmp = size == 4 ? (uint32_t)T_COMPARE : T_COMPARE;
    const uint64_t ones = size == 4 ? 0xffffffffu : ~0ull;
    const uint8_t ext = size == 4 ? 0x08 : 0x09;
    struct ref_atomic r = {0, 0, 0, 0, 0, 0, 0};
    if (kind == K_AMO) {
        r = ref_atomic_of(amo_kind[op], -1, size);
        if (op == GSHMEMI_AMO_FETCH) r.a = 0;   /* fetch = fetch-add of 0 */
        return r;
    }
    switch (kind) {
    case K_FETCH_ADD:
    case K_ADD:
        if (size == 8) r = (struct ref_atomic){MLX5_OPCODE_ATOMIC_FA, 0, 0, v, 0, 0, 0};
        else r = (struct ref_atomic){MLX5_OPCODE_ATOMIC_MASKED_FA, ext, 1, v, 0, 0, 0};
        break;
    case K_CSWAP:
        if (size == 8) r = (struct ref_atomic){MLX5_OPCODE_ATOMIC_CS, 0, 0, v, cmp, 0, 0};
        else r = (struct ref_atomic){MLX5_OPCODE_ATOMIC_MASKED_CS, ext, 2, v, cmp, ones, ones};
        break;
    case K_SWAP: r = (struct ref_atomic){MLX5_OPCODE_ATOMIC_MASKED_CS, ext, 2, v, 0, ones, 0}; break;
    case K_AND: r = (struct ref_atomic){MLX5_OPCODE_ATOMIC_MASKED_CS, ext, 2, v, 0, ~v & ones, 0};
        break;
    case K_OR: r = (struct ref_atomic){MLX5_OPCODE_ATOMIC_MASKED_CS, ext, 2, v, 0, v, 0}; break;
    case K_XOR: r = (struct ref_atomic){MLX5_OPCODE_ATOMIC_MASKED_FA, ext, 1, v, ones, 0, 0}; break;
    }
    return r;
}

/* Builds case c with rdma-core into buf (as wqe_build places it); returns its BBs. */
static int ref_build(const struct wqe_case *c, uint8_t *buf) {
    uint8_t lin[128];
    memset(lin, 0, sizeof lin);
    struct mlx5_wqe_ctrl_seg *ctrl = (struct mlx5_wqe_ctrl_seg *)lin;
    struct mlx5_wqe_raddr_seg *raddr = (struct mlx5_wqe_raddr_seg *)(lin + sizeof *ctrl);
    uint8_t *after = lin + sizeof *ctrl + sizeof *raddr;
    size_t bytes = sizeof *ctrl;
    uint8_t opcode = MLX5_OPCODE_NOP, opmod = 0;
    if (c->kind != K_NOP) {
        raddr->raddr = htobe64(T_RADDR);
        raddr->rkey = htobe32(T_RKEY);
        raddr->reserved = 0;
        bytes += sizeof *raddr;
    }
    if (c->kind == K_PUT || c->kind == K_GET) {
        opcode = c->kind == K_PUT ? MLX5_OPCODE_RDMA_WRITE : MLX5_OPCODE_RDMA_READ;
        mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)after, T_BYTES, T_LKEY, T_LADDR);
        bytes += sizeof(struct mlx5_wqe_data_seg);
    } else if (c->kind == K_PUT_INLINE) {
        struct mlx5_wqe_inl_data_seg *inl = (struct mlx5_wqe_inl_data_seg *)after;
        opcode = MLX5_OPCODE_RDMA_WRITE;
        inl->byte_count = htobe32(c->size | MLX5_INLINE_SEG);
        for (int i = 0; i < c->size && i < GSHMEMI_WQE_INLINE_MAX; i++)
            ((uint8_t *)(inl + 1))[i] = (uint8_t)(T_INLINE0 + i);
        bytes += sizeof *inl + c->size;
    } else if (c->kind != K_NOP) {
        const struct ref_atomic r = ref_atomic_of(c->kind, c->op, c->size);
        opcode = r.opcode;
        opmod = r.opmod;
        if (c->size == 4 && r.masked) {   /* masked 4-byte: one segment of 32-bit words */
            struct ref_seg32 *s = (struct ref_seg32 *)after;
            s->w[0] = htobe32((uint32_t)r.a);
            s->w[1] = htobe32((uint32_t)r.b);
            s->w[2] = htobe32((uint32_t)r.c);   /* masked FA: reserved, 0 */
            s->w[3] = htobe32((uint32_t)r.d);
            after += sizeof *s;
        } else {                           /* 8-byte: {a, b}, and {c, d} for masked CS */
            struct mlx5_wqe_atomic_seg *s = (struct mlx5_wqe_atomic_seg *)after;
            s->swap_add = htobe64(r.a);
            s->compare = htobe64(r.b);
            after += sizeof *s;
            if (r.masked == 2) {
                s[1].swap_add = htobe64(r.c);
                s[1].compare = htobe64(r.d);
                after += sizeof *s;
            }
        }
        mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)after, c->size, T_LKEY, T_LADDR);
        bytes = (size_t)(after - lin) + sizeof(struct mlx5_wqe_data_seg);
    }
    const unsigned ds = (unsigned)((bytes + 15) / 16);
    mlx5dv_set_ctrl_seg(ctrl, c->idx, opcode, opmod, c->qpn, c->flags, (uint8_t)ds, 0, 0);
    /* into the slots: the first 64 bytes in the WQE's slot, the rest in the next */
    const size_t n = ds * 16;
    memcpy(buf + (c->wrapped ? 64 : 0), lin, n < 64 ? n : 64);
    if (n > 64) memcpy(buf + (c->wrapped ? 0 : 64), lin + 64, n - 64);
    return (int)((n + MLX5_SEND_WQE_BB - 1) / MLX5_SEND_WQE_BB);
}

/* nic_wqe.h's constants and segment layouts against rdma-core's. */
static void check_definitions(void) {
    EXPECT(GSHMEMI_MLX5_OPCODE_NOP == MLX5_OPCODE_NOP &&
           GSHMEMI_MLX5_OPCODE_RDMA_WRITE == MLX5_OPCODE_RDMA_WRITE &&
           GSHMEMI_MLX5_OPCODE_RDMA_READ == MLX5_OPCODE_RDMA_READ &&
           GSHMEMI_MLX5_OPCODE_ATOMIC_CS == MLX5_OPCODE_ATOMIC_CS &&
           GSHMEMI_MLX5_OPCODE_ATOMIC_FA == MLX5_OPCODE_ATOMIC_FA &&
           GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_CS == MLX5_OPCODE_ATOMIC_MASKED_CS &&
           GSHMEMI_MLX5_OPCODE_ATOMIC_MASKED_FA == MLX5_OPCODE_ATOMIC_MASKED_FA,
           "an opcode differs from mlx5dv.h's");
    EXPECT(GSHMEMI_WQE_CQ_UPDATE == MLX5_WQE_CTRL_CQ_UPDATE &&
           GSHMEMI_WQE_SOLICITED == MLX5_WQE_CTRL_SOLICITED &&
           GSHMEMI_WQE_FENCE == MLX5_WQE_CTRL_FENCE &&
           GSHMEMI_WQE_SMALL_FENCE == MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE,
           "a ctrl flag differs from mlx5dv.h's");
    EXPECT(GSHMEMI_MLX5_INLINE_SEG == MLX5_INLINE_SEG && GSHMEMI_WQE_BB == MLX5_SEND_WQE_BB,
           "MLX5_INLINE_SEG or the basic block size differs from mlx5dv.h's");
    EXPECT(sizeof(gshmemi_mlx5_ctrl_seg) == sizeof(struct mlx5_wqe_ctrl_seg) &&
           offsetof(gshmemi_mlx5_ctrl_seg, qpn_ds) == offsetof(struct mlx5_wqe_ctrl_seg, qpn_ds) &&
           offsetof(gshmemi_mlx5_ctrl_seg, signature) ==
               offsetof(struct mlx5_wqe_ctrl_seg, signature) &&
           offsetof(gshmemi_mlx5_ctrl_seg, fm_ce_se) ==
               offsetof(struct mlx5_wqe_ctrl_seg, fm_ce_se) &&
           offsetof(gshmemi_mlx5_ctrl_seg, imm) == offsetof(struct mlx5_wqe_ctrl_seg, imm),
           "the ctrl segment's layout differs from mlx5dv.h's");
    EXPECT(sizeof(gshmemi_mlx5_raddr_seg) == sizeof(struct mlx5_wqe_raddr_seg) &&
           offsetof(gshmemi_mlx5_raddr_seg, rkey) == offsetof(struct mlx5_wqe_raddr_seg, rkey) &&
           sizeof(gshmemi_mlx5_data_seg) == sizeof(struct mlx5_wqe_data_seg) &&
           offsetof(gshmemi_mlx5_data_seg, lkey) == offsetof(struct mlx5_wqe_data_seg, lkey) &&
           offsetof(gshmemi_mlx5_data_seg, addr) == offsetof(struct mlx5_wqe_data_seg, addr) &&
           sizeof(gshmemi_mlx5_atomic_seg) == sizeof(struct mlx5_wqe_atomic_seg) &&
           offsetof(gshmemi_mlx5_atomic_seg, compare) ==
               offsetof(struct mlx5_wqe_atomic_seg, compare) &&
           sizeof(gshmemi_mlx5_inline_seg) == sizeof(struct mlx5_wqe_inl_data_seg),
           "a raddr, data, atomic or inline segment's layout differs from mlx5dv.h's");
}

/* Every case: nic_wqe.h's bytes against rdma-core's; one line per operation. */
static void check_bytes(void) {
    static struct wqe_case cases[WQE_VARIANTS * WQE_PER_VARIANT];
    const int n = wqe_cases(cases);
    printf("each operation at idx {0x0000 0x0001 0xffff 0x12ab} x qpn {0x000000 0xffffff "
           "0x123456} x %d flag bytes (fence none/small/full x CQ_UPDATE x SOLICITED) x 2 slot "
           "placements = %d WQEs; 128 bytes compared each (poison 0x%02x around the WQE)\n",
           WQE_FLAGS, WQE_PER_VARIANT, T_POISON);
    for (int v = 0; v < n; v += WQE_PER_VARIANT) {
        int bad = 0, ds = 0, bbs = 0;
        uint8_t opcode = 0, opmod = 0;
        for (int i = v; i < v + WQE_PER_VARIANT; i++) {
            uint8_t mine[128], ref[128], lin[128];
            memset(mine, T_POISON, sizeof mine);
            memset(ref, T_POISON, sizeof ref);
            const int got = wqe_build(&cases[i], mine), want = ref_build(&cases[i], ref);
            wqe_linear(&cases[i], ref, lin);
            ds = lin[7] & 0x3f;
            opcode = lin[3];
            opmod = lin[0];
            bbs = want;
            int off = 0;
            while (off < 128 && mine[off] == ref[off]) off++;
            /* gshmemi_wqe_amo_bbs: what a poster reserves before building, known beforehand */
            const int reserved =
                cases[i].kind == K_AMO ? gshmemi_wqe_amo_bbs(cases[i].op, cases[i].size) : want;
            const int ok = off == 128 && got == want && reserved == want;
            bad += !ok;
            if (ok) passed++;
            else failed++;
            if (ok || bad > 1) continue;   /* the first differing WQE of each operation */
            char what[160];
            wqe_describe(&cases[i], what, sizeof what);
            if (off == 128)
                fprintf(stderr, "FAIL %s: returned %d basic blocks (gshmemi_wqe_amo_bbs: %d), "
                        "rdma-core's WQE takes %d\n", what, got, reserved, want);
            else {
                const int woff = (off - (cases[i].wrapped ? 64 : 0) + 128) % 128;
                fprintf(stderr, "FAIL %s: field %s, WQE byte %d (buffer byte %d): built 0x%02x, "
                        "rdma-core 0x%02x\n", what, wqe_field(lin, woff), woff, off, mine[off],
                        ref[off]);
            }
        }
        char what[160];
        wqe_describe(&cases[v], what, sizeof what);
        *strstr(what, " idx") = 0;
        printf("%s %-36s opcode 0x%02x opmod 0x%02x ds %d %d BB: %d WQEs equal to rdma-core's%s\n",
               bad ? "FAIL" : "ok  ", what, opcode, opmod, ds, bbs, WQE_PER_VARIANT - bad,
               bad ? ", the others differ (the first: above)" : "");
    }
}

/* ---- what the bytes mean: the NIC's atomics (mlx5 PRM), applied to a target value ---- */
static uint64_t be(const uint8_t *p, int size) {
    uint64_t v = 0;
    for (int i = 0; i < size; i++) v = v << 8 | p[i];
    return v;
}
/* Masked fetch-add: bit by bit with carry, the carry dropped after a boundary bit. */
static uint64_t fields_add(uint64_t old, uint64_t add, uint64_t boundary, int bits) {
    uint64_t r = 0, carry = 0;
    for (int i = 0; i < bits; i++) {
        const uint64_t s = (old >> i & 1) + (add >> i & 1) + carry;
        r |= (s & 1) << i;
        carry = boundary >> i & 1 ? 0 : s >> 1;
    }
    return r;
}
/* The target's new value after the atomic WQE lin acts on old (size bytes). */
static uint64_t nic_atomic(const uint8_t *lin, uint64_t old, int size) {
    const uint8_t *s = lin + 32;
    const uint64_t mask = size == 4 ? 0xffffffffu : ~0ull;
    switch (wqe_form_of(lin)) {
    case F_FA: return old + be(s, 8);
    case F_CS: return old == be(s + 8, 8) ? be(s, 8) : old;
    case F_MFA32: return fields_add(old, be(s, 4), be(s + 4, 4), 32);
    case F_MFA64: return fields_add(old, be(s, 8), be(s + 8, 8), 64);
    case F_MCS32:
    case F_MCS64: {
        const int w = size;   /* word size: 32-bit words {swap, compare, swap_mask, compare_mask} */
        const uint64_t swap = be(s, w), cmp = be(s + w, w), smask = be(s + 2 * w, w),
                       cmask = be(s + 3 * w, w);
        return ((old ^ cmp) & cmask & mask) == 0 ? ((old & ~smask) | (swap & smask)) & mask : old;
    }
    default: return ~old;   /* not an atomic: never the expected value */
    }
}
/* OpenSHMEM's result of kind/op on old, with the test's operands. */
static uint64_t shmem_result(int kind, int op, uint64_t old, int size) {
    const uint64_t mask = size == 4 ? 0xffffffffu : ~0ull;
    const uint64_t v = T_VALUE & mask, cmp = T_COMPARE & mask;
    if (kind == K_AMO && op == GSHMEMI_AMO_FETCH) return old;
    switch (kind == K_AMO ? amo_kind[op] : kind) {
    case K_FETCH_ADD:
    case K_ADD: return (old + v) & mask;
    case K_CSWAP: return old == cmp ? v : old;
    case K_SWAP: return v;
    case K_AND: return old & v;
    case K_OR: return old | v;
    default: return old ^ v;
    }
}
static void check_semantics(void) {
    struct wqe_case v[WQE_VARIANTS];
    const int nv = wqe_variants(v);
    const uint64_t olds[6] = {0, ~0ull, 0x0123456789abcdefull, T_VALUE, T_COMPARE,
                              0x8000000180000001ull};
    int ops = 0, bad = 0;
    for (int i = 0; i < nv; i++) {
        if (v[i].kind < K_FETCH_ADD) continue;
        uint8_t buf[128], lin[128];
        char what[160];
        v[i].idx = 0x12ab;
        v[i].qpn = 0x123456;
        wqe_build(&v[i], buf);
        wqe_linear(&v[i], buf, lin);
        wqe_describe(&v[i], what, sizeof what);
        const uint64_t mask = v[i].size == 4 ? 0xffffffffu : ~0ull;
        const int fetch_bytes = (int)be(lin + (wqe_form_of(lin) == F_MCS64 ? 64 : 48), 4);
        EXPECT(fetch_bytes == v[i].size, "%s: the old value's data segment has %d bytes", what,
               fetch_bytes);
        bad += fetch_bytes != v[i].size;
        for (int k = 0; k < 6; k++) {
            const uint64_t old = olds[k] & mask, got = nic_atomic(lin, old, v[i].size) & mask,
                           want = shmem_result(v[i].kind, v[i].op, old, v[i].size);
            EXPECT(got == want, "%s: on 0x%llx the NIC leaves 0x%llx, OpenSHMEM wants 0x%llx", what,
                   (unsigned long long)old, (unsigned long long)got, (unsigned long long)want);
            bad += got != want;
        }
        ops++;
    }
    printf("%s the NIC's atomics (PRM semantics of FA, CS, masked FA, masked CS) applied to the "
           "%d atomic WQEs on 6 target values each give OpenSHMEM's results (fetch, set, swap, "
           "cswap, add, and, or, xor; 4 and 8 bytes)\n", bad ? "FAIL" : "ok  ", ops);
}

/* The completion index extension (gshmemi_wqe_first_of, as chan_nic.h calls it): a WQE w that
 * completed while POSTED read `posted` lies in [posted - wqe_cnt - 2, posted + wqe_cnt) (room
 * below; the WQEs of the poster that holds POSTED above, which the NIC may complete before
 * POSTED moves past them); its 16-bit counter extended against posted + wqe_cnt gives w back,
 * for every queue size allowed and around 16-bit and 32-bit wraps. Against posted alone, the
 * WQE at posted comes back 65536 blocks early (the completion the ring CQ then lost). */
static void check_first_of(void) {
    static const uint64_t bases[] = {70000, 65536, 65535, 131071, 0xffffffffull + 3, 0x123456789abcull};
    for (uint32_t cnt = 64; cnt <= 16384; cnt *= 4)
        for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++) {
            const uint64_t posted = bases[b];
            int bad = 0;
            uint64_t first_bad = 0;
            for (uint64_t w = posted - cnt - 2; w < posted + cnt; w++)
                if (gshmemi_wqe_first_of((uint16_t)w, posted + cnt) != w && !bad++) first_bad = w;
            EXPECT(!bad, "first_of: queue %u, POSTED %llu: %d WQEs extended wrong, first %llu", cnt,
                   (unsigned long long)posted, bad, (unsigned long long)first_bad);
        }
    EXPECT(gshmemi_wqe_first_of((uint16_t)70000, 70000) == 70000 - 65536,
           "first_of: against POSTED alone the WQE at POSTED is not 65536 early (the check above proves nothing)");
}

int main(void) {
    check_definitions();
    check_bytes();
    check_semantics();
    check_first_of();
    printf("nic_wqe: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
#endif
