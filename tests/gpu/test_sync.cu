/* Proves synchronization: barrier_all at thread, warp and block scope separates rounds
 * (every PE's writes before the barrier are seen by every PE after it, 2000 rounds in one
 * kernel); wait_until and test for every point-to-point type and comparison; host
 * wait_until; the host barrier orders device writes of earlier kernels. */
#define GSHMEMI_DEVICE_INTERNALS  /* gshmemi_globaltimer (gshmem/forms.h) */
#include "common.h"

#define ROUNDS 2000

/* round r: write r into slot [me] of every PE's array, barrier, then every slot must be r */
template <int S>
__global__ void barrier_rounds(long *slots, unsigned long long *bad) {
    int me = gshmem_my_pe(), np = gshmem_n_pes();
    for (long r = 1; r <= ROUNDS; r++) {
        if (threadIdx.x == 0)
            for (int pe = 0; pe < np; pe++) gshmem_long_p(slots + me, r, pe);
        if (S == 0) { if (threadIdx.x == 0) gshmem_barrier_all(); __syncthreads(); }
        else if (S == 1) { if (threadIdx.x < 32) gshmemx_barrier_all_warp(); __syncthreads(); }
        else gshmemx_barrier_all_block();
        for (int pe = threadIdx.x; pe < np; pe += blockDim.x) {
            long v = ((volatile long *)slots)[pe];
            if (v != r) atomicAdd(bad, 1ull);
        }
        /* nobody may write round r+1 before everyone has checked round r */
        if (S == 0) { __syncthreads(); if (threadIdx.x == 0) gshmem_barrier_all(); __syncthreads(); }
        else if (S == 1) { __syncthreads(); if (threadIdx.x < 32) gshmemx_barrier_all_warp(); __syncthreads(); }
        else gshmemx_barrier_all_block();
    }
}

static void barriers(unsigned long long *bad) {
    long *slots = (long *)gshmem_calloc(gshmem_n_pes(), sizeof(long));
    const char *names[] = {"gshmem_barrier_all", "gshmemx_barrier_all_warp", "gshmemx_barrier_all_block"};
    for (int s = 0; s < 3; s++) {
        CK(cudaMemset(slots, 0, gshmem_n_pes() * sizeof(long)));
        CK(cudaDeviceSynchronize());
        gshmem_barrier_all();
        *bad = 0;
        if (s == 0) barrier_rounds<0><<<1, 64>>>(slots, bad);
        if (s == 1) barrier_rounds<1><<<1, 64>>>(slots, bad);
        if (s == 2) barrier_rounds<2><<<1, 256>>>(slots, bad);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        EXPECT(*bad == 0, "%s: %llu stale slots seen after the barrier in %d rounds", names[s], *bad, ROUNDS);
    }
    gshmem_free(slots);
}

/* The writer stores 1..8 with a delay; the waiter walks through every comparison. Only the
 * first, == 3, needs the waiter to see one value of the sequence: the waiter acknowledges it on
 * the writer's PE (ack) and the writer goes on to 4 after that, so a waiter that starts late
 * (PEs sharing a GPU, a writer behind a NIC that delivers its puts together) still sees it. */
