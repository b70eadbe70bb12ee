// Proves the gshmem calls NVSHMEM programs need (issue 36), on 2+ PEs:
//  - collective launch: query_gridsize gives a grid whose blocks are all resident (a kernel whose
//    blocks wait for each other, then a barrier across PEs, completes), and a larger grid is
//    refused with GSHMEM_ERR_LAUNCH without launching;
//  - the on-stream RMA families: TYPE_p/g/put/get(_nbi)_on_stream, put32_nbi, iput/iget,
//    put_signal_nbi, putmem/getmem_nbi, in stream order, values checked at the target;
//  - half and bfloat16 alltoall, broadcast and fcollect on a stream, element by element;
//  - double2 maxloc (block scope): the largest value, ties to the smallest location, on every PE;
//  - local registration: device, pinned and pageable host memory accepted, overlaps, symmetric
//    memory and unknown addresses refused with a status;
//  - symmetric registration: each PE's cuMemCreate buffer mapped at one address on every PE; a
//    put there from the left neighbour lands in the right PE's own buffer (read through the
//    user's pointer), gshmem_ptr reaches it, and cudaMalloc memory is refused (NULL).
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common.h"

// ---- collective launch ----------------------------------------------------------------------
// every block arrives, then waits (10 s at most) until all have: only a grid whose blocks are
// all resident at once gets through
__global__ void all_resident(unsigned *arrived, int *ok) {
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(arrived, 1u);
        long long t0 = clock64();
        while (atomicAdd(arrived, 0u) < gridDim.x && clock64() - t0 < 20000000000ll) {
        }
        if (atomicAdd(arrived, 0u) < gridDim.x) *ok = 0;
    }
    __syncthreads();
    if (blockIdx.x == 0) gshmemx_barrier_all_block();
}

static void collective_launch(void) {
    unsigned *arrived;
    int *ok, one = 1, okh = 0;
    CK(cudaMalloc(&arrived, sizeof *arrived));
    CK(cudaMalloc(&ok, sizeof *ok));
    CK(cudaMemset(arrived, 0, sizeof *arrived));
    CK(cudaMemcpy(ok, &one, sizeof one, cudaMemcpyHostToDevice));
    void *args[] = {&arrived, &ok};
    int grid = 0;
    int st = gshmemx_collective_launch_query_gridsize((const void *)all_resident, dim3(128), args, 0, &grid);
    EXPECT(st == GSHMEM_SUCCESS && grid >= 1, "query_gridsize: status %d, grid %d", st, grid);
    st = gshmemx_collective_launch((const void *)all_resident, dim3(grid), dim3(128), args, 0, 0);
    EXPECT(st == GSHMEM_SUCCESS, "collective_launch of %d blocks: status %d", grid, st);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(&okh, ok, sizeof okh, cudaMemcpyDeviceToHost));
    EXPECT(okh == 1, "a block of the %d-block collective launch waited 10 s for the others", grid);
    st = gshmemx_collective_launch((const void *)all_resident, dim3(grid + 1), dim3(128), args, 0, 0);
    EXPECT(st == GSHMEM_ERR_LAUNCH, "a grid of %d (> %d) blocks: status %d, expected GSHMEM_ERR_LAUNCH",
           grid + 1, grid, st);
    CK(cudaFree(arrived));
    CK(cudaFree(ok));
    gshmem_barrier_all();
}

