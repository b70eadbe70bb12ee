/* gshmrun's GPU side, without touching CUDA in this process: how many GPUs the PEs will see
 * (asked of a short-lived child), and CUDA MPS for PEs that share a GPU: a running daemon is
 * used, else a private one is started for the job (its own pipe and log directories) and
 * stopped when the job ends, however it ends. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gshmrun_mps.h"

static char mps_dir[256];       /* private daemon's directory, "" when none was started */
static int verbose;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* Waits up to `seconds` for pid; returns its wait status, or -1 if it did not end. */
static int wait_for(pid_t pid, double seconds) {
    double end = now_s() + seconds;
    int st;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) return st;
        if (r < 0 && errno != EINTR) return -1;
        if (now_s() > end) return -1;
        usleep(2000);
    }
}

int gshmrun_count_gpus(void) {
    int p[2];
    if (pipe(p)) return -1;
    pid_t pid = fork();
    if (pid < 0) { close(p[0]); close(p[1]); return -1; }
    if (pid == 0) {   /* the child touches CUDA and exits; gshmrun itself never does */
        close(p[0]);
        int n = -1;
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        int (*init)(unsigned) = h ? (int (*)(unsigned))dlsym(h, "cuInit") : NULL;
        int (*count)(int *) = h ? (int (*)(int *))dlsym(h, "cuDeviceGetCount") : NULL;
        if (init && count && init(0) == 0 && count(&n) != 0) n = -1;
        if (write(p[1], &n, sizeof n) != sizeof n) _exit(1);
        _exit(0);
    }
    close(p[1]);
    int n = -1;
    struct pollfd fd = {.fd = p[0], .events = POLLIN};
    if (poll(&fd, 1, 30000) == 1 && read(p[0], &n, sizeof n) != sizeof n) n = -1;
    close(p[0]);
    if (wait_for(pid, 5) < 0) { kill(pid, SIGKILL); waitpid(pid, NULL, 0); }
    return n;
}

/* The pid in <pipe_dir>/nvidia-cuda-mps-control.pid: 0 when there is none, -1 when there is
 * no such file. */
static pid_t pid_file(const char *pipe_dir) {
    char path[400];
    if (snprintf(path, sizeof path, "%s/nvidia-cuda-mps-control.pid", pipe_dir) >= (int)sizeof path)
        return -1;
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long pid = 0;
    if (fscanf(f, "%ld", &pid) != 1) pid = 0;
    fclose(f);
    return (pid_t)pid;
}

/* A control daemon runs for `dir`: the pid in its pid file is alive, or (a daemon that
 * writes no pid file) its control pipe exists. */
static int daemon_at(const char *dir) {
    pid_t pid = pid_file(dir);
    if (pid >= 0) return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
    char path[400];
    struct stat st;
    if (snprintf(path, sizeof path, "%s/control", dir) >= (int)sizeof path) return 0;
    return stat(path, &st) == 0 && (S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode));
}

/* Runs nvidia-cuda-mps-control with args, `input` on its stdin (may be NULL); its status,
 * 127 when it cannot be run, -1 when it did not end within `seconds`. */
static int control(char *const args[], const char *input, double seconds) {
    int in[2];
    if (pipe(in)) return -1;
    pid_t pid = fork();
    if (pid < 0) { close(in[0]); close(in[1]); return -1; }
    if (pid == 0) {
        dup2(in[0], 0);
        close(in[0]);
        close(in[1]);
        int null = open("/dev/null", 1);
        if (null >= 0) { dup2(null, 1); close(null); }
        execvp("nvidia-cuda-mps-control", args);
        _exit(127);
    }
    close(in[0]);
    if (input && write(in[1], input, strlen(input)) < 0) { /* the status below says enough */ }
    close(in[1]);
    int st = wait_for(pid, seconds);
    if (st < 0) { kill(pid, SIGKILL); waitpid(pid, NULL, 0); return -1; }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb; (void)flag; (void)ftw;
    remove(path);
    return 0;
}

/* The private daemon's pid (0 if unknown). */
static pid_t daemon_pid(void) {
    char pipe_dir[320];
    snprintf(pipe_dir, sizeof pipe_dir, "%s/pipe", mps_dir);
    pid_t pid = pid_file(pipe_dir);
    return pid > 0 ? pid : 0;
}

