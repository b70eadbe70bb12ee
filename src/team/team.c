/* Teams: GSHMEM_TEAM_WORLD, GSHMEM_TEAM_SHARED, GSHMEMX_TEAM_NODE,
 * GSHMEMX_TEAM_SAME_MYPE_NODE, split_strided, split_2d, translate, get_config, destroy. A team handle is the index of its slot in the team pool; the pool is
 * one symmetric allocation of GSHMEM_TEAMS_MAX slots of flags (layout in
 * gshmem/device/state.h), made at init, so creating a team allocates nothing collectively.
 *
 * Choosing a slot: each PE keeps a symmetric bitmap of the slots its teams use. A split
 * (collective over the parent team) syncs the parent, ORs the bitmaps of every parent
 * member, syncs again, and takes the lowest slot free on all of them. Disjoint teams may
 * share a slot: a slot's flags on a PE are only ever written by members of that PE's team in
 * that slot. The new members zero their slot and the parent syncs a third time before anyone
 * signals in it.
 *
 * Teams whose members span nodes (some member reached only through a remote transport) take
 * the cross-node collectives (gshmem/device/coll/xnode.h); each member gets a landing buffer
 * for data read from other nodes: device memory of its own (nobody else addresses it, so it
 * need not be symmetric and is made without a collective), GSHMEM_COLL_XNODE_BYTES. */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "cuda_util.h"
#include "entry.h"
#include "state.h"
#include "team.h"
#include "gshmem.h"
#include "placement.h"
#include "gshmem/device/state.h"
#include "geometry.h"
#include "plan.h"

typedef struct host_team {
    gshmemi_team d;                /* the device entry, as published */
    int parent;                    /* -1 for the predefined teams */
    gshmem_team_config_t cfg;
    long cfg_mask;
    int32_t *h_pes, *d_pes;        /* member list (TEAM_SHARED on a non-contiguous node) */
    gshmemi_local_mem xtmp;        /* landing buffer (teams across nodes) */
    const char *made_by;
} host_team;

static struct {
    host_team *tab;                /* [teams_max] */
    gshmemi_team *d_tab;           /* device copy */
    uint64_t *pool;                /* symmetric: teams_max slots of slot_words */
    size_t slot_words;
    uint64_t *used;                /* symmetric bitmap: slots my teams use */
    uint64_t *used_h;              /* host mirror of my bitmap */
    int words;                     /* bitmap words */
} T;

/* WORLD, SHARED, NODE, SAME_MYPE_NODE: made at init, never destroyed */
#define PREDEFINED 4

#define C_ GSHMEMI_MAX_CHANNELS

static int team_pe(const host_team *t, int i) {
    return t->h_pes ? t->h_pes[i] : t->d.start + i * t->d.stride;
}

static gshmemi_status sync_stream(gshmemi_state *s, const char *call) {
    int err = (int)cudaStreamSynchronize((cudaStream_t)s->stream);
    if (err) gshmemi_error("%s: a team operation failed on the GPU", call);
    return gshmemi_cuda_check(err, "cudaStreamSynchronize", __FILE__, __LINE__);
}

/* Publishes slot `slot`'s entry to the device table. */
static gshmemi_status publish(gshmemi_state *s, int slot) {
    GSHMEMI_CUDA(cudaMemcpyAsync(T.d_tab + slot, &T.tab[slot].d, sizeof(gshmemi_team),
                                 cudaMemcpyHostToDevice, (cudaStream_t)s->stream));
    return GSHMEM_SUCCESS;
}

static gshmemi_status set_used(gshmemi_state *s, int slot, bool on) {
    uint64_t bit = 1ull << (slot & 63);
    if (on) T.used_h[slot >> 6] |= bit;
    else T.used_h[slot >> 6] &= ~bit;
    GSHMEMI_CUDA(cudaMemcpyAsync(T.used + (slot >> 6), T.used_h + (slot >> 6), sizeof(uint64_t),
                                 cudaMemcpyHostToDevice, (cudaStream_t)s->stream));
    return GSHMEM_SUCCESS;
}

