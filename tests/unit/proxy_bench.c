/* Measures the proxy transport on the CPU, where no GPU is needed: 2 forked PEs on loopback,
 * a CPU thread of PE 0 (or many) playing the GPU producers, PE 1 serving. In the same run the
 * raw libfabric floor (bench/fabric_baseline, same provider and interface) is measured, so
 * each line carries a ratio. Modes: queued (staged mode, the library's memory queue on the
 * fake device of proxy_harness.h, here at a steady pace) and direct (the provider reaches the
 * heap) for comparison.
 *   put       1 KiB .. 64 MiB puts, all posted at once, then one quiet
 *   get       1 KiB, 64 KiB, 4 MiB gets likewise
 *   add       non-fetching 8-byte adds from T producer threads posting faster than the
 *             4096-slot ring drains (the GPU's 8 blocks x 256 threads x 4 adds), one word and
 *             many words, then quiet; the target checks the sums
 *   fetch_add T threads x V outstanding fetch_adds through the ring's own completion slots
 *             (claim, wait for the answer, acknowledge: what a GPU thread does); every fetched
 *             value must come back once
 *   drain     no-op descriptors from 1 and T threads: the proxy's consumption rate
 * Usage: proxy_bench [--quick] [--modes queued,staged,direct] [--threads 8] [--raw PATH|none]
 *                    [--only put,get,add,fetch,drain] [--trials N] [--free-copies]
 * --free-copies: the fake device completes copies of 4 KiB or more without performing them (on
 * the GPU host the copy engines do them, not the CPU): the protocol's own cost on 2 cores.
 * The ring is the library's GPU ring: ring-owned completion slots, GSHMEM_PROXY_RING_SLOTS. */
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>

/* Producers back off like the GPU's (gshmemi_chan_pause): a few polls, then short sleeps, so
 * waiting threads do not take the 2 cores from the proxy threads they wait for. */
static __thread unsigned relax_n;
static void bench_relax(void);
#define GSHMEM_PROXY_RELAX() bench_relax()
#include "proxy_harness.h"

static void bench_relax(void) {
    if (relax_n++ < 8) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
}

#define MIB (1ull << 20)
#define SRC_OFF 0
#define DST_OFF (64 * MIB)
#define WORDS_OFF (128 * MIB)          /* adds: word 0 = one word, then 65536 own words */
#define N_WORDS 65536
#define FETCH_OFF (WORDS_OFF + 8 * (N_WORDS + 64))
#define HEAP_BYTES (WORDS_OFF + 2 * MIB)

typedef struct cfg {
    int mode, threads, quick, trials;
    const char *name, *only;   /* only: the parts to run (put,get,add,fetch,drain) */
} cfg;

static bool part(const cfg *g, const char *name) { return strstr(g->only, name) != NULL; }

#define N_PUT 7
typedef struct raw_nums {
    double bw[N_PUT];   /* fi_write 1 KiB .. 64 MiB (GB/s), 64 in flight */
    double amo;         /* fi_atomic M/s */
    bool ok;
} raw_nums;

static const uint64_t put_sizes[N_PUT] = {1 << 10, 4 << 10, 64 << 10, MIB, 4 * MIB, 16 * MIB, 64 * MIB};
static raw_nums RAW;

/* Best and median of a few trials: other work on the machine only ever slows a trial. */
typedef struct trials {
    double v[8];
    int n;
} trials;
static void trial_add(trials *t, double v) { if (t->n < 8) t->v[t->n++] = v; }
static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double best(trials *t) {
    qsort(t->v, (size_t)t->n, sizeof *t->v, cmp_dbl);
    return t->n ? t->v[t->n - 1] : 0;
}
static double median(trials *t) {
    qsort(t->v, (size_t)t->n, sizeof *t->v, cmp_dbl);
    return t->n ? t->v[t->n / 2] : 0;
}

/* ---- the raw floor ----------------------------------------------------------------------- */
/* Runs fabric_baseline and keeps the best of each number over the runs (two: a burst of other
 * work on the machine slows only one). */
