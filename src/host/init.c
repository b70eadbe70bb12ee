/* gshmem_init / gshmem_finalize and the queries around them. Init order: configuration,
 * bootstrap (who are the PEs), GPU selection and placement (placement.c), transports (who reaches whom),
 * symmetric heap, library-internal symmetric objects, device state in every module. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "cuda_driver.h"
#include "cuda_util.h"
#include "device_state.h"
#include "entry.h"
#include "host_ops.h"
#include "placement.h"
#include "state.h"
#include "src/team/team.h"
#include "gshmem.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static gshmemi_status require_attr(CUdevice dev, CUdevice_attribute a, const char *what) {
    int v = 0;
    GSHMEMI_CU(cuDeviceGetAttribute(&v, a, dev));
    if (!v) {
        gshmemi_error("this GPU (device %d) does not support %s, which gshmem's symmetric heap "
                      "needs; use a GPU/driver with CUDA VMM support (Pascal or newer, Linux)",
                      (int)dev, what);
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    return GSHMEM_SUCCESS;
}

/* The GPU this PE runs on (placement.c) and the features its heap needs. */
static gshmemi_status select_device(gshmemi_state *s) {
    GSHMEMI_CHECK(gshmemi_place_select_device(s));
    CUdevice dev;
    GSHMEMI_CU(cuDeviceGet(&dev, s->cuda_dev));
    GSHMEMI_CHECK(require_attr(dev, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                               "virtual memory management (cuMemCreate/cuMemMap)"));
    GSHMEMI_CHECK(require_attr(dev, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
                               "exporting memory as POSIX file descriptors"));
    return GSHMEM_SUCCESS;
}

static gshmemi_status init_transports(gshmemi_state *s) {
    bool *reach = calloc((size_t)s->npes, sizeof *reach);
    s->pe_transport = malloc((size_t)s->npes * sizeof *s->pe_transport);
    s->pe_slot = malloc((size_t)s->npes * sizeof *s->pe_slot);
    if (!reach || !s->pe_transport || !s->pe_slot) { free(reach); return GSHMEM_ERR_NO_MEMORY; }
    for (int pe = 0; pe < s->npes; pe++) { s->pe_transport[pe] = -1; s->pe_slot[pe] = -1; }
    gshmemi_status st = GSHMEM_SUCCESS;
    for (int t = 0; gshmemi_transports[t] && t < GSHMEMI_MAX_TRANSPORTS && st == GSHMEM_SUCCESS; t++) {
        memset(reach, 0, (size_t)s->npes * sizeof *reach);
        st = gshmemi_transports[t]->init(s, &s->tctx[t], reach);
        s->transports[t] = gshmemi_transports[t];
        s->n_transports = t + 1;
        for (int pe = 0; pe < s->npes; pe++)
            if (reach[pe] && s->pe_transport[pe] < 0) s->pe_transport[pe] = (int8_t)t;
    }
    free(reach);
    GSHMEMI_CHECK(st);
    const gshmemi_bootstrap *b = &s->boot;
    for (int pe = 0; pe < s->npes; pe++) {
        if (s->pe_transport[pe] < 0) {
            gshmemi_error("PE %d (node %d) cannot reach PE %d (node %d): no transport of this build "
                          "reaches another node (build with libfabric for a transport between nodes: "
                          "meson -Dlibfabric_root=..., see docs/nodes.md), so all PEs must run "
                          "on one node", s->mype, b->node_id, pe, b->node_of[pe]);
            return GSHMEM_ERR_NOT_AVAILABLE;
        }
        /* load/store peers: window slot (k - me) mod L, k = their index on this node */
        if (s->transports[s->pe_transport[pe]]->load_store)
            s->pe_slot[pe] = (int16_t)((b->local_rank_of[pe] - b->local_rank + b->local_size) %
                                       b->local_size);
        else s->has_remote = true;
    }
    return GSHMEM_SUCCESS;
}

