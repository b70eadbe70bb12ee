/* The library's state on this PE (state.h), below every service that reads it: init.c fills
 * it, the host calls, the heap, the placement and the teams read it. */
#include "state.h"

gshmemi_state gshmemi_g;

const struct gshmemi_transport_ops *gshmemi_transport_of(int pe, void **tctx) {
    gshmemi_state *s = &gshmemi_g;
    if (pe < 0 || pe >= s->npes || !s->pe_transport || s->pe_transport[pe] < 0) return NULL;
    *tctx = s->tctx[s->pe_transport[pe]];
    return s->transports[s->pe_transport[pe]];
}
