/* The staged mode's messages: what one PE's proxy sends another's, in registered buffers
 * of HDR + GSHMEM_PROXY_CHUNK bytes. docs/proxy.md, "The wire", says what each message and
 * field means and who writes it. */
#ifndef GSHMEMI_PROXY_STAGED_WIRE_H
#define GSHMEMI_PROXY_STAGED_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gshmem/proxy_desc.h"

#define HDR 128   /* message header room; the payload starts 128-byte aligned */
/* requests: M_PUT, M_GET, M_PACK; responses: M_ACK, M_GETDATA, M_PACKACK */
enum { M_PUT = 1, M_GET, M_PACK, M_ACK, M_GETDATA, M_PACKACK, M_LAST = M_PACKACK };
enum { MF_SIGNAL = 1 };

/* Every message starts with this header (HDR bytes reserved); its payload follows at HDR. */
typedef struct smsg {
    uint8_t type;       /* M_* */
    uint8_t amo;        /* PUT with MF_SIGNAL: the signal's GSHMEM_PROXY_SIG_* */
    uint8_t flags;      /* MF_* */
    uint8_t pad_;
    int32_t src;        /* sender's PE */
    int32_t status;     /* responses: 0 or GSHMEM_ERR_* */
    uint32_t carry;     /* requests: where carried responses start (0: none), each [u32 bytes][u32 0][response] */
    uint64_t op_id;     /* the source's record: ring id << 56 | ticket (0 for a pack) */
    uint64_t addr;      /* PUT, GET: target symmetric address of this piece */
    uint64_t len;       /* payload bytes (PUT, GETDATA), bytes asked (GET), entries (PACK, PACKACK) */
    uint64_t off;       /* offset of this piece in its operation (PUT, GET, ACK, GETDATA) */
    uint64_t total;     /* PUT with MF_SIGNAL: bytes of the whole operation */
    uint64_t sig_addr, sig_value;   /* PUT with MF_SIGNAL: the signal word and operand */
} smsg;
_Static_assert(sizeof(smsg) <= HDR, "message header fits its room");

/* One small operation of a packed request (M_PACK: smsg.len of them after the header); a
 * put's payload follows it, padded to 8 bytes. */
typedef struct sop {
    uint64_t op_id;     /* the source's record */
    uint64_t addr;      /* target symmetric address */
    uint64_t operand;   /* p: the inline value (little endian); atomics, signals: the operand;
                           put_signal: the signal's value */
    uint64_t compare;   /* compare-and-swap: the compare operand; put_signal: the signal word */
    uint32_t size;      /* bytes: 1..8 (p, g), 4|8 (atomics), 8 (signals), the payload (puts) */
    uint8_t op;         /* GSHMEM_PROXY_OP_P, _G, _AMO, _SIGNAL, _PUT, _PUT_SIGNAL */
    uint8_t amo;        /* GSHMEM_PROXY_AMO_* or GSHMEM_PROXY_SIG_* */
    uint8_t fetch;      /* atomics: the previous value is wanted */
    uint8_t pad_;
} sop;

/* Its answer (M_PACKACK: smsg.len of them after the header, in the request's order); a get's
 * bytes follow its answer, padded to 8 bytes. */
typedef struct sans {
    uint64_t op_id;
    uint64_t value;     /* g: the bytes read (zero-extended); atomics: the previous value */
    int32_t status;     /* 0 or GSHMEM_ERR_* */
    uint32_t len;       /* bytes that follow (a get's data) */
} sans;

/* Operations per pack: a request of 256 atomics is 10 KiB and its answer 6 KiB, under ofi_rxm's
 * eager size (16 KiB), and one batch kernel applies 256 atomics. */
#define PACK_MAX 256

static inline bool has_payload(int op) { return op == GSHMEM_PROXY_OP_PUT || op == GSHMEM_PROXY_OP_PUT_SIGNAL; }
static inline size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

#endif
