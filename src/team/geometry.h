/* The arithmetic of team splits, apart from any GPU: a strided team is the world PEs
 * start + i * stride, i < size. Both splits of a strided parent give strided teams. */
#ifndef GSHMEMI_TEAM_GEOMETRY_H
#define GSHMEMI_TEAM_GEOMETRY_H

#include <stdbool.h>
#include <stddef.h>

typedef struct gshmemi_geom {
    int start, stride, size;
} gshmemi_geom;

/* split_strided(parent, start, stride, size): false when the arguments do not select PEs of
 * the parent (0 <= start, stride >= 1 when size > 1, last index < parent size). Else *out is
 * the new team in world terms and *me the index in it of parent index `pidx` (-1 if not a
 * member). */
bool gshmemi_geom_split_strided(gshmemi_geom parent, int pidx, int start, int stride, int size,
                                gshmemi_geom *out, int *me);

/* split_2d(parent, xrange): parent index i is at x = i % xrange, y = i / xrange (xrange is
 * clamped to the parent size); *x gets i's row (same y), *y its column (same x), with i's
 * index in each. xrange must be >= 1. */
void gshmemi_geom_split_2d(gshmemi_geom parent, int pidx, int xrange, gshmemi_geom *x, int *xme,
                           gshmemi_geom *y, int *yme);

/* Channels (blocks) of a one-shot collective: one per `chunk` bytes of each member's message
 * (nb bytes), at most `most`, and never one whose slice is empty, since every channel must send
 * each member at least one word. The device slices `units` (elements or bytes) in multiples of
 * g: slice c is [c * per, (c + 1) * per) clipped to units, per = ceil(units / nch) rounded up
 * to g (gshmemi_slice in gshmem/device/coll.h). */
int gshmemi_geom_oneshot_channels(size_t nb, size_t units, size_t g, size_t chunk, int most);

/* LL pairs (8 data bytes each) in the largest slice of a one-shot call on nch channels: units
 * of es bytes sliced in multiples of g as the device slices them (an empty slice still sends
 * one pair). The host gives a one-shot kernel one thread per pair; the one-pair reduce kernel
 * relies on this count being exact or more. */
size_t gshmemi_geom_oneshot_pairs(size_t units, size_t g, size_t es, int nch);

#endif
