/* The symmetric heap: a VA range reserved at the same address B on every PE, backed by
 * physical chunks (CUDA VMM) mapped on demand as collective allocations need them, and an
 * offset allocator that gives every PE the same offsets. Local peers' chunks are mapped by
 * the transports (window slot k at B + k*W), called through their ops table. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "config.h"
#include "cuda_driver.h"
#include "cuda_util.h"
#include "device_state.h"
#include "heap.h"
#include "placement.h"
#include "state.h"
#include "gshmem/device/state.h"

#define MAX_BASE_TRIES 8

static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
static uint64_t pow2_ceil(uint64_t v) {
    uint64_t p = 1;
    while (p < v) p <<= 1;
    return p;
}

static CUmemAllocationProp chunk_prop(int dev) {
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return prop;
}

/* Agree on one base address: PE 0 proposes, everyone reserves there with a fixed-address
 * request, and if any PE got another address the round repeats with a new proposal (PE 0
 * keeps the failed ranges reserved meanwhile so the driver cannot propose them again). */
static gshmemi_status reserve_identical(gshmemi_state *s, uint64_t size) {
    gshmemi_bootstrap *b = &s->boot;
    CUdeviceptr held[MAX_BASE_TRIES];
    int n_held = 0;
    uint64_t hint = gshmemi_cfg.HEAP_BASE;
    uint64_t *cand = malloc((size_t)b->size * sizeof *cand);
    int *ok = malloc((size_t)b->size * sizeof *ok);
    gshmemi_status st = GSHMEM_ERR_NO_MEMORY;
    if (!cand || !ok) goto out;
    for (int attempt = 0; attempt < MAX_BASE_TRIES; attempt++) {
        CUdeviceptr p = 0;
        uint64_t mine = 0;
        if (b->rank == 0) {
            /* aligned to the window (a power of two), so gshmem_align's offsets are aligned
             * addresses too, for any alignment up to W */
            GSHMEMI_CHECK_GOTO(gshmemi_cu_check(cuMemAddressReserve(&p, size, s->heap.window,
                                                                    (CUdeviceptr)hint, 0),
                                                "cuMemAddressReserve", __FILE__, __LINE__),
                               st, out);
            mine = p;
        }
        GSHMEMI_CHECK_GOTO(b->ops->allgather(b, &mine, cand, sizeof mine), st, out);
        uint64_t base = cand[0];
        int my_ok = 1;
        if (b->rank != 0) {
            CUresult r = cuMemAddressReserve(&p, size, s->heap.granularity, (CUdeviceptr)base, 0);
            my_ok = r == CUDA_SUCCESS && p == base;
            if (r == CUDA_SUCCESS && !my_ok) cuMemAddressFree(p, size);
        }
        GSHMEMI_CHECK_GOTO(b->ops->allgather(b, &my_ok, ok, sizeof my_ok), st, out);
        int all = 1;
        for (int r = 0; r < b->size; r++) all &= ok[r];
        if (all) {
            s->heap.base = (char *)(uintptr_t)base;
            st = GSHMEM_SUCCESS;
            goto out;
        }
        gshmemi_info("heap base %#llx not free on every PE; trying another",
                     (unsigned long long)base);
        if (b->rank == 0) held[n_held++] = p;
        else if (my_ok) cuMemAddressFree(p, size);
        hint = 0;
    }
    gshmemi_error("could not reserve the symmetric heap (%llu GiB of addresses) at one address "
                  "on every PE after %d tries; set GSHMEM_HEAP_BASE to a free address or lower "
                  "GSHMEM_HEAP_MAX", (unsigned long long)(size >> 30), MAX_BASE_TRIES);
    st = GSHMEM_ERR_NO_MEMORY;
out:
    for (int i = 0; i < n_held; i++) cuMemAddressFree(held[i], size);
    free(cand);
    free(ok);
    return st;
}

