"""The Python package on GPUs, one pytest per PE under gshmrun (tests/python/run_gpu.sh runs it
at 2 and 4 PEs): every call's result checked against a torch reference each PE computes for
itself (inputs are a function of the PE number, so every PE knows every PE's input; values are
small integers, so sums and products are exact in every dtype, float16 and bfloat16
included); sizes from 1 element to 64 MiB; views at element offsets that break 16-byte
alignment; the refusals (non-contiguous, not symmetric, host memory, sizes, alignment, dtype);
teams, streams, CUDA graph capture, cupy arrays and a run-time compiled kernel. Every PE runs
the same calls in the same order; checks come after a test's collectives, so a failed check
never leaves peers waiting."""

import functools
import gc
import os
import shutil

import pytest

import gshmem

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

MiB = 1 << 20


@pytest.fixture(scope="module", autouse=True)
def job():
    try:
        rt = gshmem.init()
    except gshmem.GshmemError as e:
        if os.environ.get("GSHMEMPY_GPU_TESTS") == "1":
            raise
        pytest.skip("gshmem.init failed (no GPU or launcher?): %s" % e)
    yield rt
    torch.cuda.synchronize()
    gshmem.finalize()


def me():
    return gshmem.my_pe()


def npes():
    return gshmem.n_pes()


def settle(*tensors):
    """Every PE past every call so far, then free (collective)."""
    gshmem.barrier()
    torch.cuda.synchronize()
    for t in tensors:
        gshmem.free(t)


# signed twins: uint16/32/64 are made and checked through views of these (torch has few
# operators for them)
TWIN = {torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64}
FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def values(pe, count, dtype, op="sum", salt=0):
    """PE `pe`'s input: small integers (exact in every dtype and every reduction of <= 8 PEs)."""
    i = torch.arange(count, device="cuda", dtype=torch.int64) + salt
    unsigned = dtype in TWIN or dtype == torch.uint8
    if dtype == torch.bool:
        v = ((i * 7 + pe * 13) % 3 == 0).to(torch.int64)
    elif op == "prod":
        table = torch.tensor([1, 2, 1, 2] if unsigned else [1, -1, 2, -2], device="cuda")
        v = table[(i * 3 + pe) % 4]
    elif op in ("and", "or", "xor"):
        v = (i * 37 + pe * 101) % 128
    else:
        v = (i * 7 + pe * 13) % 9 - (0 if unsigned else 4)
    return cast(v, dtype)


def cast(v, dtype):
    """int64 / float64 values -> dtype (uint16/32/64 through their signed twin)."""
    if dtype in TWIN:
        return v.to(TWIN[dtype]).view(dtype)
    return v.to(dtype)


def wide(t):
    """t as float64 (floating dtypes) or int64 (the others), for exact comparison."""
    if t.dtype in TWIN:
        t = t.view(TWIN[t.dtype])
    return t.to(torch.float64 if t.dtype in FLOATS else torch.int64)


def reference(op, inputs):
    xs = [wide(x) for x in inputs]
    if op in ("and", "or", "xor"):
        fn = {"and": torch.bitwise_and, "or": torch.bitwise_or, "xor": torch.bitwise_xor}[op]
        return functools.reduce(fn, xs)
    s = torch.stack(xs)
    return {"sum": lambda: s.sum(0), "prod": lambda: s.prod(0),
            "min": lambda: s.min(0).values, "max": lambda: s.max(0).values}[op]()


def first_difference(got, want):
    g, w = wide(got).flatten(), want.to(wide(got).dtype).flatten()
    bad = (g != w).nonzero()
    if not len(bad):
        return "equal"
    i = int(bad[0])
    return "PE %d: %d of %d elements differ; first at %d: got %s, expected %s" % (
        me(), len(bad), g.numel(), i, g[i].item(), w[i].item())


# ---- the job, tensors, free -----------------------------------------------------------------

def test_job_facts():
    assert 0 <= me() < npes()
    if "GSHMEM_NPES" in os.environ:
        assert npes() == int(os.environ["GSHMEM_NPES"])
    assert gshmem.device() == torch.cuda.current_device()
    assert gshmem.placement()["device"] == gshmem.device()
    assert gshmem.heap_info()["mapped"] > 0