#define DEF_WAIT_KERNELS(NAME, T)                                                            \
    __global__ void wait_seq_##NAME(T *ivar, uint64_t *ack, int writer, unsigned long long *bad) { \
        gshmem_##NAME##_wait_until(ivar, GSHMEM_CMP_EQ, (T)3);                               \
        gshmem_uint64_p(ack, 1, writer);                                                     \
        if (!(*(volatile T *)ivar >= (T)3)) atomicAdd(bad, 1ull);                            \
        gshmem_##NAME##_wait_until(ivar, GSHMEM_CMP_GE, (T)4);                               \
        gshmem_##NAME##_wait_until(ivar, GSHMEM_CMP_GT, (T)5);                               \
        if (!(*(volatile T *)ivar > (T)5)) atomicAdd(bad, 1ull);                             \
        gshmem_##NAME##_wait_until(ivar, GSHMEM_CMP_NE, (T)6);                               \
        gshmem_##NAME##_wait_until(ivar, GSHMEM_CMP_LT, (T)0 + (T)100);                      \
        gshmem_##NAME##_wait_until(ivar, GSHMEM_CMP_LE, (T)100);                             \
        gshmem_##NAME##_wait_until(ivar, GSHMEM_CMP_EQ, (T)8);                               \
        if (gshmem_##NAME##_test(ivar, GSHMEM_CMP_EQ, (T)8) != 1) atomicAdd(bad, 1ull);      \
        if (gshmem_##NAME##_test(ivar, GSHMEM_CMP_LT, (T)8) != 0) atomicAdd(bad, 1ull);      \
        if (gshmem_##NAME##_test(ivar, GSHMEM_CMP_GE, (T)9) != 0) atomicAdd(bad, 1ull);      \
    }                                                                                        \
    __global__ void write_seq_##NAME(T *ivar, uint64_t *ack, int pe) {                       \
        for (int v = 1; v <= 8; v++) {                                                       \
            uint64_t t0 = gshmemi_globaltimer();                                             \
            while (gshmemi_globaltimer() - t0 < 20000) {}                                    \
            gshmem_##NAME##_p(ivar, (T)v, pe);                                               \
            if (ack && v == 3) gshmem_uint64_wait_until(ack, GSHMEM_CMP_EQ, 1);              \
        }                                                                                    \
    }
GSHMEM_P2P_SYNC_TYPES(DEF_WAIT_KERNELS)

static void waits(unsigned long long *bad) {
    int me = gshmem_my_pe(), np = gshmem_n_pes();
    uint64_t *ivar = (uint64_t *)gshmem_calloc(2, 8), *ack = ivar + 1;
    const int prev = (me + np - 1) % np;
    cudaStream_t s1, s2;
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
#define RUN_WAIT(NAME, T)                                                                    \
    {                                                                                        \
        CK(cudaMemset(ivar, 0, 16));                                                         \
        CK(cudaDeviceSynchronize());                                                         \
        gshmem_barrier_all();                                                                \
        *bad = 0;                                                                            \
        wait_seq_##NAME<<<1, 1, 0, s1>>>((T *)ivar, ack, prev, bad);                         \
        write_seq_##NAME<<<1, 1, 0, s2>>>((T *)ivar, ack, (me + 1) % np);                    \
        CK(cudaStreamSynchronize(s1));                                                       \
        CK(cudaStreamSynchronize(s2));                                                       \
        EXPECT(*bad == 0, "gshmem_" #NAME "_wait_until/test: %llu wrong outcomes", *bad);    \
        gshmem_barrier_all();                                                                \
    }
    GSHMEM_P2P_SYNC_TYPES(RUN_WAIT)
    /* host wait_until: PE me waits on the host while prev's kernel writes 1..8 */
    CK(cudaMemset(ivar, 0, 8));
    CK(cudaDeviceSynchronize());
    gshmem_barrier_all();
    write_seq_long<<<1, 1, 0, s2>>>((long *)ivar, nullptr, (me + 1) % np);
    gshmem_long_wait_until((long *)ivar, GSHMEM_CMP_EQ, 8);
    long v = 0;
    CK(cudaMemcpy(&v, ivar, sizeof v, cudaMemcpyDeviceToHost));
    EXPECT(v == 8, "host gshmem_long_wait_until returned with value %ld, expected 8", v);
    CK(cudaStreamSynchronize(s2));
    gshmem_barrier_all();
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
    gshmem_free(ivar);
}

/* Host barrier after a kernel on the legacy stream: data the kernel put is visible after. */
__global__ void put_value(int *dst, int v, int pe) { gshmem_int_p(dst, v, pe); }

static void host_barrier(void) {
    int me = gshmem_my_pe(), np = gshmem_n_pes();
    int *x = (int *)gshmem_calloc(1, sizeof(int));
    for (int r = 1; r <= 200; r++) {
        put_value<<<1, 1>>>(x, r * 10 + me, (me + 1) % np);
        gshmem_barrier_all();   /* ordered after the kernel (legacy stream) on every PE */
        int v;
        CK(cudaMemcpy(&v, x, sizeof v, cudaMemcpyDeviceToHost));
        EXPECT(v == r * 10 + (me + np - 1) % np, "round %d: host barrier did not order the put: %d", r, v);
        gshmem_barrier_all();
    }
    gshmem_free(x);
}

int main(void) {
    gshmem_init();
    unsigned long long *bad;
    CK(cudaHostAlloc((void **)&bad, sizeof *bad, cudaHostAllocMapped));
    barriers(bad);
    waits(bad);
    host_barrier();
    cudaFreeHost(bad);
    int rc = summary("test_sync");
    gshmem_finalize();
    return rc;
}
