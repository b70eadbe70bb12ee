/* Times gshmem_init as a program that has set up CUDA sees it: the CUDA context already
 * exists (the program selects its GPU and creates the context first, which alone takes
 * ~0.5 s), then the clock runs from gshmem_init's call to its return. Prints every PE's time. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gshmem.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc > 1) {
        bool help = !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");
        fprintf(help ? stdout : stderr,
                "usage: gshmem-perftest-init   (any number of PEs: gshmrun -n 4 ...)\n"
                "  each PE's gshmem_init time, with its CUDA context made beforehand\n");
        return help ? 0 : 2;
    }
    const char *r = getenv("GSHMEM_RANK");
    if (!r) r = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        fprintf(stderr, "no GPU\n");
        return 1;
    }
    int dev = (r ? atoi(r) : 0) % ndev;
    if (cudaSetDevice(dev) != cudaSuccess || cudaFree(0) != cudaSuccess) {
        fprintf(stderr, "cannot create a context on GPU %d\n", dev);
        return 1;
    }
    double t0 = now();
    gshmem_init();
    double t1 = now();
    printf("init: PE %d of %d on GPU %d: gshmem_init %.3f s\n", gshmem_my_pe(), gshmem_n_pes(),
           dev, t1 - t0);
    gshmem_finalize();
    return 0;
}
