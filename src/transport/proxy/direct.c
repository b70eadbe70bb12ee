/* Direct mode: the provider reaches the heap itself (host memory in the CPU tests, FI_HMEM
 * registrations on clusters that have them); a record's operation is one or more fabric RMA
 * or atomic operations. Why each completes only once its effect is in target memory, and why
 * put_signal's signal waits for its data: docs/proxy.md, "Direct mode". */
#include <string.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>

#include "fabric.h"
#include "proxy_impl.h"

static const enum fi_op amo_op[GSHMEM_PROXY_AMO_COUNT] = {
    [GSHMEM_PROXY_AMO_FETCH] = FI_ATOMIC_READ, [GSHMEM_PROXY_AMO_SET] = FI_ATOMIC_WRITE,
    [GSHMEM_PROXY_AMO_SWAP] = FI_ATOMIC_WRITE, [GSHMEM_PROXY_AMO_CSWAP] = FI_CSWAP,
    [GSHMEM_PROXY_AMO_ADD] = FI_SUM,           [GSHMEM_PROXY_AMO_AND] = FI_BAND,
    [GSHMEM_PROXY_AMO_OR] = FI_BOR,            [GSHMEM_PROXY_AMO_XOR] = FI_BXOR,
};
static const char *amo_name[GSHMEM_PROXY_AMO_COUNT] = {"fetch", "set", "swap", "compare_swap",
                                                       "add", "and", "or", "xor"};

static bool amo_fetches(const gshmem_proxy_desc *d) {
    return d->amo == GSHMEM_PROXY_AMO_FETCH || d->amo == GSHMEM_PROXY_AMO_SWAP ||
           d->amo == GSHMEM_PROXY_AMO_CSWAP || (d->flags & GSHMEM_PROXY_F_FETCH);
}

/* At open: every atomic the descriptors may ask for exists on this provider, so a missing one
 * is a clear error now rather than a failed operation later. */
static gshmemi_status check_atomics(gshmemi_proxy *x) {
    struct fid_ep *ep = x->fab.ep;
    for (int a = 0; a < GSHMEM_PROXY_AMO_COUNT; a++)
        for (int w = 0; w < 2; w++) {
            enum fi_datatype dt = w ? FI_UINT64 : FI_UINT32;
            size_t count = 0;
            int r1 = a == GSHMEM_PROXY_AMO_CSWAP ? fi_compare_atomicvalid(ep, dt, amo_op[a], &count)
                                                 : fi_fetch_atomicvalid(ep, dt, amo_op[a], &count);
            int r2 = a == GSHMEM_PROXY_AMO_CSWAP || a == GSHMEM_PROXY_AMO_FETCH || a == GSHMEM_PROXY_AMO_SWAP
                         ? 0 : fi_atomicvalid(ep, dt, amo_op[a], &count);
            if (r1 || r2) {
                gshmemi_error("proxy: provider %s has no %d-bit atomic %s (%s) in direct mode: use "
                              "GSHMEM_PROXY_MODE=staged", x->fab.prov, w ? 64 : 32, amo_name[a],
                              gshmemi_fab_strerror(r1 ? r1 : r2));
                return GSHMEM_ERR_NOT_AVAILABLE;
            }
        }
    return GSHMEM_SUCCESS;
}

/* The provider reaches the heap itself: one registration, its key published with the address. */
static gshmemi_status direct_open(gshmemi_proxy *x, uint64_t *key) {
    pfabric *f = &x->fab;
    *key = gshmemi_fab_random_key(f);
    uint64_t access = FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    GSHMEMI_CHECK(gshmemi_fab_register(f, x->p.heap_base, x->p.heap_size, access, *key, &f->heap_mr,
                                       "symmetric heap"));
    if (f->info->domain_attr->mr_mode & FI_MR_PROV_KEY) *key = fi_mr_key(f->heap_mr);
    f->heap_desc = fi_mr_desc(f->heap_mr);
    return check_atomics(x);
}

/* Local descriptors: without FI_MR_LOCAL (the only mr_mode direct mode accepts) none needed,
 * but the heap's is passed where the buffer lies in it. */
