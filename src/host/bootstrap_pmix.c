/* PMIx bootstrap: the production path under mpirun (Open MPI), srun --mpi=pmix and prterun.
 * Rank and size come from PMIx; allgather is put + commit + fence(collect) + get. */
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "gshmem_build_config.h"

#if GSHMEM_HAVE_PMIX
#include <pmix.h>

typedef struct pmix_ctx {
    pmix_proc_t me;
    uint64_t seq;           /* one key per collective, so rounds never mix */
} pmix_ctx;

static gshmemi_status pmix_fail(const char *call, pmix_status_t rc) {
    gshmemi_error("PMIx: %s failed: %s", call, PMIx_Error_string(rc));
    return GSHMEM_ERR_BOOTSTRAP;
}

static gshmemi_status fence(pmix_ctx *c, bool collect) {
    pmix_proc_t all;
    PMIX_PROC_CONSTRUCT(&all);
    PMIX_LOAD_PROCID(&all, c->me.nspace, PMIX_RANK_WILDCARD);
    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(&all, 1, collect ? &info : NULL, collect ? 1 : 0);
    PMIX_INFO_DESTRUCT(&info);
    return rc == PMIX_SUCCESS ? GSHMEM_SUCCESS : pmix_fail("PMIx_Fence", rc);
}

static gshmemi_status pmix_allgather(gshmemi_bootstrap *b, const void *in, void *out, size_t len) {
    pmix_ctx *c = b->priv;
    char key[PMIX_MAX_KEYLEN + 1];
    snprintf(key, sizeof key, "gshmem.ag.%llu", (unsigned long long)c->seq++);
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)in;
    v.data.bo.size = len;
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    if (rc != PMIX_SUCCESS) return pmix_fail("PMIx_Put", rc);
    if ((rc = PMIx_Commit()) != PMIX_SUCCESS) return pmix_fail("PMIx_Commit", rc);
    GSHMEMI_CHECK(fence(c, true));
    for (int r = 0; r < b->size; r++) {
        pmix_proc_t p;
        PMIX_PROC_CONSTRUCT(&p);
        PMIX_LOAD_PROCID(&p, c->me.nspace, (pmix_rank_t)r);
        pmix_value_t *got = NULL;
        rc = PMIx_Get(&p, key, NULL, 0, &got);
        if (rc != PMIX_SUCCESS) return pmix_fail("PMIx_Get", rc);
        bool ok = got->type == PMIX_BYTE_OBJECT && got->data.bo.size == len;
        if (ok) memcpy((char *)out + (size_t)r * len, got->data.bo.bytes, len);
        PMIX_VALUE_RELEASE(got);
        if (!ok) {
            gshmemi_error("PMIx allgather: PE %d contributed a different size than %zu bytes", r, len);
            return GSHMEM_ERR_BOOTSTRAP;
        }
    }
    return GSHMEM_SUCCESS;
}

/* Small exchanges only (init-time metadata): an allgather of the whole send buffer. */
static gshmemi_status pmix_alltoall(gshmemi_bootstrap *b, const void *in, void *out, size_t len) {
    size_t row = (size_t)b->size * len;
    char *all = malloc(row * (size_t)b->size);
    if (!all) return GSHMEM_ERR_NO_MEMORY;
    gshmemi_status st = pmix_allgather(b, in, all, row);
    for (int q = 0; st == GSHMEM_SUCCESS && q < b->size; q++)
        memcpy((char *)out + (size_t)q * len, all + (size_t)q * row + (size_t)b->rank * len, len);
    free(all);
    return st;
}

static gshmemi_status pmix_barrier(gshmemi_bootstrap *b) { return fence(b->priv, false); }

static void pmix_abort(gshmemi_bootstrap *b, int code, const char *msg) {
    PMIx_Abort(code, msg, NULL, 0);
}

static void pmix_finalize(gshmemi_bootstrap *b) {
    PMIx_Finalize(NULL, 0);
    free(b->priv);
    b->priv = NULL;
}

static const struct gshmemi_bootstrap_ops pmix_ops = {
    .name = "pmix",
    .allgather = pmix_allgather,
    .alltoall = pmix_alltoall,
    .barrier = pmix_barrier,
    .abort = pmix_abort,
    .finalize = pmix_finalize,
};

gshmemi_status gshmemi_bootstrap_pmix_init(gshmemi_bootstrap *b) {
    pmix_ctx *c = calloc(1, sizeof *c);
    if (!c) return GSHMEM_ERR_NO_MEMORY;
    pmix_status_t rc = PMIx_Init(&c->me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        free(c);
        gshmemi_error("PMIx_Init failed (%s): start the program with a PMIx launcher (mpirun, srun "
                      "--mpi=pmix, prterun) or with gshmrun", PMIx_Error_string(rc));
        return GSHMEM_ERR_BOOTSTRAP;
    }
    pmix_proc_t job;
    PMIX_PROC_CONSTRUCT(&job);
    PMIX_LOAD_PROCID(&job, c->me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &v);
    if (rc != PMIX_SUCCESS) {
        PMIx_Finalize(NULL, 0);
        free(c);
        return pmix_fail("PMIx_Get(PMIX_JOB_SIZE)", rc);
    }
    b->size = (int)v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    b->rank = (int)c->me.rank;
    b->ops = &pmix_ops;
    b->priv = c;
    return GSHMEM_SUCCESS;
}

#else

gshmemi_status gshmemi_bootstrap_pmix_init(gshmemi_bootstrap *b) {
    (void)b;
    gshmemi_error("this gshmem was built without PMIx support: install libpmix-dev and rebuild "
                  "(or launch with gshmrun)");
    return GSHMEM_ERR_NOT_AVAILABLE;
}

#endif