gshmemi_status gshmemi_heap_init(gshmemi_state *s) {
    gshmemi_heap *h = &s->heap;
    CUdevice dev;
    GSHMEMI_CU(cuDeviceGet(&dev, s->cuda_dev));
    h->cu_device = dev;
    CUmemAllocationProp prop = chunk_prop(dev);
    size_t gran = 0;
    GSHMEMI_CU(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    h->granularity = gran;
    size_t total = 0;
    GSHMEMI_CU(cuDeviceTotalMem(&total, dev));
    /* A window larger than what one PE may map can never fill: W is the next power of two
     * of a PE's part of its GPU's memory (all of it for a GPU of its own, 1/k of it for k PEs
     * sharing one, GSHMEM_HEAP_MAX when set), the largest over the job, so W is one number
     * everywhere (placement.c). The cap divides the GPU the same way, so no PE can starve
     * a neighbour on its GPU unless GSHMEM_HEAP_MAX says so. */
    h->window = gshmemi_place.heap_window ? gshmemi_place.heap_window : pow2_ceil(total);
    uint64_t part = total / (uint64_t)(gshmemi_place.gpu_pes > 0 ? gshmemi_place.gpu_pes : 1);
    h->cap = gshmemi_cfg.HEAP_MAX ? round_up(gshmemi_cfg.HEAP_MAX, gran) : part / gran * gran;
    if (h->cap > h->window) h->cap = h->window;
    /* Every PE reserves as many windows as the largest node has PEs, so all ranges match. */
    int most_local = 1;
    for (int r = 0; r < s->npes; r++) {
        int l = s->boot.local_rank_of[r] + 1;
        if (l > most_local) most_local = l;
    }
    h->n_windows = most_local;
    h->reserved = h->window * (uint64_t)most_local;
    GSHMEMI_CHECK(reserve_identical(s, h->reserved));
    gshmemi_alloc_init(&h->alloc);
    h->reg_low = h->window;
    gshmemi_info("heap at %p: window %llu GiB x %d, cap %llu MiB, granularity %zu KiB",
                 (void *)h->base, (unsigned long long)(h->window >> 30), h->n_windows,
                 (unsigned long long)(h->cap >> 20), gran >> 10);
    return GSHMEM_SUCCESS;
}

static void unmap_own(gshmemi_heap *h, const gshmemi_chunk *c) {
    cuMemUnmap((CUdeviceptr)(h->base + c->off), c->size);
    cuMemRelease((CUmemGenericAllocationHandle)c->handle);
}

static gshmemi_status map_own(gshmemi_heap *h, uint64_t off, uint64_t size, gshmemi_chunk *c) {
    CUmemAllocationProp prop = chunk_prop(h->cu_device);
    CUmemGenericAllocationHandle handle;
    CUresult r = cuMemCreate(&handle, size, &prop, 0);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) return GSHMEM_ERR_NO_MEMORY;
    GSHMEMI_CU(r);
    CUdeviceptr va = (CUdeviceptr)(h->base + off);
    r = cuMemMap(va, size, 0, handle, 0);
    if (r != CUDA_SUCCESS) {
        cuMemRelease(handle);
        GSHMEMI_CU(r);
    }
    CUmemAccessDesc acc = {.location = prop.location, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    r = cuMemSetAccess(va, size, &acc, 1);
    if (r != CUDA_SUCCESS) {
        cuMemUnmap(va, size);
        cuMemRelease(handle);
        GSHMEMI_CU(r);
    }
    *c = (gshmemi_chunk){.off = off, .size = size, .handle = (unsigned long long)handle};
    return GSHMEM_SUCCESS;
}

static void report_exhausted(const gshmemi_state *s, uint64_t size, const char *call,
                             const char *why) {
    const gshmemi_heap *h = &s->heap;
    size_t free_b = 0, total_b = 0;
    cuMemGetInfo(&free_b, &total_b);
    gshmemi_error("%s(%llu bytes): symmetric heap cannot grow (%s): %.1f MiB in use by the "
                  "program + %.1f MiB by gshmem, %.1f MiB mapped, cap %.1f MiB "
                  "(GSHMEM_HEAP_MAX), %.1f MiB of device memory free. Free symmetric objects "
                  "you no longer need, or raise GSHMEM_HEAP_MAX.",
                  call, (unsigned long long)size, why,
                  (h->alloc.in_use - h->internal_bytes) / 1048576.0, h->internal_bytes / 1048576.0,
                  h->mapped / 1048576.0, h->cap / 1048576.0, free_b / 1048576.0);
    const gshmemi_placement *p = &gshmemi_place;
    if (p->gpu_pes <= 1) return;
    /* the heap is symmetric: every PE on this GPU has mapped as much as this one */
    char pes[256];
    gshmemi_place_gpu_pes(pes, sizeof pes, ", ");
    gshmemi_error("%s: GPU %d is shared by PEs %s: their heaps hold %.1f MiB of its memory "
                  "together (%.1f MiB each; each may map at most %.1f MiB, 1/%d of the GPU, "
                  "unless GSHMEM_HEAP_MAX says otherwise); run fewer PEs per GPU for more",
                  call, p->device, pes, p->gpu_pes * (h->mapped / 1048576.0),
                  h->mapped / 1048576.0, h->cap / 1048576.0, p->gpu_pes);
}

/* Collective: map one more chunk of at least `need` bytes at the end of the mapped range.
 * Chunks double (geometric growth) so a job that allocates a lot maps few chunks, and start
 * at GSHMEM_HEAP_CHUNK_MIN so a small job pins little. All PEs agree before anyone uses it:
 * if any PE failed to get memory, all undo. */
static gshmemi_status grow(gshmemi_state *s, uint64_t need, uint64_t req, const char *call) {
    gshmemi_heap *h = &s->heap;
    uint64_t want = need;
    if (want < h->mapped) want = h->mapped;
    if (want < gshmemi_cfg.HEAP_CHUNK_MIN) want = gshmemi_cfg.HEAP_CHUNK_MIN;
    want = round_up(want, h->granularity);
    need = round_up(need, h->granularity);
    uint64_t limit = gshmemi_heap_limit(h);
    if (h->mapped + want > limit) want = limit - h->mapped;  /* shrink growth to the cap */
    int failed = 0;
    gshmemi_chunk c = {0};
    if (want < need || h->mapped + need > limit) failed = 2;
    else {
        gshmemi_status st = map_own(h, h->mapped, want, &c);
        /* out of device memory with a big doubling: retry with just what is needed */
        if (st == GSHMEM_ERR_NO_MEMORY && want > need) {
            want = need;
            st = map_own(h, h->mapped, want, &c);
        }
        if (st == GSHMEM_ERR_NO_MEMORY) failed = 1;
        else GSHMEMI_CHECK(st);
    }
    int *all = malloc((size_t)s->npes * sizeof *all);
    if (!all) return GSHMEM_ERR_NO_MEMORY;
    gshmemi_status st = s->boot.ops->allgather(&s->boot, &failed, all, sizeof failed);
    int any = 0;
    for (int r = 0; st == GSHMEM_SUCCESS && r < s->npes; r++) any |= all[r];
    free(all);
    if (st != GSHMEM_SUCCESS || any) {
        if (!failed) unmap_own(h, &c);
        if (st == GSHMEM_SUCCESS)
            report_exhausted(s, req, call, failed == 2 ? "cap reached" :
                             failed == 1 ? "this GPU is out of memory" : "another PE is out of memory");
        return st != GSHMEM_SUCCESS ? st : GSHMEM_ERR_NO_MEMORY;
    }
    gshmemi_chunk *nc = gshmemi_grow(h->chunks, h->n_chunks, &h->chunks_cap, sizeof *nc, 16);
    if (!nc) return GSHMEM_ERR_NO_MEMORY;
    h->chunks = nc;
    h->chunks[h->n_chunks++] = c;
    h->mapped += want;
    if (!gshmemi_alloc_grow(&h->alloc, h->mapped)) return GSHMEM_ERR_NO_MEMORY;
    for (int t = 0; t < s->n_transports; t++)
        if (s->transports[t]->chunk_added)
            GSHMEMI_CHECK(s->transports[t]->chunk_added(s, s->tctx[t], &c));
    gshmemi_info("heap grew by %llu MiB to %llu MiB (%d chunks)", (unsigned long long)(want >> 20),
                 (unsigned long long)(h->mapped >> 20), h->n_chunks);
    if (s->dstate && gshmemi_cfg.DEBUG >= 2) {
        /* only the debug range check reads heap_mapped on the device; republishing
         * otherwise would wait (legacy stream) on kernels that may be waiting for us. With user
         * buffers registered above the heap (symreg.c) the check covers the whole window. */
        ((gshmemi_device_state *)s->dstate)->heap_mapped = h->n_regs ? h->window : h->mapped;
        GSHMEMI_CHECK(gshmemi_device_state_publish(s));
    }
    return GSHMEM_SUCCESS;
}

/* Every PE must make the same call: the allgather checks that, and is the barrier
 * OpenSHMEM requires at the end of shmem_malloc/shmem_free. */
typedef struct { uint64_t a, b, c; } triple;
gshmemi_status gshmemi_heap_agree(gshmemi_state *s, uint64_t a, uint64_t b, uint64_t c,
                                  const char *call, const char *what) {
    triple mine = {a, b, c};
    triple *all = malloc((size_t)s->npes * sizeof *all);
    if (!all) return GSHMEM_ERR_NO_MEMORY;
    gshmemi_status st = s->boot.ops->allgather(&s->boot, &mine, all, sizeof mine);
    for (int r = 0; st == GSHMEM_SUCCESS && r < s->npes; r++) {
        if (all[r].a != mine.a || all[r].b != mine.b || all[r].c != mine.c) {
            gshmemi_error("%s is collective and PE %d called it with different arguments: %s "
                          "%llu/%llu/%#llx here, %llu/%llu/%#llx on PE %d. Every PE must make "
                          "the same symmetric allocations in the same order.",
                          call, r, what, (unsigned long long)mine.a, (unsigned long long)mine.b,
                          (unsigned long long)mine.c, (unsigned long long)all[r].a,
                          (unsigned long long)all[r].b, (unsigned long long)all[r].c, r);
            st = GSHMEM_ERR_INVALID_ARG;
        }
    }
    free(all);
    return st;
}

gshmemi_status gshmemi_heap_alloc(gshmemi_state *s, size_t size, size_t align, bool internal,
                                  void **out, const char *call) {
    gshmemi_heap *h = &s->heap;
    *out = NULL;
    if (align == 0 || (align & (align - 1))) {
        gshmemi_error("%s: alignment %zu is not a power of two", call, align);
        return GSHMEM_ERR_INVALID_ARG;
    }
    GSHMEMI_CHECK(gshmemi_heap_agree(s, size, align, 0, call, "size/alignment/-"));
    uint64_t off = 0, need = 0;
    while (!gshmemi_alloc_alloc(&h->alloc, size, align, &off, &need)) {
        if (need == 0 || h->mapped + need > gshmemi_heap_limit(h)) {
            report_exhausted(s, size, call, "cap reached");
            return GSHMEM_ERR_NO_MEMORY;
        }
        GSHMEMI_CHECK(grow(s, need, size, call));
    }
    if (internal) h->internal_bytes += gshmemi_alloc_size(&h->alloc, off);
    *out = h->base + off;
    return GSHMEM_SUCCESS;
}

gshmemi_status gshmemi_heap_free(gshmemi_state *s, void *ptr, const char *call) {
    gshmemi_heap *h = &s->heap;
    uint64_t off = (uint64_t)((char *)ptr - h->base);
    bool inside = gshmemi_heap_contains(h, ptr);
    int known = inside && gshmemi_alloc_size(&h->alloc, off) != 0;
    if (!inside) {   /* caught before the collective check: foreign pointers differ per PE */
        gshmemi_error("%s(%p): pointer is not from the symmetric heap (gshmem_malloc)", call, ptr);
        return GSHMEM_ERR_INVALID_ARG;
    }
    GSHMEMI_CHECK(gshmemi_heap_agree(s, (uint64_t)(uintptr_t)ptr, 0, 0, call, "pointer/-/-"));
    if (!known) {
        gshmemi_error("%s(%p): not the start of a live symmetric allocation (freed twice, or a "
                      "pointer into the middle of an object?)", call, ptr);
        return GSHMEM_ERR_INVALID_ARG;
    }
    gshmemi_alloc_free(&h->alloc, off);
    return GSHMEM_SUCCESS;
}

void gshmemi_heap_finalize(gshmemi_state *s) {
    gshmemi_heap *h = &s->heap;
    for (int i = 0; i < h->n_chunks; i++) unmap_own(h, &h->chunks[i]);
    if (h->base) cuMemAddressFree((CUdeviceptr)h->base, h->reserved);
    gshmemi_alloc_destroy(&h->alloc);
    free(h->chunks);
    memset(h, 0, sizeof *h);
}

/* ---- device memory of this PE alone ----------------------------------------------------- */
/* Made like the heap's chunks, outside the heap: VMM memory mapped for this GPU, which every
 * CUDA context of the process on it reaches (a remote transport's own context places data
 * there). */
gshmemi_status gshmemi_local_mem_alloc(gshmemi_state *s, size_t size, gshmemi_local_mem *m, const char *call) {
    CUmemAllocationProp prop = chunk_prop(s->heap.cu_device);
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
    size_t g = 0;
    GSHMEMI_CU(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    memset(m, 0, sizeof *m);
    uint64_t bytes = round_up(size ? size : 1, g);
    CUmemGenericAllocationHandle handle;
    CUresult r = cuMemCreate(&handle, bytes, &prop, 0);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
        gshmemi_error("%s on PE %d: no GPU memory left for %llu bytes", call, s->mype, (unsigned long long)bytes);
        return GSHMEM_ERR_NO_MEMORY;
    }
    GSHMEMI_CU(r);
    CUdeviceptr va = 0;
    r = cuMemAddressReserve(&va, bytes, 0, 0, 0);
    if (r == CUDA_SUCCESS) {
        r = cuMemMap(va, bytes, 0, handle, 0);
        if (r != CUDA_SUCCESS) cuMemAddressFree(va, bytes);
    }
    if (r != CUDA_SUCCESS) {
        cuMemRelease(handle);
        GSHMEMI_CU(r);
    }
    CUmemAccessDesc acc = {.location = prop.location, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    r = cuMemSetAccess(va, bytes, &acc, 1);
    *m = (gshmemi_local_mem){.ptr = (void *)va, .size = bytes, .handle = (unsigned long long)handle};
    if (r != CUDA_SUCCESS) gshmemi_local_mem_free(s, m);
    GSHMEMI_CU(r);
    /* the transports that reach only registered memory register it (transport.h) */
    for (int t = 0; t < s->n_transports; t++) {
        if (!s->transports[t]->local_added) continue;
        const gshmemi_status st = s->transports[t]->local_added(s, s->tctx[t], m->ptr, m->size, call);
        if (st != GSHMEM_SUCCESS) {
            for (int u = 0; u < t; u++)
                if (s->transports[u]->local_removed) s->transports[u]->local_removed(s, s->tctx[u], m->ptr);
            gshmemi_local_mem_free(NULL, m);
            return st;
        }
    }
    m->registered = true;
    return GSHMEM_SUCCESS;
}

void gshmemi_local_mem_free(gshmemi_state *s, gshmemi_local_mem *m) {
    if (!m->ptr) return;
    for (int t = 0; s && m->registered && t < s->n_transports; t++)
        if (s->transports[t]->local_removed) s->transports[t]->local_removed(s, s->tctx[t], m->ptr);
    cuMemUnmap((CUdeviceptr)m->ptr, m->size);
    cuMemAddressFree((CUdeviceptr)m->ptr, m->size);
    cuMemRelease((CUmemGenericAllocationHandle)m->handle);
    memset(m, 0, sizeof *m);
}

/* ---- public heap API ------------------------------------------------------------------ */
#include "gshmem.h"

static void *public_alloc(size_t size, size_t align, const char *call) {
    if (!gshmemi_g.initialized) {
        gshmemi_error("%s: called before gshmem_init; call gshmem_init() first", call);
        return NULL;
    }
    void *p = NULL;
    gshmemi_status st = gshmemi_heap_alloc(&gshmemi_g, size, align, false, &p, call);
    if (st == GSHMEM_ERR_NO_MEMORY || st == GSHMEM_ERR_INVALID_ARG) return NULL;
    if (st != GSHMEM_SUCCESS) gshmemi_fatal("%s(%zu) failed: %s", call, size, gshmemi_status_str(st));
    return p;
}

void *gshmem_malloc(size_t size) {
    if (size == 0) return NULL;
    return public_alloc(size, GSHMEMI_ALLOC_MIN_ALIGN, "gshmem_malloc");
}

void *gshmem_align(size_t alignment, size_t size) {
    if (size == 0) return NULL;
    return public_alloc(size, alignment, "gshmem_align");
}

void *gshmem_calloc(size_t count, size_t size) {
    if (count == 0 || size == 0) return NULL;
    if (size > SIZE_MAX / count) {
        gshmemi_error("gshmem_calloc(%zu, %zu): size overflows", count, size);
        return NULL;
    }
    void *p = public_alloc(count * size, GSHMEMI_ALLOC_MIN_ALIGN, "gshmem_calloc");
    if (!p) return NULL;
    cudaStream_t st = (cudaStream_t)gshmemi_g.stream;
    if (gshmemi_cuda_check(cudaMemsetAsync(p, 0, count * size, st), "cudaMemsetAsync", __FILE__, __LINE__) ||
        gshmemi_cuda_check(cudaStreamSynchronize(st), "cudaStreamSynchronize", __FILE__, __LINE__))
        gshmemi_fatal("gshmem_calloc(%zu, %zu): zeroing failed", count, size);
    /* every PE's zeroing must finish before any PE may put into the new object */
    if (gshmemi_g.boot.ops->barrier(&gshmemi_g.boot) != GSHMEM_SUCCESS)
        gshmemi_fatal("gshmem_calloc(%zu, %zu): barrier with the other PEs failed", count, size);
    return p;
}

void gshmem_free(void *ptr) {
    if (!ptr) return;
    if (!gshmemi_g.initialized) {
        gshmemi_error("gshmem_free(%p): called before gshmem_init or after gshmem_finalize", ptr);
        return;
    }
    /* in-flight work on our stream may still touch the object */
    cudaStreamSynchronize((cudaStream_t)gshmemi_g.stream);
    gshmemi_status st = gshmemi_heap_free(&gshmemi_g, ptr, "gshmem_free");
    if (st != GSHMEM_SUCCESS) gshmemi_fatal("gshmem_free(%p) failed: %s", ptr, gshmemi_status_str(st));
}

int gshmemx_heap_info(gshmemx_heap_info_t *info) {
    GSHMEMI_REQUIRE_INIT("gshmemx_heap_info");
    if (!info) return GSHMEM_ERR_INVALID_ARG;
    const gshmemi_heap *h = &gshmemi_g.heap;
    info->base = h->base;
    info->reserved = h->reserved;
    info->mapped = h->mapped;
    info->internal = h->internal_bytes;
    info->in_use = h->alloc.in_use - h->internal_bytes;
    info->cap = h->cap;
    info->n_chunks = h->n_chunks;
    return GSHMEM_SUCCESS;
}
