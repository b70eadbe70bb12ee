/* Proves the environment table parses every kind (sizes with suffixes, ints, doubles,
 * strings), rejects junk with GSHMEM_ERR_INVALID_ARG while keeping the default, that the
 * printer lists every variable with the values in one column, and that unknown GSHMEM_*
 * variables are warned about (with the nearest name) while declared ones and the test
 * suite's GSHMEM_TEST_* are not; and that NVSHMEM's variables map onto gshmem's settings
 * (never over a GSHMEM_ variable that is set), that those gshmem cannot honour are each warned
 * about, and that a program's own NVSHMEM_* names and values asking for nothing are not. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

#include "unit.h"

static void sizes(void) {
    struct { const char *s; uint64_t v; bool ok; } cases[] = {
        {"4096", 4096, true}, {"64k", 65536, true}, {"512M", 512ull << 20, true},
        {"2G", 2ull << 30, true}, {"1T", 1ull << 40, true}, {"3GiB", 3ull << 30, true},
        {"0x1000", 4096, true}, {"", 0, false}, {"12Q", 0, false}, {"-5", 0, false},
        {"99999999999999999999", 0, false}, {"17179869184T", 0, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t v = 0;
        bool ok = gshmemi_parse_size(cases[i].s, &v);
        EXPECT(ok == cases[i].ok, "parse_size('%s') ok=%d, expected %d", cases[i].s, ok, cases[i].ok);
        if (ok && cases[i].ok)
            EXPECT(v == cases[i].v, "parse_size('%s') = %llu, expected %llu", cases[i].s,
                   (unsigned long long)v, (unsigned long long)cases[i].v);
    }
}

static void load(void) {
    gshmemi_config c;
    unsetenv("GSHMEM_HEAP_MAX");
    setenv("GSHMEM_DEBUG", "2", 1);
    setenv("GSHMEM_WAIT_TIMEOUT", "2.5", 1);
    setenv("GSHMEM_BOOTSTRAP", "uid", 1);
    EXPECT(gshmemi_config_load(&c) == GSHMEM_SUCCESS, "valid environment rejected");
    EXPECT(c.DEBUG == 2, "DEBUG=%d, expected 2", c.DEBUG);
    EXPECT(c.WAIT_TIMEOUT == 2.5, "WAIT_TIMEOUT=%g, expected 2.5", c.WAIT_TIMEOUT);
    EXPECT(!strcmp(c.BOOTSTRAP, "uid"), "BOOTSTRAP=%s, expected uid", c.BOOTSTRAP);
    EXPECT(c.HEAP_MAX == 0, "HEAP_MAX default %llu, expected 0", (unsigned long long)c.HEAP_MAX);

    setenv("GSHMEM_HEAP_MAX", "lots", 1);
    setenv("GSHMEM_DEBUG", "x1", 1);
    EXPECT(gshmemi_config_load(&c) == GSHMEM_ERR_INVALID_ARG, "junk values accepted");
    EXPECT(c.HEAP_MAX == 0 && c.DEBUG == 0, "junk values did not fall back to defaults");
    unsetenv("GSHMEM_HEAP_MAX");
    unsetenv("GSHMEM_DEBUG");
    unsetenv("GSHMEM_WAIT_TIMEOUT");
    unsetenv("GSHMEM_BOOTSTRAP");
}

static void print(void) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gshmemi_config c;
    gshmemi_config_load(&c);
    gshmemi_config_print(&c, f);
    fclose(f);
    const char *names[] = {
#define GSHMEMI_ENV_FIELD(name, kind, ctype, def, help) "GSHMEM_" #name " ",
#include "env_defs.h"
#undef GSHMEMI_ENV_FIELD
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        EXPECT(strstr(buf, names[i]) != NULL, "printer does not list %s", names[i]);
    /* every row's value starts in the same column, the longest name's included */
    long col = -1;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        char *v = line + strspn(line, " ");
        v += strcspn(v, " ");
        v += strspn(v, " ");
        EXPECT(col < 0 || v - line == col, "value at column %ld, not %ld: %s", (long)(v - line), col, line);
        col = v - line;
    }
    free(buf);
}

/* Runs gshmemi_config_warn_unknown with stderr sent to a file; returns its count and what it
 * printed in buf. */
static int warn_unknown(char *buf, size_t cap) {
    FILE *tmp = tmpfile();
    int saved = dup(2);
    fflush(stderr);
    dup2(fileno(tmp), 2);
    int n = gshmemi_config_warn_unknown();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t len = fread(buf, 1, cap - 1, tmp);
    buf[len] = 0;
    fclose(tmp);
    return n;
}

