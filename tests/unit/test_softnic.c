/* Proves the software NIC (src/transport/ibgda/softnic.c) plays an mlx5 NIC on a CPU producer's
 * queues: work requests built with gshmem/nic_wqe.h into a host send queue, published with the
 * doorbell record and the doorbell (src/transport/ibgda/hostq.c, or by hand where a test breaks
 * the protocol on purpose), are performed on host memory standing for the target PEs (a fake
 * fabric that completes operations at once or later, in random order across queue pairs), with
 * completions in both shapes (collapsed, ring). It shows
 * - every operation gshmem posts does what OpenSHMEM says: puts (one segment, gather lists,
 *   inline 1..12 bytes), gets (into host and registered memory), NOPs, every atomic at 4 and 8
 *   bytes through gshmemi_wqe_amo, and the masked forms no executor operation fits (field-wise
 *   add, masked compare-swap) against a model of their definitions;
 * - completions: one entry per signaled WQE, unsignaled ones covered by the next, the byte
 *   count, the index, in order, on the ring's owner bits;
 * - the 16-bit index wraps at 0xffff (70000+ WQEs through a 64-slot queue, two-block WQEs across
 *   the ring's end and across index 0xffff -> 0x0000);
 * - every check answers with the error entry a NIC writes (syndrome, the check's code, the
 *   failing index) after the WQEs before it completed, and nothing after it is performed: bad
 *   opcode, opmod, ds, index, QP number (WQE and doorbell), a doorbell ahead of its record or
 *   not the WQE's bytes, an unrung WQE left alone, send-queue overrun, inline length, lkey and
 *   local bounds, rkey and remote bounds (a byte count of 0 is 2 GiB), atomic size and alignment,
 *   fence mode, a WQE reaching past the record, an executor failure, a ring CQ overrun;
 * - adversarial mode: fetched values land late, so a write that reads a get's buffer without a
 *   fence sends stale bytes (caught), and never with the fence; completions come in batches,
 *   yet every one comes;
 * - on its own thread (as in the library) a stream of requests completes while the poster only
 *   waits, and a drain returns once everything published has completed.
 * A failure names the case, the field and both values. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hostq.h"
#include "softnic.h"
#include "unit.h"
#include "gshmem/nic_wqe.h"

#define NPES 3                    /* this is PE 0; queue pairs to PEs 1 and 2 */
#define HEAP (64 << 10)
#define LKEY_HEAP 0x00001100u     /* PE 0's heap: registered, not host-written by the NIC */
#define LKEY_FETCH 0x00002200u    /* PE 0's fetch buffer: the NIC places values there */
#define RKEY(pe) (0x00003300u + (uint32_t)(pe))

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}
static uint64_t rng = 0x243f6a8885a308d3ull;
static uint64_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* ---- memory of the PEs ---------------------------------------------------------------- */
static uint8_t *heap[NPES];       /* heap[0]: local; heap[1..]: the targets */
static uint8_t *fetchbuf;         /* local, host-written */

/* ---- the fake fabric ------------------------------------------------------------------- */
typedef struct pend {
    gshmem_proxy_desc d;
    gshmem_proxy_ret *ret;
    uint64_t tag;
} pend;
static struct {
    bool later;                   /* complete in fab_run, in random order, not at start */
    pend q[64];
    int n;
    uint64_t tags, started;
    uint64_t fail_raddr;          /* an operation at this address fails with fail_status */
    int fail_status;
    int bad;                      /* descriptors that break the executor's contract */
} fab;

static uint64_t load(const void *p, uint32_t size) {
    uint64_t v = 0;
    memcpy(&v, p, size);
    return v;
}
static void store(void *p, uint64_t v, uint32_t size) { memcpy(p, &v, size); }

/* OpenSHMEM's atomics on a word (the executor's contract, proxy_desc.h) */
static uint64_t amo_apply(int op, void *p, uint32_t size, uint64_t v, uint64_t c) {
    const uint64_t m = size == 4 ? 0xffffffffull : ~0ull;
    const uint64_t old = load(p, size);
    uint64_t nv = old;
    switch (op) {
    case GSHMEM_PROXY_AMO_FETCH: break;
    case GSHMEM_PROXY_AMO_SET:
    case GSHMEM_PROXY_AMO_SWAP: nv = v; break;
    case GSHMEM_PROXY_AMO_CSWAP: nv = old == (c & m) ? v : old; break;
    case GSHMEM_PROXY_AMO_ADD: nv = old + v; break;
    case GSHMEM_PROXY_AMO_AND: nv = old & v; break;
    case GSHMEM_PROXY_AMO_OR: nv = old | v; break;
    case GSHMEM_PROXY_AMO_XOR: nv = old ^ v; break;
    default: fab.bad++;
    }
    store(p, nv & m, size);
    return old;
}

static void perform(const gshmem_proxy_desc *d, gshmem_proxy_ret *r, uint64_t tag) {
    uint64_t value = 0;
    int status = 0;
    if (d->pe < 1 || d->pe >= NPES) fab.bad++;
    if (d->raddr == fab.fail_raddr && fab.fail_status) {
        status = fab.fail_status;
    } else {
        void *ra = (void *)(uintptr_t)d->raddr, *la = (void *)(uintptr_t)d->laddr;
        switch (d->op) {
        case GSHMEM_PROXY_OP_PUT: memcpy(ra, la, d->size); break;
        case GSHMEM_PROXY_OP_GET: memcpy(la, ra, d->size); break;
        case GSHMEM_PROXY_OP_P: memcpy(ra, &d->laddr, d->size); break;
        case GSHMEM_PROXY_OP_G: memcpy(&value, ra, d->size); break;
        case GSHMEM_PROXY_OP_AMO:
            if (!(d->flags & GSHMEM_PROXY_F_FETCH)) fab.bad++;
            value = amo_apply(d->amo, ra, (uint32_t)d->size, d->laddr, d->compare);
            break;
        default: fab.bad++;
        }
    }
    r->value = value;
    r->status = status;
    __atomic_store_n(&r->done, tag + 1, __ATOMIC_RELEASE);
}

static int fab_start(void *ctx, const gshmem_proxy_desc *d, gshmem_proxy_ret *ret, uint64_t *tag) {
    (void)ctx;
    *tag = fab.tags++;
    fab.started++;
    if (!fab.later) {
        perform(d, ret, *tag);
        return 0;
    }
    if (fab.n == 64) {
        fab.bad++;
        return GSHMEM_ERR_INTERNAL;
    }
    fab.q[fab.n++] = (pend){.d = *d, .ret = ret, .tag = *tag};
    return 0;
}

