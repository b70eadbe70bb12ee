/* The C side of bench_collectives.py's cost-of-Python measurement: `iters` back-to-back calls
 * of gshmemx_float_sum_reduce_on_stream made from C, timed on the host. The benchmark compiles
 * this into a shared object at run time and loads it into its own process, where the symbol
 * resolves to the libgshmem the package already loaded. */
#include <time.h>

#include <gshmem.h>

/* seconds the calls took to enqueue, or -1 when one failed */
double gshmem_bench_reduce_loop(int iters, float *dest, const float *src, size_t nelems,
                                void *stream) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < iters; i++)
        if (gshmemx_float_sum_reduce_on_stream(GSHMEM_TEAM_WORLD, dest, src, nelems,
                                               (gshmemx_stream_t)stream))
            return -1.0;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
}