static void unknown(void) {
    char out[4096];
    setenv("GSHMEM_HEAP_MAX", "1G", 1);          /* declared */
    setenv("GSHMEM_TEST_SEED", "7", 1);          /* the test suite's */
    EXPECT(warn_unknown(out, sizeof out) == 0, "warned about known variables: %s", out);
    setenv("GSHMEM_HEAP_MAXX", "1G", 1);         /* a typo */
    setenv("GSHMEM_NOTHING_LIKE_IT_AT_ALL", "1", 1);
    int n = warn_unknown(out, sizeof out);
    EXPECT(n == 2, "%d unknown variables reported, expected 2: %s", n, out);
    EXPECT(strstr(out, "GSHMEM_HEAP_MAXX is not a gshmem environment variable") != NULL,
           "no warning naming GSHMEM_HEAP_MAXX: %s", out);
    EXPECT(strstr(out, "did you mean GSHMEM_HEAP_MAX?") != NULL, "no suggestion: %s", out);
    EXPECT(strstr(out, "GSHMEM_NOTHING_LIKE_IT_AT_ALL is not") != NULL,
           "no warning naming GSHMEM_NOTHING_LIKE_IT_AT_ALL: %s", out);
    EXPECT(strstr(out, "GSHMEM_TEST_SEED") == NULL, "warned about GSHMEM_TEST_SEED: %s", out);
    unsetenv("GSHMEM_HEAP_MAX");
    unsetenv("GSHMEM_TEST_SEED");
    unsetenv("GSHMEM_HEAP_MAXX");
    unsetenv("GSHMEM_NOTHING_LIKE_IT_AT_ALL");
}

/* gshmemi_config_nvshmem with warnings, stderr sent to a file: its count, the text in buf. */
static int nvshmem_warnings(gshmemi_config *c, char *buf, size_t cap) {
    FILE *tmp = tmpfile();
    int saved = dup(2);
    fflush(stderr);
    dup2(fileno(tmp), 2);
    int n = gshmemi_config_nvshmem(c, true);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t len = fread(buf, 1, cap - 1, tmp);
    buf[len] = 0;
    fclose(tmp);
    return n;
}

