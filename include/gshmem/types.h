/* Types, constants and the typed-family lists shared by host and device code. Every typed
 * API family is one macro applied to one of the lists below (never pasted per type). */
#ifndef GSHMEM_TYPES_H
#define GSHMEM_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* Marks a function of libgshmem's public API: the library is built with hidden visibility, so
 * only what is declared with this is exported. */
#if defined(__GNUC__) || defined(__clang__)
#define GSHMEM_EXPORT __attribute__((visibility("default")))
#else
#define GSHMEM_EXPORT
#endif

/* gshmem's own version (meson.build's project version must agree: the build checks it).
 * gshmem_info_get_version answers the OpenSHMEM specification version instead (1.5). */
#define GSHMEM_MAJOR_VERSION 0
#define GSHMEM_MINOR_VERSION 1
#define GSHMEM_PATCH_VERSION 0
#define GSHMEM_VERSION_STRING "0.1.0"
#define GSHMEM_VENDOR_STRING "gshmem"
/* Size of the buffer gshmem_info_get_name fills, terminating NUL included (OpenSHMEM's
 * SHMEM_MAX_NAME_LEN). */
#define GSHMEM_MAX_NAME_LEN 64

/* Status codes returned by host calls (0 = success). */
#define GSHMEM_SUCCESS             0
#define GSHMEM_ERR_INVALID_ARG     1  /* bad argument: the message names it */
#define GSHMEM_ERR_NOT_INITIALIZED 2  /* call before gshmem_init / after finalize */
#define GSHMEM_ERR_NO_MEMORY       3  /* heap or host memory exhausted */
#define GSHMEM_ERR_CUDA            4  /* a CUDA driver/runtime call failed */
#define GSHMEM_ERR_BOOTSTRAP       5  /* rendezvous with the other PEs failed */
#define GSHMEM_ERR_NOT_AVAILABLE   6  /* feature/environment not present */
#define GSHMEM_ERR_NO_DEVICE       7  /* no usable GPU for this PE */
#define GSHMEM_ERR_TIMEOUT         8  /* a peer did not answer in time */
#define GSHMEM_ERR_INTERNAL        9
#define GSHMEM_ERR_LAUNCH          10  /* a kernel cannot be launched as asked (collective launch) */

/* Comparison operators of wait_until/test (OpenSHMEM values). */
#define GSHMEM_CMP_EQ 0
#define GSHMEM_CMP_NE 1
#define GSHMEM_CMP_GT 2
#define GSHMEM_CMP_LE 3
#define GSHMEM_CMP_LT 4
#define GSHMEM_CMP_GE 5

/* Signal operators of put_signal / signal_op. */
#define GSHMEM_SIGNAL_SET 0
#define GSHMEM_SIGNAL_ADD 1

/* Thread levels (OpenSHMEM). gshmem is thread-safe for RMA; init/finalize/malloc are
 * collective and must be called by one thread per PE. */
#define GSHMEM_THREAD_SINGLE     0
#define GSHMEM_THREAD_FUNNELED   1
#define GSHMEM_THREAD_SERIALIZED 2
#define GSHMEM_THREAD_MULTIPLE   3

/* ---- typed-family lists: X(TYPENAME, TYPE) ------------------------------------------ */
/* OpenSHMEM standard RMA types (Table "Standard RMA Types"). */
#define GSHMEM_RMA_TYPES(X)                                                                  \
    X(float, float) X(double, double) X(char, char) X(schar, signed char)                   \
    X(short, short) X(int, int) X(long, long) X(longlong, long long)                        \
    X(uchar, unsigned char) X(ushort, unsigned short) X(uint, unsigned int)                 \
    X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int8, int8_t)                \
    X(int16, int16_t) X(int32, int32_t) X(int64, int64_t) X(uint8, uint8_t)                 \
    X(uint16, uint16_t) X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t)             \
    X(ptrdiff, ptrdiff_t)

