/* Types, constants and the typed-family lists shared by host and device code. Every typed
 * API family is one macro applied to one of the lists below (never pasted per type). */
#ifndef GSHMEM_TYPES_H
#define GSHMEM_TYPES_H

#include <stddef.h>
#include <stdint.h>

#define GSHMEM_MAJOR_VERSION 0
#define GSHMEM_MINOR_VERSION 1
#define GSHMEM_VENDOR_STRING "gshmem"

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

/* ---- unique id ------------------------------------------------------------------------ */
#define GSHMEMX_UNIQUEID_BYTES 128
typedef struct gshmemx_uniqueid {
    char internal[GSHMEMX_UNIQUEID_BYTES];
} gshmemx_uniqueid_t;

typedef struct gshmemx_init_attr {
    int rank;                       /* this process's PE number, 0..n_pes-1 */
    int n_pes;
    gshmemx_uniqueid_t uid;         /* from gshmemx_get_uniqueid on the process of rank 0 */
} gshmemx_init_attr_t;

/* Heap figures (gshmemx_heap_info). */
typedef struct gshmemx_heap_info {
    void *base;                     /* symmetric heap base: identical on every PE */
    size_t reserved;                /* virtual addresses reserved for this PE's heap */
    size_t mapped;                  /* device memory backing it now */
    size_t in_use;                  /* allocated by the user */
    size_t internal;                /* allocated by gshmem itself */
    size_t cap;                     /* most it may grow to (GSHMEM_HEAP_MAX) */
    int n_chunks;                   /* physical chunks mapped */
} gshmemx_heap_info_t;

#endif
