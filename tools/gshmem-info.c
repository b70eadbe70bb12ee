/* gshmem-info: what this build of gshmem contains, whether this machine can run it, and every
 * environment variable with its current value. Works without a GPU or a driver (it says so).
 * See usage() for the flags. */
#include <stdio.h>
#include <string.h>

#include "gshmem.h"
#include "gshmem/info.h"

static void usage(FILE *f) {
    fprintf(f,
"usage: gshmem-info [--gpus | --check | --placement | --help]\n"
"  (no flag)    the build (version, bootstraps, transports), the driver and GPUs found, and\n"
"               every GSHMEM_* environment variable with its value and meaning\n"
"  --gpus       the same, then each visible GPU: name, architecture, memory, VMM and\n"
"               file-descriptor sharing (what the symmetric heap needs), peer access\n"
"  --check      exit 0 if this machine can run gshmem (a driver, a visible GPU with VMM),\n"
"               else the reason (on stderr) and exit 1; then what the transports between\n"
"               nodes find here: mlx5 devices, ports and GIDs, whether GPU memory registers\n"
"               with the NIC and its doorbell maps for the GPU, which transport a job across\n"
"               nodes would take and why\n"
"  --placement  run as the PEs of a job (gshmrun -n 4 gshmem-info --placement): each PE\n"
"               prints its GPU, the PEs sharing it, MPS and its SM share\n"
"  --help       this text\n"
"Exit status: 0 ok; 1 no usable GPU/driver (--check, --gpus, --placement); 2 bad usage or a\n"
"GSHMEM_* variable with a bad value. Unknown GSHMEM_* variables are reported as warnings.\n");
}

/* 0 with *n GPUs, else 1 with *why set. */
static int driver(int *version, int *n, const char **why) {
    return gshmemx_info_driver(version, n, why) != GSHMEM_SUCCESS;
}

static int check(void) {
    int n, v;
    const char *why;
    if (driver(&v, &n, &why)) {
        fprintf(stderr, "gshmem-info --check: cannot run gshmem here: %s\n", why);
        return 1;
    }
    int usable = 0;
    for (int i = 0; i < n; i++) {
        gshmemx_gpu_info_t g;
        usable += gshmemx_info_gpu(i, &g) == GSHMEM_SUCCESS && g.vmm;
    }
    if (!usable) {
        fprintf(stderr, "gshmem-info --check: cannot run gshmem here: none of the %d visible GPUs "
                        "supports CUDA virtual memory management (the symmetric heap needs it)\n", n);
        return 1;
    }
    printf("gshmem-info --check: ok: %d GPU%s usable\n", usable, usable == 1 ? "" : "s");
    return 0;
}

/* What the transports between nodes find here (deep: also what a job would try first). */
static void remote_report(int deep) {
    static char buf[16384];
    if (gshmemx_info_remote(buf, sizeof buf, deep) != GSHMEM_SUCCESS || !buf[0]) return;
    printf("Across nodes (GSHMEM_REMOTE_TRANSPORT):\n");
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) printf("  %s\n", line);
}

static void driver_line(void) {
    int n, v;
    const char *why;
    if (driver(&v, &n, &why)) {
        printf("Driver: %s\n", why);
        return;
    }
    printf("Driver: NVIDIA driver for CUDA %d.%d, %d GPU%s visible (gshmem-info --gpus lists "
           "them)\n", v / 1000, v % 1000 / 10, n, n == 1 ? "" : "s");
}

static int gpus(void) {
    int n, v;
    const char *why;
    if (driver(&v, &n, &why)) {
        printf("GPUs: none usable: %s\n", why);
        return 1;
    }
    printf("GPUs: %d\n", n);
    for (int i = 0; i < n; i++) {
        gshmemx_gpu_info_t g;
        gshmemx_info_gpu(i, &g);
        printf("  %d: %s, sm_%d%d, %.1f GiB, VMM %s, fd sharing %s, peer access to:", i, g.name,
               g.sm_major, g.sm_minor, g.memory / 1073741824.0, g.vmm ? "yes" : "NO",
               g.fd_sharing ? "yes" : "NO");
        for (int j = 0; j < n; j++)
            if (j != i) printf(" %d:%s", j, gshmemx_info_peer_access(i, j) == 1 ? "yes" : "no");
        printf("\n");
    }
    return 0;
}

/* Joins the job as a PE and prints this PE's placement (one line, in PE order). */
static int placement(void) {
    if (gshmemx_init_status() != GSHMEM_SUCCESS) return 1;
    char line[512];
    gshmemx_info_placement(line, sizeof line);
    for (int pe = 0; pe < gshmem_n_pes(); pe++) {
        if (pe == gshmem_my_pe()) printf("placement: %s\n", line);
        fflush(stdout);
        gshmem_barrier_all();
    }
    gshmem_finalize();
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (argc > 2 || (argc == 2 && strcmp(mode, "--gpus") && strcmp(mode, "--check") &&
                     strcmp(mode, "--placement") && strcmp(mode, "--help") && strcmp(mode, "-h"))) {
        fprintf(stderr, "gshmem-info: unknown argument '%s'\n", argc > 2 ? argv[2] : mode);
        usage(stderr);
        return 2;
    }
    if (!strcmp(mode, "--help") || !strcmp(mode, "-h")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(mode, "--placement")) return placement();
    int bad = gshmemx_env_check() != GSHMEM_SUCCESS;
    if (!strcmp(mode, "--check")) {
        if (bad) return 2;
        int rc = check();
        fflush(stderr);
        remote_report(1);
        return rc;
    }
    gshmemx_build_info_t b;
    gshmemx_info_build(&b);
    printf("gshmem %s (OpenSHMEM 1.5 API shape)\n", b.version);
    printf("Built with:\n");
    printf("  CUDA %d.%d (runtime; the driver is reached at run time, not linked)\n",
           b.cuda_version / 1000, b.cuda_version % 1000 / 10);
    printf("  device code: %s\n", b.gpu_archs);
    printf("  bootstraps: %s%s\n", b.bootstraps,
           b.pmix ? "" : "  [pmix: not built: install libpmix-dev and rebuild]");
    printf("  transports: %s%s\n", b.transports,
           strchr(b.transports, ',') ? ""
                                     : "  [PEs on one node only: build with libfabric (libfabric-dev) "
                                       "for the proxy transport to other nodes]");
    printf("  remote libraries found at build time: rdma-core verbs %s, mlx5dv %s, libfabric %s\n",
           b.ibverbs ? "yes" : "no (libibverbs-dev)", b.mlx5dv ? "yes" : "no",
           b.libfabric ? "yes" : "no (libfabric-dev)");
    driver_line();
    remote_report(0);
    printf("Environment (GSHMEM_*: value, then meaning):\n");
    gshmemx_env_print(stdout);
    int rc = !strcmp(mode, "--gpus") ? gpus() : 0;
    return bad ? 2 : rc;
}