static void *local_desc(gshmemi_proxy *x, uint64_t a, uint64_t n) {
    return gshmemi_heap_range(x, a, n) ? x->fab.heap_desc : NULL;
}

static int post_failed(gshmemi_proxy *x, op_rec *r, xfer *f, ssize_t ret, const char *call) {
    gshmemi_xfer_put(&x->fab, f);
    if (ret == -FI_EAGAIN) {   /* manual progress: the main loop progresses, then retries */
        r->blocked = 1;
        return -FI_EAGAIN;
    }
    gshmemi_rec_fail(x, r, GSHMEM_ERR_INTERNAL, true, "%s: %s", call, gshmemi_fab_strerror((int)ret));
    return (int)ret;
}

static void note_posted(op_rec *r, uint64_t n) {
    r->posted += n;
    r->inflight++;
    r->blocked = 0;
    r->t_last = gshmemi_proxy_now();
}

/* Writes (write=true) or reads of [laddr, +size) <-> [raddr, +size) on pe, from r->posted on,
 * in pieces of at most the provider's message size. */
static int post_rma(gshmemi_proxy *x, op_rec *r, bool write, uint64_t laddr, uint64_t raddr, uint64_t size) {
    int pe = r->d.pe;
    while (r->posted < size) {
        xfer *f = gshmemi_xfer_get(&x->fab, r, r->ticket);
        if (!f) return -FI_EAGAIN;
        uint64_t off = r->posted, len = size - off < x->fab.max_msg ? size - off : x->fab.max_msg;
        struct iovec iov = {.iov_base = (void *)(uintptr_t)(laddr + off), .iov_len = len};
        void *desc = local_desc(x, laddr + off, len);
        struct fi_rma_iov rio = {.addr = gshmemi_fab_raddr(&x->fab, pe, raddr + off), .len = len, .key = x->fab.rkey[pe]};
        struct fi_msg_rma m = {.msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = (fi_addr_t)pe,
                               .rma_iov = &rio, .rma_iov_count = 1, .context = &f->ctx};
        ssize_t ret = write ? fi_writemsg(x->fab.ep, &m, FI_COMPLETION | FI_DELIVERY_COMPLETE)
                            : fi_readmsg(x->fab.ep, &m, FI_COMPLETION);
        if (ret) return post_failed(x, r, f, ret, write ? "fi_writemsg" : "fi_readmsg");
        note_posted(r, len);
    }
    return 0;
}

/* One atomic of r at raddr: op, width, operand in r->operand (r->compare for CSWAP); a
 * fetched value lands in r->result (little endian: a 4-byte result in its low half). */
static int post_atomic(gshmemi_proxy *x, op_rec *r, uint64_t raddr, enum fi_op op, size_t size, bool fetch,
                       bool cswap) {
    if (r->posted) return 0;
    xfer *f = gshmemi_xfer_get(&x->fab, r, r->ticket);
    if (!f) return -FI_EAGAIN;
    int pe = r->d.pe;
    struct fi_ioc ioc = {.addr = &r->operand, .count = 1}, cmp = {.addr = &r->compare, .count = 1},
                  res = {.addr = &r->result, .count = 1};
    void *desc = NULL, *cdesc = NULL, *rdesc = NULL;
    struct fi_rma_ioc rio = {.addr = gshmemi_fab_raddr(&x->fab, pe, raddr), .count = 1, .key = x->fab.rkey[pe]};
    struct fi_msg_atomic m = {.msg_iov = &ioc, .desc = &desc, .iov_count = 1, .addr = (fi_addr_t)pe,
                              .rma_iov = &rio, .rma_iov_count = 1,
                              .datatype = size == 4 ? FI_UINT32 : FI_UINT64, .op = op, .context = &f->ctx};
    ssize_t ret;
    if (cswap) ret = fi_compare_atomicmsg(x->fab.ep, &m, &cmp, &cdesc, 1, &res, &rdesc, 1, FI_COMPLETION);
    else if (fetch) ret = fi_fetch_atomicmsg(x->fab.ep, &m, &res, &rdesc, 1, FI_COMPLETION);
    else ret = fi_atomicmsg(x->fab.ep, &m, FI_COMPLETION | FI_DELIVERY_COMPLETE);
    if (ret) return post_failed(x, r, f, ret, cswap ? "fi_compare_atomicmsg" : fetch ? "fi_fetch_atomicmsg"
                                                                                 : "fi_atomicmsg");
    note_posted(r, 1);
    return 0;
}