static void fab_run(void) {
    while (fab.n) {
        int i = (int)(rnd() % (uint64_t)fab.n);
        pend p = fab.q[i];
        fab.q[i] = fab.q[--fab.n];
        perform(&p.d, p.ret, p.tag);
    }
}

/* ---- a NIC with queue pairs to PEs 1 and 2 ------------------------------------------ */
typedef struct rig {
    gshmemi_softnic *nic;
    gshmemi_hostq q[NPES];
    uint8_t *mem[NPES];           /* each QP's queues: sq, cq */
    uint32_t rec[NPES][16];       /* [0..1] doorbell record, [8] CQ record */
    uint64_t db[NPES][8];
} rig;

static void rig_open(rig *r, uint32_t wqe_cnt, bool ring_cq, const gshmemi_sn_chaos *chaos) {
    memset(r, 0, sizeof *r);
    gshmemi_sn_params p = {.mype = 0, .npes = NPES, .exec = {.ctx = NULL, .start = fab_start}};
    if (chaos) p.chaos = *chaos;
    if (gshmemi_sn_create(&p, &r->nic)) {
        fprintf(stderr, "gshmemi_sn_create failed\n");
        exit(2);
    }
    for (int pe = 1; pe < NPES; pe++) {
        const uint32_t cq_cnt = ring_cq ? 2 * wqe_cnt : 1;
        r->mem[pe] = aligned_alloc(64, (size_t)(wqe_cnt + cq_cnt) * 64);
        memset(r->mem[pe], 0, (size_t)(wqe_cnt + cq_cnt) * 64);
        gshmemi_hostq *q = &r->q[pe];
        q->sq = r->mem[pe];
        q->wqe_cnt = wqe_cnt;
        q->qpn = 0x000a00u + (uint32_t)pe * 0x101;
        q->dbrec = r->rec[pe];
        q->db = r->db[pe];
        q->cq = r->mem[pe] + (size_t)wqe_cnt * 64;
        q->cq_cnt = cq_cnt;
        q->cq_dbrec = &r->rec[pe][8];
        q->pe = pe;
        gshmemi_sn_qp sq = {.sq = q->sq, .wqe_cnt = wqe_cnt, .qpn = q->qpn, .dbrec = q->dbrec, .db = q->db,
                            .cq = q->cq, .cq_cnt = cq_cnt, .cq_dbrec = q->cq_dbrec, .pe = pe, .what = "test QP"};
        if (gshmemi_sn_add_qp(r->nic, &sq)) {
            fprintf(stderr, "gshmemi_sn_add_qp failed\n");
            exit(2);
        }
        gshmemi_sn_reg_remote(r->nic, pe, (uint64_t)(uintptr_t)heap[pe], HEAP, RKEY(pe));
    }
    gshmemi_sn_reg_local(r->nic, (uint64_t)(uintptr_t)heap[0], HEAP, LKEY_HEAP, false);
    gshmemi_sn_reg_local(r->nic, (uint64_t)(uintptr_t)fetchbuf, 4096, LKEY_FETCH, true);
    fab.n = 0;
    fab.fail_status = 0;
}

static void rig_close(rig *r) {
    gshmemi_sn_destroy(r->nic);
    for (int pe = 1; pe < NPES; pe++) free(r->mem[pe]);
}

/* Runs NIC and fabric until WQE t of the QP to pe completed (true) or failed (false). */
static bool run_until(rig *r, int pe, uint64_t t, double seconds) {
    gshmemi_hostq *q = &r->q[pe];
    const double end = now_s() + seconds;
    while (now_s() < end) {
        gshmemi_hostq_poll(q);
        if (q->done > t) return true;
        if (q->failed) return false;
        gshmemi_sn_progress(r->nic);
        fab_run();
    }
    return false;
}
static void spin(rig *r, int turns) {
    for (int i = 0; i < turns; i++) {
        gshmemi_sn_progress(r->nic);
        fab_run();
    }
}

static uint64_t A(const void *p) { return (uint64_t)(uintptr_t)p; }

/* The next nbb blocks once free (running the NIC meanwhile); UINT64_MAX once the QP failed. */
static uint64_t reserve(rig *r, int pe, unsigned nbb) {
    gshmemi_hostq *q = &r->q[pe];
    for (long i = 0; i < 1000000; i++) {
        gshmemi_hostq_poll(q);
        if (q->failed) return UINT64_MAX;
        if (q->posted + nbb - q->done <= q->wqe_cnt) return gshmemi_hostq_reserve(q, nbb, 1.0);
        spin(r, 1);
    }
    EXPECT(0, "no room in the send queue to PE %d", pe);
    return UINT64_MAX;
}
#define SLOT(r, pe, t) gshmemi_hostq_slot(&(r)->q[pe], (t))
#define QPN(r, pe) ((r)->q[pe].qpn)
#define RING(r, pe, t, nbb) gshmemi_hostq_ring(&(r)->q[pe], (t), (nbb))

static uint64_t put(rig *r, int pe, uint64_t raddr, uint64_t laddr, uint32_t n, uint8_t flags) {
    uint64_t t = reserve(r, pe, 1);
    gshmemi_wqe_put(SLOT(r, pe, t), (uint16_t)t, QPN(r, pe), flags, raddr, RKEY(pe), laddr, LKEY_HEAP, n);
    RING(r, pe, t, 1);
    return t;
}
static uint64_t get(rig *r, int pe, uint64_t raddr, uint64_t laddr, uint32_t lkey, uint32_t n, uint8_t flags) {
    uint64_t t = reserve(r, pe, 1);
    gshmemi_wqe_get(SLOT(r, pe, t), (uint16_t)t, QPN(r, pe), flags, raddr, RKEY(pe), laddr, lkey, n);
    RING(r, pe, t, 1);
    return t;
}
static uint64_t nop(rig *r, int pe, uint8_t flags) {
    uint64_t t = reserve(r, pe, 1);
    gshmemi_wqe_nop(SLOT(r, pe, t), (uint16_t)t, QPN(r, pe), flags);
    RING(r, pe, t, 1);
    return t;
}
static uint64_t amo(rig *r, int pe, int op, uint32_t size, uint64_t raddr, uint64_t res, uint64_t v, uint64_t c) {
    unsigned nbb = (unsigned)gshmemi_wqe_amo_bbs(op, size);
    uint64_t t = reserve(r, pe, nbb);
    int got = gshmemi_wqe_amo(SLOT(r, pe, t), SLOT(r, pe, t + 1), (uint16_t)t, QPN(r, pe), GSHMEMI_WQE_CQ_UPDATE,
                              op, size, raddr, RKEY(pe), res, LKEY_FETCH, v, c);
    EXPECT(got == (int)nbb, "gshmemi_wqe_amo wrote %d blocks, gshmemi_wqe_amo_bbs said %u", got, nbb);
    RING(r, pe, t, nbb);
    return t;
}

