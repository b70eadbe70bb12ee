/* What every file of the proxy shares below its layers: its clock, the names of the
 * descriptor operations and the proxy's first error (base.c). */
#ifndef GSHMEMI_PROXY_BASE_H
#define GSHMEMI_PROXY_BASE_H

#include <time.h>

#include "status.h"

/* Seconds on CLOCK_MONOTONIC: the proxy's clock for its time split, timeouts and trace. */
static inline double gshmemi_proxy_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* The first error of a proxy: its status and message (gshmemi_proxy_error reads them). Any
 * thread may fail; the first keeps its message. */
typedef struct gshmemi_perr {
    int status;                 /* atomic: 0 none, -1 being written, else a GSHMEM_ERR_* */
    char msg[512];
} gshmemi_perr;

/* Prints the message (gshmemi_error) and keeps it when it is the first. */
void gshmemi_perr_fail(gshmemi_perr *e, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The first error's status (0: none) and, if msg != NULL, its message. */
gshmemi_status gshmemi_perr_get(const gshmemi_perr *e, const char **msg);

/* "put", "g", ... for GSHMEM_PROXY_OP_*. */
const char *gshmemi_proxy_op_name(int op);

#endif
