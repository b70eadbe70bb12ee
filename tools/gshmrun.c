/* gshmrun: the single-node launcher. Creates a unique id (a loopback rendezvous whose
 * listening socket rank 0 inherits), forks the PEs, forwards their output line by line with
 * "[PE i] " prefixes, and if one PE fails, ends the others and exits with its status.
 * It never touches CUDA: children that inherit CUDA state from a parent cannot use it. When
 * there are more PEs than GPUs, the PEs share GPUs under CUDA MPS (gshmrun_mps.c). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gshmem/info.h"
#include "gshmrun_mps.h"

typedef struct pe {
    pid_t pid;
    int out, err;           /* read ends; -1 once closed */
    char *buf[2];           /* pending partial line per stream */
    size_t len[2];
    int done, status;
} pe;

static pe *pes;
static int npes;
static volatile sig_atomic_t got_signal;
static int prefix = 1;

static void on_signal(int sig) { got_signal = sig; }

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static void usage(FILE *f) {
    fprintf(f, "usage: gshmrun [-n N] [-ppn P] [-t SECONDS] [--no-prefix] [--no-mps] [--nodes K] program [args...]\n"
               "  -n, -np N      number of PEs (default 1, or -ppn's), placed on this node's GPUs\n"
               "                 round-robin; with more PEs than GPUs, PEs share GPUs under CUDA\n"
               "                 MPS: a running MPS daemon is used, else a private one runs for the job\n"
               "  -ppn P         PEs per node: gshmrun starts one node, so -n may not exceed it\n"
               "                 (mpirun or srun start jobs across nodes: docs/nodes.md)\n"
               "  -t SECONDS     end the job (status 124) if it runs longer\n"
               "  --no-prefix    do not prefix output lines with [PE i]\n"
               "  --no-mps       never start an MPS daemon (same as GSHMEM_MPS=off)\n"
               "  --nodes K      split the PEs into K nodes (consecutive ranks): between nodes every\n"
               "                 byte takes the remote transport, as between machines (testing;\n"
               "                 same as GSHMEM_NODES=K)\n");
}

static void emit(int pe_i, int stream, const char *s, size_t n) {
    FILE *f = stream ? stderr : stdout;
    if (prefix) fprintf(f, "[PE %d] ", pe_i);
    fwrite(s, 1, n, f);
    fflush(f);
}

/* Appends data to the PE's line buffer and prints every complete line. */
static void forward(int i, int stream, const char *data, size_t n) {
    pe *p = &pes[i];
    char *b = realloc(p->buf[stream], p->len[stream] + n + 1);
    if (!b) return;
    memcpy(b + p->len[stream], data, n);
    p->buf[stream] = b;
    p->len[stream] += n;
    size_t start = 0;
    for (size_t k = 0; k < p->len[stream]; k++) {
        if (b[k] != '\n') continue;
        emit(i, stream, b + start, k + 1 - start);
        start = k + 1;
    }
    memmove(b, b + start, p->len[stream] - start);
    p->len[stream] -= start;
}

static void flush_partial(int i, int stream) {
    pe *p = &pes[i];
    if (!p->len[stream]) return;
    p->buf[stream][p->len[stream]] = '\n';
    emit(i, stream, p->buf[stream], p->len[stream] + 1);
    p->len[stream] = 0;
}

