/* The symmetric heap (heap.c): a VA range at the same base on every PE, physical chunks
 * mapped on demand, the offset allocator (alloc.h) that makes collective allocation
 * deterministic; and device memory of one PE outside it. */
#ifndef GSHMEMI_HEAP_H
#define GSHMEMI_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "status.h"

struct gshmemi_state;

/* One physical chunk mapped at [base + off, base + off + size) of this PE's window. */
typedef struct gshmemi_chunk {
    uint64_t off, size;
    unsigned long long handle;   /* CUmemGenericAllocationHandle of the local allocation */
} gshmemi_chunk;

typedef struct gshmemi_heap {
    char *base;                  /* B: identical on every PE */
    uint64_t window;             /* W: VA per local PE; window k = local peer (me+k) mod L */
    uint64_t reserved;           /* VA reserved = window * n_windows */
    int n_windows;               /* = local_size */
    uint64_t mapped;             /* bytes of this PE's window backed by memory */
    uint64_t cap;                /* GSHMEM_HEAP_MAX, <= window */
    uint64_t granularity;        /* cuMemGetAllocationGranularity (recommended) */
    gshmemi_chunk *chunks;
    int n_chunks, chunks_cap;
    gshmemi_alloc alloc;         /* offsets within [0, mapped) */
    uint64_t internal_bytes;     /* what the library itself allocated from the heap */
    int cu_device;
    /* User buffers made symmetric (symreg.c) are mapped from the top of the window down:
     * [reg_low, window) holds them, and the heap grows up to min(cap, reg_low). */
    uint64_t reg_low;
    struct gshmemi_symreg *regs;
    int n_regs, regs_cap;
} gshmemi_heap;

/* A user buffer made symmetric: its heap offset and size, and the retained allocation handle
 * of the user's memory (symreg.c maps and unmaps it). */
typedef struct gshmemi_symreg {
    uint64_t off, size;
    unsigned long long handle;
} gshmemi_symreg;

/* Whether heap offset off (>= reg_low) lies in a registered buffer. */
static inline bool gshmemi_heap_registered(const gshmemi_heap *h, uint64_t off) {
    for (int i = 0; i < h->n_regs; i++)
        if (off >= h->regs[i].off && off - h->regs[i].off < h->regs[i].size) return true;
    return false;
}

static inline bool gshmemi_heap_contains(const gshmemi_heap *h, const void *p) {
    if ((const char *)p < h->base) return false;
    uint64_t off = (uint64_t)((const char *)p - h->base);
    if (off < h->mapped) return true;
    return off >= h->reg_low && off < h->window && gshmemi_heap_registered(h, off);
}

/* How far the heap may grow: its cap, or the lowest registered buffer. */
static inline uint64_t gshmemi_heap_limit(const gshmemi_heap *h) {
    return h->cap < h->reg_low ? h->cap : h->reg_low;
}

/* Collective, after the transports are up: reserves the identical VA range. */
gshmemi_status gshmemi_heap_init(struct gshmemi_state *s);
/* Collective: allocate `size` bytes aligned to `align` (power of two); grows the mapping
 * when needed (each new chunk goes to every transport's chunk_added); returns the symmetric
 * pointer. internal=true accounts it as library use. `call` names the public call. */
gshmemi_status gshmemi_heap_alloc(struct gshmemi_state *s, size_t size, size_t align, bool internal,
                                  void **out, const char *call);
gshmemi_status gshmemi_heap_free(struct gshmemi_state *s, void *ptr, const char *call);
/* Unmaps the chunks and frees the range: after gshmemi_symreg_finalize (below). */
void gshmemi_heap_finalize(struct gshmemi_state *s);
/* Collective check that every PE passed the same three values (heap.c); a message names `call`,
 * `what` describes them. */
gshmemi_status gshmemi_heap_agree(struct gshmemi_state *s, uint64_t a, uint64_t b, uint64_t c,
                                  const char *call, const char *what);
/* Unmaps every registered buffer (finalize, before the heap's range is freed). */
void gshmemi_symreg_finalize(struct gshmemi_state *s);

/* Device memory of this PE alone (not symmetric, outside the heap), reachable from every CUDA
 * context of the process on its GPU and registered with the transports that need it
 * (transport.h, local_added), so device calls may pass it as a local buffer. */
typedef struct gshmemi_local_mem {
    void *ptr;
    uint64_t size;
    unsigned long long handle;
    bool registered;              /* the transports were told of it */
} gshmemi_local_mem;
gshmemi_status gshmemi_local_mem_alloc(struct gshmemi_state *s, size_t size, gshmemi_local_mem *m,
                                       const char *call);
void gshmemi_local_mem_free(struct gshmemi_state *s, gshmemi_local_mem *m);

#endif
