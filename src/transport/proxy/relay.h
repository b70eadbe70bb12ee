/* The proxy's relay kernel (relay.cu; protocol: docs/proxy.md, "The relay"): one
 * GPU thread of the proxy's context performs, in order, the 64-bit stores the proxy writes
 * into `slots` (pinned host memory mapped to the GPU). ctrl[GSHMEMI_RELAY_DONE] is how many it
 * performed, ctrl[GSHMEMI_RELAY_STOP] ends it, ctrl[GSHMEMI_RELAY_TICKET] is its ticket word. */
#ifndef GSHMEMI_PROXY_RELAY_H
#define GSHMEMI_PROXY_RELAY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GSHMEMI_RELAY_SLOTS 1024u
enum { GSHMEMI_RELAY_DONE = 0, GSHMEMI_RELAY_STOP = 1, GSHMEMI_RELAY_TICKET = 8 };
typedef struct __attribute__((aligned(16))) gshmemi_relay_slot {
    uint64_t value, tag;
} gshmemi_relay_slot;
/* Each returns a cudaError_t. */
int gshmemi_launch_relay(void *stream, const gshmemi_relay_slot *slots, uint64_t *ctrl);
int gshmemi_relay_load(void);

#ifdef __cplusplus
}
#endif

#endif
