"""The Python package without a GPU (CI): it imports without libgshmem or a GPU; init fails with
gshmem's own message; the dtype table, operators, signal and comparison codes, status names and
ctypes structures agree with the C headers and library; every call refuses bad arguments with
a message naming the call and the argument, and passes good ones to the right C function with
the right sizes (against a recording stand-in for libgshmem). Torch-only cases are skipped
where torch is absent."""

import ctypes
import gc
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

import gshmem
from gshmem import _heap, _init, _lib, _objects, _types, module, teams

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADERS = os.path.join(ROOT, "include")


def lib_path():
    """The libgshmem the tests may load: GSHMEMPY_LIB, else the first the package finds."""
    env = os.environ.get("GSHMEMPY_LIB")
    if env:
        return env if os.path.exists(env) else None
    for _, path in _lib.candidates():
        if os.sep in path and os.path.exists(path):
            return path
    return None


needs_lib = pytest.mark.skipif(lib_path() is None, reason="no libgshmem: set GSHMEMPY_LIB")
needs_headers = pytest.mark.skipif(not os.path.isfile(os.path.join(HEADERS, "gshmem.h")),
                                   reason="not in a checkout")


def run_python(code, **env):
    """Run `code` in a fresh interpreter with the package importable; returns (rc, out)."""
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(gshmem.__file__))] +
                                      [p for p in e.get("PYTHONPATH", "").split(os.pathsep) if p])
    e.update(env)
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, env=e, timeout=120)
    return p.returncode, p.stdout + p.stderr


# ---- import, loading, init without a GPU ------------------------------------------------------

def test_import_needs_no_library():
    rc, out = run_python("""
        import gshmem
        print("imported", gshmem.__version__)
        try:
            gshmem.init()
        except gshmem.GshmemError as e:
            print("ERROR:", e)
        """, GSHMEMPY_LIB="/nonexistent/libgshmem.so")
    assert rc == 0, out
    assert "imported" in out
    assert "libgshmem could not be loaded" in out and "/nonexistent/libgshmem.so" in out, out
    assert "GSHMEMPY_LIB" in out


@needs_lib
def test_init_without_gpu_raises_gshmem_message():
    # CUDA_VISIBLE_DEVICES="" hides every GPU, so this holds on GPU machines too
    rc, out = run_python("""
        import gshmem
        try:
            gshmem.init()
            print("INIT SUCCEEDED")
        except gshmem.GshmemError as e:
            print("STATUS", e.status)
            print("TEXT", str(e).replace("\\n", " | "))
            print("CAPTURED", "gshmem PE 0: error" in e.messages)
        try:
            gshmem.my_pe()
        except gshmem.GshmemNotInitialized as e:
            print("AFTER", e)
        """, GSHMEMPY_LIB=lib_path(), CUDA_VISIBLE_DEVICES="")
    assert rc == 0, out
    assert "INIT SUCCEEDED" not in out, out
    assert "STATUS GSHMEM_ERR_NO_DEVICE" in out, out
    assert "CAPTURED True" in out, out
    # the exception carries gshmem's own explanation, not only a status
    text = [l for l in out.splitlines() if l.startswith("TEXT")][0]
    assert "gshmem PE 0: error" in text and "no usable GPU" in text, text
    assert "AFTER gshmem.my_pe: gshmem is not initialized" in out, out


@needs_lib
def test_unique_id_without_gpu():
    rc, out = run_python("""
        import gshmem
        uid = gshmem.get_unique_id()
        data = bytes(uid)
        print("LEN", len(data), "TEXT", data.rstrip(b"\\0").decode())
        print("SAME", bytes(gshmem.UniqueId(data)) == data)
        """, GSHMEMPY_LIB=lib_path())
    assert rc == 0, out
    assert "LEN 128" in out and "SAME True" in out, out
    assert re.search(r"TEXT \S+", out), out


def test_unique_id_checks():
    assert len(bytes(gshmem.UniqueId(b"abc"))) == 128
    assert bytes(gshmem.UniqueId("abc")).startswith(b"abc\0")
    with pytest.raises(gshmem.GshmemArgumentError, match="more than the 128"):
        gshmem.UniqueId(b"x" * 129)


