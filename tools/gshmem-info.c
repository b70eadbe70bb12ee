/* gshmem-info: what this build of gshmem contains, whether this machine can run it, and every
 * environment variable with its current value. Works without a GPU or a driver (it says so).
 * See usage() for the flags. */
#include <cuda.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "placement.h"
#include "gshmem.h"
#include "gshmem_build_config.h"

static void usage(FILE *f) {
    fprintf(f,
"usage: gshmem-info [--gpus | --check | --placement | --help]\n"
"  (no flag)    the build (version, bootstraps, transports), the driver and GPUs found, and\n"
"               every GSHMEM_* environment variable with its value and meaning\n"
"  --gpus       the same, then each visible GPU: name, architecture, memory, VMM and\n"
"               file-descriptor sharing (what the symmetric heap needs), peer access\n"
"  --check      one line: exit 0 if this machine can run gshmem (a driver, a visible GPU\n"
"               with VMM), else the reason (on stderr) and exit 1\n"
"  --placement  run as the PEs of a job (gshmrun -n 4 gshmem-info --placement): each PE\n"
"               prints its GPU, the PEs sharing it, MPS and its SM share\n"
"  --help       this text\n"
"Exit status: 0 ok; 1 no usable GPU/driver (--check, --gpus, --placement); 2 bad usage or a\n"
"GSHMEM_* variable with a bad value. Unknown GSHMEM_* variables are reported as warnings.\n");
}

/* 0 with *n GPUs, else 1 with *why set. */
static int driver(int *n, const char **why) {
    *n = 0;
    if (gshmemi_driver_load(why) != CUDA_SUCCESS) return 1;
    CUresult r = gshmemi_drv.p_cuInit(0);
    if (r == CUDA_SUCCESS) r = cuDeviceGetCount(n);
    if (r == CUDA_ERROR_NO_DEVICE || (r == CUDA_SUCCESS && *n == 0)) {
        *why = "no GPU visible to this process: check nvidia-smi, CUDA_VISIBLE_DEVICES and the "
               "job's GPU allocation";
        return 1;
    }
    if (r != CUDA_SUCCESS) {
        *why = gshmemi_driver_error_string(r);
        return 1;
    }
    return 0;
}

static int check(void) {
    int n;
    const char *why;
    if (driver(&n, &why)) {
        fprintf(stderr, "gshmem-info --check: cannot run gshmem here: %s\n", why);
        return 1;
    }
    int usable = 0;
    for (int i = 0; i < n; i++) {
        CUdevice d;
        int vmm = 0;
        if (cuDeviceGet(&d, i) == CUDA_SUCCESS &&
            cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, d) ==
                CUDA_SUCCESS && vmm)
            usable++;
    }
    if (!usable) {
        fprintf(stderr, "gshmem-info --check: cannot run gshmem here: none of the %d visible GPUs "
                        "supports CUDA virtual memory management (the symmetric heap needs it)\n", n);
        return 1;
    }
    printf("gshmem-info --check: ok: %d GPU%s usable\n", usable, usable == 1 ? "" : "s");
    return 0;
}

static void driver_line(void) {
    int n, v = 0;
    const char *why;
    if (driver(&n, &why)) {
        printf("Driver: %s\n", why);
        return;
    }
    cuDriverGetVersion(&v);
    printf("Driver: NVIDIA driver for CUDA %d.%d, %d GPU%s visible (gshmem-info --gpus lists "
           "them)\n", v / 1000, v % 1000 / 10, n, n == 1 ? "" : "s");
}

static int gpus(void) {
    int n = 0;
    const char *why;
    if (driver(&n, &why)) {
        printf("GPUs: none usable: %s\n", why);
        return 1;
    }
    printf("GPUs: %d\n", n);
    for (int i = 0; i < n; i++) {
        CUdevice d;
        char name[128];
        int vmm = 0, fd = 0, maj = 0, min = 0;
        size_t mem = 0;
        cuDeviceGet(&d, i);
        cuDeviceGetName(name, sizeof name, d);
        cuDeviceTotalMem(&mem, d);
        cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, d);
        cuDeviceGetAttribute(&fd, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, d);
        cuDeviceGetAttribute(&maj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
        cuDeviceGetAttribute(&min, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
        printf("  %d: %s, sm_%d%d, %.1f GiB, VMM %s, fd sharing %s, peer access to:", i, name,
               maj, min, mem / 1073741824.0, vmm ? "yes" : "NO", fd ? "yes" : "NO");
        for (int j = 0; j < n; j++) {
            CUdevice e;
            int can = 0;
            if (j == i) continue;
            cuDeviceGet(&e, j);
            cuDeviceCanAccessPeer(&can, d, e);
            printf(" %d:%s", j, can ? "yes" : "no");
        }
        printf("\n");
    }
    return 0;
}

/* Joins the job as a PE and prints this PE's placement (one line, in PE order). */
static int placement(void) {
    if (gshmemx_init_status() != GSHMEM_SUCCESS) return 1;
    char line[512];
    gshmemi_place_describe(&gshmemi_g, line, sizeof line);
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
    gshmemi_config c;
    int bad = gshmemi_config_load(&c) != GSHMEM_SUCCESS;
    if (!strcmp(mode, "--check")) return bad ? 2 : check();
    printf("gshmem %s (OpenSHMEM 1.5 API shape)\n", GSHMEM_VERSION_STRING);
    printf("Built with:\n");
    printf("  CUDA %d.%d (runtime; the driver is reached at run time, not linked)\n",
           CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
    printf("  device code: %s\n", GSHMEM_GPU_ARCHS);
    printf("  bootstraps: self, uid (gshmrun, gshmemx_init_attr)%s\n",
           GSHMEM_HAVE_PMIX ? ", pmix" : "  [pmix: not built: install libpmix-dev and rebuild]");
    printf("  transports: p2p (NVLink/PCIe load/store)  [no remote transport yet: single node only]\n");
    printf("  remote libraries found at build time: rdma-core verbs %s, mlx5dv %s, libfabric %s\n",
           GSHMEM_HAVE_IBVERBS ? "yes" : "no (libibverbs-dev)",
           GSHMEM_HAVE_MLX5DV ? "yes" : "no", GSHMEM_HAVE_LIBFABRIC ? "yes" : "no (libfabric-dev)");
    driver_line();
    printf("Environment (GSHMEM_*: value, then meaning):\n");
    gshmemi_config_print(&c, stdout);
    int rc = !strcmp(mode, "--gpus") ? gpus() : 0;
    return bad ? 2 : rc;
}