/* The old value a NIC placed: 4 bytes big-endian, 8 bytes in host order. */
static uint64_t fetched(const uint8_t *p, uint32_t size) {
    if (size == 8) return load(p, 8);
    return (uint64_t)p[0] << 24 | (uint64_t)p[1] << 16 | (uint64_t)p[2] << 8 | p[3];
}

/* The entry the poster saw last: opcode, counter, byte count. */
static void entry(const rig *r, int pe, uint8_t *opcode, uint16_t *counter, uint32_t *bytes) {
    const gshmemi_hostq *q = &r->q[pe];
    const uint8_t *e = q->cq_cnt == 1 ? q->cq : q->cq + (size_t)((q->cq_ci - 1) & (q->cq_cnt - 1)) * 64;
    *opcode = e[63] >> 4;
    *counter = (uint16_t)(e[60] << 8 | e[61]);
    *bytes = (uint32_t)e[44] << 24 | (uint32_t)e[45] << 16 | (uint32_t)e[46] << 8 | e[47];
}

/* ---- operations that succeed -------------------------------------------------------- */
static const char *amo_names[8] = {"fetch", "set", "swap", "cswap", "add", "and", "or", "xor"};

static void test_operations(bool ring_cq, bool later) {
    const char *shape = ring_cq ? "ring CQ" : "collapsed CQ";
    rig r;
    rig_open(&r, 64, ring_cq, NULL);
    fab.later = later;
    const uint8_t cq = GSHMEMI_WQE_CQ_UPDATE;
    for (int pe = 1; pe < NPES; pe++) {
        uint8_t *h = heap[pe], *l = heap[0];
        /* put of 1 .. 4096 bytes */
        for (uint32_t n = 1; n <= 4096; n = n * 3 + 1) {
            for (uint32_t i = 0; i < n; i++) l[i] = (uint8_t)(rnd() | 1);
            memset(h + 100, 0, n + 1);
            uint64_t t = put(&r, pe, A(h + 100), A(l), n, cq);
            EXPECT(run_until(&r, pe, t, 5), "%s: put of %u bytes to PE %d did not complete", shape, n, pe);
            EXPECT(!memcmp(h + 100, l, n) && h[100 + n] == 0, "%s: put of %u bytes to PE %d: data differs", shape, n, pe);
            uint8_t op;
            uint16_t c;
            uint32_t bytes;
            entry(&r, pe, &op, &c, &bytes);
            EXPECT(op == GSHMEM_NIC_CQE_REQ && c == (uint16_t)t && bytes == n,
                   "%s: put's completion: opcode %u counter %u bytes %u, expected 0 %u %u", shape, op, c, bytes,
                   (unsigned)(uint16_t)t, n);
        }
        /* a gather list of two segments */
        {
            uint64_t t = reserve(&r, pe, 1);
            uint8_t *w = SLOT(&r, pe, t);
            gshmemi_wqe_put(w, (uint16_t)t, QPN(&r, pe), cq, A(h + 300), RKEY(pe), A(l), LKEY_HEAP, 5);
            w[7] = 4;   /* ds 4: a second data segment */
            gshmemi_wqe_set_data((gshmemi_mlx5_data_seg *)(w + 48), 7, LKEY_HEAP, A(l + 1000));
            memcpy(l, "abcde", 5);
            memcpy(l + 1000, "FGHIJKL", 7);
            RING(&r, pe, t, 1);
            EXPECT(run_until(&r, pe, t, 5) && !memcmp(h + 300, "abcdeFGHIJKL", 12),
                   "%s: a put with a two-segment gather list", shape);
        }
        /* inline puts of 1..12 bytes, and signals (8 bytes inline) */
        for (uint32_t n = 1; n <= GSHMEMI_WQE_INLINE_MAX; n++) {
            uint8_t v[12];
            for (uint32_t i = 0; i < 12; i++) v[i] = (uint8_t)(0x40 + n + i);
            memset(h + 500, 0xee, 16);
            uint64_t t = reserve(&r, pe, 1);
            gshmemi_wqe_put_inline(SLOT(&r, pe, t), (uint16_t)t, QPN(&r, pe), cq, A(h + 500), RKEY(pe), v, n);
            RING(&r, pe, t, 1);
            EXPECT(run_until(&r, pe, t, 5) && !memcmp(h + 500, v, n) && h[500 + n] == 0xee,
                   "%s: inline put of %u bytes", shape, n);
        }
        /* gets: small ones into the fetch buffer (the NIC places them), larger into the heap */
        for (uint32_t n = 1; n <= 2048; n = 2 * n + 1) {
            for (uint32_t i = 0; i < n; i++) h[700 + i] = (uint8_t)rnd();
            const bool small = n <= 8;
            uint8_t *dst = small ? fetchbuf + 64 : l + 4000;
            memset(dst, 0, n);
            uint64_t t = get(&r, pe, A(h + 700), A(dst), small ? LKEY_FETCH : LKEY_HEAP, n, cq);
            EXPECT(run_until(&r, pe, t, 5) && !memcmp(dst, h + 700, n), "%s: get of %u bytes into %s", shape, n,
                   small ? "the fetch buffer" : "the heap");
        }
        /* NOPs */
        uint64_t t = nop(&r, pe, cq);
        EXPECT(run_until(&r, pe, t, 5), "%s: a NOP did not complete", shape);
        /* every atomic, 4 and 8 bytes */
        for (uint32_t size = 4; size <= 8; size += 4) {
            const uint64_t m = size == 4 ? 0xffffffffull : ~0ull;
            for (int op = 0; op < 8; op++) {
                for (int k = 0; k < 3; k++) {
                    uint8_t *word = h + 1024 + 8 * op;
                    const uint64_t init = rnd() & m, v = rnd() & m;
                    const uint64_t c = k == 0 ? init : rnd() & m;   /* cswap: a match, then misses */
                    store(word, init, size);
                    memset(fetchbuf, 0x5a, 8);
                    uint64_t tt = amo(&r, pe, op, size, A(word), A(fetchbuf), v, c);
                    EXPECT(run_until(&r, pe, tt, 5), "%s: %s of %u bytes did not complete", shape, amo_names[op], size);
                    uint64_t want = init;
                    switch (op) {
                    case GSHMEMI_AMO_SET: case GSHMEMI_AMO_SWAP: want = v; break;
                    case GSHMEMI_AMO_CSWAP: want = init == c ? v : init; break;
                    case GSHMEMI_AMO_ADD: want = (init + v) & m; break;
                    case GSHMEMI_AMO_AND: want = init & v; break;
                    case GSHMEMI_AMO_OR: want = init | v; break;
                    case GSHMEMI_AMO_XOR: want = init ^ v; break;
                    }
                    const uint64_t got = load(word, size), old = fetched(fetchbuf, size);
                    EXPECT(got == want && old == init,
                           "%s: %s of %u bytes (init %#llx, value %#llx, compare %#llx): word %#llx, expected %#llx; "
                           "old %#llx, expected %#llx", shape, amo_names[op], size, (unsigned long long)init,
                           (unsigned long long)v, (unsigned long long)c, (unsigned long long)got,
                           (unsigned long long)want, (unsigned long long)old, (unsigned long long)init);
                }
            }
            /* masked forms no executor operation fits: field-wise add (byte fields) and a masked
             * compare-swap with partial masks, against the definitions */
            for (int k = 0; k < 16; k++) {
                uint8_t *word = h + 2048;
                const uint64_t init = rnd() & m, add = rnd() & m;
                store(word, init, size);
                uint64_t tt = reserve(&r, pe, 1);
                gshmemi_wqe_masked_fa(SLOT(&r, pe, tt), (uint16_t)tt, QPN(&r, pe), cq, A(word), RKEY(pe),
                                      A(fetchbuf), LKEY_FETCH, size, add, 0x8080808080808080ull & m);
                RING(&r, pe, tt, 1);
                EXPECT(run_until(&r, pe, tt, 5), "%s: masked fetch-add did not complete", shape);
                uint64_t want = 0;
                for (uint32_t b = 0; b < size; b++)   /* each byte a field: no carry between them */
                    want |= (((init >> 8 * b) + (add >> 8 * b)) & 0xff) << 8 * b;
                EXPECT(load(word, size) == want && fetched(fetchbuf, size) == init,
                       "%s: masked fetch-add of %u bytes, byte fields: %#llx + %#llx gave %#llx, expected %#llx",
                       shape, size, (unsigned long long)init, (unsigned long long)add,
                       (unsigned long long)load(word, size), (unsigned long long)want);
                const uint64_t swap = rnd() & m, smask = rnd() & m, cmask = 0xff00ff00ff00ff00ull & m;
                const uint64_t cmp = k & 1 ? init : (rnd() & m);
                store(word, init, size);
                const unsigned nbb = size == 8 ? 2 : 1;
                tt = reserve(&r, pe, nbb);
                gshmemi_wqe_masked_cs(SLOT(&r, pe, tt), SLOT(&r, pe, tt + 1), (uint16_t)tt, QPN(&r, pe), cq, A(word),
                                      RKEY(pe), A(fetchbuf), LKEY_FETCH, size, swap, cmp, smask, cmask);
                RING(&r, pe, tt, nbb);
                EXPECT(run_until(&r, pe, tt, 5), "%s: masked compare-swap did not complete", shape);
                want = ((init ^ cmp) & cmask) == 0 ? ((init & ~smask) | (swap & smask)) & m : init;
                EXPECT(load(word, size) == want && fetched(fetchbuf, size) == init,
                       "%s: masked compare-swap of %u bytes gave %#llx, expected %#llx", shape, size,
                       (unsigned long long)load(word, size), (unsigned long long)want);
            }
        }
        /* unsignaled WQEs: the next signaled one's entry covers them */
        {
            memset(h + 3000, 0, 16);
            memcpy(l + 3000, "0123456789abcdef", 16);
            put(&r, pe, A(h + 3000), A(l + 3000), 4, 0);
            put(&r, pe, A(h + 3004), A(l + 3004), 4, 0);
            uint64_t t1 = put(&r, pe, A(h + 3008), A(l + 3008), 8, cq);
            EXPECT(run_until(&r, pe, t1, 5) && !memcmp(h + 3000, l + 3000, 16),
                   "%s: two unsignaled puts and a signaled one", shape);
            uint8_t op;
            uint16_t c;
            uint32_t bytes;
            entry(&r, pe, &op, &c, &bytes);
            EXPECT(c == (uint16_t)t1, "%s: the entry after unsignaled WQEs names %u, expected %u", shape, c,
                   (unsigned)(uint16_t)t1);
        }
    }
    /* both QPs at once, completed in random order by the fabric */
    fab.later = true;
    uint64_t last[NPES] = {0};
    store(heap[1] + 2560, 0, 8);
    store(heap[2] + 2560, 0, 8);
    for (int i = 0; i < 200; i++) {
        int pe = 1 + i % 2;
        last[pe] = amo(&r, pe, GSHMEMI_AMO_ADD, 8, A(heap[pe] + 2560), A(fetchbuf + 16 * pe), 1, 0);
        if (i % 16 == 15) spin(&r, 4);
    }
    EXPECT(run_until(&r, 1, last[1], 5) && run_until(&r, 2, last[2], 5) && load(heap[1] + 2560, 8) == 100 &&
           load(heap[2] + 2560, 8) == 100, "%s: 100 adds on each of two QPs gave %llu and %llu", shape,
           (unsigned long long)load(heap[1] + 2560, 8), (unsigned long long)load(heap[2] + 2560, 8));
    int vendor = 0;
    EXPECT(gshmemi_sn_error(r.nic, &vendor, NULL) == 0, "%s: the NIC reported an error (code %d)", shape, vendor);
    rig_close(&r);
    fab.later = false;
}

