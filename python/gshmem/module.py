"""Kernels compiled at run time (cupy RawModule, cuModuleLoad of a cubin) that call gshmem's
device API: where gshmem's headers are (to compile them), and module_init(), which gives a
loaded module its copy of gshmem's device state. A module compiled into a shared library by
nvcc (torch's load_inline, a ctypes-loaded .so linked with -lgshmem) needs neither: the
header's constructor registers it when the library is loaded."""

import ctypes
import os
import re
import warnings

from . import _lib
from ._lib import GshmemArgumentError, GshmemError, GshmemWarning

# the module's copy of the device state: gshmem/device/state.h's `static __constant__
# gshmemi_device_state gshmemi_dstate` (nvcc keeps the name; NVRTC-style lowered name second)
_STATE_SYMBOLS = (b"gshmemi_dstate", b"_ZL14gshmemi_dstate")


def include_dir():
    """The directory holding gshmem.h: GSHMEMPY_INCLUDE, the headers in the package, the one
    recorded when the package was built, or the checkout's include/."""
    tried = []
    env = os.environ.get("GSHMEMPY_INCLUDE")
    here = os.path.dirname(os.path.abspath(__file__))
    cands = [env] if env else []
    cands.append(os.path.join(here, "include"))
    try:
        from . import _config
        cands.append(_config.INCLUDE)
    except ImportError:
        pass
    root = _lib.checkout_root()
    if root:
        cands.append(os.path.join(root, "include"))
    for d in cands:
        if d and os.path.isfile(os.path.join(d, "gshmem.h")):
            return os.path.normpath(d)
        tried.append(str(d))
    raise GshmemError("gshmem.h not found (tried %s); set GSHMEMPY_INCLUDE to the include "
                      "directory of your gshmem install" % ", ".join(tried))


def compile_options():
    """nvcc options for a module that includes gshmem.h (cupy.RawModule(...,
    options=gshmem.compile_options(), backend='nvcc'))."""
    return ("-I" + include_dir(), "-std=c++17")


def _module_handle(mod, call):
    if isinstance(mod, int):
        return mod
    inner = getattr(mod, "module", None)            # cupy.RawModule
    if inner is not None and isinstance(getattr(inner, "ptr", None), int):
        return inner.ptr
    if isinstance(getattr(mod, "ptr", None), int):  # cupy.cuda.function.Module
        return mod.ptr
    raise GshmemArgumentError("%s: %r is not a cupy RawModule, a cupy Module or a CUmodule "
                              "handle (int)" % (call, mod))


class _Driver:
    """The two driver calls the state copy needs (libcuda, loaded by path only here)."""

    def __init__(self):
        try:
            cu = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise GshmemError("libcuda.so.1 (the NVIDIA driver) could not be loaded: %s" % e)
        self.get_global = cu.cuModuleGetGlobal_v2
        self.get_global.restype = ctypes.c_int
        self.get_global.argtypes = (ctypes.POINTER(ctypes.c_uint64),
                                    ctypes.POINTER(ctypes.c_size_t), ctypes.c_void_p,
                                    ctypes.c_char_p)
        self.copy_in = cu.cuMemcpyHtoD_v2
        self.copy_in.restype = ctypes.c_int
        self.copy_in.argtypes = (ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t)


_driver = None
_updaters = {}      # CUmodule -> the registered ctypes callback (kept alive while registered)


def _state_layout():
    with open(os.path.join(include_dir(), "gshmem", "device", "state.h")) as f:
        m = re.search(r"#define GSHMEMI_STATE_LAYOUT (\d+)u", f.read())
    if not m:
        raise GshmemError("gshmem/device/state.h names no GSHMEMI_STATE_LAYOUT; this libgshmem "
                          "needs gshmemx_cumodule_init for run-time modules")
    return int(m.group(1))


def _register_updater(lib, h, call):
    """Without gshmemx_cumodule_init: register a state updater written here, through the
    public gshmemx_register_state_updater, that copies the state into the module's
    gshmemi_dstate with the driver."""
    global _driver
    if _driver is None:
        _driver = _Driver()
    drv = _driver
    dptr, size = ctypes.c_uint64(0), ctypes.c_size_t(0)
    for name in _STATE_SYMBOLS:
        if drv.get_global(ctypes.byref(dptr), ctypes.byref(size), h, name) == 0:
            break
    else:
        raise GshmemArgumentError("%s: the module has no gshmem device state (gshmemi_dstate): "
                                  "it does not include gshmem.h, or no kernel of it calls gshmem"
                                  % call)
    where, nbytes = dptr.value, size.value

    def update(state):
        try:
            return drv.copy_in(where, state, nbytes)
        except Exception:
            return 1                         # a nonzero status: gshmem reports the failure

    cb = _lib.STATE_UPDATER(update)
    version = (_state_layout() << 16) | nbytes
    _lib.check(lib.gshmemx_register_state_updater(cb, version), "gshmemx_register_state_updater")
    _updaters[h] = cb


def module_init(mod):
    """Give a module loaded at run time (cupy RawModule, CUmodule handle) gshmem's device
    state, now and whenever it changes (heap growth), so its kernels may call the device
    API. Call it after gshmem.init() or before: the state arrives at init. Returns the way it
    was done: 'gshmemx_cumodule_init' (the library's entry point) or 'state updater' (this
    package's, where the library lacks that entry point)."""
    call = "gshmem.module_init"
    lib = _lib.load()
    h = _module_handle(mod, call)
    fn = lib.optional("gshmemx_cumodule_init")
    if fn is not None:
        _lib.check(fn(h), "gshmemx_cumodule_init")
        return "gshmemx_cumodule_init"
    if h not in _updaters:
        warnings.warn("gshmem.module_init: this libgshmem has no gshmemx_cumodule_init; the "
                      "module's device state is kept by a state updater registered from Python "
                      "(gshmemx_register_state_updater)", GshmemWarning, stacklevel=2)
        _register_updater(lib, h, call)
    return "state updater"


def module_finalize(mod):
    """Stop updating a module's device state (before unloading it)."""
    call = "gshmem.module_finalize"
    lib = _lib.load()
    h = _module_handle(mod, call)
    fn = lib.optional("gshmemx_cumodule_finalize")
    if fn is not None:
        _lib.check(fn(h), "gshmemx_cumodule_finalize")
        return
    cb = _updaters.pop(h, None)
    if cb is not None:
        lib.gshmemx_unregister_state_updater(cb)
