/* Forward progress with several PEs on one GPU: the largest on-stream collectives (64 MiB
 * allreduce and broadcast, 16 MiB per member for alltoall, fcollect and reducescatter) are
 * enqueued back to back for several rounds with no host synchronization between them, so
 * every PE's kernels wait on kernels of PEs that share its GPU; then a user kernel of
 * sm_share blocks (the documented bound) spins on every other PE's flag. The job completes
 * only if the co-located PEs' kernels are all resident together; every result is compared
 * with a CPU reference (values change per round, so a stale result fails). Also prints and
 * checks the placement. usage: gshmrun -n N test_progress [--rounds R] */
#include <vector>
#include "common.h"

static const size_t BIG = 16u << 20;   /* floats: 64 MiB */

__global__ void fill_f(float *p, size_t n, int round, int pe, int salt) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = (float)((i * 7 + (size_t)pe * 13 + (size_t)round * 5 + (size_t)salt) % 31);
}
static float val(size_t i, int round, int pe, int salt) {
    return (float)((i * 7 + (size_t)pe * 13 + (size_t)round * 5 + (size_t)salt) % 31);
}

/* Every block raises its flag on every PE, then waits for every PE's flag of this block:
 * completes only when all blocks of all PEs' kernels run at once. */
__global__ void all_blocks_meet(uint64_t *flags, uint64_t value) {
    int me = gshmem_my_pe(), np = gshmem_n_pes();
    uint64_t *mine = flags + (size_t)blockIdx.x * np;
    if (threadIdx.x == 0) {
        for (int pe = 0; pe < np; pe++) gshmem_uint64_atomic_set(mine + me, value, pe);
        for (int pe = 0; pe < np; pe++) gshmem_uint64_wait_until(mine + pe, GSHMEM_CMP_GE, value);
    }
}

/* Compares n floats of `got` with ref; counts mismatches and reports the first. */
static void compare(const char *what, int round, const float *dev, const std::vector<float> &ref) {
    std::vector<float> got(ref.size());
    CK(cudaMemcpy(got.data(), dev, ref.size() * sizeof(float), cudaMemcpyDeviceToHost));
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < ref.size(); i++)
        if (got[i] != ref[i] && !bad++) first = i;
    EXPECT(bad == 0, "%s round %d: %zu of %zu wrong, first at %zu: expected %g, got %g", what, round,
           bad, ref.size(), first, bad ? ref[first] : 0.f, bad ? got[first] : 0.f);
}

