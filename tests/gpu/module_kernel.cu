// A module loaded at run time by test_module (built into a fatbin, loaded with cuModuleLoad and
// cuLibraryLoadFromFile): it has gshmem's device state only through gshmemx_cumodule_init /
// gshmemx_culibrary_init.
#include <gshmem.h>

// PE me writes value + me into the next PE's dst[slot]
extern "C" __global__ void ring_put(int *dst, int slot, int value) {
    int me = gshmem_my_pe(), n = gshmem_n_pes();
    gshmem_int_p(dst + slot, value + me, (me + 1) % n);
    gshmem_quiet();
}
