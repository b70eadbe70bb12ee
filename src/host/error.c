/* Logging and status names. Every message names the PE ("gshmem PE 3: ...") so a line in
 * a multi-PE log says where it came from; fatal errors notify peers through a hook that
 * init.c installs (the bootstrap's abort), then exit. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "status.h"

static int log_rank = -1;
static int log_debug;
void (*gshmemi_abort_hook)(int code, const char *msg);

void gshmemi_set_log_rank(int rank) { log_rank = rank; }
void gshmemi_log_set_debug(int level) { log_debug = level; }

static void vlog(const char *level, const char *fmt, va_list ap) {
    char msg[2048];
    int n;
    if (log_rank >= 0)
        n = snprintf(msg, sizeof msg, "gshmem PE %d: %s", log_rank, level);
    else
        n = snprintf(msg, sizeof msg, "gshmem: %s", level);
    if (n < 0 || (size_t)n >= sizeof msg) n = 0;
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    size_t len = strlen(msg);
    if (len + 1 < sizeof msg) { msg[len++] = '\n'; msg[len] = 0; }
    /* one write() so lines from several threads/PEs do not interleave mid-line */
    ssize_t w = write(STDERR_FILENO, msg, len);
    (void)w;
}

void gshmemi_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vlog("error: ", fmt, ap);
    va_end(ap);
}

void gshmemi_warn(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vlog("warning: ", fmt, ap);
    va_end(ap);
}

void gshmemi_info(const char *fmt, ...) {
    if (log_debug < 1) return;
    va_list ap;
    va_start(ap, fmt);
    vlog("", fmt, ap);
    va_end(ap);
}

/* The program's buffered output (stdout to a pipe or a file is fully buffered) would be lost
 * by _exit. A stream another thread holds (blocked writing to a full pipe, say) is skipped:
 * waiting for it could keep a failing job from ending. */
static void flush_stdio(void) {
    FILE *streams[] = {stdout, stderr};
    for (int i = 0; i < 2; i++) {
        if (ftrylockfile(streams[i])) continue;
        fflush_unlocked(streams[i]);
        funlockfile(streams[i]);
    }
}

void gshmemi_fatal(const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gshmemi_error("%s", msg);
    if (gshmemi_abort_hook) {
        void (*hook)(int, const char *) = gshmemi_abort_hook;
        gshmemi_abort_hook = NULL;  /* a failure inside the hook must not recurse */
        hook(1, msg);
    }
    flush_stdio();
    _exit(1);
}

void gshmemi_trace(const char *file, int line, const char *expr, gshmemi_status st) {
    if (log_debug < 1) return;
    gshmemi_info("  at %s:%d: %s -> %s", file, line, expr, gshmemi_status_str(st));
}

const char *gshmemi_status_str(gshmemi_status st) {
    switch (st) {
    case GSHMEM_SUCCESS: return "success";
    case GSHMEM_ERR_INVALID_ARG: return "invalid argument";
    case GSHMEM_ERR_NOT_INITIALIZED: return "not initialized";
    case GSHMEM_ERR_NO_MEMORY: return "out of memory";
    case GSHMEM_ERR_CUDA: return "CUDA error";
    case GSHMEM_ERR_BOOTSTRAP: return "bootstrap failure";
    case GSHMEM_ERR_NOT_AVAILABLE: return "not available";
    case GSHMEM_ERR_NO_DEVICE: return "no usable GPU";
    case GSHMEM_ERR_TIMEOUT: return "timeout";
    case GSHMEM_ERR_INTERNAL: return "internal error";
    case GSHMEM_ERR_LAUNCH: return "kernel launch refused";
    default: return "unknown status";
    }
}
