#!/usr/bin/env python3
"""bench_collectives: gshmem's allreduce, allgather and alltoall on torch tensors beside
torch.distributed (NCCL backend) on the same tensors, in the same processes, 8 B to 256 MiB;
then the cost of the Python layer per call. Started by torchrun (one process per GPU: NCCL does
not share a GPU between processes); gshmem initializes through torch.distributed's store.

    torchrun --standalone --nproc-per-node 4 python/benchmarks/bench_collectives.py \\
        --out bench-np4.json
    python/benchmarks/run_bench.sh BUILD_DIR [PYTHON]     (2 and 4 GPUs, with timeouts)

Times are CUDA-event medians after warm-up: each trial records an event, enqueues `iters`
calls back to back on the current stream, records another, and divides; the median of the
trials on the slowest PE is reported. Both libraries run in place on the same tensors
(allreduce: float32 sum; allgather and alltoall move bytes: uint8). Sizes are nccl-tests':
allreduce and alltoall the bytes of each PE's tensor, allgather the bytes of the gathered
output. Bus bandwidth = size / time * factor, factor 2(n-1)/n for allreduce, (n-1)/n for the
others. Before timing a size, gshmem's result is compared with NCCL's.

The cost of the Python layer (--overhead, on by default): host time to enqueue one 8-byte
allreduce, averaged over batches of back-to-back calls: through gshmem.allreduce (argument
checks, the current stream looked up), with the stream given, through the bare ctypes
function, from C (overhead.c, compiled here and loaded into this process), and
torch.distributed.all_reduce."""

import argparse
import ctypes
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

for _k, _v in (("NCCL_NVLS_ENABLE", "0"), ("NVSHMEM_DISABLE_NVLS", "1"),
               ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")):
    os.environ.setdefault(_k, _v)

import torch                        # noqa: E402 (after the environment it reads)
import torch.distributed as dist    # noqa: E402

import gshmem                       # noqa: E402
from gshmem import _lib             # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_size(text):
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    text = text.strip().lower().rstrip("b")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def sizes(lo, hi):
    s, out = lo, []
    while s <= hi:
        out.append(s)
        s *= 2
    return out


def iters_for(size):
    return 100 if size <= 1 << 20 else 30 if size <= 16 << 20 else 10


def time_op(op, iters, trials, warmup):
    """Median over trials of the per-call time (us) of `iters` back-to-back calls."""
    for _ in range(warmup):
        op()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    out = []
    for _ in range(trials):
        gshmem.barrier()                     # every PE starts the trial together
        torch.cuda.synchronize()
        start.record()
        for _ in range(iters):
            op()
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end) * 1e3 / iters)
    return statistics.median(out)