def test_tensor_is_symmetric():
    t = gshmem.tensor((3, 5), torch.float32)
    assert t.shape == (3, 5) and t.dtype == torch.float32 and t.is_contiguous()
    assert t.device == torch.device("cuda", gshmem.device())
    assert t.data_ptr() % 512 == 0
    addr = gshmem.tensor((1,), torch.int64)
    addrs = gshmem.tensor((npes(),), torch.int64)
    addr.fill_(t.data_ptr())
    gshmem.fcollect(gshmem.TEAM_WORLD, addrs, addr)
    torch.cuda.synchronize()
    seen = addrs.tolist()
    settle(t, addr, addrs)
    assert seen == [seen[0]] * npes(), "addresses differ between PEs: %s" % seen


def test_free_rules():
    t = gshmem.tensor(16, torch.float32)
    empty = gshmem.tensor(0, torch.bfloat16)
    assert empty.numel() == 0
    with pytest.raises(gshmem.GshmemArgumentError, match="is a view 4 bytes into"):
        gshmem.free(t[1:])
    with pytest.raises(gshmem.GshmemArgumentError, match="not from gshmem.tensor"):
        gshmem.free(torch.empty(16, device="cuda"))
    settle(t, empty)
    with pytest.raises(gshmem.GshmemArgumentError, match="already freed"):
        gshmem.free(t)


def test_collected_without_free_warns():
    t = gshmem.tensor(8, torch.float32)
    with pytest.warns(gshmem.GshmemWarning, match="garbage-collected without gshmem.free"):
        del t
        gc.collect()


# ---- reductions ---------------------------------------------------------------------------------

@pytest.mark.parametrize("count", [1, 3, 255, 4097, MiB, 16 * MiB])   # 16 Mi floats: 64 MiB
def test_allreduce_sizes(count):
    x, y = gshmem.tensor(count), gshmem.tensor(count)
    x.copy_(values(me(), count, torch.float32))
    gshmem.allreduce(x, out=y)                       # out of place
    gshmem.allreduce(x)                              # in place
    torch.cuda.synchronize()
    want = reference("sum", [values(p, count, torch.float32) for p in range(npes())])
    res = (first_difference(y, want), first_difference(x, want))
    settle(x, y)
    assert res == ("equal", "equal")


DTYPE_OPS = [(dt, op) for dt in FLOATS for op in ("sum", "prod", "min", "max")] + \
    [(dt, op) for dt in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8,
                         torch.uint16, torch.uint32, torch.uint64)
     for op in ("sum", "prod", "min", "max", "and", "or", "xor")] + \
    [(torch.bool, op) for op in ("min", "max", "and", "or", "xor")]


@pytest.mark.parametrize("dtype,op", DTYPE_OPS, ids=lambda v: str(v).replace("torch.", ""))
def test_reduce_dtypes(dtype, op):
    count = 1003
    x, y = gshmem.tensor(count, dtype), gshmem.tensor(count, dtype)
    x.copy_(values(me(), count, dtype, op))
    gshmem.reduce(gshmem.TEAM_WORLD, y, x, op)
    torch.cuda.synchronize()
    res = first_difference(y, reference(op, [values(p, count, dtype, op)
                                             for p in range(npes())]))
    settle(x, y)
    assert res == "equal"


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32])
@pytest.mark.parametrize("block", [1, 1000, "64MiB"])
def test_reducescatter(dtype, block):
    n = npes()
    if block == "64MiB":
        block = 64 * MiB // (dtype.itemsize * n)
    src, dst = gshmem.tensor(n * block, dtype), gshmem.tensor(block, dtype)
    src.copy_(values(me(), n * block, dtype))
    gshmem.reducescatter(gshmem.TEAM_WORLD, dst, src, "sum")
    torch.cuda.synchronize()
    want = reference("sum", [values(p, n * block, dtype)[me() * block:(me() + 1) * block]
                             for p in range(n)])
    res = first_difference(dst, want)
    settle(src, dst)
    assert res == "equal"


# ---- data movement ------------------------------------------------------------------------------

def sizes_up_to_64mib(itemsize, per):
    """Element counts per block: 1, an odd few, and the one whose whole array is 64 MiB."""
    return [1, 1001, 64 * MiB // (itemsize * per)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.uint8])
@pytest.mark.parametrize("which", [0, 1, 2])
def test_fcollect(dtype, which):
    n = npes()
    count = sizes_up_to_64mib(dtype.itemsize, n)[which]
    src, dst = gshmem.tensor(count, dtype), gshmem.tensor(n * count, dtype)
    src.copy_(values(me(), count, dtype))
    gshmem.allgather(dst, src)
    torch.cuda.synchronize()
    want = torch.cat([wide(values(p, count, dtype)) for p in range(n)])
    res = first_difference(dst, want)
    settle(src, dst)
    assert res == "equal"


def a2a_block(src_pe, dst_pe, count, dtype):
    return values(src_pe * 31 + dst_pe, count, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64])
