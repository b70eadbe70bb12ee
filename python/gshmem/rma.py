"""One-sided calls on a stream: put, get, put with signal, signal operations and waits, quiet.
Each checks its arguments (a message naming the argument instead of a job exit from the C
library), then enqueues the C on-stream call; nothing waits on the host, so the calls can be
captured in a CUDA graph. `stream` is a torch.cuda.Stream, a cupy or cuda.core stream, an int
handle, or None for the current stream (see gshmem._objects.stream_handle)."""

from . import _heap, _init
from ._lib import GshmemArgumentError
from ._objects import describe, stream_handle
from ._types import Cmp, SignalOp, enum_value

_U64 = (1 << 64) - 1


def check_pe(pe, call):
    npes = _init.state.npes
    try:
        p = int(pe)
    except (TypeError, ValueError):
        raise GshmemArgumentError("%s: pe %r is not an int" % (call, pe))
    if not 0 <= p < npes:
        raise GshmemArgumentError("%s: PE %d is out of range [0, %d)" % (call, p, npes))
    return p


def same_shape(d, s, call, dname="dst", sname="src"):
    """Refuse arrays of different sizes or dtypes (a move copies bytes: a mismatch is a bug)."""
    if d.nbytes != s.nbytes:
        raise GshmemArgumentError("%s: %s has %d bytes (%s) but %s has %d (%s); slice one to "
                                  "match" % (call, dname, d.nbytes, describe(d), sname,
                                             s.nbytes, describe(s)))
    if d.dtype != s.dtype:
        raise GshmemArgumentError("%s: %s is %s but %s is %s; convert first (the call copies "
                                  "bytes)" % (call, dname, d.dtype, sname, s.dtype))


def signal_view(sig, call):
    """A signal word: 8 bytes of symmetric memory, 8-byte aligned (a 1-element int64 or
    uint64 tensor)."""
    v = _heap.symmetric(sig, "signal_var", call)
    if v.nbytes != 8 or v.ptr % 8:
        raise GshmemArgumentError(
            "%s: signal_var must be one 8-byte word on the symmetric heap (e.g. "
            "gshmem.tensor((1,), torch.int64)), got %s of %d bytes at 0x%x"
            % (call, describe(v), v.nbytes, v.ptr))
    return v


def _transfer(dst, src, pe, call, remote):
    """(library, dst View, src View, PE) of a put (remote='dst': dst symmetric, src any GPU
    memory of this PE) or a get (remote='src')."""
    lib = _init.require(call)
    d = (_heap.symmetric if remote == "dst" else _heap.local)(dst, "dst", call)
    s = (_heap.symmetric if remote == "src" else _heap.local)(src, "src", call)
    same_shape(d, s, call)
    return lib, d, s, check_pe(pe, call)


def put(dst, src, pe, stream=None):
    """Copy `src` (this PE's GPU memory) into PE `pe`'s copy of symmetric `dst`, in stream
    order. Complete at the target once quiet() (or a barrier) has run on the stream."""
    call = "gshmem.put"
    lib, d, s, p = _transfer(dst, src, pe, call, "dst")
    lib.gshmemx_putmem_on_stream(d.ptr, s.ptr, d.nbytes, p, stream_handle(stream, call))


def get(dst, src, pe, stream=None):
    """Copy PE `pe`'s copy of symmetric `src` into `dst` (this PE's GPU memory), in stream
    order."""
    call = "gshmem.get"
    lib, d, s, p = _transfer(dst, src, pe, call, "src")
    lib.gshmemx_getmem_on_stream(d.ptr, s.ptr, d.nbytes, p, stream_handle(stream, call))


def put_signal(dst, src, signal_var, signal_val, signal_op, pe, stream=None):
    """put(), then `signal_op` (SignalOp.SET or ADD) of `signal_val` on PE `pe`'s
    `signal_var`: the signal is visible at the target only after the data is."""
    call = "gshmem.put_signal"
    lib, d, s, p = _transfer(dst, src, pe, call, "dst")
    sig = signal_view(signal_var, call)
    op = enum_value(signal_op, SignalOp, call, "signal_op")
    lib.gshmemx_putmem_signal_on_stream(d.ptr, s.ptr, d.nbytes, sig.ptr,
                                        int(signal_val) & _U64, int(op), p,
                                        stream_handle(stream, call))


def signal_op(signal_var, signal_val, signal_op, pe, stream=None):
    """`signal_op` (SignalOp.SET or ADD) of `signal_val` on PE `pe`'s `signal_var`, in
    stream order (a put_signal without data)."""
    call = "gshmem.signal_op"
    lib = _init.require(call)
    sig = signal_view(signal_var, call)
    op = enum_value(signal_op, SignalOp, call, "signal_op")
    p = check_pe(pe, call)
    lib.gshmemx_signal_op_on_stream(sig.ptr, int(signal_val) & _U64, int(op), p,
                                    stream_handle(stream, call))


def signal_wait(signal_var, signal_val, cmp, stream=None):
    """Later work on `stream` waits until this PE's `signal_var` compares `cmp` (Cmp.EQ, NE,
    GT, GE, LT, LE) with `signal_val`; data put before the signal is visible to it."""
    call = "gshmem.signal_wait"
    lib = _init.require(call)
    sig = signal_view(signal_var, call)
    c = enum_value(cmp, Cmp, call, "cmp")
    lib.gshmemx_signal_wait_until_on_stream(sig.ptr, int(c), int(signal_val) & _U64,
                                            stream_handle(stream, call))


def quiet(stream=None):
    """Later work on `stream` starts once every put of this PE enqueued before it is
    complete at its target."""
    call = "gshmem.quiet"
    lib = _init.require(call)
    lib.gshmemx_quiet_on_stream(stream_handle(stream, call))
