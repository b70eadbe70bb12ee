/* The proxy's event trace (trace.h). */
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "trace.h"

#define TRACE_CAP (1u << 20)

gshmemi_trace_ev *gshmemi_trace_buf;
uint32_t gshmemi_trace_n;

void gshmemi_ptrace_at(double t, uint32_t ev, uint32_t arg) {
    if (gshmemi_trace_n < TRACE_CAP) gshmemi_trace_buf[gshmemi_trace_n++] = (gshmemi_trace_ev){t, ev, arg};
}

void gshmemi_ptrace_open(void) {
    if (!gshmemi_cfg.PROXY_TRACE[0] || gshmemi_trace_buf) return;
    gshmemi_trace_n = 0;
    gshmemi_trace_buf = malloc(sizeof *gshmemi_trace_buf * TRACE_CAP);
    if (!gshmemi_trace_buf)
        gshmemi_warn("proxy: GSHMEM_PROXY_TRACE: no memory for the trace (%zu MiB); tracing is off",
                     sizeof *gshmemi_trace_buf * TRACE_CAP >> 20);
}

void gshmemi_ptrace_close(int pe) {
    if (!gshmemi_trace_buf) return;
    gshmemi_trace_ev *buf = gshmemi_trace_buf;
    gshmemi_trace_buf = NULL;
    char path[512];
    snprintf(path, sizeof path, "%s.%d", gshmemi_cfg.PROXY_TRACE, pe);
    FILE *f = fopen(path, "w");
    if (!f) {
        gshmemi_warn("proxy: GSHMEM_PROXY_TRACE: cannot write %s", path);
    } else {
        for (uint32_t i = 0; i < gshmemi_trace_n; i++) fprintf(f, "%.9f %u %u\n", buf[i].t, buf[i].ev, buf[i].arg);
        if (fclose(f)) gshmemi_warn("proxy: GSHMEM_PROXY_TRACE: writing %s failed", path);
        else gshmemi_info("proxy: %u events traced to %s%s", gshmemi_trace_n, path,
                          gshmemi_trace_n == TRACE_CAP ? " (full: later events were dropped)" : "");
    }
    free(buf);
}
