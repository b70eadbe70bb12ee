/* The staged mode's time split (staged_stats.h).
 * A mean alone misleads: a few stalls of milliseconds (a first contact, a busy GPU) among
 * thousands of 10-us requests double it. So each interval also goes into a histogram of
 * half-octave bins from 0.125 us, from which the median and the 99th percentile are read (as
 * their bin's upper edge: within 41 %). */
#include <stdio.h>

#include "staged_stats.h"

void gshmemi_lat_add(lat_stat *l, double secs) {
    l->sum += secs;
    l->n++;
    if (secs > l->max) l->max = secs;
    double u = secs * 1e6 / 0.125;
    int k = 0;
    while (k < LAT_BINS - 1 && u >= 1.4142135623730951) {
        u /= 1.4142135623730951;
        k++;
    }
    l->bin[k]++;
}

/* The upper edge in us of the bin holding quantile q (0..1) of what was added. */
static double lat_quantile(const lat_stat *l, double q) {
    uint64_t want = (uint64_t)(q * (double)l->n), seen = 0;
    double edge = 0.125 * 1.4142135623730951;
    for (int k = 0; k < LAT_BINS; k++, edge *= 1.4142135623730951) {
        seen += l->bin[k];
        if (seen > want) return edge < 1e6 * l->max ? edge : 1e6 * l->max;
    }
    return 1e6 * l->max;
}

void gshmemi_lat_say(const lat_stat *l, char *buf, size_t len) {
    snprintf(buf, len, "mean %.2f us, median <= %.2f, p99 <= %.1f (max %.1f)",
             l->n ? 1e6 * l->sum / (double)l->n : 0.0, lat_quantile(l, 0.5), lat_quantile(l, 0.99), 1e6 * l->max);
}