/* Point-to-point synchronization types (wait_until / test): OpenSHMEM's list. */
#define GSHMEM_P2P_SYNC_TYPES(X)                                                             \
    X(short, short) X(int, int) X(long, long) X(longlong, long long)                        \
    X(ushort, unsigned short) X(uint, unsigned int) X(ulong, unsigned long)                 \
    X(ulonglong, unsigned long long) X(int32, int32_t) X(int64, int64_t)                    \
    X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t) X(ptrdiff, ptrdiff_t)

/* Sized RMA forms: X(BITS) for put8 ... put128 (element size BITS/8 bytes). */
#define GSHMEM_SIZED_BITS(X) X(8) X(16) X(32) X(64) X(128)

/* Atomic memory operation types (OpenSHMEM "Standard AMO", "Extended AMO" and "Bitwise AMO"
 * types). Every atomic family is one macro applied to one of these. */
#define GSHMEM_AMO_STD_TYPES(X)                                                              \
    X(int, int) X(long, long) X(longlong, long long) X(uint, unsigned int)                  \
    X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int32, int32_t)              \
    X(int64, int64_t) X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t)               \
    X(ptrdiff, ptrdiff_t)
#define GSHMEM_AMO_EXT_TYPES(X) GSHMEM_AMO_STD_TYPES(X) X(float, float) X(double, double)
#define GSHMEM_AMO_BIT_TYPES(X)                                                              \
    X(uint, unsigned int) X(ulong, unsigned long) X(ulonglong, unsigned long long)          \
    X(int32, int32_t) X(int64, int64_t) X(uint32, uint32_t) X(uint64, uint64_t)

/* Atomic operation codes shared by the device code and the host forms. */
#define GSHMEMI_AMO_FETCH 0
#define GSHMEMI_AMO_SET 1
#define GSHMEMI_AMO_SWAP 2
#define GSHMEMI_AMO_CSWAP 3
#define GSHMEMI_AMO_ADD 4       /* fetch_add, add, fetch_inc, inc */
#define GSHMEMI_AMO_AND 5
#define GSHMEMI_AMO_OR 6
#define GSHMEMI_AMO_XOR 7

/* Wait/test over sets of variables (host forms): which condition ends the wait. */
#define GSHMEMI_WAIT_ALL 0
#define GSHMEMI_WAIT_ANY 1
#define GSHMEMI_WAIT_SOME 2


/* Reduction types (OpenSHMEM 1.5 "Reduction Types, Names and Supporting Operations"):
 * and/or/xor on the BIT list, min/max on the MINMAX list, sum/prod (and the scans) on the
 * ARITH list. long double and the complex types are not offered (no GPU arithmetic). In
 * CUDA C++ the ARITH and MINMAX families also cover half and bfloat16 (extensions). */
#define GSHMEM_REDUCE_BIT_TYPES(X)                                                           \
    X(uchar, unsigned char) X(ushort, unsigned short) X(uint, unsigned int)                 \
    X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int8, int8_t)                \
    X(int16, int16_t) X(int32, int32_t) X(int64, int64_t) X(uint8, uint8_t)                 \
    X(uint16, uint16_t) X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t)
#define GSHMEM_REDUCE_MINMAX_TYPES(X)                                                        \
    GSHMEM_REDUCE_BIT_TYPES(X) X(char, char) X(schar, signed char) X(short, short)          \
    X(int, int) X(long, long) X(longlong, long long) X(ptrdiff, ptrdiff_t) X(float, float)  \
    X(double, double)
#define GSHMEM_REDUCE_ARITH_TYPES(X) GSHMEM_REDUCE_MINMAX_TYPES(X)
/* (min, max, sum and prod share one type list: OpenSHMEM's sum/prod list adds only the
 * complex types, which gshmem does not offer.) */
/* X(TYPENAME, TYPE) for the 16-bit floating types (CUDA C++ only; a unit that reduces them
 * includes cuda_fp16.h/cuda_bf16.h itself: gshmem.h only declares the types) */
#define GSHMEM_REDUCE_HALF_TYPES(X) X(half, __half) X(bfloat16, __nv_bfloat16)

/* Reduction operators: X(opname, code, ...) (the extra arguments are passed through, so an
 * operator list can be applied to one type). */