@pytest.mark.parametrize("which", [0, 1, 2])
def test_alltoall(dtype, which):
    n = npes()
    count = sizes_up_to_64mib(dtype.itemsize, n)[which]
    src, dst = gshmem.tensor(n * count, dtype), gshmem.tensor(n * count, dtype)
    src.copy_(torch.cat([a2a_block(me(), j, count, dtype) for j in range(n)]))
    gshmem.alltoall(gshmem.TEAM_WORLD, dst, src)
    torch.cuda.synchronize()
    want = torch.cat([wide(a2a_block(i, me(), count, dtype)) for i in range(n)])
    res = first_difference(dst, want)
    settle(src, dst)
    assert res == "equal"


@pytest.mark.parametrize("count", [1, 1001, 16 * MiB])
def test_broadcast(count):
    src, dst = gshmem.tensor(count), gshmem.tensor(count)
    src.copy_(values(me(), count, torch.float32))
    got = []
    for root in range(npes()):
        gshmem.broadcast(gshmem.TEAM_WORLD, dst, src, root)
        torch.cuda.synchronize()
        got.append(first_difference(dst, wide(values(root, count, torch.float32))))
        gshmem.barrier()
    settle(src, dst)
    assert got == ["equal"] * npes()


def test_unaligned_views():
    """Views one element in (4-byte aligned, not 16): reductions and moves take them."""
    n, count = npes(), 4099
    x, y = gshmem.tensor(count + 1), gshmem.tensor(count + 1)
    a, b = gshmem.tensor(n * count + 1), gshmem.tensor(n * count + 1)
    x[1:].copy_(values(me(), count, torch.float32))
    gshmem.allreduce(x[1:], out=y[1:])
    a[1:].copy_(torch.cat([a2a_block(me(), j, count, torch.float32) for j in range(n)]))
    gshmem.alltoall(gshmem.TEAM_WORLD, b[1:], a[1:])
    torch.cuda.synchronize()
    r1 = first_difference(y[1:], reference("sum", [values(p, count, torch.float32)
                                                   for p in range(n)]))
    r2 = first_difference(b[1:], torch.cat([wide(a2a_block(i, me(), count, torch.float32))
                                            for i in range(n)]))
    settle(x, y, a, b)
    assert (r1, r2) == ("equal", "equal")


class Misaligned:
    """A float32 array one byte into a symmetric tensor (through __cuda_array_interface__)."""

    def __init__(self, t, count):
        self.__cuda_array_interface__ = {"data": (t.data_ptr() + 1, False), "shape": (count,),
                                         "typestr": "<f4", "version": 3, "strides": None}


def test_refusals():
    x, y = gshmem.tensor(64), gshmem.tensor(64)
    E = gshmem.GshmemArgumentError
    with pytest.raises(E, match="src is not contiguous"):
        gshmem.allreduce(x[::2], out=y[:32])
    with pytest.raises(E, match="dst .*is not on the symmetric heap"):
        gshmem.put(torch.empty(64, device="cuda"), x, 0)
    with pytest.raises(E, match="src is in host memory"):
        gshmem.put(y, torch.zeros(64), 0)
    with pytest.raises(E, match="dst has 256 bytes .* src has 128"):
        gshmem.put(y, x[:32], 0)
    with pytest.raises(E, match="not aligned to its element size"):
        gshmem.put(Misaligned(y, 8), x[:8], 0)
    with pytest.raises(E, match="complex64 cannot be reduced"):
        c = x.view(torch.complex64)
        gshmem.allreduce(c)
    with pytest.raises(E, match="PE %d is out of range" % npes()):
        gshmem.put(y, x, npes())
    if torch.cuda.device_count() > 1:
        other = (gshmem.device() + 1) % torch.cuda.device_count()
        with pytest.raises(E, match="is on cuda:%d but this PE runs on" % other):
            gshmem.put(y, torch.zeros(64, device="cuda:%d" % other), 0)
    settle(x, y)


# ---- one-sided ----------------------------------------------------------------------------------