static void spawn(int i, const char *uid, int listen_fd, char **argv) {
    int o[2], e[2];
    if (pipe2(o, O_CLOEXEC) || pipe2(e, O_CLOEXEC)) {
        perror("gshmrun: pipe");
        exit(1);
    }
    pid_t launcher = getpid(), pid = fork();
    if (pid < 0) {
        perror("gshmrun: fork");
        exit(1);
    }
    if (pid == 0) {
        /* a PE never outlives its launcher (killed by a batch system's timeout, say): a PE
         * left waiting on the GPU would hold it */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != launcher) _exit(1);   /* the launcher already died */
        dup2(o[1], 1);
        dup2(e[1], 2);
        char v[32];
        setenv("GSHMEM_UID", uid, 1);
        snprintf(v, sizeof v, "%d", i);
        setenv("GSHMEM_RANK", v, 1);
        snprintf(v, sizeof v, "%d", npes);
        setenv("GSHMEM_NPES", v, 1);
        /* these GPUs are shared: NVLink multicast must never be used from here */
        setenv("NCCL_NVLS_ENABLE", "0", 0);
        setenv("NVSHMEM_DISABLE_NVLS", "1", 0);
        setenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1", 0);
        /* lazy kernel loading can deadlock kernels that wait on each other (a spinning
         * waiter blocks loading the writer): load modules eagerly unless told otherwise */
        setenv("CUDA_MODULE_LOADING", "EAGER", 0);
        if (i == 0) {   /* only rank 0 keeps the listening socket across exec */
            fcntl(listen_fd, F_SETFD, 0);
            snprintf(v, sizeof v, "%d", listen_fd);
            setenv("GSHMEM_UID_FD", v, 1);
        } else {
            close(listen_fd);
            unsetenv("GSHMEM_UID_FD");
        }
        execvp(argv[0], argv);
        fprintf(stderr, "gshmrun: cannot execute '%s': %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(o[1]);
    close(e[1]);
    pes[i] = (pe){.pid = pid, .out = o[0], .err = e[0]};
}

static void signal_all(int sig) {
    for (int i = 0; i < npes; i++)
        if (!pes[i].done) kill(pes[i].pid, sig);
}

static int running(void) {
    int n = 0;
    for (int i = 0; i < npes; i++) n += !pes[i].done;
    return n;
}

static void reap(int *first_fail) {
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        for (int i = 0; i < npes; i++) {
            if (pes[i].pid != pid) continue;
            pes[i].done = 1;
            pes[i].status = st;
            bool bad = WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0);
            if (bad && *first_fail < 0) {
                *first_fail = i;
                if (WIFSIGNALED(st))
                    fprintf(stderr, "gshmrun: PE %d killed by signal %s; ending the other PEs\n", i,
                            sigabbrev_np(WTERMSIG(st)) ? sigabbrev_np(WTERMSIG(st)) : "?");
                else
                    fprintf(stderr, "gshmrun: PE %d exited with status %d; ending the other PEs\n", i,
                            WEXITSTATUS(st));
            }
        }
    }
}

/* Reads what is available from every open pipe for up to `ms` milliseconds. */
static void pump(int ms) {
    struct pollfd *fds = calloc((size_t)npes * 2, sizeof *fds);
    int n = 0;
    for (int i = 0; i < npes; i++) {
        if (pes[i].out >= 0) fds[n++] = (struct pollfd){.fd = pes[i].out, .events = POLLIN};
        if (pes[i].err >= 0) fds[n++] = (struct pollfd){.fd = pes[i].err, .events = POLLIN};
    }
    if (n == 0) { free(fds); usleep((useconds_t)ms * 1000); return; }
    if (poll(fds, (nfds_t)n, ms) > 0) {
        for (int k = 0; k < n; k++) {
            if (!fds[k].revents) continue;
            for (int i = 0; i < npes; i++) {
                int stream = fds[k].fd == pes[i].err;
                if (fds[k].fd != pes[i].out && fds[k].fd != pes[i].err) continue;
                char buf[65536];
                ssize_t r = read(fds[k].fd, buf, sizeof buf);
                if (r > 0) forward(i, stream, buf, (size_t)r);
                else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
                    flush_partial(i, stream);
                    close(fds[k].fd);
                    if (stream) pes[i].err = -1;
                    else pes[i].out = -1;
                }
            }
        }
    }
    free(fds);
}

static int open_pipes(void) {
    int n = 0;
    for (int i = 0; i < npes; i++) n += (pes[i].out >= 0) + (pes[i].err >= 0);
    return n;
}

static int exit_code_of(int st) { return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st); }

/* A GSHMEM_* variable as the library reads it (its default when unset). */
static const char *env(const char *name, char *buf, size_t len) {
    gshmemx_env_get(name, buf, len);
    return buf;
}