// ---- on-stream RMA ---------------------------------------------------------------------------
static void stream_rma(cudaStream_t s) {
    int me = gshmem_my_pe(), n = gshmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    const int N = 64;
    long *lp = (long *)gshmem_calloc(N, sizeof(long));
    int *ip = (int *)gshmem_calloc(N, sizeof(int));
    uint64_t *sig = (uint64_t *)gshmem_calloc(1, sizeof(uint64_t));
    long *h = (long *)malloc(N * sizeof(long)), *got = (long *)malloc(N * sizeof(long));
    long *dsrc;
    CK(cudaMalloc(&dsrc, N * sizeof(long)));
    for (int i = 0; i < N; i++) h[i] = 1000 * me + i;
    CK(cudaMemcpy(dsrc, h, N * sizeof(long), cudaMemcpyHostToDevice));
    gshmem_barrier_all();
    // put (first half) and put_nbi (second half) to the right neighbour, then p of the last
    // element and a signal: all in the stream's order
    gshmemx_long_put_on_stream(lp, dsrc, N / 2, right, s);
    gshmemx_long_put_nbi_on_stream(lp + N / 2, dsrc + N / 2, N / 2, right, s);
    gshmemx_long_p_on_stream(lp + N - 1, -7 - me, right, s);
    gshmemx_putmem_signal_nbi_on_stream(ip, dsrc, sizeof(int), sig, 1, GSHMEM_SIGNAL_ADD, right, s);
    gshmemx_quiet_on_stream(s);
    gshmemx_barrier_all_on_stream(s);
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(got, lp, N * sizeof(long), cudaMemcpyDeviceToHost));
    int bad = -1;
    for (int i = 0; i < N; i++) {
        long want = i == N - 1 ? -7 - left : 1000 * left + i;
        if (got[i] != want && bad < 0) bad = i;
    }
    EXPECT(bad < 0, "long put/put_nbi/p_on_stream from PE %d: element %d is %ld, expected %ld", left,
           bad, bad < 0 ? 0 : got[bad], bad == N - 1 ? -7L - left : 1000L * left + bad);
    uint64_t sv = 0;
    CK(cudaMemcpy(&sv, sig, sizeof sv, cudaMemcpyDeviceToHost));
    EXPECT(sv == 1, "putmem_signal_nbi_on_stream: signal %llu, expected 1", (unsigned long long)sv);
    // g (waits for the stream) and get/get_nbi back from the right neighbour
    long g = gshmemx_long_g_on_stream(lp + 3, right, s);
    EXPECT(g == 1000 * me + 3, "long_g_on_stream from PE %d: %ld, expected %ld", right, g, 1000L * me + 3);
    long *back;
    CK(cudaMalloc(&back, N * sizeof(long)));
    gshmemx_long_get_on_stream(back, lp, N / 2, right, s);
    gshmemx_long_get_nbi_on_stream(back + N / 2, lp + N / 2, N / 2, right, s);
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(got, back, N * sizeof(long), cudaMemcpyDeviceToHost));
    bad = -1;
    for (int i = 0; i < N - 1; i++)
        if (got[i] != 1000 * me + i && bad < 0) bad = i;
    EXPECT(bad < 0, "long get/get_nbi_on_stream from PE %d: element %d is %ld", right, bad,
           bad < 0 ? 0 : got[bad]);
    // sized nbi and strided: every other int of dsrc's first 16 ints
    gshmem_barrier_all();
    gshmemx_put32_nbi_on_stream(ip, dsrc, 4, right, s);
    gshmemx_int_iput_on_stream(ip + 8, (const int *)dsrc, 1, 2, 8, right, s);
    gshmemx_barrier_all_on_stream(s);
    CK(cudaStreamSynchronize(s));
    int gi[16], hi[32];
    long hl[16];   // the left neighbour's dsrc, viewed as ints below
    for (int i = 0; i < 16; i++) hl[i] = 1000 * left + i;
    memcpy(hi, hl, sizeof hi);
    CK(cudaMemcpy(gi, ip, sizeof gi, cudaMemcpyDeviceToHost));
    bad = -1;
    for (int i = 0; i < 4; i++) if (gi[i] != hi[i] && bad < 0) bad = i;
    for (int i = 0; i < 8; i++) if (gi[8 + i] != hi[2 * i] && bad < 0) bad = 8 + i;
    EXPECT(bad < 0, "put32_nbi/int_iput_on_stream from PE %d: int %d is %d", left, bad, bad < 0 ? 0 : gi[bad]);
    gshmem_barrier_all();
    CK(cudaFree(back));
    CK(cudaFree(dsrc));
    free(h);
    free(got);
    gshmem_free(sig);
    gshmem_free(ip);
    gshmem_free(lp);
}

// ---- half and bfloat16 moves on a stream ------------------------------------------------------
template <typename T> static float as_float(T v);
template <> float as_float<__half>(__half v) { return __half2float(v); }
template <> float as_float<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> static T from_float(float f);
template <> __half from_float<__half>(float f) { return __float2half(f); }
template <> __nv_bfloat16 from_float<__nv_bfloat16>(float f) { return __float2bfloat16(f); }

// element j of PE p's source: small integers, exact in both types
static float value(int p, int j) { return (float)(p * 16 + j % 16); }

