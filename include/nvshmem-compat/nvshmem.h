/* nvshmem.h of gshmem's NVSHMEM compatibility layer: an NVSHMEM program includes it (from
 * PREFIX/include/gshmem/nvshmem, a directory of its own so it never shadows a real NVSHMEM),
 * builds with plain nvcc (no -rdc; -rdc=true works too) and runs on libgshmem. Every
 * nvshmem_ / nvshmemx_ name maps to the gshmem call of the same stem (nvshmem_names.h,
 * generated from gshmem's headers), so device calls stay gshmem's inline code; the few calls
 * whose NVSHMEM signature differs are inline wrappers in nvshmemx.h. docs/nvshmem.md says what
 * differs and what is not covered. */
#ifndef GSHMEM_NVSHMEM_H
#define GSHMEM_NVSHMEM_H

#define GSHMEM_NVSHMEM_COMPAT 1

/* What NVSHMEM's headers bring in and programs rely on. */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>
#include <cuda_runtime.h>
#ifdef __cplusplus
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#endif

#include "gshmem.h"
#include "gshmem/launch.h"
#include "nvshmem_names.h"

/* The OpenSHMEM specification version (nvshmem_info_get_version answers it) and the NVSHMEM
 * API level this layer implements (NVSHMEM 3.4's names and signatures). */
#define NVSHMEM_MAJOR_VERSION 1
#define NVSHMEM_MINOR_VERSION 5
#define NVSHMEM_VENDOR_MAJOR_VERSION 3
#define NVSHMEM_VENDOR_MINOR_VERSION 4
#define NVSHMEM_VENDOR_PATCH_VERSION 0
#define NVSHMEM_VENDOR_STRING "gshmem " GSHMEM_VERSION_STRING " (NVSHMEM 3.4 API)"
#define NVSHMEM_MAX_NAME_LEN GSHMEM_MAX_NAME_LEN

/* Constants: NVSHMEM's names for gshmem's values (a program compiled here passes these to
 * gshmem; NVSHMEM's own numbers, e.g. NVSHMEM_SIGNAL_SET 9, never reach it). */
#define NVSHMEM_CMP_EQ GSHMEM_CMP_EQ
#define NVSHMEM_CMP_NE GSHMEM_CMP_NE
#define NVSHMEM_CMP_GT GSHMEM_CMP_GT
#define NVSHMEM_CMP_LE GSHMEM_CMP_LE
#define NVSHMEM_CMP_LT GSHMEM_CMP_LT
#define NVSHMEM_CMP_GE GSHMEM_CMP_GE
#define NVSHMEM_SIGNAL_SET GSHMEM_SIGNAL_SET
#define NVSHMEM_SIGNAL_ADD GSHMEM_SIGNAL_ADD
#define NVSHMEM_THREAD_SINGLE GSHMEM_THREAD_SINGLE
#define NVSHMEM_THREAD_FUNNELED GSHMEM_THREAD_FUNNELED
#define NVSHMEM_THREAD_SERIALIZED GSHMEM_THREAD_SERIALIZED
#define NVSHMEM_THREAD_MULTIPLE GSHMEM_THREAD_MULTIPLE

typedef gshmem_team_t nvshmem_team_t;
typedef gshmem_team_config_t nvshmem_team_config_t;
#define NVSHMEM_TEAM_INVALID GSHMEM_TEAM_INVALID
#define NVSHMEM_TEAM_WORLD GSHMEM_TEAM_WORLD
#define NVSHMEM_TEAM_SHARED GSHMEM_TEAM_SHARED
#define NVSHMEMX_TEAM_NODE GSHMEMX_TEAM_NODE
#define NVSHMEMX_TEAM_SAME_MYPE_NODE GSHMEMX_TEAM_SAME_MYPE_NODE
#define NVSHMEM_TEAM_WORLD_INDEX 0
#define NVSHMEM_TEAM_SHARED_INDEX 1
#define NVSHMEM_TEAM_NODE_INDEX 2
#define NVSHMEM_TEAM_SAME_MYPE_NODE_INDEX 3
#define NVSHMEM_TEAM_NUM_CONTEXTS GSHMEM_TEAM_NUM_CONTEXTS
#define NVSHMEM_TEAM_CONFIG_MASK_NUM_CONTEXTS GSHMEM_TEAM_NUM_CONTEXTS
#define NVSHMEM_TEAM_CONFIG_INITIALIZER {0}

/* nvshmemx_init_status: where initialization stands (NVSHMEM's values). */
typedef enum {
    NVSHMEM_STATUS_NOT_INITIALIZED = 0,
    NVSHMEM_STATUS_IS_BOOTSTRAPPED,
    NVSHMEM_STATUS_IS_INITIALIZED,
    NVSHMEM_STATUS_LIMITED_MPG,
    NVSHMEM_STATUS_FULL_MPG,
    NVSHMEM_STATUS_INVALID = INT_MAX
} nvshmemx_init_status_t;

/* NVSHMEM's perftests print their own errors with this (NVSHMEM defines it for them). */
#define NVSHMEMI_ERROR_PRINT(...)                                                            \
    do {                                                                                     \
        fprintf(stderr, "%s:%s:%d: ", __FILE__, __func__, __LINE__);                         \
        fprintf(stderr, __VA_ARGS__);                                                        \
    } while (0)

#include "nvshmemx.h"

#endif
