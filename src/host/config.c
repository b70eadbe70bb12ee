/* Configuration from the environment: env_defs.h is the one list of variables; this file
 * expands it into the parser (gshmemi_config_load) and the printer (gshmem-info). */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "gshmem/info.h"

gshmemi_config gshmemi_cfg = {
#define GSHMEMI_ENV_FIELD(name, kind, ctype, def, help) .name = def,
#include "env_defs.h"
#undef GSHMEMI_ENV_FIELD
};

bool gshmemi_parse_size(const char *s, uint64_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s || *s == '-') return false;
    int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'I') end++;          /* accept "GiB"-style too */
    if (*end == 'b' || *end == 'B') end++;
    if (*end != 0) return false;
    if (shift && v > (~0ull >> shift)) return false;
    *out = (uint64_t)v << shift;
    return true;
}

__attribute__((unused)) static bool parse_bool(const char *s, bool *out) {
    if (!strcmp(s, "1") || !strcasecmp(s, "yes") || !strcasecmp(s, "true") || !strcasecmp(s, "on")) {
        *out = true;
        return true;
    }
    if (!strcmp(s, "0") || !strcasecmp(s, "no") || !strcasecmp(s, "false") || !strcasecmp(s, "off")) {
        *out = false;
        return true;
    }
    return false;
}

static bool parse_int(const char *s, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 0);
    if (errno || end == s || *end || v < -2147483647L || v > 2147483647L) return false;
    *out = (int)v;
    return true;
}

static bool parse_double(const char *s, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end) return false;
    *out = v;
    return true;
}

static bool parse_str(const char *s, const char **out) {
    *out = s;  /* getenv storage lives as long as the environment entry */
    return true;
}

#define parse_BOOL(s, p) parse_bool(s, p)
#define parse_INT(s, p) parse_int(s, p)
#define parse_SIZE(s, p) gshmemi_parse_size(s, p)
#define parse_DOUBLE(s, p) parse_double(s, p)
#define parse_STR(s, p) parse_str(s, p)

static const char *kind_hint(const char *kind) {
    if (!strcmp(kind, "BOOL")) return "0/1/yes/no/true/false";
    if (!strcmp(kind, "INT")) return "an integer";
    if (!strcmp(kind, "SIZE")) return "a byte count like 4096, 512M, 2G";
    if (!strcmp(kind, "DOUBLE")) return "a number";
    return "a string";
}

static const char *const known_vars[] = {
#define GSHMEMI_ENV_FIELD(name, kind, ctype, def, help) "GSHMEM_" #name,
#include "env_defs.h"
#undef GSHMEMI_ENV_FIELD
};
#define N_KNOWN (sizeof known_vars / sizeof known_vars[0])

/* Edit distance of a and b (the first n bytes of a), for "did you mean"; capped work: names
 * are short. */
static size_t distance(const char *a, size_t n, const char *b) {
    size_t m = strlen(b), row[64], prev, tmp;
    if (n >= 63 || m >= 63) return 99;
    for (size_t j = 0; j <= m; j++) row[j] = j;
    for (size_t i = 1; i <= n; i++) {
        prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= m; j++) {
            tmp = row[j];
            size_t sub = prev + (a[i - 1] != b[j - 1]);
            size_t best = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;
            row[j] = sub < best ? sub : best;
            prev = tmp;
        }
    }
    return row[m];
}

extern char **environ;