#define GSHMEM_REDUCE_BIT_OPS(X, ...)                                                        \
    X(and, GSHMEMI_OP_AND, __VA_ARGS__) X(or, GSHMEMI_OP_OR, __VA_ARGS__)                   \
    X(xor, GSHMEMI_OP_XOR, __VA_ARGS__)
#define GSHMEM_REDUCE_ARITH_OPS(X, ...)                                                      \
    X(min, GSHMEMI_OP_MIN, __VA_ARGS__) X(max, GSHMEMI_OP_MAX, __VA_ARGS__)                 \
    X(sum, GSHMEMI_OP_SUM, __VA_ARGS__) X(prod, GSHMEMI_OP_PROD, __VA_ARGS__)
#define GSHMEMI_OP_AND 0
#define GSHMEMI_OP_OR 1
#define GSHMEMI_OP_XOR 2
#define GSHMEMI_OP_MIN 3
#define GSHMEMI_OP_MAX 4
#define GSHMEMI_OP_SUM 5
#define GSHMEMI_OP_PROD 6

/* The reduction collectives: X(suffix, WHAT, ...) (scans: sum only). */
#define GSHMEMI_REDUCE_FORMS(X, ...)                                                         \
    X(reduce, GSHMEMI_COLL_REDUCE, __VA_ARGS__)                                              \
    X(reducescatter, GSHMEMI_COLL_REDUCESCATTER, __VA_ARGS__)
#define GSHMEMI_SCAN_FORMS(X, ...)                                                           \
    X(inscan, GSHMEMI_COLL_INSCAN, __VA_ARGS__) X(exscan, GSHMEMI_COLL_EXSCAN, __VA_ARGS__)

/* Every reduction-family function of a type, for one form:
 * FORM(SUFFIX, WHAT, OPNAME, OPCODE, NAME, T, CODE) for each operator and collective the
 * type's list allows (bitwise: and/or/xor reduce and reducescatter; arithmetic: min, max,
 * sum, prod and the sum scans). */
#define GSHMEMI_RED_OP(OPNAME, OPCODE, FORM, NAME, T, CODE)                                  \
    GSHMEMI_REDUCE_FORMS(FORM, OPNAME, OPCODE, NAME, T, CODE)
#define GSHMEMI_RED_BIT(FORM, NAME, T)                                                       \
    GSHMEM_REDUCE_BIT_OPS(GSHMEMI_RED_OP, FORM, NAME, T, GSHMEMI_TYPE_CODE(T))
#define GSHMEMI_RED_ARITH(FORM, NAME, T, CODE)                                               \
    GSHMEM_REDUCE_ARITH_OPS(GSHMEMI_RED_OP, FORM, NAME, T, CODE)                             \
    GSHMEMI_SCAN_FORMS(FORM, sum, GSHMEMI_OP_SUM, NAME, T, CODE)

/* Element kinds the host forms pass to the kernels: class * 16 + size. A type's code is a
 * constant expression in C and C++ (floating types are those where (T)0.5 != 0). */
#define GSHMEMI_KIND_UINT 0
#define GSHMEMI_KIND_SINT 1
#define GSHMEMI_KIND_FLOAT 2
#define GSHMEMI_KIND_BF16 3
#define GSHMEMI_TYPE_CODE(T)                                                                 \
    ((((T)0.5 != (T)0) ? GSHMEMI_KIND_FLOAT : ((T)-1 > (T)0) ? GSHMEMI_KIND_UINT           \
                                                              : GSHMEMI_KIND_SINT) * 16 +   \
     (int)sizeof(T))
#define GSHMEMI_TYPE_CODE_half (GSHMEMI_KIND_FLOAT * 16 + 2)
#define GSHMEMI_TYPE_CODE_bfloat16 (GSHMEMI_KIND_BF16 * 16 + 2)

/* Collectives the host forms pass to the kernels. */
#define GSHMEMI_COLL_REDUCE 0
#define GSHMEMI_COLL_REDUCESCATTER 1
#define GSHMEMI_COLL_INSCAN 2
#define GSHMEMI_COLL_EXSCAN 3

