"""allreduce: every PE sums a torch tensor with every other PE's copy, on torch's current CUDA
stream (in place, float32), and a bfloat16 one into a second tensor; then each PE checks.

    gshmrun -n 2 python examples/python/allreduce.py
    mpirun -np 2 python examples/python/allreduce.py
    torchrun --nproc-per-node 2 examples/python/allreduce.py

(From a checkout without installing the package: PYTHONPATH=python
GSHMEMPY_LIB=build/src/libgshmem.so.)"""

import sys

import torch

import gshmem


def main():
    with gshmem.init() as g:                          # finalize() when the block ends
        n = 1 << 20
        x = gshmem.tensor((n,), torch.float32)        # on the symmetric heap: the same
        x.fill_(g.pe + 1)                             # address on every PE
        gshmem.allreduce(x)                           # sum, in place, on the current stream

        h = gshmem.tensor((n,), torch.bfloat16)
        out = gshmem.tensor((n,), torch.bfloat16)
        h.fill_(g.pe)
        gshmem.allreduce(h, "max", out=out)
        torch.cuda.synchronize()

        want = g.n_pes * (g.n_pes + 1) // 2
        ok = bool((x == want).all()) and bool((out == g.n_pes - 1).all())
        print("allreduce: PE %d of %d: sum %g (expected %d), bfloat16 max %g (expected %d): %s"
              % (g.pe, g.n_pes, x[0].item(), want, out[0].item(), g.n_pes - 1,
                 "OK" if ok else "WRONG"))
        gshmem.free(out)                              # collective, like the allocation
        gshmem.free(h)
        gshmem.free(x)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