/* ---- the 16-bit index wraps ---------------------------------------------------------------- */
static void test_wrap(bool ring_cq) {
    rig r;
    rig_open(&r, 64, ring_cq, NULL);
    const int pe = 1;
    uint8_t *word = heap[pe] + 4096;
    store(word, 0, 8);
    uint64_t bits = 0, t = 0, n = 0;
    /* NOPs up to 0xfffe, then a two-block OR at 0xffff (its second block is 0x0000) */
    while (r.q[pe].posted < 0xffff) {
        t = nop(&r, pe, r.q[pe].posted % 7 == 0 ? GSHMEMI_WQE_CQ_UPDATE : 0);
        n++;
        if (n % 16 == 0) spin(&r, 2);
    }
    t = amo(&r, pe, GSHMEMI_AMO_OR, 8, A(word), A(fetchbuf), 1ull << 5, 0);
    bits |= 1ull << 5;
    EXPECT(t == 0xffff, "the OR was to start at 0xffff, starts at %#llx", (unsigned long long)t);
    EXPECT(run_until(&r, pe, t, 10), "%s: the two-block WQE at index 0xffff did not complete",
           ring_cq ? "ring CQ" : "collapsed CQ");
    uint8_t op;
    uint16_t c;
    uint32_t bytes;
    entry(&r, pe, &op, &c, &bytes);
    EXPECT(c == 0xffff && op == GSHMEM_NIC_CQE_REQ, "completion of WQE 0xffff: counter %#x opcode %u", c, op);
    /* then on past the wrap: two-block WQEs across the ring's end too */
    for (int i = 0; i < 5000; i++) {
        if (i % 3 == 0) {
            t = amo(&r, pe, GSHMEMI_AMO_OR, 8, A(word), A(fetchbuf), 1ull << (i % 64), 0);
            bits |= 1ull << (i % 64);
        } else {
            t = nop(&r, pe, GSHMEMI_WQE_CQ_UPDATE);
        }
        if (i % 8 == 0) spin(&r, 2);
    }
    EXPECT(run_until(&r, pe, t, 10) && load(word, 8) == bits, "%s: after the wrap: word %#llx, expected %#llx",
           ring_cq ? "ring CQ" : "collapsed CQ", (unsigned long long)load(word, 8), (unsigned long long)bits);
    EXPECT(r.q[pe].posted > 0x10000 + 5000, "posted only %llu blocks", (unsigned long long)r.q[pe].posted);
    EXPECT(gshmemi_sn_error(r.nic, NULL, NULL) == 0, "the NIC reported an error across the wrap");
    rig_close(&r);
}

