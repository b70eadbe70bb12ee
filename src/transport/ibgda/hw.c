/* The mlx5 device under both ibgda setups (hw.h): choosing the device and port, the GID,
 * registrations of GPU memory (dma-buf first, peer memory else), host memory and the doorbell
 * page mapped for the GPU, and the CPU-assisted doorbell. Every verbs and CUDA call is checked;
 * a failure names the device, what was asked and what to do. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "cuda_util.h"
#include "hw.h"

#define PAGE 4096ull
#define MR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

const char *gshmemi_hw_mtu_name(int mtu) {
    switch (mtu) {
    case IBV_MTU_256: return "256";
    case IBV_MTU_512: return "512";
    case IBV_MTU_1024: return "1024";
    case IBV_MTU_2048: return "2048";
    case IBV_MTU_4096: return "4096";
    default: return "?";
    }
}

/* ---- the device and its port ---------------------------------------------------------- */
/* GSHMEM_IBGDA_DEVICE: "mlx5_0" or "mlx5_0:1" */
static void wanted(char *name, size_t len, int *port) {
    snprintf(name, len, "%s", gshmemi_cfg.IBGDA_DEVICE);
    *port = 0;
    char *colon = strchr(name, ':');
    if (colon) {
        *port = atoi(colon + 1);
        *colon = 0;
    }
}

/* The first mlx5 device (the one named) with an active port (the one named): opened, or NULL
 * with why[len] saying why none. */
static struct ibv_context *find_port(int *port, struct ibv_port_attr *pa, char *why, size_t len) {
    char want[64];
    int want_port, n = 0, mlx5 = 0, named = 0;
    wanted(want, sizeof want, &want_port);
    struct ibv_device **list = ibv_get_device_list(&n);
    if (!list) {
        if (errno == ENOSYS)   /* no RDMA subsystem in the kernel (no /sys/class/infiniband) */
            snprintf(why, len, "no RDMA device (the kernel has no RDMA driver loaded: ibv_get_device_list: %s)",
                     strerror(errno));
        else
            snprintf(why, len, "ibv_get_device_list failed: %s", strerror(errno));
        return NULL;
    }
    struct ibv_context *found = NULL;
    char note[160] = "";
    for (int i = 0; i < n && !found; i++) {
        const char *nm = ibv_get_device_name(list[i]);
        if (want[0] && strcmp(nm, want)) continue;
        named++;
        if (!mlx5dv_is_supported(list[i])) continue;
        mlx5++;
        struct ibv_context *ctx = ibv_open_device(list[i]);
        if (!ctx) {
            snprintf(note, sizeof note, "ibv_open_device(%s) failed: %s", nm, strerror(errno));
            continue;
        }
        struct ibv_device_attr da;
        if (ibv_query_device(ctx, &da)) {
            snprintf(note, sizeof note, "ibv_query_device(%s) failed: %s", nm, strerror(errno));
            ibv_close_device(ctx);
            continue;
        }
        for (int p = 1; p <= da.phys_port_cnt && !found; p++) {
            if (want_port && p != want_port) continue;
            if (ibv_query_port(ctx, (uint8_t)p, pa)) {
                snprintf(note, sizeof note, "ibv_query_port(%s, %d) failed: %s", nm, p, strerror(errno));
                continue;
            }
            if (pa->state == IBV_PORT_ACTIVE) {
                found = ctx;
                *port = p;
            } else {
                snprintf(note, sizeof note, "%s port %d is %s", nm, p, ibv_port_state_str(pa->state));
            }
        }
        if (!found) ibv_close_device(ctx);
    }
    ibv_free_device_list(list);
    if (found) return found;
    if (n == 0)
        snprintf(why, len, "no RDMA device (ibv_get_device_list found none: no NIC, or its driver is not loaded)");
    else if (want[0] && !named)
        snprintf(why, len, "no RDMA device named %s (GSHMEM_IBGDA_DEVICE)", want);
    else if (!mlx5)
        snprintf(why, len, "none of the %d RDMA devices%s is an mlx5 (ConnectX) device", n, want[0] ? " named" : "");
    else
        snprintf(why, len, "no active port on %d mlx5 device(s)%s%s", mlx5, note[0] ? ": " : "", note);
    return NULL;
}