/* The landing buffer of a team that spans nodes. */
static gshmemi_status take_xtmp(gshmemi_state *s, host_team *t, const char *call) {
    /* at least one 16-byte slot per member; the chunks are what was asked for (the
       allocation rounds up to the VMM granularity), so a small setting makes small chunks */
    uint64_t want = gshmemi_cfg.COLL_XNODE_BYTES / 16 * 16, least = 16 * (uint64_t)t->d.size;
    if (want < least) want = least;
    GSHMEMI_CHECK(gshmemi_local_mem_alloc(s, want, &t->xtmp, call));
    t->d.xtmp = t->xtmp.ptr;
    t->d.xtmp_bytes = want;
    return GSHMEM_SUCCESS;
}

/* Members per node of a node-blocked team: member j on the node of member j / L * L, every
 * node with L members, L >= 2 and two nodes at least; else 0 (and with GSHMEM_COLL_XNODE_HIER=0).
 * From the bootstrap's node map, so every member computes the same (coll/xnode.h, rule.h). */
static int node_blocked(const gshmemi_state *s, const host_team *t) {
    const int *node = s->boot.node_of, n = t->d.size;
    if (!gshmemi_cfg.COLL_XNODE_HIER || !node || n < 4) return 0;
    int L = 1;
    while (L < n && node[team_pe(t, L)] == node[team_pe(t, 0)]) L++;
    if (L < 2 || n % L) return 0;
    for (int j = 0; j < n; j++) {
        if (node[team_pe(t, j)] != node[team_pe(t, j / L * L)]) return 0;
        if (j % L == 0)
            for (int b = 0; b < j; b += L)
                if (node[team_pe(t, b)] == node[team_pe(t, j)]) return 0;
    }
    return L;
}

/* Fills slot `slot` for a team of `size` members (my index me, -1 if not a member) and
 * zeroes this PE's copy of its flags. */
static gshmemi_status fill_slot(gshmemi_state *s, int slot, int start, int stride, int size,
                                int me, int32_t *h_pes, int parent, const char *made_by) {
    host_team *t = &T.tab[slot];
    memset(t, 0, sizeof *t);
    uint64_t *a = T.pool + (size_t)slot * T.slot_words;
    GSHMEMI_CUDA(cudaMemsetAsync(a, 0, T.slot_words * sizeof(uint64_t), (cudaStream_t)s->stream));
    t->d.start = start;
    t->d.stride = stride;
    t->d.size = size;
    t->d.my_idx = me;
    t->d.flags = a;
    t->d.sigs = a + (size_t)C_ * size;
    t->d.vals = t->d.sigs + 2 * (size_t)size;
    t->d.epochs = t->d.vals + size;
    t->d.seqs = t->d.epochs + C_;
    t->d.ncoll = t->d.seqs + C_;
    t->parent = parent;
    t->made_by = made_by;
    if (h_pes) {
        t->h_pes = h_pes;
        GSHMEMI_CUDA(cudaMalloc((void **)&t->d_pes, (size_t)size * sizeof(int32_t)));
        GSHMEMI_CUDA(cudaMemcpy(t->d_pes, h_pes, (size_t)size * sizeof(int32_t), cudaMemcpyHostToDevice));
        t->d.pes = t->d_pes;
    }
    for (int i = 0; i < size; i++)
        if (s->pe_slot[team_pe(t, i)] < 0) t->d.remote++;
    if (t->d.remote) t->d.node_size = node_blocked(s, t);
    if (t->d.remote && me >= 0) return take_xtmp(s, t, made_by);
    return GSHMEM_SUCCESS;
}

/* SAME_MYPE_NODE: the PE of each node whose local index is mine (nodes without one have no
 * member), in node order; strided when nodes are consecutive blocks of one size. */
