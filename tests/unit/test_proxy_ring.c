/* Proves the descriptor ring protocol and measures the proxy loop alone, in one process:
 *   laps     two producer threads race on an 8-slot ring (it wraps ~12500 times): each posts
 *            p operations to this PE with its own values into its own words; every word ends
 *            with its value, so no descriptor was lost, run twice, or read half-written, and
 *            retired/consumed count every ticket
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
    gshmem_proxy_chan small, big;
    EXPECT(gshmemi_proxy_ring(x, 8, NULL, &small) == 0, "8-slot ring");
    EXPECT(gshmemi_proxy_ring(x, 4096, NULL, &big) == 0, "4096-slot ring");
    EXPECT(gshmemi_proxy_start(x) == 0, "start");
    test_laps(x, &small);
    test_markers(x, &big);
    test_drain(x, &big);
    EXPECT(gshmemi_proxy_finalize(x) == 0, "finalize");
    printf("proxy_ring: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