static bool ipv4_mapped(const union ibv_gid *g) {
    static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return !memcmp(g->raw, pre, 12);
}
static bool zero_gid(const union ibv_gid *g) {
    for (int i = 0; i < 16; i++)
        if (g->raw[i]) return false;
    return true;
}

/* RoCE: GSHMEM_IBGDA_GID_INDEX, else the first RoCE v2 GID of an IPv4 address, else the first
 * RoCE v2 one, else the first valid one. InfiniBand: index 0 (a route within the subnet uses
 * the LID). -1 with why[len] when there is none. */
static int pick_gid(struct ibv_context *ctx, int port, const struct ibv_port_attr *pa, union ibv_gid *gid,
                    char *why, size_t len) {
    struct ibv_gid_entry e;
    const int want = gshmemi_cfg.IBGDA_GID_INDEX;
    if (pa->link_layer != IBV_LINK_LAYER_ETHERNET || want >= 0) {
        const int i = want >= 0 ? want : 0;
        if (ibv_query_gid_ex(ctx, (uint32_t)port, (uint32_t)i, &e, 0)) {
            snprintf(why, len, "ibv_query_gid_ex(port %d, GID index %d) failed: %s%s", port, i, strerror(errno),
                     want >= 0 ? " (GSHMEM_IBGDA_GID_INDEX)" : "");
            return -1;
        }
        *gid = e.gid;
        return i;
    }
    int first = -1, first_v2 = -1;
    for (int i = 0; i < pa->gid_tbl_len; i++) {
        if (ibv_query_gid_ex(ctx, (uint32_t)port, (uint32_t)i, &e, 0) || zero_gid(&e.gid)) continue;
        if (first < 0) first = i;
        if (e.gid_type != IBV_GID_TYPE_ROCE_V2) continue;
        if (first_v2 < 0) first_v2 = i;
        if (ipv4_mapped(&e.gid)) {
            *gid = e.gid;
            return i;
        }
    }
    const int i = first_v2 >= 0 ? first_v2 : first;
    if (i < 0 || ibv_query_gid_ex(ctx, (uint32_t)port, (uint32_t)i, &e, 0)) {
        snprintf(why, len, "port %d has no valid GID (RoCE needs an IP address on the NIC's interface)", port);
        return -1;
    }
    *gid = e.gid;
    return i;
}

static void gid_text(const union ibv_gid *g, char *buf, size_t len) {
    if (ipv4_mapped(g)) {
        snprintf(buf, len, "::ffff:%u.%u.%u.%u", g->raw[12], g->raw[13], g->raw[14], g->raw[15]);
        return;
    }
    size_t o = 0;
    for (int i = 0; i < 16 && o < len; i += 2)
        o += (size_t)snprintf(buf + o, len - o, "%s%02x%02x", i ? ":" : "", g->raw[i], g->raw[i + 1]);
}

int gshmemi_ibgda_hw_probe(char *why, size_t len) {
    int port = 0;
    struct ibv_port_attr pa;
    struct ibv_context *ctx = find_port(&port, &pa, why, len);
    if (!ctx) return 0;
    union ibv_gid gid;
    const int gi = pick_gid(ctx, port, &pa, &gid, why, len);
    if (gi >= 0) {
        char g[64];
        gid_text(&gid, g, sizeof g);
        if (pa.link_layer == IBV_LINK_LAYER_ETHERNET)
            snprintf(why, len, "%s port %d, RoCE, GID index %d (%s), MTU %s", ibv_get_device_name(ctx->device), port,
                     gi, g, gshmemi_hw_mtu_name(pa.active_mtu));
        else
            snprintf(why, len, "%s port %d, InfiniBand, LID %#x, MTU %s", ibv_get_device_name(ctx->device), port,
                     pa.lid, gshmemi_hw_mtu_name(pa.active_mtu));
    }
    ibv_close_device(ctx);
    return gi >= 0;
}

