/* Proves teams (docs/collectives.md): GSHMEM_TEAM_WORLD and GSHMEM_TEAM_SHARED my_pe/n_pes
 * on the host and in kernels; split_strided (even PEs, odd PEs, every third, one PE, the
 * whole world, a split of SHARED; a size, start or stride beyond the parent fails with a
 * status and GSHMEM_TEAM_INVALID, not a crash); split_2d with xrange 2 and a non-divisor
 * xrange, of WORLD and of a sub-team; splits of splits; translate_pe between every pair of
 * these teams on host and device (non-members and out-of-range PEs -> -1); get_config round
 * trip; team_sync and barrier on sub-teams from kernels at thread, warp and block scope, 1000
 * rounds back to back, each proving the puts before it are visible after it; the on-stream
 * and host forms the same way; 3000 create/destroy cycles; 100 teams alive at once, each
 * synchronized from the host and from one kernel. */
#include <vector>

#include "common.h"

static int me, np;

/* a team as the test expects it: members are world PEs w[0..size) (empty: not created) */
struct expect_team {
    const char *name;
    gshmem_team_t t;      /* this PE's handle (GSHMEM_TEAM_INVALID if not a member) */
    std::vector<int> w;   /* world PEs of this PE's team, in team order */
};

static int index_of(const std::vector<int> &w, int pe) {
    for (size_t i = 0; i < w.size(); i++)
        if (w[i] == pe) return (int)i;
    return -1;
}

/* ---- device queries ------------------------------------------------------------------- */
/* out[0] = my_pe, out[1] = n_pes, out[2 + i] = translate(t, i - 1, WORLD) for i - 1 in
 * [-1, nmax], then out[2 + nmax + 2 + p] = translate(WORLD, p, t) for p in [0, np), then
 * translate(t, i, other) for i in [0, nmax). */
__global__ void query_kernel(gshmem_team_t t, gshmem_team_t other, int nmax, int npes, int *out) {
    out[0] = gshmem_team_my_pe(t);
    out[1] = gshmem_team_n_pes(t);
    int *o = out + 2;
    for (int i = -1; i <= nmax; i++) *o++ = gshmem_team_translate_pe(t, i, GSHMEM_TEAM_WORLD);
    for (int p = 0; p < npes; p++) *o++ = gshmem_team_translate_pe(GSHMEM_TEAM_WORLD, p, t);
    for (int i = 0; i < nmax; i++) *o++ = gshmem_team_translate_pe(t, i, other);
}

static int *g_out;   /* mapped */
static long *g_slots;                 /* symmetric [np] */
static unsigned long long *g_bad;     /* mapped */

/* Checks this PE's view of team e on the host and in a kernel against the expectation;
 * `other` (with its expectation) is a second team to translate into. */
static void check_team(const expect_team &e, const expect_team &other) {
    int my = index_of(e.w, me), n = (int)e.w.size();
    if (my < 0) {
        EXPECT(e.t == GSHMEM_TEAM_INVALID, "%s: PE %d is not a member but got handle %d", e.name, me, (int)e.t);
        return;
    }
    EXPECT(e.t != GSHMEM_TEAM_INVALID, "%s: PE %d is a member but got GSHMEM_TEAM_INVALID", e.name, me);
    if (e.t == GSHMEM_TEAM_INVALID) return;
    EXPECT(gshmem_team_my_pe(e.t) == my && gshmem_team_n_pes(e.t) == n, "%s (host): my_pe %d n_pes %d, expected %d %d",
           e.name, gshmem_team_my_pe(e.t), gshmem_team_n_pes(e.t), my, n);
    int nmax = np;
    std::vector<int> want;
    want.push_back(my);
    want.push_back(n);
    for (int i = -1; i <= nmax; i++) want.push_back(i >= 0 && i < n ? e.w[i] : -1);
    for (int p = 0; p < np; p++) want.push_back(index_of(e.w, p));
    /* into a team this PE is not in, the handle is GSHMEM_TEAM_INVALID: -1 */
    for (int i = 0; i < nmax; i++)
        want.push_back(i < n && other.t != GSHMEM_TEAM_INVALID ? index_of(other.w, e.w[i]) : -1);
    /* host */
    std::vector<int> host;
    host.push_back(gshmem_team_my_pe(e.t));
    host.push_back(gshmem_team_n_pes(e.t));
    for (int i = -1; i <= nmax; i++) host.push_back(gshmem_team_translate_pe(e.t, i, GSHMEM_TEAM_WORLD));
    for (int p = 0; p < np; p++) host.push_back(gshmem_team_translate_pe(GSHMEM_TEAM_WORLD, p, e.t));
    for (int i = 0; i < nmax; i++) host.push_back(gshmem_team_translate_pe(e.t, i, other.t));
    /* device */
    for (size_t k = 0; k < want.size(); k++) g_out[k] = -77;
    query_kernel<<<1, 1>>>(e.t, other.t, nmax, np, g_out);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    const char *part[] = {"my_pe", "n_pes", "translate to WORLD", "translate from WORLD", "translate to the other team"};
    for (int side = 0; side < 2; side++) {
        first_bad fb;
        for (size_t k = 0; k < want.size(); k++) {
            int got = side ? g_out[k] : host[k];
            if (got != want[k]) fb.note(k, (unsigned long long)(long long)want[k], (unsigned long long)(long long)got);
        }
        size_t k = fb.index;
        int pi = k == 0 ? 0 : k == 1 ? 1 : k < (size_t)(2 + nmax + 2) ? 2 : k < (size_t)(2 + nmax + 2 + np) ? 3 : 4;
        long arg = pi == 2 ? (long)k - 3 : pi == 3 ? (long)k - (2 + nmax + 2) : (long)k - (2 + nmax + 2 + np);
        EXPECT(fb.count == 0, "%s (%s), other team %s: %zu wrong answers, first %s(%ld): expected %lld, got %lld",
               e.name, side ? "device" : "host", other.name, fb.count, part[pi], pi < 2 ? 0L : arg,
               (long long)fb.expected, (long long)fb.actual);
    }
}

