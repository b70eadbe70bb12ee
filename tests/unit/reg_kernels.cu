// Kernels whose register counts hold the block-size rules the docs promise (docs/collectives.md,
// "Block sizes"), checked at build time by test_registers.sh from ptxas's own report (no GPU
// needed), built with device routing and with GSHMEM_LOAD_STORE_ONLY:
//  - a kernel calling block-scope collectives, without a hint, launches with 512 threads
//    (<= 128 registers; it holds the cross-node algorithms too), or 640 (<= 96) load/store only;
//  - the same kernel under __launch_bounds__(768) fits 80 registers (load/store only: without
//    spilling);
//  - a kernel calling block-scope puts and gets launches with 1024 threads (<= 64 registers)
//    — include/gshmem/device/copy.h.
// Several calls per kernel, as a user's kernel (and tests/gpu/test_coll) would hold them.
#include "gshmem.h"

#define COLLECTIVES(w, t, d, s, n)                                                           \
    switch (w) {                                                                             \
    case 0: gshmemx_double_broadcast_block(t, d, s, n, 0); break;                            \
    case 1: gshmemx_double_fcollect_block(t, d, s, n); break;                                \
    case 2: gshmemx_double_collect_block(t, d, s, n); break;                                 \
    case 3: gshmemx_double_alltoall_block(t, d, s, n); break;                                \
    case 4: gshmemx_double_alltoalls_block(t, d, s, 2, 3, n); break;                         \
    case 5: gshmemx_double_sum_reduce_block(t, d, s, n); break;                              \
    case 6: gshmemx_double_max_reducescatter_block(t, d, s, n); break;                       \
    case 7: gshmemx_double_sum_inscan_block(t, d, s, n); break;                              \
    case 8: gshmemx_broadcastmem_block(t, d, s, n, 1); break;                                \
    default: gshmemx_alltoallmem_block(t, d, s, n); break;                                   \
    }

__global__ void reg_plain_collectives(int w, gshmem_team_t t, double *d, const double *s, size_t n) {
    COLLECTIVES(w, t, d, s, n)
}
__global__ void __launch_bounds__(768)
    reg_bounded_collectives(int w, gshmem_team_t t, double *d, const double *s, size_t n) {
    COLLECTIVES(w, t, d, s, n)
}
__global__ void reg_plain_block_rma(int w, char *d, const char *s, size_t n, int pe, uint64_t *sig) {
    switch (w) {
    case 0: gshmemx_putmem_block(d, s, n, pe); break;
    case 1: gshmemx_getmem_block(d, s, n, pe); break;
    case 2: gshmemx_putmem_nbi_block(d, s, n, pe); break;
    case 3: gshmemx_getmem_nbi_block(d, s, n, pe); break;
    default: gshmemx_putmem_signal_block(d, s, n, sig, 1, GSHMEM_SIGNAL_ADD, pe); break;
    }
}