int gshmemi_config_warn_unknown(void) {
    int unknown = 0;
    for (char **e = environ; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        size_t n = eq ? (size_t)(eq - *e) : strlen(*e);
        if (strncmp(*e, "GSHMEM_", 7) != 0) continue;
        /* GSHMEM_TEST_*: reserved for gshmem's own test suite (tests/gpu). */
        if (n > 12 && !strncmp(*e, "GSHMEM_TEST_", 12)) continue;
        const char *best = NULL;
        size_t best_d = 99;
        bool found = false;
        for (size_t k = 0; k < N_KNOWN && !found; k++) {
            size_t d = distance(*e, n, known_vars[k]);
            found = d == 0;
            if (d < best_d) best_d = d, best = known_vars[k];
        }
        if (found) continue;
        unknown++;
        if (best && best_d <= 3)
            gshmemi_warn("%.*s is not a gshmem environment variable (ignored); did you mean %s? "
                         "(gshmem-info lists them all)", (int)n, *e, best);
        else
            gshmemi_warn("%.*s is not a gshmem environment variable (ignored; gshmem-info lists "
                         "them all)", (int)n, *e);
    }
    return unknown;
}

gshmemi_status gshmemi_config_load(gshmemi_config *cfg) {
    gshmemi_status st = GSHMEM_SUCCESS;
    const char *v;
    static int warned;
    if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED)) gshmemi_config_warn_unknown();
#define GSHMEMI_ENV_FIELD(name, kind, ctype, def, help)                                     \
    cfg->name = def;                                                                         \
    v = getenv("GSHMEM_" #name);                                                             \
    if (v && *v && !parse_##kind(v, &cfg->name)) {                                           \
        gshmemi_error("environment variable GSHMEM_" #name "='%s' is not %s (%s); unset it " \
                      "or fix its value", v, kind_hint(#kind), help);                        \
        cfg->name = def;                                                                     \
        st = GSHMEM_ERR_INVALID_ARG;                                                         \
    }
#include "env_defs.h"
#undef GSHMEMI_ENV_FIELD
    gshmemi_config_nvshmem(cfg, false);
    if (cfg == &gshmemi_cfg) gshmemi_log_set_debug(cfg->DEBUG);
    return st;
}

/* ---- NVSHMEM's variables (env_nvshmem.h) ------------------------------------------------- */
static bool gshmem_set(const char *name) {
    const char *v = getenv(name);
    return v && *v;
}

/* Values that ask for nothing: empty, or a boolean false. */
static bool asks_nothing(const char *v) {
    bool b;
    return !*v || (parse_bool(v, &b) && !b);
}

/* The IPv4 address of the interface named `name` (or, as NVSHMEM's socket code accepts, the
 * first whose name starts with it) into buf. */
static bool ifname_ipv4(const char *name, char *buf, size_t len) {
    struct ifaddrs *all = NULL;
    if (getifaddrs(&all) != 0) return false;
    bool found = false;
    for (int exact = 1; exact >= 0 && !found; exact--)
        for (struct ifaddrs *i = all; i && !found; i = i->ifa_next) {
            if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !i->ifa_name) continue;
            if (exact ? strcmp(i->ifa_name, name) : strncmp(i->ifa_name, name, strlen(name)))
                continue;
            found = inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, buf,
                              (socklen_t)len) != NULL;
        }
    freeifaddrs(all);
    return found;
}

/* One MAP variable: sets cfg's field unless its GSHMEM_ variable is set. Returns false (with
 * the reason in why) when the value asks for something gshmem cannot do. */
