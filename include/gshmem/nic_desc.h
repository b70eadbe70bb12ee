/* The GPU's view of its NIC queues (GPU-initiated RDMA, "IBGDA"): one reliable-connected queue
 * pair (QP) per remote PE on an mlx5 NIC, whose send queue the GPU fills with work requests
 * (gshmem/nic_wqe.h) and rings itself, and whose completion queue it polls. Plain C: the
 * transport (src/transport/ibgda/) fills these at init, the device side
 * (gshmem/device/chan_nic.h) drives them, and the software NIC (a test device that plays the
 * hardware on the same memory) reads them. docs/ibgda.md describes the protocol.
 *
 * POST (a GPU thread, any number at once per QP; counters 64-bit, never wrap; n = wqe_cnt)
 *   1. t = atomic_add(&ctr[RESERVED], nbb)          nbb: the blocks of the WQEs posted together;
 *      the lanes of a warp that post to one QP reserve together (one add, contiguous blocks)
 *   2. wait while t + nbb - ctr[DONE] > n            room: the slots of t's lap completed
 *   3. write the WQE into sq[(t % n) * 64]           (its index field: t & 0xffff)
 *   4. wait until ctr[POSTED] == t                   every earlier WQE is written and rung
 *   5. fence; dbrec[1] = be32((t + nbb) & 0xffff)    the NIC may read WQEs below it
 *   6. fence; *db = the last WQE's first 8 bytes     the doorbell (BlueFlame register): a
 *                                                    poster may write several WQEs and ring once
 *   7. ctr[POSTED] = t + nbb                         (release: the next poster may go)
 * COMPLETION: every WQE asks for a completion (CQ_UPDATE); WQEs of one QP complete in order, so
 *   a completion entry's wqe_counter (the first basic block of the last WQE completed, 16 bits)
 *   says every WQE up to it is done. A thread that needs its WQE t done (get, g, fetching
 *   atomics, blocking puts, quiet) reads completions, extends the 16-bit counter against
 *   ctr[POSTED] + wqe_cnt (POSTED read after the entry: the NIC may complete WQEs of the poster
 *   that holds POSTED before POSTED moves past them) and raises ctr[DONE] to that WQE's first block plus its block count (2 for the
 *   8-byte masked compare-swap, read from the control segment still in its slot: the slot is
 *   reused only once DONE passed it), so DONE == POSTED once everything completed. The
 *   completion queue comes in two shapes:
 *   - collapsed (cq == NULL; the DEVX setup): one 64-byte entry `cqe` that the NIC overwrites;
 *   - ring (cq != NULL; the verbs setup, whose CQ cannot be collapsed): cq_cnt entries written
 *     in turn, entry j at cq[(j % cq_cnt) * 64] with owner bit (j / cq_cnt) & 1. Readers claim
 *     entries in order by compare-and-swap on ctr[CQ_CI] and tell the NIC how far they read in
 *     cq_dbrec[0] (be32, 24 bits); cq_cnt >= 2 * wqe_cnt, so the ring never overruns while
 *     the readers keep up (at most wqe_cnt + 1 entries are ever unread). `cqe` is then a
 *     64-byte copy, in GPU memory, of the first error entry a reader met (so every waiter, not
 *     only the one that read it, sees the QP failed).
 * ERRORS: an entry whose opcode (op_own >> 4) is 13 (requester error) carries a syndrome; the
 *   waiter reports the PE, the operation, the address and the syndrome and ends the job. */
#ifndef GSHMEM_NIC_DESC_H
#define GSHMEM_NIC_DESC_H

#include <stdint.h>

enum {
    GSHMEM_NIC_CTR_RESERVED = 0,   /* basic blocks claimed */
    GSHMEM_NIC_CTR_POSTED = 8,     /* basic blocks written and rung, in order */
    GSHMEM_NIC_CTR_DONE = 16,      /* basic blocks known complete (a lower bound) */
    GSHMEM_NIC_CTR_CQ_CI = 24,     /* ring CQ: entries read (claimed in order) */
    GSHMEM_NIC_CTR_WORDS = 32      /* each counter on a 64-byte line of its own */
};

