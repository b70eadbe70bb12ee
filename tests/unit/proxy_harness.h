/* Shared by the proxy transport's unit tests: PEs as forked processes (each in its own
 * network namespace "node" joined by veth when the test may create them, else on loopback),
 * an allgather over shared memory (works across namespaces), a symmetric heap at the same
 * address in every process — plain host memory in direct mode; in staged mode a PROT_NONE
 * reservation that only the memops below reach (through a shadow), like GPU memory the proxy
 * cannot dereference — and a bounded wait for every child. No CUDA anywhere. */
#ifndef GSHMEM_PROXY_HARNESS_H
#define GSHMEM_PROXY_HARNESS_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef GSHMEM_PROXY_RELAX   /* the benchmark's producers back off instead */
#define GSHMEM_PROXY_RELAX() sched_yield()   /* 2-core CI: spinning producers yield */
#endif
#include "config.h"
#include "proxy.h"

#include "unit.h"

#pragma GCC diagnostic ignored "-Wunused-function"   /* each test uses part of the harness */

#define MAXPE 8
#define GATHER_MAX 4096

/* ---- shared memory between the PEs of a job ---------------------------------------------- */
typedef struct shm_job {
    uint64_t arrive[MAXPE];               /* allgather round each PE has reached */
    uint8_t data[2][MAXPE][GATHER_MAX];   /* double-buffered by round parity */
    volatile uint64_t oob[MAXPE][16];     /* out-of-band words (litmus: not through the fabric) */
    volatile int flag[16];                /* test choreography (streaming, link down, ...) */
} shm_job;

typedef struct pe_ctx {
    shm_job *job;
    int me, n;
} pe_ctx;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* Round k of every PE: its block in data[k & 1]. A PE can be at most one round ahead of a
 * slow reader, which is still reading the other buffer. */
static gshmemi_status shm_allgather(void *ctx, const void *in, void *out, size_t len) {
    pe_ctx *c = ctx;
    if (len > GATHER_MAX) return GSHMEM_ERR_INVALID_ARG;
    uint64_t k = __atomic_load_n(&c->job->arrive[c->me], __ATOMIC_RELAXED) + 1;
    memcpy(c->job->data[k & 1][c->me], in, len);
    __atomic_store_n(&c->job->arrive[c->me], k, __ATOMIC_RELEASE);
    double deadline = now_s() + (gshmemi_cfg.BOOTSTRAP_TIMEOUT > 0 ? gshmemi_cfg.BOOTSTRAP_TIMEOUT : 30);
    for (int r = 0; r < c->n; r++) {
        while (__atomic_load_n(&c->job->arrive[r], __ATOMIC_ACQUIRE) < k) {
            if (now_s() > deadline) {
                fprintf(stderr, "PE %d: allgather round %llu: PE %d never arrived\n", c->me,
                        (unsigned long long)k, r);
                return GSHMEM_ERR_TIMEOUT;
            }
            sched_yield();
        }
        memcpy((char *)out + (size_t)r * len, c->job->data[k & 1][r], len);
    }
    return GSHMEM_SUCCESS;
}

/* A time in an out-of-band word (0 = not yet). */
static void oob_time_set(volatile uint64_t *w, double t) {
    uint64_t b;
    memcpy(&b, &t, 8);
    __atomic_store_n(w, b, __ATOMIC_RELEASE);
}
static double oob_time(volatile uint64_t *w) {
    uint64_t b = __atomic_load_n(w, __ATOMIC_ACQUIRE);
    double t;
    memcpy(&t, &b, 8);
    return t;
}

static int barrier(pe_ctx *c) {
    char one = 1, all[MAXPE];
    return shm_allgather(c, &one, all, 1);
}

/* ---- the heap and the "device" memory operations ----------------------------------------- */
static char *heap_base;       /* B: same in every process (reserved before fork) */
static size_t heap_size;
static char *shadow;          /* staged: where the "device" bytes really are */
static int staged;

static char *H(uint64_t a) { return staged ? shadow + (a - (uint64_t)(uintptr_t)heap_base) : (char *)(uintptr_t)a; }
static uint64_t A(size_t off) { return (uint64_t)(uintptr_t)heap_base + off; }
static bool in_heap(uint64_t a, size_t n) {
    uint64_t b = (uint64_t)(uintptr_t)heap_base;
    return a >= b && n <= heap_size && a - b <= heap_size - n;
}

/* Like cudaMemcpy with unified addressing: a heap ("device") address goes to the shadow,
 * any other address is host memory. */
