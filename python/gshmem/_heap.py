"""Symmetric tensors and arrays: allocation on gshmem's heap (collective), the record of what
is allocated (so a call can refuse memory that is not symmetric, a view past its
allocation, a tensor already freed), explicit collective free, and load/store views of a
peer's copy (gshmem_ptr). The garbage collector never frees symmetric memory: freeing is
collective and must happen at the same point on every PE."""

import bisect
import collections
import math
import sys
import warnings

from . import _init
from ._lib import GshmemArgumentError, GshmemError, GshmemWarning
from ._objects import check_dense, describe, view

# heap allocations are aligned for 16-byte vector accesses and beyond (torch's own caching
# allocator hands out 512-byte aligned blocks; kernels written for it may assume as much)
ALIGNMENT = 512


class Allocation:
    """One gshmem_align'ed block: its address, size, and whether it is still allocated."""

    __slots__ = ("ptr", "nbytes", "live", "storage", "what")

    def __init__(self, ptr, nbytes, what):
        self.ptr, self.nbytes, self.live, self.storage, self.what = ptr, nbytes, True, None, what


class _Owner:
    """What a symmetric tensor's memory belongs to (torch and cupy keep it alive as long as
    any view of the memory lives). Its __cuda_array_interface__ shows the raw bytes; when
    the last view dies while the block is still allocated, the program lost a tensor it never
    freed: a warning says so (the collector cannot free it: free is collective)."""

    __slots__ = ("alloc", "ptr", "nbytes", "peer")

    def __init__(self, alloc, ptr=None, peer=False):
        self.alloc = alloc
        self.ptr = alloc.ptr if ptr is None else ptr
        self.nbytes = alloc.nbytes
        self.peer = peer

    @property
    def __cuda_array_interface__(self):
        # at least one byte: an empty array's address would not be kept
        return {"shape": (max(self.nbytes, 1),), "typestr": "|u1", "data": (self.ptr, False),
                "version": 3, "strides": None, "stream": None}

    def __del__(self):
        a = self.alloc
        if self.peer or not a.live or sys.is_finalizing():
            return
        try:
            warnings.warn(
                "gshmem: the %s at 0x%x (%d bytes) was garbage-collected without "
                "gshmem.free(); its symmetric memory stays allocated until gshmem.finalize() "
                "(free is collective, so the collector cannot free it)" % (a.what, a.ptr,
                                                                           a.nbytes),
                GshmemWarning, stacklevel=2)
        except Exception:
            pass


class _Registry:
    """Live allocations by address (sorted starts, for 'which allocation holds this
    address'), and the addresses freed lately (to say 'already freed')."""

    def __init__(self):
        self.starts = []
        self.by_ptr = {}
        self.freed = collections.OrderedDict()

    def add(self, a):
        bisect.insort(self.starts, a.ptr)
        self.by_ptr[a.ptr] = a
        self.freed.pop(a.ptr, None)

    def remove(self, a):
        i = bisect.bisect_left(self.starts, a.ptr)
        del self.starts[i]
        del self.by_ptr[a.ptr]
        self.freed[a.ptr] = a.nbytes
        while len(self.freed) > 4096:
            self.freed.popitem(last=False)

    def holding(self, ptr):
        """The live allocation whose block holds address ptr, or None."""
        i = bisect.bisect_right(self.starts, ptr) - 1
        if i < 0:
            return None
        a = self.by_ptr[self.starts[i]]
        return a if ptr < a.ptr + max(a.nbytes, 1) else None

    def clear(self):
        for a in self.by_ptr.values():
            a.live = False
        self.starts, self.by_ptr = [], {}
        self.freed.clear()


registry = _Registry()


def _shape(shape, call):
    if isinstance(shape, int):
        shape = (shape,)
    try:
        shape = tuple(int(n) for n in shape)
    except TypeError:
        raise GshmemArgumentError("%s: shape %r is not an int or a sequence of ints"
                                  % (call, shape))
    if any(n < 0 for n in shape):
        raise GshmemArgumentError("%s: shape %r has a negative extent" % (call, shape))
    return shape


