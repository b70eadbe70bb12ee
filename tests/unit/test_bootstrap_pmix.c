/* Proves the PMIx bootstrap under a real PMIx launcher (run as mpirun -np 3): rank and
 * size match the launcher's, allgather and alltoall carry every rank's data, barriers
 * complete, node info puts all ranks on this node. Each rank prints its failures; rank 0
 * prints the summary. */
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "config.h"

int main(void) {
    setenv("GSHMEM_BOOTSTRAP", "pmix", 1);
    gshmemi_config_load(&gshmemi_cfg);
    gshmemi_bootstrap b;
    if (gshmemi_bootstrap_init(&b) != GSHMEM_SUCCESS) {
        fprintf(stderr, "bootstrap_pmix: init failed\n");
        return 1;
    }
    int bad = 0, checks = 0, n = b.size, me = b.rank;
    const char *env_rank = getenv("OMPI_COMM_WORLD_RANK"), *env_size = getenv("OMPI_COMM_WORLD_SIZE");
    checks += 2;
    if (env_rank && atoi(env_rank) != me) { bad++; fprintf(stderr, "PE %d: launcher says rank %s\n", me, env_rank); }
    if (env_size && atoi(env_size) != n) { bad++; fprintf(stderr, "PE %d: launcher says size %s\n", me, env_size); }
    long mine[2] = {1000L * me + 7, -me}, *all = calloc((size_t)n * 2, sizeof *all);
    for (int round = 0; round < 3; round++) {
        mine[1] = -me - round;
        bad += b.ops->allgather(&b, mine, all, sizeof mine) != GSHMEM_SUCCESS;
        for (int r = 0; r < n; r++, checks++)
            if (all[2 * r] != 1000L * r + 7 || all[2 * r + 1] != -r - round) {
                bad++;
                fprintf(stderr, "PE %d round %d: slot %d holds %ld/%ld\n", me, round, r, all[2 * r], all[2 * r + 1]);
            }
    }
    int *in = calloc((size_t)n, sizeof *in), *out = calloc((size_t)n, sizeof *out);
    for (int q = 0; q < n; q++) in[q] = me * 100 + q;
    bad += b.ops->alltoall(&b, in, out, sizeof *in) != GSHMEM_SUCCESS;
    for (int q = 0; q < n; q++, checks++)
        if (out[q] != q * 100 + me) { bad++; fprintf(stderr, "PE %d: alltoall from %d = %d\n", me, q, out[q]); }
    for (int i = 0; i < 5; i++, checks++) bad += b.ops->barrier(&b) != GSHMEM_SUCCESS;
    checks++;
    if (b.local_size != n || b.local_rank != me) { bad++; fprintf(stderr, "PE %d: local %d/%d\n", me, b.local_rank, b.local_size); }
    int *bads = calloc((size_t)n, sizeof *bads);
    b.ops->allgather(&b, &bad, bads, sizeof bad);
    int total = 0;
    for (int r = 0; r < n; r++) total += bads[r];
    if (me == 0) printf("bootstrap_pmix: %d passed, %d failed\n", checks * n - total, total);
    gshmemi_bootstrap_finalize(&b);
    return total != 0;
}
