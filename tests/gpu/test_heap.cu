/* Proves the symmetric heap: the same sequence of allocations gives the same address on
 * every PE (including under 2000 random malloc/free steps); the heap grows on demand past
 * its first chunk and peers reach the new memory; calloc zeroes; align aligns; gshmem_ptr
 * and addr_accessible tell the truth; heap_info adds up. */
#include "common.h"

/* Every PE sends its value to PE 0; PE 0 checks they are all equal. Collective. */
static void expect_same_everywhere(uint64_t v, const char *what) {
    static uint64_t *all;
    int np = gshmem_n_pes(), me = gshmem_my_pe();
    if (!all) all = (uint64_t *)gshmem_malloc(64 * sizeof(uint64_t) * 64);
    gshmem_putmem(all + me, &v, sizeof v, 0);
    gshmem_barrier_all();
    if (me == 0) {
        uint64_t got[64];
        CK(cudaMemcpy(got, all, np * sizeof v, cudaMemcpyDeviceToHost));
        for (int pe = 0; pe < np; pe++)
            EXPECT(got[pe] == v, "%s: PE 0 has %#llx, PE %d has %#llx", what,
                   (unsigned long long)v, pe, (unsigned long long)got[pe]);
    }
    gshmem_barrier_all();
}

__global__ void write_through_ptr(int *obj, size_t n, int pe, int tag) {
    int *p = (int *)gshmem_ptr(obj, pe);
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = tag + (int)i;
}
__global__ void fill_tag(int *p, size_t n, int tag) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = tag + (int)i;
}
__global__ void count_bad(const int *obj, size_t n, int tag, unsigned long long *bad) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        if (obj[i] != tag + (int)i) atomicAdd(bad, 1ull);
}
__global__ void count_nonzero(const uint8_t *p, size_t n, unsigned long long *bad) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        if (p[i]) atomicAdd(bad, 1ull);
}

