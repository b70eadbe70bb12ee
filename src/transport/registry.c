/* The transports built into this library, in the order the core asks them which PEs they
 * reach (the first that reaches a PE serves it). The only file that names them. ibgda comes
 * before the proxy: where it serves the other nodes (every PE has a NIC for it, or
 * GSHMEM_REMOTE_TRANSPORT=ibgda) it takes them, else it reaches none and the proxy does. */
#include "transport.h"

extern const struct gshmemi_transport_ops gshmemi_transport_p2p;
extern const struct gshmemi_transport_ops gshmemi_transport_ibgda;
#ifdef GSHMEMI_HAVE_PROXY
extern const struct gshmemi_transport_ops gshmemi_transport_proxy;
#endif

const struct gshmemi_transport_ops *const gshmemi_transports[] = {
    &gshmemi_transport_p2p,
    &gshmemi_transport_ibgda,
#ifdef GSHMEMI_HAVE_PROXY
    &gshmemi_transport_proxy,
#endif
    NULL,
};
