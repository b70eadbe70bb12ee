/* The driver table of cuda_driver.h: filled once from the CUDA runtime's driver entry points,
 * with the reason in gshmem's words when there is no usable driver. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_driver.h"
#include "status.h"

gshmemi_driver gshmemi_drv;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static CUresult load_result;
static char load_why[512];

/* Runtime 12.5+ asks for an exact ABI version; older ones give the runtime's own. */
static cudaError_t entry_point(const char *sym, void **fn, enum cudaDriverEntryPointQueryResult *q) {
#if CUDART_VERSION >= 12050
    return cudaGetDriverEntryPointByVersion(sym, fn, CUDA_VERSION, cudaEnableDefault, q);
#else
    return cudaGetDriverEntryPoint(sym, fn, cudaEnableDefault, q);
#endif
}

/* The runtime answers "insufficient driver" both when there is none and when it is too old;
 * opening libcuda.so.1 ourselves tells which. */
static CUresult no_driver(void) {
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!h) {
        snprintf(load_why, sizeof load_why,
                 "no NVIDIA driver on this machine (libcuda.so.1 not found): run on a node with an "
                 "NVIDIA GPU and its driver installed (in a container: --gpus all / the NVIDIA "
                 "container toolkit); building and gshmem-info work without one");
        return CUDA_ERROR_NOT_INITIALIZED;
    }
    int drv = 0, rt = 0;
    CUresult (*get)(int *) = (CUresult (*)(int *))dlsym(h, "cuDriverGetVersion");
    if (get) get(&drv);
    cudaRuntimeGetVersion(&rt);
    snprintf(load_why, sizeof load_why,
             "the NVIDIA driver (CUDA %d.%d) is older than the CUDA runtime gshmem was built with "
             "(%d.%d): update the driver, or build gshmem with a toolkit the driver supports",
             drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
    dlclose(h);
    return CUDA_ERROR_NOT_INITIALIZED;
}

static void load(void) {
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSuccess;
    cudaError_t e = cudaSuccess;
#define GSHMEMI_DRIVER_LOOKUP(f)                                                              \
    if (e == cudaSuccess && q == cudaDriverEntryPointSuccess) {                              \
        e = entry_point(#f, (void **)&gshmemi_drv.p_##f, &q);                                \
        if (e == cudaSuccess && q != cudaDriverEntryPointSuccess) {                          \
            snprintf(load_why, sizeof load_why,                                               \
                     "the NVIDIA driver has no %s (CUDA %d.%d API): update the driver", #f,  \
                     CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);                          \
            load_result = CUDA_ERROR_NOT_FOUND;                                              \
            return;                                                                           \
        }                                                                                     \
    }
    GSHMEMI_DRIVER_FUNCS(GSHMEMI_DRIVER_LOOKUP)
#undef GSHMEMI_DRIVER_LOOKUP
    switch (e) {
    case cudaSuccess:
        gshmemi_drv.loaded = 1;
        load_result = CUDA_SUCCESS;
        return;
    case cudaErrorInsufficientDriver:
        load_result = no_driver();
        return;
    case cudaErrorStubLibrary:
        snprintf(load_why, sizeof load_why,
                 "the CUDA driver found is the toolkit's stub (stubs/libcuda.so), which only "
                 "satisfies the linker: take the stubs directory out of LD_LIBRARY_PATH / "
                 "ld.so.conf and run where the NVIDIA driver is installed");
        load_result = CUDA_ERROR_STUB_LIBRARY;
        return;
    case cudaErrorNoDevice:
        snprintf(load_why, sizeof load_why,
                 "no GPU visible to this process (CUDA_VISIBLE_DEVICES='%s'): check nvidia-smi, "
                 "CUDA_VISIBLE_DEVICES and the job's GPU allocation",
                 getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "unset");
        load_result = CUDA_ERROR_NO_DEVICE;
        return;
    default:
        snprintf(load_why, sizeof load_why, "the CUDA runtime could not reach the driver: %s (%s)",
                 cudaGetErrorName(e), cudaGetErrorString(e));
        load_result = CUDA_ERROR_UNKNOWN;
        return;
    }
}

CUresult gshmemi_driver_load(const char **why) {
    pthread_once(&load_once, load);
    if (why) *why = load_result == CUDA_SUCCESS ? NULL : load_why;
    return load_result;
}

CUresult gshmemi_driver_init(unsigned int flags) {
    static int said;
    const char *why;
    CUresult r = gshmemi_driver_load(&why);
    if (r != CUDA_SUCCESS) {
        /* CUDA_ERROR_NO_DEVICE is the caller's to report (it knows which GPU it wanted). */
        if (r != CUDA_ERROR_NO_DEVICE && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
            gshmemi_error("%s", why);
        return r;
    }
    r = gshmemi_drv.p_cuInit(flags);
    if (r == CUDA_ERROR_STUB_LIBRARY && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
        gshmemi_error("the CUDA driver found is the toolkit's stub (stubs/libcuda.so): take the "
                      "stubs directory out of LD_LIBRARY_PATH / ld.so.conf");
    return r;
}

/* Names of the results the library meets without a driver to ask. */
static const char *fallback_name(CUresult r) {
    switch (r) {
    case CUDA_SUCCESS: return "CUDA_SUCCESS";
    case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
    case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
    case CUDA_ERROR_STUB_LIBRARY: return "CUDA_ERROR_STUB_LIBRARY";
    case CUDA_ERROR_NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
    default: return NULL;
    }
}

const char *gshmemi_driver_error_name(CUresult r) {
    const char *s = NULL;
    if (gshmemi_drv.loaded && gshmemi_drv.p_cuGetErrorName(r, &s) == CUDA_SUCCESS && s) return s;
    s = fallback_name(r);
    if (s) return s;
    static __thread char buf[32];
    snprintf(buf, sizeof buf, "CUresult %d", (int)r);
    return buf;
}

const char *gshmemi_driver_error_string(CUresult r) {
    const char *s = NULL;
    if (gshmemi_drv.loaded && gshmemi_drv.p_cuGetErrorString(r, &s) == CUDA_SUCCESS && s) return s;
    if (r == CUDA_ERROR_STUB_LIBRARY) return "the toolkit's stub libcuda, not a driver";
    if (r == CUDA_ERROR_NO_DEVICE) return "no CUDA-capable device is detected";
    return gshmemi_drv.loaded ? "no description" : "no usable CUDA driver";
}