int main(int argc, char **argv) {
    npes = 1;
    double limit = 0;
    int no_mps = 0, ppn = 0, npes_given = 0;
    int a = 1;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "-h") || !strcmp(argv[a], "--help")) { usage(stdout); return 0; }
        if (!strcmp(argv[a], "--no-prefix")) { prefix = 0; continue; }
        if (!strcmp(argv[a], "--no-mps")) { no_mps = 1; continue; }
        if ((!strcmp(argv[a], "-n") || !strcmp(argv[a], "-np")) && a + 1 < argc) {
            npes = atoi(argv[++a]);
            npes_given = 1;
            continue;
        }
        if (!strcmp(argv[a], "-ppn") && a + 1 < argc) { ppn = atoi(argv[++a]); continue; }
        if (!strcmp(argv[a], "-t") && a + 1 < argc) { limit = atof(argv[++a]); continue; }
        if (!strcmp(argv[a], "--nodes") && a + 1 < argc) { setenv("GSHMEM_NODES", argv[++a], 1); continue; }
        fprintf(stderr, "gshmrun: unknown option '%s'\n", argv[a]);
        usage(stderr);
        return 2;
    }
    if (a >= argc) { usage(stderr); return 2; }
    if (ppn != 0 && ppn < 1) {
        fprintf(stderr, "gshmrun: -ppn must be at least 1 (got %d)\n", ppn);
        return 2;
    }
    if (ppn && npes_given && npes > ppn) {
        fprintf(stderr, "gshmrun: -n %d with -ppn %d needs %d nodes, and gshmrun starts PEs on this "
                "node only; start jobs across nodes with mpirun or srun (docs/nodes.md), or test "
                "several nodes on this machine with --nodes K\n", npes, ppn, (npes + ppn - 1) / ppn);
        return 2;
    }
    if (ppn && !npes_given) npes = ppn;
    if (npes < 1 || npes > 4096) {
        fprintf(stderr, "gshmrun: -n must be between 1 and 4096 (got %d)\n", npes);
        return 2;
    }
    if (!strchr(argv[a], '/') ? 0 : access(argv[a], X_OK) != 0) {
        fprintf(stderr, "gshmrun: cannot execute '%s': %s\n", argv[a], strerror(errno));
        return 127;
    }
    gshmemx_env_check();   /* bad or unknown GSHMEM_* variables are said once, here */
    /* before any PE starts: MPS must run before their CUDA contexts exist */
    if (npes > 1) {
        char mps[64], debug[16], nodes[16];
        atexit(gshmrun_mps_stop);
        gshmrun_mps_setup(npes, gshmrun_count_gpus(), no_mps ? "off" : env("GSHMEM_MPS", mps, sizeof mps),
                          atoi(env("GSHMEM_DEBUG", debug, sizeof debug)),
                          atoi(env("GSHMEM_NODES", nodes, sizeof nodes)) > 1);
    }
    gshmemx_uniqueid_t id;
    int lfd;
    if (gshmemx_launcher_uniqueid(&id, &lfd) != GSHMEM_SUCCESS) return 1;
    const char *uid = id.internal;
    pes = calloc((size_t)npes, sizeof *pes);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    for (int i = 0; i < npes; i++) spawn(i, uid, lfd, argv + a);
    close(lfd);
    double start = now_s(), kill_at = 0;
    int first_fail = -1, timed_out = 0;
    while (running() || open_pipes()) {
        pump(50);
        reap(&first_fail);
        if (got_signal && !kill_at) {
            signal_all(got_signal);
            kill_at = now_s() + 3;
        }
        if (limit > 0 && !timed_out && now_s() - start > limit) {
            timed_out = 1;
            fprintf(stderr, "gshmrun: timeout after %g s; PEs still running:", limit);
            for (int i = 0; i < npes; i++) if (!pes[i].done) fprintf(stderr, " %d", i);
            fprintf(stderr, "\n");
            signal_all(SIGTERM);
            kill_at = now_s() + 3;
        }
        if (first_fail >= 0 && !kill_at && running()) {
            signal_all(SIGTERM);
            kill_at = now_s() + 3;
        }
        if (kill_at && now_s() > kill_at && running()) {
            signal_all(SIGKILL);
            kill_at = now_s() + 3600;
        }
        if (!running() && open_pipes() && kill_at && now_s() > kill_at) break;  /* orphaned pipes */
    }
    if (timed_out) return 124;
    if (got_signal) return 128 + got_signal;
    return first_fail >= 0 ? exit_code_of(pes[first_fail].status) : 0;
}