/* gshmem_team_ptr(t, p, j) is gshmem_ptr(p, world PE of j) for members, NULL past the team,
 * on the host and in a kernel. */
__global__ void team_ptr_kernel(gshmem_team_t t, const long *p, int n, int *out) {
    for (int j = -1; j <= n; j++) {
        int w = gshmem_team_translate_pe(t, j, GSHMEM_TEAM_WORLD);
        void *want = w < 0 ? NULL : gshmem_ptr(p, w);
        out[j + 1] = gshmem_team_ptr(t, p, j) == want && (w < 0 || want != NULL);
    }
}
static void check_team_ptr(const expect_team &e, const long *p) {
    if (e.t == GSHMEM_TEAM_INVALID) return;
    int n = (int)e.w.size(), bad = 0;
    for (int j = -1; j <= n; j++) {
        void *want = j >= 0 && j < n ? gshmem_ptr(p, e.w[j]) : NULL;
        bad += gshmem_team_ptr(e.t, p, j) != want || (j >= 0 && j < n && want == NULL);
    }
    team_ptr_kernel<<<1, 1>>>(e.t, p, n, g_out);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    int dbad = 0;
    for (int j = 0; j <= n + 1; j++) dbad += g_out[j] != 1;
    EXPECT(bad == 0 && dbad == 0, "%s: gshmem_team_ptr wrong for %d team PEs on the host, %d in a kernel",
           e.name, bad, dbad);
}

/* ---- WORLD, SHARED, INVALID ------------------------------------------------------------- */
__global__ void predef_kernel(int *out) {
    out[0] = gshmem_team_my_pe(GSHMEM_TEAM_WORLD);
    out[1] = gshmem_team_n_pes(GSHMEM_TEAM_WORLD);
    out[2] = gshmem_team_my_pe(GSHMEM_TEAM_SHARED);
    out[3] = gshmem_team_n_pes(GSHMEM_TEAM_SHARED);
    out[4] = gshmem_team_my_pe(GSHMEM_TEAM_INVALID);
    out[5] = gshmem_team_n_pes(GSHMEM_TEAM_INVALID);
    out[6] = gshmem_team_translate_pe(GSHMEM_TEAM_SHARED, gshmem_team_my_pe(GSHMEM_TEAM_SHARED), GSHMEM_TEAM_WORLD);
    out[7] = gshmem_team_translate_pe(GSHMEM_TEAM_WORLD, 0, GSHMEM_TEAM_INVALID);
}

static expect_team world_e, shared_e;

