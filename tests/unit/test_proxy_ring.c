/* Proves the descriptor ring protocol and measures the proxy loop alone, in one process:
 *   laps     two producer threads race on an 8-slot ring (it wraps ~12500 times): each posts
 *            p operations to this PE with its own values into its own words; every word ends
 *            with its value, so no descriptor was lost, run twice, or read half-written, and
 *            retired/consumed count every ticket
 *   owned    four producer threads share an 8-slot ring whose completion slots the ring owns
 *            (the library's GPU rings): each does fetch_add(1) on one word through
 *            rets[t % 8] and acknowledges; the fetched values are exactly 0..N-1, so no answer
 *            was overwritten before its producer read it (the slot is reused only after ack)
 *   markers  a QUIET marker's slot is answered only once every earlier ticket retired
 *   drain    one producer thread posts no-op descriptors as fast as it can; the rate one proxy
 *            drains them at is printed (target: >= 5 million/s; the test fails below 1
 *            million/s, a regression on any machine) */
#include <pthread.h>
#include <stdio.h>

#include "proxy_harness.h"

#define LAP_PER_THREAD 50000
#define DRAIN_N 20000000ull

typedef struct producer {
    gshmem_proxy_chan *ch;
    int id;
} producer;

static void *lap_producer(void *arg) {
    producer *p = arg;
    for (uint64_t i = 0; i < LAP_PER_THREAD; i++) {
        uint64_t word = A(((uint64_t)p->id * LAP_PER_THREAD + i) * 8);
        post(p->ch, GSHMEM_PROXY_OP_P, 0, 0, 8, word, (uint64_t)p->id << 32 | (i + 1), 0, 0, NULL);
    }
    return NULL;
}

static void test_laps(gshmemi_proxy *x, gshmem_proxy_chan *ch) {
    pthread_t th[2];
    producer p[2] = {{ch, 0}, {ch, 1}};
    double t0 = now_s();
    for (int k = 0; k < 2; k++) pthread_create(&th[k], NULL, lap_producer, &p[k]);
    for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
    int st = gshmem_proxy_quiet(ch);
    EXPECT(st == 0, "laps: quiet returned %d", st);
    uint64_t total = 2 * LAP_PER_THREAD;
    EXPECT(ch->ctrl->retired == total && ch->ctrl->head == total, "laps: retired %llu head %llu, expected %llu",
           (unsigned long long)ch->ctrl->retired, (unsigned long long)ch->ctrl->head, (unsigned long long)total);
    int wrong = 0;
    for (int id = 0; id < 2; id++)
        for (uint64_t i = 0; i < LAP_PER_THREAD; i++) {
            uint64_t got = *(uint64_t *)H(A((id * LAP_PER_THREAD + i) * 8)), want = (uint64_t)id << 32 | (i + 1);
            if (got != want && wrong++ < 5)
                fprintf(stderr, "FAIL: laps: producer %d descriptor %llu: word = %#llx, expected %#llx\n", id,
                        (unsigned long long)i, (unsigned long long)got, (unsigned long long)want);
        }
    EXPECT(wrong == 0, "laps: %d words wrong", wrong);
    printf("proxy ring: %llu p descriptors from 2 producers through an 8-slot ring (%llu laps) in %.2f s: all "
           "executed once, intact\n", (unsigned long long)total, (unsigned long long)total / 8, now_s() - t0);
    (void)x;
}

#define OWNED_PER_THREAD 20000
#define OWNED_THREADS 4
typedef struct owned_producer {
    gshmem_proxy_chan *ch;
    uint64_t word;
    uint64_t *got;
    int bad;
} owned_producer;

