/* The proxy's atomic batches (staged mode; docs/proxy.md, "The memory queue"): one kernel on the
 * proxy's stream applies the atomics that arrived from other nodes, GSHMEMI_AMO_* of 4 or 8
 * bytes, at system scope. The kernel is amo_batch.cu; memq.c batches, transport.c launches. */
#ifndef GSHMEMI_PROXY_AMO_BATCH_H
#define GSHMEMI_PROXY_AMO_BATCH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The descriptors ring[(first + i) % slots] for i < n (n <= GSHMEMI_AMO_BATCH_MAX;
 * device-readable, e.g. mapped pinned memory, untouched until the kernel completed), old values
 * to olds[(first + i) % slots]. Atomics on one 8-byte word apply in ring order. */
#define GSHMEMI_AMO_BATCH_MAX 256
typedef struct gshmemi_amo_desc {
    uint64_t addr, operand, compare;
    uint32_t op, size;
} gshmemi_amo_desc;
/* Each returns a cudaError_t. */
int gshmemi_launch_amo_batch(void *stream, const gshmemi_amo_desc *ring, uint64_t *olds, unsigned first,
                             unsigned n, unsigned slots);
/* Loads the batch kernel into the current context now (cudaFuncGetAttributes does, under lazy
 * loading too): a first launch that loads it while a kernel of the program spins could wait. */
int gshmemi_amo_batch_load(void);

#ifdef __cplusplus
}
#endif

#endif
