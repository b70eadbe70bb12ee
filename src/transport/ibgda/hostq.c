/* A host poster of a NIC queue pair (hostq.h): reserve, write, publish in order, poll the
 * completion queue, collapsed or ring, as the device side does (gshmem/device/chan_nic.h). */
#include <sched.h>
#include <string.h>
#include <time.h>

#include "hostq.h"
#include "gshmem/nic_wqe.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* The entry's last 8 bytes in one load (the NIC writes them last): counter and opcode agree. */
static void entry_of(const uint8_t *e, uint16_t *counter, uint8_t *opcode, uint8_t *owner) {
    uint64_t w = __atomic_load_n((const uint64_t *)(const void *)(e + 56), __ATOMIC_ACQUIRE);
    uint8_t b[8];
    memcpy(b, &w, 8);
    *counter = (uint16_t)(b[GSHMEM_NIC_CQE_WQE_COUNTER - 56] << 8 | b[GSHMEM_NIC_CQE_WQE_COUNTER - 55]);
    *opcode = b[GSHMEM_NIC_CQE_OP_OWN - 56] >> 4;
    *owner = b[GSHMEM_NIC_CQE_OP_OWN - 56] & 1;
}

/* The block count an entry says is done (chan_nic.h, gshmemi_nic_done_of; one thread posts and
 * polls, and q->posted counts what it rang before it polls, so it bounds every entry). */
static uint64_t done_of(const gshmemi_hostq *q, uint16_t counter, uint8_t opcode, uint64_t posted) {
    const uint64_t first = gshmemi_wqe_first_of(counter, posted);
    if (opcode == GSHMEM_NIC_CQE_REQ_ERR) return first;
    uint32_t c0;
    memcpy(&c0, gshmemi_hostq_slot(q, first), 4);
    return first + gshmemi_wqe_bbs_at(__builtin_bswap32(c0), first);
}

static void saw(gshmemi_hostq *q, const uint8_t *e, uint16_t counter, uint8_t opcode) {
    if (!q->posted) return;
    const uint64_t d = done_of(q, counter, opcode, q->posted);
    if (d > q->done) q->done = d;
    if (opcode == GSHMEM_NIC_CQE_REQ_ERR && !q->failed) {
        memcpy(q->err, e, 64);
        q->failed = true;
    }
}

void gshmemi_hostq_poll(gshmemi_hostq *q) {
    uint16_t counter;
    uint8_t opcode, owner;
    if (q->cq_cnt == 1) {
        entry_of(q->cq, &counter, &opcode, &owner);
        if (opcode != GSHMEM_NIC_CQE_INVALID) saw(q, q->cq, counter, opcode);
        return;
    }
    bool took = false;
    for (;;) {
        const uint8_t *e = q->cq + (size_t)(q->cq_ci & (q->cq_cnt - 1)) * 64;
        entry_of(e, &counter, &opcode, &owner);
        if (opcode == GSHMEM_NIC_CQE_INVALID || owner != ((q->cq_ci & q->cq_cnt) ? 1 : 0)) break;
        saw(q, e, counter, opcode);
        q->cq_ci++;
        took = true;
    }
    if (took) __atomic_store_n((uint32_t *)(uintptr_t)q->cq_dbrec, __builtin_bswap32((uint32_t)(q->cq_ci & 0xffffff)),
                               __ATOMIC_RELEASE);
}

uint64_t gshmemi_hostq_reserve(gshmemi_hostq *q, unsigned nbb, double timeout) {
    const uint64_t t = q->posted;
    double t0 = 0;
    while (t + nbb - q->done > q->wqe_cnt) {
        gshmemi_hostq_poll(q);
        if (q->failed) return UINT64_MAX;
        if (t + nbb - q->done <= q->wqe_cnt) break;
        const double now = now_s();
        if (t0 == 0) t0 = now;
        else if (timeout > 0 && now - t0 > timeout) {
            gshmemi_error("host queue pair 0x%x to PE %d: no room in its send queue for %.0f s (%llu blocks posted, "
                          "%llu complete): the NIC stopped completing work requests", q->qpn, q->pe, timeout,
                          (unsigned long long)q->posted, (unsigned long long)q->done);
            return UINT64_MAX;
        }
        sched_yield();
    }
    return t;
}

void gshmemi_hostq_ring(gshmemi_hostq *q, uint64_t t, unsigned nbb) {
    uint64_t first8;
    memcpy(&first8, gshmemi_hostq_slot(q, t), 8);
    /* the WQE's stores before the record, the record before the doorbell: a NIC reads the
     * WQE once either tells it to (on a NIC's write-combining register, the full fence also
     * flushes the doorbell out) */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n((uint32_t *)(uintptr_t)&q->dbrec[1], __builtin_bswap32((uint32_t)((t + nbb) & 0xffff)),
                     __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n((uint64_t *)(uintptr_t)q->db, first8, __ATOMIC_RELAXED);   /* one 8-byte store */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    q->posted = t + nbb;
}

gshmemi_status gshmemi_hostq_wait(gshmemi_hostq *q, uint64_t t, double timeout) {
    double t0 = 0;
    while (q->done <= t) {
        if (q->failed) return GSHMEM_ERR_INTERNAL;
        gshmemi_hostq_poll(q);
        if (q->done > t) break;
        if (q->failed) return GSHMEM_ERR_INTERNAL;
        const double now = now_s();
        if (t0 == 0) t0 = now;
        else if (timeout > 0 && now - t0 > timeout) {
            gshmemi_error("host queue pair 0x%x to PE %d: work request %llu did not complete in %.0f s (%llu blocks "
                          "complete): the NIC or the PE at the other end stopped answering", q->qpn, q->pe,
                          (unsigned long long)t, timeout, (unsigned long long)q->done);
            return GSHMEM_ERR_TIMEOUT;
        }
        sched_yield();
    }
    return GSHMEM_SUCCESS;
}
