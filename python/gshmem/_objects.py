"""What the calls accept: a torch tensor, a cupy array or any object with
__cuda_array_interface__ becomes a View (address, bytes, dtype, device, contiguity), and a
torch / cupy / cuda.core stream or a raw handle becomes the stream handle the C calls take.
Nothing here synchronizes, allocates GPU memory or calls CUDA, so every call stays usable
inside CUDA graph capture."""

import sys

from ._lib import GshmemArgumentError
from ._types import dtype_name

# typestr of __cuda_array_interface__ (kind, bytes) -> dtype name
_TYPESTR = {("f", 2): "float16", ("f", 4): "float32", ("f", 8): "float64",
            ("i", 1): "int8", ("i", 2): "int16", ("i", 4): "int32", ("i", 8): "int64",
            ("u", 1): "uint8", ("u", 2): "uint16", ("u", 4): "uint32", ("u", 8): "uint64",
            ("b", 1): "bool", ("c", 8): "complex64", ("c", 16): "complex128"}


class View:
    """One array argument as the C calls see it. device: CUDA ordinal, -1 for host memory,
    None where the object does not say (a bare __cuda_array_interface__)."""

    __slots__ = ("obj", "ptr", "nbytes", "itemsize", "dtype", "device", "contiguous", "shape",
                 "strides", "kind")

    def __init__(self, obj, ptr, nbytes, itemsize, dtype, device, contiguous, shape, strides,
                 kind):
        self.obj, self.ptr, self.nbytes, self.itemsize = obj, ptr, nbytes, itemsize
        self.dtype, self.device, self.contiguous = dtype, device, contiguous
        self.shape, self.strides, self.kind = shape, strides, kind

    @property
    def count(self):
        return self.nbytes // self.itemsize if self.itemsize else 0


def _torch_view(t):
    dev = t.get_device()                         # -1 on the CPU
    contiguous = t.is_contiguous()
    shape = tuple(t.shape)
    strides = None if contiguous else tuple(t.stride())
    itemsize = t.element_size()
    numel = t.numel()
    # an empty tensor's data_ptr() is 0: its place is where its storage says
    ptr = t.data_ptr() if numel else (t.untyped_storage().data_ptr() +
                                      t.storage_offset() * itemsize)
    return View(t, ptr, numel * itemsize, itemsize, dtype_name(t.dtype), dev, contiguous,
                shape, strides, "torch")


def _cupy_view(a):
    return View(a, a.data.ptr, a.nbytes, a.itemsize, dtype_name(a.dtype), a.device.id,
                bool(a.flags.c_contiguous), tuple(a.shape), None if a.flags.c_contiguous
                else tuple(a.strides), "cupy")


def c_contiguous(shape, strides, itemsize):
    """True when byte strides describe a C-ordered dense array (dims of extent 1 or 0 do not
    count)."""
    if strides is None:
        return True
    if any(n == 0 for n in shape):
        return True
    expect = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != expect:
            return False
        expect *= n
    return True


def _cai_view(obj, cai):
    ptr = int(cai["data"][0] or 0)
    shape = tuple(int(n) for n in cai["shape"])
    typestr = cai["typestr"]
    itemsize = int(typestr[2:])
    dtype = _TYPESTR.get((typestr[1], itemsize), "%s (typestr %s)" % ("other", typestr))
    strides = cai.get("strides")
    strides = tuple(int(s) for s in strides) if strides is not None else None
    count = 1
    for n in shape:
        count *= n
    return View(obj, ptr, count * itemsize, itemsize, dtype, None,
                c_contiguous(shape, strides, itemsize), shape, strides, "cai")


def view(obj, role, call):
    """The View of `obj`, or GshmemArgumentError naming `role` ('dst', 'src', ...) of
    `call` when it is not an array this package understands."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor):
        return _torch_view(obj)
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(obj, cupy.ndarray):
        return _cupy_view(obj)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        return _cai_view(obj, cai)
    raise GshmemArgumentError(
        "%s: %s is a %s; pass a torch tensor, a cupy array or an object with "
        "__cuda_array_interface__ (from gshmem.tensor() or gshmem.array() where it must be "
        "symmetric)" % (call, role, type(obj).__name__))


def describe(v):
    """'float32 tensor of shape (4, 8)' for messages."""
    what = {"torch": "tensor", "cupy": "array"}.get(v.kind, "array")
    return "%s %s of shape %s" % (v.dtype, what, v.shape)


def check_dense(v, role, call, device):
    """Refuse what the C calls cannot take: host memory, another GPU, gaps between elements,
    an address not aligned to the element size."""
    if v.device is not None and v.device < 0:
        raise GshmemArgumentError(
            "%s: %s is in host memory (%s); gshmem moves GPU memory: pass a tensor on "
            "cuda:%d" % (call, role, describe(v), device))
    if v.device is not None and device is not None and v.device != device:
        raise GshmemArgumentError(
            "%s: %s is on cuda:%d but this PE runs on cuda:%d (%s)" % (
                call, role, v.device, device, describe(v)))
    if not v.contiguous:
        raise GshmemArgumentError(
            "%s: %s is not contiguous (%s, strides %s); gshmem's calls take dense arrays: "
            "copy it into a contiguous symmetric tensor first (dst.copy_(src))" % (
                call, role, describe(v), v.strides))
    if v.itemsize and v.ptr % v.itemsize:
        raise GshmemArgumentError(
            "%s: %s at address 0x%x is not aligned to its element size (%d bytes)" % (
                call, role, v.ptr, v.itemsize))


def stream_handle(stream, call):
    """The cudaStream_t (as an int) of `stream`: None means the current stream of torch when
    torch is loaded, else of cupy when cupy is loaded, else the legacy default stream (0)."""
    if stream is None:
        torch = sys.modules.get("torch")
        if torch is not None:
            return torch.cuda.current_stream().cuda_stream
        cupy = sys.modules.get("cupy")
        if cupy is not None:
            return cupy.cuda.get_current_stream().ptr
        return 0
    if isinstance(stream, int):
        return stream
    handle = getattr(stream, "cuda_stream", None)          # torch.cuda.Stream
    if isinstance(handle, int):
        return handle
    proto = getattr(stream, "__cuda_stream__", None)       # cuda.core (and newer cupy)
    if proto is not None:
        pair = proto() if callable(proto) else proto
        return int(pair[1])
    handle = getattr(stream, "ptr", None)                  # cupy.cuda.Stream
    if isinstance(handle, int):
        return handle
    raise GshmemArgumentError(
        "%s: stream %r is not a torch.cuda.Stream, a cupy or cuda.core stream, or an int "
        "handle" % (call, stream))