/* ---- every check ------------------------------------------------------------------------- */
enum { B_OPCODE, B_OPMOD, B_OPMOD_FA, B_OPMOD_MASKED, B_EXT16, B_DS_ATOMIC, B_DS_ZERO, B_INDEX, B_QPN, B_DB_QPN,
       B_DB_EARLY, B_DB_BYTES, B_OVERRUN, B_INLINE_LONG, B_INLINE_READ, B_LKEY, B_LBOUND, B_RKEY, B_RBOUND,
       B_2GB, B_ATOMIC_SIZE, B_ATOMIC_ALIGN, B_RESULT_GPU, B_FENCE, B_SPAN, B_EXEC, B_CASES };
static const char *const bad_name[B_CASES] = {
    "opcode SEND", "RDMA write with opmod 1", "ATOMIC_FA with opmod 8", "masked atomic with opmod 7",
    "16-byte extended atomic", "4-byte atomic with ds 5", "ds 0", "index gap", "QP number in the WQE",
    "QP number in the doorbell", "doorbell before its record", "doorbell not the WQE's bytes", "send-queue overrun",
    "inline data longer than ds", "RDMA read with inline data", "unknown lkey", "local range past its region",
    "unknown rkey", "remote range past its region", "byte count 0 (2 GiB)", "atomic data of 4 bytes for 8",
    "misaligned atomic", "atomic result into memory the NIC cannot write", "fence mode 5",
    "WQE reaching past the doorbell record", "executor failure"};