static char *X(const void *p, size_t n) {
    uint64_t a = (uint64_t)(uintptr_t)p, b = (uint64_t)(uintptr_t)heap_base;
    if (a + n > b && a < b + heap_size && !in_heap(a, n)) return NULL;   /* straddles the heap */
    return in_heap(a, n) ? H(a) : (char *)(uintptr_t)a;
}

static int dev_copy_to(void *ctx, void *dst, const void *src, size_t n) {
    (void)ctx;
    char *d = X(dst, n);
    if (!d) return GSHMEM_ERR_INVALID_ARG;
    memcpy(d, src, n);
    return 0;
}

static int dev_copy_from(void *ctx, void *dst, const void *src, size_t n) {
    (void)ctx;
    char *s = X(src, n);
    if (!s) return GSHMEM_ERR_INVALID_ARG;
    memcpy(dst, s, n);
    return 0;
}

#define AMO_CASES(T, p, op, v, c, old)                                                                   \
    switch (op) {                                                                                        \
    case GSHMEM_PROXY_AMO_FETCH: old = __atomic_load_n((T *)p, __ATOMIC_SEQ_CST); break;                \
    case GSHMEM_PROXY_AMO_SET: case GSHMEM_PROXY_AMO_SWAP: old = __atomic_exchange_n((T *)p, (T)v, __ATOMIC_SEQ_CST); break; \
    case GSHMEM_PROXY_AMO_CSWAP: { T e = (T)c; __atomic_compare_exchange_n((T *)p, &e, (T)v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); old = e; break; } \
    case GSHMEM_PROXY_AMO_ADD: old = __atomic_fetch_add((T *)p, (T)v, __ATOMIC_SEQ_CST); break;          \
    case GSHMEM_PROXY_AMO_AND: old = __atomic_fetch_and((T *)p, (T)v, __ATOMIC_SEQ_CST); break;          \
    case GSHMEM_PROXY_AMO_OR: old = __atomic_fetch_or((T *)p, (T)v, __ATOMIC_SEQ_CST); break;            \
    case GSHMEM_PROXY_AMO_XOR: old = __atomic_fetch_xor((T *)p, (T)v, __ATOMIC_SEQ_CST); break;          \
    default: return GSHMEM_ERR_INVALID_ARG;                                                              \
    }

/* The "device" atomic: the same instructions the test's own threads use on that memory. */
static int dev_atomic(void *ctx, void *addr, int op, size_t size, uint64_t v, uint64_t c, uint64_t *old) {
    (void)ctx;
    if (!in_heap((uint64_t)(uintptr_t)addr, size)) return GSHMEM_ERR_INVALID_ARG;
    char *p = H((uint64_t)(uintptr_t)addr);
    uint64_t o = 0;
    if (size == 4) { AMO_CASES(uint32_t, p, op, v, c, o) }
    else { AMO_CASES(uint64_t, p, op, v, c, o) }
    if (old) *old = o;   /* NULL: the previous value is not wanted */
    return 0;
}

static int dev_signal(void *ctx, uint64_t *addr, int op, uint64_t v) {
    (void)ctx;
    if (!in_heap((uint64_t)(uintptr_t)addr, 8)) return GSHMEM_ERR_INVALID_ARG;
    uint64_t *p = (uint64_t *)H((uint64_t)(uintptr_t)addr);
    if (op == GSHMEM_PROXY_SIG_ADD) __atomic_fetch_add(p, v, __ATOMIC_RELEASE);
    else __atomic_store_n(p, v, __ATOMIC_RELEASE);
    return 0;
}

/* ---- queued memops: like the GPU's, they complete later --------------------------------
 * With `queued` set (mode "queued": staged with these memops), the library's own memory
 * queue (memq.c: tickets, atomic batches, old values) runs on a fake device: a thread that
 * performs the enqueued operations in order, late and at an uneven pace (random pauses), the
 * host side of a copy read or written only then. A proxy that reused a buffer, answered, or
 * signalled before its operations completed reads or sends stale bytes and the scenario's
 * checks fail; a memq that handed over an old value early, or reused a descriptor slot
 * before its batch was performed, gets wrong fetched values. */
#include <pthread.h>
#include "memq.h"

static int queued;
/* q_steady (the benchmark): no random pauses, and an idle device polls again after a yield
 * instead of a 20 us sleep, so the queue's own cost is measured, not the test's pacing */