static void predefined(void) {
    world_e.name = "GSHMEM_TEAM_WORLD";
    world_e.t = GSHMEM_TEAM_WORLD;
    for (int p = 0; p < np; p++) world_e.w.push_back(p);
    shared_e.name = "GSHMEM_TEAM_SHARED";
    shared_e.t = GSHMEM_TEAM_SHARED;
    int ns = gshmem_team_n_pes(GSHMEM_TEAM_SHARED);
    EXPECT(ns >= 1 && ns <= np, "GSHMEM_TEAM_SHARED: n_pes %d with %d PEs", ns, np);
    for (int i = 0; i < ns && ns <= np; i++) shared_e.w.push_back(gshmem_team_translate_pe(GSHMEM_TEAM_SHARED, i, GSHMEM_TEAM_WORLD));
    EXPECT(index_of(shared_e.w, me) >= 0, "GSHMEM_TEAM_SHARED does not contain this PE");
    /* one node (gshmrun): every PE shares it */
    if (!getenv("GSHMEM_TEST_MULTI_NODE"))
        EXPECT(ns == np, "GSHMEM_TEAM_SHARED has %d PEs; on one node all %d are expected", ns, np);
    EXPECT(gshmem_team_my_pe(GSHMEM_TEAM_WORLD) == me && gshmem_team_n_pes(GSHMEM_TEAM_WORLD) == np,
           "WORLD (host): my_pe %d n_pes %d, expected %d %d", gshmem_team_my_pe(GSHMEM_TEAM_WORLD),
           gshmem_team_n_pes(GSHMEM_TEAM_WORLD), me, np);
    EXPECT(gshmem_team_my_pe(GSHMEM_TEAM_INVALID) == -1 && gshmem_team_n_pes(GSHMEM_TEAM_INVALID) == -1,
           "GSHMEM_TEAM_INVALID (host): my_pe %d n_pes %d, expected -1 -1", gshmem_team_my_pe(GSHMEM_TEAM_INVALID),
           gshmem_team_n_pes(GSHMEM_TEAM_INVALID));
    EXPECT(gshmem_team_translate_pe(GSHMEM_TEAM_WORLD, 0, GSHMEM_TEAM_INVALID) == -1,
           "translate_pe(WORLD, 0, GSHMEM_TEAM_INVALID) (host) = %d, expected -1",
           gshmem_team_translate_pe(GSHMEM_TEAM_WORLD, 0, GSHMEM_TEAM_INVALID));
    predef_kernel<<<1, 1>>>(g_out);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    int want[8] = {me, np, index_of(shared_e.w, me), ns, -1, -1, me, -1};
    static const char *what[8] = {"my_pe(WORLD)", "n_pes(WORLD)", "my_pe(SHARED)", "n_pes(SHARED)", "my_pe(INVALID)",
                                  "n_pes(INVALID)", "translate(SHARED, my_pe, WORLD)", "translate(WORLD, 0, INVALID)"};
    for (int i = 0; i < 8; i++) EXPECT(g_out[i] == want[i], "device %s = %d, expected %d", what[i], g_out[i], want[i]);
    check_team(world_e, shared_e);
    check_team(shared_e, world_e);
}

/* ---- splits -------------------------------------------------------------------------------- */
/* split_strided of `parent` (whose members are pw) with (start, stride, size); every member
 * of the parent calls. */
static expect_team strided(const char *name, const expect_team &parent, int start, int stride, int size,
                           const gshmem_team_config_t *cfg = NULL, long mask = 0) {
    expect_team e;
    e.name = name;
    e.t = GSHMEM_TEAM_INVALID;
    for (int i = 0; i < size; i++) e.w.push_back(parent.w[start + i * stride]);
    if (index_of(parent.w, me) < 0) return e;   /* not in the parent: does not take part */
    if (index_of(e.w, me) < 0) e.w.clear();
    int rc = gshmem_team_split_strided(parent.t, start, stride, size, cfg, mask, &e.t);
    EXPECT(rc == 0, "%s: split_strided(%s, %d, %d, %d) returned %d", name, parent.name, start, stride, size, rc);
    if (e.w.empty()) {
        /* not a member: keep the full list for translations done by members elsewhere */
        for (int i = 0; i < size; i++) e.w.push_back(parent.w[start + i * stride]);
        EXPECT(e.t == GSHMEM_TEAM_INVALID, "%s: PE %d is not a member but got handle %d", name, me, (int)e.t);
    }
    return e;
}

static void split_fails(const expect_team &parent, int start, int stride, int size, const char *why) {
    if (index_of(parent.w, me) < 0) return;
    gshmem_team_t t = 12345;
    int rc = gshmem_team_split_strided(parent.t, start, stride, size, NULL, 0, &t);
    EXPECT(rc != 0 && t == GSHMEM_TEAM_INVALID,
           "split_strided(%s, %d, %d, %d) (%s) returned %d and handle %d; expected an error status and GSHMEM_TEAM_INVALID",
           parent.name, start, stride, size, why, rc, (int)t);
    if (rc == 0 && t != GSHMEM_TEAM_INVALID) gshmem_team_destroy(t);
}

