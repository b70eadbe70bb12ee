/* p2p transport: PEs of this node reached by NVLink/PCIe load/store. Each local peer's heap
 * chunks are imported (POSIX fd over a Unix socket) and mapped in this process at window
 * slot (peer - me) mod L, so a peer's copy of symmetric address a is a + slot * W. PEs that
 * share this GPU are mapped the same way (their memory is local to it). */
#include <cuda.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "config.h"
#include "cuda_driver.h"
#include "cuda_util.h"
#include "state.h"
#include "fdpass.h"

typedef struct peer_map {
    CUdeviceptr va;
    size_t size;
    CUmemGenericAllocationHandle handle;
} peer_map;

typedef struct p2p_ctx {
    gshmemi_fdpass fp;
    int *local_pe;        /* [local_size] global PE of local index q */
    peer_map *maps;
    int n_maps, cap_maps;
    uint64_t n_exchanges;
} p2p_ctx;

/* Local ordinal of the GPU with this UUID, or -1 if this process cannot see it. */
static int ordinal_of(const uint8_t *uuid) {
    int n = 0;
    if (cuDeviceGetCount(&n) != CUDA_SUCCESS) return -1;
    for (int i = 0; i < n; i++) {
        CUdevice d;
        CUuuid u;
        if (cuDeviceGet(&d, i) == CUDA_SUCCESS && cuDeviceGetUuid(&u, d) == CUDA_SUCCESS &&
            !memcmp(u.bytes, uuid, 16))
            return i;
    }
    return -1;
}

/* Peer access is checked where the peer's GPU is visible here; where it is not (one GPU per
 * process by CUDA_VISIBLE_DEVICES), the import and mapping of its memory decide. */
