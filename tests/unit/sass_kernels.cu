// The NVLink hot paths whose machine code tools/sass_compare.sh compares between two versions
// of the headers: p + wait ping-pong, a block put, fetch_add, and barrier_all at thread and
// block scope. Each kernel holds one path, as a user's kernel would.
#include "gshmem.h"

__global__ void sass_p_wait(long *flag, long v, int peer) {
    gshmem_long_p(flag, v, peer);
    gshmem_long_wait_until(flag, GSHMEM_CMP_EQ, v);
}
__global__ void sass_put_block(char *d, const char *s, size_t n, int pe) { gshmemx_putmem_block(d, s, n, pe); }
__global__ void sass_fetch_add(long *w, long v, int pe, long *out) { *out = gshmem_long_atomic_fetch_add(w, v, pe); }
__global__ void sass_barrier_thread(void) { gshmem_barrier_all(); }
__global__ void sass_barrier_block(void) { gshmemx_barrier_all_block(); }
