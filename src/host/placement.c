/* Placement of PEs on GPUs: device selection (round-robin over the node's GPUs), the PEs that
 * share a GPU, CUDA MPS detection, and the SM share that keeps co-located PEs' spinning
 * kernels resident together. See docs/design.md, "Several PEs on one GPU". */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "cuda_driver.h"
#include "cuda_util.h"
#include "placement.h"
#include "state.h"
#include "gshmem.h"

gshmemi_placement gshmemi_place;

/* CU_DEVICE_ATTRIBUTE_MPS_ENABLED (CUDA 12.x headers before it have no name for it): 1 when
 * contexts made on the device are MPS clients. A driver without it answers an error. */
#define ATTR_MPS_ENABLED ((CUdevice_attribute)133)

static uint64_t pow2_ceil(uint64_t v) {
    uint64_t p = 1;
    while (p < v) p <<= 1;
    return p;
}

gshmemi_status gshmemi_place_select_device(gshmemi_state *s) {
    /* Lazy loading can deadlock a kernel spinning on a flag that a not-yet-loaded kernel
     * would write; if CUDA is not initialized yet this makes loading eager (no override). */
    setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    CUresult r = cuInit(0);
    if (r == CUDA_ERROR_NO_DEVICE) {
        gshmemi_error("no CUDA GPU is visible to this process (CUDA_VISIBLE_DEVICES='%s'); "
                      "gshmem needs at least one GPU on every node", getenv("CUDA_VISIBLE_DEVICES") ?: "unset");
        return GSHMEM_ERR_NO_DEVICE;
    }
    GSHMEMI_CU(r);
    int count = 0;
    GSHMEMI_CU(cuDeviceGetCount(&count));
    CUcontext cur = NULL;
    GSHMEMI_CU(cuCtxGetCurrent(&cur));
    CUdevice dev;
    if (cur) {
        /* the runtime adopts the current context: its device is the caller's choice (not
         * cuCtxGetDevice: at CUDA 13.0 that entry point has another signature than the
         * header's, cudaTypedefs.h PFN_cuCtxGetDevice_v13000) */
        int d = 0;
        GSHMEMI_CUDA(cudaGetDevice(&d));
        dev = (CUdevice)d;
    } else {
        /* round-robin over the machine's GPUs by the PE's index on the machine: where
         * GSHMEM_NODES splits one machine into nodes, its PEs still spread over all its GPUs
         * (2 PEs as 2 nodes on 2 GPUs: a GPU each, as on two real nodes) */
        int want = gshmemi_cfg.DEVICE >= 0 ? gshmemi_cfg.DEVICE : s->boot.host_rank % count;
        if (want >= count) {
            gshmemi_error("GSHMEM_DEVICE=%d on PE %d, but only %d GPU%s visible to it; set "
                          "GSHMEM_DEVICE below %d or leave it unset (PEs are then placed on the "
                          "node's GPUs round-robin)", want, s->mype, count,
                          count == 1 ? " is" : "s are", count);
            return GSHMEM_ERR_NO_DEVICE;
        }
        GSHMEMI_CU(cuDeviceGet(&dev, want));
        CUcontext ctx;
        GSHMEMI_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
        GSHMEMI_CU(cuCtxSetCurrent(ctx));
        s->cu_ctx_set_by_us = 1;
    }
    s->cuda_dev = (int)dev;
    gshmemi_place.device = (int)dev;
    return GSHMEM_SUCCESS;
}

/* What every PE tells the others about its GPU. */
typedef struct place_rec {
    uint8_t uuid[16];
    int32_t mps;          /* 1 MPS client, 0 not, -1 the driver cannot say */
    int32_t sm_count;
    int32_t sm_affinity;  /* SMs its context may use (MPS active thread percentage) */
    int32_t pdl;          /* its collectives launch with programmatic dependent launch */
    uint64_t dev_mem;
    uint64_t heap_max;    /* its GSHMEM_HEAP_MAX (0 = unset) */
} place_rec;