def test_library_not_found_lists_candidates(monkeypatch):
    monkeypatch.setenv("GSHMEMPY_LIB", "/nonexistent/libgshmem.so.0")
    monkeypatch.setattr(_lib, "_loaded", None)
    with pytest.raises(gshmem.GshmemError) as e:
        _lib.load()
    assert "GSHMEMPY_LIB: /nonexistent/libgshmem.so.0 (no such file)" in str(e.value)


def test_capture_stderr_passes_through_and_keeps():
    with _lib.capture_stderr() as cap:
        os.write(2, b"from C: something failed\n")
    assert "from C: something failed" in cap.text


# ---- the tables agree with the headers and the library -------------------------------------

def header_defines(path, prefix):
    with open(os.path.join(HEADERS, path)) as f:
        return {m.group(1): int(m.group(2)) for m in
                re.finditer(r"#define (%s\w*)\s+\(*(?:gshmem_team_t\))?(-?\d+)" % prefix,
                            f.read())}


@needs_headers
def test_status_signal_cmp_codes_match_headers():
    status = header_defines("gshmem/types.h", "GSHMEM_(?:SUCCESS|ERR_)")
    assert {n: i for i, n in enumerate(gshmem.STATUS_NAMES)} == status
    sig = header_defines("gshmem/types.h", "GSHMEM_SIGNAL_")
    assert {"GSHMEM_SIGNAL_" + m.name: int(m) for m in gshmem.SignalOp} == sig
    cmp = header_defines("gshmem/types.h", "GSHMEM_CMP_")
    assert {"GSHMEM_CMP_" + m.name: int(m) for m in gshmem.Cmp} == cmp
    teams_h = header_defines("gshmem/types.h", "GSHMEMX?_TEAM_(?:WORLD|SHARED|NODE|SAME|INV)")
    assert teams_h["GSHMEM_TEAM_WORLD"] == gshmem.TEAM_WORLD
    assert teams_h["GSHMEM_TEAM_SHARED"] == gshmem.TEAM_SHARED
    assert teams_h["GSHMEMX_TEAM_NODE"] == gshmem.TEAM_NODE
    assert teams_h["GSHMEMX_TEAM_SAME_MYPE_NODE"] == gshmem.TEAM_SAME_MYPE_NODE


@needs_headers
def test_version_matches_library_headers():
    with open(os.path.join(HEADERS, "gshmem", "types.h")) as f:
        version = re.search(r'GSHMEM_VERSION_STRING "([^"]+)"', f.read()).group(1)
    assert gshmem.__version__ == version
    with open(os.path.join(ROOT, "python", "meson.build")) as f:
        assert "version: '%s'" % version in f.read()


