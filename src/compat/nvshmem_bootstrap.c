/* An NVSHMEM bootstrap plugin for gshmrun: programs built against NVIDIA's NVSHMEM run under
 * gshmrun with NVSHMEM_BOOTSTRAP=plugin NVSHMEM_BOOTSTRAP_PLUGIN=<this file>. It joins the
 * rendezvous gshmrun gives every PE (GSHMEM_UID, GSHMEM_RANK, GSHMEM_NPES, and the listening
 * socket GSHMEM_UID_FD for rank 0) through gshmem's unique-id bootstrap, and serves NVSHMEM's
 * allgather, alltoall and barrier over it. tools/nvshmem-perftest.sh uses it to run the same
 * programs on NVSHMEM and on gshmem under one launcher (and under gshmrun's MPS handling when
 * PEs share a GPU). */
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "config.h"
#include "nvshmem_bootstrap_abi.h"

#define PLUGIN_EXPORT __attribute__((visibility("default")))

static gshmemi_bootstrap boot;

static int nv_allgather(const void *in, void *out, int bytes, gshmemi_nv_bootstrap *h) {
    (void)h;
    return bytes < 0 ? -1 : boot.ops->allgather(&boot, in, out, (size_t)bytes);
}
static int nv_alltoall(const void *in, void *out, int bytes, gshmemi_nv_bootstrap *h) {
    (void)h;
    return bytes < 0 ? -1 : boot.ops->alltoall(&boot, in, out, (size_t)bytes);
}
static int nv_barrier(gshmemi_nv_bootstrap *h) {
    (void)h;
    return boot.ops->barrier(&boot);
}
static void nv_global_exit(int status) {
    if (boot.ops && boot.ops->abort) boot.ops->abort(&boot, status, "nvshmem_global_exit");
    exit(status);
}
static int nv_finalize(gshmemi_nv_bootstrap *h) {
    (void)h;
    gshmemi_bootstrap_finalize(&boot);
    return 0;
}
static int nv_show_info(gshmemi_nv_bootstrap *h, int style) {
    (void)h;
    (void)style;
    return 0;
}

PLUGIN_EXPORT int nvshmemi_bootstrap_plugin_init(void *attr, gshmemi_nv_bootstrap *h,
                                                 int nvshmem_version) {
    (void)attr;
    if (!h) return 1;
    if (nvshmem_version / 10000 != GSHMEMI_NV_BOOTSTRAP_VERSION / 10000) {
        gshmemi_error("gshmrun's NVSHMEM bootstrap plugin speaks NVSHMEM's bootstrap interface "
                      "%d.x, this NVSHMEM asks for %d.%d", GSHMEMI_NV_BOOTSTRAP_VERSION / 10000,
                      nvshmem_version / 10000, nvshmem_version / 100 % 100);
        return 1;
    }
    if (gshmemi_config_load(&gshmemi_cfg) != GSHMEM_SUCCESS) return 1;
    const gshmemi_config *c = &gshmemi_cfg;
    if (!c->UID[0] || c->RANK < 0 || c->NPES <= 0) {
        gshmemi_error("gshmrun's NVSHMEM bootstrap plugin: GSHMEM_UID, GSHMEM_RANK and GSHMEM_NPES "
                      "are not set: start the program with gshmrun -n N");
        return 1;
    }
    memset(&boot, 0, sizeof boot);
    if (gshmemi_bootstrap_uid_init(&boot, c->UID, c->RANK, c->NPES, c->UID_FD) != GSHMEM_SUCCESS)
        return 1;
    if (gshmemi_bootstrap_node_info(&boot) != GSHMEM_SUCCESS) {
        gshmemi_bootstrap_finalize(&boot);
        return 1;
    }
    gshmemi_set_log_rank(boot.rank);
    memset(h, 0, sizeof *h);
    h->version = GSHMEMI_NV_BOOTSTRAP_VERSION;
    h->pg_rank = boot.rank;
    h->pg_size = boot.size;
    h->mype_node = boot.local_rank;
    h->npes_node = boot.local_size;
    h->allgather = nv_allgather;
    h->alltoall = nv_alltoall;
    h->barrier = nv_barrier;
    h->global_exit = nv_global_exit;
    h->finalize = nv_finalize;
    h->show_info = nv_show_info;
    h->comm_state = &boot;
    return 0;
}
