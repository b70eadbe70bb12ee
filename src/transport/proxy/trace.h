/* The proxy's event trace (GSHMEM_PROXY_TRACE=PREFIX): each event the loop and the staged
 * protocol pass through, with its time on CLOCK_MONOTONIC, kept in memory (2^20 events, the
 * rest dropped) and written to PREFIX.<pe> at finalize as text lines "seconds event arg".
 * Both nodes of a one-machine test share the clock, so tools/proxy_trace.py lines up the two
 * proxies of a ping-pong and splits each one-way trip (pickup, send call, wire, placement,
 * the GPU's answer). One proxy per process: the trace is the process's. Off, an event costs a
 * load and a branch. */
#ifndef GSHMEMI_PROXY_TRACE_H
#define GSHMEMI_PROXY_TRACE_H

#include <stdint.h>

#include "base.h"   /* gshmemi_proxy_now: the trace's clock is the proxy's */

/* the numbers tools/proxy_trace.py reads: append, never renumber */
enum {
    TR_DRAIN = 1,        /* a descriptor taken from a ring (arg: its op) */
    TR_SENDREQ_B,        /* fi_send of a request begins (arg: its PE) / ends (arg: the return) */
    TR_SENDREQ_E,
    TR_RECV,             /* a request arrived (arg: its message type) */
    TR_SERVE_E,          /* its memory operations are enqueued */
    TR_PLACED,           /* they were performed: its response is released */
    TR_SENDRSP_B,        /* fi_send of a response begins / ends */
    TR_SENDRSP_E,
    TR_CQ_B,             /* a completion-queue read that found work begins / ends (arg: entries) */
    TR_CQ_E,
    TR_RSP_RECV,         /* a response arrived alone (arg: its message type) */
    TR_TICKET_B,         /* the memory queue's ticket write (a CUDA call) begins / ends */
    TR_TICKET_E,
    TR_WRITE_B,          /* a 64-bit store into GPU memory (a CUDA call) begins / ends */
    TR_WRITE_E,
};

typedef struct gshmemi_trace_ev {
    double t;
    uint32_t ev, arg;
} gshmemi_trace_ev;

extern gshmemi_trace_ev *gshmemi_trace_buf;   /* NULL: tracing off */
extern uint32_t gshmemi_trace_n;

void gshmemi_ptrace_at(double t, uint32_t ev, uint32_t arg);

static inline void gshmemi_ptrace(uint32_t ev, uint32_t arg) {
    if (gshmemi_trace_buf) gshmemi_ptrace_at(gshmemi_proxy_now(), ev, arg);
}

/* Starts the trace if GSHMEM_PROXY_TRACE names a prefix; writes and frees it (finalize). */
void gshmemi_ptrace_open(void);
void gshmemi_ptrace_close(int pe);

#endif