static void run_raw(const char *path, bool echo) {
    if (!path || !strcmp(path, "none")) return;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s -i lo 2>&1", path);
    FILE *f = popen(cmd, "r");
    if (!f) return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        size_t n;
        double v;
        int reps;
        if (echo) printf("  raw: %s", strchr(line, ':') ? strchr(line, ':') + 2 : line);
        char *p = strstr(line, "fi_write ");
        if (p && sscanf(p, "fi_write %zu B x %d, %*d in flight: %lf", &n, &reps, &v) == 3)
            for (int k = 0; k < N_PUT; k++)
                if (put_sizes[k] == n && v > RAW.bw[k]) RAW.bw[k] = v;
        if ((p = strstr(line, "rate ")) && sscanf(p, "rate %lf", &v) == 1 && v > RAW.amo) RAW.amo = v;
    }
    RAW.ok = pclose(f) == 0 && RAW.amo > 0;
    if (!RAW.ok) printf("  raw: %s failed or printed no numbers: the lines below carry no ratio\n", path);
}

static void print_raw(void) {
    printf("proxy_bench raw tcp;ofi_rxm on lo (best of 2 runs of fabric_baseline): fi_write 64 in flight:");
    for (int k = 0; k < N_PUT; k++)
        printf(" %llu KiB %.2f%s", (unsigned long long)(put_sizes[k] >> 10), RAW.bw[k], k + 1 < N_PUT ? "," : " GB/s;");
    printf(" fi_atomic %.3f M/s\n", RAW.amo);
}

static const char *ratio(char *buf, double v, double raw) {
    if (raw > 0) snprintf(buf, 48, " = %3.0f%% of raw %.2f", 100 * v / raw, raw);
    else buf[0] = 0;
    return buf;
}

/* ---- PE 0's producers ------------------------------------------------------------------- */
typedef struct prod {
    const gshmem_proxy_chan *ch;
    int id, n, peer;
    uint64_t k;             /* operations per thread */
    int kind;               /* B_ADD_ONE, B_ADD_MANY, B_FETCH, B_NOP */
    int v;                  /* fetch: outstanding per thread */
    uint64_t *got;          /* fetch: values [k] */
    int bad;
    pthread_barrier_t *go;
} prod;
enum { B_ADD_ONE, B_ADD_MANY, B_FETCH, B_NOP };

static void post_add(const prod *p, uint64_t word) {
    gshmem_proxy_desc d = {.op = GSHMEM_PROXY_OP_AMO, .amo = GSHMEM_PROXY_AMO_ADD, .pe = p->peer, .size = 8,
                           .raddr = word, .laddr = 1};
    relax_n = 0;
    gshmem_proxy_post(p->ch, &d);
}

/* V fetch_adds in flight through the ring's own slots, answered, read, acknowledged, again:
 * a thread holds no unacknowledged slot while it claims (a claim may wait for head). */
static void fetch_rounds(prod *p) {
    uint64_t *tk = calloc((size_t)p->v, sizeof *tk);
    for (uint64_t i = 0; i < p->k; i += (uint64_t)p->v) {
        int m = p->k - i < (uint64_t)p->v ? (int)(p->k - i) : p->v;
        for (int j = 0; j < m; j++) {
            gshmem_proxy_desc d = {.op = GSHMEM_PROXY_OP_AMO, .amo = GSHMEM_PROXY_AMO_ADD, .pe = p->peer, .size = 8,
                                   .raddr = A(FETCH_OFF), .laddr = 1, .flags = GSHMEM_PROXY_F_FETCH};
            relax_n = 0;
            uint64_t t = gshmem_proxy_claim(p->ch);
            if (t == UINT64_MAX) { p->bad++; free(tk); return; }
            d.ret = (uint64_t)(uintptr_t)gshmem_proxy_ret_of(p->ch, t);
            gshmem_proxy_publish(p->ch, t, &d);
            tk[j] = t;
        }
        for (int j = 0; j < m; j++) {
            gshmem_proxy_ret *r = gshmem_proxy_ret_of(p->ch, tk[j]);
            relax_n = 0;
            p->bad += gshmem_proxy_wait_ret(r, tk[j]) != 0;
            p->got[i + (uint64_t)j] = r->value;
            gshmem_proxy_ack(r, tk[j]);
        }
    }
    free(tk);
}

static void *producer(void *arg) {
    prod *p = arg;
    pthread_barrier_wait(p->go);
    gshmem_proxy_desc nop = {.op = GSHMEM_PROXY_OP_NOP};
    switch (p->kind) {
    case B_ADD_ONE:
        for (uint64_t i = 0; i < p->k; i++) post_add(p, A(WORDS_OFF));
        break;
    case B_ADD_MANY:   /* an odd stride scatters neighbouring threads' words */
        for (uint64_t i = 0; i < p->k; i++)
            post_add(p, A(WORDS_OFF + 8 * (1 + ((uint64_t)p->id * p->k + i) * 40503u % N_WORDS)));
        break;
    case B_FETCH:
        fetch_rounds(p);
        break;
    default:
        for (uint64_t i = 0; i < p->k; i++) {
            relax_n = 0;
            gshmem_proxy_post(p->ch, &nop);
        }
        break;
    }
    relax_n = 0;
    p->bad += gshmem_proxy_quiet(p->ch) != 0;
    return NULL;
}