def slowest(value):
    t = torch.tensor([value], dtype=torch.float64, device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def pattern(count, dtype, salt):
    v = (torch.arange(count, device="cuda", dtype=torch.int64) * 7 + salt * 13) % 9
    return v.to(dtype)


class Case:
    """One collective at one size: gshmem's call, NCCL's call, and how to check them."""

    def __init__(self, name, size, n, bufs):
        self.name, self.size, self.ok = name, size, True
        me = gshmem.my_pe()
        if name == "allreduce":
            x = bufs["x"][:max(size // 4, 1)]
            self.g = lambda: gshmem.allreduce(x)
            self.t = lambda: dist.all_reduce(x)
            self.fill = lambda: x.copy_(pattern(x.numel(), torch.float32, me))
            self.result, self.factor = x, 2.0 * (n - 1) / n
        elif name == "allgather":
            per = size // n
            i, o = bufs["inp"][:per], bufs["out"][:per * n]
            self.g = lambda: gshmem.allgather(o, i)
            self.t = lambda: dist.all_gather_into_tensor(o, i)
            self.fill = lambda: (i.copy_(pattern(per, torch.uint8, me)), o.zero_())
            self.result, self.factor, self.ok = o, (n - 1) / n, per > 0
        else:
            c = size - size % n
            i, o = bufs["inp"][:c], bufs["out"][:c]
            self.g = lambda: gshmem.alltoall(gshmem.TEAM_WORLD, o, i)
            self.t = lambda: dist.all_to_all_single(o, i)
            self.fill = lambda: (i.copy_(pattern(c, torch.uint8, me)), o.zero_())
            self.result, self.factor, self.ok = o, (n - 1) / n, c > 0

    def check(self):
        """gshmem's result equals NCCL's on the same input."""
        self.fill()
        self.g()
        torch.cuda.synchronize()
        mine = self.result.clone()
        self.fill()
        self.t()
        torch.cuda.synchronize()
        return torch.equal(mine, self.result)


def buffers(name, hi, n):
    if name == "allreduce":
        return {"x": gshmem.tensor(hi // 4, torch.float32)}
    if name == "allgather":
        return {"inp": gshmem.tensor(max(hi // n, 1), torch.uint8),
                "out": gshmem.tensor(hi, torch.uint8)}
    return {"inp": gshmem.tensor(hi, torch.uint8), "out": gshmem.tensor(hi, torch.uint8)}


def run_collectives(args, n):
    rows = []
    for name in args.colls.split(","):
        bufs = buffers(name, args.max, n)
        for size in sizes(args.min, args.max):
            case = Case(name, size, n, bufs)
            if not case.ok:
                continue
            same = slowest(0.0 if case.check() else 1.0) == 0.0
            it = iters_for(size)
            g = slowest(time_op(case.g, it, args.trials, args.warmup))
            t = slowest(time_op(case.t, it, args.trials, args.warmup)) if not args.no_nccl \
                else float("nan")
            row = {"coll": name, "bytes": size, "gshmem_us": g, "nccl_us": t,
                   "gshmem_busbw_GBps": size / g * 1e-3 * case.factor,
                   "nccl_busbw_GBps": size / t * 1e-3 * case.factor, "same_result": same}
            rows.append(row)
            if gshmem.my_pe() == 0:
                print("%-10s %11d %12.2f %12.2f %9.2f %9.2f %7.2fx %s" % (
                    name, size, g, t, row["gshmem_busbw_GBps"], row["nccl_busbw_GBps"], t / g,
                    "" if same else "RESULTS DIFFER"), flush=True)
        gshmem.barrier()
        torch.cuda.synchronize()
        for b in bufs.values():
            gshmem.free(b)
    return rows


def host_us(call, calls, batches):
    """Median over batches of the host time per call (us) to enqueue `calls` calls."""
    out = []
    for _ in range(batches):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        call(calls)
        out.append((time.perf_counter() - t0) * 1e6 / calls)
        torch.cuda.synchronize()
    return statistics.median(out)


def c_loop():
    """overhead.c built into a shared object and loaded here (its gshmem symbol resolves to the
    libgshmem the package loaded, RTLD_GLOBAL), or None with the reason."""
    cc = os.environ.get("CC", "cc")
    so = os.path.join(tempfile.mkdtemp(prefix="gshmem-bench-"), "overhead.so")
    cmd = [cc, "-O2", "-shared", "-fPIC", "-I", gshmem.include_dir(),
           os.path.join(HERE, "overhead.c"), "-o", so]
    try:
        subprocess.run(cmd, check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        return None, "could not build overhead.c (%s): %s" % (" ".join(cmd), e)
    fn = ctypes.CDLL(so).gshmem_bench_reduce_loop
    fn.restype = ctypes.c_double
    fn.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                   ctypes.c_void_p)
    return fn, None


def run_overhead(args):
    x, y = gshmem.tensor(2, torch.float32), gshmem.tensor(2, torch.float32)
    x.zero_()
    st = torch.cuda.current_stream().cuda_stream
    raw = _lib.load().gshmemx_float_sum_reduce_on_stream
    px, py = x.data_ptr(), y.data_ptr()

    def full(k):
        for _ in range(k):
            gshmem.allreduce(x, out=y)

    def given_stream(k):
        for _ in range(k):
            gshmem.allreduce(x, out=y, stream=st)

    def bare(k):
        for _ in range(k):
            raw(0, py, px, 2, st)

    def nccl(k):
        for _ in range(k):
            dist.all_reduce(x)

    ways = [("gshmem.allreduce(x, out=y)", full),
            ("gshmem.allreduce(..., stream=handle)", given_stream),
            ("ctypes: gshmemx_float_sum_reduce_on_stream", bare)]
    fn, why = c_loop()
    if fn is not None:
        ways.append(("C: gshmemx_float_sum_reduce_on_stream", lambda k: fn(k, py, px, 2, st)))
    if not args.no_nccl:
        ways.append(("torch.distributed.all_reduce(x)", nccl))
    result = {}
    for label, call in ways:
        call(args.calls)                                  # warm-up
        us = host_us(call, args.calls, args.batches)
        result[label] = {"pe0_us": us, "slowest_us": slowest(us)}
    gshmem.barrier()
    torch.cuda.synchronize()
    gshmem.free(y)
    gshmem.free(x)
    if gshmem.my_pe() == 0:
        print("\nhost time per call, 8-byte allreduce (%d calls x %d batches, median):"
              % (args.calls, args.batches))
        for label, r in result.items():
            print("  %-46s %8.2f us (slowest PE %.2f)" % (label, r["pe0_us"], r["slowest_us"]))
        if why:
            print("  C loop skipped: " + why)
    return result


def commit():
    try:
        return subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--min", type=parse_size, default=8)
    ap.add_argument("--max", type=parse_size, default=256 << 20)
    ap.add_argument("--colls", default="allreduce,allgather,alltoall")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--no-nccl", action="store_true", help="gshmem alone")
    ap.add_argument("--no-overhead", action="store_true")
    ap.add_argument("--calls", type=int, default=200, help="calls per batch (overhead)")
    ap.add_argument("--batches", type=int, default=10)
    ap.add_argument("--out", help="JSON file for the results (written by PE 0)")
    args = ap.parse_args()

    local = int(os.environ.get("LOCAL_RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if torch.cuda.device_count() < int(os.environ.get("LOCAL_WORLD_SIZE", world)):
        print("bench_collectives: %d GPUs for %s processes on this node; NCCL needs one GPU "
              "per process" % (torch.cuda.device_count(), os.environ.get("LOCAL_WORLD_SIZE")))
        return 2
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rt = gshmem.init()                               # the unique id through the store
    n = rt.n_pes
    if rt.pe == 0:
        print("bench_collectives: %d PEs, %s, torch %s, NCCL %s, gshmem init by %s" % (
            n, torch.cuda.get_device_name(), torch.__version__,
            ".".join(map(str, torch.cuda.nccl.version())), rt.method))
        print("%-10s %11s %12s %12s %9s %9s %8s" % ("coll", "bytes", "gshmem_us", "nccl_us",
                                                    "gs_GB/s", "nccl_GB/s", "speedup"))
    rows = run_collectives(args, n)
    over = None if args.no_overhead else run_overhead(args)
    if rt.pe == 0 and args.out:
        with open(args.out, "w") as f:
            json.dump({"machine": torch.cuda.get_device_name(), "pes": n,
                       "date": datetime.datetime.now().isoformat(timespec="seconds"),
                       "commit": commit(), "command": " ".join(sys.argv),
                       "torch": torch.__version__,
                       "nccl": ".".join(map(str, torch.cuda.nccl.version())),
                       "library": gshmem.library_path(), "collectives": rows,
                       "python_overhead": over}, f, indent=1)
        print("wrote " + args.out)
    gshmem.finalize()
    dist.destroy_process_group()
    bad = [r for r in rows if not r["same_result"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
