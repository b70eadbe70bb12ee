/* gshmem-info: what this build of gshmem contains and every environment variable with its
 * current value. With --gpus, also the GPUs this process sees (it initializes CUDA, so a
 * launcher must not run it before forking). With --placement, started as PEs of a job
 * (gshmrun -n 4 gshmem-info --placement), each PE says where it runs: its GPU, the PEs
 * sharing it, MPS, its SM share. */
#include <cuda.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "placement.h"
#include "gshmem.h"
#include "gshmem_build_config.h"

static void gpus(void) {
    int n = 0;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&n) != CUDA_SUCCESS) {
        printf("GPUs: none visible (cuInit failed)\n");
        return;
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
    if (argc > 1 && !strcmp(argv[1], "--placement")) return placement();
    printf("gshmem %d.%d (OpenSHMEM 1.5 API shape)\n", GSHMEM_MAJOR_VERSION, GSHMEM_MINOR_VERSION);
    printf("Built with:\n");
    printf("  bootstraps: self, uid (gshmrun, gshmemx_init_attr)%s\n",
           GSHMEM_HAVE_PMIX ? ", pmix" : "  [pmix: not built: install libpmix-dev and rebuild]");
    printf("  transports: p2p (NVLink/PCIe load/store)  [no remote transport yet: single node only]\n");
    printf("  remote libraries found at build time: rdma-core verbs %s, mlx5dv %s, libfabric %s\n",
           GSHMEM_HAVE_IBVERBS ? "yes" : "no (libibverbs-dev)",
           GSHMEM_HAVE_MLX5DV ? "yes" : "no", GSHMEM_HAVE_LIBFABRIC ? "yes" : "no (libfabric-dev)");
    printf("Environment (GSHMEM_*: value, then meaning):\n");
    gshmemi_config c;
    gshmemi_config_load(&c);
    gshmemi_config_print(&c, stdout);
    if (argc > 1 && !strcmp(argv[1], "--gpus")) gpus();
    return 0;
}