static int q_steady;
/* q_hold: the fake device performs nothing while set (a GPU busy with other work): operations
 * pile up in the memory queue (test_proxy's amo flood) */
static int q_hold;
/* q_nocopy (the benchmark's --free-copies): copies of 4 KiB or more are queued and completed in
 * order but not performed, as a GPU's copy engines would take them off the CPU */
static int q_nocopy;
enum { QK_COPY, QK_WRITE64, QK_ATOMICS, QK_TICKET, QK_WAIT_RELAY };
/* q_relay (mode "relayq"): the memory queue also has a relay (docs/proxy.md), a second in-order queue
 * of 64-bit stores performed by a thread of its own at an uneven pace, as the library's GPU
 * relay; the stream's QK_WAIT_RELAY blocks the fake device until the relay performed n. */
static int q_relay;
#define RCAP 1024
static struct { uint64_t *addr, value; } r_ops[RCAP];
static uint64_t r_issued, r_done, q_relay_ticket;
typedef struct qop {
    int kind;
    void *dst;
    const void *src;
    uint64_t n, v;   /* bytes / value / first descriptor; n: batch size */
} qop;
#define QCAP 65536
static qop qops[QCAP];
static uint64_t q_issued, q_done;   /* enqueued (proxy thread), performed (device thread) */
static gshmemi_amo_desc q_descs[GSHMEMI_MEMQ_SLOTS];
static uint64_t q_olds[GSHMEMI_MEMQ_SLOTS], q_ticket_word;
static gshmemi_memq q_memq;

static int dev_atomic(void *ctx, void *addr, int op, size_t size, uint64_t v, uint64_t c, uint64_t *old);
static int dev_signal(void *ctx, uint64_t *addr, int op, uint64_t v);

static int q_apply(const qop *q) {
    switch (q->kind) {
    case QK_COPY: {   /* either way: X() maps a heap address to the shadow */
        char *d = X(q->dst, q->n), *s = X(q->src, q->n);
        if (!d || !s) return GSHMEM_ERR_INVALID_ARG;
        if (!q_nocopy || q->n < 4096) memcpy(d, s, q->n);
        return 0;
    }
    case QK_WRITE64: return dev_signal(NULL, (uint64_t *)q->dst, GSHMEM_SIGNAL_SET, q->v);
    case QK_ATOMICS:
        for (uint64_t i = 0; i < q->n; i++) {   /* in ring order (so one word's are in order) */
            unsigned slot = (unsigned)((q->v + i) % GSHMEMI_MEMQ_SLOTS);
            const gshmemi_amo_desc *d = &q_descs[slot];
            uint64_t old = 0;
            int st = dev_atomic(NULL, (void *)(uintptr_t)d->addr, (int)d->op, d->size, d->operand, d->compare, &old);
            if (st) return st;
            __atomic_store_n(&q_olds[slot], old, __ATOMIC_RELAXED);
        }
        return 0;
    case QK_WAIT_RELAY:
        while (__atomic_load_n(&r_done, __ATOMIC_ACQUIRE) < q->v) sched_yield();
        return 0;
    default: /* ticket: after everything before it (release) */
        __atomic_store_n(&q_ticket_word, q->v, __ATOMIC_RELEASE);
        return 0;
    }
}

/* The relay's thread: each store in order, the ticket word by a release store. */
static void *q_relay_thread(void *arg) {
    (void)arg;
    uint64_t rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
    for (;;) {
        if (r_done == __atomic_load_n(&r_issued, __ATOMIC_ACQUIRE)) {
            sched_yield();
            continue;
        }
        uint64_t *a = r_ops[r_done % RCAP].addr, v = r_ops[r_done % RCAP].value;
        if (a == &q_relay_ticket) __atomic_store_n(a, v, __ATOMIC_RELEASE);
        else if (dev_signal(NULL, a, GSHMEM_SIGNAL_SET, v)) {
            fprintf(stderr, "queued memops: relay store %llu failed\n", (unsigned long long)r_done);
            _exit(3);
        }
        __atomic_store_n(&r_done, r_done + 1, __ATOMIC_RELEASE);
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        if (rng % 4 == 0) usleep((useconds_t)(rng >> 8) % 50);
    }
    return NULL;
}