static void test_bad(int which, bool ring_cq) {
    rig r;
    rig_open(&r, 16, ring_cq, NULL);
    const int pe = 2;
    const uint8_t cq = GSHMEMI_WQE_CQ_UPDATE;
    uint8_t *h = heap[pe], *l = heap[0];
    /* a good WQE first: it completes normally before the bad one fails */
    memset(h, 0, 64);
    memcpy(l, "good", 4);
    uint64_t good = put(&r, pe, A(h), A(l), 4, cq);
    EXPECT(run_until(&r, pe, good, 5), "%s: the good put before did not complete", bad_name[which]);
    store(h + 256, 7, 8);
    uint64_t t = r.q[pe].posted;
    int synd = 0, vendor = 0;
    const uint64_t before = gshmemi_sn_performed(r.nic);
    uint8_t *w = SLOT(&r, pe, t);
    bool rang = true, own_db = false;   /* own_db: rung with the WQE's bytes before they were broken */
    uint8_t first8[8];
#define GOOD_PUT() gshmemi_wqe_put(w, (uint16_t)t, QPN(&r, pe), cq, A(h + 64), RKEY(pe), A(l), LKEY_HEAP, 8)
#define GOOD_FA8() gshmemi_wqe_fetch_add(w, (uint16_t)t, QPN(&r, pe), cq, A(h + 256), RKEY(pe), A(fetchbuf), LKEY_FETCH, 8, 1)
    switch (which) {
    case B_OPCODE: GOOD_PUT(); w[3] = 0x0a; synd = 0x02; vendor = GSHMEMI_SN_BAD_OPCODE; break;
    case B_OPMOD: GOOD_PUT(); w[0] = 1; synd = 0x02; vendor = GSHMEMI_SN_BAD_OPMOD; break;
    case B_OPMOD_FA: GOOD_FA8(); w[0] = 8; synd = 0x02; vendor = GSHMEMI_SN_BAD_OPMOD; break;
    case B_OPMOD_MASKED:
        gshmemi_wqe_xor(w, (uint16_t)t, QPN(&r, pe), cq, A(h + 256), RKEY(pe), A(fetchbuf), LKEY_FETCH, 4, 1);
        w[0] = 7; synd = 0x02; vendor = GSHMEMI_SN_BAD_OPMOD; break;
    case B_EXT16:
        gshmemi_wqe_xor(w, (uint16_t)t, QPN(&r, pe), cq, A(h + 256), RKEY(pe), A(fetchbuf), LKEY_FETCH, 4, 1);
        w[0] = 0x0a; synd = 0x02; vendor = GSHMEMI_SN_UNMODELLED; break;
    case B_DS_ATOMIC: GOOD_FA8(); w[7] = 5; t = reserve(&r, pe, 2); RING(&r, pe, t, 2); rang = false;
        synd = 0x02; vendor = GSHMEMI_SN_BAD_DS; break;
    case B_DS_ZERO: gshmemi_wqe_nop(w, (uint16_t)t, QPN(&r, pe), cq); w[7] = 0; synd = 0x02; vendor = GSHMEMI_SN_BAD_DS; break;
    case B_INDEX: GOOD_PUT(); memcpy(first8, w, 8); own_db = true; w[2] ^= 1; synd = 0x02;
        vendor = GSHMEMI_SN_BAD_INDEX; break;
    case B_QPN: GOOD_PUT(); memcpy(first8, w, 8); own_db = true; w[6] ^= 0x40; synd = 0x02;
        vendor = GSHMEMI_SN_BAD_QPN; break;
    case B_DB_QPN: {
        GOOD_PUT();
        t = reserve(&r, pe, 1);
        uint8_t b[8];
        memcpy(b, w, 8);
        b[5] ^= 1;
        __atomic_store_n((uint32_t *)(uintptr_t)&r.q[pe].dbrec[1], __builtin_bswap32((uint32_t)(t + 1) & 0xffff),
                         __ATOMIC_RELEASE);
        memcpy((void *)r.q[pe].db, b, 8);
        r.q[pe].posted = t + 1;
        rang = false;
        synd = 0x02;
        vendor = GSHMEMI_SN_BAD_QPN;
        break;
    }
    case B_DB_EARLY:   /* the doorbell of a WQE whose record is not written */
        GOOD_PUT();
        t = reserve(&r, pe, 1);
        memcpy((void *)r.q[pe].db, w, 8);
        r.q[pe].posted = t + 1;
        rang = false;
        synd = 0x02;
        vendor = GSHMEMI_SN_BAD_DOORBELL;
        break;
    case B_DB_BYTES: {
        GOOD_PUT();
        t = reserve(&r, pe, 1);
        uint8_t b[8];
        memcpy(b, w, 8);
        b[7] ^= 2;   /* a different ds than the WQE's */
        __atomic_store_n((uint32_t *)(uintptr_t)&r.q[pe].dbrec[1], __builtin_bswap32((uint32_t)(t + 1) & 0xffff),
                         __ATOMIC_RELEASE);
        memcpy((void *)r.q[pe].db, b, 8);
        r.q[pe].posted = t + 1;
        rang = false;
        synd = 0x02;
        vendor = GSHMEMI_SN_BAD_DOORBELL;
        break;
    }
    case B_OVERRUN: {   /* publish a whole lap more than completed, without waiting */
        const uint64_t t0 = t;
        for (uint32_t i = 0; i <= r.q[pe].wqe_cnt; i++) {
            uint8_t *s = SLOT(&r, pe, t0 + i);
            gshmemi_wqe_nop(s, (uint16_t)(t0 + i), QPN(&r, pe), cq);
        }
        memcpy((void *)r.q[pe].db, SLOT(&r, pe, t0 + r.q[pe].wqe_cnt), 8);   /* (the slot holds the last) */
        __atomic_store_n((uint32_t *)(uintptr_t)&r.q[pe].dbrec[1],
                         __builtin_bswap32((uint32_t)(t0 + r.q[pe].wqe_cnt + 1) & 0xffff), __ATOMIC_RELEASE);
        r.q[pe].posted = t0 + r.q[pe].wqe_cnt + 1;
        rang = false;
        synd = 0x02;
        vendor = GSHMEMI_SN_OVERRUN;
        break;
    }
    case B_INLINE_LONG: {
        uint8_t v[12] = {0};
        gshmemi_wqe_put_inline(w, (uint16_t)t, QPN(&r, pe), cq, A(h + 64), RKEY(pe), v, 12);
        w[35] = 13;   /* 13 bytes claimed, 12 fit ds 3 */
        synd = 0x01;
        vendor = GSHMEMI_SN_BAD_INLINE;
        break;
    }
    case B_INLINE_READ: {
        uint8_t v[4] = {0};
        gshmemi_wqe_put_inline(w, (uint16_t)t, QPN(&r, pe), cq, A(h + 64), RKEY(pe), v, 4);
        w[3] = GSHMEMI_MLX5_OPCODE_RDMA_READ;
        synd = 0x02;
        vendor = GSHMEMI_SN_BAD_INLINE;
        break;
    }
    case B_LKEY:
        gshmemi_wqe_put(w, (uint16_t)t, QPN(&r, pe), cq, A(h + 64), RKEY(pe), A(l), 0x7777, 8);
        synd = 0x04; vendor = GSHMEMI_SN_BAD_LKEY; break;
    case B_LBOUND:
        gshmemi_wqe_put(w, (uint16_t)t, QPN(&r, pe), cq, A(h + 64), RKEY(pe), A(l + HEAP - 4), LKEY_HEAP, 8);
        synd = 0x04; vendor = GSHMEMI_SN_LOCAL_BOUNDS; break;
    case B_RKEY:
        gshmemi_wqe_put(w, (uint16_t)t, QPN(&r, pe), cq, A(h + 64), RKEY(1), A(l), LKEY_HEAP, 8);   /* PE 1's key */
        synd = 0x13; vendor = GSHMEMI_SN_BAD_RKEY; break;
    case B_RBOUND:
        gshmemi_wqe_put(w, (uint16_t)t, QPN(&r, pe), cq, A(h + HEAP - 1), RKEY(pe), A(l), LKEY_HEAP, 2);
        synd = 0x13; vendor = GSHMEMI_SN_REMOTE_BOUNDS; break;
    case B_2GB:
        gshmemi_wqe_get(w, (uint16_t)t, QPN(&r, pe), cq, A(h), RKEY(pe), A(l), LKEY_HEAP, 0);
        synd = 0x04; vendor = GSHMEMI_SN_LOCAL_BOUNDS; break;
    case B_ATOMIC_SIZE: GOOD_FA8(); w[51] = 4; synd = 0x01; vendor = GSHMEMI_SN_ATOMIC_SIZE; break;
    case B_ATOMIC_ALIGN:
        gshmemi_wqe_fetch_add(w, (uint16_t)t, QPN(&r, pe), cq, A(h + 260), RKEY(pe), A(fetchbuf), LKEY_FETCH, 8, 1);
        synd = 0x12; vendor = GSHMEMI_SN_ATOMIC_ALIGN; break;
    case B_RESULT_GPU:
        gshmemi_wqe_fetch_add(w, (uint16_t)t, QPN(&r, pe), cq, A(h + 256), RKEY(pe), A(l + 64), LKEY_HEAP, 8, 1);
        synd = 0x02; vendor = GSHMEMI_SN_UNMODELLED; break;
    case B_FENCE: GOOD_PUT(); w[11] = 5 << 5 | cq; synd = 0x02; vendor = GSHMEMI_SN_BAD_FENCE; break;
    case B_SPAN: GOOD_PUT(); w[7] = 5; synd = 0x02; vendor = GSHMEMI_SN_SPAN; break;   /* ds 5: 2 blocks */
    case B_EXEC:
        GOOD_PUT();
        fab.fail_raddr = A(h + 64);
        fab.fail_status = GSHMEM_ERR_TIMEOUT;
        synd = 0x15;
        vendor = GSHMEMI_SN_EXEC_FAILED;
        break;
    }
    if (own_db) {
        t = reserve(&r, pe, 1);
        __atomic_store_n((uint32_t *)(uintptr_t)&r.q[pe].dbrec[1], __builtin_bswap32((uint32_t)(t + 1) & 0xffff),
                         __ATOMIC_RELEASE);
        memcpy((void *)r.q[pe].db, first8, 8);
        r.q[pe].posted = t + 1;
    } else if (rang) {
        t = reserve(&r, pe, 1);
        RING(&r, pe, t, 1);
    }
    spin(&r, 50);   /* the NIC sees this doorbell before the next one replaces it */
    /* a good WQE after it: never performed (the QP is in error) */
    if (which != B_OVERRUN) {
        uint64_t after = reserve(&r, pe, 1);
        if (after != UINT64_MAX) {
            gshmemi_wqe_fetch_add(SLOT(&r, pe, after), (uint16_t)after, QPN(&r, pe), cq, A(h + 256), RKEY(pe),
                                  A(fetchbuf), LKEY_FETCH, 8, 100);
            RING(&r, pe, after, 1);
        }
    }
    const bool ok = run_until(&r, pe, r.q[pe].posted - 1, 2);
    gshmemi_hostq *q = &r.q[pe];
    EXPECT(!ok && q->failed, "%s: no error completion", bad_name[which]);
    if (q->failed) {
        const uint16_t c = (uint16_t)(q->err[60] << 8 | q->err[61]);
        EXPECT(q->err[55] == synd && q->err[54] == vendor && (q->err[63] >> 4) == GSHMEM_NIC_CQE_REQ_ERR,
               "%s: error entry: syndrome %#x (expected %#x), check %d (expected %d), opcode %u", bad_name[which],
               q->err[55], synd, q->err[54], vendor, q->err[63] >> 4);
        EXPECT(c == (uint16_t)t, "%s: the error entry names WQE %u, expected %u", bad_name[which], c,
               (unsigned)(uint16_t)t);
        const uint32_t qpn = (uint32_t)q->err[57] << 16 | (uint32_t)q->err[58] << 8 | q->err[59];
        EXPECT(qpn == QPN(&r, pe), "%s: the error entry names QP %#x", bad_name[which], qpn);
    }
    EXPECT(q->done == good + 1, "%s: done %llu, expected the good WQE (%llu) and nothing more", bad_name[which],
           (unsigned long long)q->done, (unsigned long long)good + 1);
    EXPECT(load(h + 256, 8) == 7, "%s: a WQE after the failed one was performed (word %llu)", bad_name[which],
           (unsigned long long)load(h + 256, 8));
    EXPECT(gshmemi_sn_performed(r.nic) == before, "%s: %llu work requests performed after the good one",
           bad_name[which], (unsigned long long)(gshmemi_sn_performed(r.nic) - before));
    int v2 = 0;
    EXPECT(gshmemi_sn_error(r.nic, &v2, NULL) == synd && v2 == vendor, "%s: gshmemi_sn_error says %d/%d",
           bad_name[which], gshmemi_sn_error(r.nic, NULL, NULL), v2);
    fab.fail_raddr = 0;
    fab.fail_status = 0;
    rig_close(&r);
}

