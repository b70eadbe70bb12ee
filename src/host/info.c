/* The tools' view of the library (gshmem/info.h): what this build contains, the driver and
 * GPUs of this machine, where this PE runs. The environment table's calls are config.c's,
 * the launcher's rendezvous bootstrap_uid.c's (a launcher links those without CUDA). */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cuda_driver.h"
#include "placement.h"
#include "state.h"
#include "transport.h"
#include "gshmem/info.h"
#include "gshmem_build_config.h"

static char transports[128];
static pthread_once_t transports_once = PTHREAD_ONCE_INIT;

static void list_transports(void) {
    size_t o = 0;
    for (int t = 0; gshmemi_transports[t] && o < sizeof transports; t++)
        o += (size_t)snprintf(transports + o, sizeof transports - o, "%s%s", t ? ", " : "",
                              gshmemi_transports[t]->name);
}

void gshmemx_info_build(gshmemx_build_info_t *info) {
    if (!info) return;
    pthread_once(&transports_once, list_transports);
    *info = (gshmemx_build_info_t){
        .version = GSHMEM_VERSION_STRING,
        .cuda_version = CUDA_VERSION,
        .gpu_archs = GSHMEM_GPU_ARCHS,
        .bootstraps = GSHMEM_HAVE_PMIX ? "self, uid, pmix" : "self, uid",
        .transports = transports,
        .pmix = GSHMEM_HAVE_PMIX,
        .libfabric = GSHMEM_HAVE_LIBFABRIC,
        .ibverbs = GSHMEM_HAVE_IBVERBS,
        .mlx5dv = GSHMEM_HAVE_MLX5DV,
    };
}

int gshmemx_info_driver(int *driver_version, int *n_gpus, const char **why) {
    const char *w = NULL;
    int n = 0, v = 0;
    CUresult r = gshmemi_driver_load(&w);
    if (r == CUDA_SUCCESS) r = gshmemi_drv.p_cuInit(0);
    if (r == CUDA_SUCCESS) r = cuDeviceGetCount(&n);
    if (r == CUDA_SUCCESS) r = cuDriverGetVersion(&v);
    if (r == CUDA_ERROR_NO_DEVICE || (r == CUDA_SUCCESS && n == 0))
        w = "no GPU visible to this process: check nvidia-smi, CUDA_VISIBLE_DEVICES and the job's "
            "GPU allocation";
    else if (r != CUDA_SUCCESS && !w)
        w = gshmemi_driver_error_string(r);
    if (driver_version) *driver_version = v;
    if (n_gpus) *n_gpus = w ? 0 : n;
    if (why) *why = w;
    return w ? GSHMEM_ERR_NO_DEVICE : GSHMEM_SUCCESS;
}

/* The driver's handle of GPU `gpu`, or -1 when there is no such GPU (or no driver). */
static int device_of(int gpu, CUdevice *d) {
    int n = 0;
    if (!gshmemi_drv.loaded || cuDeviceGetCount(&n) != CUDA_SUCCESS || gpu < 0 || gpu >= n) return -1;
    return cuDeviceGet(d, gpu) == CUDA_SUCCESS ? 0 : -1;
}

int gshmemx_info_gpu(int gpu, gshmemx_gpu_info_t *info) {
    CUdevice d;
    if (!info) return GSHMEM_ERR_INVALID_ARG;
    memset(info, 0, sizeof *info);
    if (!gshmemi_drv.loaded) return GSHMEM_ERR_NO_DEVICE;
    if (device_of(gpu, &d)) return GSHMEM_ERR_INVALID_ARG;
    cuDeviceGetName(info->name, sizeof info->name, d);
    cuDeviceTotalMem(&info->memory, d);
    cuDeviceGetAttribute(&info->vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, d);
    cuDeviceGetAttribute(&info->fd_sharing, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, d);
    cuDeviceGetAttribute(&info->sm_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
    cuDeviceGetAttribute(&info->sm_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
    return GSHMEM_SUCCESS;
}

int gshmemx_info_peer_access(int gpu, int peer) {
    CUdevice a, b;
    int can = 0;
    if (device_of(gpu, &a) || device_of(peer, &b)) return -1;
    return cuDeviceCanAccessPeer(&can, a, b) == CUDA_SUCCESS && can;
}

int gshmemx_info_remote(char *buf, size_t len, int deep) {
    if (!buf || !len) return GSHMEM_ERR_INVALID_ARG;
    size_t o = 0;
    buf[0] = 0;
    for (int t = 0; gshmemi_transports[t] && o + 1 < len; t++) {
        if (!gshmemi_transports[t]->probe) continue;
        gshmemi_transports[t]->probe(buf + o, len - o, deep != 0);
        o += strlen(buf + o);
    }
    return GSHMEM_SUCCESS;
}

int gshmemx_info_placement(char *buf, size_t len) {
    GSHMEMI_REQUIRE_INIT("gshmemx_info_placement");
    if (!buf || !len) return GSHMEM_ERR_INVALID_ARG;
    gshmemi_place_describe(&gshmemi_g, buf, len);
    return GSHMEM_SUCCESS;
}
