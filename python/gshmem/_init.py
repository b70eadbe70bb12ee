"""init and finalize: which launcher started the process (gshmrun, a PMIx launcher, torchrun,
an MPI program, or the caller with an explicit unique id) and how gshmem finds its peers
under each; the facts of this PE kept after init (PE number, PE count, GPU)."""

import ctypes
import os
import sys

from . import _lib
from ._lib import GshmemArgumentError, GshmemError, GshmemNotInitialized


class _State:
    initialized = False
    pe = -1
    npes = 0
    device = -1
    method = None
    uid_round = 0        # unique-id keys of successive inits through one store differ


state = _State()

# What finalize() forgets with the heap, registered by the modules that keep such records
# (_heap: allocations, teams: team sizes) when they are imported: they use this module, so it
# calls them back rather than importing them.
_at_finalize = []


def at_finalize(fn):
    """Calls fn() at every finalize(), before the library's own finalize; returns fn (so it
    serves as a decorator)."""
    _at_finalize.append(fn)
    return fn


def require(call):
    """The loaded library, or GshmemNotInitialized naming `call`."""
    if not state.initialized:
        raise GshmemNotInitialized("%s: gshmem is not initialized; call gshmem.init() first"
                                   % call)
    return _lib.load()


class UniqueId:
    """The id a unique-id init rendezvouses on (gshmemx_uniqueid_t): made by the process that
    becomes PE 0 (get_unique_id()), passed to every process by the caller's own means
    (bytes(uid) and UniqueId(data)), then handed to init(uid=..., rank=..., n_pes=...)."""

    __slots__ = ("data",)

    def __init__(self, data):
        if isinstance(data, str):
            data = data.encode()
        data = bytes(data)
        if len(data) > _lib.UNIQUEID_BYTES:
            raise GshmemArgumentError("UniqueId: %d bytes, more than the %d of a gshmem id"
                                      % (len(data), _lib.UNIQUEID_BYTES))
        self.data = data.ljust(_lib.UNIQUEID_BYTES, b"\0")

    def __bytes__(self):
        return self.data

    def __repr__(self):
        return "UniqueId(%r)" % self.data.rstrip(b"\0")


def get_unique_id():
    """A new unique id (gshmemx_get_uniqueid). Call it on the process that becomes PE 0 only:
    the id names a socket that process listens on."""
    lib = _lib.load()
    uid = _lib.UniqueIdC()
    _lib.check(lib.gshmemx_get_uniqueid(ctypes.byref(uid)), "gshmemx_get_uniqueid")
    return UniqueId(uid.internal)


def _torchrun_env():
    env = os.environ
    return "TORCHELASTIC_RUN_ID" in env or all(k in env for k in ("RANK", "WORLD_SIZE",
                                                                     "LOCAL_RANK"))


def _launcher():
    """'env' where gshmem_init finds its peers itself (gshmrun, PMIx), 'torch' under
    torchrun, else 'env' (one PE alone)."""
    env = os.environ
    if env.get("GSHMEM_UID") or env.get("GSHMEM_BOOTSTRAP", "auto") != "auto":
        return "env"
    if "PMIX_RANK" in env or "PMIX_NAMESPACE" in env:
        return "env"
    if _torchrun_env():
        return "torch"
    return "env"


def _torch_store():
    """torch.distributed's store of this job, its rank and size: the default process group's
    when one exists, else torchrun's agent store."""
    try:
        import torch.distributed as dist
    except ImportError as e:
        raise GshmemError("gshmem.init under torchrun needs torch.distributed (%s); or pass "
                          "uid=, rank=, n_pes=" % e)
    if dist.is_available() and dist.is_initialized():
        from torch.distributed import distributed_c10d
        return distributed_c10d._get_default_store(), dist.get_rank(), dist.get_world_size()
    env = os.environ
    if env.get("TORCHELASTIC_USE_AGENT_STORE") == "True" and "MASTER_ADDR" in env:
        import datetime
        store = dist.TCPStore(env["MASTER_ADDR"], int(env["MASTER_PORT"]),
                              int(env["WORLD_SIZE"]), is_master=False,
                              timeout=datetime.timedelta(seconds=300))
        return store, int(env["RANK"]), int(env["WORLD_SIZE"])
    raise GshmemError(
        "gshmem.init under torchrun: no torch.distributed store to share the unique id "
        "through; call torch.distributed.init_process_group() first, or pass store=, or "
        "uid=, rank=, n_pes=")


def _uid_through_store(store, rank, n_pes):
    """Rank 0 makes the id and sets it in the store; every rank reads it (blocking)."""
    state.uid_round += 1
    key = "gshmem/uid/%d" % state.uid_round
    if rank == 0:
        store.set(key, bytes(get_unique_id()))
    return UniqueId(store.get(key))


def _init_attr(lib, uid, rank, n_pes):
    if uid is None or rank is None or n_pes is None:
        raise GshmemArgumentError("gshmem.init: a unique-id init needs uid, rank and n_pes "
                                  "(got uid=%r, rank=%r, n_pes=%r)" % (uid, rank, n_pes))
    if not 0 <= int(rank) < int(n_pes):
        raise GshmemArgumentError("gshmem.init: rank %r is not in [0, n_pes=%r)" % (rank, n_pes))
    if not isinstance(uid, UniqueId):
        uid = UniqueId(uid)
    attr = _lib.InitAttrC()
    attr.rank, attr.n_pes = int(rank), int(n_pes)
    attr.uid.internal = uid.data
    return lib.gshmemx_init_attr(ctypes.byref(attr))


