/* maxloc over double2 (NVSHMEM's nvshmemx_double2_maxloc_reduce_block): x is a value, y its
 * location; every member's dest receives the source with the largest x, and of those with
 * equal x the one with the smallest y, so all members agree whatever the order of arrival.
 * One element per call (nreduce 1), block scope. A round tells every member that the sources
 * are ready, each block reads all members' sources (load/store or the remote g), and a second
 * round keeps every source unchanged until all members have read it. */
#ifndef GSHMEM_DEVICE_MAXLOC_H
#define GSHMEM_DEVICE_MAXLOC_H

#include "team.h"

/* a beats b: larger value, or the same value at a smaller location */
GSHMEMI_DEV bool gshmemi_maxloc_beats(double2 a, double2 b) {
    return a.x > b.x || (a.x == b.x && a.y < b.y);
}

/* Lane 0 gets the warp's best; a block's last warp may be partial (lanes 0 .. n-1), and a
 * lane reads only lanes that exist. */
GSHMEMI_DEV double2 gshmemi_maxloc_warp(double2 v) {
    unsigned mask = __activemask(), n = (unsigned)__popc(mask), lane = threadIdx.x & 31u;
    for (unsigned o = 16; o > 0; o >>= 1) {
        double2 u;
        u.x = __shfl_down_sync(mask, v.x, o);
        u.y = __shfl_down_sync(mask, v.y, o);
        if (lane + o < n && gshmemi_maxloc_beats(u, v)) v = u;
    }
    return v;
}

GSHMEMI_DEV int gshmemx_double2_maxloc_reduce_block(int team, double2 *dest, const double2 *source,
                                                    size_t nreduce) {
    const char *call = "gshmemx_double2_maxloc_reduce_block";
    const gshmemi_team *t = gshmemi_team_member(team, call);
    if (nreduce != 1)
        GSHMEMI_DEVICE_FAIL("%s: nreduce %llu: maxloc reduces one double2 per call; pass 1", call,
                            (unsigned long long)nreduce);
    __shared__ double2 warps[32];
    gshmemi_team_sync_t<gshmemi_scope_block>(t, call);
    double2 best = make_double2(-__longlong_as_double(0x7ff0000000000000ll),
                                __longlong_as_double(0x7ff0000000000000ll));   /* -inf at +inf */
    for (int j = (int)threadIdx.x; j < t->size; j += (int)blockDim.x) {
        int pe = gshmemi_team_pe(t, j);
        double2 v;
        v.x = gshmemi_rma_g(&source->x, pe, call);
        v.y = gshmemi_rma_g(&source->y, pe, call);
        if (gshmemi_maxloc_beats(v, best)) best = v;
    }
    best = gshmemi_maxloc_warp(best);
    unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    if (lane == 0) warps[warp] = best;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (unsigned w = 1; w < (blockDim.x + 31u) / 32u; w++)
            if (gshmemi_maxloc_beats(warps[w], best)) best = warps[w];
        *dest = best;
    }
    gshmemi_team_sync_t<gshmemi_scope_block>(t, call);
    return 0;
}

#endif