int main(void) {
    gshmem_init();
    int me = gshmem_my_pe(), np = gshmem_n_pes();
    int next = (me + 1) % np, prev = (me + np - 1) % np;
    uint64_t seed = agree_seed(), rng = seed | 1;
    unsigned long long *bad;
    CK(cudaHostAlloc((void **)&bad, sizeof *bad, cudaHostAllocMapped));

    gshmemx_heap_info_t h0;
    EXPECT(gshmemx_heap_info(&h0) == 0, "heap_info failed");
    expect_same_everywhere((uint64_t)(uintptr_t)h0.base, "heap base");
    EXPECT(h0.mapped <= (64u << 20), "a fresh heap maps %zu bytes; small jobs should pin little", h0.mapped);

    /* growth: 12 x 40 MiB forces several chunks beyond the first */
    void *objs[12];
    for (int i = 0; i < 12; i++) {
        objs[i] = gshmem_malloc(40u << 20);
        EXPECT(objs[i] != NULL, "gshmem_malloc(40 MiB) #%d returned NULL", i);
        expect_same_everywhere((uint64_t)(uintptr_t)objs[i], "address of a 40 MiB object");
    }
    gshmemx_heap_info_t h1;
    gshmemx_heap_info(&h1);
    EXPECT(h1.mapped >= 12 * (40u << 20) && h1.n_chunks > 1,
           "after 480 MiB of allocations: mapped %zu, %d chunks", h1.mapped, h1.n_chunks);
    EXPECT(h1.in_use >= 12 * (40u << 20), "in_use %zu < 480 MiB", h1.in_use);
    printf("PE %d heap: base %p reserved %zu GiB mapped %zu MiB in use %zu MiB internal %zu B chunks %d\n",
           me, h1.base, h1.reserved >> 30, h1.mapped >> 20, h1.in_use >> 20, h1.internal, h1.n_chunks);
    /* peers reach every chunk: write next's objects through gshmem_ptr (a PE of another node:
     * a local copy, then one 40 MiB host put through the remote transport), check locally */
    bool remote_next = test_is_remote(me, next, np);
    int *stage = NULL;
    if (remote_next) CK(cudaMalloc((void **)&stage, 40u << 20));
    for (int i = 0; i < 12; i += 11) {
        size_t n = (40u << 20) / sizeof(int);
        if (remote_next) {
            fill_tag<<<132, 512>>>(stage, n, me * 1000 + i);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            gshmem_putmem(objs[i], stage, 40u << 20, next);
        } else {
            write_through_ptr<<<132, 512>>>((int *)objs[i], n, next, me * 1000 + i);
            CK(cudaGetLastError());
        }
        CK(cudaDeviceSynchronize());
        gshmem_barrier_all();
        *bad = 0;
        count_bad<<<132, 512>>>((int *)objs[i], n, prev * 1000 + i, bad);
        CK(cudaDeviceSynchronize());
        EXPECT(*bad == 0, "object %d written by PE %d through gshmem_ptr: %llu wrong ints", i, prev, *bad);
        gshmem_barrier_all();
    }
    EXPECT(gshmem_ptr(objs[0], me) == objs[0], "gshmem_ptr(x, me) != x");
    cudaFree(stage);
    if (remote_next) EXPECT(gshmem_ptr(objs[0], next) == NULL, "gshmem_ptr to a PE of another node is not NULL");
    else EXPECT(np == 1 || gshmem_ptr(objs[0], next) != NULL, "gshmem_ptr to a NVLink peer is NULL");
    EXPECT(gshmem_ptr(objs[0], np) == NULL, "gshmem_ptr to PE n_pes is not NULL");
    EXPECT(gshmem_addr_accessible(objs[3], next), "addr_accessible(heap object, peer) is false");
    void *plain;
    CK(cudaMalloc(&plain, 256));
    EXPECT(!gshmem_addr_accessible(plain, next), "addr_accessible(cudaMalloc memory) is true");
    EXPECT(gshmem_ptr(plain, next) == NULL, "gshmem_ptr(cudaMalloc memory) is not NULL");
    cudaFree(plain);
    for (int i = 0; i < 12; i++) gshmem_free(objs[i]);

    /* churn: random sizes, random frees, same sequence everywhere -> same addresses */
    void *live[64] = {0};
    for (int step = 0; step < 2000; step++) {
        int k = (int)(rng_next(&rng) % 64);
        if (live[k]) {
            gshmem_free(live[k]);
            live[k] = NULL;
        } else {
            size_t sz = 1 + rng_next(&rng) % (1u << (rng_next(&rng) % 22));
            live[k] = gshmem_malloc(sz);
            EXPECT(live[k] != NULL, "churn step %d: malloc(%zu) failed", step, sz);
            if (step % 97 == 0) expect_same_everywhere((uint64_t)(uintptr_t)live[k], "churn address");
        }
    }
    for (int k = 0; k < 64; k++) gshmem_free(live[k]);
    gshmemx_heap_info_t h2;
    gshmemx_heap_info(&h2);
    EXPECT(h2.in_use <= h0.in_use + 64 * 64 * sizeof(uint64_t) + 4096,
           "after freeing everything, in_use is %zu (started at %zu)", h2.in_use, h0.in_use);
    /* the freed space is reused: a 400 MiB object fits without growing */
    void *big = gshmem_malloc(400u << 20);
    gshmemx_heap_info_t h3;
    gshmemx_heap_info(&h3);
    EXPECT(big && h3.mapped == h2.mapped, "400 MiB after freeing 480 MiB grew the heap %zu -> %zu",
           h2.mapped, h3.mapped);
    gshmem_free(big);

    /* calloc zeroes (on reused memory that held data), align aligns */
    uint8_t *dirty = (uint8_t *)gshmem_malloc(1u << 20);
    fill_byte<<<64, 256>>>(dirty, 1u << 20, 0x5a);
    CK(cudaDeviceSynchronize());
    gshmem_free(dirty);
    uint8_t *z = (uint8_t *)gshmem_calloc(1u << 18, 4);
    *bad = 0;
    count_nonzero<<<64, 256>>>(z, 1u << 20, bad);
    CK(cudaDeviceSynchronize());
    EXPECT(z && *bad == 0, "gshmem_calloc returned %llu non-zero bytes", *bad);
    gshmem_free(z);
    for (int sh = 8; sh <= 26; sh += 3) {
        void *a = gshmem_align((size_t)1 << sh, 100);
        EXPECT(a && ((uintptr_t)a & (((uintptr_t)1 << sh) - 1)) == 0, "gshmem_align(2^%d) gave %p", sh, a);
        expect_same_everywhere((uint64_t)(uintptr_t)a, "aligned address");
        gshmem_free(a);
    }
    EXPECT(gshmem_malloc(0) == NULL, "gshmem_malloc(0) is not NULL");
    cudaFreeHost(bad);
    int rc = summary("test_heap");
    gshmem_finalize();
    return rc;
}