int main(int argc, char **argv) {
    int rounds = argc > 2 && !strcmp(argv[1], "--rounds") ? atoi(argv[2]) : 3;
    gshmem_init();
    int me = gshmem_my_pe(), np = gshmem_n_pes();
    gshmemx_placement_info_t pl;
    EXPECT(gshmemx_get_placement(&pl) == GSHMEM_SUCCESS, "gshmemx_get_placement failed");
    printf("PE %d: GPU %d, %d PE(s) on it (index %d), MPS %d, SM share %d of %d, library kernels <= %d blocks\n",
           me, pl.device, pl.gpu_pes, pl.gpu_rank, pl.mps, pl.sm_share, pl.sm_count, pl.coll_max_blocks);
    EXPECT(pl.gpu_pes >= 1 && pl.gpu_rank >= 0 && pl.gpu_rank < pl.gpu_pes, "placement %d/%d", pl.gpu_rank, pl.gpu_pes);
    EXPECT(pl.sm_share >= 1 && pl.sm_share <= pl.sm_count, "sm_share %d of %d", pl.sm_share, pl.sm_count);
    if (pl.gpu_pes > 1)
        EXPECT(pl.coll_max_blocks >= 1 && pl.coll_max_blocks * pl.gpu_pes <= pl.sm_count,
               "shared GPU: library kernels %d blocks x %d PEs > %d SMs", pl.coll_max_blocks, pl.gpu_pes, pl.sm_count);
    else
        EXPECT(pl.coll_max_blocks == 0 || np > 1, "GPU of its own: cap %d", pl.coll_max_blocks);

    const size_t per = BIG / np;   /* per-member elements of the alltoall / fcollect / reducescatter */
    float *a = (float *)gshmem_malloc(BIG * sizeof(float));
    float *b = (float *)gshmem_malloc(BIG * sizeof(float));
    float *c = (float *)gshmem_malloc(BIG * sizeof(float));
    float *d = (float *)gshmem_malloc(BIG * sizeof(float));
    float *e = (float *)gshmem_malloc(BIG * sizeof(float));
    float *f = (float *)gshmem_malloc(BIG * sizeof(float));
    EXPECT(a && b && c && d && e && f, "gshmem_malloc of 6 x 64 MiB failed");
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (int r = 0; r < rounds; r++) {
        /* inputs of this round, then five collectives, nothing synchronized in between */
        fill_f<<<256, 256, 0, st>>>(a, BIG, r, me, 0);
        fill_f<<<256, 256, 0, st>>>(c, BIG, r, me, 1);
        fill_f<<<256, 256, 0, st>>>(e, BIG, r, me, 2);
        gshmemx_float_sum_reduce_on_stream(GSHMEM_TEAM_WORLD, b, a, BIG, st);
        gshmemx_float_broadcast_on_stream(GSHMEM_TEAM_WORLD, d, c, BIG, r % np, st);
        gshmemx_float_alltoall_on_stream(GSHMEM_TEAM_WORLD, f, e, per, st);
        gshmemx_float_max_reducescatter_on_stream(GSHMEM_TEAM_WORLD, a, b, per, st);
        gshmemx_float_fcollect_on_stream(GSHMEM_TEAM_WORLD, c, f, per, st);
        CK(cudaStreamSynchronize(st));
        /* b: sum over PEs of a; d: root's c; f: block k from PE k's e block me; a[0, per):
         * max over PEs of b's block me (b is the same everywhere); c: every PE's f[0, per) */
        std::vector<float> ref(BIG);
        for (size_t i = 0; i < BIG; i++) {
            float s = 0;
            for (int p = 0; p < np; p++) s += val(i, r, p, 0);
            ref[i] = s;
        }
        compare("sum_reduce 64 MiB", r, b, ref);
        std::vector<float> red(ref.begin() + (size_t)me * per, ref.begin() + (size_t)(me + 1) * per);
        compare("max_reducescatter", r, a, red);
        for (size_t i = 0; i < BIG; i++) ref[i] = val(i, r, r % np, 1);
        compare("broadcast 64 MiB", r, d, ref);
        std::vector<float> a2a(BIG / np * np);
        for (int k = 0; k < np; k++)
            for (size_t i = 0; i < per; i++) a2a[(size_t)k * per + i] = val((size_t)me * per + i, r, k, 2);
        compare("alltoall", r, f, a2a);
        std::vector<float> fc(per * np);   /* c: every PE k's f[0, per), which came from PE 0 */
        for (int k = 0; k < np; k++)
            for (size_t i = 0; i < per; i++) fc[(size_t)k * per + i] = val((size_t)k * per + i, r, 0, 2);
        compare("fcollect", r, c, fc);
        gshmem_barrier_all();
    }

    /* a user kernel within the documented bound: sm_share blocks, each meeting every PE */
    int blocks = pl.gpu_pes > 1 ? pl.sm_share : 8;
    uint64_t *flags = (uint64_t *)gshmem_calloc((size_t)blocks * np, sizeof(uint64_t));
    gshmem_barrier_all();
    for (int r = 1; r <= 3; r++) all_blocks_meet<<<blocks, 64, 0, st>>>(flags, (uint64_t)r);
    CK(cudaStreamSynchronize(st));
    gshmem_barrier_all();
    std::vector<uint64_t> fl((size_t)blocks * np);
    CK(cudaMemcpy(fl.data(), flags, fl.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (uint64_t v : fl) bad += v != 3;
    EXPECT(bad == 0, "all_blocks_meet: %zu of %zu flags are not 3", bad, fl.size());

    gshmem_free(flags);
    gshmem_free(f); gshmem_free(e); gshmem_free(d); gshmem_free(c); gshmem_free(b); gshmem_free(a);
    printf("test_progress PE %d: %d passed, %d failed\n", me, t_passed, t_failed);
    gshmem_finalize();
    return t_failed ? 1 : 0;
}
