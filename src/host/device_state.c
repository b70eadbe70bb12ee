/* Registry of per-translation-unit device-state updaters (see gshmem/device/state.h):
 * every .cu file that includes gshmem.h registers one at load time; publishing the state
 * calls each, so kernels in every unit see the same PE numbers, heap and tables. Modules and
 * libraries loaded at run time through the driver (cuModuleLoad, cuLibraryLoad, NVRTC, cupy)
 * have no constructor: gshmemx_cumodule_init / gshmemx_culibrary_init register the address
 * of their copy of the state, and publishing copies the state there too. */
#include <cuda.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cuda_driver.h"
#include "cuda_util.h"
#include "device_state.h"
#include "state.h"
#include "gshmem/device/state.h"
#include "gshmemx.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gshmemi_state_updater *updaters;
static int n_updaters, cap_updaters;
static gshmemi_device_state published;  /* last state pushed; zero before init */

static gshmemi_status run_updater(gshmemi_state_updater fn, const gshmemi_device_state *s) {
    int err = fn(s);
    if (err != 0) {
        gshmemi_error("could not copy gshmem's device state into a CUDA module: if the error "
                      "below is about the device image, build the module for this GPU's "
                      "architecture (nvcc -arch=sm_XX)");
        return gshmemi_cuda_check(err, "cudaMemcpyToSymbol(gshmemi_dstate)", __FILE__, __LINE__);
    }
    return GSHMEM_SUCCESS;
}

int gshmemx_register_state_updater(gshmemi_state_updater fn, uint32_t version) {
    if (version != GSHMEMI_STATE_VERSION) {
        gshmemi_error("a CUDA module was compiled with gshmem headers of device-state version "
                      "0x%x but libgshmem has 0x%x; rebuild it against the installed headers",
                      version, (unsigned)GSHMEMI_STATE_VERSION);
        return GSHMEM_ERR_INVALID_ARG;
    }
    pthread_mutex_lock(&lock);
    gshmemi_state_updater *u = gshmemi_grow(updaters, n_updaters, &cap_updaters, sizeof *u, 16);
    if (!u) {
        pthread_mutex_unlock(&lock);
        return GSHMEM_ERR_NO_MEMORY;
    }
    updaters = u;
    updaters[n_updaters++] = fn;
    gshmemi_device_state s = published;
    pthread_mutex_unlock(&lock);
    /* a module loaded after init (dlopen) gets the current state at once */
    return s.version ? run_updater(fn, &s) : GSHMEM_SUCCESS;
}

void gshmemx_unregister_state_updater(gshmemi_state_updater fn) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n_updaters; i++) {
        if (updaters[i] == fn) {
            updaters[i] = updaters[--n_updaters];
            break;
        }
    }
    pthread_mutex_unlock(&lock);
}

/* ---- modules and libraries loaded through the driver ----------------------------------- */
/* The state's symbol: nvcc keeps a `static __constant__` variable under its internal-linkage
 * mangled name in a cubin; other compilers (NVRTC with name expressions) may keep it plain. */
static const char *const state_symbols[] = {"_ZL14gshmemi_dstate", "gshmemi_dstate"};

typedef struct module_target {
    void *handle;              /* CUmodule or CUlibrary */
    int library;
    CUdeviceptr where;         /* its gshmemi_dstate in the current context */
} module_target;
static module_target *modules;
static int n_modules, cap_modules;

static gshmemi_status copy_to_module(const module_target *m, const gshmemi_device_state *s,
                                     const char *call) {
    CUresult r = cuMemcpyHtoD(m->where, s, sizeof *s);
    if (r != CUDA_SUCCESS) {
        gshmemi_error("%s(%p): copying gshmem's device state into the %s failed (%s: %s); was it "
                      "unloaded, or loaded in another context? Call gshmemx_%s_finalize before "
                      "unloading it", call, m->handle, m->library ? "library" : "module",
                      gshmemi_driver_error_name(r), gshmemi_driver_error_string(r),
                      m->library ? "culibrary" : "cumodule");
        return GSHMEM_ERR_CUDA;
    }
    return GSHMEM_SUCCESS;
}

/* Finds the state symbol of a module or library and checks it has this header's layout. */
static gshmemi_status find_state(void *handle, int library, CUdeviceptr *where, const char *call) {
    if (!handle) {
        gshmemi_error("%s: the %s handle is NULL; pass what %s returned", call,
                      library ? "CUlibrary" : "CUmodule", library ? "cuLibraryLoad*" : "cuModuleLoad*");
        return GSHMEM_ERR_INVALID_ARG;
    }
    const char *why = NULL;
    if (gshmemi_driver_load(&why) != CUDA_SUCCESS) {
        gshmemi_error("%s: %s", call, why ? why : "the CUDA driver could not be loaded");
        return GSHMEM_ERR_NO_DEVICE;
    }
    CUresult r = CUDA_ERROR_NOT_FOUND;
    size_t size = 0;
    for (size_t i = 0; i < sizeof state_symbols / sizeof state_symbols[0] && r == CUDA_ERROR_NOT_FOUND; i++)
        r = library ? cuLibraryGetGlobal(where, &size, (CUlibrary)handle, state_symbols[i])
                    : cuModuleGetGlobal(where, &size, (CUmodule)handle, state_symbols[i]);
    if (r == CUDA_ERROR_NOT_FOUND) {
        gshmemi_error("%s(%p): the %s has no gshmem device state (gshmemi_dstate): its source does "
                      "not include gshmem.h, or none of its kernels calls gshmem", call, handle,
                      library ? "library" : "module");
        return GSHMEM_ERR_INVALID_ARG;
    }
    if (r != CUDA_SUCCESS) {
        gshmemi_error("%s(%p): %s failed: %s (%s)", call, handle,
                      library ? "cuLibraryGetGlobal" : "cuModuleGetGlobal",
                      gshmemi_driver_error_name(r), gshmemi_driver_error_string(r));
        return GSHMEM_ERR_CUDA;
    }
    if (size != sizeof(gshmemi_device_state)) {
        gshmemi_error("%s(%p): its gshmemi_dstate is %zu bytes, libgshmem's %zu: the %s was compiled "
                      "with gshmem headers of another version; rebuild it against the installed "
                      "headers", call, handle, size, sizeof(gshmemi_device_state),
                      library ? "library" : "module");
        return GSHMEM_ERR_INVALID_ARG;
    }
    return GSHMEM_SUCCESS;
}

