/* The collectives' entry points by team handle (one-node algorithms, or the cross-node ones
 * for teams that span nodes) and the public device names, generated per scope and type from the
 * lists of gshmem/types.h. */
#ifndef GSHMEM_DEVICE_COLL_API_H
#define GSHMEM_DEVICE_COLL_API_H

#include "reduce.h"
#include "move.h"

#if GSHMEMI_ROUTED
#include "xnode.h"
#endif

/* Entry points by team handle (the on-stream kernels pass the host's copy of the entry
 * instead: no dependent loads from the team table before the first flag). A team whose
 * members span nodes takes the cross-node algorithms (in a GSHMEM_LOAD_STORE_ONLY unit the entry
 * check stops it with a message instead). */
template <class T, int OP, class S, int U = 1>
GSHMEMI_DEV void gshmemi_reduce(int team, int what, T *dest, const T *src, size_t n, int c,
                                int nch, const char *call) {
    const gshmemi_team *t = gshmemi_team_member(team, call);
#if GSHMEMI_ROUTED
    if (t->remote) return gshmemi_xnode_reduce<T, OP, S>(t, team, what, dest, src, n, GSHMEMI_XNODE_AUTO, call);
#endif
    gshmemi_reduce_t<T, OP, S, U>(t, team, what, dest, src, n, c, nch, call);
}
template <class S>
GSHMEMI_DEV void gshmemi_move(int team, int what, void *dest, const void *src, size_t n,
                              size_t es, int root, ptrdiff_t dst, ptrdiff_t sst, int c, int nch,
                              const char *call) {
    const gshmemi_team *t = gshmemi_team_member(team, call);
#if GSHMEMI_ROUTED
    if (t->remote)
        return gshmemi_xnode_move<S, false>(t, team, what, dest, src, n, es, root, dst, sst, GSHMEMI_XNODE_AUTO, call);
#endif
    gshmemi_move_t<S>(t, team, what, dest, src, n, es, root, dst, sst, c, nch, call);
}

/* ---- public device names ------------------------------------------------------------------ */
/* The three scopes of every collective: DEF(prefix, suffix, scope). */
/* The name a scope's calls give in messages (the thread-scope functions are reached through
 * the gshmem_ names of gshmem.h). */
#define GSHMEMI_COLL_NAME_thread "gshmem_"
#define GSHMEMI_COLL_NAME_warp "gshmemx_"
#define GSHMEMI_COLL_NAME_block "gshmemx_"
#define GSHMEMI_COLL_SCOPES(DEF, ...)                                                        \
    DEF(gshmemi_dev_, , thread, __VA_ARGS__)                                                 \
    DEF(gshmemx_, _warp, warp, __VA_ARGS__)                                                  \
    DEF(gshmemx_, _block, block, __VA_ARGS__)

/* fcollect, collect and alltoall of one family (typed: T, sizeof(T); mem: void, 1 byte): no
 * root, no strides. NAME is the whole function name, STR the name messages give. */
#define GSHMEMI_DEF_MOVE1(NAME, T, ES, WHAT, scope, STR)                                      \
    GSHMEMI_API int NAME(int team, T *dest, const T *src, size_t n) {                        \
        gshmemi_move<gshmemi_scope_##scope>(team, WHAT, dest, src, n, ES, 0, 1, 1, 0, 1, STR); \
        return 0;                                                                            \
    }