class Runtime:
    """What init() returns: this PE's facts, and a context manager that finalizes on exit
    (`with gshmem.init() as g: ...`)."""

    def __init__(self):
        self.pe, self.n_pes, self.device, self.method = (state.pe, state.npes, state.device,
                                                         state.method)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        finalize()
        return False

    def __repr__(self):
        return "<gshmem PE %d of %d on cuda:%d, init by %s>" % (self.pe, self.n_pes,
                                                                self.device, self.method)


def init(*, uid=None, rank=None, n_pes=None, store=None, comm=None, device=None,
         method="auto"):
    """Start gshmem on this process (collective: every PE calls it).

    How the PEs find each other:
      - under ``gshmrun`` or a PMIx launcher (``mpirun``, ``srun --mpi=pmix``): by themselves
        (method "env", chosen automatically);
      - under ``torchrun``: PE 0 makes a unique id and shares it through torch.distributed's
        store (the default process group's, or torchrun's agent store) (method "torch");
      - ``store=``: the same through a torch.distributed Store the caller gives (rank and
        n_pes from the default process group or the environment unless given);
      - ``comm=``: an mpi4py communicator broadcasts the id;
      - ``uid=, rank=, n_pes=``: an id the caller shared (get_unique_id() on rank 0).
    ``device``: the CUDA ordinal for this PE (GSHMEM_DEVICE); by default the device already
    current, else the PE's index on its node.

    Returns a Runtime (PE number, PE count, device), usable as a context manager that calls
    finalize(). Raises GshmemError with gshmem's own message when init fails (no GPU, a peer
    missing...)."""
    if state.initialized:
        return Runtime()
    lib = _lib.load()
    if device is not None:
        os.environ["GSHMEM_DEVICE"] = str(int(device))
    if method not in ("auto", "env", "torch", "uid", "mpi"):
        raise GshmemArgumentError("gshmem.init: method %r is not auto, env, torch, uid or mpi"
                                  % (method,))
    if uid is not None:
        method = "uid"
    elif comm is not None:
        method = "mpi"
    elif store is not None:
        method = "torch"
    elif method == "auto":
        method = _launcher()
    with _lib.capture_stderr() as err:
        if method == "env":
            rc = lib.gshmemx_init_status()
        else:
            if method == "mpi":
                rank, n_pes = comm.Get_rank(), comm.Get_size()
                uid = comm.bcast(bytes(get_unique_id()) if rank == 0 else None, root=0)
            elif method == "torch":
                if store is None:
                    store, r, n = _torch_store()
                else:
                    r = n = None
                    if "RANK" in os.environ:
                        r, n = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
                rank = r if rank is None else rank
                n_pes = n if n_pes is None else n_pes
                if rank is None or n_pes is None:
                    raise GshmemArgumentError("gshmem.init(store=...): pass rank= and n_pes=")
                uid = _uid_through_store(store, rank, n_pes)
            rc = _init_attr(lib, uid, rank, n_pes)
    if rc:
        lines = [l for l in err.text.splitlines() if l.strip()]
        why = ("\n" + "\n".join(lines[-6:])) if lines else ""
        raise GshmemError("gshmem.init (%s) failed: %s (%s)%s" % (
            method, _lib.status_text(rc), _lib.status_name(rc), why),
            _lib.status_name(rc), err.text)
    place = _lib.PlacementC()
    _lib.check(lib.gshmemx_get_placement(ctypes.byref(place)), "gshmemx_get_placement")
    state.pe, state.npes = lib.gshmem_my_pe(), lib.gshmem_n_pes()
    state.device, state.method, state.initialized = place.device, method, True
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.set_device(state.device)
    return Runtime()


def finalize():
    """Stop gshmem (collective). Symmetric tensors not freed are released with the heap:
    do not use them afterwards."""
    if not state.initialized:
        return
    for fn in _at_finalize:
        fn()
    lib = _lib.load()
    state.initialized = False
    lib.gshmem_finalize()
    state.pe, state.npes, state.device = -1, 0, -1


def initialized():
    return state.initialized


def my_pe():
    """This PE's number in TEAM_WORLD."""
    require("gshmem.my_pe")
    return state.pe


def n_pes():
    """The number of PEs of the job."""
    require("gshmem.n_pes")
    return state.npes


def device():
    """The CUDA ordinal this PE runs on."""
    require("gshmem.device")
    return state.device


def heap_info():
    """The symmetric heap's figures (base, reserved, mapped, in_use, internal, cap, n_chunks)
    as a dict."""
    lib = require("gshmem.heap_info")
    info = _lib.HeapInfoC()
    _lib.check(lib.gshmemx_heap_info(ctypes.byref(info)), "gshmemx_heap_info")
    return {name: getattr(info, name) or 0 for name, _ in info._fields_}


def placement():
    """Where this PE runs (device, gpu_pes, gpu_rank, mps, sm_count, sm_share,
    coll_max_blocks) as a dict."""
    lib = require("gshmem.placement")
    place = _lib.PlacementC()
    _lib.check(lib.gshmemx_get_placement(ctypes.byref(place)), "gshmemx_get_placement")
    return {name: getattr(place, name) for name, _ in place._fields_}
