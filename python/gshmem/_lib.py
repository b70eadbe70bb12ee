"""libgshmem through ctypes: where the library is found, the prototypes of the C calls this
package makes, and gshmem's status codes as Python exceptions. The library is loaded at the
first call that needs it, so `import gshmem` works where there is no library and no GPU."""

import ctypes
import os
import sys
import threading

STATUS_NAMES = (
    "GSHMEM_SUCCESS", "GSHMEM_ERR_INVALID_ARG", "GSHMEM_ERR_NOT_INITIALIZED",
    "GSHMEM_ERR_NO_MEMORY", "GSHMEM_ERR_CUDA", "GSHMEM_ERR_BOOTSTRAP", "GSHMEM_ERR_NOT_AVAILABLE",
    "GSHMEM_ERR_NO_DEVICE", "GSHMEM_ERR_TIMEOUT", "GSHMEM_ERR_INTERNAL", "GSHMEM_ERR_LAUNCH",
)
STATUS_TEXT = (
    "success", "invalid argument", "not initialized", "out of memory", "CUDA error",
    "bootstrap failure", "not available", "no usable GPU", "timeout", "internal error",
    "kernel launch refused",
)


class GshmemError(RuntimeError):
    """A gshmem call failed. ``status`` is gshmem's status name (``"GSHMEM_ERR_NO_DEVICE"``...)
    when the C library returned one, else None; ``messages`` holds what the library printed
    for the call when the package captured it (init)."""

    def __init__(self, message, status=None, messages=""):
        super().__init__(message)
        self.status = status
        self.messages = messages


class GshmemArgumentError(GshmemError, ValueError):
    """An argument was refused before any C call: the message names the call, the argument
    and what to pass instead."""


class GshmemNotInitialized(GshmemError):
    """A call that needs gshmem.init() came before it (or after gshmem.finalize())."""


class GshmemWarning(UserWarning):
    """Something the program should fix but that does not stop it (a symmetric tensor
    collected without gshmem.free(), a fallback taken)."""


def status_name(code):
    return STATUS_NAMES[code] if 0 <= code < len(STATUS_NAMES) else "status %d" % code


def status_text(code):
    return STATUS_TEXT[code] if 0 <= code < len(STATUS_TEXT) else "unknown status"


def check(code, call):
    """Raise GshmemError for a nonzero status from C call `call` (the library has printed
    why on stderr)."""
    if code:
        raise GshmemError("%s failed: %s (%s); gshmem's message on stderr says why"
                          % (call, status_text(code), status_name(code)), status_name(code))


# ---- structures of gshmem/types.h ---------------------------------------------------------
UNIQUEID_BYTES = 128


class UniqueIdC(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * UNIQUEID_BYTES)]


class InitAttrC(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int), ("n_pes", ctypes.c_int), ("uid", UniqueIdC)]


class HeapInfoC(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("reserved", ctypes.c_size_t),
                ("mapped", ctypes.c_size_t), ("in_use", ctypes.c_size_t),
                ("internal", ctypes.c_size_t), ("cap", ctypes.c_size_t),
                ("n_chunks", ctypes.c_int)]


class PlacementC(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int) for name in
                ("device", "gpu_pes", "gpu_rank", "mps", "sm_count", "sm_share",
                 "coll_max_blocks")]


# int updater(const gshmemi_device_state *state): a module's copy of the device state
STATE_UPDATER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)

_V, _I, _SZ, _U64, _T = (ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_uint64,
                         ctypes.c_int32)
_PT = ctypes.POINTER(ctypes.c_int32)
_MOVE = (_I, (_T, _V, _V, _SZ, _V))            # team, dest, source, nelems, stream
_RED = (_I, (_T, _V, _V, _SZ, _V))
# name: (restype, argtypes) for every C call the package makes; the reductions
# (gshmemx_<TYPENAME>_<op>_<reduce|reducescatter>_on_stream) all have _RED's shape
PROTOTYPES = {
    "gshmemx_init_status": (_I, ()),
    "gshmemx_init_attr": (_I, (ctypes.POINTER(InitAttrC),)),
    "gshmemx_get_uniqueid": (_I, (ctypes.POINTER(UniqueIdC),)),
    "gshmem_finalize": (None, ()),
    "gshmem_my_pe": (_I, ()),
    "gshmem_n_pes": (_I, ()),
    "gshmem_info_get_name": (None, (ctypes.c_char_p,)),
    "gshmemx_init_seconds": (ctypes.c_double, ()),
    "gshmemx_heap_info": (_I, (ctypes.POINTER(HeapInfoC),)),
    "gshmemx_get_placement": (_I, (ctypes.POINTER(PlacementC),)),
    "gshmem_align": (_V, (_SZ, _SZ)),
    "gshmem_free": (None, (_V,)),
    "gshmem_ptr": (_V, (_V, _I)),
    "gshmemx_putmem_on_stream": (None, (_V, _V, _SZ, _I, _V)),
    "gshmemx_getmem_on_stream": (None, (_V, _V, _SZ, _I, _V)),
    "gshmemx_putmem_signal_on_stream": (None, (_V, _V, _SZ, _V, _U64, _I, _I, _V)),
    "gshmemx_signal_op_on_stream": (None, (_V, _U64, _I, _I, _V)),
    "gshmemx_signal_wait_until_on_stream": (None, (_V, _I, _U64, _V)),
    "gshmemx_quiet_on_stream": (None, (_V,)),
    "gshmemx_barrier_all_on_stream": (None, (_V,)),
    "gshmemx_barrier_on_stream": (_I, (_T, _V)),
    "gshmemx_team_sync_on_stream": (_I, (_T, _V)),
    "gshmem_team_my_pe": (_I, (_T,)),
    "gshmem_team_n_pes": (_I, (_T,)),
    "gshmem_team_translate_pe": (_I, (_T, _I, _T)),
    "gshmem_team_split_strided": (_I, (_T, _I, _I, _I, _V, ctypes.c_long, _PT)),
    "gshmem_team_split_2d": (_I, (_T, _I, _V, ctypes.c_long, _PT, _V, ctypes.c_long, _PT)),
    "gshmem_team_destroy": (None, (_T,)),
    "gshmemx_broadcastmem_on_stream": (_I, (_T, _V, _V, _SZ, _I, _V)),
    "gshmemx_fcollectmem_on_stream": _MOVE,
    "gshmemx_alltoallmem_on_stream": _MOVE,
    "gshmemx_register_state_updater": (_I, (STATE_UPDATER, ctypes.c_uint32)),
    "gshmemx_unregister_state_updater": (None, (STATE_UPDATER,)),
    # not in every libgshmem: looked up with optional()
    "gshmemx_cumodule_init": (_I, (_V,)),
    "gshmemx_cumodule_finalize": (_I, (_V,)),
}