/* The device view: PE numbers, heap geometry, slot table, barrier objects, limits. */
static gshmemi_status build_device_state(gshmemi_state *s) {
    gshmemi_device_state *d = calloc(1, sizeof *d);
    if (!d) return GSHMEM_ERR_NO_MEMORY;
    s->dstate = d;
    const gshmemi_bootstrap *b = &s->boot;
    /* fast slot arithmetic applies when this node's PEs are consecutive ranks in order */
    int first = -1, contiguous = 1;
    for (int pe = 0; pe < s->npes; pe++) {
        if (b->node_of[pe] != b->node_id) continue;
        if (first < 0) first = pe;
        if (b->local_rank_of[pe] != pe - first) contiguous = 0;
    }
    GSHMEMI_CUDA(cudaMalloc(&s->d_pe_slot, (size_t)s->npes * sizeof(int16_t)));
    GSHMEMI_CUDA(cudaMemcpy(s->d_pe_slot, s->pe_slot, (size_t)s->npes * sizeof(int16_t),
                            cudaMemcpyHostToDevice));
    d->version = GSHMEMI_STATE_VERSION;
    d->mype = s->mype;
    d->npes = s->npes;
    d->node_first = contiguous ? first : -1;
    d->node_n = b->local_size;
    d->my_local = b->local_rank;
    d->debug = gshmemi_cfg.DEBUG;
    /* a one-GPU job: barrier arrivals fence at device scope (gshmemi_count_round) */
    d->fence_gpu = gshmemi_place.gpu_pes == s->npes && s->npes > 1;
    d->heap_base = s->heap.base;
    d->heap_window = s->heap.window;
    d->heap_mapped = s->heap.mapped;
    d->pe_slot = s->d_pe_slot;
    d->sync_flags = s->sync_flags;
    d->sync_epoch = s->sync_epoch;
    d->wait_timeout_ns = (uint64_t)(gshmemi_cfg.WAIT_TIMEOUT * 1e9);
    d->teams = (const gshmemi_team *)s->d_teams;
    d->teams_max = s->teams_max;
    for (int t = 0; t < s->n_transports; t++)
        if (s->transports[t]->fill_device) GSHMEMI_CHECK(s->transports[t]->fill_device(s, s->tctx[t], d));
    return GSHMEM_SUCCESS;
}

static gshmemi_status alloc_internal(gshmemi_state *s) {
    void *p;
    size_t bytes = ((size_t)s->npes + 1) * sizeof(uint64_t);
    GSHMEMI_CHECK(gshmemi_heap_alloc(s, bytes, 256, true, &p, "gshmem_init"));
    GSHMEMI_CUDA(cudaMemsetAsync(p, 0, bytes, (cudaStream_t)s->stream));
    GSHMEMI_CUDA(cudaStreamSynchronize((cudaStream_t)s->stream));
    s->sync_flags = p;
    s->sync_epoch = (uint64_t *)p + s->npes;
    return GSHMEM_SUCCESS;
}

static void abort_peers(int code, const char *msg) {
    gshmemi_bootstrap *b = &gshmemi_g.boot;
    if (b->ops && b->ops->abort) b->ops->abort(b, code, msg);
}

/* OpenSHMEM finalizes implicitly at exit. A PE that exits early (an error path) would wait
 * for peers that never come, so the barrier inside is bounded more tightly here. */
static void finalize_at_exit(void) {
    if (!gshmemi_g.initialized) return;
    if (gshmemi_cfg.BOOTSTRAP_TIMEOUT > 10) gshmemi_cfg.BOOTSTRAP_TIMEOUT = 10;
    gshmem_finalize();
}