static bool nvshmem_map(gshmemi_config *cfg, const char *name, const char *v, char *why, size_t n) {
    static char ifaddr[64];   /* BOOTSTRAP_IFADDR points into the environment or here */
    int i;
    uint64_t sz;
    bool b;
    if (!strcmp(name, "DEBUG")) {
        if (!strcasecmp(v, "INFO") || !strcasecmp(v, "TRACE")) {
            if (!gshmem_set("GSHMEM_DEBUG") && cfg->DEBUG < 1) cfg->DEBUG = 1;
        } else if (!strcasecmp(v, "VERSION")) {
            if (!gshmem_set("GSHMEM_INFO")) cfg->INFO = true;
        } else if (strcasecmp(v, "WARN") && strcasecmp(v, "ABORT") && *v) {
            snprintf(why, n, "'%s' is not one of VERSION, WARN, INFO, ABORT, TRACE", v);
            return false;
        }
    } else if (!strcmp(name, "VERSION") || !strcmp(name, "INFO")) {
        if (parse_bool(v, &b) && b && !gshmem_set("GSHMEM_INFO")) cfg->INFO = true;
    } else if (!strcmp(name, "MAX_TEAMS")) {
        if (!parse_int(v, &i) || i < 0) {
            snprintf(why, n, "'%s' is not a team count", v);
            return false;
        }
        if (!gshmem_set("GSHMEM_TEAMS_MAX") && i <= 1 << 20 && i + 4 > cfg->TEAMS_MAX)
            cfg->TEAMS_MAX = i + 4;
    } else if (!strcmp(name, "CUMEM_GRANULARITY")) {
        if (!gshmemi_parse_size(v, &sz) || sz == 0) {
            snprintf(why, n, "'%s' is not a byte count", v);
            return false;
        }
        if (!gshmem_set("GSHMEM_HEAP_CHUNK_MIN")) cfg->HEAP_CHUNK_MIN = sz;
    } else if (!strcmp(name, "BOOTSTRAP_UID_SOCK_IFNAME")) {
        if (gshmem_set("GSHMEM_BOOTSTRAP_IFADDR") || !*v) return true;
        if (!ifname_ipv4(v, ifaddr, sizeof ifaddr)) {
            snprintf(why, n, "no interface '%s' with an IPv4 address (set GSHMEM_BOOTSTRAP_IFADDR "
                     "to the address instead)", v);
            return false;
        }
        cfg->BOOTSTRAP_IFADDR = ifaddr;
    } else if (!strcmp(name, "BOOTSTRAP_UID_SOCK_FAMILY")) {
        if (*v && strcasecmp(v, "AF_INET")) {
            snprintf(why, n, "'%s': gshmem's rendezvous uses IPv4 (AF_INET) only", v);
            return false;
        }
    } else if (!strcmp(name, "BOOTSTRAP")) {
        if (!strcasecmp(v, "SHMEM") || !strcasecmp(v, "plugin")) {
            snprintf(why, n, "'%s' is not available: gshmem finds its PEs through gshmrun, PMIx "
                     "(mpirun, srun --mpi=pmix), a unique id or an MPI communicator", v);
            return false;
        }
    } else if (!strcmp(name, "IB_ENABLE_IBGDA")) {
        if (!*v) return true;
        if (!parse_bool(v, &b)) {
            snprintf(why, n, "'%s' is not 0 or 1", v);
            return false;
        }
        if (!gshmem_set("GSHMEM_REMOTE_TRANSPORT")) cfg->REMOTE_TRANSPORT = b ? "ibgda" : "proxy";
    } else if (!strcmp(name, "REMOTE_TRANSPORT")) {
        /* NVSHMEM's CPU-driven transports are gshmem's proxy; IBGDA, when enabled, is chosen by
         * NVSHMEM_IB_ENABLE_IBGDA (above), which wins as it does in NVSHMEM */
        if (!*v) return true;
        if (!strcasecmp(v, "none")) {
            snprintf(why, n, "'none' is not available: gshmem reaches PEs of other nodes through ibgda "
                     "or the proxy (GSHMEM_REMOTE_TRANSPORT, docs/nodes.md)");
            return false;
        }
        if (strcasecmp(v, "ibrc") && strcasecmp(v, "ucx") && strcasecmp(v, "libfabric") && strcasecmp(v, "ibdevx")) {
            snprintf(why, n, "'%s' is not one of ibrc, ucx, libfabric, ibdevx, none", v);
            return false;
        }
        const char *ibgda = getenv("NVSHMEM_IB_ENABLE_IBGDA");
        const bool ib = ibgda && parse_bool(ibgda, &b) && b;
        if (!ib && !gshmem_set("GSHMEM_REMOTE_TRANSPORT")) cfg->REMOTE_TRANSPORT = "proxy";
    } else if (!strcmp(name, "BOOTSTRAP_PMI")) {
        if (*v && strcasecmp(v, "PMIX")) {
            snprintf(why, n, "'%s' is not available: gshmem speaks PMIx (mpirun, srun --mpi=pmix) "
                     "or runs under gshmrun", v);
            return false;
        }
    }
    return true;
}

