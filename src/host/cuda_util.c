/* CUDA error translation: driver and runtime results become a message naming the call,
 * the error name and its description, and GSHMEM_ERR_CUDA. */
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "cuda_driver.h"
#include "cuda_util.h"

gshmemi_status gshmemi_cu_check(int res, const char *call, const char *file, int line) {
    if (res == CUDA_SUCCESS) return GSHMEM_SUCCESS;
    /* Without a usable driver the loader has said why, in gshmem's words. */
    if (!gshmemi_drv.loaded) return GSHMEM_ERR_NO_DEVICE;
    gshmemi_error("CUDA driver call %s failed: %s (%s) [%s:%d]", call,
                  gshmemi_driver_error_name((CUresult)res),
                  gshmemi_driver_error_string((CUresult)res), file, line);
    return GSHMEM_ERR_CUDA;
}

gshmemi_status gshmemi_cuda_check(int err, const char *call, const char *file, int line) {
    if (err == cudaSuccess) return GSHMEM_SUCCESS;
    gshmemi_error("CUDA runtime call %s failed: %s (%s) [%s:%d]", call,
                  cudaGetErrorName((cudaError_t)err), cudaGetErrorString((cudaError_t)err),
                  file, line);
    return GSHMEM_ERR_CUDA;
}

bool gshmemi_stream_capturing(void *stream) {
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing((cudaStream_t)stream, &cs) != cudaSuccess) {
        (void)cudaGetLastError();   /* e.g. the legacy stream while another thread captures */
        return true;                /* (then nothing may be forked from it either) */
    }
    return cs != cudaStreamCaptureStatusNone;
}
