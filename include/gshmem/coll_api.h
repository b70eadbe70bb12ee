/* Teams and collectives: the calls OpenSHMEM defines for host and device (one name, the
 * form picked by where it is compiled) and the on-stream forms. Included by gshmem.h; every
 * typed family is one macro over a list of gshmem/types.h, and each call one GSHMEMI_HD_FN or
 * GSHMEMI_HOST_FN (gshmem/forms.h): a declaration of a libgshmem function on the host. */
#ifndef GSHMEM_COLL_API_H
#define GSHMEM_COLL_API_H

#include "forms.h"

/* The 16-bit float collectives' element types: declared, not defined (gshmem/device/coll.h
 * says why); C++ host code that calls them includes cuda_fp16.h / cuda_bf16.h itself. */
#if defined(__CUDACC__) || defined(__cplusplus)
#define GSHMEMI_HALF_FORMS 1
struct __half;
struct __nv_bfloat16;
#elif defined(GSHMEMI_HOST_FORMS)
#define GSHMEMI_HALF_FORMS 1
#endif

#ifdef __cplusplus
extern "C" {
#endif
/* ---- host calls ----------------------------------------------------------------------------- */
GSHMEM_EXPORT int gshmem_team_split_strided(gshmem_team_t parent, int start, int stride, int size,
                                            const gshmem_team_config_t *config, long config_mask,
                                            gshmem_team_t *new_team);
GSHMEM_EXPORT int gshmem_team_split_2d(gshmem_team_t parent, int xrange,
                                       const gshmem_team_config_t *xaxis_config, long xaxis_mask,
                                       gshmem_team_t *xaxis_team,
                                       const gshmem_team_config_t *yaxis_config,
                                       long yaxis_mask, gshmem_team_t *yaxis_team);
GSHMEM_EXPORT int gshmem_team_get_config(gshmem_team_t team, long config_mask,
                                         gshmem_team_config_t *config);
GSHMEM_EXPORT void gshmem_team_destroy(gshmem_team_t team);

/* ---- on-stream forms ------------------------------------------------------------------------ */
GSHMEMI_HOST_FN(int, gshmemx_team_sync_on_stream, (gshmem_team_t team, gshmemx_stream_t stream),
                return gshmemi_host_team_sync(team, stream, 0, "gshmemx_team_sync_on_stream");)
GSHMEMI_HOST_FN(int, gshmemx_barrier_on_stream, (gshmem_team_t team, gshmemx_stream_t stream),
                return gshmemi_host_team_sync(team, stream, 0, "gshmemx_barrier_on_stream");)
GSHMEMI_HOST_FN(int, gshmemx_sync_all_on_stream, (gshmemx_stream_t stream),
                return gshmemi_host_team_sync(GSHMEM_TEAM_WORLD, stream, 0,
                                              "gshmemx_sync_all_on_stream");)

/* X(coll, WHAT, extra parameters, extra arguments to gshmemi_host_move) */
#define GSHMEMI_MOVE_FORMS(X, ...)                                                           \
    X(broadcast, GSHMEMI_MOVE_BROADCAST, (size_t nelems, int PE_root), (nelems, PE_root, 1, 1), \
      __VA_ARGS__)                                                                           \
    X(fcollect, GSHMEMI_MOVE_FCOLLECT, (size_t nelems), (nelems, 0, 1, 1), __VA_ARGS__)      \
    X(collect, GSHMEMI_MOVE_COLLECT, (size_t nelems), (nelems, 0, 1, 1), __VA_ARGS__)        \
    X(alltoall, GSHMEMI_MOVE_ALLTOALL, (size_t nelems), (nelems, 0, 1, 1), __VA_ARGS__)      \
    X(alltoalls, GSHMEMI_MOVE_ALLTOALLS, (ptrdiff_t dst, ptrdiff_t sst, size_t nelems),      \
      (nelems, 0, dst, sst), __VA_ARGS__)
/* (nelems, root, dst, sst) -> gshmemi_host_move's (nelems, es, root, dst, sst) */
#define GSHMEMI_MOVE_ARGS(ES, n, root, dst, sst) n, ES, root, dst, sst
#define GSHMEMI_MOVE_CALL(ES, ARGS) GSHMEMI_MOVE_ARGS2(ES, GSHMEMI_UNPAREN ARGS)
#define GSHMEMI_MOVE_ARGS2(ES, ...) GSHMEMI_MOVE_ARGS(ES, __VA_ARGS__)

#define GSHMEMI_ON_STREAM_MOVE(COLL, WHAT, PARAMS, ARGS, NAME, T)                           \
    GSHMEMI_HOST_FN(int, gshmemx_##NAME##_##COLL##_on_stream,                                \
                    (gshmem_team_t team, T *dest, const T *source, GSHMEMI_UNPAREN PARAMS,   \
                     gshmemx_stream_t stream),                                               \
                    return gshmemi_host_move(WHAT, team, dest, source,                       \
                                             GSHMEMI_MOVE_CALL(sizeof(T), ARGS), stream, 0,  \
                                             "gshmemx_" #NAME "_" #COLL "_on_stream");)
#define GSHMEMI_ON_STREAM_MOVE_T(NAME, T) GSHMEMI_MOVE_FORMS(GSHMEMI_ON_STREAM_MOVE, NAME, T)
GSHMEM_RMA_TYPES(GSHMEMI_ON_STREAM_MOVE_T)
#ifdef GSHMEMI_HALF_FORMS
GSHMEM_REDUCE_HALF_TYPES(GSHMEMI_ON_STREAM_MOVE_T)
#endif
#define GSHMEMI_ON_STREAM_MOVE_MEM(COLL, WHAT, PARAMS, ARGS, unused1, unused2)              \
    GSHMEMI_HOST_FN(int, gshmemx_##COLL##mem_on_stream,                                      \
                    (gshmem_team_t team, void *dest, const void *source, GSHMEMI_UNPAREN PARAMS, \
                     gshmemx_stream_t stream),                                               \
                    return gshmemi_host_move(WHAT, team, dest, source, GSHMEMI_MOVE_CALL(1, ARGS), \
                                             stream, 0, "gshmemx_" #COLL "mem_on_stream");)
GSHMEMI_MOVE_FORMS(GSHMEMI_ON_STREAM_MOVE_MEM, 0, 0)

#define GSHMEMI_ON_STREAM_RED(SUFFIX, WHAT, OPNAME, OPCODE, NAME, T, CODE)                  \
    GSHMEMI_HOST_FN(int, gshmemx_##NAME##_##OPNAME##_##SUFFIX##_on_stream,                   \
                    (gshmem_team_t team, T *dest, const T *source, size_t nelems,            \
                     gshmemx_stream_t stream),                                               \
                    return gshmemi_host_reduce(WHAT, OPCODE, CODE, team, dest, source, nelems, \
                                               stream, 0,                                    \
                                               "gshmemx_" #NAME "_" #OPNAME "_" #SUFFIX "_on_stream");)
#define GSHMEMI_ON_STREAM_BIT(NAME, T) GSHMEMI_RED_BIT(GSHMEMI_ON_STREAM_RED, NAME, T)
#define GSHMEMI_ON_STREAM_ARITH(NAME, T)                                                     \
    GSHMEMI_RED_ARITH(GSHMEMI_ON_STREAM_RED, NAME, T, GSHMEMI_TYPE_CODE(T))
GSHMEM_REDUCE_BIT_TYPES(GSHMEMI_ON_STREAM_BIT)
GSHMEM_REDUCE_ARITH_TYPES(GSHMEMI_ON_STREAM_ARITH)
#define GSHMEMI_ON_STREAM_HALF(NAME, T)                                                      \
    GSHMEMI_RED_ARITH(GSHMEMI_ON_STREAM_RED, NAME, T, GSHMEMI_TYPE_CODE_##NAME)
#ifdef GSHMEMI_HALF_FORMS
GSHMEM_REDUCE_HALF_TYPES(GSHMEMI_ON_STREAM_HALF)
#endif

#ifdef __cplusplus
}
#endif

/* ---- the calls defined for both sides --------------------------------------------------------- */
GSHMEMI_HD_BEGIN
GSHMEMI_HD_FN(int, gshmem_team_my_pe, (gshmem_team_t team), return gshmemi_dev_team_my_pe(team);,
              return gshmemi_host_team_my_pe(team);)
GSHMEMI_HD_FN(int, gshmem_team_n_pes, (gshmem_team_t team), return gshmemi_dev_team_n_pes(team);,
              return gshmemi_host_team_n_pes(team);)
GSHMEMI_HD_FN(int, gshmem_team_translate_pe,
              (gshmem_team_t src_team, int src_pe, gshmem_team_t dest_team),
              return gshmemi_dev_team_translate_pe(src_team, src_pe, dest_team);,
              return gshmemi_host_team_translate_pe(src_team, src_pe, dest_team);)
/* Where this PE reaches symmetric `dest` on team PE `pe` by load/store, or NULL (invalid
 * team, pe out of the team's range, or not reachable by load/store). */
GSHMEMI_HD_FN(void *, gshmem_team_ptr, (gshmem_team_t team, const void *dest, int pe),
              int wpe = gshmem_team_translate_pe(team, pe, GSHMEM_TEAM_WORLD);
              return wpe < 0 ? (void *)0 : gshmemi_dev_ptr(dest, wpe);,
              int wpe = gshmem_team_translate_pe(team, pe, GSHMEM_TEAM_WORLD);
              return wpe < 0 ? (void *)0 : gshmemi_host_ptr(dest, wpe);)
GSHMEMI_HD_FN(int, gshmem_team_sync, (gshmem_team_t team),
              gshmemi_dev_team_sync(team); return 0;,
              return gshmemi_host_team_sync(team, 0, 1, "gshmem_team_sync");)
GSHMEMI_HD_FN(int, gshmem_barrier, (gshmem_team_t team),
              gshmemi_dev_barrier(team); return 0;,
              return gshmemi_host_team_sync(team, 0, 1, "gshmem_barrier");)
/* (their warp and block forms return nothing) */
GSHMEMI_SCOPED_DECL(void, team_sync, (gshmem_team_t team))
GSHMEMI_SCOPED_DECL(void, barrier, (gshmem_team_t team))
GSHMEMI_HDS_FN(void, sync_all, (void), gshmemi_dev_sync_all();,
               (void)gshmemi_host_team_sync(GSHMEM_TEAM_WORLD, 0, 1, "gshmem_sync_all");)

/* the device forms take the collective's own parameters */
#define GSHMEMI_DEVARGS_broadcast (nelems, PE_root)
#define GSHMEMI_DEVARGS_fcollect (nelems)
#define GSHMEMI_DEVARGS_collect (nelems)
#define GSHMEMI_DEVARGS_alltoall (nelems)
#define GSHMEMI_DEVARGS_alltoalls (dst, sst, nelems)
#define GSHMEMI_HD_MOVE(COLL, WHAT, PARAMS, ARGS, NAME, T)                                   \
    GSHMEMI_HDS_FN(int, NAME##_##COLL,                                                       \
                   (gshmem_team_t team, T *dest, const T *source, GSHMEMI_UNPAREN PARAMS),   \
                   return gshmemi_dev_##NAME##_##COLL(team, dest, source,                    \
                                                      GSHMEMI_UNPAREN GSHMEMI_DEVARGS_##COLL);, \
                   return gshmemi_host_move(WHAT, team, dest, source,                        \
                                            GSHMEMI_MOVE_CALL(sizeof(T), ARGS), 0, 1,        \
                                            "gshmem_" #NAME "_" #COLL);)
#define GSHMEMI_HD_MOVE_T(NAME, T) GSHMEMI_MOVE_FORMS(GSHMEMI_HD_MOVE, NAME, T)
GSHMEM_RMA_TYPES(GSHMEMI_HD_MOVE_T)

#define GSHMEMI_HD_MOVE_MEM(COLL, WHAT, PARAMS, ARGS, unused1, unused2)                      \
    GSHMEMI_HDS_FN(int, COLL##mem,                                                           \
                   (gshmem_team_t team, void *dest, const void *source, GSHMEMI_UNPAREN PARAMS), \
                   return gshmemi_dev_##COLL##mem(team, dest, source,                        \
                                                  GSHMEMI_UNPAREN GSHMEMI_DEVARGS_##COLL);,  \
                   return gshmemi_host_move(WHAT, team, dest, source, GSHMEMI_MOVE_CALL(1, ARGS), \
                                            0, 1, "gshmem_" #COLL "mem");)
GSHMEMI_MOVE_FORMS(GSHMEMI_HD_MOVE_MEM, 0, 0)

#define GSHMEMI_HD_RED(SUFFIX, WHAT, OPNAME, OPCODE, NAME, T, CODE)                          \
    GSHMEMI_HDS_FN(int, NAME##_##OPNAME##_##SUFFIX,                                          \
                   (gshmem_team_t team, T *dest, const T *source, size_t nelems),            \
                   return gshmemi_dev_##NAME##_##OPNAME##_##SUFFIX(team, dest, source, nelems);, \
                   return gshmemi_host_reduce(WHAT, OPCODE, CODE, team, dest, source, nelems, 0, \
                                              1, "gshmem_" #NAME "_" #OPNAME "_" #SUFFIX);)
#define GSHMEMI_HD_BIT(NAME, T) GSHMEMI_RED_BIT(GSHMEMI_HD_RED, NAME, T)
#define GSHMEMI_HD_ARITH(NAME, T) GSHMEMI_RED_ARITH(GSHMEMI_HD_RED, NAME, T, GSHMEMI_TYPE_CODE(T))
GSHMEM_REDUCE_BIT_TYPES(GSHMEMI_HD_BIT)
GSHMEM_REDUCE_ARITH_TYPES(GSHMEMI_HD_ARITH)
#define GSHMEMI_HD_HALF(NAME, T) GSHMEMI_RED_ARITH(GSHMEMI_HD_RED, NAME, T, GSHMEMI_TYPE_CODE_##NAME)
#ifdef GSHMEMI_HALF_FORMS
GSHMEM_REDUCE_HALF_TYPES(GSHMEMI_HD_HALF)
#endif
GSHMEMI_HD_END

/* maxloc over one double2 (x value, y location), block scope, device only (gshmem/device/maxloc.h) */
#ifdef GSHMEMI_LEAN_HOST_PASS
__device__ int gshmemx_double2_maxloc_reduce_block(gshmem_team_t team, double2 *dest,
                                                   const double2 *source, size_t nreduce);
#endif

#endif