gshmemi_status gshmemi_hw_open(hw_dev *h) {
    char why[256];
    h->ctx = find_port(&h->port, &h->pattr, why, sizeof why);
    if (!h->ctx) {
        gshmemi_error("ibgda: %s", why);
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    snprintf(h->name, sizeof h->name, "%s", ibv_get_device_name(h->ctx->device));
    h->roce = h->pattr.link_layer == IBV_LINK_LAYER_ETHERNET;
    if ((h->gid_index = pick_gid(h->ctx, h->port, &h->pattr, &h->gid, why, sizeof why)) < 0) {
        gshmemi_error("ibgda: %s: %s", h->name, why);
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    if (!(h->pd = ibv_alloc_pd(h->ctx))) {
        gshmemi_error("ibgda: ibv_alloc_pd on %s failed: %s", h->name, strerror(errno));
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    struct mlx5dv_pd dpd;
    struct mlx5dv_obj obj = {.pd = {.in = h->pd, .out = &dpd}};
    int e = mlx5dv_init_obj(&obj, MLX5DV_OBJ_PD);
    if (e) {
        gshmemi_error("ibgda: mlx5dv_init_obj(protection domain) on %s failed: %s", h->name, strerror(e));
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    h->pdn = dpd.pdn;
    return GSHMEM_SUCCESS;
}

/* ---- registrations ------------------------------------------------------------------------ */
typedef CUresult (*range_handle_fn)(void *, CUdeviceptr, size_t, CUmemRangeHandleType, unsigned long long);

/* cuMemGetHandleForAddressRange through the runtime's driver entry points (the library never
 * links libcuda), or NULL where the driver lacks it. */
static range_handle_fn range_handle(void) {
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    cudaError_t e = cudaGetDriverEntryPointByVersion("cuMemGetHandleForAddressRange", &fn, 11070, cudaEnableDefault, &q);
#else
    cudaError_t e = cudaGetDriverEntryPoint("cuMemGetHandleForAddressRange", &fn, cudaEnableDefault, &q);
#endif
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess) {
        cudaGetLastError();
        return NULL;
    }
    return (range_handle_fn)fn;
}

/* GPU memory by dma-buf (the driver exports the range, the NIC imports it); -1: not possible. */
static struct ibv_mr *reg_dmabuf(hw_dev *h, void *addr, size_t len, char *why, size_t wlen) {
    range_handle_fn fn = range_handle();
    if (!fn) {
        snprintf(why, wlen, "the driver has no cuMemGetHandleForAddressRange");
        return NULL;
    }
    const uint64_t a = (uint64_t)(uintptr_t)addr, base = a & ~(PAGE - 1), end = (a + len + PAGE - 1) & ~(PAGE - 1);
    int fd = -1;
    CUresult r = fn(&fd, (CUdeviceptr)base, end - base, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
    if (r != CUDA_SUCCESS) {
        snprintf(why, wlen, "cuMemGetHandleForAddressRange(dma-buf) failed: CUDA error %d", (int)r);
        return NULL;
    }
    struct ibv_mr *mr = ibv_reg_dmabuf_mr(h->pd, a - base, len, a, fd, MR_ACCESS);
    if (!mr) snprintf(why, wlen, "ibv_reg_dmabuf_mr failed: %s", strerror(errno));
    close(fd);
    return mr;
}

gshmemi_status gshmemi_hw_reg(hw_dev *h, void *addr, size_t len, bool gpu, ibgda_key *k) {
    char dmabuf_why[160] = "";
    struct ibv_mr *mr = gpu ? reg_dmabuf(h, addr, len, dmabuf_why, sizeof dmabuf_why) : NULL;
    if (!mr) mr = ibv_reg_mr(h->pd, addr, len, MR_ACCESS);   /* host memory; GPU memory by peer memory */
    if (!mr) {
        if (gpu)
            gshmemi_error("ibgda: registering %zu bytes of GPU memory at %p with %s failed: by dma-buf (%s) and by "
                          "peer memory (ibv_reg_mr: %s): use a kernel and driver with dma-buf support (Linux 5.12+, "
                          "the open GPU kernel modules) or load nvidia-peermem", len, addr, h->name, dmabuf_why,
                          strerror(errno));
        else
            gshmemi_error("ibgda: ibv_reg_mr of %zu bytes of host memory at %p with %s failed: %s (raise the "
                          "locked-memory limit, ulimit -l)", len, addr, h->name, strerror(errno));
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    k->lkey = mr->lkey;
    k->rkey = mr->rkey;
    k->priv = mr;
    return GSHMEM_SUCCESS;
}

void gshmemi_hw_dereg(hw_dev *h, ibgda_key *k) {
    (void)h;
    if (k->priv && ibv_dereg_mr(k->priv))
        gshmemi_warn("ibgda: ibv_dereg_mr failed: %s", strerror(errno));
    k->priv = NULL;
}

/* ---- connections ------------------------------------------------------------------------- */
void gshmemi_hw_conn(const hw_dev *h, uint32_t qpn, ibgda_conn *out) {
    memset(out, 0, sizeof *out);
    out->qpn = qpn;
    out->lid = h->pattr.lid;
    memcpy(out->gid, h->gid.raw, 16);
    out->link_layer = h->pattr.link_layer;
    out->mtu = (uint8_t)h->pattr.active_mtu;
    out->port = (uint8_t)h->port;
    out->gid_index = (uint8_t)h->gid_index;
}

void gshmemi_hw_ah_attr(const hw_dev *h, const ibgda_conn *peer, struct ibv_ah_attr *ah) {
    memset(ah, 0, sizeof *ah);
    ah->port_num = (uint8_t)h->port;
    if (h->roce) {   /* RoCE routes by the peer's GID (UDP/IP for RoCE v2) */
        ah->is_global = 1;
        memcpy(ah->grh.dgid.raw, peer->gid, 16);
        ah->grh.sgid_index = (uint8_t)h->gid_index;
        ah->grh.hop_limit = 64;
    } else {
        ah->dlid = peer->lid;
    }
}

/* ---- memory for the GPU ------------------------------------------------------------------ */
static gshmemi_status add_map(hw_dev *h, void *base, size_t len) {
    if (h->n_maps == h->cap_maps) {
        int cap = h->cap_maps ? 2 * h->cap_maps : 16;
        hw_map *m = realloc(h->maps, (size_t)cap * sizeof *m);
        if (!m) return GSHMEM_ERR_NO_MEMORY;
        h->maps = m;
        h->cap_maps = cap;
    }
    h->maps[h->n_maps++] = (hw_map){.base = base, .len = len};
    return GSHMEM_SUCCESS;
}

/* rdma-core's queues live in its own host allocations, their doorbell records several to a page:
 * a page already registered (by us, for another QP) is not registered again. */
gshmemi_status gshmemi_hw_map(hw_dev *h, void *p, size_t len, void **gpu) {
    const uint64_t a = (uint64_t)(uintptr_t)p, base = a & ~(PAGE - 1), end = (a + len + PAGE - 1) & ~(PAGE - 1);
    bool have = false;
    for (int i = 0; i < h->n_maps && !have; i++)
        have = base >= (uint64_t)(uintptr_t)h->maps[i].base &&
               end <= (uint64_t)(uintptr_t)h->maps[i].base + h->maps[i].len;
    if (!have) {
        cudaError_t e = cudaHostRegister((void *)(uintptr_t)base, end - base, cudaHostRegisterMapped | cudaHostRegisterPortable);
        if (e == cudaErrorHostMemoryAlreadyRegistered) cudaGetLastError();
        else {
            GSHMEMI_CUDA(e);
            GSHMEMI_CHECK(add_map(h, (void *)(uintptr_t)base, end - base));
        }
    }
    GSHMEMI_CUDA(cudaHostGetDevicePointer(gpu, p, 0));
    return GSHMEM_SUCCESS;
}

gshmemi_status gshmemi_hw_doorbell(hw_dev *h, void *reg, const char *what, uint64_t **gpu) {
    const int mode = gshmemi_cfg.IBGDA_CPU_DOORBELL;
    if (mode != 1) {
        void *page = (void *)((uintptr_t)reg & ~(uintptr_t)(PAGE - 1));
        cudaError_t e = cudaHostRegister(page, PAGE, cudaHostRegisterMapped | cudaHostRegisterPortable | cudaHostRegisterIoMemory);
        if (e == cudaSuccess || e == cudaErrorHostMemoryAlreadyRegistered) {
            if (e == cudaSuccess) GSHMEMI_CHECK(add_map(h, page, PAGE));
            else cudaGetLastError();
            GSHMEMI_CUDA(cudaHostGetDevicePointer((void **)gpu, reg, 0));
            return GSHMEM_SUCCESS;
        }
        cudaGetLastError();
        if (mode == 0) {
            gshmemi_error("ibgda: mapping %s's doorbell page of %s for the GPU failed (cudaHostRegister with "
                          "cudaHostRegisterIoMemory: %s), and GSHMEM_IBGDA_CPU_DOORBELL=0 forbids a CPU ringing for "
                          "it: unset it (a CPU thread then rings), or check that the GPU and the NIC share a PCIe "
                          "root that allows peer access", what, h->name, cudaGetErrorString(e));
            return GSHMEM_ERR_NOT_AVAILABLE;
        }
        gshmemi_info("ibgda: %s's doorbell page of %s does not map for the GPU (%s): a CPU thread rings it", what,
                     h->name, cudaGetErrorString(e));
    }
    if (h->n_bells == h->cap_bells) {
        int cap = h->cap_bells ? 2 * h->cap_bells : 16;
        hw_bell *b = realloc(h->bells, (size_t)cap * sizeof *b);
        if (!b) return GSHMEM_ERR_NO_MEMORY;
        h->bells = b;
        h->cap_bells = cap;
    }
    uint64_t *word = NULL;
    GSHMEMI_CUDA(cudaHostAlloc((void **)&word, 64, cudaHostAllocMapped | cudaHostAllocPortable));
    memset(word, 0, 64);
    GSHMEMI_CUDA(cudaHostGetDevicePointer((void **)gpu, word, 0));
    h->bells[h->n_bells++] = (hw_bell){.word = word, .reg = reg, .last = 0};
    return GSHMEM_SUCCESS;
}

/* The CPU-assisted doorbell: each new value the GPU stored goes to the NIC's register, after
 * the GPU's doorbell record (written before the value, with a system fence between) and before
 * anything later. A full fence on each side of the 8-byte MMIO store: the store is ordered after
 * the load of the value, and leaves the write-combining buffer at once. */
static void *relay_main(void *arg) {
    hw_dev *h = arg;
    double idle = 0;
    while (!__atomic_load_n(&h->relay_stop, __ATOMIC_ACQUIRE)) {
        int work = 0;
        for (int i = 0; i < h->n_bells; i++) {
            hw_bell *b = &h->bells[i];
            const uint64_t v = __atomic_load_n(b->word, __ATOMIC_ACQUIRE);
            if (v == b->last) continue;
            b->last = v;
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
            *b->reg = v;
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
            work++;
        }
        if (work) {
            idle = 0;
            continue;
        }
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        const double now = (double)t.tv_sec + t.tv_nsec * 1e-9;
        if (idle == 0) idle = now;
        if (now - idle > 2e-3) {   /* idle a while: a short sleep bounds the added latency */
            struct timespec ts = {.tv_sec = 0, .tv_nsec = 5000};
            nanosleep(&ts, NULL);
        } else {
            sched_yield();
        }
    }
    return NULL;
}

gshmemi_status gshmemi_hw_start(hw_dev *h) {
    if (!h->n_bells || h->relay_on) return GSHMEM_SUCCESS;
    int e = pthread_create(&h->relay, NULL, relay_main, h);
    if (e) {
        gshmemi_error("ibgda: starting the CPU-assisted doorbell thread failed: %s", strerror(e));
        return GSHMEM_ERR_INTERNAL;
    }
    h->relay_on = 1;
    return GSHMEM_SUCCESS;
}

void gshmemi_hw_stop(hw_dev *h) {
    if (!h->relay_on) return;
    __atomic_store_n(&h->relay_stop, 1, __ATOMIC_RELEASE);
    pthread_join(h->relay, NULL);
    h->relay_on = 0;
}

void gshmemi_hw_close(hw_dev *h) {
    gshmemi_hw_stop(h);
    for (int i = 0; i < h->n_maps; i++)
        if (cudaHostUnregister(h->maps[i].base) != cudaSuccess) cudaGetLastError();
    for (int i = 0; i < h->n_bells; i++) cudaFreeHost((void *)(uintptr_t)h->bells[i].word);
    free(h->maps);
    free(h->bells);
    if (h->pd && ibv_dealloc_pd(h->pd)) gshmemi_warn("ibgda: ibv_dealloc_pd on %s failed: %s", h->name, strerror(errno));
    if (h->ctx) ibv_close_device(h->ctx);
    memset(h, 0, sizeof *h);
}

void gshmemi_hw_describe(const hw_dev *h, char *buf, size_t len) {
    char g[64];
    gid_text(&h->gid, g, sizeof g);
    if (h->roce)
        snprintf(buf, len, "%s port %d (RoCE, GID index %d %s, MTU %s)%s", h->name, h->port, h->gid_index, g,
                 gshmemi_hw_mtu_name(h->pattr.active_mtu), h->n_bells ? ", CPU-assisted doorbell" : "");
    else
        snprintf(buf, len, "%s port %d (InfiniBand, LID %#x, MTU %s)%s", h->name, h->port, h->pattr.lid,
                 gshmemi_hw_mtu_name(h->pattr.active_mtu), h->n_bells ? ", CPU-assisted doorbell" : "");
}

/* ---- what gshmem-info reports -------------------------------------------------------------- */
#define OUT(...) (o += (size_t)snprintf(buf + o, o < len ? len - o : 0, __VA_ARGS__))

static const char *gid_type_name(uint32_t t) {
    return t == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2" : t == IBV_GID_TYPE_ROCE_V1 ? "RoCE v1" : "IB";
}

/* Tries what a job does first on the chosen device: register GPU memory (dma-buf, then peer
 * memory), and map a queue pair's doorbell page for the GPU. */
static size_t deep_report(char *buf, size_t len, size_t o) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        cudaGetLastError();
        OUT("  GPU memory registration: not tried (no GPU visible to this process)\n");
        return o;
    }
    hw_dev h;
    memset(&h, 0, sizeof h);
    char why[256];
    if (!(h.ctx = find_port(&h.port, &h.pattr, why, sizeof why))) return o;
    snprintf(h.name, sizeof h.name, "%s", ibv_get_device_name(h.ctx->device));
    if (!(h.pd = ibv_alloc_pd(h.ctx))) {
        OUT("  %s: ibv_alloc_pd failed: %s\n", h.name, strerror(errno));
        ibv_close_device(h.ctx);
        return o;
    }
    void *g = NULL;
    const size_t bytes = 2u << 20;
    if (cudaMalloc(&g, bytes) != cudaSuccess) {
        cudaGetLastError();
        OUT("  GPU memory registration: not tried (cudaMalloc of 2 MiB on GPU 0 failed)\n");
    } else {
        char dwhy[160] = "";
        struct ibv_mr *mr = reg_dmabuf(&h, g, bytes, dwhy, sizeof dwhy);
        OUT("  GPU memory (GPU 0) registers with %s by dma-buf: %s%s%s\n", h.name, mr ? "yes" : "no",
            mr ? "" : " - ", mr ? "" : dwhy);
        if (mr) ibv_dereg_mr(mr);
        mr = ibv_reg_mr(h.pd, g, bytes, MR_ACCESS);
        OUT("  GPU memory (GPU 0) registers with %s by peer memory (nvidia-peermem): %s%s%s\n", h.name,
            mr ? "yes" : "no", mr ? "" : " - ibv_reg_mr: ", mr ? "" : strerror(errno));
        if (mr) ibv_dereg_mr(mr);
        cudaFree(g);
    }
    struct ibv_cq *cq = ibv_create_cq(h.ctx, 2, NULL, NULL, 0);
    struct ibv_qp_init_attr qa = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
                                  .cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1}};
    struct ibv_qp *qp = cq ? ibv_create_qp(h.pd, &qa) : NULL;
    struct mlx5dv_qp dq = {0};
    struct mlx5dv_obj obj = {.qp = {.in = qp, .out = &dq}};
    if (!qp || mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP)) {
        OUT("  doorbell page: not tried (a test queue pair could not be made: %s)\n", strerror(errno));
    } else {
        void *page = (void *)((uintptr_t)dq.bf.reg & ~(uintptr_t)(PAGE - 1));
        cudaError_t e = cudaHostRegister(page, PAGE, cudaHostRegisterMapped | cudaHostRegisterPortable | cudaHostRegisterIoMemory);
        OUT("  the doorbell page of %s maps for the GPU: %s%s\n", h.name, e == cudaSuccess ? "yes" : "no - ",
            e == cudaSuccess ? "" : "cudaHostRegister(IoMemory) failed; the GPU's work requests are then rung by a "
                                    "CPU thread (GSHMEM_IBGDA_CPU_DOORBELL)");
        if (e == cudaSuccess) cudaHostUnregister(page);
        else cudaGetLastError();
    }
    if (qp) ibv_destroy_qp(qp);
    if (cq) ibv_destroy_cq(cq);
    ibv_dealloc_pd(h.pd);
    ibv_close_device(h.ctx);
    return o;
}

