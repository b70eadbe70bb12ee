/* Tuning aid, not a product benchmark: one process drives 2 GPUs and measures the NVLink
 * floor for each kind of memory a runtime could use — cudaMalloc + peer access, VMM
 * (cuMemCreate, as gshmem's heap), VMM with gpuDirectRDMACapable — so gshmem's latency and
 * bandwidth choices rest on numbers (docs/performance.md). Measures flag ping-pong one-way,
 * dependent remote load and fetch-add round trips, block-put per-call overhead with and
 * without the trailing block barrier, and large puts by SM stores and by the TMA bulk engine.
 * Runs in one process, so no fork follows CUDA here. usage: probe_nvlink */
#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CU(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_; cuGetErrorString(r_, &s_); fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_); exit(1); } } while (0)

/* ---- memory kinds --------------------------------------------------------------------- */
enum { MEM_CUDAMALLOC, MEM_VMM, MEM_VMM_RDMA, N_MEM };
static const char *mem_name[] = {"cudaMalloc+peer", "VMM", "VMM+rdmaflag"};

/* VMM memory on `dev` as gshmem's heap makes it (exportable as a file descriptor); *gran is
 * the recommended granularity */
static CUmemAllocationProp vmm_prop(int dev, bool rdma, size_t *gran) {
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    if (rdma) prop.allocFlags.gpuDirectRDMACapable = 1;
    CU(cuMemGetAllocationGranularity(gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    return prop;
}

/* allocate `size` on `dev`, accessible from both GPUs */
static void *alloc_on(int kind, int dev, size_t size) {
    CK(cudaSetDevice(dev));
    if (kind == MEM_CUDAMALLOC) {
        void *p;
        CK(cudaMalloc(&p, size));
        return p;
    }
    size_t gran;
    CUmemAllocationProp prop = vmm_prop(dev, kind == MEM_VMM_RDMA, &gran);
    size = (size + gran - 1) / gran * gran;
    CUmemGenericAllocationHandle h;
    CU(cuMemCreate(&h, size, &prop, 0));
    CUdeviceptr va;
    CU(cuMemAddressReserve(&va, size, gran, 0, 0));
    CU(cuMemMap(va, size, 0, h, 0));
    CUmemAccessDesc acc[2] = {};
    for (int d = 0; d < 2; d++) {
        acc[d].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        acc[d].location.id = d;
        acc[d].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    }
    CU(cuMemSetAccess(va, size, acc, 2));
    return (void *)va;
}

/* ---- latency kernels -------------------------------------------------------------------- */
/* V: 0 spin ld.acquire.sys, 1 spin ld.relaxed.sys then one acquire, 2 spin ld.volatile */
template <int V>
__device__ __forceinline__ void pingpong_loop(volatile long *mine, long *theirs, long start, int iters, int first) {
    for (int i = 0; i < iters; i++) {
        long v = start + i, cur;
        for (int ph = 0; ph < 2; ph++) {
            if ((ph == 0) == (first != 0)) {
                asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(theirs), "l"(v) : "memory");
            } else {
                do {
                    if (V == 0) asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(cur) : "l"(mine) : "memory");
                    else if (V == 1) asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(cur) : "l"(mine) : "memory");
                    else asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(cur) : "l"(mine) : "memory");
                } while (cur != v);
                if (V == 1) asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(cur) : "l"(mine) : "memory");
            }
        }
    }
}
template <int V>
__global__ void pingpong(volatile long *mine, long *theirs, long start, int iters, int first) {
    pingpong_loop<V>(mine, theirs, start, iters, first);
}

/* The same ping-pong run by the last block of the grid only (the grid's size moves it to
 * another SM), which records its SM in *sm. */
__global__ void pingpong_last(volatile long *mine, long *theirs, long start, int iters, int first, int *sm) {
    if (blockIdx.x != gridDim.x - 1) return;
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    *sm = (int)id;
    pingpong_loop<0>(mine, theirs, start, iters, first);
}