static gshmemi_status same_mype_node(gshmemi_state *s) {
    const gshmemi_bootstrap *b = &s->boot;
    int32_t *list = malloc((size_t)b->n_nodes * sizeof *list);
    if (!list) return GSHMEM_ERR_NO_MEMORY;
    int size = 0, me = -1;
    for (int n = 0; n < b->n_nodes; n++)
        for (int pe = 0; pe < s->npes; pe++)
            if (b->node_of[pe] == n && b->local_rank_of[pe] == b->local_rank) {
                if (pe == s->mype) me = size;
                list[size++] = pe;
                break;
            }
    int stride = size > 1 ? list[1] - list[0] : 1;
    bool strided = stride >= 1;
    for (int i = 1; i < size; i++)
        if (list[i] != list[0] + i * stride) strided = false;
    gshmemi_status st = fill_slot(s, GSHMEMX_TEAM_SAME_MYPE_NODE, list[0], strided ? stride : 1, size, me,
                                  strided ? NULL : list, -1, "gshmem_init");
    if (strided) free(list);   /* else the slot owns it */
    return st;
}

gshmemi_status gshmemi_teams_init(gshmemi_state *s) {
    int max = gshmemi_cfg.TEAMS_MAX;
    if (max < PREDEFINED) {
        gshmemi_error("GSHMEM_TEAMS_MAX=%d: at least %d (TEAM_WORLD, TEAM_SHARED, TEAM_NODE, "
                      "TEAM_SAME_MYPE_NODE) are needed", max, PREDEFINED);
        return GSHMEM_ERR_INVALID_ARG;
    }
    s->teams_max = max;
    T.words = (max + 63) / 64;
    T.slot_words = ((size_t)(C_ + 3) * s->npes + 2 * C_ + 1 + 31) / 32 * 32;
    T.tab = calloc((size_t)max, sizeof *T.tab);
    T.used_h = calloc((size_t)T.words, sizeof *T.used_h);
    if (!T.tab || !T.used_h) return GSHMEM_ERR_NO_MEMORY;
    void *p;
    size_t pool_bytes = (size_t)max * T.slot_words * sizeof(uint64_t);
    GSHMEMI_CHECK(gshmemi_heap_alloc(s, pool_bytes + (size_t)T.words * sizeof(uint64_t), 256, true,
                                     &p, "gshmem_init (team pool)"));
    T.pool = p;
    T.used = T.pool + (size_t)max * T.slot_words;
    GSHMEMI_CUDA(cudaMemsetAsync(T.used, 0, (size_t)T.words * sizeof(uint64_t), (cudaStream_t)s->stream));
    GSHMEMI_CUDA(cudaMalloc((void **)&T.d_tab, (size_t)max * sizeof(gshmemi_team)));
    GSHMEMI_CUDA(cudaMemsetAsync(T.d_tab, 0, (size_t)max * sizeof(gshmemi_team), (cudaStream_t)s->stream));
    s->d_teams = T.d_tab;

    /* WORLD */
    /* per-sender LL buffer; a team's scratch (2 * npes buffers) stays within 32 MiB */
    uint64_t sb = gshmemi_cfg.COLL_SCRATCH, most_sb = (16ull << 20) / (uint64_t)s->npes;
    if (sb > most_sb) sb = most_sb;
    /* k >= 3 PEs sharing a GPU: the one-shot path (every member reads every message through
     * one HBM, on the capped blocks) loses to two rounds early. 4 PEs on an H100: fcollect
     * 256 KiB one-shot 38.98 us, two rounds 14.31; alltoall 128 KiB one-shot 23.35, 256 KiB
     * two rounds 14.96. Its limit (half the scratch) shrinks by 2k: 64 KiB at 4 PEs. */
    if (gshmemi_place.max_gpu_pes >= 3) sb /= 2 * (uint64_t)gshmemi_place.max_gpu_pes;
    sb = sb / 256 * 256;
    GSHMEMI_CHECK(fill_slot(s, GSHMEM_TEAM_WORLD, 0, 1, s->npes, s->mype, NULL, -1, "gshmem_init"));
    /* SHARED: this node's PEs, strided when they are consecutive ranks */
    const gshmemi_bootstrap *b = &s->boot;
    int32_t *list = malloc((size_t)b->local_size * sizeof *list);
    if (!list) return GSHMEM_ERR_NO_MEMORY;
    for (int pe = 0; pe < s->npes; pe++)
        if (b->node_of[pe] == b->node_id) list[b->local_rank_of[pe]] = pe;
    bool strided = true;
    for (int i = 1; i < b->local_size; i++)
        if (list[i] != list[0] + i) strided = false;
    GSHMEMI_CHECK(fill_slot(s, GSHMEM_TEAM_SHARED, list[0], 1, b->local_size, b->local_rank,
                            strided ? NULL : list, -1, "gshmem_init"));
    /* NODE: the same members, a slot (flags) of its own */
    int32_t *copy = strided ? NULL : malloc((size_t)b->local_size * sizeof *copy);
    if (!strided && !copy) return GSHMEM_ERR_NO_MEMORY;
    if (copy) memcpy(copy, list, (size_t)b->local_size * sizeof *copy);
    GSHMEMI_CHECK(fill_slot(s, GSHMEMX_TEAM_NODE, list[0], 1, b->local_size, b->local_rank, copy, -1,
                            "gshmem_init"));
    if (strided) free(list);
    GSHMEMI_CHECK(same_mype_node(s));
    /* one-shot scratch of the predefined teams (collective: every PE allocates both) */
    if (sb) {
        /* [2 parities][npes senders][sb] LL messages */
        GSHMEMI_CHECK(gshmemi_heap_alloc(s, 2 * (size_t)s->npes * sb, 256, true, &p,
                                         "gshmem_init (TEAM_WORLD scratch)"));
        T.tab[0].d.scratch = p;
        T.tab[0].d.scratch_bytes = sb;
        /* TEAM_SHARED sizes differ between nodes: size every PE's by the largest node */
        int most = 0;
        for (int n = 0; n < b->n_nodes; n++) {
            int c = 0;
            for (int pe = 0; pe < s->npes; pe++) c += b->node_of[pe] == n;
            if (c > most) most = c;
        }
        GSHMEMI_CHECK(gshmemi_heap_alloc(s, 2 * (size_t)most * sb, 256, true, &p,
                                         "gshmem_init (TEAM_SHARED scratch)"));
        T.tab[1].d.scratch = p;
        T.tab[1].d.scratch_bytes = sb;
    }
    for (int i = 0; i < PREDEFINED; i++) {
        GSHMEMI_CHECK(publish(s, i));
        GSHMEMI_CHECK(set_used(s, i, true));
    }
    return sync_stream(s, "gshmem_init");
}

