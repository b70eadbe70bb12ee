/* User buffers registered with gshmem. Symmetric (gshmemx_buffer_register_symmetric): the
 * heap's design is one virtual range at the same address on every PE, with local peer k's
 * memory at slot k of it; a user's own allocation cannot move to that address, but its
 * physical memory can be mapped there too. Every PE passes a CUDA VMM allocation (cuMemCreate
 * + cuMemMap) of the same size; gshmem maps it a second time at one offset of the heap's
 * window, the same on every PE (taken from the top of the window down, while the heap grows
 * from the bottom), and the transports map the peers' at their slots, exactly as for a heap
 * chunk. The call returns that address: symmetric like gshmem_malloc's, aliasing the user's
 * buffer. Local (gshmemx_buffer_register): memory of this PE that RMA calls use as their local
 * side; load/store transports need nothing, so gshmem checks it, pins host memory that is
 * not pinned, and keeps the list that unregister checks against. */
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
#include "state.h"
#include "gshmem/device/state.h"
#include "gshmemx.h"

static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* The highest offset below the window (aligned to `align`) where `size` bytes overlap no
 * registration and stay above the mapped heap; the lists are alike on every PE, so is the
 * answer. 0 when none. */
static uint64_t place(const gshmemi_heap *h, uint64_t size, uint64_t align) {
    if (size > h->window) return 0;
    uint64_t cand = (h->window - size) / align * align;
    for (int moved = 1; moved;) {
        moved = 0;
        for (int i = 0; i < h->n_regs; i++) {
            const gshmemi_symreg *r = &h->regs[i];
            if (cand < r->off + r->size && r->off < cand + size) {
                if (r->off < size) return 0;
                cand = (r->off - size) / align * align;
                moved = 1;
            }
        }
    }
    return cand >= h->mapped && cand > 0 ? cand : 0;
}

/* Only the debug range check (GSHMEM_DEBUG=2) reads heap_mapped on the device: with buffers
 * registered above the heap it covers the whole window. */
static gshmemi_status republish_range(gshmemi_state *s) {
    if (!s->dstate || gshmemi_cfg.DEBUG < 2) return GSHMEM_SUCCESS;
    gshmemi_device_state *d = s->dstate;
    d->heap_mapped = s->heap.n_regs ? s->heap.window : s->heap.mapped;
    return gshmemi_device_state_publish(s);
}

/* The user's allocation behind buf: retained handle, after the checks that it can be mapped
 * here and by the peers. */