template <typename T>
static void moves(const char *name, cudaStream_t s,
                  int (*alltoall)(gshmem_team_t, T *, const T *, size_t, gshmemx_stream_t),
                  int (*broadcast)(gshmem_team_t, T *, const T *, size_t, int, gshmemx_stream_t),
                  int (*fcollect)(gshmem_team_t, T *, const T *, size_t, gshmemx_stream_t)) {
    int me = gshmem_my_pe(), n = gshmem_n_pes();
    const int E = 8;   // elements per member
    T *src = (T *)gshmem_malloc(n * E * sizeof(T)), *dst = (T *)gshmem_malloc(n * E * sizeof(T));
    T *h = (T *)malloc(n * E * sizeof(T));
    for (int j = 0; j < n * E; j++) h[j] = from_float<T>(value(me, j));
    CK(cudaMemcpy(src, h, n * E * sizeof(T), cudaMemcpyHostToDevice));
    gshmem_barrier_all();
    int st = alltoall(GSHMEM_TEAM_WORLD, dst, src, E, s);
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(h, dst, n * E * sizeof(T), cudaMemcpyDeviceToHost));
    int bad = -1;
    for (int p = 0; p < n; p++)
        for (int j = 0; j < E; j++)
            if (as_float(h[p * E + j]) != value(p, me * E + j) && bad < 0) bad = p * E + j;
    EXPECT(st == 0 && bad < 0, "%s alltoall_on_stream: status %d, element %d is %g", name, st, bad,
           bad < 0 ? 0.0 : (double)as_float(h[bad]));
    st = broadcast(GSHMEM_TEAM_WORLD, dst, src, E, n - 1, s);
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(h, dst, E * sizeof(T), cudaMemcpyDeviceToHost));
    bad = -1;
    for (int j = 0; j < E; j++) if (as_float(h[j]) != value(n - 1, j) && bad < 0) bad = j;
    EXPECT(st == 0 && bad < 0, "%s broadcast_on_stream from PE %d: status %d, element %d wrong", name,
           n - 1, st, bad);
    st = fcollect(GSHMEM_TEAM_WORLD, dst, src, E, s);
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(h, dst, n * E * sizeof(T), cudaMemcpyDeviceToHost));
    bad = -1;
    for (int p = 0; p < n; p++)
        for (int j = 0; j < E; j++)
            if (as_float(h[p * E + j]) != value(p, j) && bad < 0) bad = p * E + j;
    EXPECT(st == 0 && bad < 0, "%s fcollect_on_stream: status %d, element %d wrong", name, st, bad);
    gshmem_barrier_all();
    free(h);
    gshmem_free(dst);
    gshmem_free(src);
}

// ---- double2 maxloc ----------------------------------------------------------------------------
__global__ void maxloc_kernel(double2 *dest, const double2 *source) {
    gshmemx_double2_maxloc_reduce_block(GSHMEM_TEAM_WORLD, dest, source, 1);
}

static void maxloc(void) {
    int me = gshmem_my_pe(), n = gshmem_n_pes();
    double2 *src = (double2 *)gshmem_malloc(sizeof(double2)), *dst = (double2 *)gshmem_malloc(sizeof(double2));
    // the two highest PEs share the largest value: the smaller location must win
    double2 mine = make_double2(me >= n - 2 ? 100.0 : (double)me, (double)(10 * (n - me)));
    CK(cudaMemcpy(src, &mine, sizeof mine, cudaMemcpyHostToDevice));
    gshmem_barrier_all();
    maxloc_kernel<<<1, 96>>>(dst, src);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    double2 got;
    CK(cudaMemcpy(&got, dst, sizeof got, cudaMemcpyDeviceToHost));
    double want_loc = 10.0 * (n - (n - 1));   // PE n-1 has the smaller location of the two
    EXPECT(got.x == 100.0 && got.y == want_loc, "double2 maxloc: (%g, %g), expected (100, %g)", got.x,
           got.y, want_loc);
    gshmem_barrier_all();
    gshmem_free(dst);
    gshmem_free(src);
}

// ---- registration -----------------------------------------------------------------------------
static void local_registration(void) {
    void *dev, *pinned, *pageable = malloc(1 << 16);
    CK(cudaMalloc(&dev, 1 << 16));
    CK(cudaMallocHost(&pinned, 1 << 16));
    void *sym = gshmem_malloc(256);
    EXPECT(gshmemx_buffer_register(dev, 1 << 16) == GSHMEM_SUCCESS, "device memory refused");
    EXPECT(gshmemx_buffer_register(pinned, 1 << 16) == GSHMEM_SUCCESS, "pinned host memory refused");
    EXPECT(gshmemx_buffer_register(pageable, 1 << 16) == GSHMEM_SUCCESS, "pageable host memory refused");
    EXPECT(gshmemx_buffer_register((char *)dev + 4096, 16) == GSHMEM_ERR_INVALID_ARG,
           "an overlapping registration accepted");
    EXPECT(gshmemx_buffer_register(sym, 256) == GSHMEM_ERR_INVALID_ARG, "symmetric memory accepted");
    EXPECT(gshmemx_buffer_register(NULL, 16) == GSHMEM_ERR_INVALID_ARG, "NULL accepted");
    // a put whose source is the registered pageable buffer (pinned and mapped now)
    memset(pageable, 0x5a, 256);
    gshmem_putmem(sym, pageable, 256, (gshmem_my_pe() + 1) % gshmem_n_pes());
    gshmem_barrier_all();
    uint8_t b[256];
    CK(cudaMemcpy(b, sym, sizeof b, cudaMemcpyDeviceToHost));
    EXPECT(b[0] == 0x5a && b[255] == 0x5a, "put from a registered host buffer: %#x %#x", b[0], b[255]);
    EXPECT(gshmemx_buffer_unregister(dev) == GSHMEM_SUCCESS, "unregister failed");
    EXPECT(gshmemx_buffer_unregister(dev) == GSHMEM_ERR_INVALID_ARG, "unregistering twice accepted");
    gshmemx_buffer_unregister_all();
    EXPECT(gshmemx_buffer_unregister(pinned) == GSHMEM_ERR_INVALID_ARG, "unregister_all left a buffer");
    gshmem_barrier_all();
    gshmem_free(sym);
    CK(cudaFree(dev));
    CK(cudaFreeHost(pinned));
    free(pageable);
}