def _allocate(nbytes, what, call):
    """Collective: the same sizes in the same order on every PE."""
    lib = _init.require(call)
    # size 0 still gets a block, so every symmetric tensor has an address of its own
    ptr = lib.gshmem_align(ALIGNMENT, max(nbytes, 1))
    if not ptr:
        raise GshmemError("%s: gshmem_malloc of %d bytes failed: out of symmetric memory "
                          "(gshmem's message on stderr gives the heap use and the free device "
                          "memory; GSHMEM_HEAP_MAX caps the heap)" % (call, nbytes),
                          "GSHMEM_ERR_NO_MEMORY")
    a = Allocation(ptr, nbytes, what)
    registry.add(a)
    return a


def _storage_key(t):
    try:
        return t.untyped_storage()._cdata
    except AttributeError:
        return None


def _torch(call):
    try:
        import torch
    except ImportError:
        raise GshmemError("%s needs torch (pip install torch); gshmem.array() gives cupy "
                          "arrays" % call)
    return torch


def _as_tensor(torch, owner, call):
    """The bytes of `owner` as a uint8 tensor on this PE's GPU, without a copy."""
    try:
        return torch.as_tensor(owner, device="cuda:%d" % _init.state.device)
    except RuntimeError as e:
        if "umpy" in str(e):
            raise GshmemError("%s: torch reads __cuda_array_interface__ through numpy, which "
                              "it cannot use here (%s): pip install numpy" % (call, e))
        raise


def tensor(shape, dtype=None):
    """A torch.Tensor of `shape` and `dtype` (default: torch's default dtype) on the
    symmetric heap: the same address on every PE, reachable by put/get/collectives and by
    device code of any PE. Collective: every PE calls it with the same shape and dtype, in
    the same order. Not initialized (contents are whatever the heap held). Free it with
    gshmem.free(t)."""
    call = "gshmem.tensor"
    torch = _torch(call)
    _init.require(call)
    if dtype is None:
        dtype = torch.get_default_dtype()
    if not isinstance(dtype, torch.dtype):
        raise GshmemArgumentError("%s: dtype %r is not a torch.dtype" % (call, dtype))
    shape = _shape(shape, call)
    nbytes = math.prod(shape) * dtype.itemsize
    a = _allocate(nbytes, "symmetric tensor", call)
    raw = _as_tensor(torch, _Owner(a), call)
    t = raw[:nbytes].view(dtype).view(shape)
    a.storage = _storage_key(t)
    return t


def array(shape, dtype="float32"):
    """A cupy.ndarray on the symmetric heap (as tensor(), for cupy). Free it with
    gshmem.free(a)."""
    call = "gshmem.array"
    try:
        import cupy
    except ImportError:
        raise GshmemError("%s needs cupy (pip install cupy-cuda13x, or the package for your "
                          "CUDA); gshmem.tensor() gives torch tensors" % call)
    _init.require(call)
    shape = _shape(shape, call)
    dtype = cupy.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    a = _allocate(nbytes, "symmetric array", call)
    mem = cupy.cuda.UnownedMemory(a.ptr, max(nbytes, 1), _Owner(a), _init.state.device)
    return cupy.ndarray(shape, dtype, cupy.cuda.MemoryPointer(mem, 0))


def _not_symmetric(v, role, call):
    """The message for an array that no live allocation holds."""
    where = "at 0x%x" % v.ptr
    if v.ptr in registry.freed:
        return ("%s: %s (%s %s) was freed by gshmem.free(); allocate a new one with "
                "gshmem.tensor()" % (call, role, describe(v), where))
    return ("%s: %s (%s %s) is not on the symmetric heap; allocate it with gshmem.tensor() "
            "or gshmem.array() (every PE must hold it at the same address)" % (
                call, role, describe(v), where))


def symmetric(obj, role, call):
    """The View of `obj` after checking it is a dense array on this PE's GPU inside one live
    symmetric allocation."""
    v = view(obj, role, call)
    check_dense(v, role, call, _init.state.device)
    if v.nbytes == 0:
        return v                        # nothing is read or written
    a = registry.holding(v.ptr)
    if a is None:
        raise GshmemArgumentError(_not_symmetric(v, role, call))
    if v.ptr + v.nbytes > a.ptr + a.nbytes:
        raise GshmemArgumentError(
            "%s: %s (%s at 0x%x, %d bytes) runs past the end of its symmetric allocation "
            "(0x%x, %d bytes)" % (call, role, describe(v), v.ptr, v.nbytes, a.ptr, a.nbytes))
    return v