void gshmemi_teams_finalize(gshmemi_state *s) {
    if (!T.tab) return;
    int leaked = 0;
    for (int i = PREDEFINED; i < s->teams_max; i++) {
        host_team *t = &T.tab[i];
        if (t->d.size <= 0) continue;
        if (leaked++ < 8)
            gshmemi_warn("gshmem_finalize: team %d (%d PEs: start %d, stride %d; made by %s from "
                         "team %d) was never destroyed; call gshmem_team_destroy when done with it",
                         i, t->d.size, t->d.start, t->d.stride, t->made_by, t->parent);
    }
    if (leaked > 8) gshmemi_warn("gshmem_finalize: %d teams in all were never destroyed", leaked);
    for (int i = 0; i < s->teams_max; i++) {
        if (T.tab[i].d_pes) cudaFree(T.tab[i].d_pes);
        free(T.tab[i].h_pes);
        gshmemi_local_mem_free(s, &T.tab[i].xtmp);
    }
    cudaFree(T.d_tab);
    free(T.tab);
    free(T.used_h);
    memset(&T, 0, sizeof T);
}

static host_team *valid_team(int team) {
    gshmemi_state *s = &gshmemi_g;
    if (!s->initialized || team < 0 || team >= s->teams_max) return NULL;
    host_team *t = &T.tab[team];
    return t->d.size > 0 ? t : NULL;
}