static void *q_device(void *arg) {
    (void)arg;
    uint64_t rng = 88172645463325252ull ^ (uint64_t)getpid();
    unsigned idle = 0;
    for (;;) {
        uint64_t n = __atomic_load_n(&q_issued, __ATOMIC_ACQUIRE);
        if (__atomic_load_n(&q_hold, __ATOMIC_ACQUIRE)) {
            usleep(100);
            continue;
        }
        if (q_done == n) {
            if (q_steady && idle++ < 1000) sched_yield();
            else usleep(20);
            continue;
        }
        idle = 0;
        if (q_apply(&qops[q_done % QCAP])) {
            fprintf(stderr, "queued memops: operation %llu failed when performed\n", (unsigned long long)q_done);
            _exit(3);
        }
        __atomic_store_n(&q_done, q_done + 1, __ATOMIC_RELEASE);
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        if (!q_steady && rng % 4 == 0) usleep((useconds_t)(rng >> 8) % 50);   /* an uneven pace */
    }
    return NULL;
}

static int q_push(qop q) {
    while (q_issued - __atomic_load_n(&q_done, __ATOMIC_ACQUIRE) == QCAP) sched_yield();
    qops[q_issued % QCAP] = q;
    __atomic_store_n(&q_issued, q_issued + 1, __ATOMIC_RELEASE);
    return 0;
}

static int q_copy(void *ctx, void *d, const void *s, size_t n, bool to_device) {
    (void)ctx, (void)to_device;
    return q_push((qop){.kind = QK_COPY, .dst = d, .src = s, .n = n});
}
static int q_write64(void *ctx, uint64_t *a, uint64_t v) { (void)ctx; return q_push((qop){.kind = QK_WRITE64, .dst = a, .v = v}); }
static int q_atomics(void *ctx, unsigned first, unsigned n) {
    (void)ctx;
    return q_push((qop){.kind = QK_ATOMICS, .v = first, .n = n});
}
static int q_ticket(void *ctx, uint64_t t) { (void)ctx; return q_push((qop){.kind = QK_TICKET, .v = t}); }
static int q_relay_write(void *ctx, uint64_t *a, uint64_t v) {
    (void)ctx;
    if (r_issued - __atomic_load_n(&r_done, __ATOMIC_ACQUIRE) == RCAP) return 1;   /* full: the stream */
    r_ops[r_issued % RCAP].addr = a;
    r_ops[r_issued % RCAP].value = v;
    __atomic_store_n(&r_issued, r_issued + 1, __ATOMIC_RELEASE);
    return 0;
}
static uint64_t q_relay_done(void *ctx) { (void)ctx; return __atomic_load_n(&r_done, __ATOMIC_ACQUIRE); }
static int q_wait_relay(void *ctx, uint64_t n) { (void)ctx; return q_push((qop){.kind = QK_WAIT_RELAY, .v = n}); }
/* Syncs while the proxy runs: the memory queue waited for the device (a full atomic ring),
 * which staged mode must never do (memops.room); only finalize may flush. */
static uint64_t q_syncs;
static int q_sync(void *ctx) {
    (void)ctx;
    __atomic_fetch_add(&q_syncs, 1, __ATOMIC_RELAXED);
    while (__atomic_load_n(&q_done, __ATOMIC_ACQUIRE) != q_issued) sched_yield();
    return 0;
}
static void q_describe(void *ctx, char *buf, size_t len) {
    (void)ctx;
    snprintf(buf, len, "fake device: %llu of %llu operations performed", (unsigned long long)q_done,
             (unsigned long long)q_issued);
}

/* The memops of mode "queued": memq on the fake device (its thread started here). */
static gshmemi_proxy_memops q_memops(void) {
    gshmemi_memq_backend be = {.copy = q_copy, .write64 = q_write64, .atomics = q_atomics, .ticket = q_ticket,
                               .sync = q_sync, .describe = q_describe};
    if (q_relay) {
        be.relay_write = q_relay_write;
        be.relay_done = q_relay_done;
        be.wait_relay = q_wait_relay;
    }
    gshmemi_memq_init(&q_memq, &be, q_descs, q_olds, &q_ticket_word);
    if (q_relay) gshmemi_memq_set_relay(&q_memq, &q_relay_ticket);
    static int started;   /* one device thread per process: the queue has one consumer */
    pthread_t t, r;
    if (!started++ && pthread_create(&t, NULL, q_device, NULL)) { perror("pthread_create"); _exit(2); }
    if (started == 1) pthread_detach(t);
    if (started == 1 && q_relay) {
        if (pthread_create(&r, NULL, q_relay_thread, NULL)) { perror("pthread_create"); _exit(2); }
        pthread_detach(r);
    }
    return gshmemi_memq_ops(&q_memq);
}

