/* Proves the environment table parses every kind (sizes with suffixes, ints, doubles,
 * strings), rejects junk with GSHMEM_ERR_INVALID_ARG while keeping the default, that the
 * printer lists every variable with the values in one column, and that unknown GSHMEM_*
 * variables are warned about (with the nearest name) while declared ones and the test
 * suite's GSHMEM_TEST_* are not. */
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

int main(void) {
    sizes();
    load();
    print();
    unknown();
    printf("config: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