@pytest.mark.parametrize("count", [1, 1001, 16 * MiB])
def test_put_get_ring(count):
    n = npes()
    right, left = (me() + 1) % n, (me() - 1) % n
    src, dst, back = gshmem.tensor(count), gshmem.tensor(count), gshmem.tensor(count)
    src.copy_(values(me(), count, torch.float32))
    gshmem.barrier()                                  # every src is filled
    gshmem.put(dst, src, right)
    gshmem.get(back, src, right)
    gshmem.barrier()                                  # the puts are complete everywhere
    torch.cuda.synchronize()
    r = (first_difference(dst, wide(values(left, count, torch.float32))),
         first_difference(back, wide(values(right, count, torch.float32))))
    settle(src, dst, back)
    assert r == ("equal", "equal")


def test_put_signal_and_wait():
    n, count = npes(), 100003
    right, left = (me() + 1) % n, (me() - 1) % n
    src, dst = gshmem.tensor(count), gshmem.tensor(count)
    sig = gshmem.tensor(1, torch.int64)
    sig.zero_()
    src.copy_(values(me(), count, torch.float32))
    gshmem.barrier()
    gshmem.put_signal(dst, src, sig, 7, gshmem.SignalOp.SET, right)
    gshmem.signal_wait(sig, 7, gshmem.Cmp.EQ)        # on the stream: what follows sees dst
    check = dst.clone()
    torch.cuda.synchronize()
    r = first_difference(check, wide(values(left, count, torch.float32)))
    settle(src, dst, sig)
    assert r == "equal"


def test_signal_op_add():
    counter = gshmem.tensor(1, torch.int64)
    counter.zero_()
    gshmem.barrier()
    gshmem.signal_op(counter, 1, "add", 0)             # every PE adds 1 on PE 0
    if me() == 0:
        gshmem.signal_wait(counter, npes(), "eq")       # PE 0's stream waits for all of them
    torch.cuda.synchronize()
    got = counter.item()
    settle(counter)
    assert got == (npes() if me() == 0 else 0)


def test_peer_tensor_load_store():
    n = npes()
    x = gshmem.tensor(n, torch.int64)
    x.zero_()
    gshmem.barrier()
    reach = []
    for p in range(n):
        try:
            view = gshmem.peer_tensor(x, p)
        except gshmem.GshmemArgumentError:
            continue                                     # on another node
        view[me()] = me() + 1                            # a store into PE p's copy
        reach.append(p)
    gshmem.barrier()
    torch.cuda.synchronize()
    got = x.tolist()
    settle(x)
    # PEs reach each other by load/store both ways or neither (the same node)
    assert me() in reach
    assert got == [q + 1 if q in reach else 0 for q in range(n)]


# ---- teams, streams, graphs ---------------------------------------------------------------------