/* T producer threads of one kind; returns operations per second (0: a producer failed). */
static double run_producers(const gshmem_proxy_chan *ch, int kind, int threads, uint64_t k, int v,
                            uint64_t *got) {
    pthread_t th[256];
    prod p[256];
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; i++) {
        p[i] = (prod){.ch = ch, .id = i, .n = threads, .peer = 1, .k = k, .kind = kind, .v = v,
                      .got = got ? got + (uint64_t)i * k : NULL, .go = &go};
        pthread_create(&th[i], NULL, producer, &p[i]);
    }
    pthread_barrier_wait(&go);
    double t0 = now_s();
    int bad = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        bad += p[i].bad;
    }
    double dt = now_s() - t0;
    pthread_barrier_destroy(&go);
    if (bad) fprintf(stderr, "FAIL PE 0: %d operations of kind %d failed\n", bad, kind);
    return bad ? 0 : (double)threads * (double)k / dt;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- the measurements (PE 0) ------------------------------------------------------------ */
static int n_trials(const cfg *g) { return g->quick ? 1 : g->trials; }

/* n_trials trials of `reps` descriptors of op (n bytes, raddr on PE 1, laddr here) posted,
 * then a quiet: GB/s per trial; *st collects the quiets' status. */
static trials time_rma(const cfg *g, const gshmem_proxy_chan *ch, int op, uint64_t n, uint64_t reps,
                       uint64_t raddr, uint64_t laddr, int *st) {
    trials t = {0};
    for (int i = 0; i < n_trials(g); i++) {
        double t0 = now_s();
        for (uint64_t j = 0; j < reps; j++) post(ch, op, 0, 1, n, raddr, laddr, 0, 0, NULL);
        *st |= gshmem_proxy_quiet(ch);
        trial_add(&t, (double)n * (double)reps / (now_s() - t0) / 1e9);
    }
    return t;
}

static void bench_puts(const cfg *g, const gshmem_proxy_chan *ch) {
    char rb[48];
    for (int k = 0; k < N_PUT; k++) {
        uint64_t n = put_sizes[k], total = (g->quick ? 32 : 256) * MIB;
        uint64_t reps = total / n < 4 ? 4 : total / n;
        if (reps > 4096) reps = 4096;
        post(ch, GSHMEM_PROXY_OP_PUT, 0, 1, n, A(DST_OFF), A(SRC_OFF), 0, 0, NULL);   /* warm-up */
        int st = gshmem_proxy_quiet(ch);
        trials t = time_rma(g, ch, GSHMEM_PROXY_OP_PUT, n, reps, A(DST_OFF), A(SRC_OFF), &st);
        double md = median(&t), bw = best(&t);
        printf("proxy_bench %s: put %5llu KiB x %4llu in flight, then quiet: %6.3f GB/s (median %6.3f)%s%s\n",
               g->name, (unsigned long long)(n >> 10), (unsigned long long)reps, bw, md, ratio(rb, bw, RAW.bw[k]),
               st ? " FAILED" : "");
    }
}

/* Gets from PE 1 into this PE's heap, many in flight, then quiet (no raw fi_read beside it). */
static void bench_gets(const cfg *g, const gshmem_proxy_chan *ch) {
    static const uint64_t sz[3] = {1 << 10, 64 << 10, 4 * MIB};
    for (int k = 0; k < 3; k++) {
        uint64_t n = sz[k], total = (g->quick ? 32 : 128) * MIB, reps = total / n > 4096 ? 4096 : total / n;
        int st = 0;
        trials t = time_rma(g, ch, GSHMEM_PROXY_OP_GET, n, reps, A(SRC_OFF), A(DST_OFF), &st);
        double md = median(&t), bw = best(&t);
        printf("proxy_bench %s: get %5llu KiB x %4llu in flight, then quiet: %6.3f GB/s (median %6.3f)%s\n", g->name,
               (unsigned long long)(n >> 10), (unsigned long long)reps, bw, md, st ? " FAILED" : "");
    }
}