static int post_signal(gshmemi_proxy *x, op_rec *r, uint64_t addr, uint64_t value, int sig_op) {
    r->operand = value;
    return post_atomic(x, r, addr, sig_op == GSHMEM_PROXY_SIG_ADD ? FI_SUM : FI_ATOMIC_WRITE, 8, false, false);
}

static int direct_pump(gshmemi_proxy *x, op_rec *r) {
    const gshmem_proxy_desc *d = &r->d;
    switch (d->op) {
    case GSHMEM_PROXY_OP_PUT:
        return post_rma(x, r, true, d->laddr, d->raddr, d->size);
    case GSHMEM_PROXY_OP_PUT_SIGNAL:
        if (r->stage == 0) return post_rma(x, r, true, d->laddr, d->raddr, d->size);
        return post_signal(x, r, d->sig_addr, d->sig_value, d->amo);
    case GSHMEM_PROXY_OP_GET:
        return post_rma(x, r, false, d->laddr, d->raddr, d->size);
    case GSHMEM_PROXY_OP_P:
        r->operand = d->laddr;   /* the inline value; lives in the record until completion */
        return post_rma(x, r, true, (uint64_t)(uintptr_t)&r->operand, d->raddr, d->size);
    case GSHMEM_PROXY_OP_G:
        return post_rma(x, r, false, (uint64_t)(uintptr_t)&r->result, d->raddr, d->size);
    case GSHMEM_PROXY_OP_SIGNAL:
        return post_signal(x, r, d->raddr, d->laddr, d->amo);
    case GSHMEM_PROXY_OP_AMO:
        r->operand = d->laddr;
        r->compare = d->compare;
        return post_atomic(x, r, d->raddr, amo_op[d->amo], d->size, amo_fetches(d), d->amo == GSHMEM_PROXY_AMO_CSWAP);
    default:
        gshmemi_rec_fail(x, r, GSHMEM_ERR_INTERNAL, false, "operation %d reached the direct pump", d->op);
        return -FI_EINVAL;
    }
}

static void direct_stage_done(gshmemi_proxy *x, op_rec *r) {
    if (r->d.op == GSHMEM_PROXY_OP_PUT_SIGNAL && r->stage == 0) {
        r->stage = 1;          /* every data write is delivered: now the signal */
        r->posted = 0;
        gshmemi_pump_push(x, r);
        return;
    }
    if (r->d.op == GSHMEM_PROXY_OP_AMO && r->d.size == 4) r->result &= 0xffffffffull;
    gshmemi_rec_complete(x, r, 0);
}

static void direct_completion(void *ctx, xfer *f, size_t len, int err) {
    gshmemi_proxy *x = ctx;
    op_rec *r = f->rec;
    uint64_t t = f->ticket;
    (void)len;
    gshmemi_xfer_put(&x->fab, f);
    if (r->ticket != t || r->state != REC_ACTIVE) return;   /* the record already failed */
    r->inflight--;
    r->t_last = gshmemi_proxy_now();
    if (err) {
        gshmemi_rec_fail(x, r, GSHMEM_ERR_TIMEOUT, true, "error completion: %s", gshmemi_fab_strerror(err));
        return;
    }
    gshmemi_rec_progressed(x, r);
}

const struct gshmemi_proxy_mode gshmemi_proxy_direct = {
    .id = GSHMEMI_PROXY_DIRECT,
    .name = "direct",
    .caps = FI_RMA | FI_ATOMIC,
    .open = direct_open,
    .pump = direct_pump,
    .stage_done = direct_stage_done,
    .completion = direct_completion,
};
