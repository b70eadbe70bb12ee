/* Deterministic offset allocator for the symmetric heap: the same sequence of alloc/free
 * calls on every PE yields the same offsets. Manages offsets in [0, limit); `limit` grows
 * when the heap maps more memory. Best fit over size-segregated free lists, coalescing
 * with both neighbours on free, so malloc/free churn does not fragment pathologically.
 * Pure host C, no CUDA: unit-tested in tests/unit/test_alloc.c. */
#ifndef GSHMEMI_ALLOC_H
#define GSHMEMI_ALLOC_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define GSHMEMI_ALLOC_MIN_ALIGN 256u  /* every block starts on a 256-byte boundary */
#define GSHMEMI_ALLOC_NBINS 64

typedef struct gshmemi_block gshmemi_block;  /* private to alloc.c */

typedef struct gshmemi_alloc {
    uint64_t limit;                  /* offsets [0, limit) are managed */
    uint64_t in_use;                 /* bytes handed out (rounded sizes, incl. align padding) */
    uint64_t n_live;                 /* live allocations */
    gshmemi_block *bins[GSHMEMI_ALLOC_NBINS];  /* free lists by floor(log2(size)) */
    gshmemi_block *last;             /* highest-addressed block (free or used) */
    /* open-addressing hash: offset -> used block, for free() and lookup */
    gshmemi_block **table;
    uint64_t table_cap, table_used;
} gshmemi_alloc;

void gshmemi_alloc_init(gshmemi_alloc *a);
void gshmemi_alloc_destroy(gshmemi_alloc *a);
/* Extends the managed range to new_limit (>= limit); the new space joins (and coalesces
 * with) a free block at the end. Returns false on out-of-memory for bookkeeping. */
bool gshmemi_alloc_grow(gshmemi_alloc *a, uint64_t new_limit);
/* Best fit. align: power of two (values below GSHMEMI_ALLOC_MIN_ALIGN are raised to it).
 * size 0 is treated as 1. Returns true and *off on success; false when no free block fits
 * (the caller grows and retries). *need (optional) receives how many bytes past the
 * current limit would make the request fit, counting a free block at the end. */
bool gshmemi_alloc_alloc(gshmemi_alloc *a, uint64_t size, uint64_t align, uint64_t *off,
                         uint64_t *need);
/* Frees the block that starts at off. Returns false (and changes nothing) if off is not
 * the start of a live allocation (never allocated, or already freed). */
bool gshmemi_alloc_free(gshmemi_alloc *a, uint64_t off);
/* Size handed out for the live block at off (0 if none). */
uint64_t gshmemi_alloc_size(const gshmemi_alloc *a, uint64_t off);
/* Largest free block (for error messages). */
uint64_t gshmemi_alloc_largest_free(const gshmemi_alloc *a);
/* Consistency check for tests: blocks tile [0, limit), no two adjacent free blocks, bins
 * hold exactly the free blocks, in_use matches. Returns false and prints why if not. */
bool gshmemi_alloc_check(const gshmemi_alloc *a);

#endif