static int bench_amos(const cfg *g, const gshmem_proxy_chan *ch, uint64_t *adds_one, uint64_t *adds_many) {
    char rb[48];
    int bad = 0, t = g->threads;
    /* the GPU: 2048 threads x 4 adds = 8192; here 4 or 8 times that over T threads */
    uint64_t k = (g->quick ? 32768 : 65536) / (uint64_t)t;
    for (int one = 1; one >= 0 && part(g, "add"); one--) {
        trials tr = {0};
        for (int i = 0; i < n_trials(g); i++) {
            double r = run_producers(ch, one ? B_ADD_ONE : B_ADD_MANY, t, k, 0, NULL);
            *(one ? adds_one : adds_many) += (uint64_t)t * k;
            bad += r == 0;
            trial_add(&tr, r / 1e6);
        }
        double md = median(&tr), r = best(&tr);
        printf("proxy_bench %s: add 8 B (non-fetching), %s, %d threads x %llu, ring %llu slots: %.3f M/s (median "
               "%.3f)%s\n", g->name, one ? "one word  " : "many words", t, (unsigned long long)k,
               (unsigned long long)ch->n_slots, r, md, ratio(rb, r, RAW.amo));
    }
    if (!part(g, "fetch")) return bad;
    int v = 2048 / t;   /* 2048 outstanding, one per GPU thread of 8 blocks x 256 */
    uint64_t kf = (g->quick ? 16384 : 32768) / (uint64_t)t;
    uint64_t n = (uint64_t)t * kf, *got = calloc(n, sizeof *got);
    static uint64_t base;   /* earlier trials' fetch_adds on the same word */
    trials tr = {0};
    for (int i = 0; i < n_trials(g); i++) {
        double r = run_producers(ch, B_FETCH, t, kf, v, got);
        qsort(got, n, sizeof *got, cmp_u64);
        uint64_t wrong = 0;
        for (uint64_t j = 0; j < n; j++) wrong += got[j] != base + j;
        base += n;
        if (wrong) fprintf(stderr, "FAIL PE 0: %llu of %llu fetched values are not a permutation\n",
                           (unsigned long long)wrong, (unsigned long long)n);
        bad += wrong != 0 || r == 0;
        trial_add(&tr, r / 1e6);
    }
    double md = median(&tr), r = best(&tr);
    printf("proxy_bench %s: fetch_add 8 B, one word, %d threads x %d outstanding: %.3f M/s (median %.3f)%s\n",
           g->name, t, v, r, md, ratio(rb, r, RAW.amo));
    free(got);
    return bad;
}

static void bench_drain(const cfg *g, const gshmem_proxy_chan *ch) {
    int ts[2] = {1, g->threads};
    for (int k = 0; k < 2; k++) {
        uint64_t n = (g->quick ? 2000000ull : 5000000ull) / (uint64_t)ts[k];
        trials tr = {0};
        for (int i = 0; i < n_trials(g); i++) trial_add(&tr, run_producers(ch, B_NOP, ts[k], n, 0, NULL) / 1e6);
        double md = median(&tr), r = best(&tr);
        printf("proxy_bench %s: no-op drain, %d producer thread%s: %.2f M/s (median %.2f; goal >= 5 on the GPU "
               "host)\n", g->name, ts[k], ts[k] > 1 ? "s" : "", r, md);
    }
}