/* split_2d of parent with xrange: x team = parent members of my row, y team = of my column */
static void split2d(const char *name, const expect_team &parent, int xr, expect_team *x, expect_team *y) {
    static char names[16][96];
    static int k;
    snprintf(names[k % 16], 96, "%s x axis (xrange %d)", name, xr);
    x->name = names[k++ % 16];
    snprintf(names[k % 16], 96, "%s y axis (xrange %d)", name, xr);
    y->name = names[k++ % 16];
    x->t = y->t = GSHMEM_TEAM_INVALID;
    x->w.clear();
    y->w.clear();
    int pi = index_of(parent.w, me), pn = (int)parent.w.size();
    if (pi < 0) return;
    int row = pi / xr, col = pi % xr;
    for (int i = row * xr; i < row * xr + xr && i < pn; i++) x->w.push_back(parent.w[i]);
    for (int i = col; i < pn; i += xr) y->w.push_back(parent.w[i]);
    int rc = gshmem_team_split_2d(parent.t, xr, NULL, 0, &x->t, NULL, 0, &y->t);
    EXPECT(rc == 0, "split_2d(%s, %d) returned %d", parent.name, xr, rc);
}

static std::vector<expect_team> g_teams;   /* every team made by splits(), for the sync tests */

static void splits(void) {
    expect_team even = strided("even PEs (WORLD 0,2)", world_e, 0, 2, (np + 1) / 2);
    expect_team odd = strided("odd PEs (WORLD 1,2)", world_e, 1, 2, np / 2);
    expect_team third = strided("every third PE (WORLD 0,3)", world_e, 0, 3, (np + 2) / 3);
    expect_team last = strided("last PE alone (WORLD n-1,1,1)", world_e, np - 1, 1, 1);
    expect_team all = strided("whole world (WORLD 0,1,n)", world_e, 0, 1, np);
    expect_team tail = strided("PEs 1..n-1 (WORLD 1,1,n-1)", world_e, 1, 1, np - 1);
    expect_team sh = strided("all of SHARED (SHARED 0,1,n)", shared_e, 0, 1, (int)shared_e.w.size());
    /* splits of splits */
    expect_team even2 = strided("even PEs of the even PEs (even 0,2)", even, 0, 2, ((int)even.w.size() + 1) / 2);
    int no = (int)odd.w.size();
    expect_team oddtail = no > 1 ? strided("odd PEs from 3 on (odd 1,1)", odd, 1, 1, no - 1)
                                 : strided("odd PE alone (odd 0,1,1)", odd, 0, 1, 1);
    expect_team x2, y2, x3, y3, ex, ey;
    split2d("WORLD", world_e, 2, &x2, &y2);
    int nondiv = 1;   /* the smallest non-divisor of np below np (none for 2 PEs: xrange 1) */
    for (int d = np - 1; d >= 2; d--)
        if (np % d) nondiv = d;
    split2d("WORLD", world_e, nondiv, &x3, &y3);
    split2d("even PEs", even, 2, &ex, &ey);
    expect_team list[] = {even, odd, third, last, all, tail, sh, even2, oddtail, x2, y2, x3, y3, ex, ey};
    int nl = sizeof list / sizeof list[0];
    for (int i = 0; i < nl; i++) {
        /* every PE keeps the same list (the sync tests take the same steps on every PE, with a
         * barrier_all between teams); non-members, and PEs outside a 2-D split's parent (which
         * cannot know its rows: empty w), skip the checks and the syncs */
        g_teams.push_back(list[i]);
        if (list[i].w.empty()) continue;
        /* translate into WORLD's complement-ish partners: the next team of the list */
        check_team(list[i], world_e);
        check_team(list[i], list[(i + 1) % nl].w.empty() ? even : list[(i + 1) % nl]);
        check_team_ptr(list[i], g_slots);
    }
    /* failing splits: every PE of the parent gets an error status and no team */
    split_fails(world_e, 0, 1, np + 1, "size beyond the parent");
    split_fails(world_e, 1, 1, np, "start + size beyond the parent");
    split_fails(world_e, 0, np, 2, "stride beyond the parent");
    split_fails(world_e, np, 1, 1, "start beyond the parent");
    split_fails(world_e, -1, 1, 1, "negative start");
    split_fails(world_e, 0, 1, -1, "negative size");
    if (even.t != GSHMEM_TEAM_INVALID) split_fails(even, 0, 1, (int)even.w.size() + 1, "size beyond a sub-team parent");
    gshmem_barrier_all();
}

