// Proves gshmemx_cumodule_init / gshmemx_culibrary_init on 2+ PEs: a fatbin with no constructor
// (module_kernel.cu), loaded through the driver, gets gshmem's device state whether it is
// registered before gshmem_init (cuModuleLoad: the state arrives at init) or after
// (cuLibraryLoadFromFile), and its kernel's puts reach the next PE; a module compiled without
// gshmem is refused with GSHMEM_ERR_INVALID_ARG, finalize of an unregistered module too.
// usage: gshmrun -n 2 test_module MODULE.fatbin
#include <cuda.h>

#include "common.h"

#define CU(call)                                                                             \
    do {                                                                                     \
        CUresult r_ = (call);                                                                \
        if (r_ != CUDA_SUCCESS) {                                                            \
            const char *s_ = "?";                                                            \
            cuGetErrorName(r_, &s_);                                                         \
            fprintf(stderr, "PE %d: %s:%d: %s failed: %s\n", gshmem_my_pe(), __FILE__,       \
                    __LINE__, #call, s_);                                                    \
            exit(2);                                                                         \
        }                                                                                    \
    } while (0)

static void launch(CUfunction f, int *dst, int slot, int value) {
    void *args[] = {&dst, &slot, &value};
    CU(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, args, NULL));
    CU(cuCtxSynchronize());
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_module MODULE.fatbin\n");
        return 2;
    }
    // this PE's GPU as gshmem would pick it, current before init: the driver loads into its
    // primary context
    int ndev = 1;
    CK(cudaGetDeviceCount(&ndev));
    const char *rank = getenv("GSHMEM_RANK");
    CK(cudaSetDevice((rank ? atoi(rank) : 0) % ndev));
    CK(cudaFree(0));
    CUmodule mod;
    CU(cuModuleLoad(&mod, argv[1]));
    int st = gshmemx_cumodule_init(mod);   // before init: zeroed state now, the real one at init
    gshmem_init();
    EXPECT(st == GSHMEM_SUCCESS, "gshmemx_cumodule_init before gshmem_init: status %d", st);
    int me = gshmem_my_pe(), n = gshmem_n_pes(), left = (me + n - 1) % n;
    int *dst = (int *)gshmem_calloc(2, sizeof(int));
    CUfunction f;
    CU(cuModuleGetFunction(&f, mod, "ring_put"));
    launch(f, dst, 0, 100);
    gshmem_barrier_all();
    int got[2];
    CK(cudaMemcpy(got, dst, sizeof got, cudaMemcpyDeviceToHost));
    EXPECT(got[0] == 100 + left, "cuModuleLoad kernel: dst[0] = %d, expected %d from PE %d", got[0],
           100 + left, left);

    CUlibrary lib;
    CU(cuLibraryLoadFromFile(&lib, argv[1], NULL, NULL, 0, NULL, NULL, 0));
    st = gshmemx_culibrary_init(lib);
    EXPECT(st == GSHMEM_SUCCESS, "gshmemx_culibrary_init after gshmem_init: status %d", st);
    CUkernel k;
    CU(cuLibraryGetKernel(&k, lib, "ring_put"));
    launch((CUfunction)k, dst, 1, 200);
    gshmem_barrier_all();
    CK(cudaMemcpy(got, dst, sizeof got, cudaMemcpyDeviceToHost));
    EXPECT(got[1] == 200 + left, "cuLibraryLoad kernel: dst[1] = %d, expected %d", got[1], 200 + left);

    EXPECT(gshmemx_culibrary_finalize(lib) == GSHMEM_SUCCESS, "culibrary_finalize");
    EXPECT(gshmemx_culibrary_finalize(lib) == GSHMEM_ERR_INVALID_ARG, "finalizing twice accepted");
    EXPECT(gshmemx_cumodule_finalize(mod) == GSHMEM_SUCCESS, "cumodule_finalize");
    EXPECT(gshmemx_cumodule_init(NULL) == GSHMEM_ERR_INVALID_ARG, "a NULL module accepted");
    CU(cuLibraryUnload(lib));
    CU(cuModuleUnload(mod));
    gshmem_barrier_all();
    gshmem_free(dst);
    int rc = summary("test_module");
    gshmem_finalize();
    return rc;
}