/* A WQE whose doorbell was never rung stays unread, like on a NIC. */
static void test_unrung(void) {
    rig r;
    rig_open(&r, 16, false, NULL);
    const int pe = 1;
    memset(heap[pe], 0, 16);
    memcpy(heap[0], "unrung!!", 8);
    uint64_t t = reserve(&r, pe, 1);
    gshmemi_wqe_put(SLOT(&r, pe, t), (uint16_t)t, QPN(&r, pe), GSHMEMI_WQE_CQ_UPDATE, A(heap[pe]), RKEY(pe),
                    A(heap[0]), LKEY_HEAP, 8);
    __atomic_store_n((uint32_t *)(uintptr_t)&r.q[pe].dbrec[1], __builtin_bswap32(1), __ATOMIC_RELEASE);
    r.q[pe].posted = 1;
    spin(&r, 1000);
    EXPECT(load(heap[pe], 8) == 0, "a WQE with a record but no doorbell was performed");
    memcpy((void *)r.q[pe].db, SLOT(&r, pe, t), 8);
    EXPECT(run_until(&r, pe, t, 5) && !memcmp(heap[pe], "unrung!!", 8), "the WQE did not run once rung");
    rig_close(&r);
}

/* Ring CQ: readers that stop reading make the NIC stop with an overrun, not overwrite. */
static void test_cq_overrun(void) {
    rig r;
    rig_open(&r, 16, true, NULL);
    const int pe = 1;
    gshmemi_hostq *q = &r.q[pe];
    /* post and complete, reading entries without telling the NIC (the record stays 0) */
    uint64_t i;
    for (i = 0; i < 2 * q->wqe_cnt + 4; i++) {
        uint64_t t = q->posted;
        gshmemi_wqe_nop(SLOT(&r, pe, t), (uint16_t)t, q->qpn, GSHMEMI_WQE_CQ_UPDATE);
        RING(&r, pe, t, 1);
        q->done = t + 1;   /* the poster's room: as if it had read the entry */
        spin(&r, 3);
        if (gshmemi_sn_error(r.nic, NULL, NULL)) break;
    }
    int vendor = 0;
    EXPECT(gshmemi_sn_error(r.nic, &vendor, NULL) == 0x02 && vendor == GSHMEMI_SN_CQ_OVERRUN && i == 2 * q->wqe_cnt,
           "ring CQ overrun: error %d/%d after %llu completions, expected the %u-th to find no room",
           gshmemi_sn_error(r.nic, NULL, NULL), vendor, (unsigned long long)i, 2 * q->wqe_cnt + 1);
    rig_close(&r);
}