/* ---- get_config ------------------------------------------------------------------------------ */
static void config(void) {
    gshmem_team_config_t c;
    c.num_contexts = 5;
    gshmem_team_t t = GSHMEM_TEAM_INVALID;
    int rc = gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, np, &c, GSHMEM_TEAM_NUM_CONTEXTS, &t);
    EXPECT(rc == 0 && t != GSHMEM_TEAM_INVALID, "split_strided with a config: returned %d, handle %d", rc, (int)t);
    gshmem_team_config_t got;
    got.num_contexts = -1;
    rc = gshmem_team_get_config(t, GSHMEM_TEAM_NUM_CONTEXTS, &got);
    EXPECT(rc == 0 && got.num_contexts == 5, "get_config(NUM_CONTEXTS) of a team made with num_contexts 5: returned %d, "
           "num_contexts %d", rc, got.num_contexts);
    gshmem_team_t x = GSHMEM_TEAM_INVALID, y = GSHMEM_TEAM_INVALID;
    gshmem_team_config_t cx, cy;
    cx.num_contexts = 3;
    cy.num_contexts = 9;
    rc = gshmem_team_split_2d(t, 2, &cx, GSHMEM_TEAM_NUM_CONTEXTS, &x, &cy, GSHMEM_TEAM_NUM_CONTEXTS, &y);
    EXPECT(rc == 0, "split_2d with configs returned %d", rc);
    gshmem_team_config_t gx, gy;
    gx.num_contexts = gy.num_contexts = -1;
    int rx = gshmem_team_get_config(x, GSHMEM_TEAM_NUM_CONTEXTS, &gx), ry = gshmem_team_get_config(y, GSHMEM_TEAM_NUM_CONTEXTS, &gy);
    EXPECT(rx == 0 && ry == 0 && gx.num_contexts == 3 && gy.num_contexts == 9,
           "get_config of split_2d teams made with num_contexts 3 / 9: returned %d/%d, num_contexts %d/%d", rx, ry,
           gx.num_contexts, gy.num_contexts);
    /* without a config (mask 0) the default is 0 */
    gshmem_team_t d = GSHMEM_TEAM_INVALID;
    rc = gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, np, &c, 0, &d);
    got.num_contexts = -1;
    int rd = gshmem_team_get_config(d, GSHMEM_TEAM_NUM_CONTEXTS, &got);
    EXPECT(rc == 0 && rd == 0 && got.num_contexts == 0,
           "a team split with config mask 0 reports num_contexts %d (get_config returned %d), expected 0", got.num_contexts, rd);
    got.num_contexts = -1;
    rd = gshmem_team_get_config(GSHMEM_TEAM_WORLD, GSHMEM_TEAM_NUM_CONTEXTS, &got);
    EXPECT(rd == 0 && got.num_contexts >= 0, "get_config(WORLD) returned %d, num_contexts %d", rd, got.num_contexts);
    rd = gshmem_team_get_config(GSHMEM_TEAM_INVALID, GSHMEM_TEAM_NUM_CONTEXTS, &got);
    EXPECT(rd != 0, "get_config(GSHMEM_TEAM_INVALID) returned %d, expected an error status", rd);
    gshmem_team_destroy(d);
    gshmem_team_destroy(x);
    gshmem_team_destroy(y);
    gshmem_team_destroy(t);
    gshmem_barrier_all();
}

/* ---- team_sync / barrier rounds --------------------------------------------------------------- */
#define ROUNDS 1000
enum { SC_THREAD, SC_WARP, SC_BLOCK };
static const char *scope_name[] = {"thread", "warp", "block"};

template <int S, bool BAR> __device__ void tsync(gshmem_team_t t) {
    if (S == SC_THREAD) {
        if (BAR) gshmem_barrier(t); else gshmem_team_sync(t);
    } else if (S == SC_WARP) {
        if (BAR) gshmemx_barrier_warp(t); else gshmemx_team_sync_warp(t);
    } else {
        if (BAR) gshmemx_barrier_block(t); else gshmemx_team_sync_block(t);
    }
}

/* Round r: put r into slot [my team index] of every member, sync (team_sync after an
 * explicit quiet, or barrier, which includes it), every slot of the team must be r; sync
 * again so nobody writes round r+1 before everyone checked round r. */
