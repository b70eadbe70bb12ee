/* Proves gshmem's NVSHMEM bootstrap plugin (src/compat/nvshmem_bootstrap.c) as NVSHMEM uses it,
 * without a GPU or NVSHMEM: run under gshmrun, each PE dlopens the plugin, calls
 * nvshmemi_bootstrap_plugin_init with NVSHMEM 3's interface version, checks the handle (rank,
 * size, node rank) against gshmrun's, runs allgather, alltoall and barrier through the handle's
 * function pointers, and finalizes; an interface version of another major is refused.
 * usage: gshmrun -n N test_nvshmem_plugin PLUGIN.so */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "nvshmem_bootstrap_abi.h"

#include "unit.h"

typedef int (*init_fn)(void *attr, gshmemi_nv_bootstrap *h, int version);

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    void *plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    EXPECT(plugin != NULL, "dlopen(%s): %s", argv[1], dlerror());
    if (!plugin) return 1;
    init_fn init = (init_fn)dlsym(plugin, "nvshmemi_bootstrap_plugin_init");
    EXPECT(init != NULL, "the plugin does not export nvshmemi_bootstrap_plugin_init");
    if (!init) return 1;
    EXPECT(dlsym(plugin, "gshmemx_env_check") == NULL, "the plugin exports gshmem's own functions");
    int rank = atoi(getenv("GSHMEM_RANK")), n = atoi(getenv("GSHMEM_NPES"));
    gshmemi_nv_bootstrap h;
    EXPECT(init(NULL, &h, 40000) != 0, "interface version 4.0.0 accepted");
    memset(&h, 0, sizeof h);
    EXPECT(init(NULL, &h, 30000) == 0, "init failed");
    EXPECT(h.version / 100 <= 300, "the plugin answers version %d, above NVSHMEM 3.0's", h.version);
    EXPECT(h.pg_rank == rank && h.pg_size == n, "rank %d of %d, gshmrun says %d of %d", h.pg_rank,
           h.pg_size, rank, n);
    EXPECT(h.mype_node == rank && h.npes_node == n, "node rank %d of %d on one host, expected %d of %d",
           h.mype_node, h.npes_node, rank, n);
    int *all = calloc((size_t)n, sizeof *all), *out = calloc((size_t)n, sizeof *out),
        *in = calloc((size_t)n, sizeof *in);
    EXPECT(h.allgather(&rank, all, (int)sizeof rank, &h) == 0, "allgather failed");
    for (int r = 0; r < n; r++) EXPECT(all[r] == r, "allgather slot %d holds %d", r, all[r]);
    for (int r = 0; r < n; r++) in[r] = rank * 100 + r;
    EXPECT(h.alltoall(in, out, (int)sizeof(int), &h) == 0, "alltoall failed");
    for (int r = 0; r < n; r++)
        EXPECT(out[r] == r * 100 + rank, "alltoall: from rank %d got %d, expected %d", r, out[r],
               r * 100 + rank);
    EXPECT(h.barrier(&h) == 0, "barrier failed");
    EXPECT(h.show_info(&h, 0) == 0, "show_info failed");
    EXPECT(h.finalize(&h) == 0, "finalize failed");
    free(all);
    free(out);
    free(in);
    printf("nvshmem_plugin rank %d: %d passed, %d failed\n", rank, passed, failed);
    return failed != 0;
}
