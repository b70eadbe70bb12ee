/* Team split arithmetic (see geometry.h); unit-tested by tests/unit/test_team_geometry.c
 * against an enumeration of the members. */
#include "geometry.h"

bool gshmemi_geom_split_strided(gshmemi_geom p, int pidx, int start, int stride, int size,
                                gshmemi_geom *out, int *me) {
    if (size < 1 || start < 0 || start >= p.size || (size > 1 && stride < 1) ||
        (long)start + (long)(size - 1) * (size > 1 ? stride : 0) >= p.size)
        return false;
    if (size == 1) stride = 1;
    int d = pidx - start;
    *me = d >= 0 && d % stride == 0 && d / stride < size ? d / stride : -1;
    out->start = p.start + start * p.stride;
    out->stride = p.stride * stride;
    out->size = size;
    return true;
}

void gshmemi_geom_split_2d(gshmemi_geom p, int pidx, int xrange, gshmemi_geom *x, int *xme,
                           gshmemi_geom *y, int *yme) {
    if (xrange > p.size) xrange = p.size;
    int n = p.size, xi = pidx % xrange, yi = pidx / xrange;
    x->start = p.start + yi * xrange * p.stride;
    x->stride = p.stride;
    x->size = n - yi * xrange < xrange ? n - yi * xrange : xrange;
    *xme = xi;
    y->start = p.start + xi * p.stride;
    y->stride = p.stride * xrange;
    y->size = (n - xi + xrange - 1) / xrange;
    *yme = yi;
}
