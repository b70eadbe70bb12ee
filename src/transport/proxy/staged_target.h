/* The staged mode's target side (staged_target.c): requests from other PEs are served and
 * answered. staged.c calls it; it uses the shared layer (staged_state.h). */
#ifndef GSHMEMI_PROXY_STAGED_TARGET_H
#define GSHMEMI_PROXY_STAGED_TARGET_H

#include <stdbool.h>

#include "staged_state.h"

/* Starts the request in b; false if no response buffer (or atomic room) is free. */
bool gshmemi_staged_serve(gshmemi_proxy *x, sbuf *b);
/* A response whose memory operations are done: held for a request to carry it, or sent. */
void gshmemi_staged_release_response(gshmemi_proxy *x, sbuf *o);
/* Held responses to pe (all PEs: pe < 0) that waited long enough (all: force) go out alone. */
int gshmemi_staged_send_held(gshmemi_proxy *x, int pe, bool force);
void gshmemi_staged_send_response(gshmemi_proxy *x, sbuf *o);

#endif
