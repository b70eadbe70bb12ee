/* The proxy's shared services (base.h). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "base.h"
#include "gshmem/proxy_desc.h"

const char *gshmemi_proxy_op_name(int op) {
    static const char *names[GSHMEM_PROXY_OP_COUNT] = {"nop", "put", "get", "p", "g", "atomic", "signal",
                                                       "put_signal", "fence", "quiet"};
    return op >= 0 && op < GSHMEM_PROXY_OP_COUNT ? names[op] : "unknown op";
}

void gshmemi_perr_fail(gshmemi_perr *e, int status, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gshmemi_error("%s", msg);
    int zero = 0;
    /* only the first error is kept: msg is written by the thread that wins the exchange */
    if (__atomic_compare_exchange_n(&e->status, &zero, -1, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
        snprintf(e->msg, sizeof e->msg, "%s", msg);
        __atomic_store_n(&e->status, status, __ATOMIC_RELEASE);
    }
}

gshmemi_status gshmemi_perr_get(const gshmemi_perr *e, const char **msg) {
    int st = __atomic_load_n(&e->status, __ATOMIC_ACQUIRE);
    if (st < 0) st = 0;   /* being written */
    if (msg) *msg = st ? e->msg : "";
    return st;
}