static gshmemi_status user_allocation(gshmemi_state *s, void *buf, size_t size, const char *call,
                                      CUmemGenericAllocationHandle *handle, uint64_t *gran) {
    CUresult r = cuMemRetainAllocationHandle(handle, buf);
    if (r != CUDA_SUCCESS) {
        gshmemi_error("%s(%p, %zu) on PE %d: the buffer is not CUDA VMM memory (%s); make it with "
                      "cuMemCreate (requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) "
                      "+ cuMemAddressReserve + cuMemMap, or allocate with gshmem_malloc", call, buf,
                      size, s->mype, gshmemi_driver_error_name(r));
        return GSHMEM_ERR_INVALID_ARG;
    }
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    r = cuMemGetAllocationPropertiesFromHandle(&prop, *handle);
    size_t g = 0;
    if (r == CUDA_SUCCESS) r = cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    const char *why = NULL;
    if (r != CUDA_SUCCESS) why = gshmemi_driver_error_name(r);
    else if (prop.location.type != CU_MEM_LOCATION_TYPE_DEVICE || prop.location.id != s->cuda_dev)
        why = "it is not memory of this PE's GPU";
    else if (s->boot.local_size > 1 &&
             !(prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
        why = "it was created without CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR in "
              "requestedHandleTypes, so the other PEs of this node cannot map it";
    else if (size % g)
        why = "its size is not a multiple of the allocation granularity";
    if (why) {
        gshmemi_error("%s(%p, %zu) on PE %d (GPU %d): %s (granularity %zu); the buffer must be the "
                      "start of one cuMemCreate allocation of at least size bytes on this PE's GPU",
                      call, buf, size, s->mype, s->cuda_dev, why, g);
        cuMemRelease(*handle);
        return GSHMEM_ERR_INVALID_ARG;
    }
    *gran = g;
    return GSHMEM_SUCCESS;
}

static gshmemi_status map_here(gshmemi_state *s, uint64_t off, uint64_t size,
                               CUmemGenericAllocationHandle handle) {
    CUdeviceptr va = (CUdeviceptr)(s->heap.base + off);
    GSHMEMI_CU(cuMemMap(va, size, 0, handle, 0));
    CUmemAccessDesc acc = {.location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = s->heap.cu_device},
                           .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CUresult r = cuMemSetAccess(va, size, &acc, 1);
    if (r != CUDA_SUCCESS) {
        cuMemUnmap(va, size);
        GSHMEMI_CU(r);
    }
    return GSHMEM_SUCCESS;
}

static gshmemi_status register_symmetric(gshmemi_state *s, void *buf, size_t size, void **out,
                                         const char *call) {
    gshmemi_heap *h = &s->heap;
    if (s->has_remote) {
        gshmemi_error("%s: PE %d has peers on other nodes, whose transport reaches the symmetric "
                      "heap only; allocate the buffer with gshmem_malloc instead", call, s->mype);
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    CUmemGenericAllocationHandle handle;
    uint64_t g = 0;
    gshmemi_status mine = user_allocation(s, buf, size, call, &handle, &g);
    /* every PE learns whether all could register, so none is left in a collective alone */
    gshmemi_status st = gshmemi_heap_agree(s, size, 0, 0, call, "size/-/-");
    int *ok = malloc((size_t)s->npes * sizeof *ok), good = mine == GSHMEM_SUCCESS, all = 1;
    uint64_t *grans = malloc((size_t)s->npes * sizeof *grans);
    if (!ok || !grans) st = GSHMEM_ERR_NO_MEMORY;
    if (st == GSHMEM_SUCCESS) st = s->boot.ops->allgather(&s->boot, &good, ok, sizeof good);
    if (st == GSHMEM_SUCCESS) st = s->boot.ops->allgather(&s->boot, &g, grans, sizeof g);
    uint64_t align = h->granularity;
    for (int r = 0; st == GSHMEM_SUCCESS && r < s->npes; r++) {
        all &= ok[r];
        if (grans[r] > align) align = grans[r];
    }
    free(ok);
    free(grans);
    if (st == GSHMEM_SUCCESS && !all) {
        if (good) gshmemi_error("%s: another PE could not register its buffer (its message says "
                                "why); nothing was registered", call);
        st = mine != GSHMEM_SUCCESS ? mine : GSHMEM_ERR_INVALID_ARG;
    }
    if (st != GSHMEM_SUCCESS) {
        if (good) cuMemRelease(handle);
        return st;
    }
    uint64_t off = place(h, round_up(size, align), align);
    if (!off) {
        cuMemRelease(handle);
        gshmemi_error("%s(%zu bytes): no room left in the symmetric window (%llu GiB, heap mapped "
                      "%llu MiB); unregister buffers you no longer use", call, size,
                      (unsigned long long)(h->window >> 30), (unsigned long long)(h->mapped >> 20));
        return GSHMEM_ERR_NO_MEMORY;
    }
    gshmemi_symreg *nr = gshmemi_grow(h->regs, h->n_regs, &h->regs_cap, sizeof *nr, 8);
    if (!nr) {
        cuMemRelease(handle);
        return GSHMEM_ERR_NO_MEMORY;
    }
    h->regs = nr;
    st = map_here(s, off, size, handle);
    if (st != GSHMEM_SUCCESS) {
        cuMemRelease(handle);
        return st;
    }
    h->regs[h->n_regs++] = (gshmemi_symreg){.off = off, .size = size, .handle = handle};
    if (off < h->reg_low) h->reg_low = off;
    gshmemi_chunk c = {.off = off, .size = size, .handle = (unsigned long long)handle};
    for (int t = 0; t < s->n_transports; t++)
        if (s->transports[t]->chunk_added) GSHMEMI_CHECK(s->transports[t]->chunk_added(s, s->tctx[t], &c));
    GSHMEMI_CHECK(republish_range(s));
    gshmemi_info("%s: %p (%zu bytes) mapped at %p", call, buf, size, (void *)(h->base + off));
    *out = h->base + off;
    return GSHMEM_SUCCESS;
}

static int find_reg(const gshmemi_heap *h, const void *p) {
    for (int i = 0; i < h->n_regs; i++)
        if ((const char *)p == h->base + h->regs[i].off) return i;
    return -1;
}

static void drop_reg(gshmemi_heap *h, int i) {
    cuMemUnmap((CUdeviceptr)(h->base + h->regs[i].off), h->regs[i].size);
    cuMemRelease((CUmemGenericAllocationHandle)h->regs[i].handle);
    h->regs[i] = h->regs[--h->n_regs];
    h->reg_low = h->window;
    for (int k = 0; k < h->n_regs; k++)
        if (h->regs[k].off < h->reg_low) h->reg_low = h->regs[k].off;
}

static gshmemi_status unregister_symmetric(gshmemi_state *s, void *ptr, size_t size, const char *call) {
    gshmemi_heap *h = &s->heap;
    int i = find_reg(h, ptr);
    if (i < 0) {   /* caught before the collective check: a wrong pointer may differ per PE */
        gshmemi_error("%s(%p, %zu) on PE %d: not an address gshmemx_buffer_register_symmetric "
                      "returned (or unregistered already)", call, ptr, size, s->mype);
        return GSHMEM_ERR_INVALID_ARG;
    }
    if (size != h->regs[i].size) {
        gshmemi_error("%s(%p, %zu) on PE %d: the buffer was registered with size %llu; pass that",
                      call, ptr, size, s->mype, (unsigned long long)h->regs[i].size);
        return GSHMEM_ERR_INVALID_ARG;
    }
    GSHMEMI_CHECK(gshmemi_heap_agree(s, (uint64_t)(uintptr_t)ptr, size, 0, call, "pointer/size/-"));
    /* every PE's work on the buffer is done before any peer's mapping goes */
    GSHMEMI_CUDA(cudaDeviceSynchronize());
    GSHMEMI_CHECK(s->boot.ops->barrier(&s->boot));
    gshmemi_chunk c = {.off = h->regs[i].off, .size = h->regs[i].size, .handle = h->regs[i].handle};
    for (int t = 0; t < s->n_transports; t++)
        if (s->transports[t]->chunk_removed)
            GSHMEMI_CHECK(s->transports[t]->chunk_removed(s, s->tctx[t], &c));
    drop_reg(h, i);
    return republish_range(s);
}

void gshmemi_symreg_finalize(gshmemi_state *s) {
    gshmemi_heap *h = &s->heap;
    while (h->n_regs) drop_reg(h, h->n_regs - 1);
    free(h->regs);
    h->regs = NULL;
    h->regs_cap = 0;
}

void *gshmemx_buffer_register_symmetric(void *buf, size_t size, int flags) {
    const char *call = "gshmemx_buffer_register_symmetric";
    gshmemi_state *s = &gshmemi_g;
    if (!s->initialized) {
        gshmemi_error("%s: called before gshmem_init; call gshmem_init() first", call);
        return NULL;
    }
    if (!buf || !size || flags) {
        gshmemi_error("%s(%p, %zu, flags %d) on PE %d: buf must not be NULL, size not 0, and flags "
                      "0 (no flags are defined)", call, buf, size, flags, s->mype);
        return NULL;
    }
    void *out = NULL;
    gshmemi_status st = register_symmetric(s, buf, size, &out, call);
    if (st != GSHMEM_SUCCESS && st != GSHMEM_ERR_INVALID_ARG && st != GSHMEM_ERR_NO_MEMORY &&
        st != GSHMEM_ERR_NOT_AVAILABLE)
        gshmemi_fatal("%s(%p, %zu) failed: %s", call, buf, size, gshmemi_status_str(st));
    return out;
}

int gshmemx_buffer_unregister_symmetric(void *ptr, size_t size) {
    const char *call = "gshmemx_buffer_unregister_symmetric";
    GSHMEMI_REQUIRE_INIT(call);
    return unregister_symmetric(&gshmemi_g, ptr, size, call);
}

/* ---- local registration ------------------------------------------------------------------ */
typedef struct local_reg {
    char *addr;
    size_t len;
    int pinned_here;             /* 1: gshmem made it pinned (cudaHostRegister) and undoes it */
} local_reg;
static local_reg *locals;
static int n_locals, cap_locals;

int gshmemx_buffer_register(void *addr, size_t length) {
    const char *call = "gshmemx_buffer_register";
    gshmemi_state *s = &gshmemi_g;
    GSHMEMI_REQUIRE_INIT(call);
    if (!addr || !length) {
        gshmemi_error("%s(%p, %zu) on PE %d: addr must not be NULL nor length 0", call, addr,
                      length, s->mype);
        return GSHMEM_ERR_INVALID_ARG;
    }
    char *a = addr;
    if (gshmemi_heap_contains(&s->heap, a) || gshmemi_heap_contains(&s->heap, a + length - 1)) {
        gshmemi_error("%s(%p, %zu) on PE %d: the buffer is symmetric memory, which every call "
                      "reaches without registration; register only memory of this PE alone",
                      call, addr, length, s->mype);
        return GSHMEM_ERR_INVALID_ARG;
    }
    for (int i = 0; i < n_locals; i++) {
        if (a < locals[i].addr + locals[i].len && locals[i].addr < a + length) {
            gshmemi_error("%s(%p, %zu) on PE %d: overlaps the buffer %p (%zu bytes) registered "
                          "already; unregister it first", call, addr, length, s->mype,
                          (void *)locals[i].addr, locals[i].len);
            return GSHMEM_ERR_INVALID_ARG;
        }
    }
    struct cudaPointerAttributes at;
    cudaError_t e = cudaPointerGetAttributes(&at, addr);
    if (e != cudaSuccess) {
        gshmemi_error("%s(%p, %zu) on PE %d: cudaPointerGetAttributes failed: %s", call, addr,
                      length, s->mype, cudaGetErrorString(e));
        return GSHMEM_ERR_CUDA;
    }
    if (at.type == cudaMemoryTypeDevice && at.device != s->cuda_dev) {
        gshmemi_error("%s(%p, %zu) on PE %d: the buffer is memory of GPU %d, not of this PE's GPU "
                      "%d", call, addr, length, s->mype, at.device, s->cuda_dev);
        return GSHMEM_ERR_INVALID_ARG;
    }
    int pin = at.type == cudaMemoryTypeUnregistered;
    if (pin) {
        e = cudaHostRegister(addr, length, cudaHostRegisterPortable | cudaHostRegisterMapped);
        if (e != cudaSuccess) {
            gshmemi_error("%s(%p, %zu) on PE %d: cudaHostRegister of this host memory failed: %s",
                          call, addr, length, s->mype, cudaGetErrorString(e));
            return GSHMEM_ERR_CUDA;
        }
    }
    local_reg *nl = gshmemi_grow(locals, n_locals, &cap_locals, sizeof *nl, 8);
    if (!nl) {
        if (pin) cudaHostUnregister(addr);
        return GSHMEM_ERR_NO_MEMORY;
    }
    locals = nl;
    locals[n_locals++] = (local_reg){.addr = a, .len = length, .pinned_here = pin};
    return GSHMEM_SUCCESS;
}

static void drop_local(int i) {
    if (locals[i].pinned_here) cudaHostUnregister(locals[i].addr);
    locals[i] = locals[--n_locals];
}

int gshmemx_buffer_unregister(void *addr) {
    const char *call = "gshmemx_buffer_unregister";
    GSHMEMI_REQUIRE_INIT(call);
    for (int i = 0; i < n_locals; i++) {
        if (locals[i].addr == addr) {
            drop_local(i);
            return GSHMEM_SUCCESS;
        }
    }
    gshmemi_error("%s(%p) on PE %d: not the address of a registered buffer (gshmemx_buffer_register)",
                  call, addr, gshmemi_g.mype);
    return GSHMEM_ERR_INVALID_ARG;
}

void gshmemx_buffer_unregister_all(void) {
    while (n_locals) drop_local(n_locals - 1);
}
