/* EXPERIMENT: GSHMEM_PROXY_TRACE=PREFIX records the proxy's events with their times, written to
 * PREFIX.<pe> at finalize (text: seconds event arg). */
#ifndef GSHMEMI_PROXY_TRACE_H
#define GSHMEMI_PROXY_TRACE_H
#include <stdint.h>
enum { TR_DRAIN = 1, TR_SENDREQ_B, TR_SENDREQ_E, TR_RECV, TR_SERVE_E, TR_PLACED, TR_SENDRSP_B, TR_SENDRSP_E,
       TR_CQ_B, TR_CQ_E, TR_RSP_RECV, TR_TICKET_B, TR_TICKET_E, TR_WRITE_B, TR_WRITE_E };
typedef struct { double t; uint32_t ev, arg; } gshmemi_trace_ev;
extern gshmemi_trace_ev *gshmemi_trace_buf;
extern uint32_t gshmemi_trace_n, gshmemi_trace_cap;
double gshmemi_proxy_now(void);
static inline void gshmemi_ptrace(uint32_t ev, uint32_t arg) {
    if (gshmemi_trace_buf && gshmemi_trace_n < gshmemi_trace_cap)
        gshmemi_trace_buf[gshmemi_trace_n++] = (gshmemi_trace_ev){gshmemi_proxy_now(), ev, arg};
}
void gshmemi_trace_open(void);
void gshmemi_trace_write(int pe);
#endif