void gshmrun_mps_stop(void) {
    if (!mps_dir[0]) return;
    pid_t pid = daemon_pid();
    char *quit[] = {"nvidia-cuda-mps-control", NULL};
    control(quit, "quit\n", 10);
    /* the daemon ends its servers and exits once told; make sure of it */
    double end = now_s() + 10;
    while (pid > 0 && kill(pid, 0) == 0 && now_s() < end) usleep(5000);
    if (pid > 0 && kill(pid, 0) == 0) {
        fprintf(stderr, "gshmrun: the private MPS daemon (pid %d) did not quit; killing it\n", (int)pid);
        kill(pid, SIGKILL);
    }
    nftw(mps_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (verbose) fprintf(stderr, "gshmrun: stopped the private MPS daemon (%s)\n", mps_dir);
    mps_dir[0] = 0;
}

/* Starts a private daemon in a new temporary directory; 0 on success. */
static int start_private(void) {
    char dir[] = "/tmp/gshmrun-mps-XXXXXX";
    if (!mkdtemp(dir)) return -1;
    snprintf(mps_dir, sizeof mps_dir, "%s", dir);
    char pipe_dir[320], log_dir[320];
    snprintf(pipe_dir, sizeof pipe_dir, "%s/pipe", dir);
    snprintf(log_dir, sizeof log_dir, "%s/log", dir);
    mkdir(pipe_dir, 0700);
    mkdir(log_dir, 0700);
    setenv("CUDA_MPS_PIPE_DIRECTORY", pipe_dir, 1);
    setenv("CUDA_MPS_LOG_DIRECTORY", log_dir, 1);
    char *start[] = {"nvidia-cuda-mps-control", "-d", NULL};
    int rc = control(start, NULL, 20);
    double end = now_s() + 10;
    while (rc == 0 && !daemon_at(pipe_dir) && now_s() < end) usleep(5000);
    if (rc == 0 && daemon_at(pipe_dir)) return 0;
    fprintf(stderr, "gshmrun: could not start an MPS daemon (nvidia-cuda-mps-control -d %s); "
                    "PEs sharing a GPU will run in time slices (milliseconds per wait on each other). "
                    "Start one yourself (nvidia-cuda-mps-control -d), or run fewer PEs than GPUs\n",
            rc == 127 ? "not found: is the NVIDIA driver's utility package installed?"
                      : rc < 0 ? "did not answer" : rc ? "failed" : "started no daemon");
    char cmd[400];   /* what the daemon said, if anything */
    snprintf(cmd, sizeof cmd, "tail -n 5 %s/control.log 1>&2 2>/dev/null", log_dir);
    if (system(cmd)) { /* no log: nothing more to say */ }
    unsetenv("CUDA_MPS_PIPE_DIRECTORY");
    unsetenv("CUDA_MPS_LOG_DIRECTORY");
    if (daemon_pid() > 0) kill(daemon_pid(), SIGKILL);
    nftw(mps_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    mps_dir[0] = 0;
    return -1;
}

int gshmrun_mps_setup(int npes, int ngpus, const char *mode, int debug, int across_nodes) {
    verbose = debug;
    /* every PE has a GPU of its own and no proxy shares it (one node) */
    if (ngpus < 1 || (npes <= ngpus && !across_nodes)) return 0;
    int per_gpu = (npes + ngpus - 1) / ngpus;
    if (!strcmp(mode, "off")) {
        if (verbose)
            fprintf(stderr, "gshmrun: %d PEs on %d GPU(s), MPS handling off (GSHMEM_MPS=off)\n", npes, ngpus);
        return 0;
    }
    const char *dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
    if (!dir || !*dir) dir = "/tmp/nvidia-mps";
    int running = daemon_at(dir);
    if (!running && start_private() != 0) return 0;
    /* a bounded share each, so the PEs' kernels fit on the GPU together (docs/design.md) */
    char pct[16];
    snprintf(pct, sizeof pct, "%d", 100 / per_gpu);
    setenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", pct, 0);
    if (verbose)
        fprintf(stderr, "gshmrun: %d PEs on %d GPU(s), up to %d per GPU: %s MPS daemon (%s), "
                        "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%s\n", npes, ngpus, per_gpu,
                running ? "the running" : "a private", running ? dir : mps_dir,
                getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"));
    return 1;
}
