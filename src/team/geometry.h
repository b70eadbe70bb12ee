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

#endif