/* Reserve the heap's addresses before fork: every child inherits the same range. */
static void heap_reserve(size_t size) {
    heap_size = size;
    heap_base = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (heap_base == MAP_FAILED) { perror("mmap heap"); exit(2); }
}

/* In the child: direct = the heap is host memory; staged = it stays PROT_NONE (a stray
 * dereference by the proxy or the provider would crash the test) and the bytes live in the
 * shadow that only the memops and the test's "GPU" thread touch. */
static void heap_map(bool is_staged) {
    staged = is_staged;
    if (!staged) {
        if (mprotect(heap_base, heap_size, PROT_READ | PROT_WRITE)) { perror("mprotect"); _exit(2); }
        return;
    }
    shadow = mmap(NULL, heap_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (shadow == MAP_FAILED) { perror("mmap shadow"); _exit(2); }
}

/* ---- network namespaces ------------------------------------------------------------------ */
typedef struct topo {
    bool netns;
    int nodes;
    char ns[2][32], veth[2][16], ip[2][20];
} topo;

static topo T;

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...) {
    char cmd[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    char full[600];
    snprintf(full, sizeof full, "timeout 20 %s >/dev/null 2>&1", cmd);
    return system(full);
}

static void netns_cleanup(void) {
    if (!T.netns) return;
    for (int k = 0; k < 2; k++) sh("ip netns del %s", T.ns[k]);   /* the veth pair goes with them */
    T.netns = false;
}

static void on_signal(int sig) {
    netns_cleanup();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Namespaces of earlier runs that were killed before they cleaned up. */
static void remove_stale_namespaces(void) {
    DIR *d = opendir("/run/netns");
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        int pid;
        char k;
        if (sscanf(e->d_name, "gshp%d%c", &pid, &k) == 2 && kill(pid, 0) != 0 && errno == ESRCH)
            sh("ip netns del %s", e->d_name);
    }
    closedir(d);
}

/* Two namespaces joined by a veth pair, 10.231.<s>.1 and .2 (a private range only these
 * namespaces use). Falls back to loopback, saying so, when that is not permitted. */
static void netns_setup(void) {
    T.nodes = 1;
    if (getenv("PROXY_TEST_LOOPBACK")) {
        printf("proxy test: PROXY_TEST_LOOPBACK set: all PEs on loopback\n");
        return;
    }
    if (geteuid() != 0 || system("command -v ip >/dev/null 2>&1") != 0) {
        printf("proxy test: not root or no ip(8): cannot create network namespaces; falling back to loopback\n");
        return;
    }
    remove_stale_namespaces();
    int pid = (int)getpid(), s = 20 + pid % 200;
    for (int k = 0; k < 2; k++) {
        snprintf(T.ns[k], sizeof T.ns[k], "gshp%d%c", pid, 'a' + k);
        snprintf(T.veth[k], sizeof T.veth[k], "gshv%d%c", pid % 1000000, 'a' + k);
        snprintf(T.ip[k], sizeof T.ip[k], "10.231.%d.%d", s, k + 1);
    }
    T.netns = true;
    atexit(netns_cleanup);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGALRM, on_signal);
    bool ok = !sh("ip netns add %s", T.ns[0]) && !sh("ip netns add %s", T.ns[1]) &&
              !sh("ip link add %s type veth peer name %s", T.veth[0], T.veth[1]);
    for (int k = 0; ok && k < 2; k++)
        ok = !sh("ip link set %s netns %s", T.veth[k], T.ns[k]) &&
             !sh("ip -n %s addr add %s/24 dev %s", T.ns[k], T.ip[k], T.veth[k]) &&
             !sh("ip -n %s link set %s up", T.ns[k], T.veth[k]) && !sh("ip -n %s link set lo up", T.ns[k]);
    if (!ok) {
        sh("ip link del %s", T.veth[0]);
        netns_cleanup();
        printf("proxy test: creating network namespaces/veth failed (no permission?): falling back to loopback\n");
        return;
    }
    T.nodes = 2;
    printf("proxy test: PEs in network namespaces %s (%s) and %s (%s) joined by veth %s-%s\n", T.ns[0], T.ip[0],
           T.ns[1], T.ip[1], T.veth[0], T.veth[1]);
}

static int node_of(int pe, int n) { return T.nodes == 2 ? (pe < (n + 1) / 2 ? 0 : 1) : 0; }

/* In the child, before any thread exists: move into the PE's namespace, point the proxy at
 * that node's interface. */