const gshmemi_team *gshmemi_team_lookup(int team, const char *call) {
    if (!gshmemi_g.initialized) {
        gshmemi_error("%s: called before gshmem_init (or after gshmem_finalize)", call);
        return NULL;
    }
    host_team *t = valid_team(team);
    if (!t) {
        gshmemi_error("%s: team %d is not a valid team on PE %d (destroyed, never created, or "
                      "GSHMEM_TEAM_INVALID from a split this PE is not part of)", call, team,
                      gshmemi_g.mype);
        return NULL;
    }
    if (t->d.my_idx < 0) {
        gshmemi_error("%s: PE %d is not a member of team %d", call, gshmemi_g.mype, team);
        return NULL;
    }
    return &t->d;
}

int gshmemi_host_team_my_pe(gshmem_team_t team) {
    host_team *t = valid_team(team);
    return t ? t->d.my_idx : -1;
}
int gshmemi_host_team_n_pes(gshmem_team_t team) {
    host_team *t = valid_team(team);
    return t ? t->d.size : -1;
}
int gshmemi_host_team_translate_pe(gshmem_team_t src_team, int src_pe, gshmem_team_t dest_team) {
    host_team *a = valid_team(src_team), *b = valid_team(dest_team);
    if (!a || !b || src_pe < 0 || src_pe >= a->d.size) return -1;
    int pe = team_pe(a, src_pe);
    for (int i = 0; i < b->d.size; i++)  /* short: teams of one node */
        if (team_pe(b, i) == pe) return i;
    return -1;
}

int gshmem_team_get_config(gshmem_team_t team, long config_mask, gshmem_team_config_t *config) {
    host_team *t = valid_team(team);
    if (!t || !config) {
        gshmemi_error("gshmem_team_get_config: %s", !t ? "invalid team" : "config is NULL");
        return GSHMEM_ERR_INVALID_ARG;
    }
    if (config_mask & GSHMEM_TEAM_NUM_CONTEXTS) config->num_contexts = t->cfg.num_contexts;
    return GSHMEM_SUCCESS;
}

/* Blocking sync of `team` from the host (the kernel of gshmem_team_sync). */
static gshmemi_status host_sync(gshmemi_state *s, int team, const char *call) {
    GSHMEMI_CUDA(gshmemi_launch_team_sync(s->stream, gshmemi_plan_sync(&T.tab[team].d), &T.tab[team].d));
    return sync_stream(s, call);
}

/* Collective over `parent`: agree on k slots free on every parent member; out[0..k). */
static gshmemi_status agree_slots(gshmemi_state *s, host_team *parent, int pidx, int k, int *out,
                                  const char *call) {
    size_t bytes = (size_t)T.words * sizeof(uint64_t);
    uint64_t *all = calloc((size_t)T.words, sizeof *all), *w = malloc(bytes);
    if (!all || !w) { free(all); free(w); return GSHMEM_ERR_NO_MEMORY; }
    gshmemi_status st = host_sync(s, pidx, call);
    /* every member's bitmap: a copy from a PE of this node, a get through the remote
       transport from another node (gshmemi_host_getmem routes; it ends the job on failure) */
    for (int i = 0; st == GSHMEM_SUCCESS && i < parent->d.size; i++) {
        gshmemi_host_getmem(w, T.used, bytes, team_pe(parent, i));
        for (int q = 0; q < T.words; q++) all[q] |= w[q];
    }
    /* nobody marks a slot before every member has read every bitmap */
    if (st == GSHMEM_SUCCESS) st = host_sync(s, pidx, call);
    int got = 0;
    for (int i = PREDEFINED; st == GSHMEM_SUCCESS && i < s->teams_max && got < k; i++)
        if (!(all[i >> 6] >> (i & 63) & 1)) out[got++] = i;
    free(all);
    free(w);
    GSHMEMI_CHECK(st);
    if (got < k) {
        gshmemi_error("%s: no free team slot: GSHMEM_TEAMS_MAX=%d teams are in use by some PE of "
                      "the parent team; destroy teams you no longer need or raise "
                      "GSHMEM_TEAMS_MAX", call, s->teams_max);
        return GSHMEM_ERR_NO_MEMORY;
    }
    return GSHMEM_SUCCESS;
}