#define GSHMEMI_DEF_MOVE_MEM(prefix, suffix, scope, unused)                                  \
    GSHMEMI_API int prefix##broadcastmem##suffix(int team, void *dest, const void *src,      \
                                                 size_t nbytes, int root) {                  \
        gshmemi_move<gshmemi_scope_##scope>(team, GSHMEMI_MOVE_BROADCAST, dest, src, nbytes, 1, \
                                            root, 1, 1, 0, 1, GSHMEMI_COLL_NAME_##scope "broadcastmem" #suffix); \
        return 0;                                                                            \
    }                                                                                        \
    GSHMEMI_DEF_MOVE1(prefix##fcollectmem##suffix, void, 1, GSHMEMI_MOVE_FCOLLECT, scope,      \
                      GSHMEMI_COLL_NAME_##scope "fcollectmem" #suffix)                       \
    GSHMEMI_DEF_MOVE1(prefix##collectmem##suffix, void, 1, GSHMEMI_MOVE_COLLECT, scope,        \
                      GSHMEMI_COLL_NAME_##scope "collectmem" #suffix)                        \
    GSHMEMI_DEF_MOVE1(prefix##alltoallmem##suffix, void, 1, GSHMEMI_MOVE_ALLTOALL, scope,      \
                      GSHMEMI_COLL_NAME_##scope "alltoallmem" #suffix)                       \
    GSHMEMI_API int prefix##alltoallsmem##suffix(int team, void *dest, const void *src,      \
                                                 ptrdiff_t dst, ptrdiff_t sst, size_t nelems) { \
        gshmemi_move<gshmemi_scope_##scope>(team, GSHMEMI_MOVE_ALLTOALLS, dest, src, nelems, 1, 0, \
                                            dst, sst, 0, 1, GSHMEMI_COLL_NAME_##scope "alltoallsmem" #suffix); \
        return 0;                                                                            \
    }
GSHMEMI_COLL_SCOPES(GSHMEMI_DEF_MOVE_MEM, 0)

#define GSHMEMI_DEF_MOVE_TYPED(prefix, suffix, scope, NAME, T)                               \
    GSHMEMI_API int prefix##NAME##_broadcast##suffix(int team, T *dest, const T *src,        \
                                                     size_t nelems, int root) {              \
        gshmemi_move<gshmemi_scope_##scope>(team, GSHMEMI_MOVE_BROADCAST, dest, src, nelems,   \
                                            sizeof(T), root, 1, 1, 0, 1,                     \
                                            GSHMEMI_COLL_NAME_##scope #NAME "_broadcast" #suffix);             \
        return 0;                                                                            \
    }                                                                                        \
    GSHMEMI_DEF_MOVE1(prefix##NAME##_fcollect##suffix, T, sizeof(T), GSHMEMI_MOVE_FCOLLECT, scope, \
                      GSHMEMI_COLL_NAME_##scope #NAME "_fcollect" #suffix)                   \
    GSHMEMI_DEF_MOVE1(prefix##NAME##_collect##suffix, T, sizeof(T), GSHMEMI_MOVE_COLLECT, scope, \
                      GSHMEMI_COLL_NAME_##scope #NAME "_collect" #suffix)                    \
    GSHMEMI_DEF_MOVE1(prefix##NAME##_alltoall##suffix, T, sizeof(T), GSHMEMI_MOVE_ALLTOALL, scope, \
                      GSHMEMI_COLL_NAME_##scope #NAME "_alltoall" #suffix)                   \
    GSHMEMI_API int prefix##NAME##_alltoalls##suffix(int team, T *dest, const T *src,        \
                                                     ptrdiff_t dst, ptrdiff_t sst,           \
                                                     size_t nelems) {                        \
        gshmemi_move<gshmemi_scope_##scope>(team, GSHMEMI_MOVE_ALLTOALLS, dest, src, nelems,   \
                                            sizeof(T), 0, dst, sst, 0, 1,                    \
                                            GSHMEMI_COLL_NAME_##scope #NAME "_alltoalls" #suffix);             \
        return 0;                                                                            \
    }
#define GSHMEMI_DEF_MOVE_TYPED_ALL(NAME, T) GSHMEMI_COLL_SCOPES(GSHMEMI_DEF_MOVE_TYPED, NAME, T)
GSHMEM_RMA_TYPES(GSHMEMI_DEF_MOVE_TYPED_ALL)

/* One reduction-family function (SUFFIX reduce/reducescatter/inscan/exscan) in one scope;
 * GSHMEMI_RED_BIT/ARITH (types.h) apply it to every operator and collective of a type. */
#define GSHMEMI_DEF_RED_SCOPED(prefix, suffix, scope, SUFFIX, WHAT, OPNAME, OPCODE, NAME, T)  \
    GSHMEMI_API int prefix##NAME##_##OPNAME##_##SUFFIX##suffix(int team, T *dest, const T *src, \
                                                               size_t nelems) {              \
        gshmemi_reduce<T, OPCODE, gshmemi_scope_##scope>(team, WHAT, dest, src, nelems, 0, 1,  \
                                                         GSHMEMI_COLL_NAME_##scope #NAME "_" #OPNAME "_" #SUFFIX #suffix); \
        return 0;                                                                            \
    }
#define GSHMEMI_DEF_RED(SUFFIX, WHAT, OPNAME, OPCODE, NAME, T, CODE)                         \
    GSHMEMI_COLL_SCOPES(GSHMEMI_DEF_RED_SCOPED, SUFFIX, WHAT, OPNAME, OPCODE, NAME, T)
#define GSHMEMI_DEF_RED_BIT(NAME, T) GSHMEMI_RED_BIT(GSHMEMI_DEF_RED, NAME, T)
#define GSHMEMI_DEF_RED_ARITH(NAME, T) GSHMEMI_RED_ARITH(GSHMEMI_DEF_RED, NAME, T, 0)
GSHMEM_REDUCE_BIT_TYPES(GSHMEMI_DEF_RED_BIT)
GSHMEM_REDUCE_ARITH_TYPES(GSHMEMI_DEF_RED_ARITH)
GSHMEM_REDUCE_HALF_TYPES(GSHMEMI_DEF_RED_ARITH)

#endif
