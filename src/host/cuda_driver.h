/* The CUDA driver API as the library reaches it: through the runtime's driver entry points
 * (cudaGetDriverEntryPointByVersion), never by linking libcuda, so that libgshmem loads on a
 * machine without a driver (build and login nodes, containers) and says so in its own words.
 * A file includes this after <cuda.h>; the macros at the end send every cu* call the
 * library makes to a table that cuInit's replacement (gshmemi_driver_init) fills, so call
 * sites read as plain driver calls. A new driver call is one row of GSHMEMI_DRIVER_FUNCS plus
 * one redirect line. */
#ifndef GSHMEMI_CUDA_DRIVER_H
#define GSHMEMI_CUDA_DRIVER_H

#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every driver function the library and its tools call (cuInit included: the table's copy is
 * the driver's own). A name cuda.h maps to a versioned symbol (cuDeviceTotalMem ->
 * cuDeviceTotalMem_v2) is looked up by its plain name at this header's CUDA_VERSION, which
 * yields exactly that version, and typed by it (__typeof__ expands the macro). */
/* Not every driver function may be listed: a function whose entry point at this CUDA_VERSION has
 * another signature than the prototype its plain name has in cuda.h would be called with the
 * wrong arguments (cuCtxGetDevice: PFN_cuCtxGetDevice_v13000 takes a context too; it crashed
 * gshmem_init under a context the caller made). Check cudaTypedefs.h before adding one. */
#define GSHMEMI_DRIVER_FUNCS(X)                                                              \
    X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString)                    \
    X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetName) X(cuDeviceGetUuid)                 \
    X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDeviceCanAccessPeer)                     \
    X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuCtxGetCurrent)                        \
    X(cuCtxCreate) X(cuCtxDestroy) X(cuCtxPushCurrent) X(cuCtxPopCurrent)                    \
    X(cuCtxGetExecAffinity) X(cuMemGetInfo) X(cuMemGetAllocationGranularity)                 \
    X(cuMemCreate) X(cuMemRelease) X(cuMemAddressReserve) X(cuMemAddressFree) X(cuMemMap)    \
    X(cuMemUnmap) X(cuMemSetAccess) X(cuMemExportToShareableHandle)                          \
    X(cuMemImportFromShareableHandle) X(cuLaunchKernelEx) X(cuStreamWriteValue64)          \
    X(cuStreamWaitValue64) X(cuModuleGetGlobal) X(cuLibraryGetGlobal) X(cuMemcpyHtoD)  \
    X(cuMemRetainAllocationHandle) X(cuMemGetAllocationPropertiesFromHandle)

typedef struct gshmemi_driver {
#define GSHMEMI_DRIVER_FIELD(f) __typeof__(f) *p_##f;
    GSHMEMI_DRIVER_FUNCS(GSHMEMI_DRIVER_FIELD)
#undef GSHMEMI_DRIVER_FIELD
    int loaded;                  /* 1 once every entry above is filled */
} gshmemi_driver;

extern gshmemi_driver gshmemi_drv;

/* Fills the table once (thread-safe; later calls return the first answer). CUDA_SUCCESS, or
 * the failure with *why (if why is not NULL) set to a sentence saying what is wrong and what to
 * do: no NVIDIA driver, a driver older than the runtime, the toolkit's stub libcuda, no GPU
 * visible. Prints nothing. */
CUresult gshmemi_driver_load(const char **why);
/* cuInit through the table; loads it first. On a failure to load, prints the reason once
 * (gshmemi_error; not for CUDA_ERROR_NO_DEVICE, which the caller reports) and returns it. */
CUresult gshmemi_driver_init(unsigned int flags);
/* Error name and description that work without a driver (a fallback text then). */
const char *gshmemi_driver_error_name(CUresult r);
const char *gshmemi_driver_error_string(CUresult r);

#ifdef __cplusplus
}
#endif