static void enter_node(int pe, int n) {
    if (!T.netns) {
        setenv("GSHMEM_FABRIC_IFACE", "lo", 1);
        return;
    }
    int k = node_of(pe, n);
    char path[64];
    snprintf(path, sizeof path, "/run/netns/%s", T.ns[k]);
    int fd = open(path, O_RDONLY);
    if (fd < 0 || setns(fd, CLONE_NEWNET)) {
        fprintf(stderr, "PE %d: setns(%s): %s\n", pe, path, strerror(errno));
        _exit(90);
    }
    close(fd);
    setenv("GSHMEM_FABRIC_IFACE", T.veth[k], 1);
}

static void link_down(int node) { sh("ip -n %s link set %s down", T.ns[node], T.veth[node]); }
static void link_up(int node) { sh("ip -n %s link set %s up", T.ns[node], T.veth[node]); }

/* ---- jobs ------------------------------------------------------------------------------ */
typedef int (*pe_main_fn)(pe_ctx *c, void *arg);

/* Forks n PEs running fn; waits at most `limit` seconds (then kills them). watcher (may be
 * NULL) runs in the parent while they run. Returns the number of PEs that failed; exit
 * statuses in status[]. */
static int run_job(int n, pe_main_fn fn, void *arg, double limit, int *status,
                   void (*watcher)(shm_job *job, int n, pid_t *pids)) {
    shm_job *job = mmap(NULL, sizeof *job, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    memset(job, 0, sizeof *job);
    pid_t pids[MAXPE];
    fflush(stdout);
    fflush(stderr);
    for (int r = 0; r < n; r++) {
        pids[r] = fork();
        if (pids[r] == 0) {
            alarm((unsigned)limit + 5);   /* a hung child dies even if the parent is gone */
            signal(SIGTERM, SIG_DFL);
            signal(SIGINT, SIG_DFL);
            signal(SIGALRM, SIG_DFL);
            enter_node(r, n);
            pe_ctx c = {.job = job, .me = r, .n = n};
            int f = fn(&c, arg);
            fflush(stdout);
            _exit(f > 100 ? 100 : f);
        }
    }
    if (watcher) watcher(job, n, pids);
    double deadline = now_s() + limit;
    int left = n, bad = 0;
    for (int r = 0; r < n; r++) status[r] = -1;
    while (left) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p > 0) {
            for (int r = 0; r < n; r++)
                if (pids[r] == p) status[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            left--;
            continue;
        }
        if (now_s() > deadline) {
            for (int r = 0; r < n; r++)
                if (status[r] == -1) {
                    fprintf(stderr, "FAIL: PE %d did not finish within %.0f s: killed\n", r, limit);
                    kill(pids[r], SIGKILL);
                }
            deadline = now_s() + 1e9;
            continue;
        }
        usleep(2000);
    }
    for (int r = 0; r < n; r++) bad += status[r] != 0;
    munmap(job, sizeof *job);
    return bad;
}

/* Proxy for this PE over the shared-memory allgather. */
static gshmemi_proxy *make_proxy(pe_ctx *c, int mode) {
    gshmemi_proxy_params p = {
        .mype = c->me, .npes = c->n, .allgather = shm_allgather, .allgather_ctx = c,
        .heap_base = heap_base, .heap_size = heap_size, .heap_is_device = mode == GSHMEMI_PROXY_STAGED,
        .single_host = !T.netns, .mode = mode,
        .mem = {.copy_to = dev_copy_to, .copy_from = dev_copy_from, .atomic = dev_atomic, .signal = dev_signal},
    };
    if (queued) p.mem = q_memops();
    gshmemi_proxy *x = NULL;
    if (gshmemi_proxy_create(&p, &x) != GSHMEM_SUCCESS) {
        fprintf(stderr, "PE %d: gshmemi_proxy_create failed\n", c->me);
        return NULL;
    }
    return x;
}

/* ---- descriptors from the test's "GPU" thread ------------------------------------------- */
static uint64_t post(const gshmem_proxy_chan *ch, int op, int amo, int pe, uint64_t size, uint64_t raddr,
                     uint64_t laddr, uint64_t aux, uint64_t sig_value, gshmem_proxy_ret *ret) {
    gshmem_proxy_desc d = {.op = (uint8_t)op, .amo = (uint8_t)amo, .pe = pe, .size = size, .raddr = raddr,
                           .laddr = laddr, .sig_value = sig_value, .ret = (uint64_t)(uintptr_t)ret};
    d.sig_addr = aux;
    return gshmem_proxy_post(ch, &d);
}

#endif
