/* The host forms of the public calls that the headers only declare: every call of both sides
 * (gshmem.h, gshmem/coll_api.h) and the on-stream families (gshmemx.h, coll_api.h). Nothing
 * is written here: with GSHMEMI_HOST_FORMS defined, each GSHMEMI_HD_FN and GSHMEMI_HOST_FN of
 * the headers' families becomes the definition of its host body (gshmem/forms.h), so a .cu
 * file that includes gshmem.h no longer compiles ~1800 of them (issue 20). */
#define GSHMEMI_HOST_FORMS 1

#include "internal.h"

/* The 16-bit float reductions take pointers to these CUDA C++ types; here only their names
 * are needed (C linkage does not encode parameter types). */
typedef struct __half __half;
typedef struct __nv_bfloat16 __nv_bfloat16;

#include "gshmem.h"