static gshmemi_status check_peer_access(gshmemi_state *s, int pe) {
    int peer_ord = ordinal_of(s->dev_uuids + 16 * (size_t)pe);
    if (peer_ord < 0 || peer_ord == s->cuda_dev) return GSHMEM_SUCCESS;  /* same GPU: plain loads/stores */
    CUdevice me, peer;
    int can = 0;
    GSHMEMI_CU(cuDeviceGet(&me, s->cuda_dev));
    GSHMEMI_CU(cuDeviceGet(&peer, peer_ord));
    GSHMEMI_CU(cuDeviceCanAccessPeer(&can, me, peer));
    if (!can) {
        gshmemi_error("PE %d (GPU %d) cannot access the memory of PE %d (GPU %d) on the same node: "
                      "no NVLink/PCIe peer path between these GPUs. gshmem needs peer access "
                      "between all GPUs of a node", s->mype, s->cuda_dev, pe, peer_ord);
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    return GSHMEM_SUCCESS;
}

static gshmemi_status p2p_init(gshmemi_state *s, void **tctx, bool *reach) {
    gshmemi_bootstrap *b = &s->boot;
    p2p_ctx *c = calloc(1, sizeof *c);
    if (!c) return GSHMEM_ERR_NO_MEMORY;
    c->local_pe = calloc((size_t)b->local_size, sizeof *c->local_pe);
    if (!c->local_pe) { free(c); return GSHMEM_ERR_NO_MEMORY; }
    c->fp.sock = -1;
    *tctx = c;
    for (int pe = 0; pe < s->npes; pe++) {
        if (b->node_of[pe] != b->node_id) continue;
        c->local_pe[b->local_rank_of[pe]] = pe;
        if (pe != s->mype) GSHMEMI_CHECK(check_peer_access(s, pe));
        reach[pe] = true;
    }
    /* the socket names carry the node: GSHMEM_NODES may make several nodes of one host */
    GSHMEMI_CHECK(gshmemi_fdpass_open(&c->fp, b->job_id + (uint64_t)b->node_id * 0x9e3779b97f4a7c15ull,
                                      b->local_rank, b->local_size));
    /* every local socket must exist before the first exchange sends to it */
    return b->ops->barrier(b);
}

static gshmemi_status map_peer(gshmemi_state *s, p2p_ctx *c, int q, int fd,
                               const gshmemi_chunk *ch) {
    gshmemi_heap *h = &s->heap;
    int slot = (q - s->boot.local_rank + s->boot.local_size) % s->boot.local_size;
    CUmemGenericAllocationHandle handle;
    GSHMEMI_CU(cuMemImportFromShareableHandle(&handle, (void *)(uintptr_t)fd,
                                              CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    CUdeviceptr va = (CUdeviceptr)(h->base + (uint64_t)slot * h->window + ch->off);
    CUresult r = cuMemMap(va, ch->size, 0, handle, 0);
    if (r != CUDA_SUCCESS) {
        cuMemRelease(handle);
        GSHMEMI_CU(r);
    }
    CUmemAccessDesc acc = {.location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = h->cu_device},
                           .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    r = cuMemSetAccess(va, ch->size, &acc, 1);
    if (r != CUDA_SUCCESS) {
        gshmemi_error("mapping PE %d's heap memory for access by this GPU failed: the GPUs may "
                      "lack a peer (NVLink/PCIe P2P) path", c->local_pe[q]);
        cuMemUnmap(va, ch->size);
        cuMemRelease(handle);
        GSHMEMI_CU(r);
    }
    peer_map *m = gshmemi_grow(c->maps, c->n_maps, &c->cap_maps, sizeof *m, 32);
    if (!m) return GSHMEM_ERR_NO_MEMORY;
    c->maps = m;
    c->maps[c->n_maps++] = (peer_map){.va = va, .size = ch->size, .handle = handle};
    return GSHMEM_SUCCESS;
}

static gshmemi_status p2p_chunk_added(gshmemi_state *s, void *tctx, const gshmemi_chunk *ch) {
    p2p_ctx *c = tctx;
    gshmemi_bootstrap *b = &s->boot;
    if (b->local_size == 1) return GSHMEM_SUCCESS;
    int fd = -1;
    GSHMEMI_CU(cuMemExportToShareableHandle(&fd, (CUmemGenericAllocationHandle)ch->handle,
                                            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    int *fds = malloc((size_t)b->local_size * sizeof *fds);
    if (!fds) { close(fd); return GSHMEM_ERR_NO_MEMORY; }
    /* the tag names the chunk: every PE grows in the same order, so (offset) matches */
    gshmemi_status st = gshmemi_fdpass_exchange(&c->fp, fd, ch->off, fds, gshmemi_cfg.BOOTSTRAP_TIMEOUT);
    close(fd);
    for (int q = 0; st == GSHMEM_SUCCESS && q < b->local_size; q++)
        if (q != b->local_rank) st = map_peer(s, c, q, fds[q], ch);
    for (int q = 0; q < b->local_size; q++)
        if (fds[q] >= 0) close(fds[q]);
    free(fds);
    GSHMEMI_CHECK(st);
    c->n_exchanges++;
    /* separates exchanges, so a fast PE's next chunk never meets this one's messages */
    return b->ops->barrier(b);
}

/* Every local peer's mapping of the chunk at offset ch->off (one per window slot but ours). */
static gshmemi_status p2p_chunk_removed(gshmemi_state *s, void *tctx, const gshmemi_chunk *ch) {
    p2p_ctx *c = tctx;
    const gshmemi_heap *h = &s->heap;
    for (int slot = 1; slot < s->boot.local_size; slot++) {
        CUdeviceptr va = (CUdeviceptr)(h->base + (uint64_t)slot * h->window + ch->off);
        for (int i = 0; i < c->n_maps; i++) {
            if (c->maps[i].va != va) continue;
            GSHMEMI_CU(cuMemUnmap(va, c->maps[i].size));
            GSHMEMI_CU(cuMemRelease(c->maps[i].handle));
            c->maps[i--] = c->maps[--c->n_maps];
        }
    }
    /* no peer unmaps before every peer stopped using the memory (the caller's barrier) and no
     * offset is reused before every peer unmapped it */
    return s->boot.ops->barrier(&s->boot);
}

static void p2p_finalize(gshmemi_state *s, void *tctx) {
    p2p_ctx *c = tctx;
    if (!c) return;
    for (int i = 0; i < c->n_maps; i++) {
        cuMemUnmap(c->maps[i].va, c->maps[i].size);
        cuMemRelease(c->maps[i].handle);
    }
    gshmemi_fdpass_close(&c->fp);
    free(c->maps);
    free(c->local_pe);
    free(c);
}

extern const struct gshmemi_transport_ops gshmemi_transport_p2p;
const struct gshmemi_transport_ops gshmemi_transport_p2p = {
    .name = "p2p",
    .load_store = true,
    .init = p2p_init,
    .chunk_added = p2p_chunk_added,
    .chunk_removed = p2p_chunk_removed,
    .finalize = p2p_finalize,
};