@needs_headers
@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_structures_match_headers(tmp_path):
    """sizeof and offsetof of the C structures the package mirrors with ctypes."""
    structs = {"gshmemx_heap_info_t": _lib.HeapInfoC,
               "gshmemx_placement_info_t": _lib.PlacementC,
               "gshmemx_init_attr_t": _lib.InitAttrC,
               "gshmemx_uniqueid_t": _lib.UniqueIdC}
    lines = []
    for cname, cls in structs.items():
        lines.append('printf("%s sizeof %%zu\\n", sizeof(%s));' % (cname, cname))
        for field, _ in cls._fields_:
            lines.append('printf("%s %s %%zu\\n", offsetof(%s, %s));' % (cname, field, cname,
                                                                          field))
    src = tmp_path / "layout.c"
    src.write_text("#include <stddef.h>\n#include <stdio.h>\n#include <gshmem/types.h>\n"
                   "int main(void) {\n%s\nreturn 0;\n}\n" % "\n".join(lines))
    exe = tmp_path / "layout"
    subprocess.run(["cc", "-I", HEADERS, str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    got = dict((" ".join(l.split()[:2]), int(l.split()[2])) for l in out.splitlines())
    for cname, cls in structs.items():
        assert got[cname + " sizeof"] == ctypes.sizeof(cls), cname
        for field, _ in cls._fields_:
            assert got["%s %s" % (cname, field)] == getattr(cls, field).offset, (cname, field)


@needs_lib
def test_every_reducible_dtype_has_its_c_functions():
    lib = ctypes.CDLL(lib_path())
    missing = []
    for name, (typename, cls) in _types.REDUCIBLE.items():
        for op in _types.OPS_OF_CLASS[cls]:
            for coll in ("reduce", "reducescatter"):
                fn = "gshmemx_%s_%s_%s_on_stream" % (typename, op, coll)
                if not hasattr(lib, fn):
                    missing.append(fn)
    assert not missing, missing


@needs_lib
def test_every_prototype_is_exported():
    lib = ctypes.CDLL(lib_path())
    missing = [n for n in _lib.PROTOTYPES if not hasattr(lib, n)]
    assert not missing, missing


# ---- dtypes and operators ----------------------------------------------------------------------

class FakeDtype:
    def __init__(self, name):
        self.name = name


@pytest.mark.parametrize("name,typename", [
    ("float16", "half"), ("bfloat16", "bfloat16"), ("float32", "float"), ("float64", "double"),
    ("int8", "int8"), ("int16", "int16"), ("int32", "int32"), ("int64", "int64"),
    ("uint8", "uint8"), ("uint16", "uint16"), ("uint32", "uint32"), ("uint64", "uint64"),
    ("bool", "uint8")])
def test_dtype_mapping(name, typename):
    op = "max"
    assert _types.reduce_typename(FakeDtype(name), op, "t") == typename
    assert _types.reduce_typename("torch." + name, op, "t") == typename


def test_dtype_aliases_and_refusals():
    assert _types.dtype_name("torch.half") == "float16"
    assert _types.dtype_name(FakeDtype("float")) == "float32"
    with pytest.raises(gshmem.GshmemArgumentError, match="complex64 cannot be reduced"):
        _types.reduce_typename("complex64", "sum", "gshmem.reduce")
    with pytest.raises(gshmem.GshmemArgumentError, match="op 'xor' is not defined for dtype "
                                                         "float32.*integer"):
        _types.reduce_typename("float32", "xor", "gshmem.reduce")
    with pytest.raises(gshmem.GshmemArgumentError, match="bool use 'or'"):
        _types.reduce_typename("bool", "sum", "gshmem.reduce")


def test_op_names():
    class RedOp:
        name = "PRODUCT"
    assert _types.op_name("SUM", "t") == "sum"
    assert _types.op_name(RedOp(), "t") == "prod"
    assert _types.op_name("ReduceOp.BAND", "t") == "and"
    for bad in ("avg", "mean", 3):
        with pytest.raises(gshmem.GshmemArgumentError, match="is not one of"):
            _types.op_name(bad, "gshmem.reduce")


def test_enums():
    assert _types.enum_value("add", gshmem.SignalOp, "t", "signal_op") is gshmem.SignalOp.ADD
    assert _types.enum_value(5, gshmem.Cmp, "t", "cmp") is gshmem.Cmp.GE
    with pytest.raises(gshmem.GshmemArgumentError, match="SignalOp.SET, SignalOp.ADD"):
        _types.enum_value("xor", gshmem.SignalOp, "gshmem.signal_op", "signal_op")


# ---- argument checks and C calls, against a stand-in for libgshmem ----------------------------

class Array:
    """A GPU array described only by __cuda_array_interface__."""

    def __init__(self, ptr, shape, typestr="<f4", strides=None):
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": tuple(shape),
                                         "typestr": typestr, "strides": strides, "version": 3}


class FakeLib:
    """Records every C call; allocation hands out addresses 1 MiB apart from HEAP."""
    HEAP = 0x7f0000000000
    WINDOW = 1 << 36

    def __init__(self, npes, cumodule=False):
        self.calls = []
        self.npes = npes
        self.next = self.HEAP
        self.path = "fake"
        self.cumodule = cumodule

    def optional(self, name):
        if name.startswith("gshmemx_cumodule") and not self.cumodule:
            return None
        return getattr(self, name)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        _lib._prototype(name)                   # only calls the package declares

        def call(*args):
            self.calls.append((name,) + args)
            if name == "gshmem_align":
                p, self.next = self.next, self.next + (1 << 20)
                return p
            if name == "gshmem_team_n_pes":
                return {0: self.npes, 1: self.npes, 2: self.npes}.get(args[0], 2)
            if name == "gshmem_team_my_pe":
                return 0
            if name == "gshmem_ptr":
                return args[0] + args[1] * self.WINDOW
            return 0
        return call

    def last(self):
        return self.calls[-1]


def fake_job(monkeypatch, hide_arrays):
    """An initialized 4-PE job on cuda:0 with a recording library (no GPU touched)."""
    fake = FakeLib(4)
    monkeypatch.setattr(_lib, "load", lambda: fake)
    monkeypatch.setattr(_init.state, "initialized", True)
    monkeypatch.setattr(_init.state, "pe", 0)
    monkeypatch.setattr(_init.state, "npes", 4)
    monkeypatch.setattr(_init.state, "device", 0)
    if hide_arrays:
        # None as a stream means the legacy stream when neither torch nor cupy is loaded
        # (None in sys.modules: looked up as absent, never imported again)
        monkeypatch.setitem(sys.modules, "torch", None)
        monkeypatch.setitem(sys.modules, "cupy", None)
    _heap.registry.clear()
    teams.forget_all()
    return fake


@pytest.fixture
def job(monkeypatch):
    yield fake_job(monkeypatch, True)
    _heap.registry.clear()
    teams.forget_all()


@pytest.fixture
def torch_job(monkeypatch):
    torch = pytest.importorskip("torch")
    yield torch, fake_job(monkeypatch, False)
    _heap.registry.clear()
    teams.forget_all()


def sym(fake, nbytes, typestr="<f4", shape=None):
    """A symmetric allocation (as gshmem.tensor makes one) and an Array over it."""
    a = _heap._allocate(nbytes, "symmetric array", "test")
    size = int(typestr[2:])
    return Array(a.ptr, shape or (nbytes // size,), typestr)


def test_calls_before_init_raise(monkeypatch):
    monkeypatch.setattr(_init.state, "initialized", False)
    x = Array(0x1000, (4,))
    for call, args in [(gshmem.put, (x, x, 1)), (gshmem.allreduce, (x,)),
                       (gshmem.barrier, ()), (gshmem.free, (x,)), (gshmem.quiet, ()),
                       (gshmem.alltoall, (0, x, x))]:
        with pytest.raises(gshmem.GshmemNotInitialized, match="call gshmem.init"):
            call(*args)


def test_put_get_calls(job):
    d = sym(job, 4096)
    s = Array(0x5000_0000, (1024,))          # a put's source need not be symmetric
    gshmem.put(d, s, 3, stream=77)
    assert job.last() == ("gshmemx_putmem_on_stream", d.__cuda_array_interface__["data"][0],
                          0x5000_0000, 4096, 3, 77)
    gshmem.get(s, d, 2)
    assert job.last()[0] == "gshmemx_getmem_on_stream" and job.last()[3:] == (4096, 2, 0)


def test_put_refusals(job):
    d = sym(job, 4096)
    base = d.__cuda_array_interface__["data"][0]
    s = Array(0x5000_0000, (1024,))
    with pytest.raises(gshmem.GshmemArgumentError, match=r"gshmem.put: PE 4 is out of range"):
        gshmem.put(d, s, 4)
    with pytest.raises(gshmem.GshmemArgumentError, match=r"dst .* is not on the symmetric heap"):
        gshmem.put(s, d, 1)
    with pytest.raises(gshmem.GshmemArgumentError, match=r"dst has 4096 bytes .* src has 2048"):
        gshmem.put(d, Array(0x5000_0000, (512,)), 1)
    with pytest.raises(gshmem.GshmemArgumentError, match=r"dst is float32 but src is int32"):
        gshmem.put(d, Array(0x5000_0000, (1024,), "<i4"), 1)
    with pytest.raises(gshmem.GshmemArgumentError, match=r"src is not contiguous .*strides"):
        gshmem.put(Array(base, (512,)), Array(0x5000_0000, (512,), strides=(8,)), 1)
    with pytest.raises(gshmem.GshmemArgumentError, match=r"not aligned to its element size"):
        gshmem.put(Array(base + 2, (4,)), Array(0x5000_0000, (4,)), 1)
    with pytest.raises(gshmem.GshmemArgumentError, match=r"runs past the end of its symmetric"):
        gshmem.put(Array(base + 4, (1024,)), s, 1)
    with pytest.raises(gshmem.GshmemArgumentError, match=r"pass a torch tensor, a cupy array"):
        gshmem.put([1, 2], s, 1)
    assert job.calls == [job.calls[0]]         # only the allocation reached C


def test_unaligned_to_vectors_is_passed_on(job):
    """Element-aligned views at any offset go to C (its kernels fall back to narrower
    accesses); only addresses that are not a multiple of the element size are refused."""
    x = sym(job, 4096 * 4)
    base = x.__cuda_array_interface__["data"][0]
    src, dst = Array(base + 4, (1000,)), Array(base + 8192 + 4, (1000,))
    gshmem.reduce(0, dst, src, "sum", 0)
    assert job.last() == ("gshmemx_float_sum_reduce_on_stream", 0, base + 8192 + 4, base + 4,
                          1000, 0)


def test_reductions(job):
    x, y = sym(job, 4096, "<f2"), sym(job, 4 * 4096, "<f2")
    px, py = (a.__cuda_array_interface__["data"][0] for a in (x, y))
    gshmem.allreduce(x, "max", stream=5)
    assert job.last() == ("gshmemx_half_max_reduce_on_stream", 0, px, px, 2048, 5)
    gshmem.reducescatter(gshmem.TEAM_WORLD, x, y, "sum")
    assert job.last() == ("gshmemx_half_sum_reducescatter_on_stream", 0, px, py, 2048, 0)
    i = sym(job, 64, "<i8")
    gshmem.reduce(gshmem.TEAM_NODE, i, i, "xor")
    assert job.last()[0:2] == ("gshmemx_int64_xor_reduce_on_stream", 2)
    b = sym(job, 16, "|b1")
    gshmem.allreduce(b, "or")
    assert job.last()[0] == "gshmemx_uint8_or_reduce_on_stream"


def test_reduction_refusals(job):
    x, y = sym(job, 4096), sym(job, 4096)
    px = x.__cuda_array_interface__["data"][0]
    with pytest.raises(gshmem.GshmemArgumentError, match="op 'xor' is not defined for dtype "
                                                         "float32"):
        gshmem.allreduce(x, "xor")
    with pytest.raises(gshmem.GshmemArgumentError, match="complex64 cannot be reduced"):
        c = sym(job, 4096, "<c8")
        gshmem.allreduce(c)
    with pytest.raises(gshmem.GshmemArgumentError, match="dst is float32 but src is int32"):
        gshmem.reduce(0, x, Array(y.__cuda_array_interface__["data"][0], (1024,), "<i4"))
    with pytest.raises(gshmem.GshmemArgumentError, match="overlap"):
        gshmem.reduce(0, Array(px + 4, (512,)), Array(px, (512,)))
    with pytest.raises(gshmem.GshmemArgumentError, match=r"src must hold team-size \(4\) times"):
        gshmem.reducescatter(0, Array(px, (512,)), y)
    with pytest.raises(gshmem.GshmemArgumentError, match="TEAM_INVALID"):
        gshmem.reduce(gshmem.TEAM_INVALID, x, y)


def test_moves(job):
    src, dst = sym(job, 1024), sym(job, 4096)
    ps, pd = (a.__cuda_array_interface__["data"][0] for a in (src, dst))
    gshmem.fcollect(0, dst, src)
    assert job.last() == ("gshmemx_fcollectmem_on_stream", 0, pd, ps, 1024, 0)
    gshmem.allgather(dst, src)
    assert job.last()[0] == "gshmemx_fcollectmem_on_stream"
    # in place: src is this member's block of dst
    gshmem.fcollect(0, dst, Array(pd, (256,)))
    b = sym(job, 4096)
    pb = b.__cuda_array_interface__["data"][0]
    gshmem.alltoall(0, dst, b)
    assert job.last() == ("gshmemx_alltoallmem_on_stream", 0, pd, pb, 1024, 0)
    gshmem.broadcast(0, dst, b, root=3, stream=9)
    assert job.last() == ("gshmemx_broadcastmem_on_stream", 0, pd, pb, 4096, 3, 9)
    gshmem.broadcast(0, dst, dst, 1)


def test_move_refusals(job):
    src, dst = sym(job, 1024), sym(job, 4096)
    pd = dst.__cuda_array_interface__["data"][0]
    with pytest.raises(gshmem.GshmemArgumentError, match=r"dst must hold team-size \(4\)"):
        gshmem.fcollect(0, src, src)
    with pytest.raises(gshmem.GshmemArgumentError, match="in place, src must be this member"):
        gshmem.fcollect(0, dst, Array(pd + 1024, (256,)))
    with pytest.raises(gshmem.GshmemArgumentError, match="do not split into team-size"):
        gshmem.alltoall(0, Array(pd, (3,)), Array(src.__cuda_array_interface__["data"][0], (3,)))
    with pytest.raises(gshmem.GshmemArgumentError, match="alltoall cannot run in place"):
        gshmem.alltoall(0, dst, dst)
    with pytest.raises(gshmem.GshmemArgumentError, match="root 4 is not a PE index"):
        gshmem.broadcast(0, dst, dst, 4)
    with pytest.raises(gshmem.GshmemArgumentError, match="dst has 4096 bytes"):
        gshmem.broadcast(0, dst, src)


def test_signals(job):
    sig, d = sym(job, 8, "<i8"), sym(job, 64)
    ps, pd = (a.__cuda_array_interface__["data"][0] for a in (sig, d))
    s = Array(0x5000_0000, (16,))
    gshmem.put_signal(d, s, sig, 7, gshmem.SignalOp.ADD, 1, 3)
    assert job.last() == ("gshmemx_putmem_signal_on_stream", pd, 0x5000_0000, 64, ps, 7, 1, 1, 3)
    gshmem.signal_op(sig, -1, "set", 2)
    assert job.last() == ("gshmemx_signal_op_on_stream", ps, (1 << 64) - 1, 0, 2, 0)
    gshmem.signal_wait(sig, 3, gshmem.Cmp.GE, 4)
    assert job.last() == ("gshmemx_signal_wait_until_on_stream", ps, 5, 3, 4)
    with pytest.raises(gshmem.GshmemArgumentError, match="signal_var must be one 8-byte word"):
        gshmem.signal_wait(d, 1, "eq")
    with pytest.raises(gshmem.GshmemArgumentError, match="cmp 'bigger' is not one of"):
        gshmem.signal_wait(sig, 1, "bigger")


def test_barrier_sync_quiet(job):
    gshmem.barrier()
    assert job.last() == ("gshmemx_barrier_all_on_stream", 0)
    gshmem.barrier(gshmem.TEAM_SHARED, 4)
    assert job.last() == ("gshmemx_barrier_on_stream", 1, 4)
    gshmem.sync_all(6)
    assert job.last() == ("gshmemx_team_sync_on_stream", 0, 6)
    gshmem.quiet(8)
    assert job.last() == ("gshmemx_quiet_on_stream", 8)


def test_streams():
    class TorchLike:
        cuda_stream = 11

    class CudaCore:
        def __cuda_stream__(self):
            return (0, 12)

    class CupyLike:
        ptr = 13
    h = _objects.stream_handle
    assert [h(s, "t") for s in (14, TorchLike(), CudaCore(), CupyLike())] == [14, 11, 12, 13]
    with pytest.raises(gshmem.GshmemArgumentError, match="is not a torch.cuda.Stream"):
        h("default", "gshmem.put")


def test_free(job):
    x = sym(job, 4096)
    p = x.__cuda_array_interface__["data"][0]
    with pytest.raises(gshmem.GshmemArgumentError, match="is a view 64 bytes into a symmetric"):
        gshmem.free(Array(p + 64, (4,)))
    with pytest.raises(gshmem.GshmemArgumentError, match="is not from gshmem.tensor"):
        gshmem.free(Array(0x5000_0000, (4,)))
    gshmem.free(x)
    assert job.last() == ("gshmem_free", p)
    with pytest.raises(gshmem.GshmemArgumentError, match="was already freed"):
        gshmem.free(x)
    with pytest.raises(gshmem.GshmemArgumentError, match="was freed by gshmem.free"):
        gshmem.put(x, Array(0x5000_0000, (1024,)), 1)


def test_collected_without_free_warns(job):
    a = _heap._allocate(256, "symmetric tensor", "test")
    owner = _heap._Owner(a)
    with pytest.warns(gshmem.GshmemWarning, match="garbage-collected without gshmem.free"):
        del owner
        gc.collect()


def test_zero_size_allocation_gets_an_address(job):
    a = _heap._allocate(0, "symmetric tensor", "test")
    assert a.ptr and job.last() == ("gshmem_align", _heap.ALIGNMENT, 1)


def test_teams(job):
    assert not gshmem.TEAM_INVALID and gshmem.TEAM_WORLD and repr(gshmem.TEAM_NODE) == "TEAM_NODE"
    assert gshmem.team_n_pes(gshmem.TEAM_WORLD) == 4
    with pytest.raises(gshmem.GshmemArgumentError, match="is predefined"):
        gshmem.team_destroy(gshmem.TEAM_WORLD)
    t = gshmem.team_split_strided(gshmem.TEAM_WORLD, 0, 2, 2)
    assert job.last()[0:7] == ("gshmem_team_split_strided", 0, 0, 2, 2, None, 0)
    assert isinstance(t, gshmem.Team)
    x, y = gshmem.TEAM_WORLD.split_2d(2)
    assert job.last()[0:3] == ("gshmem_team_split_2d", 0, 2)
    gshmem.team_destroy(gshmem.Team(7))
    assert job.last() == ("gshmem_team_destroy", 7)


def test_peer_views_need_a_reachable_pe(job):
    x = sym(job, 64)
    with pytest.raises(gshmem.GshmemArgumentError, match="PE 9 is out of range"):
        _heap._peer_ptr(_heap.symmetric(x, "t", "t"), 9, "gshmem.peer_tensor")
    p = x.__cuda_array_interface__["data"][0]
    assert _heap._peer_ptr(_heap.symmetric(x, "t", "t"), 2, "t") == p + 2 * FakeLib.WINDOW


def test_host_and_other_device_refused():
    v = _objects.View(None, 0x1000, 16, 4, "float32", -1, True, (4,), None, "torch")
    with pytest.raises(gshmem.GshmemArgumentError, match="src is in host memory"):
        _objects.check_dense(v, "src", "gshmem.put", 0)
    v.device = 1
    with pytest.raises(gshmem.GshmemArgumentError, match="src is on cuda:1 but this PE runs on "
                                                         "cuda:0"):
        _objects.check_dense(v, "src", "gshmem.put", 0)


def test_contiguity_rule():
    c = _objects.c_contiguous
    assert c((2, 3), None, 4) and c((2, 3), (12, 4), 4) and c((2, 1), (4, 99), 4)
    assert not c((2, 3), (4, 8), 4) and c((0, 3), (4, 8), 4)


# ---- run-time modules ------------------------------------------------------------------------

@needs_headers
def test_include_dir_and_options():
    assert os.path.isfile(os.path.join(gshmem.include_dir(), "gshmem.h"))
    assert gshmem.compile_options()[0] == "-I" + gshmem.include_dir()
    assert module._state_layout() >= 1


def test_module_init_uses_the_library_entry_point(monkeypatch):
    fake = FakeLib(2, cumodule=True)
    monkeypatch.setattr(_lib, "load", lambda: fake)

    class CupyModule:
        ptr = 0xabc

    class RawModule:
        module = CupyModule()
    assert gshmem.module_init(RawModule()) == "gshmemx_cumodule_init"
    assert fake.last() == ("gshmemx_cumodule_init", 0xabc)
    gshmem.module_finalize(0xabc)
    assert fake.last() == ("gshmemx_cumodule_finalize", 0xabc)
    with pytest.raises(gshmem.GshmemArgumentError, match="is not a cupy RawModule"):
        gshmem.module_init("module.cubin")


# ---- torch -------------------------------------------------------------------------------------

def test_torch_dtypes_and_checks(torch_job):
    torch, job = torch_job
    for dt, name in [(torch.float16, "half"), (torch.bfloat16, "bfloat16"),
                     (torch.float32, "float"), (torch.int64, "int64"), (torch.bool, "uint8"),
                     (torch.uint8, "uint8")]:
        assert _types.reduce_typename(dt, "max", "t") == name
    with pytest.raises(gshmem.GshmemArgumentError, match="float8_e4m3fn cannot be reduced"):
        _types.reduce_typename(torch.float8_e4m3fn, "sum", "t")
    t = torch.zeros(8)
    with pytest.raises(gshmem.GshmemArgumentError, match="src is in host memory"):
        gshmem.put(sym(job, 32), t, 1, stream=0)
    v = _objects.view(torch.zeros(4, 4).t(), "src", "t")
    assert not v.contiguous and v.kind == "torch"
