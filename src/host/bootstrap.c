/* Bootstrap selection and what every bootstrap shares: which node each PE is on (from an
 * allgather of host identities), local ranks, and a random job id agreed by all PEs. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <unistd.h>

#include "bootstrap.h"
#include "config.h"

static gshmemi_status init_chosen(gshmemi_bootstrap *b, const char *name) {
    const gshmemi_config *c = &gshmemi_cfg;
    if (!strcasecmp(name, "self")) return gshmemi_bootstrap_self_init(b);
    if (!strcasecmp(name, "pmix")) return gshmemi_bootstrap_pmix_init(b);
    if (!strcasecmp(name, "uid")) {
        if (!c->UID[0] || c->RANK < 0 || c->NPES <= 0) {
            gshmemi_error("GSHMEM_BOOTSTRAP=uid needs GSHMEM_UID, GSHMEM_RANK and GSHMEM_NPES (set "
                          "by gshmrun or gshmemx_init_attr)");
            return GSHMEM_ERR_INVALID_ARG;
        }
        return gshmemi_bootstrap_uid_init(b, c->UID, c->RANK, c->NPES, c->UID_FD);
    }
    gshmemi_error("GSHMEM_BOOTSTRAP='%s' is not one of auto, pmix, uid, self", name);
    return GSHMEM_ERR_INVALID_ARG;
}

gshmemi_status gshmemi_bootstrap_init(gshmemi_bootstrap *b) {
    memset(b, 0, sizeof *b);
    const char *name = gshmemi_cfg.BOOTSTRAP;
    if (!strcasecmp(name, "auto")) {
        if (gshmemi_cfg.UID[0]) name = "uid";
        else if (getenv("PMIX_RANK") || getenv("PMIX_NAMESPACE")) name = "pmix";
        else name = "self";
    }
    GSHMEMI_CHECK(init_chosen(b, name));
    gshmemi_status st = gshmemi_bootstrap_node_info(b);
    if (st != GSHMEM_SUCCESS) gshmemi_bootstrap_finalize(b);
    return st;
}

typedef struct host_id {
    char host[64];
    char boot[40];
    uint64_t job;
} host_id;

static void read_host_id(host_id *h) {
    memset(h, 0, sizeof *h);
    gethostname(h->host, sizeof h->host - 1);
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(h->boot, sizeof h->boot, f)) h->boot[0] = 0;
        fclose(f);
    }
    if (getrandom(&h->job, sizeof h->job, 0) != (ssize_t)sizeof h->job) h->job = (uint64_t)getpid();
}

/* GSHMEM_NODES=K: the PEs of each host become K nodes of consecutive local ranks (as even as
 * the count allows), numbered in order of first appearance like real nodes. count[] holds
 * each host's PE count and is rewritten per node. */
static void split_hosts(gshmemi_bootstrap *b, int *count, int k) {
    int hosts = b->n_nodes;
    int *host_n = malloc((size_t)hosts * sizeof *host_n);
    int *first = malloc((size_t)hosts * k * sizeof *first);
    if (!host_n || !first) { free(host_n); free(first); return; }   /* keep one node per host */
    memcpy(host_n, count, (size_t)hosts * sizeof *host_n);
    for (int i = 0; i < hosts * k; i++) first[i] = -1;
    b->n_nodes = 0;
    memset(count, 0, (size_t)b->size * sizeof *count);
    for (int r = 0; r < b->size; r++) {
        int h = b->node_of[r], parts = host_n[h] < k ? host_n[h] : k;
        int part = (int)((long long)b->local_rank_of[r] * parts / host_n[h]);
        int *id = &first[h * k + part];
        if (*id < 0) *id = b->n_nodes++;
        b->node_of[r] = *id;
        b->local_rank_of[r] = count[*id]++;
    }
    free(host_n);
    free(first);
}

gshmemi_status gshmemi_bootstrap_node_info(gshmemi_bootstrap *b) {
    host_id mine;
    read_host_id(&mine);
    host_id *all = calloc((size_t)b->size, sizeof *all);
    b->node_of = calloc((size_t)b->size, sizeof *b->node_of);
    b->local_rank_of = calloc((size_t)b->size, sizeof *b->local_rank_of);
    int *count = calloc((size_t)b->size, sizeof *count);
    gshmemi_status st = GSHMEM_ERR_NO_MEMORY;
    if (!all || !b->node_of || !b->local_rank_of || !count) goto out;
    GSHMEMI_CHECK_GOTO(b->ops->allgather(b, &mine, all, sizeof mine), st, out);
    b->n_nodes = 0;
    for (int r = 0; r < b->size; r++) {
        int n = -1;
        for (int q = 0; q < r && n < 0; q++)   /* first rank on the same host names the node */
            if (!strcmp(all[q].host, all[r].host) && !strcmp(all[q].boot, all[r].boot)) n = b->node_of[q];
        if (n < 0) n = b->n_nodes++;
        b->node_of[r] = n;
        b->local_rank_of[r] = count[n]++;
    }
    b->n_hosts = b->n_nodes;
    b->host_rank = b->local_rank_of[b->rank];
    if (gshmemi_cfg.NODES > 1) split_hosts(b, count, gshmemi_cfg.NODES);
    b->node_id = b->node_of[b->rank];
    b->local_rank = b->local_rank_of[b->rank];
    b->local_size = count[b->node_id];
    b->job_id = all[0].job;
    st = GSHMEM_SUCCESS;
out:
    free(all);
    free(count);
    return st;
}

void gshmemi_bootstrap_finalize(gshmemi_bootstrap *b) {
    if (b->ops && b->ops->finalize) b->ops->finalize(b);
    free(b->node_of);
    free(b->local_rank_of);
    memset(b, 0, sizeof *b);
}