void gshmemi_ibgda_hw_report(char *buf, size_t len, bool deep) {
    size_t o = 0;
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    if (!list) {
        OUT("  RDMA devices: none (ibv_get_device_list: %s)\n", strerror(errno));
        return;
    }
    OUT("  RDMA devices: %d\n", n);
    for (int i = 0; i < n; i++) {
        const char *nm = ibv_get_device_name(list[i]);
        const bool mlx5 = mlx5dv_is_supported(list[i]);
        struct ibv_context *ctx = ibv_open_device(list[i]);
        struct ibv_device_attr da;
        if (!ctx || ibv_query_device(ctx, &da)) {
            OUT("    %s%s: cannot be opened (%s)\n", nm, mlx5 ? " (mlx5)" : "", strerror(errno));
            if (ctx) ibv_close_device(ctx);
            continue;
        }
        OUT("    %s%s: %d port(s), %d outstanding reads/atomics per QP\n", nm, mlx5 ? " (mlx5)" : " (not mlx5: not usable by ibgda)",
            da.phys_port_cnt, da.max_qp_rd_atom);
        for (int p = 1; p <= da.phys_port_cnt; p++) {
            struct ibv_port_attr pa;
            if (ibv_query_port(ctx, (uint8_t)p, &pa)) continue;
            const bool eth = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
            OUT("      port %d: %s, %s, MTU %s", p, ibv_port_state_str(pa.state), eth ? "Ethernet (RoCE)" : "InfiniBand",
                gshmemi_hw_mtu_name(pa.active_mtu));
            if (!eth) OUT(", LID %#x", pa.lid);
            OUT("\n");
            for (int gi = 0; gi < pa.gid_tbl_len && gi < 16; gi++) {
                struct ibv_gid_entry e;
                if (ibv_query_gid_ex(ctx, (uint32_t)p, (uint32_t)gi, &e, 0) || zero_gid(&e.gid)) continue;
                char g[64];
                gid_text(&e.gid, g, sizeof g);
                OUT("        GID %d: %s (%s)\n", gi, g, gid_type_name(e.gid_type));
            }
        }
        ibv_close_device(ctx);
    }
    ibv_free_device_list(list);
    if (deep) o = deep_report(buf, len, o);
}