/* One new strided team per slot: world start/stride/size, my index or -1. */
typedef struct new_team {
    int start, stride, size, me;
    const gshmem_team_config_t *cfg;
    long mask;
    gshmem_team_t *out;
} new_team;

static int split_common(int parent_h, new_team *nt, int k, const char *call) {
    gshmemi_state *s = &gshmemi_g;
    for (int i = 0; i < k; i++)
        if (nt[i].out) *nt[i].out = GSHMEM_TEAM_INVALID;
    if (!gshmemi_team_lookup(parent_h, call)) return GSHMEM_ERR_INVALID_ARG;
    host_team *parent = &T.tab[parent_h];
    int slots[2];
    gshmemi_status st = agree_slots(s, parent, parent_h, k, slots, call);
    if (st != GSHMEM_SUCCESS) return st;
    for (int i = 0; i < k && st == GSHMEM_SUCCESS; i++) {
        if (nt[i].me < 0) continue;
        st = fill_slot(s, slots[i], nt[i].start, nt[i].stride, nt[i].size, nt[i].me, NULL,
                       parent_h, call);
        if (st != GSHMEM_SUCCESS) break;
        if (nt[i].cfg && (nt[i].mask & GSHMEM_TEAM_NUM_CONTEXTS))
            T.tab[slots[i]].cfg.num_contexts = nt[i].cfg->num_contexts;
        T.tab[slots[i]].cfg_mask = nt[i].mask;
        st = publish(s, slots[i]);
        if (st == GSHMEM_SUCCESS) st = set_used(s, slots[i], true);
    }
    /* every member's slot is zeroed and published before anyone signals in it */
    if (st == GSHMEM_SUCCESS) st = sync_stream(s, call);
    if (st == GSHMEM_SUCCESS) st = host_sync(s, parent_h, call);
    if (st != GSHMEM_SUCCESS) return st;
    for (int i = 0; i < k; i++)
        if (nt[i].out && nt[i].me >= 0) *nt[i].out = slots[i];
    return GSHMEM_SUCCESS;
}

int gshmem_team_split_strided(gshmem_team_t parent, int start, int stride, int size,
                              const gshmem_team_config_t *config, long config_mask,
                              gshmem_team_t *new_team_out) {
    const char *call = "gshmem_team_split_strided";
    if (new_team_out) *new_team_out = GSHMEM_TEAM_INVALID;
    const gshmemi_team *p = gshmemi_team_lookup(parent, call);
    if (!p) return GSHMEM_ERR_INVALID_ARG;
    if (!new_team_out) {
        gshmemi_error("%s: new_team is NULL", call);
        return GSHMEM_ERR_INVALID_ARG;
    }
    host_team *ph = &T.tab[parent];
    gshmemi_geom g;
    int me;
    if (!gshmemi_geom_split_strided((gshmemi_geom){p->start, p->stride, p->size}, p->my_idx,
                                    start, stride, size, &g, &me)) {
        gshmemi_error("%s on PE %d: start %d, stride %d, size %d do not select PEs of the parent "
                      "team (team %d has %d PEs): need 0 <= start, stride >= 1 and "
                      "start + (size-1)*stride < %d", call, gshmemi_g.mype, start, stride, size,
                      parent, p->size, p->size);
        return GSHMEM_ERR_INVALID_ARG;
    }
    new_team nt = {.start = g.start, .stride = g.stride, .size = g.size, .me = me, .cfg = config,
                   .mask = config_mask, .out = new_team_out};
    if (ph->h_pes) {
        /* parent given by a list (TEAM_SHARED on a non-contiguous node): only evenly spaced
         * selections are representable as a strided team */
        if (size == 1) stride = 1;
        int a = team_pe(ph, start), b = size > 1 ? team_pe(ph, start + stride) : a + 1;
        nt.start = a;
        nt.stride = b - a;
        for (int i = 0; i < size; i++)
            if (team_pe(ph, start + i * stride) != a + i * nt.stride || nt.stride < 1) {
                gshmemi_error("%s: the selected PEs of team %d are not evenly spaced in "
                              "TEAM_WORLD; split TEAM_WORLD instead", call, parent);
                return GSHMEM_ERR_INVALID_ARG;
            }
    }
    return split_common(parent, &nt, 1, call);
}

