/* The host forms of the public calls that the headers only declare: every call of both sides
 * (gshmem.h, gshmem/coll_api.h) and the on-stream families (gshmemx.h, coll_api.h). Nothing
 * is written here: with GSHMEMI_HOST_FORMS defined, each GSHMEMI_HD_FN and GSHMEMI_HOST_FN of
 * the headers' families becomes the definition of its host body (gshmem/forms.h), exported
 * (GSHMEM_EXPORT), so a .cu file that includes gshmem.h compiles none of the ~1800. */
#define GSHMEMI_HOST_FORMS 1

#include "entry.h"

/* The 16-bit float collectives take pointers to these CUDA C++ types; here their names and
 * their size (2 bytes: the moves count bytes) are all that is needed (C linkage does not encode
 * parameter types). */
typedef struct __half { unsigned short bits; } __half;
typedef struct __nv_bfloat16 { unsigned short bits; } __nv_bfloat16;

#include "gshmem.h"
