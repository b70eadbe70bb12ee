/* The staged mode's source side (staged_source.c): records become requests, and the responses
 * to them end the records. staged.c calls it; it uses the shared layer (staged_state.h). */
#ifndef GSHMEMI_PROXY_STAGED_SOURCE_H
#define GSHMEMI_PROXY_STAGED_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "staged_state.h"

typedef struct send_err {
    int status;
    const char *what;   /* "fi_send: Connection reset" */
} send_err;

/* The mode's pump: r's requests (its pieces, or its entry in the pack to its PE), queued to
 * be sent once their source bytes are copied out. */
int gshmemi_staged_pump(gshmemi_proxy *x, op_rec *r);
/* Sends the queued requests whose source copies are done, in order; returns how many. */
int gshmemi_staged_send_requests(gshmemi_proxy *x);
/* What follows a request: blocked (the provider refused it), sent, or failed (e != NULL). */
void gshmemi_staged_request_state(gshmemi_proxy *x, sbuf *b, bool blocked, const send_err *e);
/* A response (alone in b, or carried in it) to one of our requests; false when it keeps b
 * (a get's data being copied out of it: `placing` posts it again). */
bool gshmemi_staged_on_response(gshmemi_proxy *x, sbuf *b, const smsg *m, const uint8_t *payload, size_t len);
/* The gets of packed response b have their data in their destinations. */
void gshmemi_staged_gets_placed(gshmemi_proxy *x, sbuf *b);

#endif