static int pe_bench(pe_ctx *c, void *arg) {
    cfg *g = arg;
    heap_map(g->mode == GSHMEMI_PROXY_STAGED);
    gshmemi_config_load(&gshmemi_cfg);
    gshmemi_set_log_rank(c->me);
    gshmemi_proxy *x = make_proxy(c, g->mode);
    gshmem_proxy_chan ch;
    if (!x || gshmemi_proxy_ring(x, 0, NULL, true, &ch) || gshmemi_proxy_start(x)) return 1;
    int bad = 0;
    uint64_t *mine = (uint64_t *)H(A(WORDS_OFF));
    memset(mine, 0, 8 * (N_WORDS + 128));
    barrier(c);
    uint64_t adds_one = 0, adds_many = 0;
    if (c->me == 0) {
        if (part(g, "put")) bench_puts(g, &ch);
        if (part(g, "get")) bench_gets(g, &ch);
        bad += bench_amos(g, &ch, &adds_one, &adds_many);
        if (part(g, "drain")) bench_drain(g, &ch);
        c->job->oob[0][0] = adds_one;
        c->job->oob[0][1] = adds_many;
    }
    barrier(c);
    if (c->me == 1) {   /* every add landed, once */
        uint64_t many = 0;
        for (int i = 1; i <= N_WORDS; i++) many += mine[i];
        if (mine[0] != c->job->oob[0][0] || many != c->job->oob[0][1]) {
            fprintf(stderr, "FAIL PE 1: one word %llu (expected %llu), many words sum %llu (expected %llu)\n",
                    (unsigned long long)mine[0], (unsigned long long)c->job->oob[0][0], (unsigned long long)many,
                    (unsigned long long)c->job->oob[0][1]);
            bad++;
        }
    }
    if (gshmemi_proxy_finalize(x)) bad++;
    return bad;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *modes = "queued,direct", *raw = FABRIC_BASELINE, *only = "put,get,add,fetch,drain";
    int threads = 8, quick = 0, ntrials = 3, free_copies = 0;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--quick")) quick = 1;
        else if (!strcmp(argv[a], "--modes") && a + 1 < argc) modes = argv[++a];
        else if (!strcmp(argv[a], "--threads") && a + 1 < argc) threads = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--raw") && a + 1 < argc) raw = argv[++a];
        else if (!strcmp(argv[a], "--only") && a + 1 < argc) only = argv[++a];
        else if (!strcmp(argv[a], "--trials") && a + 1 < argc) ntrials = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--free-copies")) free_copies = 1;
        else {
            fprintf(stderr, "usage: %s [--quick] [--modes queued,staged,direct] [--threads T] [--raw PATH|none] "
                    "[--only put,get,add,fetch,drain] [--trials N] [--free-copies]\n",
                    argv[0]);
            return 2;
        }
    }
    if (threads < 2 || threads > 256) threads = 8;   /* 2048 outstanding fetches split evenly */
    if (ntrials < 1 || ntrials > 8) ntrials = 3;
    alarm(1200);
    setenv("PROXY_TEST_LOOPBACK", "1", 1);   /* the raw floor runs on lo too */
    if (!getenv("GSHMEM_FABRIC_PROVIDER")) setenv("GSHMEM_FABRIC_PROVIDER", "tcp;ofi_rxm", 1);
    gshmemi_config_load(&gshmemi_cfg);
    printf("proxy_bench: %ld CPU cores online: the proxy threads, the producers, the fake devices and the "
           "provider share them (on the GPU host each has its own), so compare ratios to raw, not absolutes\n",
           sysconf(_SC_NPROCESSORS_ONLN));
    printf("proxy_bench: staged chunk %llu B, staging %llu B per peer (%llu credits), ring %d slots\n",
           (unsigned long long)gshmemi_cfg.PROXY_CHUNK, (unsigned long long)gshmemi_cfg.PROXY_STAGING,
           (unsigned long long)(gshmemi_cfg.PROXY_STAGING / gshmemi_cfg.PROXY_CHUNK), gshmemi_cfg.PROXY_RING_SLOTS);
    double la[3] = {0};
    if (getloadavg(la, 3) == 3) printf("proxy_bench: load average at the start %.1f %.1f %.1f\n", la[0], la[1], la[2]);
    run_raw(raw, true);
    run_raw(raw, false);
    if (RAW.ok) print_raw();
    heap_reserve(HEAP_BYTES);
    netns_setup();
    int bad = 0;
    char list[128];
    snprintf(list, sizeof list, "%s", modes);
    for (char *m = strtok(list, ","); m; m = strtok(NULL, ",")) {
        queued = !strcmp(m, "queued");
        q_steady = 1;
        q_nocopy = queued && free_copies;
        char name[48];
        snprintf(name, sizeof name, "%s%s", m, q_nocopy ? " (free copies)" : "");
        cfg g = {.mode = !strcmp(m, "direct") ? GSHMEMI_PROXY_DIRECT : GSHMEMI_PROXY_STAGED, .threads = threads,
                 .quick = quick, .trials = ntrials, .name = name, .only = only};
        int st[2];
        double t0 = now_s();
        int f = run_job(2, pe_bench, &g, 900, st, NULL);
        printf("proxy_bench %s: %s in %.1f s\n", m, f ? "FAILED" : "done", now_s() - t0);
        bad += f;
    }
    if (getloadavg(la, 3) == 3) printf("proxy_bench: load average at the end %.1f %.1f %.1f\n", la[0], la[1], la[2]);
    (void)passed, (void)failed;   /* unit.h's counters: the PEs report their own failures */
    return bad != 0;
}
