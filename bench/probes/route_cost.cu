// What routing costs the load/store hot paths, measured with the library: p ping-pong, long
// fetch_add round trip and device barrier_all (thread scope) between PE 0 and PE 1, built
// with device routing (this file) and with GSHMEM_LOAD_STORE_ONLY (route_cost_ls.cu), plus two
// hand-made shapes of a p's remote branch: a stub whose wait loop is warp-uniform and
// branch-free ("clean") and one with divergent branches inside its loop ("divergent").
// Every variant runs at the same 16 flag placements (the p ping-pong's time depends on where
// its flag lies), interleaved; medians over placements. usage: gshmrun -n 2 route_cost (build: nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -Iinclude bench/probes/route_cost.cu bench/probes/route_cost_ls.cu -lgshmem) [iters]
#define GSHMEMI_DEVICE_INTERNALS 1   /* its kernels call gshmemi_* internals (stubs of the remote branch) */
#include <stdio.h>
#include <stdlib.h>
#include <vector>
#include <algorithm>
#include "gshmem.h"

#define CK(x)                                                                                \
    do {                                                                                     \
        cudaError_t e_ = (x);                                                                \
        if (e_ != cudaSuccess) {                                                             \
            fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));       \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

__device__ unsigned long long g_sink;
__device__ __noinline__ void stub_clean(long *d, long v, int pe) {
    const unsigned m = gshmemi_lanes();
    int st = 0;
    GSHMEMI_WHILE_ANY(m, st == 0) { st = *(volatile unsigned long long *)&g_sink != (unsigned long long)v; }
}
__device__ __noinline__ void stub_divergent(long *d, long v, int pe) {
    const unsigned m = gshmemi_lanes();
    int st = 0;
    unsigned ns = 0;
    GSHMEMI_WHILE_ANY(m, st == 0) {
        if (st == 0) {
            st = atomicCAS(&g_sink, 5, 6) != (unsigned long long)v;
            if (!st) gshmemi_chan_pause(ns);
        }
    }
}
template <int SHAPE> __device__ __forceinline__ void p_shape(long *f, long v, int peer) {
    if (SHAPE == 0) return gshmem_long_p(f, v, peer);
    int slot = gshmemi_route(f, peer, sizeof(long), "p");
    if (slot < 0) {
        if (SHAPE == 1) stub_clean(f, v, peer);
        else stub_divergent(f, v, peer);
        return;
    }
    gshmemi_st_relaxed(gshmemi_at(f, slot), v);
}
template <int SHAPE> __global__ void pp(long *flag, long start, int iters, int peer, int me) {
    for (int i = 0; i < iters; i++) {
        long v = start + i;
        if (me == 0) {
            p_shape<SHAPE>(flag, v, peer);
            gshmem_long_wait_until(flag, GSHMEM_CMP_EQ, v);
        } else {
            gshmem_long_wait_until(flag, GSHMEM_CMP_EQ, v);
            p_shape<SHAPE>(flag, v, peer);
        }
    }
}
__global__ void fadd_routed(long *w, int iters, int peer, long *out) {
    long s = 0;
    for (int i = 0; i < iters; i++) s += gshmem_long_atomic_fetch_add(w, 1, peer);
    *out = s;
}
__global__ void barrier_routed(int iters) {
    for (int i = 0; i < iters; i++) gshmem_barrier_all();
}
__global__ void barrier_block_routed(int iters) {
    for (int i = 0; i < iters; i++) gshmemx_barrier_all_block();
}
/* route_cost_ls.cu */
void launch_pp_ls(long *flag, long start, int iters, int peer, int me);
void launch_fadd_ls(long *w, int iters, int peer, long *out);
void launch_barrier_ls(int iters);
void launch_barrier_block_ls(int iters);

static float ms_of(cudaEvent_t a, cudaEvent_t b) {
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    return ms;
}
static float med(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 8000;
    gshmem_init();
    int me = gshmem_my_pe(), peer = 1 - me;
    const int PLACES = 16, NV = 4;
    const char *pname[NV] = {"p routed (library)", "p load/store only", "p clean stub", "p divergent stub"};
    const size_t STEP = ((1 << 20) + 4096) / sizeof(long);
    long *flags = (long *)gshmem_calloc(PLACES * STEP + 64, sizeof(long));
    long *out = (long *)gshmem_malloc(64);
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> per[NV];
    long seq = 1;
    for (int k = 0; k < PLACES; k++) {
        long *f = flags + k * STEP;
        for (int v = 0; v < NV; v++) {
            std::vector<float> t;
            for (int trial = 0; trial < 5; trial++) {
                gshmem_barrier_all();
                CK(cudaEventRecord(a));
                if (v == 0) pp<0><<<1, 1>>>(f, seq, iters, peer, me);
                else if (v == 1) launch_pp_ls(f, seq, iters, peer, me);
                else if (v == 2) pp<1><<<1, 1>>>(f, seq, iters, peer, me);
                else pp<2><<<1, 1>>>(f, seq, iters, peer, me);
                CK(cudaEventRecord(b));
                CK(cudaGetLastError());
                float ms = ms_of(a, b);
                seq += iters;
                if (trial) t.push_back(ms * 1000.f / (2 * iters));
            }
            per[v].push_back(med(t));
        }
    }
    /* fetch_add and barriers: 3 rounds of (routed, load/store only) */
    std::vector<float> fa[2], ba[2], bb[2];
    long *w = flags + PLACES * STEP;
    for (int r = 0; r < 7; r++) {
        for (int v = 0; v < 2; v++) {
            gshmem_barrier_all();
            CK(cudaEventRecord(a));
            if (me == 0) {
                if (v == 0) fadd_routed<<<1, 1>>>(w, iters, peer, out);
                else launch_fadd_ls(w, iters, peer, out);
            }
            CK(cudaEventRecord(b));
            float ms = ms_of(a, b);
            if (r) fa[v].push_back(ms * 1000.f / iters);
            gshmem_barrier_all();
            CK(cudaEventRecord(a));
            if (v == 0) barrier_routed<<<1, 1>>>(iters);
            else launch_barrier_ls(iters);
            CK(cudaEventRecord(b));
            ms = ms_of(a, b);
            if (r) ba[v].push_back(ms * 1000.f / iters);
            gshmem_barrier_all();
            CK(cudaEventRecord(a));
            if (v == 0) barrier_block_routed<<<1, 512>>>(iters);
            else launch_barrier_block_ls(iters);
            CK(cudaEventRecord(b));
            ms = ms_of(a, b);
            if (r) bb[v].push_back(ms * 1000.f / iters);
        }
    }
    if (me == 0) {
        for (int v = 0; v < NV; v++) {
            std::sort(per[v].begin(), per[v].end());
            printf("route_cost: %-22s one-way %.4f us (placements %.3f .. %.3f)\n", pname[v], med(per[v]),
                   per[v].front(), per[v].back());
        }
        printf("route_cost: fetch_add round trip     routed %.4f us, load/store only %.4f us\n", med(fa[0]), med(fa[1]));
        printf("route_cost: barrier_all (thread)     routed %.4f us, load/store only %.4f us\n", med(ba[0]), med(ba[1]));
        printf("route_cost: barrier_all (block 512)  routed %.4f us, load/store only %.4f us\n", med(bb[0]), med(bb[1]));
    }
    gshmem_free(out);
    gshmem_free(flags);
    gshmem_finalize();
    return 0;
}