/* Completion entry fields (64-byte CQE, big-endian where multi-byte). */
enum {
    GSHMEM_NIC_CQE_BYTE_CNT = 44,      /* be32: bytes the WQE moved */
    GSHMEM_NIC_CQE_SYNDROME = 55,      /* requester error: syndrome byte */
    GSHMEM_NIC_CQE_VENDOR_SYNDROME = 54,
    GSHMEM_NIC_CQE_QPN = 56,           /* be32: the WQE's opcode << 24 | QP number */
    GSHMEM_NIC_CQE_WQE_COUNTER = 60,   /* be16: index of the last WQE completed */
    GSHMEM_NIC_CQE_OP_OWN = 63         /* opcode << 4 | owner */
};
#define GSHMEM_NIC_CQE_REQ 0u          /* requester completion */
#define GSHMEM_NIC_CQE_REQ_ERR 13u     /* requester error */
#define GSHMEM_NIC_CQE_INVALID 15u     /* nothing completed yet */

/* One QP as the GPU drives it. */
typedef struct gshmem_nic_qp {
    uint8_t *sq;                 /* wqe_cnt basic blocks of 64 bytes */
    uint32_t *dbrec;             /* doorbell record: [1] is the send counter (be32) */
    uint64_t *db;                /* doorbell register mapped for the GPU (the software NIC, or a
                                    CPU that rings for the GPU: a word of host memory) */
    uint8_t *cqe;                /* collapsed: the completion queue's one 64-byte entry; ring:
                                    the copy of its first error entry */
    uint64_t *ctr;               /* GPU memory: GSHMEM_NIC_CTR_WORDS words */
    uint32_t qpn;                /* QP number (24 bits) */
    uint32_t wqe_cnt;            /* send queue size in basic blocks, a power of two <= 16384 */
    uint8_t *cq;                 /* ring CQ: cq_cnt entries of 64 bytes; NULL: collapsed */
    uint32_t *cq_dbrec;          /* ring CQ: [0] entries read (be32, 24 bits) */
    uint32_t cq_cnt;             /* ring CQ: entries, a power of two >= 2 * wqe_cnt */
    int32_t pe;                  /* the PE at the other end (for messages) */
} gshmem_nic_qp;

/* Registered heap chunks at most (the heap grows geometrically: far fewer in practice). */
#define GSHMEM_NIC_MAX_CHUNKS 64

/* The NIC channel of a PE: its QPs and the memory keys. The symmetric heap is registered chunk
 * by chunk as it is mapped (and unregistered as a chunk is unmapped); a heap address's chunk is
 * found from the chunks' offset ranges, which are the same on every PE (chunks come and go
 * collectively, each at the same offset and table entry everywhere), and its key is the chunk's
 * at the target (rkey) or here (lkey). The tables are GPU memory the transport updates as the
 * heap changes, without publishing the device state again. */
typedef struct gshmem_nic_chan {
    gshmem_nic_qp *qps;          /* [npes], valid where the PE's route is the NIC */
    const uint32_t *rkeys;       /* [npes * GSHMEM_NIC_MAX_CHUNKS] */
    const uint32_t *lkeys;       /* [GSHMEM_NIC_MAX_CHUNKS] */
    /* [2 * GSHMEM_NIC_MAX_CHUNKS + 1]: entry c's heap offsets [range[2c], range[2c + 1]) (an
     * unused entry: [0, 0)), then the number of entries in use, counting from 0 (an upper bound:
     * unused entries may sit below it) */
    const uint64_t *chunk_range;
    uint32_t n_chunks;           /* entries of the tables: GSHMEM_NIC_MAX_CHUNKS */
    uint32_t pad_;
    /* Registered GPU memory where fetched values (g, fetching atomics) land: 8 bytes per
     * hardware thread slot (SM, warp slot, lane). A fetch is blocking, so a thread has at most
     * one in flight, and the slot of a resident thread is its own. */
    uint8_t *fetch;
    uint32_t fetch_lkey;
    uint32_t fetch_slots;        /* SMs * 64 warp slots * 32 lanes, rounded up to a power of two */
    /* Registered local regions: device memory of this PE outside the heap that its device calls
     * pass as the local buffer of a put or get (a team's landing buffer for data of other nodes).
     * Laid out as chunk_range, by address: [2 * n_local + 1], entry i's addresses [local_range[2i],
     * local_range[2i + 1]) ([0, 0): unused), then the entries in use; local_keys[i] its lkey. */
    const uint64_t *local_range;
    const uint32_t *local_keys;
    uint32_t n_local;
    uint32_t pad2_;
} gshmem_nic_chan;

#endif
