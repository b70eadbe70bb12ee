/* The few mlx5 PRM commands the DEVX setup sends (CREATE_CQ, CREATE_QP, RST2INIT_QP,
 * INIT2RTR_QP, RTR2RTS_QP), as the bit positions of the fields it sets: a command is an array
 * of big-endian 32-bit words, a field `width` bits at bit `off` counted from the first word's
 * most significant bit. Offsets are from the start of the command (the QP context of the QP
 * commands starts at 0xc0, its primary address path at 0x180; the CQ context at 0x80). They are
 * the PRM's as public transcriptions give them: rdma-core's providers/mlx5/mlx5_ifc.h for the QP
 * commands, DPDK's mlx5_prm.h for CREATE_CQ (neither is an installed header, hence this table);
 * every field here was checked against those structures through mlx5dv.h's DEVX_SET. */
#ifndef GSHMEMI_DEVX_PRM_H
#define GSHMEMI_DEVX_PRM_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

enum {
    PRM_CMD_CREATE_CQ = 0x400,
    PRM_CMD_CREATE_QP = 0x500,
    PRM_CMD_RST2INIT_QP = 0x502,
    PRM_CMD_INIT2RTR_QP = 0x503,
    PRM_CMD_RTR2RTS_QP = 0x504,

    PRM_QPC_ST_RC = 0x0,
    PRM_QPC_PM_STATE_MIGRATED = 0x3,
    PRM_QPC_RQ_TYPE_ZERO_LEN = 0x3,       /* no receive queue */
    PRM_QPC_ATOMIC_MODE_UP_TO_64 = 0x3,
    PRM_CQE_SIZE_64 = 0x0,
};

/* Command sizes in bytes. */
enum {
    PRM_CREATE_CQ_IN_BYTES = 0x880 / 8,
    PRM_QP_CMD_IN_BYTES = 0x880 / 8,     /* CREATE_QP and the three modifications */
    PRM_OUT_BYTES = 0x80 / 8,             /* their outputs */
};

/* Field positions: (bit offset, width). */
#define PRM_OPCODE 0x0, 16
#define PRM_OUT_STATUS 0x0, 8
#define PRM_OUT_SYNDROME 0x20, 32
#define PRM_OUT_OBJ_NUMBER 0x48, 24       /* create_cq_out.cqn, create_qp_out.qpn */
#define PRM_QP_CMD_QPN 0x48, 24           /* the modifications' QP number */
#define PRM_INIT2RTR_OPT_PARAM_MASK 0x80, 32

#define PRM_CQC_DBR_UMEM_VALID 0x86, 1
#define PRM_CQC_CQE_SZ 0x88, 3
#define PRM_CQC_CC 0x8b, 1                /* collapsed: every completion overwrites entry 0 */
#define PRM_CQC_OI 0x8e, 1                /* overrun ignore */
#define PRM_CQC_DBR_UMEM_ID 0xa0, 32
#define PRM_CQC_LOG_CQ_SIZE 0xe3, 5
#define PRM_CQC_UAR_PAGE 0xe8, 24
#define PRM_CQC_C_EQN 0x138, 8
#define PRM_CQC_LOG_PAGE_SIZE 0x143, 5
#define PRM_CQC_DBR_ADDR 0x240, 64        /* with dbr_umem_valid: the offset in that umem */
#define PRM_CQ_UMEM_OFFSET 0x280, 64
#define PRM_CQ_UMEM_ID 0x2c0, 32
#define PRM_CQ_UMEM_VALID 0x2e0, 1

