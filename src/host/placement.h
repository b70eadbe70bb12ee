/* Placement of PEs on GPUs (placement.c): which GPU each PE uses, which PEs of a node share
 * one GPU, whether they share it through CUDA MPS, and how many SMs a PE may count on when
 * its kernels spin waiting for a co-located PE. Read by init (device selection), the heap
 * (its window and cap are divided among the PEs of a GPU) and the collectives (their kernels
 * are sized to the share). */
#ifndef GSHMEMI_PLACEMENT_H
#define GSHMEMI_PLACEMENT_H

#include <stddef.h>
#include <stdint.h>

#include "state.h"

typedef struct gshmemi_placement {
    int device;           /* CUDA ordinal */
    int gpu_pes;          /* PEs of this node on this GPU, this one included */
    int gpu_rank;         /* index of this PE among them (by PE number) */
    int *gpu_pe_list;     /* [gpu_pes] their PE numbers, ascending */
    int mps;              /* 1: every PE on this GPU runs as an MPS client */
    int sm_count;         /* SMs of the GPU */
    int sm_share;         /* SMs this PE may count on: its MPS limit, and 1/gpu_pes of the GPU */
    int coll_max_blocks;  /* job-wide cap on the blocks of the library's own kernels (0 = none) */
    uint64_t heap_window; /* job-wide VA window per PE (equal on every PE) */
    uint64_t dev_mem;     /* bytes of device memory of this GPU */
    int max_gpu_pes;      /* most PEs sharing one GPU anywhere in the job */
} gshmemi_placement;

extern gshmemi_placement gshmemi_place;

/* Makes a GPU current for this PE: the caller's current device, else GSHMEM_DEVICE, else
 * the PE's index on its node modulo the GPUs it sees (round-robin). */
gshmemi_status gshmemi_place_select_device(gshmemi_state *s);
/* Collective: learns every PE's GPU (fills s->dev_uuids), finds the PEs that share this
 * PE's GPU, checks MPS, computes the SM share and the job-wide kernel cap and heap window,
 * and says once per shared GPU what the placement means when MPS is missing. */
gshmemi_status gshmemi_place_exchange(gshmemi_state *s);
/* The PEs sharing this PE's GPU, ascending, separated by sep, into buf; returns the length. */
size_t gshmemi_place_gpu_pes(char *buf, size_t len, const char *sep);
/* One line describing the placement (for GSHMEM_DEBUG and gshmem-info). */
void gshmemi_place_describe(const gshmemi_state *s, char *buf, size_t len);
/* The cap applied to a library kernel's block count (nch when there is no cap). */
static inline int gshmemi_place_cap_blocks(int nch) {
    int m = gshmemi_place.coll_max_blocks;
    return m > 0 && nch > m ? m : nch;
}
void gshmemi_place_finalize(void);

#endif
