/* Status codes, their propagation and the library's messages (error.c). Every internal call
 * returns a gshmemi_status (0 = success); GSHMEMI_CHECK propagates it and records where it
 * failed; at the public boundary it becomes a message naming the call and a documented status. */
#ifndef GSHMEMI_STATUS_H
#define GSHMEMI_STATUS_H

#include "gshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One of GSHMEM_SUCCESS / GSHMEM_ERR_* of gshmem/types.h. */
typedef int gshmemi_status;

/* Records file:line of the first failure so the message at the public boundary can say
 * where it broke, then propagates. */
#define GSHMEMI_CHECK(expr)                                                                  \
    do {                                                                                     \
        gshmemi_status st_ = (expr);                                                         \
        if (st_ != GSHMEM_SUCCESS) {                                                         \
            gshmemi_trace(__FILE__, __LINE__, #expr, st_);                                   \
            return st_;                                                                      \
        }                                                                                    \
    } while (0)

/* Same, for a goto-cleanup style function: sets `st` and jumps to `label`. */
#define GSHMEMI_CHECK_GOTO(expr, st, label)                                                  \
    do {                                                                                     \
        (st) = (expr);                                                                       \
        if ((st) != GSHMEM_SUCCESS) {                                                        \
            gshmemi_trace(__FILE__, __LINE__, #expr, (st));                                  \
            goto label;                                                                      \
        }                                                                                    \
    } while (0)

/* With debug messages on (gshmemi_log_set_debug), says where a status was propagated. */
void gshmemi_trace(const char *file, int line, const char *expr, gshmemi_status st);
const char *gshmemi_status_str(gshmemi_status st);

/* Every message starts with "gshmem PE <n>:" (or "gshmem:" before the rank is known) and is
 * written to stderr with one write(), so lines of several threads and PEs do not mix. */
void gshmemi_set_log_rank(int rank);
/* 0: gshmemi_info and gshmemi_trace print nothing; >= 1: they print (GSHMEM_DEBUG). */
void gshmemi_log_set_debug(int level);
void gshmemi_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gshmemi_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gshmemi_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints the message, notifies the launcher/peers through gshmemi_abort_hook (if set, once),
 * flushes the program's stdio buffers where no other thread holds them, and ends the process
 * with exit status 1. */
void gshmemi_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Set by init to the bootstrap's abort once the job is up; called once by gshmemi_fatal. */
extern void (*gshmemi_abort_hook)(int code, const char *msg);

#ifdef __cplusplus
}
#endif

#endif