static gshmemi_status my_record(gshmemi_state *s, place_rec *me) {
    CUdevice dev;
    CUuuid u;
    size_t mem = 0;
    memset(me, 0, sizeof *me);
    GSHMEMI_CU(cuDeviceGet(&dev, s->cuda_dev));
    GSHMEMI_CU(cuDeviceGetUuid(&u, dev));
    memcpy(me->uuid, u.bytes, 16);
    GSHMEMI_CU(cuDeviceTotalMem(&mem, dev));
    me->dev_mem = mem;
    GSHMEMI_CU(cuDeviceGetAttribute(&me->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    int v = 0;
    me->mps = cuDeviceGetAttribute(&v, ATTR_MPS_ENABLED, dev) == CUDA_SUCCESS ? v != 0 : -1;
    CUexecAffinityParam aff;
    me->sm_affinity = me->sm_count;
    if (cuCtxGetExecAffinity(&aff, CU_EXEC_AFFINITY_TYPE_SM_COUNT) == CUDA_SUCCESS &&
        aff.param.smCount.val > 0 && (int)aff.param.smCount.val < me->sm_count)
        me->sm_affinity = (int)aff.param.smCount.val;
    me->pdl = gshmemi_cfg.COLL_PDL;
    me->heap_max = gshmemi_cfg.HEAP_MAX;
    return GSHMEM_SUCCESS;
}

static bool same_gpu(const gshmemi_bootstrap *b, const place_rec *all, int i, int j) {
    return b->node_of[i] == b->node_of[j] && !memcmp(all[i].uuid, all[j].uuid, 16);
}

static int pes_on_gpu_of(const gshmemi_bootstrap *b, const place_rec *all, int n, int i) {
    int k = 0;
    for (int j = 0; j < n; j++) k += same_gpu(b, all, i, j);
    return k;
}

/* The SMs PE i may count on: its MPS limit, and no more than 1/k of the GPU. */
static int share_of(const place_rec *r, int k) {
    int even = r->sm_count / k;
    if (even < 1) even = 1;
    return r->sm_affinity < even ? r->sm_affinity : even;
}

/* The blocks of the library's own kernels that spin on peers (collectives, their copies)
 * are kept to a number that can all be resident beside the kernels of every other PE of
 * the GPU: one block fits an empty SM, so if the blocks of all co-located PEs' kernels
 * together are no more than the SMs, a waiting block always finds an empty SM. Under PDL a
 * PE can have two such kernels resident at once (the next one's blocks wait in
 * griddepcontrol.wait), hence half. A GPU of one PE needs no cap. */
static int kernel_cap_of(const place_rec *r, int k) {
    if (k <= 1) return 0;
    int cap = share_of(r, k) / (r->pdl ? 2 : 1);
    return cap < 1 ? 1 : cap;
}

static void say_without_mps(const gshmemi_state *s, const place_rec *all) {
    const gshmemi_placement *p = &gshmemi_place;
    char pes[256];
    gshmemi_place_gpu_pes(pes, sizeof pes, ", ");
    int unknown = 0;
    for (int i = 0; i < p->gpu_pes; i++) unknown |= all[p->gpu_pe_list[i]].mps < 0;
    gshmemi_warn("PEs %s share GPU %d %s CUDA MPS: their kernels run in turns (time slices), so "
                 "every device-side wait on a PE of this GPU (p/wait ping-pong, barriers, "
                 "collectives) takes milliseconds instead of microseconds. Results stay correct. "
                 "To fix it, start an MPS daemon before the job (nvidia-cuda-mps-control -d), or "
                 "launch with gshmrun, which starts a private one for the job.",
                 pes, s->cuda_dev, unknown ? "and this driver cannot tell whether they run under"
                                           : "without");
}

gshmemi_status gshmemi_place_exchange(gshmemi_state *s) {
    gshmemi_placement *p = &gshmemi_place;
    const gshmemi_bootstrap *b = &s->boot;
    place_rec me;
    GSHMEMI_CHECK(my_record(s, &me));
    place_rec *all = malloc((size_t)s->npes * sizeof *all);
    s->dev_uuids = malloc(16 * (size_t)s->npes);
    if (!all || !s->dev_uuids) { free(all); return GSHMEM_ERR_NO_MEMORY; }
    gshmemi_status st = b->ops->allgather((gshmemi_bootstrap *)b, &me, all, sizeof me);
    if (st != GSHMEM_SUCCESS) { free(all); GSHMEMI_CHECK(st); }
    p->gpu_pes = pes_on_gpu_of(b, all, s->npes, s->mype);
    p->gpu_pe_list = malloc((size_t)p->gpu_pes * sizeof *p->gpu_pe_list);
    if (!p->gpu_pe_list) { free(all); return GSHMEM_ERR_NO_MEMORY; }
    int k = 0, mps = 1;
    for (int j = 0; j < s->npes; j++) {
        memcpy(s->dev_uuids + 16 * (size_t)j, all[j].uuid, 16);
        if (!same_gpu(b, all, s->mype, j)) continue;
        if (j == s->mype) p->gpu_rank = k;
        p->gpu_pe_list[k++] = j;
        mps &= all[j].mps > 0;
    }
    p->mps = me.mps > 0 && mps;
    p->sm_count = me.sm_count;
    p->sm_share = share_of(&me, p->gpu_pes);
    p->dev_mem = me.dev_mem;
    /* job-wide: every PE computes the same numbers from the same records */
    p->coll_max_blocks = 0;
    p->heap_window = 0;
    p->max_gpu_pes = 1;
    for (int i = 0; i < s->npes; i++) {
        int ki = pes_on_gpu_of(b, all, s->npes, i);
        int cap = kernel_cap_of(&all[i], ki);
        if (cap && (!p->coll_max_blocks || cap < p->coll_max_blocks)) p->coll_max_blocks = cap;
        if (ki > p->max_gpu_pes) p->max_gpu_pes = ki;
        uint64_t want = all[i].dev_mem / (uint64_t)ki;
        if (all[i].heap_max) want = all[i].heap_max < all[i].dev_mem ? all[i].heap_max : all[i].dev_mem;
        if (pow2_ceil(want) > p->heap_window) p->heap_window = pow2_ceil(want);
    }
    if (p->gpu_pes > 1 && !p->mps && p->gpu_rank == 0) say_without_mps(s, all);
    free(all);
    return GSHMEM_SUCCESS;
}

size_t gshmemi_place_gpu_pes(char *buf, size_t len, const char *sep) {
    const gshmemi_placement *p = &gshmemi_place;
    size_t o = 0;
    if (len) buf[0] = 0;
    for (int i = 0; i < p->gpu_pes && o + 16 < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%d", i ? sep : "", p->gpu_pe_list[i]);
    return o;
}

void gshmemi_place_describe(const gshmemi_state *s, char *buf, size_t len) {
    const gshmemi_placement *p = &gshmemi_place;
    size_t o = (size_t)snprintf(buf, len, "PE %d on GPU %d", s->mype, p->device);
    if (p->gpu_pes == 1) {
        /* an MPS client all the same when the job spans nodes (a remote transport's context beside it) */
        snprintf(buf + o, len - o, " (its own; %d SMs%s)", p->sm_count, p->mps > 0 ? "; MPS client" : "");
        return;
    }
    o += (size_t)snprintf(buf + o, len - o, " shared by %d PEs (", p->gpu_pes);
    if (o < len) o += gshmemi_place_gpu_pes(buf + o, len - o, " ");
    if (o < len)
        snprintf(buf + o, len - o, "), %s, SM share %d of %d, library kernels <= %d blocks",
                 p->mps ? "MPS" : "no MPS: time-sliced", p->sm_share, p->sm_count,
                 p->coll_max_blocks);
}

void gshmemi_place_finalize(void) {
    free(gshmemi_place.gpu_pe_list);
    memset(&gshmemi_place, 0, sizeof gshmemi_place);
}

int gshmemx_get_placement(gshmemx_placement_info_t *info) {
    GSHMEMI_REQUIRE_INIT("gshmemx_get_placement");
    if (!info) {
        gshmemi_error("gshmemx_get_placement: info is NULL on PE %d; pass a gshmemx_placement_info_t",
                      gshmemi_g.mype);
        return GSHMEM_ERR_INVALID_ARG;
    }
    const gshmemi_placement *p = &gshmemi_place;
    *info = (gshmemx_placement_info_t){
        .device = p->device, .gpu_pes = p->gpu_pes, .gpu_rank = p->gpu_rank, .mps = p->mps,
        .sm_count = p->sm_count, .sm_share = p->sm_share, .coll_max_blocks = p->coll_max_blocks};
    return GSHMEM_SUCCESS;
}