/* Data-moving collectives the host forms pass to the kernels. */
#define GSHMEMI_MOVE_BROADCAST 0
#define GSHMEMI_MOVE_FCOLLECT 1
#define GSHMEMI_MOVE_COLLECT 2
#define GSHMEMI_MOVE_ALLTOALL 3
#define GSHMEMI_MOVE_ALLTOALLS 4

/* ---- teams ------------------------------------------------------------------------------ */
typedef int32_t gshmem_team_t;
#define GSHMEM_TEAM_INVALID ((gshmem_team_t)-1)
#define GSHMEM_TEAM_WORLD ((gshmem_team_t)0)
#define GSHMEM_TEAM_SHARED ((gshmem_team_t)1)
/* The PEs of this node (as GSHMEM_TEAM_SHARED: every PE of a node is reached by load/store),
 * and the PEs with this PE's index within its node, one per node (NVSHMEM's names). */
#define GSHMEMX_TEAM_NODE ((gshmem_team_t)2)
#define GSHMEMX_TEAM_SAME_MYPE_NODE ((gshmem_team_t)3)
#define GSHMEM_TEAM_NUM_CONTEXTS (1L << 0)
typedef struct gshmem_team_config {
    int num_contexts;               /* kept and returned; gshmem has no contexts */
} gshmem_team_config_t;

/* ---- unique id ------------------------------------------------------------------------ */
#define GSHMEMX_UNIQUEID_BYTES 128
typedef struct gshmemx_uniqueid {
    char internal[GSHMEMX_UNIQUEID_BYTES];
} gshmemx_uniqueid_t;

typedef struct gshmemx_init_attr_s {
    int rank;                       /* this process's PE number, 0..n_pes-1 */
    int n_pes;
    gshmemx_uniqueid_t uid;         /* from gshmemx_get_uniqueid on the process of rank 0 */
} gshmemx_init_attr_t;

/* How gshmemx_init_flags finds the other PEs (NVSHMEM's values of nvshmemx_init_attr). */
#define GSHMEMX_INIT_THREAD_PES 1        /* not available: a PE is a process */
#define GSHMEMX_INIT_WITH_MPI_COMM 2     /* over an MPI communicator */
#define GSHMEMX_INIT_WITH_SHMEM 4        /* not available: no OpenSHMEM host library underneath */
#define GSHMEMX_INIT_WITH_UNIQUEID 8     /* a unique id, rank and n_pes (gshmemx_init_attr_t) */

/* Heap figures (gshmemx_heap_info). */
typedef struct gshmemx_heap_info_s {
    void *base;                     /* symmetric heap base: identical on every PE */
    size_t reserved;                /* virtual addresses reserved for this PE's heap */
    size_t mapped;                  /* device memory backing it now */
    size_t in_use;                  /* allocated by the user */
    size_t internal;                /* allocated by gshmem itself */
    size_t cap;                     /* most it may grow to (GSHMEM_HEAP_MAX) */
    int n_chunks;                   /* physical chunks mapped */
} gshmemx_heap_info_t;

/* Where this PE runs (gshmemx_get_placement). PEs of a node are placed on its GPUs
 * round-robin; several PEs may share one GPU (run them under CUDA MPS). A kernel that spins
 * waiting for another PE of the same GPU must be resident beside that PE's kernels: launch
 * such a kernel with at most sm_share blocks of at most one SM's resources each. */
typedef struct gshmemx_placement_info {
    int device;                     /* CUDA ordinal of this PE's GPU */
    int gpu_pes;                    /* PEs of this node on that GPU, this one included */
    int gpu_rank;                   /* this PE's index among them (by PE number) */
    int mps;                        /* 1: they share the GPU through CUDA MPS */
    int sm_count;                   /* SMs of the GPU */
    int sm_share;                   /* SMs this PE may count on (all of them when gpu_pes is 1) */
    int coll_max_blocks;            /* most blocks gshmem's own kernels use (0: no cap) */
} gshmemx_placement_info_t;

#endif