static gshmemi_status do_init(gshmemi_state *s) {
    double t0 = now_s();
    GSHMEMI_CHECK(gshmemi_config_load(&gshmemi_cfg));
    gshmemi_config_nvshmem_warn();
    GSHMEMI_CHECK(gshmemi_bootstrap_init(&s->boot));
    s->mype = s->boot.rank;
    s->npes = s->boot.size;
    gshmemi_set_log_rank(s->mype);
    gshmemi_abort_hook = abort_peers;
    GSHMEMI_CHECK(select_device(s));
    GSHMEMI_CHECK(gshmemi_place_exchange(s));
    cudaStream_t stream;
    GSHMEMI_CUDA(cudaStreamCreate(&stream));  /* blocking: ordered after the legacy stream */
    s->stream = stream;
    /* non-blocking: host atomics, signals and polls must not wait for user kernels on the
     * legacy stream (such a kernel may be the one waiting for them) */
    GSHMEMI_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    s->nb_stream = stream;
    /* the copy-engine half of large moves, forked from the caller's stream (team/coll.c) */
    GSHMEMI_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    s->ce_stream = stream;
    cudaEvent_t ev;
    GSHMEMI_CUDA(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    s->ce_fork = ev;
    GSHMEMI_CUDA(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    s->ce_join = ev;
    GSHMEMI_CUDA(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    s->legacy_ev = ev;
    GSHMEMI_CHECK(init_transports(s));
    GSHMEMI_CHECK(gshmemi_heap_init(s));
    GSHMEMI_CHECK(alloc_internal(s));
    GSHMEMI_CHECK(gshmemi_teams_init(s));
    GSHMEMI_CHECK(build_device_state(s));
    GSHMEMI_CHECK(gshmemi_device_state_publish(s));
    GSHMEMI_CHECK(s->boot.ops->barrier(&s->boot));
    s->initialized = true;
    s->init_seconds = now_s() - t0;
    char where[512];
    gshmemi_place_describe(s, where, sizeof where);
    gshmemi_info("initialized: PE %d of %d, node %d of %d (%d local PEs), init %.3f s; %s",
                 s->mype, s->npes, s->boot.node_id, s->boot.n_nodes, s->boot.local_size,
                 s->init_seconds, where);
    if (gshmemi_cfg.INFO && s->mype == 0) {
        printf("gshmem %s: %d PEs on %d nodes; %s\nVariables:\n", GSHMEM_VERSION_STRING, s->npes,
               s->boot.n_nodes, where);
        gshmemi_config_print(&gshmemi_cfg, stdout);
        fflush(stdout);
    }
    static int registered;
    if (!registered++) atexit(finalize_at_exit);
    return GSHMEM_SUCCESS;
}

int gshmemx_init_status(void) {
    if (gshmemi_g.initialized) return GSHMEM_SUCCESS;
    gshmemi_status st = do_init(&gshmemi_g);
    if (st != GSHMEM_SUCCESS)
        gshmemi_error("gshmem_init failed: %s (see the messages above)", gshmemi_status_str(st));
    return st;
}

void gshmem_init(void) {
    if (gshmemx_init_status() != GSHMEM_SUCCESS) gshmemi_fatal("gshmem_init failed; exiting");
}

int gshmem_init_thread(int requested, int *provided) {
    int st = gshmemx_init_status();
    if (provided) *provided = GSHMEM_THREAD_MULTIPLE;
    (void)requested;
    return st;
}

void gshmem_query_thread(int *provided) {
    if (provided) *provided = GSHMEM_THREAD_MULTIPLE;
}

/* Init on a unique id: the uid bootstrap reads these through the configuration table like
 * gshmrun's PEs. */
static int init_uid(const char *call, int r, int n_pes, const char *id) {
    if (n_pes <= 0 || r < 0 || r >= n_pes) {
        gshmemi_error("%s: attr must give 0 <= rank < n_pes (got rank %d, n_pes %d)", call, r, n_pes);
        return GSHMEM_ERR_INVALID_ARG;
    }
    char uid[GSHMEMX_UNIQUEID_BYTES + 1];
    memcpy(uid, id, GSHMEMX_UNIQUEID_BYTES);
    uid[GSHMEMX_UNIQUEID_BYTES] = 0;
    char rank[16], n[16];
    snprintf(rank, sizeof rank, "%d", r);
    snprintf(n, sizeof n, "%d", n_pes);
    /* the uid bootstrap reads these through the configuration table like gshmrun's PEs */
    setenv("GSHMEM_BOOTSTRAP", "uid", 1);
    setenv("GSHMEM_UID", uid, 1);
    setenv("GSHMEM_RANK", rank, 1);
    setenv("GSHMEM_NPES", n, 1);
    return gshmemx_init_status();
}

int gshmemx_init_attr(const gshmemx_init_attr_t *attr) {
    if (gshmemi_g.initialized) return GSHMEM_SUCCESS;
    if (!attr) {
        gshmemi_error("gshmemx_init_attr: attr is NULL; pass the rank, n_pes and unique id");
        return GSHMEM_ERR_INVALID_ARG;
    }
    return init_uid("gshmemx_init_attr", attr->rank, attr->n_pes, attr->uid.internal);
}

int gshmemx_init_flags(unsigned int flags, const gshmemx_init_attr_t *attr, const void *mpi_comm) {
    const char *call = "gshmemx_init_flags";
    if (gshmemi_g.initialized) return GSHMEM_SUCCESS;
    if (flags & (GSHMEMX_INIT_THREAD_PES | GSHMEMX_INIT_WITH_SHMEM)) {
        gshmemi_error("%s: flags %#x: %s is not available (a gshmem PE is a process, found by "
                      "gshmrun, PMIx, a unique id or an MPI communicator)", call, flags,
                      flags & GSHMEMX_INIT_THREAD_PES ? "GSHMEMX_INIT_THREAD_PES"
                                                      : "GSHMEMX_INIT_WITH_SHMEM");
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    unsigned known = GSHMEMX_INIT_WITH_MPI_COMM | GSHMEMX_INIT_WITH_UNIQUEID;
    if ((flags & ~known) || (flags & known) == known) {
        gshmemi_error("%s: flags %#x: give at most one of GSHMEMX_INIT_WITH_MPI_COMM (2) and "
                      "GSHMEMX_INIT_WITH_UNIQUEID (8)", call, flags);
        return GSHMEM_ERR_INVALID_ARG;
    }
    if (flags & GSHMEMX_INIT_WITH_UNIQUEID) {
        if (!attr) {
            gshmemi_error("%s: GSHMEMX_INIT_WITH_UNIQUEID needs attr (rank, n_pes, uid)", call);
            return GSHMEM_ERR_INVALID_ARG;
        }
        return init_uid(call, attr->rank, attr->n_pes, attr->uid.internal);
    }
    if (flags & GSHMEMX_INIT_WITH_MPI_COMM) {
        GSHMEMI_CHECK(gshmemi_config_load(&gshmemi_cfg));
        int r, n;
        char uid[GSHMEMX_UNIQUEID_BYTES];
        GSHMEMI_CHECK(gshmemi_mpi_uid(mpi_comm, &r, &n, uid, sizeof uid));
        return init_uid(call, r, n, uid);
    }
    return gshmemx_init_status();
}

const char *gshmemx_status_str(int status) { return gshmemi_status_str(status); }

int gshmemx_get_uniqueid(gshmemx_uniqueid_t *uid) {
    if (!uid) return GSHMEM_ERR_INVALID_ARG;
    memset(uid, 0, sizeof *uid);
    int fd;
    GSHMEMI_CHECK(gshmemi_config_load(&gshmemi_cfg));
    return gshmemi_uid_create(uid->internal, sizeof uid->internal, &fd, false);
}

void gshmem_finalize(void) {
    gshmemi_state *s = &gshmemi_g;
    if (!s->initialized) return;
    s->initialized = false;
    /* all PEs stop using each other's memory before anyone unmaps */
    cudaStreamSynchronize((cudaStream_t)s->stream);
    if (s->boot.ops->barrier(&s->boot) != GSHMEM_SUCCESS)
        gshmemi_warn("gshmem_finalize: barrier with the other PEs failed; finalizing anyway");
    gshmemi_device_state_clear();
    gshmemx_buffer_unregister_all();
    gshmemi_teams_finalize(s);
    for (int t = s->n_transports - 1; t >= 0; t--)
        if (s->transports[t]->finalize) s->transports[t]->finalize(s, s->tctx[t]);
    gshmemi_symreg_finalize(s);   /* the registered buffers' mappings, inside the heap's range */
    gshmemi_heap_finalize(s);
    cudaFree(s->d_pe_slot);
    cudaStreamDestroy((cudaStream_t)s->stream);
    cudaStreamDestroy((cudaStream_t)s->nb_stream);
    cudaStreamDestroy((cudaStream_t)s->ce_stream);
    cudaEventDestroy((cudaEvent_t)s->ce_fork);
    cudaEventDestroy((cudaEvent_t)s->ce_join);
    if (s->legacy_ev) cudaEventDestroy((cudaEvent_t)s->legacy_ev);
    gshmemi_host_amo_finalize();
    gshmemi_abort_hook = NULL;
    gshmemi_bootstrap_finalize(&s->boot);
    free(s->dstate);
    free(s->pe_transport);
    free(s->pe_slot);
    free(s->dev_uuids);
    gshmemi_place_finalize();
    memset(s, 0, sizeof *s);
}

void gshmem_global_exit(int status) {
    char msg[64];
    snprintf(msg, sizeof msg, "gshmem_global_exit(%d) called", status);
    gshmemi_bootstrap *b = &gshmemi_g.boot;
    if (gshmemi_g.initialized && b->ops && b->ops->abort) b->ops->abort(b, status, msg);
    exit(status);
}

int gshmemi_host_my_pe(void) { return gshmemi_g.initialized ? gshmemi_g.mype : -1; }
int gshmemi_host_n_pes(void) { return gshmemi_g.initialized ? gshmemi_g.npes : -1; }
double gshmemx_init_seconds(void) { return gshmemi_g.init_seconds; }

void gshmem_info_get_version(int *major, int *minor) {
    if (major) *major = 1;
    if (minor) *minor = 5;
}

void gshmem_info_get_name(char *name) {
    if (name) snprintf(name, GSHMEM_MAX_NAME_LEN, "%s %s", GSHMEM_VENDOR_STRING,
                       GSHMEM_VERSION_STRING);
}