def local(obj, role, call):
    """The View of an array that need not be symmetric (a put's source, a get's
    destination): dense, on this PE's GPU."""
    v = view(obj, role, call)
    check_dense(v, role, call, _init.state.device)
    return v


def free(obj):
    """Free a symmetric tensor or array (collective: every PE frees the same allocation at
    the same point). Pass the object gshmem.tensor()/array() returned (or a view starting at
    its first byte). Using it, or any view of it, afterwards is an error that no check can
    catch once the memory is reused."""
    call = "gshmem.free"
    lib = _init.require(call)
    v = view(obj, "the argument", call)
    a = registry.by_ptr.get(v.ptr)
    if a is None:
        holder = registry.holding(v.ptr)
        if holder is not None:
            raise GshmemArgumentError(
                "%s: %s at 0x%x is a view %d bytes into a symmetric allocation of %d bytes; "
                "free the tensor gshmem.tensor() returned" % (call, describe(v), v.ptr,
                                                              v.ptr - holder.ptr, holder.nbytes))
        if v.ptr in registry.freed:
            raise GshmemArgumentError("%s: %s at 0x%x was already freed" % (call, describe(v),
                                                                           v.ptr))
        raise GshmemArgumentError("%s: %s at 0x%x is not from gshmem.tensor() or "
                                  "gshmem.array()" % (call, describe(v), v.ptr))
    if v.kind == "torch" and a.storage is not None and _storage_key(obj) != a.storage:
        raise GshmemArgumentError(
            "%s: this %s is not a view of the tensor gshmem.tensor() returned for address "
            "0x%x: that one was freed and the address reused, or this tensor was made from "
            "another object over the same memory; free the object gshmem returned"
            % (call, describe(v), v.ptr))
    a.live = False
    registry.remove(a)
    lib.gshmem_free(a.ptr)


@_init.at_finalize
def release_all():
    """At finalize: every allocation ends with the heap."""
    registry.clear()


def _peer_ptr(v, pe, call):
    lib = _init.require(call)
    npes = _init.state.npes
    if not 0 <= pe < npes:
        raise GshmemArgumentError("%s: PE %d is out of range [0, %d)" % (call, pe, npes))
    p = lib.gshmem_ptr(v.ptr, pe)
    if not p:
        raise GshmemArgumentError(
            "%s: PE %d is not reachable by load/store from PE %d (another node); move data "
            "to it with gshmem.put/get" % (call, pe, _init.state.pe))
    return p


def peer_tensor(t, pe):
    """A torch.Tensor over PE `pe`'s copy of symmetric tensor `t` (same shape and dtype),
    for load/store from this GPU (kernels, copies): NVLink / PCIe peers and PEs on the same
    GPU. Raises for a PE on another node. Valid until `t` is freed; not itself freed."""
    call = "gshmem.peer_tensor"
    torch = _torch(call)
    v = symmetric(t, "t", call)
    p = _peer_ptr(v, int(pe), call)
    a = registry.holding(v.ptr)
    owner = _Owner(a, ptr=p, peer=True)
    owner.nbytes = v.nbytes
    raw = _as_tensor(torch, owner, call)
    return raw[:v.nbytes].view(t.dtype).view(t.shape)


def peer_array(arr, pe):
    """A cupy.ndarray over PE `pe`'s copy of symmetric array `arr` (as peer_tensor)."""
    call = "gshmem.peer_array"
    import cupy
    v = symmetric(arr, "arr", call)
    p = _peer_ptr(v, int(pe), call)
    owner = _Owner(registry.holding(v.ptr), ptr=p, peer=True)
    mem = cupy.cuda.UnownedMemory(p, max(v.nbytes, 1), owner, _init.state.device)
    return cupy.ndarray(arr.shape, arr.dtype, cupy.cuda.MemoryPointer(mem, 0))
