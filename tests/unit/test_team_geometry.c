/* Proves the team split arithmetic against an enumeration: for many strided parents (start,
 * stride, size) and every argument choice, split_strided accepts exactly the arguments that
 * select parent PEs, and the team it returns lists the same world PEs, in the same order, as
 * picking parent indices start, start + stride, ...; each parent PE's index in it is its
 * position in that list (or -1). split_2d: every parent PE lands in exactly one row and one
 * column, rows and columns are the PEs with its y (resp. x), in order, and the x teams of a
 * parent are disjoint and cover it (likewise the y teams). */
#include <stdio.h>
#include <string.h>

#include "../../src/team/geometry.h"
#include "unit.h"

static int world(gshmemi_geom g, int i) { return g.start + i * g.stride; }

static void check_strided(gshmemi_geom p) {
    for (int start = -1; start <= p.size; start++)
        for (int stride = -1; stride <= p.size + 1; stride++)
            for (int size = -1; size <= p.size + 1; size++) {
                /* the enumeration: parent indices start + k * stride */
                int list[64], n = 0;
                bool ok = size >= 1 && start >= 0;
                for (int k = 0; ok && k < size; k++) {
                    int idx = start + k * (size > 1 ? stride : 0);
                    if (idx < 0 || idx >= p.size || (size > 1 && stride < 1)) ok = false;
                    else list[n++] = idx;
                }
                for (int pidx = 0; pidx < p.size; pidx++) {
                    gshmemi_geom t;
                    int me = -2;
                    bool got = gshmemi_geom_split_strided(p, pidx, start, stride, size, &t, &me);
                    EXPECT(got == ok, "parent (%d,%d,%d) split (%d,%d,%d): accepted %d, expected %d",
                           p.start, p.stride, p.size, start, stride, size, got, ok);
                    if (!got || !ok) continue;
                    EXPECT(t.size == n, "size %d, expected %d", t.size, n);
                    int want_me = -1;
                    for (int k = 0; k < n; k++) {
                        EXPECT(world(t, k) == world(p, list[k]),
                               "parent (%d,%d,%d) split (%d,%d,%d): member %d is PE %d, expected %d",
                               p.start, p.stride, p.size, start, stride, size, k, world(t, k),
                               world(p, list[k]));
                        if (list[k] == pidx) want_me = k;
                    }
                    EXPECT(me == want_me, "parent index %d: my index %d, expected %d", pidx, me, want_me);
                }
            }
}

static void check_2d(gshmemi_geom p) {
    for (int xrange = 1; xrange <= p.size + 2; xrange++) {
        int xr = xrange > p.size ? p.size : xrange;
        int in_x[64] = {0}, in_y[64] = {0};
        for (int pidx = 0; pidx < p.size; pidx++) {
            gshmemi_geom x, y;
            int xme, yme;
            gshmemi_geom_split_2d(p, pidx, xrange, &x, &xme, &y, &yme);
            int xi = pidx % xr, yi = pidx / xr;
            /* row: parent indices with the same y, in order; column: same x */
            int nrow = 0, ncol = 0;
            for (int j = 0; j < p.size; j++) {
                if (j / xr == yi) {
                    EXPECT(nrow < x.size && world(x, nrow) == world(p, j),
                           "parent (%d,%d,%d) xrange %d: row of %d, member %d wrong", p.start,
                           p.stride, p.size, xrange, pidx, nrow);
                    nrow++;
                }
                if (j % xr == xi) {
                    EXPECT(ncol < y.size && world(y, ncol) == world(p, j),
                           "parent (%d,%d,%d) xrange %d: column of %d, member %d wrong", p.start,
                           p.stride, p.size, xrange, pidx, ncol);
                    ncol++;
                }
            }
            EXPECT(nrow == x.size && ncol == y.size, "row/column sizes %d/%d, expected %d/%d",
                   x.size, y.size, nrow, ncol);
            EXPECT(world(x, xme) == world(p, pidx) && world(y, yme) == world(p, pidx),
                   "parent index %d is not itself in its row/column", pidx);
            in_x[pidx]++;
            in_y[pidx]++;
        }
        for (int i = 0; i < p.size; i++)
            EXPECT(in_x[i] == 1 && in_y[i] == 1, "parent index %d in %d rows, %d columns", i,
                   in_x[i], in_y[i]);
    }
}

int main(void) {
    for (int start = 0; start < 3; start++)
        for (int stride = 1; stride < 4; stride++)
            for (int size = 1; size <= 9; size++) {
                gshmemi_geom p = {start, stride, size};
                check_strided(p);
                check_2d(p);
                /* and a split of a split: the strided image of a strided team */
                gshmemi_geom t;
                int me;
                if (size >= 3 && gshmemi_geom_split_strided(p, 0, 1, 2, (size - 1) / 2, &t, &me)) {
                    check_strided(t);
                    check_2d(t);
                }
            }
    printf("team_geometry: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
