/* Registry of per-translation-unit device-state updaters (see gshmem/device/state.h):
 * every .cu file that includes gshmem.h registers one at load time; publishing the state
 * calls each, so kernels in every unit see the same PE numbers, heap and tables. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cuda_util.h"
#include "device_state.h"
#include "state.h"
#include "gshmem/device/state.h"

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

/* Records `s` as the published state and runs every updater with it. */
static gshmemi_status push_all(const gshmemi_device_state *s) {
    pthread_mutex_lock(&lock);
    published = *s;
    int n = n_updaters;
    gshmemi_state_updater *copy = malloc((size_t)(n ? n : 1) * sizeof *copy);
    if (copy) memcpy(copy, updaters, (size_t)n * sizeof *copy);
    pthread_mutex_unlock(&lock);
    if (!copy) return GSHMEM_ERR_NO_MEMORY;
    gshmemi_status rc = GSHMEM_SUCCESS;
    for (int i = 0; i < n && rc == GSHMEM_SUCCESS; i++) rc = run_updater(copy[i], s);
    free(copy);
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
    pthread_mutex_unlock(&lock);
}