template <int S, bool BAR>
__global__ void sync_rounds(gshmem_team_t t, long *slots, int rounds, unsigned long long *bad) {
    int my = gshmem_team_my_pe(t), n = gshmem_team_n_pes(t);
    for (long r = 1; r <= rounds; r++) {
        for (int j = threadIdx.x; j < n; j += blockDim.x)
            gshmem_long_p(slots + my, r, gshmem_team_translate_pe(t, j, GSHMEM_TEAM_WORLD));
        if (!BAR) {   /* team_sync does not complete puts: quiet first */
            if (S == SC_THREAD) gshmem_quiet();
            else if (S == SC_WARP) gshmemx_quiet_warp();
            else gshmemx_quiet_block();
        }
        tsync<S, BAR>(t);
        for (int j = threadIdx.x; j < n; j += blockDim.x)
            if (((volatile long *)slots)[j] != r) atomicAdd(bad, 1ull);
        tsync<S, BAR>(t);
    }
}


static void reset_slots(void) {
    CK(cudaMemset(g_slots, 0, np * sizeof(long)));
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();
    *g_bad = 0;
}

static void kernel_syncs(void) {
    for (size_t k = 0; k < g_teams.size() + 1; k++) {
        const expect_team &e = k ? g_teams[k - 1] : world_e;
        for (int s = 0; s < 3; s++)
            for (int bar = 0; bar < 2; bar++) {
                reset_slots();
                if (e.t != GSHMEM_TEAM_INVALID) {
                    int threads = s == SC_BLOCK ? 256 : s == SC_WARP ? 32 : 1;   /* the group is the block */
                    if (s == SC_THREAD && bar) sync_rounds<SC_THREAD, true><<<1, threads>>>(e.t, g_slots, ROUNDS, g_bad);
                    if (s == SC_THREAD && !bar) sync_rounds<SC_THREAD, false><<<1, threads>>>(e.t, g_slots, ROUNDS, g_bad);
                    if (s == SC_WARP && bar) sync_rounds<SC_WARP, true><<<1, threads>>>(e.t, g_slots, ROUNDS, g_bad);
                    if (s == SC_WARP && !bar) sync_rounds<SC_WARP, false><<<1, threads>>>(e.t, g_slots, ROUNDS, g_bad);
                    if (s == SC_BLOCK && bar) sync_rounds<SC_BLOCK, true><<<1, threads>>>(e.t, g_slots, ROUNDS, g_bad);
                    if (s == SC_BLOCK && !bar) sync_rounds<SC_BLOCK, false><<<1, threads>>>(e.t, g_slots, ROUNDS, g_bad);
                    CK(cudaGetLastError());
                    CK(cudaDeviceSynchronize());
                    EXPECT(*g_bad == 0, "%s at %s scope on team %s (%zu PEs): %llu stale slots seen in %d rounds",
                           bar ? "barrier" : "quiet + team_sync", scope_name[s], e.name, e.w.size(), *g_bad, ROUNDS);
                }
            }
    }
    gshmem_barrier_all();
}

/* on-stream: a kernel puts, barrier/team_sync_on_stream, a kernel checks, sync again */
__global__ void put_round(gshmem_team_t t, long *slots, long r) {
    int my = gshmem_team_my_pe(t), n = gshmem_team_n_pes(t);
    for (int j = threadIdx.x; j < n; j += blockDim.x)
        gshmem_long_p(slots + my, r, gshmem_team_translate_pe(t, j, GSHMEM_TEAM_WORLD));
    gshmem_quiet();
}
__global__ void check_round(gshmem_team_t t, const long *slots, long r, unsigned long long *bad) {
    int n = gshmem_team_n_pes(t);
    for (int j = threadIdx.x; j < n; j += blockDim.x)
        if (((volatile const long *)slots)[j] != r) atomicAdd(bad, 1ull);
}