static void *owned_producer_main(void *arg) {
    owned_producer *p = arg;
    for (int i = 0; i < OWNED_PER_THREAD; i++) {
        gshmem_proxy_desc d = {.op = GSHMEM_PROXY_OP_AMO, .amo = GSHMEM_PROXY_AMO_ADD,
                               .flags = GSHMEM_PROXY_F_FETCH, .pe = 0, .size = 8, .raddr = p->word,
                               .laddr = 1};
        uint64_t t = gshmem_proxy_claim(p->ch);
        if (t == UINT64_MAX) { p->bad++; return NULL; }
        gshmem_proxy_ret *r = gshmem_proxy_ret_of(p->ch, t);
        d.ret = (uint64_t)(uintptr_t)r;
        gshmem_proxy_publish(p->ch, t, &d);
        if (gshmem_proxy_wait_ret(r, t)) p->bad++;
        p->got[i] = r->value;
        gshmem_proxy_ack(r, t);
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_owned(gshmemi_proxy *x, gshmem_proxy_chan *ch) {
    (void)x;
    const int n = OWNED_THREADS * OWNED_PER_THREAD;
    uint64_t *got = calloc((size_t)n, sizeof *got);
    uint64_t word = A(12 << 20);
    *(uint64_t *)H(word) = 0;
    owned_producer p[OWNED_THREADS];
    pthread_t th[OWNED_THREADS];
    for (int k = 0; k < OWNED_THREADS; k++) {
        p[k] = (owned_producer){.ch = ch, .word = word, .got = got + k * OWNED_PER_THREAD};
        pthread_create(&th[k], NULL, owned_producer_main, &p[k]);
    }
    int bad = 0;
    for (int k = 0; k < OWNED_THREADS; k++) {
        pthread_join(th[k], NULL);
        bad += p[k].bad;
    }
    qsort(got, (size_t)n, sizeof *got, cmp_u64);
    int wrong = 0;
    for (int i = 0; i < n; i++) wrong += got[i] != (uint64_t)i;
    EXPECT(bad == 0 && wrong == 0 && *(uint64_t *)H(word) == (uint64_t)n,
           "owned: %d failed, %d fetched values not a permutation of 0..%d, word %llu", bad, wrong, n - 1,
           (unsigned long long)*(uint64_t *)H(word));
    printf("proxy ring: %d fetch_adds from %d threads through an 8-slot ring with ring-owned completion "
           "slots: every answer read before its slot was reused\n", n, OWNED_THREADS);
    free(got);
}

/* A marker behind a slow operation (a 4 MiB get) is answered only after it. */
static void test_markers(gshmemi_proxy *x, gshmem_proxy_chan *ch) {
    (void)x;
    for (int k = 0; k < 20; k++) {
        gshmem_proxy_ret g = {0}, q = {0};
        uint64_t tg = post(ch, GSHMEM_PROXY_OP_GET, 0, 0, 4 << 20, A(1 << 20), A(6 << 20), 0, 0, &g);
        uint64_t tq = post(ch, GSHMEM_PROXY_OP_QUIET, 0, 0, 0, 0, 0, 0, 0, &q);
        gshmem_proxy_wait_ret(&q, tq);
        uint64_t done = __atomic_load_n(&g.done, __ATOMIC_ACQUIRE);
        EXPECT(done == tg + 1, "marker %d: answered while the get before it was not (get done %llu, expected %llu)",
               k, (unsigned long long)done, (unsigned long long)tg + 1);
        EXPECT(ch->ctrl->retired >= tq + 1, "marker %d: answered before it retired", k);
    }
}

static void *drain_producer(void *arg) {
    gshmem_proxy_chan *ch = arg;
    gshmem_proxy_desc d = {.op = GSHMEM_PROXY_OP_NOP};
    for (uint64_t i = 0; i < DRAIN_N; i++) gshmem_proxy_post(ch, &d);
    return NULL;
}

static void test_drain(gshmemi_proxy *x, gshmem_proxy_chan *ch) {
    uint64_t before = gshmemi_proxy_consumed(x);
    pthread_t th;
    double t0 = now_s();
    pthread_create(&th, NULL, drain_producer, ch);
    pthread_join(th, NULL);
    int st = gshmem_proxy_quiet(ch);
    double dt = now_s() - t0, rate = (double)DRAIN_N / dt;
    uint64_t consumed = gshmemi_proxy_consumed(x) - before;
    EXPECT(st == 0 && consumed == DRAIN_N, "drain: quiet %d, consumed %llu of %llu", st,
           (unsigned long long)consumed, DRAIN_N);
    printf("proxy ring: drain rate %.2f million no-op descriptors/s (%llu from one producer thread, one proxy, "
           "%llu-slot ring, %.2f s): target >= 5 million/s %s\n", rate / 1e6, DRAIN_N,
           (unsigned long long)ch->n_slots, dt, rate >= 5e6 ? "met" : "MISSED on this machine");
    EXPECT(rate >= 1e6, "drain: %.2f million/s is below 1 million/s", rate / 1e6);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    alarm(300);
    setenv("GSHMEM_FABRIC_IFACE", "lo", 1);
    gshmemi_config_load(&gshmemi_cfg);
    heap_reserve(16 << 20);
    heap_map(false);
    shm_job *job = calloc(1, sizeof *job);
    pe_ctx c = {.job = job, .me = 0, .n = 1};
    T.netns = false;
    gshmemi_proxy *x = make_proxy(&c, GSHMEMI_PROXY_DIRECT);
    EXPECT(x != NULL, "proxy creation failed");
    if (!x) return 1;
    gshmem_proxy_chan small, big, owned;
    EXPECT(gshmemi_proxy_ring(x, 8, NULL, false, &small) == 0, "8-slot ring");
    EXPECT(gshmemi_proxy_ring(x, 4096, NULL, true, &big) == 0, "4096-slot ring");
    EXPECT(gshmemi_proxy_ring(x, 8, NULL, true, &owned) == 0, "8-slot ring with its own ret slots");
    EXPECT(gshmemi_proxy_start(x) == 0, "start");
    test_laps(x, &small);
    test_owned(x, &owned);
    test_markers(x, &big);
    test_drain(x, &big);
    EXPECT(gshmemi_proxy_finalize(x) == 0, "finalize");
    printf("proxy_ring: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
