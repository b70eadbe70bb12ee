/* CUDA error translation (cuda_util.c): a driver or runtime result becomes a message naming
 * the call, the error name and its description, and GSHMEM_ERR_CUDA. */
#ifndef GSHMEMI_CUDA_UTIL_H
#define GSHMEMI_CUDA_UTIL_H

#include <stdbool.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

gshmemi_status gshmemi_cu_check(int cu_result, const char *call, const char *file, int line);
gshmemi_status gshmemi_cuda_check(int cuda_err, const char *call, const char *file, int line);
#define GSHMEMI_CU(call) GSHMEMI_CHECK(gshmemi_cu_check((int)(call), #call, __FILE__, __LINE__))
#define GSHMEMI_CUDA(call) GSHMEMI_CHECK(gshmemi_cuda_check((int)(call), #call, __FILE__, __LINE__))
/* Whether `stream` is being captured into a CUDA graph (the collective plan asks; its unit
 * test, which links no CUDA, gives a stand-in). */
bool gshmemi_stream_capturing(void *stream);

#ifdef __cplusplus
}
#endif

#endif