static void stream_and_host_syncs(void) {
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    const int R = 200;
    for (size_t k = 0; k < g_teams.size() + 1; k++) {
        const expect_team &e = k ? g_teams[k - 1] : world_e;
        bool world = k == 0;
        /* on stream */
        reset_slots();
        if (e.t != GSHMEM_TEAM_INVALID) {
            int bad_rc = 0;
            for (long r = 1; r <= R; r++) {
                put_round<<<1, 64, 0, st>>>(e.t, g_slots, r);
                int mode = (int)(r % 3);
                bad_rc |= world && mode == 2 ? (gshmemx_barrier_all_on_stream(st), 0)
                        : mode ? gshmemx_barrier_on_stream(e.t, st) : gshmemx_team_sync_on_stream(e.t, st);
                check_round<<<1, 64, 0, st>>>(e.t, g_slots, r, g_bad);
                bad_rc |= world && mode == 1 ? gshmemx_sync_all_on_stream(st) : gshmemx_team_sync_on_stream(e.t, st);
            }
            CK(cudaGetLastError());
            CK(cudaStreamSynchronize(st));
            EXPECT(*g_bad == 0 && bad_rc == 0, "on-stream barrier/team_sync on team %s: %llu stale slots in %d rounds, "
                   "calls returned %d", e.name, *g_bad, R, bad_rc);
        }
        /* host blocking */
        reset_slots();
        if (e.t != GSHMEM_TEAM_INVALID) {
            int my = gshmem_team_my_pe(e.t), n = gshmem_team_n_pes(e.t), bad_rc = 0;
            size_t stale = 0;
            std::vector<long> got(n);
            for (long r = 1; r <= R / 4; r++) {
                for (int j = 0; j < n; j++) gshmem_long_p(g_slots + my, r, gshmem_team_translate_pe(e.t, j, GSHMEM_TEAM_WORLD));
                if (r & 1) bad_rc |= gshmem_barrier(e.t);
                else {
                    gshmem_quiet();
                    bad_rc |= gshmem_team_sync(e.t);
                }
                CK(cudaMemcpy(got.data(), g_slots, n * sizeof(long), cudaMemcpyDeviceToHost));
                for (int j = 0; j < n; j++) stale += got[j] != r;
                if (world && (r % 4 == 0)) gshmem_sync_all();
                else bad_rc |= gshmem_team_sync(e.t);
            }
            EXPECT(stale == 0 && bad_rc == 0, "host gshmem_barrier/gshmem_team_sync on team %s: %zu stale slots in %d rounds, "
                   "calls returned %d", e.name, stale, R / 4, bad_rc);
        }
    }
    cudaStreamDestroy(st);
    gshmem_barrier_all();
}

/* ---- lifetimes ------------------------------------------------------------------------------ */
__global__ void alive_kernel(const gshmem_team_t *teams, int nt, int *my_pes, int rounds) {
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < nt; i++) {
            if (teams[i] == GSHMEM_TEAM_INVALID) continue;
            gshmemx_team_sync_block(teams[i]);
            if (threadIdx.x == 0 && r == 0) my_pes[i] = gshmem_team_my_pe(teams[i]);
        }
}

/* team i of a batch: (start, stride, size) of WORLD, members by formula */
static void batch_shape(int i, int *start, int *stride, int *size) {
    switch (i % 5) {
    case 0: *start = 0; *stride = 1; *size = np; break;
    case 1: *start = 0; *stride = 2; *size = (np + 1) / 2; break;
    case 2: *start = 1; *stride = 2; *size = np / 2; break;
    case 3: *start = i % np; *stride = 1; *size = 1; break;
    default: *start = 1; *stride = 1; *size = np - 1; break;
    }
}

