/* The staged mode's time split (staged_stats.c): how long requests waited for their source
 * copy before the provider took them, and how long received requests took to be placed in GPU
 * memory. GSHMEM_DEBUG=1 prints both at finalize. */
#ifndef GSHMEMI_PROXY_STAGED_STATS_H
#define GSHMEMI_PROXY_STAGED_STATS_H

#include <stddef.h>
#include <stdint.h>

#define LAT_BINS 48   /* half octaves from 0.125 us: up to about 2 s */
typedef struct lat_stat {
    double sum, max;
    uint64_t n;
    uint32_t bin[LAT_BINS];
} lat_stat;

void gshmemi_lat_add(lat_stat *l, double secs);
/* "mean M us, median <= A, p99 <= B (max X)" */
void gshmemi_lat_say(const lat_stat *l, char *buf, size_t len);

#endif