static void nvshmem(void) {
    static const char *vars[] = {"NVSHMEM_DEBUG", "NVSHMEM_MAX_TEAMS", "NVSHMEM_CUMEM_GRANULARITY",
        "NVSHMEM_INFO", "NVSHMEM_SYMMETRIC_SIZE", "NVSHMEM_DISABLE_NVLS",
        "NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME", "NVSHMEM_DISABLE_P2P", "NVSHMEM_BOOTSTRAP_PMI",
        "NVSHMEM_MACHINE_READABLE_OUTPUT", "NVSHMEM_BOOTSTRAP", "GSHMEM_DEBUG", "GSHMEM_INFO"};
    gshmemi_config c;
    char out[4096];
    setenv("NVSHMEM_DEBUG", "INFO", 1);
    setenv("NVSHMEM_MAX_TEAMS", "2000", 1);
    setenv("NVSHMEM_CUMEM_GRANULARITY", "64M", 1);
    setenv("NVSHMEM_INFO", "1", 1);
    setenv("NVSHMEM_SYMMETRIC_SIZE", "1G", 1);
    setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
    setenv("NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME", "lo", 1);
    setenv("NVSHMEM_DISABLE_P2P", "0", 1);
    setenv("NVSHMEM_BOOTSTRAP", "PMI", 1);
    setenv("NVSHMEM_MACHINE_READABLE_OUTPUT", "1", 1);   /* the perftests' own */
    EXPECT(gshmemi_config_load(&c) == GSHMEM_SUCCESS, "NVSHMEM variables made the load fail");
    EXPECT(c.DEBUG == 1, "NVSHMEM_DEBUG=INFO gave GSHMEM_DEBUG %d, expected 1", c.DEBUG);
    EXPECT(c.TEAMS_MAX == 2004, "NVSHMEM_MAX_TEAMS=2000 gave TEAMS_MAX %d, expected 2004", c.TEAMS_MAX);
    EXPECT(c.HEAP_CHUNK_MIN == 64ull << 20, "NVSHMEM_CUMEM_GRANULARITY=64M gave HEAP_CHUNK_MIN %llu",
           (unsigned long long)c.HEAP_CHUNK_MIN);
    EXPECT(c.INFO, "NVSHMEM_INFO=1 did not set GSHMEM_INFO");
    EXPECT(!strcmp(c.BOOTSTRAP_IFADDR, "127.0.0.1"), "NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=lo gave "
           "BOOTSTRAP_IFADDR '%s', expected 127.0.0.1", c.BOOTSTRAP_IFADDR);
    EXPECT(!strcmp(c.BOOTSTRAP, "auto"), "NVSHMEM_BOOTSTRAP=PMI changed GSHMEM_BOOTSTRAP to %s", c.BOOTSTRAP);
    int n = nvshmem_warnings(&c, out, sizeof out);
    EXPECT(n == 0 && !out[0], "%d warnings for variables gshmem honours: %s", n, out);

    setenv("GSHMEM_DEBUG", "0", 1);           /* gshmem's own variable wins */
    setenv("GSHMEM_INFO", "0", 1);
    gshmemi_config_load(&c);
    EXPECT(c.DEBUG == 0 && !c.INFO, "NVSHMEM_DEBUG/INFO overrode GSHMEM_DEBUG=0/GSHMEM_INFO=0 "
           "(DEBUG %d, INFO %d)", c.DEBUG, (int)c.INFO);

    setenv("NVSHMEM_DISABLE_P2P", "1", 1);
    setenv("NVSHMEM_BOOTSTRAP_PMI", "PMI-2", 1);
    setenv("NVSHMEM_DEBUG", "LOUD", 1);
    n = nvshmem_warnings(&c, out, sizeof out);
    EXPECT(n == 3, "%d warnings, expected 3 (DISABLE_P2P, BOOTSTRAP_PMI, DEBUG): %s", n, out);
    EXPECT(strstr(out, "NVSHMEM_DISABLE_P2P=1 has no effect") != NULL, "no warning naming "
           "NVSHMEM_DISABLE_P2P: %s", out);
    EXPECT(strstr(out, "NVSHMEM_BOOTSTRAP_PMI=PMI-2") && strstr(out, "PMIx"), "no warning naming "
           "NVSHMEM_BOOTSTRAP_PMI with the remedy: %s", out);
    EXPECT(strstr(out, "NVSHMEM_DEBUG=LOUD") != NULL, "no warning naming NVSHMEM_DEBUG: %s", out);
    EXPECT(strstr(out, "MACHINE_READABLE") == NULL, "warned about a program's own variable: %s", out);
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);

    /* the transport between nodes: IB_ENABLE_IBGDA picks ibgda or the proxy and wins over
     * REMOTE_TRANSPORT's CPU-driven names; GSHMEM_REMOTE_TRANSPORT wins over both */
    static const struct { const char *ibgda, *remote, *gshmem, *want; int warnings; } tr[] = {
        {"1", NULL, NULL, "ibgda", 0},        {"0", NULL, NULL, "proxy", 0},
        {NULL, "ibrc", NULL, "proxy", 0},     {NULL, "UCX", NULL, "proxy", 0},
        {"1", "libfabric", NULL, "ibgda", 0}, {"0", "ibdevx", NULL, "proxy", 0},
        {"1", NULL, "proxy", "proxy", 0},     {NULL, "ibrc", "ibgda", "ibgda", 0},
        {NULL, NULL, NULL, "auto", 0},        {NULL, "none", NULL, "auto", 1},
        {"maybe", NULL, NULL, "auto", 1},     {NULL, "verbs", NULL, "auto", 1},
    };
    for (size_t i = 0; i < sizeof tr / sizeof tr[0]; i++) {
        if (tr[i].ibgda) setenv("NVSHMEM_IB_ENABLE_IBGDA", tr[i].ibgda, 1);
        if (tr[i].remote) setenv("NVSHMEM_REMOTE_TRANSPORT", tr[i].remote, 1);
        if (tr[i].gshmem) setenv("GSHMEM_REMOTE_TRANSPORT", tr[i].gshmem, 1);
        EXPECT(gshmemi_config_load(&c) == GSHMEM_SUCCESS, "load failed with NVSHMEM_IB_ENABLE_IBGDA=%s "
               "NVSHMEM_REMOTE_TRANSPORT=%s", tr[i].ibgda ? tr[i].ibgda : "-", tr[i].remote ? tr[i].remote : "-");
        EXPECT(!strcmp(c.REMOTE_TRANSPORT, tr[i].want), "NVSHMEM_IB_ENABLE_IBGDA=%s NVSHMEM_REMOTE_TRANSPORT=%s "
               "GSHMEM_REMOTE_TRANSPORT=%s gave %s, expected %s", tr[i].ibgda ? tr[i].ibgda : "-",
               tr[i].remote ? tr[i].remote : "-", tr[i].gshmem ? tr[i].gshmem : "-", c.REMOTE_TRANSPORT, tr[i].want);
        n = nvshmem_warnings(&c, out, sizeof out);
        EXPECT(n == tr[i].warnings, "%d warnings, expected %d, for NVSHMEM_IB_ENABLE_IBGDA=%s "
               "NVSHMEM_REMOTE_TRANSPORT=%s: %s", n, tr[i].warnings, tr[i].ibgda ? tr[i].ibgda : "-",
               tr[i].remote ? tr[i].remote : "-", out);
        unsetenv("NVSHMEM_IB_ENABLE_IBGDA");
        unsetenv("NVSHMEM_REMOTE_TRANSPORT");
        unsetenv("GSHMEM_REMOTE_TRANSPORT");
    }
}

int main(void) {
    sizes();
    load();
    print();
    unknown();
    nvshmem();
    printf("config: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