__global__ void chase(const long *next, int iters, long *out) {
    long idx = 0;
    for (int i = 0; i < iters; i++)
        asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(idx) : "l"(next + idx) : "memory");
    *out = idx;
}

__global__ void fadd_chain(unsigned long long *ctr, int iters, unsigned long long *out) {
    unsigned long long v = 0, acc = 0;
    for (int i = 0; i < iters; i++) {
        /* dependent: the next address uses the result (v >> 62 is 0 for any real count) */
        asm volatile("atom.relaxed.sys.global.add.u64 %0, [%1], %2;" : "=l"(v) : "l"(ctr + (v >> 62)), "l"(1ull) : "memory");
        acc += v;
    }
    *out = acc;
}

/* ---- bulk kernels ------------------------------------------------------------------------ */
/* block-put per-call overhead: each rep copies this block's chunk; SYNC=1 ends each rep with
 * __syncthreads (what a blocking block-scope put does), 0 with nothing */
template <int SYNC>
__global__ void put_reps(int4 *dst, const int4 *src, size_t n_v, int reps, size_t slot_v, int nslots) {
    size_t chunk = n_v / gridDim.x;
    for (int r = 0; r < reps; r++) {
        size_t o = (size_t)(r % nslots) * slot_v + blockIdx.x * chunk;
        for (size_t i = threadIdx.x; i < chunk; i += blockDim.x) dst[o + i] = src[o + i];
        if (SYNC) __syncthreads();
    }
}

/* large put by SM stores: unroll-8 int4 copy (gshmem's copy routine's shape) */
__global__ void put_sm(int4 *dst, const int4 *src, size_t n_v) {
    size_t chunk = n_v / gridDim.x, base = blockIdx.x * chunk;
    const unsigned S = blockDim.x;
    size_t i = threadIdx.x;
    for (; i + 7 * S < chunk; i += 8 * S) {
        int4 r[8];
#pragma unroll
        for (int u = 0; u < 8; u++) r[u] = src[base + i + u * S];
#pragma unroll
        for (int u = 0; u < 8; u++) dst[base + i + u * S] = r[u];
    }
    for (; i < chunk; i += S) dst[base + i] = src[base + i];
}

/* stores only (the SM store ceiling) */
__global__ void put_storeonly(int4 *dst, size_t n_v) {
    size_t chunk = n_v / gridDim.x, base = blockIdx.x * chunk;
    int4 v = make_int4(threadIdx.x, 1, 2, 3);
    for (size_t i = threadIdx.x; i < chunk; i += blockDim.x) dst[base + i] = v;
}

/* interleaved: chunks of `ch` vectors dealt round-robin to the blocks (block b writes chunks
 * b, b + grid, ...), so all blocks write one moving window instead of one slice each.
 * COPY=1 copies from src, 0 stores only. */
template <int COPY>
__global__ void put_interleaved(int4 *dst, const int4 *src, size_t n_v, size_t ch) {
    int4 v = make_int4(threadIdx.x, 1, 2, 3);
    for (size_t c0 = (size_t)blockIdx.x * ch; c0 < n_v; c0 += (size_t)gridDim.x * ch) {
        size_t end = c0 + ch < n_v ? c0 + ch : n_v;
        for (size_t i = c0 + threadIdx.x; i < end; i += blockDim.x) dst[i] = COPY ? src[i] : v;
    }
}

/* large put by the TMA bulk engine: one thread per block streams chunks global -> shared
 * (cp.async.bulk + mbarrier) -> peer global (cp.async.bulk bulk_group), STAGES deep */