/* ---- redirects: cuXxx(...) calls the table ------------------------------------------- */
#undef cuInit
#undef cuDriverGetVersion
#undef cuGetErrorName
#undef cuGetErrorString
#undef cuDeviceGet
#undef cuDeviceGetCount
#undef cuDeviceGetName
#undef cuDeviceGetUuid
#undef cuDeviceGetAttribute
#undef cuDeviceTotalMem
#undef cuDeviceCanAccessPeer
#undef cuDevicePrimaryCtxRetain
#undef cuCtxSetCurrent
#undef cuCtxGetCurrent
#undef cuCtxCreate
#undef cuCtxDestroy
#undef cuCtxPushCurrent
#undef cuCtxPopCurrent
#undef cuCtxGetExecAffinity
#undef cuMemGetInfo
#undef cuMemGetAllocationGranularity
#undef cuMemCreate
#undef cuMemRelease
#undef cuMemAddressReserve
#undef cuMemAddressFree
#undef cuMemMap
#undef cuMemUnmap
#undef cuMemSetAccess
#undef cuMemExportToShareableHandle
#undef cuMemImportFromShareableHandle
#undef cuLaunchKernelEx
#undef cuStreamWriteValue64
#undef cuStreamWaitValue64
#undef cuModuleGetGlobal
#undef cuLibraryGetGlobal
#undef cuMemcpyHtoD
#undef cuMemRetainAllocationHandle
#undef cuMemGetAllocationPropertiesFromHandle
#define cuInit gshmemi_driver_init
#define cuDriverGetVersion (*gshmemi_drv.p_cuDriverGetVersion)
#define cuGetErrorName (*gshmemi_drv.p_cuGetErrorName)
#define cuGetErrorString (*gshmemi_drv.p_cuGetErrorString)
#define cuDeviceGet (*gshmemi_drv.p_cuDeviceGet)
#define cuDeviceGetCount (*gshmemi_drv.p_cuDeviceGetCount)
#define cuDeviceGetName (*gshmemi_drv.p_cuDeviceGetName)
#define cuDeviceGetUuid (*gshmemi_drv.p_cuDeviceGetUuid)
#define cuDeviceGetAttribute (*gshmemi_drv.p_cuDeviceGetAttribute)
#define cuDeviceTotalMem (*gshmemi_drv.p_cuDeviceTotalMem)
#define cuDeviceCanAccessPeer (*gshmemi_drv.p_cuDeviceCanAccessPeer)
#define cuDevicePrimaryCtxRetain (*gshmemi_drv.p_cuDevicePrimaryCtxRetain)
#define cuCtxSetCurrent (*gshmemi_drv.p_cuCtxSetCurrent)
#define cuCtxGetCurrent (*gshmemi_drv.p_cuCtxGetCurrent)
#define cuCtxCreate (*gshmemi_drv.p_cuCtxCreate)
#define cuCtxDestroy (*gshmemi_drv.p_cuCtxDestroy)
#define cuCtxPushCurrent (*gshmemi_drv.p_cuCtxPushCurrent)
#define cuCtxPopCurrent (*gshmemi_drv.p_cuCtxPopCurrent)
#define cuCtxGetExecAffinity (*gshmemi_drv.p_cuCtxGetExecAffinity)
#define cuMemGetInfo (*gshmemi_drv.p_cuMemGetInfo)
#define cuMemGetAllocationGranularity (*gshmemi_drv.p_cuMemGetAllocationGranularity)
#define cuMemCreate (*gshmemi_drv.p_cuMemCreate)
#define cuMemRelease (*gshmemi_drv.p_cuMemRelease)
#define cuMemAddressReserve (*gshmemi_drv.p_cuMemAddressReserve)
#define cuMemAddressFree (*gshmemi_drv.p_cuMemAddressFree)
#define cuMemMap (*gshmemi_drv.p_cuMemMap)
#define cuMemUnmap (*gshmemi_drv.p_cuMemUnmap)
#define cuMemSetAccess (*gshmemi_drv.p_cuMemSetAccess)
#define cuMemExportToShareableHandle (*gshmemi_drv.p_cuMemExportToShareableHandle)
#define cuMemImportFromShareableHandle (*gshmemi_drv.p_cuMemImportFromShareableHandle)
#define cuLaunchKernelEx (*gshmemi_drv.p_cuLaunchKernelEx)
#define cuStreamWriteValue64 (*gshmemi_drv.p_cuStreamWriteValue64)
#define cuStreamWaitValue64 (*gshmemi_drv.p_cuStreamWaitValue64)
#define cuModuleGetGlobal (*gshmemi_drv.p_cuModuleGetGlobal)
#define cuLibraryGetGlobal (*gshmemi_drv.p_cuLibraryGetGlobal)
#define cuMemcpyHtoD (*gshmemi_drv.p_cuMemcpyHtoD)
#define cuMemRetainAllocationHandle (*gshmemi_drv.p_cuMemRetainAllocationHandle)
#define cuMemGetAllocationPropertiesFromHandle (*gshmemi_drv.p_cuMemGetAllocationPropertiesFromHandle)

#endif