// y[i] = the writing PE's number + i, as ints
__global__ void put_ints(int *y, int n, int pe) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) gshmem_int_p(y + i, gshmem_my_pe() * 1000 + i, pe);
    __syncthreads();
    if (threadIdx.x == 0) gshmem_quiet();
}

static void symmetric_registration(void) {
    int me = gshmem_my_pe(), n = gshmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    int dev = 0;
    CK(cudaGetDevice(&dev));
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    size_t gran = 0;
    cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    size_t size = 2 * gran;
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    EXPECT(cuMemCreate(&h, size, &prop, 0) == CUDA_SUCCESS, "cuMemCreate");
    EXPECT(cuMemAddressReserve(&va, size, 0, 0, 0) == CUDA_SUCCESS, "cuMemAddressReserve");
    EXPECT(cuMemMap(va, size, 0, h, 0) == CUDA_SUCCESS, "cuMemMap");
    CUmemAccessDesc acc = {};
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    EXPECT(cuMemSetAccess(va, size, &acc, 1) == CUDA_SUCCESS, "cuMemSetAccess");
    CK(cudaMemset((void *)va, 0, size));
    int *sym = (int *)gshmemx_buffer_register_symmetric((void *)va, size, 0);
    EXPECT(sym != NULL, "register_symmetric of a %zu-byte VMM buffer returned NULL", size);
    if (sym) {
        EXPECT(gshmem_ptr(sym, right) != NULL, "gshmem_ptr of the registered buffer on PE %d is NULL", right);
        const int N = 1000;
        gshmem_barrier_all();
        put_ints<<<1, 256>>>(sym + gran / sizeof(int), N, right);   // into the second granule
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        gshmem_barrier_all();
        int *got = (int *)malloc(N * sizeof(int));
        CK(cudaMemcpy(got, (char *)va + gran, N * sizeof(int), cudaMemcpyDeviceToHost));   // the user's view
        int bad = -1;
        for (int i = 0; i < N; i++) if (got[i] != left * 1000 + i && bad < 0) bad = i;
        EXPECT(bad < 0, "put by PE %d into the registered buffer: int %d is %d (read through the "
               "user's own pointer)", left, bad, bad < 0 ? 0 : got[bad]);
        free(got);
        EXPECT(gshmemx_buffer_unregister_symmetric(sym, size) == GSHMEM_SUCCESS, "unregister_symmetric failed");
    }
    // again at the same place: the window's space came back
    int *again = (int *)gshmemx_buffer_register_symmetric((void *)va, size, 0);
    EXPECT(again == sym, "registering again gave %p, the first time %p", (void *)again, (void *)sym);
    if (again) gshmemx_buffer_unregister_symmetric(again, size);
    EXPECT(cuMemUnmap(va, size) == CUDA_SUCCESS && cuMemRelease(h) == CUDA_SUCCESS &&
           cuMemAddressFree(va, size) == CUDA_SUCCESS, "freeing the user's buffer");
    // cudaMalloc memory cannot be mapped a second time: NULL on every PE, nothing hangs
    void *plain;
    CK(cudaMalloc(&plain, size));
    EXPECT(gshmemx_buffer_register_symmetric(plain, size, 0) == NULL, "cudaMalloc memory accepted");
    CK(cudaFree(plain));
    gshmem_barrier_all();
}

int main(void) {
    gshmem_init();
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    collective_launch();
    stream_rma(s);
    moves<__half>("half", s, gshmemx_half_alltoall_on_stream, gshmemx_half_broadcast_on_stream,
                  gshmemx_half_fcollect_on_stream);
    moves<__nv_bfloat16>("bfloat16", s, gshmemx_bfloat16_alltoall_on_stream,
                         gshmemx_bfloat16_broadcast_on_stream, gshmemx_bfloat16_fcollect_on_stream);
    maxloc();
    local_registration();
    symmetric_registration();
    CK(cudaStreamDestroy(s));
    int rc = summary("test_compat_api");
    gshmem_finalize();
    return rc;
}