static int register_module(void *handle, int library, const char *call) {
    CUdeviceptr where = 0;
    GSHMEMI_CHECK(find_state(handle, library, &where, call));
    module_target m = {.handle = handle, .library = library, .where = where};
    int known = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n_modules; i++) {
        if (modules[i].handle == handle && modules[i].library == library) {
            modules[i].where = where;   /* registered again: refreshed, as NVSHMEM allows */
            known = 1;
        }
    }
    if (!known) {
        module_target *nm = gshmemi_grow(modules, n_modules, &cap_modules, sizeof *nm, 8);
        if (!nm) {
            pthread_mutex_unlock(&lock);
            return GSHMEM_ERR_NO_MEMORY;
        }
        modules = nm;
        modules[n_modules++] = m;
    }
    gshmemi_device_state s = published;
    pthread_mutex_unlock(&lock);
    /* before init the module keeps version 0 (its calls fail loudly) until the state comes */
    return copy_to_module(&m, &s, call);
}

static int unregister_module(void *handle, int library, const char *call) {
    pthread_mutex_lock(&lock);
    int found = 0;
    for (int i = 0; i < n_modules && !found; i++) {
        if (modules[i].handle == handle && modules[i].library == library) {
            modules[i] = modules[--n_modules];
            found = 1;
        }
    }
    pthread_mutex_unlock(&lock);
    if (!found) {
        gshmemi_error("%s(%p): this %s was not registered (gshmemx_%s_init), or was finalized "
                      "already", call, handle, library ? "library" : "module",
                      library ? "culibrary" : "cumodule");
        return GSHMEM_ERR_INVALID_ARG;
    }
    return GSHMEM_SUCCESS;
}

int gshmemx_cumodule_init(struct CUmod_st *module) {
    return register_module(module, 0, "gshmemx_cumodule_init");
}
int gshmemx_cumodule_finalize(struct CUmod_st *module) {
    return unregister_module(module, 0, "gshmemx_cumodule_finalize");
}
int gshmemx_culibrary_init(struct CUlib_st *library) {
    return register_module(library, 1, "gshmemx_culibrary_init");
}
int gshmemx_culibrary_finalize(struct CUlib_st *library) {
    return unregister_module(library, 1, "gshmemx_culibrary_finalize");
}

/* Records `s` as the published state and runs every updater with it. */
static gshmemi_status push_all(const gshmemi_device_state *s) {
    pthread_mutex_lock(&lock);
    published = *s;
    int n = n_updaters, nm = n_modules;
    gshmemi_state_updater *copy = malloc((size_t)(n ? n : 1) * sizeof *copy);
    module_target *mcopy = malloc((size_t)(nm ? nm : 1) * sizeof *mcopy);
    if (copy) memcpy(copy, updaters, (size_t)n * sizeof *copy);
    if (mcopy) memcpy(mcopy, modules, (size_t)nm * sizeof *mcopy);
    pthread_mutex_unlock(&lock);
    gshmemi_status rc = copy && mcopy ? GSHMEM_SUCCESS : GSHMEM_ERR_NO_MEMORY;
    for (int i = 0; i < n && rc == GSHMEM_SUCCESS; i++) rc = run_updater(copy[i], s);
    for (int i = 0; i < nm && rc == GSHMEM_SUCCESS; i++)
        rc = copy_to_module(&mcopy[i], s, "publishing gshmem's device state");
    free(copy);
    free(mcopy);
    return rc;
}

gshmemi_status gshmemi_device_state_publish(gshmemi_state *st) {
    return push_all((const gshmemi_device_state *)st->dstate);
}

/* After finalize, device calls must fail loudly again (version 0), not use a dead heap. */
void gshmemi_device_state_clear(void) {
    gshmemi_device_state zero;
    memset(&zero, 0, sizeof zero);
    pthread_mutex_lock(&lock);
    published = zero;
    /* best effort: after a failed kernel the context is unusable and the copies fail; the
     * process is going away then, so nothing is reported */
    for (int i = 0; i < n_updaters; i++) (void)updaters[i](&zero);
    for (int i = 0; i < n_modules; i++) (void)cuMemcpyHtoD(modules[i].where, &zero, sizeof zero);
    pthread_mutex_unlock(&lock);
}
