"""moe_dispatch: the all-to-all of a mixture-of-experts layer from Python, with the data moved
by a device kernel. Every PE holds T tokens of H floats in a symmetric torch tensor; torch
routes each token to an expert (and so to the PE that holds it). A CUDA kernel, compiled at run
time by cupy and given gshmem's device state with gshmem.module_init(), sends each token with
one warp: an atomic fetch-add on the destination's counter reserves a row, a warp-scope put
copies the token into it. A barrier on the stream completes the exchange; each PE checks what it
received against torch's own routing of every PE's tokens.

    gshmrun -n 2 python examples/python/moe_dispatch.py

Needs cupy and nvcc (cupy compiles the kernel with nvcc, which reads gshmem's headers).
module_init uses libgshmem's gshmemx_cumodule_init where the library has it; otherwise the
package registers a state updater of its own and says so."""

import sys
import warnings

import torch

import gshmem

T = 512              # tokens per PE
H = 1024             # floats per token; element 0 carries the token's global id
EXPERTS_PER_PE = 4

KERNEL = r"""
#include <gshmem.h>

extern "C" __global__ void dispatch(const float *tokens, const int *dest, float *recv,
                                    int *count, int T, int H) {
    int t = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (t >= T) return;
    int pe = dest[t], row = 0;
    if (threadIdx.x % 32 == 0) row = gshmem_int_atomic_fetch_add(count, 1, pe);
    row = __shfl_sync(0xffffffffu, row, 0);
    gshmemx_float_put_warp(recv + (size_t)row * H, tokens + (size_t)t * H, H, pe);
}
"""


def tokens_of(pe):
    """PE pe's tokens: row t is token id pe*T+t; element 0 is the id, element j the id's
    last three digits plus j/2 (exact in float32)."""
    ids = torch.arange(pe * T, (pe + 1) * T, device="cuda", dtype=torch.float32)
    j = torch.arange(H, device="cuda", dtype=torch.float32)
    rows = (ids % 1000)[:, None] + j[None, :] * 0.5
    rows[:, 0] = ids
    return rows


def destination(pe, n):
    """The PE each of PE pe's tokens goes to (the holder of its expert)."""
    t = torch.arange(T, device="cuda")
    expert = (pe * 7 + t * 13 + t // 5) % (n * EXPERTS_PER_PE)
    return (expert // EXPERTS_PER_PE).to(torch.int32)


def main():
    try:
        import cupy
        import numpy
    except ImportError as e:
        print("moe_dispatch needs cupy (and numpy) to compile and launch its kernel: %s" % e)
        return 2
    with gshmem.init() as g:
        me, n = g.pe, g.n_pes
        mod = cupy.RawModule(code=KERNEL, options=gshmem.compile_options(), backend="nvcc")
        kernel = mod.get_function("dispatch")
        with warnings.catch_warnings(record=True) as notes:
            warnings.simplefilter("always")
            how = gshmem.module_init(mod)
        print("moe_dispatch: PE %d: device state through %s%s" % (
            me, how, "" if not notes else " (" + str(notes[0].message) + ")"))

        tokens = gshmem.tensor((T, H), torch.float32)
        recv = gshmem.tensor((n * T, H), torch.float32)     # room for every token
        count = gshmem.tensor((1,), torch.int32)
        dest = destination(me, n)                            # not symmetric: read locally
        tokens.copy_(tokens_of(me))
        count.zero_()
        gshmem.barrier()       # every counter zero and every token in place before any put

        stream = torch.cuda.current_stream()
        with cupy.cuda.ExternalStream(stream.cuda_stream):
            kernel((T * 32 // 256,), (256,),
                   (cupy.asarray(tokens), cupy.asarray(dest), cupy.asarray(recv),
                    cupy.asarray(count), numpy.int32(T), numpy.int32(H)))
        gshmem.barrier()       # on the stream: every put delivered, every PE past its kernel
        torch.cuda.synchronize()

        got = count.item()
        mine = [tokens_of(p)[destination(p, n) == me] for p in range(n)]
        want = torch.cat(mine)
        rows = recv[:got]
        order = rows[:, 0].argsort()
        ok = got == want.shape[0] and torch.equal(rows[order], want[want[:, 0].argsort()])
        print("moe_dispatch: PE %d of %d received %d tokens (expected %d): %s"
              % (me, n, got, want.shape[0], "OK" if ok else "WRONG"))
        gshmem.module_finalize(mod)
        gshmem.free(count)
        gshmem.free(recv)
        gshmem.free(tokens)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
