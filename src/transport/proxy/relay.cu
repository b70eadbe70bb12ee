/* The proxy's relay (staged mode under MPS): one thread of the proxy's own CUDA context that
 * turns entries the proxy writes into pinned host memory into 64-bit stores, in order. A store
 * the proxy enqueues as a stream memory operation (cuStreamWriteValue64) is seen by a kernel
 * polling the word about 3.5 us after the call began (a 1 us call, then the front end); the
 * relay's PCIe poll sees the entry and stores within about 1.5 us, and the proxy's part is a
 * few stores to host memory (bench/probes/place_lat.cu measures both). It runs only where
 * the proxy's context shares the GPU with the program's (MPS): without MPS a resident kernel of
 * another context would take the GPU in time slices. memq.h keeps it in one order with the
 * proxy's stream. */
#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "relay.h"
}

/* One 16-byte read across PCIe: the x86 host writes value, then tag (in order, one line), so
 * a read that sees the new tag sees the new value. */
static __device__ __forceinline__ void ld_slot(const gshmemi_relay_slot *s, uint64_t &value, uint64_t &tag) {
    asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(value), "=l"(tag) : "l"(s) : "memory");
}

static __device__ __forceinline__ uint64_t ld_volatile(const uint64_t *p) {
    uint64_t v;
    asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__global__ void gshmemi_relay_kernel(const gshmemi_relay_slot *slots, uint64_t *ctrl, const uint64_t *ticket_word) {
    uint64_t k = 0, told = 0;
    for (;;) {
        uint64_t value, tag;
        ld_slot(&slots[k % GSHMEMI_RELAY_SLOTS], value, tag);
        if ((tag & 0xffff) != ((k + 1) & 0xffff)) {
            if (told != k) {   /* idle: say how far it got (after its stores, system-wide) */
                asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(ctrl + GSHMEMI_RELAY_DONE), "l"(k) : "memory");
                told = k;
            } else if (ld_volatile(&ctrl[GSHMEMI_RELAY_STOP])) {
                /* stop comes after the proxy's last entry: look once more */
                ld_slot(&slots[k % GSHMEMI_RELAY_SLOTS], value, tag);
                if ((tag & 0xffff) != ((k + 1) & 0xffff)) return;
            }
            continue;
        }
        uint64_t *a = (uint64_t *)(uintptr_t)(tag >> 16);
        /* GPU memory: ordered after the relay's earlier stores for the GPU's kernels; the ticket
         * word (host): after all of them, system-wide (the proxy then answers for them) */
        if (a == ticket_word) asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(a), "l"(value) : "memory");
        else asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(a), "l"(value) : "memory");
        k++;
    }
}

extern "C" int gshmemi_launch_relay(void *stream, const gshmemi_relay_slot *slots, uint64_t *ctrl) {
    gshmemi_relay_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(slots, ctrl, ctrl + GSHMEMI_RELAY_TICKET);
    return (int)cudaGetLastError();
}

extern "C" int gshmemi_relay_load(void) {
    cudaFuncAttributes a;
    return (int)cudaFuncGetAttributes(&a, gshmemi_relay_kernel);
}
