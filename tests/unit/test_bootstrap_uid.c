/* Proves the unique-id bootstrap over loopback: 1, 2 and 5 forked processes agree on
 * allgather/alltoall results (random data), barrier, node info and job id; a connection
 * with a wrong secret is refused while the job still forms; a PE that exits before joining
 * makes rank 0 fail with a message within the timeout instead of hanging, and the PEs that
 * joined end with rank 0's report. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap.h"
#include "config.h"

#include "unit.h"

static uint64_t val(int rank, int k, uint64_t seed) { return seed * 1000003u + (uint64_t)rank * 7919u + (uint64_t)k; }

/* One PE's checks; returns the number of failures (its exit status). */
static int child(const char *uid, int rank, int n, int lfd, uint64_t seed) {
    gshmemi_bootstrap b;
    memset(&b, 0, sizeof b);
    if (gshmemi_bootstrap_uid_init(&b, uid, rank, n, rank == 0 ? lfd : -1) != GSHMEM_SUCCESS) return 100;
    if (gshmemi_bootstrap_node_info(&b) != GSHMEM_SUCCESS) return 101;
    int bad = 0;
    uint64_t *all = calloc((size_t)n * 3, sizeof *all), mine[3];
    for (int k = 0; k < 3; k++) mine[k] = val(rank, k, seed);
    if (b.ops->allgather(&b, mine, all, sizeof mine)) bad++;
    for (int r = 0; r < n; r++)
        for (int k = 0; k < 3; k++)
            if (all[r * 3 + k] != val(r, k, seed)) {
                fprintf(stderr, "PE %d: allgather slot %d.%d = %llu, expected %llu\n", rank, r, k,
                        (unsigned long long)all[r * 3 + k], (unsigned long long)val(r, k, seed));
                bad++;
            }
    uint64_t *in = calloc((size_t)n, 8), *out = calloc((size_t)n, 8);
    for (int q = 0; q < n; q++) in[q] = val(rank, 100 + q, seed);
    if (b.ops->alltoall(&b, in, out, 8)) bad++;
    for (int q = 0; q < n; q++)
        if (out[q] != val(q, 100 + rank, seed)) {
            fprintf(stderr, "PE %d: alltoall from %d = %llu\n", rank, q, (unsigned long long)out[q]);
            bad++;
        }
    for (int i = 0; i < 20; i++) if (b.ops->barrier(&b)) bad++;
    /* one machine; GSHMEM_NODES=K splits it into min(K, n) nodes of consecutive ranks, while
     * host_rank (which picks the GPU) stays the index on the machine */
    int nodes = gshmemi_cfg.NODES > 1 ? (gshmemi_cfg.NODES < n ? gshmemi_cfg.NODES : n) : 1;
    int part = rank * nodes / n, first = rank, size = 0;
    while (first > 0 && (first - 1) * nodes / n == part) first--;
    for (int r = 0; r < n; r++) size += r * nodes / n == part;
    if (b.local_size != size || b.n_nodes != nodes || b.node_id != part || b.local_rank != rank - first ||
        b.host_rank != rank || b.n_hosts != 1) {
        fprintf(stderr, "PE %d (%d nodes asked): node %d of %d, local %d/%d, host rank %d of %d hosts; expected "
                "node %d of %d, local %d/%d, host rank %d of 1\n", rank, gshmemi_cfg.NODES, b.node_id, b.n_nodes,
                b.local_rank, b.local_size, b.host_rank, b.n_hosts, part, nodes, rank - first, size, rank);
        bad++;
    }
    uint64_t *jobs = calloc((size_t)n, 8);
    b.ops->allgather(&b, &b.job_id, jobs, 8);
    for (int r = 0; r < n; r++) if (jobs[r] != b.job_id) { fprintf(stderr, "PE %d: job ids differ\n", rank); bad++; }
    gshmemi_bootstrap_finalize(&b);
    return bad;
}

/* Forks n PEs (skip_rank never starts); returns the exit statuses. */
static void run_job(int n, int skip_rank, bool intruder, int *status) {
    char uid[GSHMEMX_UNIQUEID_BYTES];
    int lfd;
    if (gshmemi_uid_create(uid, sizeof uid, &lfd, true) != GSHMEM_SUCCESS) { status[0] = -1; return; }
    uint64_t seed = (uint64_t)getpid() * 31 + (uint64_t)n;
    if (intruder) {   /* connect with a wrong secret before anyone else */
        char ip[64];
        unsigned port;
        sscanf(uid, "%63[0-9.]:%u:", ip, &port);
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        inet_pton(AF_INET, ip, &a.sin_addr);
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
            char junk[64];
            memset(junk, 0x42, sizeof junk);
            (void)!write(fd, junk, sizeof junk);
        }
        close(fd);
    }
    pid_t pids[16];
    for (int r = 0; r < n; r++) {
        if (r == skip_rank) { pids[r] = -1; continue; }
        pids[r] = fork();
        if (pids[r] == 0) _exit(child(uid, r, n, lfd, seed));
    }
    close(lfd);
    for (int r = 0; r < n; r++) {
        int st = 0;
        if (pids[r] > 0) waitpid(pids[r], &st, 0);
        status[r] = pids[r] > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    }
}

int main(void) {
    alarm(120);
    setenv("GSHMEM_BOOTSTRAP_TIMEOUT", "4", 1);
    gshmemi_config_load(&gshmemi_cfg);
    int st[16];
    int sizes[] = {1, 2, 5};
    for (int i = 0; i < 3; i++) {
        run_job(sizes[i], -1, false, st);
        for (int r = 0; r < sizes[i]; r++)
            EXPECT(st[r] == 0, "%d PEs: PE %d exited with %d", sizes[i], r, st[r]);
    }
    gshmemi_cfg.NODES = 2;   /* one machine as 2 nodes (GSHMEM_NODES=2), inherited by the PEs */
    run_job(5, -1, false, st);
    for (int r = 0; r < 5; r++) EXPECT(st[r] == 0, "5 PEs as 2 nodes: PE %d exited with %d", r, st[r]);
    gshmemi_cfg.NODES = 0;
    run_job(3, -1, true, st);
    for (int r = 0; r < 3; r++) EXPECT(st[r] == 0, "with an intruder: PE %d exited with %d", r, st[r]);
    time_t t0 = time(NULL);
    run_job(3, 2, false, st);
    /* PE 0 reports which PE did not join; PE 1, which joined, waits for PE 0 longer than PE 0
     * waits for the others and ends with PE 0's report (an abort frame: status 1), not with a
     * timeout of its own (100) that could end the job first */
    EXPECT(st[0] == 100 && st[1] == 1, "PE 2 never started: PE 0/1 exited %d/%d, expected 100/1 (PE 0's "
           "bootstrap failure, forwarded to PE 1)", st[0], st[1]);
    EXPECT(time(NULL) - t0 < 20, "a missing PE took %ld s to detect", (long)(time(NULL) - t0));
    printf("bootstrap_uid: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
