/* The program tests/unit/test_gshmrun.sh starts under gshmrun; argv[1] picks what it does:
 * env (print the variables gshmrun sets), boot (form the job through the uid bootstrap),
 * fail R CODE (rank R exits with CODE once all are up), segv R, hang, partial. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include "bootstrap.h"
#include "config.h"

static int rank(void) { return getenv("GSHMEM_RANK") ? atoi(getenv("GSHMEM_RANK")) : -1; }

static int boot(void) {
    gshmemi_config_load(&gshmemi_cfg);
    gshmemi_bootstrap b;
    if (gshmemi_bootstrap_init(&b) != GSHMEM_SUCCESS) return 3;
    int *all = calloc((size_t)b.size, sizeof *all), me = b.rank * 3;
    b.ops->allgather(&b, &me, all, sizeof me);
    for (int r = 0; r < b.size; r++) if (all[r] != r * 3) return 4;
    printf("rank %d of %d ok\n", b.rank, b.size);
    gshmemi_bootstrap_finalize(&b);
    return 0;
}

int main(int argc, char **argv) {
    const char *m = argc > 1 ? argv[1] : "";
    if (!strcmp(m, "env")) {
        const char *fd = getenv("GSHMEM_UID_FD");
        printf("rank=%s npes=%s fd=%s valid=%d nvls=%s\n", getenv("GSHMEM_RANK"), getenv("GSHMEM_NPES"),
               fd ? fd : "none", fd ? fcntl(atoi(fd), F_GETFD) >= 0 : 0, getenv("NCCL_NVLS_ENABLE"));
        return 0;
    }
    if (!strcmp(m, "boot")) return boot();
    if (!strcmp(m, "fail") && argc > 3) {
        if (boot()) return 3;
        if (rank() == atoi(argv[2])) return atoi(argv[3]);
        sleep(30);
        return 0;
    }
    if (!strcmp(m, "segv") && argc > 2) {
        if (boot()) return 3;
        if (rank() == atoi(argv[2])) raise(SIGSEGV);
        sleep(30);
        return 0;
    }
    if (!strcmp(m, "hang")) { sleep(1000); return 0; }
    if (!strcmp(m, "partial")) { printf("no newline at the end"); return 0; }
    return 2;
}
