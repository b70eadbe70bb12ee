/* What the host forms of the calls share (rma.c, amo.c): the route of a symmetric range to a
 * PE, and ending the job with a message when a CUDA call or a remote transport failed under a
 * host call. The forms of both sides and collectives call these too. */
#ifndef GSHMEMI_HOST_OPS_H
#define GSHMEMI_HOST_OPS_H

#include <stddef.h>

#include "status.h"

/* Validates (call, pe, symmetric range [sym, sym+n)) and returns where this PE reaches `sym`
 * on `pe` by load/store; ends the job with a message naming the call and argument otherwise
 * (`which` names the argument: "dest", "source", ...). */
char *gshmemi_host_peer_addr(const char *call, const void *sym, size_t n, int pe, const char *which);
/* Ends the job with a message when a CUDA call of a host call failed. */
void gshmemi_host_cuda(int err, const char *call, const char *what);
/* Ends the job when a remote operation of a host call failed (the transport printed why). */
void gshmemi_host_remote_done(gshmemi_status st, const char *call, int pe);
/* Frees the host atomics' result word (amo.c; at finalize). */
void gshmemi_host_amo_finalize(void);

#endif