#define TMA_STAGES 6
#define TMA_CHUNK (32 * 1024)
__device__ __forceinline__ unsigned smem_u32(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
__global__ void put_tma(char *dst, const char *src, size_t n) {
    extern __shared__ __align__(128) char stage[];
    __shared__ __align__(8) unsigned long long bar[TMA_STAGES];
    size_t per = n / gridDim.x;
    const char *s = src + blockIdx.x * per;
    char *d = dst + blockIdx.x * per;
    size_t nch = (per + TMA_CHUNK - 1) / TMA_CHUNK;
    if (threadIdx.x != 0) return;
    for (int k = 0; k < TMA_STAGES; k++)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(&bar[k])));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    auto load = [&](size_t c) {
        int k = (int)(c % TMA_STAGES);
        unsigned len = (unsigned)std::min<size_t>(TMA_CHUNK, per - c * TMA_CHUNK);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(&bar[k])), "r"(len) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     ::"r"(smem_u32(stage + k * TMA_CHUNK)), "l"(s + c * TMA_CHUNK), "r"(len), "r"(smem_u32(&bar[k])) : "memory");
    };
    for (size_t c = 0; c < nch && c < TMA_STAGES; c++) load(c);
    for (size_t c = 0; c < nch; c++) {
        int k = (int)(c % TMA_STAGES);
        unsigned parity = (unsigned)((c / TMA_STAGES) & 1);
        unsigned done = 0;
        while (!done)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                         : "=r"(done) : "r"(smem_u32(&bar[k])), "r"(parity) : "memory");
        unsigned len = (unsigned)std::min<size_t>(TMA_CHUNK, per - c * TMA_CHUNK);
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                     ::"l"(d + c * TMA_CHUNK), "r"(smem_u32(stage + k * TMA_CHUNK)), "r"(len) : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        if (c + TMA_STAGES < nch) {
            asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
            load(c + TMA_STAGES);
        }
    }
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

/* what an idle peer does while it waits on the host for the next phase: V 0 spin
 * ld.acquire.sys, 1 spin ld.relaxed.sys, 2 spin with 2 us __nanosleep between polls */
template <int V> __global__ void spinner(volatile long *flag, long until) {
    long cur;
    do {
        if (V == 0) asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(cur) : "l"(flag) : "memory");
        else asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(cur) : "l"(flag) : "memory");
        if (V == 2) __nanosleep(2000);
    } while (cur != until);
}

/* large put with `active` threads of each block copying (the others idle), unroll U */
template <int U>
__global__ void put_sm_active(int4 *dst, const int4 *src, size_t n_v, unsigned active) {
    size_t chunk = n_v / gridDim.x, base = blockIdx.x * chunk;
    if (threadIdx.x >= active) return;
    const unsigned S = active;
    size_t i = threadIdx.x;
    for (; i + (U - 1) * S < chunk; i += U * S) {
        int4 r[U];
#pragma unroll
        for (int u = 0; u < U; u++) r[u] = src[base + i + u * S];
#pragma unroll
        for (int u = 0; u < U; u++) dst[base + i + u * S] = r[u];
    }
    for (; i < chunk; i += S) dst[base + i] = src[base + i];
}

__global__ void fill(int4 *p, size_t n_v, int seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n_v; i += (size_t)gridDim.x * blockDim.x)
        p[i] = make_int4((int)i, seed, (int)(i * 7), seed ^ (int)i);
}
__global__ void count_bad(const int4 *p, size_t n_v, int seed, unsigned long long *bad) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n_v; i += (size_t)gridDim.x * blockDim.x) {
        int4 v = p[i];
        if (v.x != (int)i || v.y != seed || v.z != (int)(i * 7) || v.w != (seed ^ (int)i)) atomicAdd(bad, 1ull);
    }
}