int gshmemi_config_nvshmem(gshmemi_config *cfg, bool warn) {
    int warned = 0;
    char why[256];
    const char *v;
#define GSHMEMI_NV_ENV(name, how, help)                                                      \
    v = getenv("NVSHMEM_" #name);                                                            \
    if (v) {                                                                                 \
        why[0] = 0;                                                                          \
        bool ok_ = !strcmp(#how, "MAP") ? nvshmem_map(cfg, #name, v, why, sizeof why)        \
                 : !strcmp(#how, "IGNORED") ? asks_nothing(v) : true;                        \
        if (!ok_) {                                                                          \
            warned++;                                                                        \
            if (warn)                                                                        \
                gshmemi_warn("NVSHMEM_" #name "=%s has no effect under gshmem: %s", v,       \
                             why[0] ? why : help);                                           \
        }                                                                                    \
    }
#include "env_nvshmem.h"
#undef GSHMEMI_NV_ENV
    return warned;
}

void gshmemi_config_nvshmem_warn(void) {
    static int done;
    if (__atomic_exchange_n(&done, 1, __ATOMIC_RELAXED)) return;
    gshmemi_config scratch = gshmemi_cfg;
    gshmemi_config_nvshmem(&scratch, true);
}

/* A value as text (empty for an empty string); the length snprintf gives. */
#define format_BOOL(b, n, v) snprintf(b, n, "%s", (v) ? "1" : "0")
#define format_INT(b, n, v) snprintf(b, n, "%d", (int)(v))
#define format_SIZE(b, n, v) snprintf(b, n, "%llu", (unsigned long long)(v))
#define format_DOUBLE(b, n, v) snprintf(b, n, "%g", (double)(v))
#define format_STR(b, n, v) snprintf(b, n, "%s", (const char *)(v))

/* The value column starts after the longest name, so the rows line up whatever names
 * env_defs.h holds; an empty string shows as "". */
void gshmemi_config_print(const gshmemi_config *cfg, FILE *out) {
    int name_w = 0;
    char v[1024];
    for (size_t k = 0; k < N_KNOWN; k++)
        if ((int)strlen(known_vars[k]) > name_w) name_w = (int)strlen(known_vars[k]);
#define GSHMEMI_ENV_FIELD(name, kind, ctype, def, help)                                     \
    format_##kind(v, sizeof v, cfg->name);                                                   \
    fprintf(out, "  %-*s %-10s %s\n", name_w, "GSHMEM_" #name, v[0] ? v : "\"\"", help);
#include "env_defs.h"
#undef GSHMEMI_ENV_FIELD
}

int gshmemx_env_check(void) { return gshmemi_config_load(&gshmemi_cfg); }

void gshmemx_env_print(FILE *out) { gshmemi_config_print(&gshmemi_cfg, out); }

int gshmemx_env_get(const char *name, char *value, size_t len) {
    int n = -1;
    if (!name || !value || !len) return GSHMEM_ERR_INVALID_ARG;
#define GSHMEMI_ENV_FIELD(fname, kind, ctype, def, help)                                    \
    if (n < 0 && !strcmp(name, "GSHMEM_" #fname)) n = format_##kind(value, len, gshmemi_cfg.fname);
#include "env_defs.h"
#undef GSHMEMI_ENV_FIELD
    if (n < 0) {
        value[0] = 0;
        return GSHMEM_ERR_INVALID_ARG;
    }
    return (size_t)n < len ? GSHMEM_SUCCESS : GSHMEM_ERR_INVALID_ARG;
}