def test_teams():
    n, count = npes(), 1000
    evens = gshmem.team_split_strided(gshmem.TEAM_WORLD, 0, 2, (n + 1) // 2)
    x, y = gshmem.tensor(count), gshmem.tensor(count)
    x.copy_(values(me(), count, torch.float32))
    results, facts = [], []
    if me() % 2 == 0:
        facts += [bool(evens), evens.my_pe() == me() // 2, evens.n_pes() == (n + 1) // 2,
                  evens.translate_pe(evens.n_pes() - 1) == 2 * (evens.n_pes() - 1)]
        gshmem.allreduce(x, out=y, team=evens)
        torch.cuda.synchronize()
        results.append(first_difference(y, reference(
            "sum", [values(p, count, torch.float32) for p in range(0, n, 2)])))
        evens.sync()
        evens.destroy()
    else:
        facts += [not evens, evens == gshmem.TEAM_INVALID]
    gshmem.barrier()
    if n % 2 == 0:
        row, col = gshmem.team_split_2d(gshmem.TEAM_WORLD, 2)   # row: PEs 2k, 2k+1
        gshmem.reduce(row, y, x, "max")
        torch.cuda.synchronize()
        mates = [2 * (me() // 2), 2 * (me() // 2) + 1]
        results.append(first_difference(y, reference(
            "max", [values(p, count, torch.float32) for p in mates])))
        gshmem.barrier(row)
        gshmem.reduce(col, y, x, "min")
        torch.cuda.synchronize()
        results.append(first_difference(y, reference(
            "min", [values(p, count, torch.float32) for p in range(me() % 2, n, 2)])))
        gshmem.barrier()
        row.destroy()
        col.destroy()
    gshmem.reduce(gshmem.TEAM_NODE, y, x, "sum")
    torch.cuda.synchronize()
    node = [gshmem.TEAM_NODE.translate_pe(i) for i in range(gshmem.TEAM_NODE.n_pes())]
    results.append(first_difference(y, reference(
        "sum", [values(p, count, torch.float32) for p in node])))
    settle(x, y)
    assert all(facts), facts
    assert results == ["equal"] * len(results)


def test_streams():
    count = 5000
    x, y = gshmem.tensor(count), gshmem.tensor(count)
    want = reference("sum", [values(p, count, torch.float32) for p in range(npes())])
    results = []
    side = torch.cuda.Stream()
    ways = [side, side.cuda_stream]
    try:
        import cupy
        ways.append(cupy.cuda.ExternalStream(side.cuda_stream))
    except ImportError:
        pass
    for way in ways:
        y.zero_()
        x.copy_(values(me(), count, torch.float32))
        side.wait_stream(torch.cuda.current_stream())
        gshmem.allreduce(x, out=y, stream=way)
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        results.append(first_difference(y, want))
        gshmem.barrier()
    settle(x, y)
    assert results == ["equal"] * len(ways)


def test_cuda_graph():
    n, count = npes(), 4096
    x, y = gshmem.tensor(count), gshmem.tensor(count)
    a, b = gshmem.tensor(n * count), gshmem.tensor(n * count)
    g = torch.cuda.CUDAGraph()
    gshmem.barrier()
    torch.cuda.synchronize()
    with torch.cuda.graph(g):
        gshmem.allreduce(x, out=y)
        gshmem.alltoall(gshmem.TEAM_WORLD, b, a)
        gshmem.barrier()
    results = []
    for rnd in range(3):
        x.copy_(values(me(), count, torch.float32, salt=rnd))
        a.copy_(torch.cat([a2a_block(me(), j, count, torch.float32) for j in range(n)]) + rnd)
        gshmem.barrier()
        g.replay()
        torch.cuda.synchronize()
        results.append(first_difference(y, reference(
            "sum", [values(p, count, torch.float32, salt=rnd) for p in range(n)])))
        results.append(first_difference(b, torch.cat(
            [wide(a2a_block(i, me(), count, torch.float32)) for i in range(n)]) + rnd))
        gshmem.barrier()
    del g
    settle(x, y, a, b)
    assert results == ["equal"] * 6


# ---- cupy and run-time kernels -------------------------------------------------------------------

def test_cupy_arrays():
    cupy = pytest.importorskip("cupy")
    count = 3000
    a = gshmem.array(count, "float32")
    assert isinstance(a, cupy.ndarray) and a.data.ptr % 512 == 0
    a[...] = cupy.asarray(values(me(), count, torch.float32))
    gshmem.allreduce(a, stream=cupy.cuda.get_current_stream())
    cupy.cuda.get_current_stream().synchronize()
    got = torch.as_tensor(a, device="cuda").clone()
    want = reference("sum", [values(p, count, torch.float32) for p in range(npes())])
    gshmem.barrier(stream=0)
    torch.cuda.synchronize()
    gshmem.free(a)
    assert first_difference(got, want) == "equal"


RING = r"""
#include <gshmem.h>
extern "C" __global__ void ring(int *x) {
    int me = gshmem_my_pe(), n = gshmem_n_pes();
    gshmem_int_p(x, me + 1, (me + 1) % n);
}
"""


def test_run_time_kernel():
    cupy = pytest.importorskip("cupy")
    if shutil.which("nvcc") is None:
        pytest.skip("no nvcc: cupy compiles gshmem's headers with nvcc")
    mod = cupy.RawModule(code=RING, options=gshmem.compile_options(), backend="nvcc")
    kernel = mod.get_function("ring")
    how = gshmem.module_init(mod)
    x = gshmem.tensor(1, torch.int32)
    x.zero_()
    gshmem.barrier()
    torch.cuda.synchronize()
    kernel((1,), (1,), (cupy.asarray(x),))
    cupy.cuda.runtime.deviceSynchronize()
    gshmem.barrier()
    torch.cuda.synchronize()
    got = x.item()
    gshmem.module_finalize(mod)
    settle(x)
    assert how in ("gshmemx_cumodule_init", "state updater")
    assert got == (me() - 1) % npes() + 1
