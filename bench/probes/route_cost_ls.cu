// route_cost.cu's load/store-only kernels: the same calls, built with GSHMEM_LOAD_STORE_ONLY.
#define GSHMEM_LOAD_STORE_ONLY 1
#include "gshmem.h"
__global__ void pp_ls(long *flag, long start, int iters, int peer, int me) {
    for (int i = 0; i < iters; i++) {
        long v = start + i;
        if (me == 0) {
            gshmem_long_p(flag, v, peer);
            gshmem_long_wait_until(flag, GSHMEM_CMP_EQ, v);
        } else {
            gshmem_long_wait_until(flag, GSHMEM_CMP_EQ, v);
            gshmem_long_p(flag, v, peer);
        }
    }
}
__global__ void fadd_ls(long *w, int iters, int peer, long *out) {
    long s = 0;
    for (int i = 0; i < iters; i++) s += gshmem_long_atomic_fetch_add(w, 1, peer);
    *out = s;
}
__global__ void barrier_ls(int iters) {
    for (int i = 0; i < iters; i++) gshmem_barrier_all();
}
__global__ void barrier_block_ls(int iters) {
    for (int i = 0; i < iters; i++) gshmemx_barrier_all_block();
}
void launch_pp_ls(long *flag, long start, int iters, int peer, int me) { pp_ls<<<1, 1>>>(flag, start, iters, peer, me); }
void launch_fadd_ls(long *w, int iters, int peer, long *out) {
    if (gshmem_my_pe() == 0) fadd_ls<<<1, 1>>>(w, iters, peer, out);
}
void launch_barrier_ls(int iters) { barrier_ls<<<1, 1>>>(iters); }
void launch_barrier_block_ls(int iters) { barrier_block_ls<<<1, 512>>>(iters); }
