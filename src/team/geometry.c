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

int gshmemi_geom_oneshot_channels(size_t nb, size_t units, size_t g, size_t chunk, int most) {
    if (chunk < 16) chunk = 16;
    if (g < 1) g = 1;
    size_t k = (nb + chunk - 1) / chunk;
    if (most >= 1 && k > (size_t)most) k = (size_t)most;
    if (k < 1) k = 1;
    for (;;) {   /* fewer channels until the last slice is not empty; k only shrinks */
        size_t per = ((units + k - 1) / k + g - 1) / g * g;
        size_t need = per ? (units + per - 1) / per : 1;
        if (need < 1) need = 1;
        if (need >= k) return (int)k;
        k = need;
    }
}

size_t gshmemi_geom_oneshot_pairs(size_t units, size_t g, size_t es, int nch) {
    if (g < 1) g = 1;
    size_t per = units;
    if (nch > 1) per = ((units + (size_t)nch - 1) / (size_t)nch + g - 1) / g * g;
    size_t bytes = (per < units ? per : units) * es;   /* slice 0 is the largest */
    return bytes ? (bytes + 7) / 8 : 1;
}