/* ---- adversarial mode ---------------------------------------------------------------------- */
/* A get into a buffer, then a put from that buffer: without a fence the put may read the buffer
 * before the get's bytes landed (they land late), with GSHMEMI_WQE_FENCE never. */
static int stale_writes(bool chaos_on, bool fence, int rounds) {
    gshmemi_sn_chaos ch = {.on = chaos_on, .seed = 12345, .max_delay_us = 20, .late_us = 400, .cqe_batch = 4,
                           .cqe_delay_us = 300};
    rig r;
    rig_open(&r, 64, false, &ch);
    const int pe = 1;
    uint8_t *src = heap[pe] + 8192, *dst = heap[pe] + 8200, *buf = fetchbuf + 128;
    int stale = 0;
    for (int i = 1; i <= rounds; i++) {
        store(src, (uint64_t)i, 8);
        get(&r, pe, A(src), A(buf), LKEY_FETCH, 8, 0);
        uint64_t t = reserve(&r, pe, 1);
        gshmemi_wqe_put(SLOT(&r, pe, t), (uint16_t)t, QPN(&r, pe), GSHMEMI_WQE_CQ_UPDATE | (fence ? GSHMEMI_WQE_FENCE : 0),
                        A(dst), RKEY(pe), A(buf), LKEY_FETCH, 8);
        RING(&r, pe, t, 1);
        if (!run_until(&r, pe, t, 5)) {
            EXPECT(0, "adversarial mode: round %d did not complete", i);
            break;
        }
        stale += load(dst, 8) != (uint64_t)i;
    }
    rig_close(&r);
    return stale;
}

static void test_chaos(void) {
    const int rounds = 200;
    int s = stale_writes(true, false, rounds);
    EXPECT(s > 0, "adversarial mode: a put reading a get's buffer without a fence never saw stale bytes in %d rounds "
           "(late fetched values not modelled)", rounds);
    s = stale_writes(true, true, rounds);
    EXPECT(s == 0, "adversarial mode: with the fence, %d of %d puts sent stale bytes", s, rounds);
    s = stale_writes(false, false, rounds);
    EXPECT(s == 0, "without adversarial mode: %d of %d puts sent stale bytes", s, rounds);

    /* batched completions: three signaled NOPs get no entry while the batch waits ... */
    gshmemi_sn_chaos ch = {.on = true, .seed = 99, .cqe_batch = 8, .cqe_delay_us = 300000};
    rig r;
    rig_open(&r, 64, false, &ch);
    const int pe = 2;
    for (int i = 0; i < 3; i++) nop(&r, pe, GSHMEMI_WQE_CQ_UPDATE);
    spin(&r, 200);
    gshmemi_hostq_poll(&r.q[pe]);
    EXPECT(r.q[pe].done == 0, "batched completions: an entry came after 3 of 8 (done %llu)",
           (unsigned long long)r.q[pe].done);
    /* ... the eighth brings one covering all, and a lone one comes after the delay */
    uint64_t t = 0;
    for (int i = 0; i < 5; i++) t = nop(&r, pe, GSHMEMI_WQE_CQ_UPDATE);
    EXPECT(run_until(&r, pe, t, 5) && r.q[pe].done == 8, "batched completions: done %llu after 8",
           (unsigned long long)r.q[pe].done);
    const double t0 = now_s();
    t = nop(&r, pe, GSHMEMI_WQE_CQ_UPDATE);
    EXPECT(run_until(&r, pe, t, 5), "batched completions: a lone completion never came");
    const double waited = now_s() - t0;
    EXPECT(waited > 0.25, "batched completions: a lone completion came after %.3f s, before the batch's delay", waited);
    rig_close(&r);
}

/* The NIC on its own thread (as in the library): a stream of work requests completes while the
 * poster only waits; then requests left for the drain complete before it returns. */
static void test_thread(void) {
    rig r;
    rig_open(&r, 64, true, NULL);
    const int pe = 1;
    uint8_t *word = heap[pe] + 12288;
    store(word, 0, 8);
    if (gshmemi_sn_start(r.nic)) {
        EXPECT(0, "gshmemi_sn_start failed");
        rig_close(&r);
        return;
    }
    gshmemi_hostq *q = &r.q[pe];
    uint64_t t = 0;
    for (int i = 0; i < 3000; i++) {
        t = gshmemi_hostq_reserve(q, 1, 5.0);
        if (t == UINT64_MAX) break;
        gshmemi_wqe_fetch_add(gshmemi_hostq_slot(q, t), (uint16_t)t, q->qpn, i % 5 == 4 ? GSHMEMI_WQE_CQ_UPDATE : 0,
                              A(word), RKEY(pe), A(fetchbuf), LKEY_FETCH, 8, 1);
        gshmemi_hostq_ring(q, t, 1);
    }
    EXPECT(t != UINT64_MAX && gshmemi_hostq_wait(q, t, 5.0) == GSHMEM_SUCCESS && load(word, 8) == 3000,
           "on its thread: 3000 adds gave %llu", (unsigned long long)load(word, 8));
    for (int i = 0; i < 10; i++) t = nop(&r, pe, GSHMEMI_WQE_CQ_UPDATE);
    EXPECT(gshmemi_sn_drain(r.nic, 5.0), "the drain did not finish");
    gshmemi_hostq_poll(q);
    EXPECT(q->done == t + 1, "after the drain: done %llu, expected %llu", (unsigned long long)q->done,
           (unsigned long long)t + 1);
    rig_close(&r);
}

int main(void) {
    for (int pe = 0; pe < NPES; pe++) heap[pe] = aligned_alloc(4096, HEAP);
    fetchbuf = aligned_alloc(4096, 4096);
    for (int ring = 0; ring < 2; ring++) {
        test_operations(ring, false);
        test_operations(ring, true);
        test_wrap(ring);
        for (int b = 0; b < B_CASES; b++) test_bad(b, ring);
    }
    test_unrung();
    test_cq_overrun();
    test_thread();
    test_chaos();
    EXPECT(fab.bad == 0, "the software NIC gave the executor %d descriptors outside its contract", fab.bad);
    printf("test_softnic: %d passed, %d failed\n", passed, failed);
    for (int pe = 0; pe < NPES; pe++) free(heap[pe]);
    free(fetchbuf);
    return failed ? 1 : 0;
}