int gshmem_team_split_2d(gshmem_team_t parent, int xrange,
                         const gshmem_team_config_t *xaxis_config, long xaxis_mask,
                         gshmem_team_t *xaxis_team, const gshmem_team_config_t *yaxis_config,
                         long yaxis_mask, gshmem_team_t *yaxis_team) {
    const char *call = "gshmem_team_split_2d";
    if (xaxis_team) *xaxis_team = GSHMEM_TEAM_INVALID;
    if (yaxis_team) *yaxis_team = GSHMEM_TEAM_INVALID;
    const gshmemi_team *p = gshmemi_team_lookup(parent, call);
    if (!p) return GSHMEM_ERR_INVALID_ARG;
    if (xrange < 1 || !xaxis_team || !yaxis_team) {
        gshmemi_error("%s on PE %d: %s", call, gshmemi_g.mype,
                      xrange < 1 ? "xrange must be >= 1" : "xaxis_team and yaxis_team must not be NULL");
        return GSHMEM_ERR_INVALID_ARG;
    }
    if (T.tab[parent].h_pes) {
        gshmemi_error("%s: team %d is not strided in TEAM_WORLD; split TEAM_WORLD instead", call, parent);
        return GSHMEM_ERR_INVALID_ARG;
    }
    gshmemi_geom gx, gy;
    int xme, yme;
    gshmemi_geom_split_2d((gshmemi_geom){p->start, p->stride, p->size}, p->my_idx, xrange, &gx,
                          &xme, &gy, &yme);
    new_team nt[2];
    /* x axis: my row; y axis: my column */
    nt[0] = (new_team){.start = gx.start, .stride = gx.stride, .size = gx.size, .me = xme,
                       .cfg = xaxis_config, .mask = xaxis_mask, .out = xaxis_team};
    nt[1] = (new_team){.start = gy.start, .stride = gy.stride, .size = gy.size, .me = yme,
                       .cfg = yaxis_config, .mask = yaxis_mask, .out = yaxis_team};
    return split_common(parent, nt, 2, call);
}

void gshmem_team_destroy(gshmem_team_t team) {
    const char *call = "gshmem_team_destroy";
    gshmemi_state *s = &gshmemi_g;
    if (team >= 0 && team < PREDEFINED) {
        gshmemi_error("%s: the predefined teams (GSHMEM_TEAM_WORLD, GSHMEM_TEAM_SHARED, GSHMEMX_TEAM_NODE, "
                      "GSHMEMX_TEAM_SAME_MYPE_NODE) cannot be destroyed; ignored", call);
        return;
    }
    if (team == GSHMEM_TEAM_INVALID) return;  /* what a non-member got from a split */
    if (!gshmemi_team_lookup(team, call)) return;
    /* the members finish every collective on the team before the slot can be reused */
    if (host_sync(s, team, call) != GSHMEM_SUCCESS) gshmemi_fatal("%s: final sync of team %d failed", call, team);
    host_team *t = &T.tab[team];
    if (t->d_pes) cudaFree(t->d_pes);
    free(t->h_pes);
    gshmemi_local_mem_free(s, &t->xtmp);
    memset(t, 0, sizeof *t);
    if (publish(s, team) != GSHMEM_SUCCESS || set_used(s, team, false) != GSHMEM_SUCCESS ||
        sync_stream(s, call) != GSHMEM_SUCCESS)
        gshmemi_fatal("%s: could not release team %d", call, team);
}
