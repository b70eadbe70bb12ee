/* What one call of the API becomes in each compilation. The families of gshmem.h, gshmemx.h
 * and gshmem/coll_api.h state each call once: its signature, its device body (calls that
 * work on both sides) and its host body. Every .cu file that includes gshmem.h used to
 * compile all ~1700 host bodies (issue 20: the cost of including gshmem.h); now:
 *  - C, C++ and the host pass of nvcc: a declaration; the host form is a function of
 *    libgshmem, compiled once, in src/host/api.c;
 *  - nvcc's device pass (__CUDA_ARCH__): the device form, a template compiled only where
 *    called (gshmem/device/ptx.h says why), exactly the code the calls had before;
 *  - src/host/api.c (GSHMEMI_HOST_FORMS defined): the host form's definition.
 * A call of both sides is declared __host__ __device__ in the host pass, so a kernel may call
 * it there too; nvcc takes the device form from the device pass. */
#ifndef GSHMEM_FORMS_H
#define GSHMEM_FORMS_H

/* GSHMEMI_HD_FN(RET, NAME, (PARAMS), DEVICE BODY, HOST BODY): a call of both sides.
 * GSHMEMI_HOST_FN(RET, NAME, (PARAMS), HOST BODY): a host call (on-stream forms).
 * A body is statements; a comma in it must sit inside parentheses. */
#if defined(__CUDA_ARCH__)
#define GSHMEMI_HD_FN(RET, NAME, PARAMS, DEV, HOST)                                          \
    template <int gshmemi_lazy_ = 0>                                                         \
    static __host__ __device__ __forceinline__ RET NAME PARAMS { DEV }
#elif defined(GSHMEMI_HOST_FORMS)
#define GSHMEMI_HD_FN(RET, NAME, PARAMS, DEV, HOST) GSHMEM_EXPORT RET NAME PARAMS { HOST }
#elif defined(__CUDACC__)
#define GSHMEMI_HD_FN(RET, NAME, PARAMS, DEV, HOST) GSHMEM_EXPORT __host__ __device__ RET NAME PARAMS;
#else
#define GSHMEMI_HD_FN(RET, NAME, PARAMS, DEV, HOST) GSHMEM_EXPORT RET NAME PARAMS;
#endif
#ifdef GSHMEMI_HOST_FORMS
#define GSHMEMI_HOST_FN(RET, NAME, PARAMS, HOST) GSHMEM_EXPORT RET NAME PARAMS { HOST }
#else
#define GSHMEMI_HOST_FN(RET, NAME, PARAMS, HOST) GSHMEM_EXPORT RET NAME PARAMS;
#endif

/* GSHMEMI_HDS_FN(RET, STEM, (PARAMS), DEVICE BODY, HOST BODY): a call of both sides,
 * gshmem_STEM, that also has a warp and a block form, gshmemx_STEM_warp and _block (device
 * only, same parameters and result). nvcc's host pass only parses kernels, so it reads none of
 * gshmem/device/ (that text was half of what gshmem.h cost a .cu file: issue 20): there the
 * scoped forms are declared here, and the device pass defines them in gshmem/device/.
 * GSHMEMI_SCOPED_DECL(RET, STEM, (PARAMS)) declares only the scoped forms.
 * A unit of gshmem itself whose kernels call gshmemi_* internals defines
 * GSHMEMI_DEVICE_INTERNALS: its host pass reads gshmem/device/ as its device pass does (the
 * declarations here would clash with the non-template definitions there). */
#if defined(__CUDACC__) && !defined(__CUDA_ARCH__) && !defined(GSHMEMI_DEVICE_INTERNALS)
#define GSHMEMI_LEAN_HOST_PASS 1
#define GSHMEMI_SCOPED_DECL(RET, STEM, PARAMS)                                               \
    __device__ RET gshmemx_##STEM##_warp PARAMS;                                             \
    __device__ RET gshmemx_##STEM##_block PARAMS;
#else
#define GSHMEMI_SCOPED_DECL(RET, STEM, PARAMS)
#endif
#define GSHMEMI_HDS_FN(RET, STEM, PARAMS, DEV, HOST)                                         \
    GSHMEMI_HD_FN(RET, gshmem_##STEM, PARAMS, DEV, HOST) GSHMEMI_SCOPED_DECL(RET, STEM, PARAMS)

/* The calls of both sides have C linkage except in the device pass, where they are
 * templates (which cannot be extern "C"). */
#if defined(__cplusplus) && !defined(__CUDA_ARCH__)
#define GSHMEMI_HD_BEGIN extern "C" {
#define GSHMEMI_HD_END }
#else
#define GSHMEMI_HD_BEGIN
#define GSHMEMI_HD_END
#endif

#define GSHMEMI_UNPAREN(...) __VA_ARGS__

#endif