static void lifetimes(void) {
    /* create/destroy cycles: a small hard limit or a leaked slot runs out long before 3000 */
    const int CYCLES = 3000;
    int fails = 0, bad_handle = 0, first_fail = -1;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int c = 0; c < CYCLES; c++) {
        int start, stride, size;
        batch_shape(c, &start, &stride, &size);
        bool member = me >= start && (me - start) % stride == 0 && (me - start) / stride < size;
        if (c % 7 == 6) {
            gshmem_team_t x = GSHMEM_TEAM_INVALID, y = GSHMEM_TEAM_INVALID;
            int rc = gshmem_team_split_2d(GSHMEM_TEAM_WORLD, 1 + c % 2, NULL, 0, &x, NULL, 0, &y);
            if (rc || x == GSHMEM_TEAM_INVALID || y == GSHMEM_TEAM_INVALID) { if (!fails++) first_fail = c; }
            if (c % 100 == 6 && x != GSHMEM_TEAM_INVALID) fails += gshmem_team_sync(x) != 0;
            if (x != GSHMEM_TEAM_INVALID) gshmem_team_destroy(x);
            if (y != GSHMEM_TEAM_INVALID) gshmem_team_destroy(y);
            continue;
        }
        gshmem_team_t t = GSHMEM_TEAM_INVALID;
        int rc = gshmem_team_split_strided(GSHMEM_TEAM_WORLD, start, stride, size, NULL, 0, &t);
        if (rc || (t != GSHMEM_TEAM_INVALID) != member) { if (!fails++) first_fail = c; }
        if (t != GSHMEM_TEAM_INVALID) {
            if (t < 0 || t >= 4096) bad_handle++;
            if (c % 100 == 0) {
                /* it works: a host sync, and my_pe in a kernel */
                fails += gshmem_team_sync(t) != 0;
                query_kernel<<<1, 1>>>(t, GSHMEM_TEAM_WORLD, 0, 0, g_out);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
                if (g_out[0] != (me - start) / stride || g_out[1] != size) { if (!fails++) first_fail = c; }
            }
            gshmem_team_destroy(t);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    EXPECT(fails == 0 && bad_handle == 0, "%d create/destroy cycles: %d failed (first at cycle %d), %d odd handles",
           CYCLES, fails, first_fail, bad_handle);
    if (me == 0)
        printf("%d team create/destroy cycles took %.1f ms (%.1f us per split)\n", CYCLES,
               (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6,
               ((b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3) / (CYCLES + CYCLES / 7));
    gshmem_barrier_all();

    /* many alive at once, used together, destroyed in a scrambled order, then again */
    const int ALIVE = 100;
    gshmem_team_t *teams;
    int *my_pes;
    CK(cudaHostAlloc((void **)&teams, ALIVE * sizeof *teams, cudaHostAllocMapped));
    CK(cudaHostAlloc((void **)&my_pes, ALIVE * sizeof *my_pes, cudaHostAllocMapped));
    for (int pass = 0; pass < 2; pass++) {
        int bad = 0;
        for (int i = 0; i < ALIVE; i++) {
            int start, stride, size;
            batch_shape(i + pass, &start, &stride, &size);
            teams[i] = GSHMEM_TEAM_INVALID;
            int rc = gshmem_team_split_strided(GSHMEM_TEAM_WORLD, start, stride, size, NULL, 0, &teams[i]);
            bool member = me >= start && (me - start) % stride == 0 && (me - start) / stride < size;
            if (rc || (teams[i] != GSHMEM_TEAM_INVALID) != member) bad++;
            for (int j = 0; j < i; j++)
                if (teams[i] != GSHMEM_TEAM_INVALID && teams[j] == teams[i]) bad++;
        }
        EXPECT(bad == 0, "pass %d: %d teams alive at once: %d failed or duplicate handles", pass, ALIVE, bad);
        int rc = 0;
        for (int i = 0; i < ALIVE; i++)
            if (teams[i] != GSHMEM_TEAM_INVALID) rc |= gshmem_team_sync(teams[i]);
        EXPECT(rc == 0, "pass %d: host team_sync over %d live teams returned %d", pass, ALIVE, rc);
        for (int i = 0; i < ALIVE; i++) my_pes[i] = -5;
        alive_kernel<<<1, 128>>>(teams, ALIVE, my_pes, 10);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        int wrong = 0;
        for (int i = 0; i < ALIVE; i++) {
            int start, stride, size;
            batch_shape(i + pass, &start, &stride, &size);
            if (teams[i] != GSHMEM_TEAM_INVALID && my_pes[i] != (me - start) / stride) wrong++;
        }
        EXPECT(wrong == 0, "pass %d: one kernel syncing %d live teams in turn (10 rounds): %d wrong my_pe", pass, ALIVE, wrong);
        gshmem_barrier_all();
        /* destroy in a scrambled order (same on every PE) */
        for (int k = 0; k < ALIVE; k++) {
            int i = (k * 37 + pass) % ALIVE;
            if (teams[i] != GSHMEM_TEAM_INVALID) gshmem_team_destroy(teams[i]);
        }
        gshmem_barrier_all();
    }
    cudaFreeHost(teams);
    cudaFreeHost(my_pes);
}

int main(void) {
    gshmem_init();
    me = gshmem_my_pe();
    np = gshmem_n_pes();
    CK(cudaHostAlloc((void **)&g_out, 4096 * sizeof(int), cudaHostAllocMapped));
    CK(cudaHostAlloc((void **)&g_bad, sizeof *g_bad, cudaHostAllocMapped));
    g_slots = (long *)gshmem_calloc(np, sizeof(long));
    if (!g_slots) { fprintf(stderr, "allocation failed\n"); return 2; }

#define STAGE(f)                                                                             \
    do {                                                                                     \
        if (getenv("TEST_TEAM_PROGRESS") && me == 0) { printf("stage " #f "\n"); fflush(stdout); } \
        f();                                                                                 \
    } while (0)
    STAGE(predefined);
    STAGE(splits);
    STAGE(config);
    STAGE(kernel_syncs);
    STAGE(stream_and_host_syncs);
    for (auto &e : g_teams) gshmem_team_destroy(e.t);
    g_teams.clear();
    gshmem_barrier_all();
    STAGE(lifetimes);

    gshmem_free(g_slots);
    cudaFreeHost(g_out);
    cudaFreeHost(g_bad);
    int rc = summary("test_team");
    gshmem_finalize();
    return rc;
}