#define PRM_QPC_ST 0xc8, 8
#define PRM_QPC_PM_STATE 0xd3, 2
#define PRM_QPC_PD 0xe8, 24
#define PRM_QPC_MTU 0x100, 3
#define PRM_QPC_LOG_MSG_MAX 0x103, 5
#define PRM_QPC_LOG_RQ_SIZE 0x109, 4
#define PRM_QPC_LOG_SQ_SIZE 0x111, 4
#define PRM_QPC_COUNTER_SET_ID 0x120, 8
#define PRM_QPC_UAR_PAGE 0x128, 24
#define PRM_QPC_LOG_PAGE_SIZE 0x163, 5
#define PRM_QPC_REMOTE_QPN 0x168, 24
#define PRM_QPC_ADS_PKEY_INDEX 0x190, 16
#define PRM_QPC_ADS_GRH 0x1a8, 1
#define PRM_QPC_ADS_RLID 0x1b0, 16
#define PRM_QPC_ADS_ACK_TIMEOUT 0x1c0, 5
#define PRM_QPC_ADS_SRC_ADDR_INDEX 0x1c8, 8
#define PRM_QPC_ADS_HOP_LIMIT 0x1d8, 8
#define PRM_QPC_ADS_TCLASS 0x1e4, 8
#define PRM_QPC_ADS_RGID_BYTE (0x200 / 8) /* 16 bytes: the peer's GID */
#define PRM_QPC_ADS_UDP_SPORT 0x290, 16
#define PRM_QPC_ADS_ETH_PRIO 0x2a1, 3
#define PRM_QPC_ADS_SL 0x2a4, 4
#define PRM_QPC_ADS_VHCA_PORT_NUM 0x2a8, 8
#define PRM_QPC_ADS_RMAC_BYTE (0x2b0 / 8) /* 6 bytes: rmac_47_32, then rmac_31_0 */
#define PRM_QPC_LOG_ACK_REQ_FREQ 0x440, 4
#define PRM_QPC_LOG_SRA_MAX 0x448, 3
#define PRM_QPC_RETRY_COUNT 0x44d, 3
#define PRM_QPC_RNR_RETRY 0x450, 3
#define PRM_QPC_NEXT_SEND_PSN 0x488, 24
#define PRM_QPC_CQN_SND 0x4a8, 24
#define PRM_QPC_LOG_RRA_MAX 0x548, 3
#define PRM_QPC_ATOMIC_MODE 0x54c, 4
#define PRM_QPC_RRE 0x550, 1
#define PRM_QPC_RWE 0x551, 1
#define PRM_QPC_RAE 0x552, 1
#define PRM_QPC_PAGE_OFFSET 0x554, 6
#define PRM_QPC_MIN_RNR_NAK 0x563, 5
#define PRM_QPC_CQN_RCV 0x5a8, 24
#define PRM_QPC_DBR_ADDR 0x5c0, 64
#define PRM_QPC_RQ_TYPE 0x625, 3
#define PRM_QPC_DBR_UMEM_VALID 0x743, 1
#define PRM_QPC_DBR_UMEM_ID 0x7e0, 32
#define PRM_QP_WQ_UMEM_ID 0x840, 32
#define PRM_QP_WQ_UMEM_VALID 0x860, 1

/* Sets a field (PRM_SET(cmd, PRM_QPC_PD, pdn)); a 64-bit one is two whole words. */
static inline void prm_set_bits(void *cmd, unsigned off, unsigned width, uint64_t v) {
    if (width == 64) {
        prm_set_bits(cmd, off, 32, v >> 32);
        prm_set_bits(cmd, off + 32, 32, v & 0xffffffffu);
        return;
    }
    uint32_t *w = (uint32_t *)cmd + off / 32;
    const unsigned shift = 32 - off % 32 - width;
    const uint32_t mask = (width == 32 ? 0xffffffffu : ((1u << width) - 1)) << shift;
    const uint32_t x = be32toh(*w);
    *w = htobe32((x & ~mask) | (((uint32_t)v << shift) & mask));
}
static inline uint32_t prm_get_bits(const void *cmd, unsigned off, unsigned width) {
    const uint32_t x = be32toh(((const uint32_t *)cmd)[off / 32]);
    const unsigned shift = 32 - off % 32 - width;
    return width == 32 ? x : (x >> shift) & ((1u << width) - 1);
}
#define PRM_SET_(cmd, off, width, v) prm_set_bits((cmd), (off), (width), (uint64_t)(v))
#define PRM_SET(cmd, field, v) PRM_SET_(cmd, field, v)
#define PRM_GET_(cmd, off, width) prm_get_bits((cmd), (off), (width))
#define PRM_GET(cmd, field) PRM_GET_(cmd, field)

#endif