def _prototype(name):
    if name in PROTOTYPES:
        return PROTOTYPES[name]
    if name.startswith("gshmemx_") and name.endswith(("_reduce_on_stream",
                                                      "_reducescatter_on_stream")):
        return _RED
    raise AttributeError("gshmem._lib has no prototype for %s" % name)


def _package_dir():
    return os.path.dirname(os.path.abspath(__file__))


def checkout_root():
    """The repository root when the package runs from a checkout (python/gshmem/), else None."""
    root = os.path.dirname(os.path.dirname(_package_dir()))
    return root if os.path.isfile(os.path.join(root, "include", "gshmem.h")) else None


def _recorded():
    try:
        from . import _config
    except ImportError:
        return None
    return _config


def candidates():
    """Where libgshmem is looked for, in order: [(how, path)]. GSHMEMPY_LIB, when set, is the
    only candidate."""
    env = os.environ.get("GSHMEMPY_LIB")
    if env:
        return [("GSHMEMPY_LIB", env)]
    out = []
    bundled = os.path.join(_package_dir(), "_lib", "libgshmem.so.0")
    if os.path.exists(bundled):
        out.append(("the copy in the package", bundled))
    cfg = _recorded()
    if cfg is not None and cfg.LIB:
        out.append(("recorded when the package was built", os.path.normpath(cfg.LIB)))
    root = checkout_root()
    if root:
        out.append(("the checkout's build/", os.path.join(root, "build", "src", "libgshmem.so.0")))
    out.append(("the dynamic loader (LD_LIBRARY_PATH, ldconfig)", "libgshmem.so.0"))
    return out


class _Library:
    """The loaded libgshmem: attribute access returns the C function with its prototype set,
    cached; optional(name) returns None where this build lacks the function."""

    def __init__(self, handle, path):
        self._handle = handle
        self.path = path

    def __getattr__(self, name):
        restype, argtypes = _prototype(name)
        fn = getattr(self._handle, name)
        fn.restype = restype
        fn.argtypes = argtypes
        self.__dict__[name] = fn
        return fn

    def optional(self, name):
        try:
            return getattr(self, name)
        except AttributeError:
            return None


_lock = threading.Lock()
_loaded = None


def load():
    """The loaded library; raises GshmemError naming every place looked at when it cannot
    be found or loaded."""
    global _loaded
    if _loaded is not None:
        return _loaded
    with _lock:
        if _loaded is not None:
            return _loaded
        tried = []
        for how, path in candidates():
            if os.sep in path and not os.path.exists(path):
                tried.append("%s: %s (no such file)" % (how, path))
                continue
            try:
                handle = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            except OSError as e:
                tried.append("%s: %s (%s)" % (how, path, e))
                continue
            _loaded = _Library(handle, path)
            return _loaded
        raise GshmemError(
            "libgshmem could not be loaded; tried:\n  " + "\n  ".join(tried) +
            "\nset GSHMEMPY_LIB to the library's path (e.g. build/src/libgshmem.so), or install "
            "the package against a built gshmem (docs/python.md, \"Install\")", "not found")


class capture_stderr:
    """Copies what C code writes to file descriptor 2 while the block runs: the text still
    reaches stderr as it is written (a reader thread passes it on), and is kept in .text.
    Used around init, whose failures gshmem explains only on stderr."""

    def __init__(self):
        self.text = ""

    def __enter__(self):
        self._chunks = []
        try:
            sys.stderr.flush()
        except (AttributeError, ValueError):
            pass
        self._saved = os.dup(2)
        r, w = os.pipe()
        os.dup2(w, 2)
        os.close(w)
        self._reader = threading.Thread(target=self._pump, args=(r,), daemon=True)
        self._reader.start()
        return self

    def _pump(self, r):
        while True:
            try:
                data = os.read(r, 65536)
            except OSError:
                break
            if not data:
                break
            self._chunks.append(data)
            try:
                os.write(self._saved, data)
            except OSError:
                pass
        os.close(r)

    def __exit__(self, *exc):
        os.dup2(self._saved, 2)          # the pipe's last writer closes: the reader sees EOF
        # a process forked inside the block may hold the pipe open: do not wait for it
        self._reader.join(timeout=2.0)
        if not self._reader.is_alive():
            os.close(self._saved)
        self.text = b"".join(self._chunks).decode("utf-8", "replace")
        return False
