// Quick end-to-end check of teams and collectives (a subset of test_coll): on-stream,
// blocking-host and device forms on TEAM_WORLD and a split team, with a CPU reference,
// plus timings with SMOKE_TIME=1 (SMOKE_TAG labels the lines). usage: gshmrun -n N coll_smoke
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include "gshmem.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_) { printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); exit(1); } } while (0)
static int fails = 0, passes = 0;
static void check(bool ok, const char *what, size_t n) {
    if (ok) passes++; else { fails++; printf("PE %d FAIL %s n=%zu\n", gshmem_my_pe(), what, n); }
}

__global__ void dev_reduce(int team, float *d, const float *s, size_t n, int scope) {
    if (scope == 0) { if (threadIdx.x == 0) gshmem_float_sum_reduce(team, d, s, n); }
    else if (scope == 1) { if (threadIdx.x < 32) gshmemx_float_sum_reduce_warp(team, d, s, n); }
    else gshmemx_float_sum_reduce_block(team, d, s, n);
}
__global__ void dev_fcollect(int team, int *d, const int *s, size_t n) { gshmemx_int_fcollect_block(team, d, s, n); }

int main() {
    // SMOKE_CE_MIXED=1: odd PEs move everything by kernel, the others as GSHMEM_COLL_CE_MIN
    // says (the copy-engine path must work with members on the kernel path)
    const char *rank = getenv("GSHMEM_RANK");
    if (getenv("SMOKE_CE_MIXED") && rank && atoi(rank) % 2) setenv("GSHMEM_COLL_CE_MIN", "0", 1);
    gshmem_init();
    int me = gshmem_my_pe(), np = gshmem_n_pes();
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    const size_t maxn = 4u << 20;
    float *src = (float *)gshmem_malloc(maxn * np * sizeof(float));
    float *dst = (float *)gshmem_malloc(maxn * np * sizeof(float));
    std::vector<float> h(maxn * np), r(maxn * np);
    // 131072 floats: 512 KiB, the largest one-shot with the default scratch (1 MiB per sender); one more: two rounds
    size_t sizes[] = {1, 7, 1000, 4096, 16385, 100000, 131072, 131073, 1u << 20, maxn};
    for (size_t n : sizes) {
        for (int form = 0; form < 5; form++) {
            if (form >= 2 && n > 100000) continue;
            for (size_t k = 0; k < n; k++) h[k] = (float)((k * 7 + me * 13) % 17);
            CK(cudaMemcpy(src, h.data(), n * 4, cudaMemcpyHostToDevice));
            CK(cudaMemset(dst, 0xA5, n * 4 + 64));
            gshmem_barrier_all();
            if (form == 0) { gshmemx_float_sum_reduce_on_stream(GSHMEM_TEAM_WORLD, dst, src, n, st); CK(cudaStreamSynchronize(st)); }
            else if (form == 1) gshmem_float_sum_reduce(GSHMEM_TEAM_WORLD, dst, src, n);
            else { dev_reduce<<<1, 256, 0, st>>>(GSHMEM_TEAM_WORLD, dst, src, n, form - 2); CK(cudaStreamSynchronize(st)); }
            CK(cudaMemcpy(r.data(), dst, n * 4 + 64, cudaMemcpyDeviceToHost));
            bool ok = true;
            for (size_t k = 0; k < n && ok; k++) {
                float want = 0;
                for (int p = 0; p < np; p++) want += (float)((k * 7 + p * 13) % 17);
                ok = r[k] == want;
            }
            unsigned guard; memcpy(&guard, &r[n], 4);
            ok = ok && guard == 0xA5A5A5A5u;
            char what[64]; snprintf(what, sizeof what, "sum_reduce form %d", form);
            check(ok, what, n);
        }
        // in place
        if (n <= 100000) {
            for (size_t k = 0; k < n; k++) h[k] = (float)(me + 1);
            CK(cudaMemcpy(src, h.data(), n * 4, cudaMemcpyHostToDevice));
            gshmem_barrier_all();
            gshmem_float_sum_reduce(GSHMEM_TEAM_WORLD, src, src, n);
            CK(cudaMemcpy(r.data(), src, n * 4, cudaMemcpyDeviceToHost));
            bool ok = true;
            for (size_t k = 0; k < n && ok; k++) ok = r[k] == (float)(np * (np + 1) / 2);
            check(ok, "sum_reduce in place", n);
        }
        // fcollect / alltoall / broadcast (int), on stream
        int *is = (int *)src, *id = (int *)dst;
        for (int coll = 0; coll < 3; coll++) {
            size_t cnt = coll == 1 ? n * np : n;
            std::vector<int> hi(cnt);
            for (size_t k = 0; k < cnt; k++) hi[k] = (int)(me * 1000003 + k);
            CK(cudaMemcpy(is, hi.data(), cnt * 4, cudaMemcpyHostToDevice));
            CK(cudaMemset(id, 0xA5, n * np * 4 + 64));
            gshmem_barrier_all();
            if (coll == 0) gshmemx_int_fcollect_on_stream(GSHMEM_TEAM_WORLD, id, is, n, st);
            else if (coll == 1) gshmemx_int_alltoall_on_stream(GSHMEM_TEAM_WORLD, id, is, n, st);
            else gshmemx_int_broadcast_on_stream(GSHMEM_TEAM_WORLD, id, is, n, np - 1, st);
            CK(cudaStreamSynchronize(st));
            std::vector<int> out(n * np + 16);
            CK(cudaMemcpy(out.data(), id, n * np * 4 + 64, cudaMemcpyDeviceToHost));
            bool ok = true;
            size_t tot = coll == 2 ? n : n * np;
            for (size_t k = 0; k < tot && ok; k++) {
                int want;
                if (coll == 0) want = (int)((k / n) * 1000003 + k % n);
                else if (coll == 1) want = (int)((k / n) * 1000003 + me * n + k % n);
                else want = (int)((np - 1) * 1000003 + k);
                ok = out[k] == want;
                if (!ok) printf("PE %d coll %d k %zu got %d want %d\n", me, coll, k, out[k], want);
            }
            ok = ok && (unsigned)out[tot] == 0xA5A5A5A5u;
            const char *names[] = {"fcollect", "alltoall", "broadcast"};
            check(ok, names[coll], n);
        }
        if (n <= 4096) {
            int *is2 = (int *)src, *id2 = (int *)dst;
            std::vector<int> hi(n);
            for (size_t k = 0; k < n; k++) hi[k] = (int)(me * 77 + k);
            CK(cudaMemcpy(is2, hi.data(), n * 4, cudaMemcpyHostToDevice));
            gshmem_barrier_all();
            dev_fcollect<<<1, 128, 0, st>>>(GSHMEM_TEAM_WORLD, id2, is2, n);
            CK(cudaStreamSynchronize(st));
            std::vector<int> out(n * np);
            CK(cudaMemcpy(out.data(), id2, n * np * 4, cudaMemcpyDeviceToHost));
            bool ok = true;
            for (size_t k = 0; k < n * np && ok; k++) ok = out[k] == (int)((k / n) * 77 + k % n);
            check(ok, "fcollect block", n);
        }
    }
    // teams: split even PEs, sync, reduce
    gshmem_team_t even;
    int rc = gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 2, (np + 1) / 2, NULL, 0, &even);
    check(rc == 0 && ((me % 2 == 0) == (even != GSHMEM_TEAM_INVALID)), "split_strided", 0);
    if (even != GSHMEM_TEAM_INVALID) {
        check(gshmem_team_my_pe(even) == me / 2 && gshmem_team_n_pes(even) == (np + 1) / 2, "team my_pe/n_pes", 0);
        check(gshmem_team_translate_pe(even, 0, GSHMEM_TEAM_WORLD) == 0, "translate", 0);
        int *x = (int *)src, *y = (int *)dst;
        int v = me + 1;
        CK(cudaMemcpy(x, &v, 4, cudaMemcpyHostToDevice));
        gshmem_int_sum_reduce(even, y, x, 1);
        CK(cudaMemcpy(&v, y, 4, cudaMemcpyDeviceToHost));
        int want = 0;
        for (int p = 0; p < np; p += 2) want += p + 1;
        check(v == want, "team reduce", 1);
        gshmem_team_sync(even);
    }
    gshmem_team_destroy(even);
    for (int i = 0; i < 50; i++) {
        gshmem_team_t t2;
        gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, np, NULL, 0, &t2);
        gshmem_team_sync(t2);
        gshmem_team_destroy(t2);
    }
    check(true, "split/destroy x50", 0);
    // timings: back-to-back on stream (--time); sizes in bytes of float
    if (getenv("SMOKE_TIME")) {
        size_t big = 128u << 20;
        float *bs = (float *)gshmem_malloc(big), *bd = (float *)gshmem_malloc(big);
        CK(cudaMemset(bs, 0, big));
        cudaEvent_t a, b;
        CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
        const char *names[] = {"barrier_all_on_stream", "team_sync_on_stream", "allreduce 8 B", "allreduce 1 KiB",
                               "allreduce 32 KiB", "allreduce 256 KiB", "allreduce 2 MiB", "allreduce 32 MiB",
                               "allreduce 128 MiB", "fcollect 1 KiB", "alltoall 1 KiB", "broadcast 1 KiB"};
        size_t bytes[] = {0, 0, 8, 1024, 32768, 262144, 2u << 20, 32u << 20, 128u << 20, 1024, 1024, 1024};
        for (int which = 0; which < 12; which++) {
            size_t n = bytes[which] / 4;
            int iters = bytes[which] >= (32u << 20) ? 10 : bytes[which] >= (2u << 20) ? 100 : 1000;
            std::vector<float> ts;
            for (int trial = 0; trial < 7; trial++) {
                gshmem_barrier_all();
                CK(cudaEventRecord(a, st));
                for (int i = 0; i < iters; i++) {
                    if (which == 0) gshmemx_barrier_all_on_stream(st);
                    else if (which == 1) gshmemx_team_sync_on_stream(GSHMEM_TEAM_WORLD, st);
                    else if (which <= 8) gshmemx_float_sum_reduce_on_stream(GSHMEM_TEAM_WORLD, bd, bs, n, st);
                    else if (which == 9) gshmemx_float_fcollect_on_stream(GSHMEM_TEAM_WORLD, bd, bs, n, st);
                    else if (which == 10) gshmemx_float_alltoall_on_stream(GSHMEM_TEAM_WORLD, bd, bs, n / np, st);
                    else gshmemx_float_broadcast_on_stream(GSHMEM_TEAM_WORLD, bd, bs, n, 0, st);
                }
                CK(cudaEventRecord(b, st));
                CK(cudaEventSynchronize(b));
                float ms; CK(cudaEventElapsedTime(&ms, a, b));
                ts.push_back(ms * 1000 / iters);
            }
            std::sort(ts.begin(), ts.end());
            if (me == 0) printf("time %-24s %9.3f us  (%s)\n", names[which], ts[ts.size() / 2], getenv("SMOKE_TAG") ? getenv("SMOKE_TAG") : "");
        }
    }
    printf("coll_smoke PE %d: %d passed, %d failed\n", me, passes, fails);
    gshmem_finalize();
    return fails ? 1 : 0;
}