static float med(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

/* times fn() on device 0 with events: first of 6 dropped, median of 5 (ms) */
template <typename F> static float time0(F fn) {
    CK(cudaSetDevice(0));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> t;
    for (int k = 0; k < 6; k++) {
        CK(cudaEventRecord(a));
        fn();
        CK(cudaEventRecord(b));
        CK(cudaGetLastError());
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (k) t.push_back(ms);
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return med(t);
}

static void check(const void *p, size_t n_v, int seed, const char *what) {
    unsigned long long *bad, h;
    CK(cudaSetDevice(1));
    CK(cudaMalloc(&bad, 8));
    CK(cudaMemset(bad, 0, 8));
    count_bad<<<264, 512>>>((const int4 *)p, n_v, seed, bad);
    CK(cudaMemcpy(&h, bad, 8, cudaMemcpyDeviceToHost));
    CK(cudaFree(bad));
    if (h) { printf("  !! %s: %llu bad vectors\n", what, h); exit(1); }
}

/* Two processes (forked before any CUDA call), one GPU each: is a multi-process NVLink round
 * trip slower than a one-process one, and does the kind of memory matter? Memory kinds:
 * cudaMalloc + IPC handle; VMM exported as a file descriptor (SCM_RIGHTS over a socketpair)
 * and mapped at a driver-chosen address; the same mapped as gshmem lays its heap out (one
 * reservation of 2 windows of 256 GiB, own memory in window 0, the peer's in window 1);
 * mappings of 2 and 64 MiB. The same ping-pong and fetch_add kernels as the one-process
 * table. Nothing is unmapped: the probe is short-lived. */
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
static void send_fd(int sock, int fd) {
    char c = 0;
    struct iovec iov = {&c, 1};
    union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } u;
    struct msghdr m = {};
    m.msg_iov = &iov; m.msg_iovlen = 1; m.msg_control = u.b; m.msg_controllen = sizeof u.b;
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET; cm->cmsg_type = SCM_RIGHTS; cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &fd, sizeof fd);
    if (sendmsg(sock, &m, 0) != 1) { perror("sendmsg"); exit(1); }
}
static int recv_fd(int sock) {
    char c;
    struct iovec iov = {&c, 1};
    union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } u;
    struct msghdr m = {};
    m.msg_iov = &iov; m.msg_iovlen = 1; m.msg_control = u.b; m.msg_controllen = sizeof u.b;
    if (recvmsg(sock, &m, 0) != 1) { perror("recvmsg"); exit(1); }
    int fd;
    memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fd);
    return fd;
}
static void sock_sync(int sock) {
    char go = 1;
    if (write(sock, &go, 1) != 1 || read(sock, &go, 1) != 1) { perror("sync"); exit(1); }
}
enum { TP_IPC, TP_VMM, TP_VMM_LAYOUT, N_TP };
static const char *tp_name[] = {"cudaMalloc+IPC", "VMM fd", "VMM fd, gshmem layout"};
/* returns this process's flag memory and sets *theirs to the peer's, both zeroed */
static long *tp_alloc(int kind, size_t size, int me, int sock, long **theirs) {
    if (kind == TP_IPC) {
        long *mine;
        CK(cudaMalloc(&mine, size));
        CK(cudaMemset(mine, 0, size));
        CK(cudaDeviceSynchronize());
        cudaIpcMemHandle_t h, ph;
        CK(cudaIpcGetMemHandle(&h, mine));
        if (write(sock, &h, sizeof h) != sizeof h || read(sock, &ph, sizeof ph) != sizeof ph) { perror("ipc io"); exit(1); }
        CK(cudaIpcOpenMemHandle((void **)theirs, ph, cudaIpcMemLazyEnablePeerAccess));
        return mine;
    }
    size_t gran;
    CUmemAllocationProp prop = vmm_prop(me, false, &gran);
    CUmemGenericAllocationHandle h, ph;
    CU(cuMemCreate(&h, size, &prop, 0));
    int fd = -1;
    CU(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    int pfd;
    if (me == 0) { send_fd(sock, fd); pfd = recv_fd(sock); }
    else { pfd = recv_fd(sock); send_fd(sock, fd); }
    CU(cuMemImportFromShareableHandle(&ph, (void *)(uintptr_t)pfd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    CUdeviceptr va_m, va_t;
    if (kind == TP_VMM) {
        CU(cuMemAddressReserve(&va_m, size, gran, 0, 0));
        CU(cuMemAddressReserve(&va_t, size, gran, 0, 0));
    } else {
        const unsigned long long W = 256ull << 30;
        CU(cuMemAddressReserve(&va_m, 2 * W, gran, 0, 0));
        va_t = va_m + W;
    }
    CU(cuMemMap(va_m, size, 0, h, 0));
    CU(cuMemMap(va_t, size, 0, ph, 0));
    CUmemAccessDesc acc = {};
    acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    acc.location.id = me;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU(cuMemSetAccess(va_m, size, &acc, 1));
    CU(cuMemSetAccess(va_t, size, &acc, 1));
    CK(cudaMemset((void *)va_m, 0, size));
    CK(cudaDeviceSynchronize());
    *theirs = (long *)va_t;
    return (long *)va_m;
}
static void two_process(void) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) { perror("socketpair"); exit(1); }
    fflush(stdout);
    pid_t pid = fork();
    int me = pid == 0 ? 1 : 0, sock = sv[me];
    close(sv[1 - me]);
    CK(cudaSetDevice(me));
    CU(cuInit(0));
    const int iters = 20000;
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    unsigned long long *out;
    CK(cudaMalloc(&out, 8));
    long seq = 1;
    /* median one-way us of 5 timed launches (one warm-up) of a ping-pong of n round trips,
     * each started by a host rendezvous so both kernels start together */
    auto time_pp = [&](int n, auto launch) {
        std::vector<float> t;
        for (int k = 0; k < 6; k++) {
            sock_sync(sock);
            CK(cudaEventRecord(a));
            launch(n);
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
            seq += n;
            if (k) t.push_back(ms * 1000.f / (2 * n));
        }
        return med(t);
    };
    if (me == 0) printf("two processes: %-24s %6s %10s %10s %10s\n", "memory", "MiB", "pp_acq", "pp_vol", "fadd_rt");
    /* three passes over the kinds, so a warming GPU shows as a trend, not as a kind */
    for (int pass = 0; pass < 3; pass++)
    for (int kind = 0; kind < N_TP; kind++)
    for (size_t mib : {2ul, 64ul}) {
        if (kind == TP_IPC && mib != 2) continue;
        long *theirs, *mine = tp_alloc(kind, mib << 20, me, sock, &theirs);
        float res[2];
        res[0] = time_pp(iters, [&](int n) { pingpong<0><<<1, 1>>>(mine, theirs, seq, n, me == 0); });
        res[1] = time_pp(iters, [&](int n) { pingpong<2><<<1, 1>>>(mine, theirs, seq, n, me == 0); });
        std::vector<float> tf;
        for (int k = 0; k < 6 && me == 0; k++) {
            CK(cudaEventRecord(a));
            fadd_chain<<<1, 1>>>((unsigned long long *)(theirs + 64), 5000, out);
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
            if (k) tf.push_back(ms * 1000.f / 5000);
        }
        if (me == 0) printf("two processes: %-24s %6zu %10.3f %10.3f %10.3f\n", tp_name[kind], mib, res[0], res[1], med(tf));
        sock_sync(sock);
    }
    /* Does the flags' address matter? The same ping-pong with both flags at offset `off` of
     * a 64 MiB mapping in gshmem's layout: lines of one page, pages of one chunk. */
    long *theirs, *mine = tp_alloc(TP_VMM_LAYOUT, 64ull << 20, me, sock, &theirs);
    if (me == 0) printf("two processes: ping-pong one-way by flag offset (us)\n");
    for (size_t step : {512ul, 64ul << 10, 2ul << 20}) {
        if (me == 0) printf("  step %8zu B:", step);
        for (int k = 0; k < 16; k++) {
            size_t off = k * step / sizeof(long);
            float us = time_pp(iters / 4, [&](int n) { pingpong<0><<<1, 1>>>(mine + off, theirs + off, seq, n, me == 0); });
            if (me == 0) printf(" %.3f", us);
        }
        if (me == 0) printf("\n");
    }
    sock_sync(sock);
    /* ... and does it depend on the SM that polls? The last block of grids of G blocks
     * (on both GPUs) runs it, at four flag offsets 4 KiB apart */
    int *sm;
    CK(cudaMalloc(&sm, sizeof(int)));
    if (me == 0) printf("two processes: ping-pong one-way by polling SM (PE0 SM/PE1 SM) and flag offset (us)\n");
    for (int G : {1, 2, 5, 17, 33, 66, 100, 132}) {
        float row[4];
        for (int k = 0; k < 4; k++) {
            size_t off = k * 4096 / sizeof(long);
            row[k] = time_pp(iters / 4, [&](int n) { pingpong_last<<<G, 1>>>(mine + off, theirs + off, seq, n, me == 0, sm); });
        }
        int sms[2];
        CK(cudaMemcpy(&sms[me], sm, sizeof(int), cudaMemcpyDeviceToHost));
        if (write(sock, &sms[me], sizeof(int)) != sizeof(int) || read(sock, &sms[1 - me], sizeof(int)) != sizeof(int)) { perror("sm io"); exit(1); }
        if (me == 0) printf("  G %3d  SM %3d/%3d: %.3f %.3f %.3f %.3f\n", G, sms[0], sms[1], row[0], row[1], row[2], row[3]);
    }
    if (me == 1) _exit(0);
    waitpid(pid, NULL, 0);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1 && !strcmp(argv[1], "--two-process")) { two_process(); return 0; }
    int n;
    CK(cudaGetDeviceCount(&n));
    if (n < 2) { printf("probe_nvlink: needs 2 GPUs\n"); return 0; }
    CU(cuInit(0));
    for (int d = 0; d < 2; d++) {
        CK(cudaSetDevice(d));
        CK(cudaDeviceEnablePeerAccess(1 - d, 0));
        CK(cudaFuncSetAttribute(put_tma, cudaFuncAttributeMaxDynamicSharedMemorySize, TMA_STAGES * TMA_CHUNK));
    }
    const int iters = 20000;
    printf("%-14s %10s %10s %10s %10s %10s\n", "memory", "pp_acq", "pp_rlx", "pp_vol", "ld_chain", "fadd_rt");
    for (int kind = 0; kind < N_MEM; kind++) {
        long *f0 = (long *)alloc_on(kind, 0, 1 << 21), *f1 = (long *)alloc_on(kind, 1, 1 << 21);
        CK(cudaSetDevice(0)); CK(cudaMemset(f0, 0, 1 << 21));
        CK(cudaSetDevice(1)); CK(cudaMemset(f1, 0, 1 << 21));
        CK(cudaDeviceSynchronize());
        cudaStream_t s1;
        CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
        long seq = 1;
        float pp[3];
        for (int V = 0; V < 3; V++) {
            pp[V] = time0([&] {
                CK(cudaSetDevice(1));
                if (V == 0) pingpong<0><<<1, 1, 0, s1>>>(f1, f0, seq, iters, 0);
                if (V == 1) pingpong<1><<<1, 1, 0, s1>>>(f1, f0, seq, iters, 0);
                if (V == 2) pingpong<2><<<1, 1, 0, s1>>>(f1, f0, seq, iters, 0);
                CK(cudaSetDevice(0));
                if (V == 0) pingpong<0><<<1, 1>>>(f0, f1, seq, iters, 1);
                if (V == 1) pingpong<1><<<1, 1>>>(f0, f1, seq, iters, 1);
                if (V == 2) pingpong<2><<<1, 1>>>(f0, f1, seq, iters, 1);
                seq += iters;
            }) * 1000.f / (2 * iters);
            CK(cudaSetDevice(1)); CK(cudaDeviceSynchronize());
        }
        /* chain on PE1's memory read from GPU 0 */
        const int cn = 1 << 16;
        std::vector<long> h(cn);
        for (int i = 0; i < cn; i++) h[i] = (i * 7919L + 1) % cn;
        CK(cudaMemcpy(f1 + 1024, h.data(), cn * sizeof(long), cudaMemcpyDefault));
        long *out;
        CK(cudaSetDevice(0));
        CK(cudaMalloc(&out, 8));
        float ld = time0([&] { chase<<<1, 1>>>(f1 + 1024, 5000, out); }) * 1000.f / 5000;
        float fa = time0([&] { fadd_chain<<<1, 1>>>((unsigned long long *)(f1 + 8), 5000, (unsigned long long *)out); }) * 1000.f / 5000;
        printf("%-14s %10.3f %10.3f %10.3f %10.3f %10.3f   (us)\n", mem_name[kind], pp[0], pp[1], pp[2], ld, fa);
    }

    /* bulk on VMM memory, GPU 0 -> GPU 1 */
    const size_t region = 512ull << 20;
    int4 *src = (int4 *)alloc_on(MEM_VMM, 0, region), *dst = (int4 *)alloc_on(MEM_VMM, 1, region);
    CK(cudaSetDevice(0));
    fill<<<264, 512>>>(src, region / 16, 5);
    CK(cudaDeviceSynchronize());
    printf("\nblock-put per-call overhead (GB/s, reps over 64 slots; sync = trailing __syncthreads)\n");
    printf("%10s %7s %7s %12s %12s\n", "size", "blocks", "threads", "sync", "nosync");
    size_t szs[] = {64 << 10, 256 << 10, 1 << 20};
    int blks[] = {1, 8, 132};
    for (size_t sz : szs)
        for (int nb : blks)
            for (int th : {256, 1024}) {
                size_t nv = sz / 16 / nb * nb;
                int reps = 1000;
                float g[2];
                for (int sy = 0; sy < 2; sy++) {
                    float ms = time0([&] {
                        if (sy) put_reps<1><<<nb, th>>>(dst, src, nv, reps, sz / 16, 64);
                        else put_reps<0><<<nb, th>>>(dst, src, nv, reps, sz / 16, 64);
                    });
                    g[sy] = nv * 16.0 * reps / (ms * 1e-3) / 1e9;
                }
                printf("%10zu %7d %7d %12.1f %12.1f\n", sz, nb, th, g[1], g[0]);
            }

    printf("\nlarge put GB/s (VMM, GPU0 -> GPU1)\n%10s %7s %10s %10s %10s\n", "size", "blocks", "sm_copy", "storeonly", "tma");
    for (size_t sz : {1ull << 20, 4ull << 20, 64ull << 20, 256ull << 20})
        for (int nb : {1, 8, 32, 132, 264}) {
            size_t nv = sz / 16 / nb * nb;
            float a = time0([&] { for (int r = 0; r < 4; r++) put_sm<<<nb, 1024>>>(dst, src, nv); });
            CK(cudaDeviceSynchronize());
            check(dst, nv, 5, "put_sm");
            CK(cudaSetDevice(1)); CK(cudaMemset(dst, 0, sz)); CK(cudaDeviceSynchronize());
            float b = time0([&] { for (int r = 0; r < 4; r++) put_storeonly<<<nb, 1024>>>(dst, nv); });
            float c = time0([&] { for (int r = 0; r < 4; r++) put_tma<<<nb, 32, TMA_STAGES * TMA_CHUNK>>>((char *)dst, (const char *)src, nv * 16); });
            CK(cudaDeviceSynchronize());
            check(dst, nv, 5, "put_tma");
            double bytes = nv * 16.0 * 4;
            printf("%10zu %7d %10.1f %10.1f %10.1f\n", sz, nb, bytes / (a * 1e-3) / 1e9, bytes / (b * 1e-3) / 1e9, bytes / (c * 1e-3) / 1e9);
        }
    printf("\nlarge put 64 MiB, interleaved chunks dealt round-robin to blocks (GB/s)\n%8s %7s %10s %10s\n", "chunk", "blocks", "copy", "storeonly");
    for (size_t chb : {4096ul, 65536ul, 1ul << 20, 0ul, 1ul})
        for (int nb : {32, 132, 264}) {
            /* 0: one slice each (off the 128-byte line for 132 and 264 blocks); 1: one slice
             * each, rounded up to whole lines */
            size_t nv = (64ull << 20) / 16, ch = chb > 1 ? chb / 16 : chb ? (nv / nb + 7) / 8 * 8 : nv / nb;
            float a = time0([&] { for (int r = 0; r < 4; r++) put_interleaved<1><<<nb, 1024>>>(dst, src, nv, ch); });
            CK(cudaDeviceSynchronize());
            check(dst, nv, 5, "put_interleaved");
            float b = time0([&] { for (int r = 0; r < 4; r++) put_interleaved<0><<<nb, 1024>>>(dst, src, nv, ch); });
            double bytes = nv * 16.0 * 4;
            printf("%8zu %7d %10.1f %10.1f\n", chb > 1 ? chb : ch * 16, nb, bytes / (a * 1e-3) / 1e9, bytes / (b * 1e-3) / 1e9);
        }
    printf("\nlarge put 64 MiB, 132 blocks, `active` threads per block copying (GB/s)\n%8s %8s %8s %8s\n", "active", "unroll1", "unroll4", "unroll8");
    for (unsigned act : {128u, 256u, 384u, 512u, 768u, 1024u}) {
        size_t nv = (64ull << 20) / 16 / 132 * 132;
        double bytes = nv * 16.0 * 4;
        float a = time0([&] { for (int r = 0; r < 4; r++) put_sm_active<1><<<132, 1024>>>(dst, src, nv, act); });
        float b = time0([&] { for (int r = 0; r < 4; r++) put_sm_active<4><<<132, 1024>>>(dst, src, nv, act); });
        float c = time0([&] { for (int r = 0; r < 4; r++) put_sm_active<8><<<132, 1024>>>(dst, src, nv, act); });
        printf("%8u %8.1f %8.1f %8.1f\n", act, bytes / (a * 1e-3) / 1e9, bytes / (b * 1e-3) / 1e9, bytes / (c * 1e-3) / 1e9);
    }
    CK(cudaDeviceSynchronize());
    check(dst, (64ull << 20) / 16 / 132 * 132, 5, "put_sm_active");

    /* does a peer spinning on its own memory slow puts into it? */
    printf("\nblock put 64 KiB x 8 blocks x 1024 thr (sync) while GPU1 idles / spins (GB/s)\n");
    {
        long *flag1 = (long *)alloc_on(MEM_VMM, 1, 1 << 21);
        CK(cudaSetDevice(1)); CK(cudaMemset(flag1, 0, 8)); CK(cudaDeviceSynchronize());
        cudaStream_t sp;
        CK(cudaStreamCreateWithFlags(&sp, cudaStreamNonBlocking));
        const char *nm[] = {"idle", "spin acquire.sys", "spin relaxed.sys", "spin+nanosleep"};
        for (int V = -1; V < 3; V++) {
            CK(cudaSetDevice(1));
            if (V == 0) spinner<0><<<1, 1, 0, sp>>>(flag1, 1);
            if (V == 1) spinner<1><<<1, 1, 0, sp>>>(flag1, 1);
            if (V == 2) spinner<2><<<1, 1, 0, sp>>>(flag1, 1);
            size_t nv = (64 << 10) / 16;
            float ms = time0([&] { put_reps<1><<<8, 1024>>>(dst, src, nv, 1000, nv, 64); });
            float ms2 = time0([&] { put_reps<1><<<132, 1024>>>(dst, src, nv, 1000, nv, 64); });
            long one = 1;
            CK(cudaMemcpy(flag1, &one, 8, cudaMemcpyDefault));
            CK(cudaSetDevice(1)); CK(cudaDeviceSynchronize());
            CK(cudaMemset(flag1, 0, 8)); CK(cudaDeviceSynchronize());
            printf("  %-18s 8 blk %7.1f   132 blk %7.1f\n", nm[V + 1], nv * 16.0 * 1000 / (ms * 1e-3) / 1e9, nv * 16.0 * 1000 / (ms2 * 1e-3) / 1e9);
        }
    }
    /* copy engine for reference */
    float ce = time0([&] { for (int r = 0; r < 4; r++) CK(cudaMemcpyAsync(dst, src, 64ull << 20, cudaMemcpyDefault)); });
    printf("copy engine 64 MiB: %.1f GB/s\n", (64ull << 20) * 4.0 / (ce * 1e-3) / 1e9);
    return 0;
}
