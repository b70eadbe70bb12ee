"""gshmem for Python: symmetric torch tensors and cupy arrays, one-sided puts, gets and signals,
and collectives on CUDA streams, over libgshmem (docs/python.md).

    import torch, gshmem
    with gshmem.init() as g:                     # under gshmrun, mpirun/srun or torchrun
        x = gshmem.tensor((1024,), torch.float32)
        x.fill_(g.pe)
        gshmem.allreduce(x)                      # on torch's current stream
        torch.cuda.synchronize()
        gshmem.free(x)                           # collective; never left to the collector

Importing needs neither libgshmem nor a GPU; the library is loaded at the first call that
needs it (GSHMEMPY_LIB names it), and init() fails with gshmem's own message where no GPU is."""

from ._lib import (GshmemArgumentError, GshmemError, GshmemNotInitialized, GshmemWarning,
                   STATUS_NAMES)
from ._types import Cmp, SignalOp, OPS, REDUCIBLE, dtype_name
from ._init import (Runtime, UniqueId, device, finalize, get_unique_id, heap_info, init,
                    initialized, my_pe, n_pes, placement)
from ._heap import array, free, peer_array, peer_tensor, tensor
from .teams import (TEAM_INVALID, TEAM_NODE, TEAM_SAME_MYPE_NODE, TEAM_SHARED, TEAM_WORLD, Team,
                    team_destroy, team_my_pe, team_n_pes, team_split_2d, team_split_strided,
                    team_translate_pe)
from .rma import get, put, put_signal, quiet, signal_op, signal_wait
from .collective import (allgather, allreduce, alltoall, barrier, barrier_all, broadcast,
                         fcollect, reduce, reducescatter, sync, sync_all)
from .module import compile_options, include_dir, module_finalize, module_init

__version__ = "0.1.0"


def library_path():
    """The path of the libgshmem this package uses (loading it if needed)."""
    from . import _lib
    return _lib.load().path


__all__ = [
    "GshmemArgumentError", "GshmemError", "GshmemNotInitialized", "GshmemWarning",
    "STATUS_NAMES", "Cmp", "SignalOp", "OPS", "REDUCIBLE", "dtype_name",
    "Runtime", "UniqueId", "device", "finalize", "get_unique_id", "heap_info", "init",
    "initialized", "my_pe", "n_pes", "placement",
    "array", "free", "peer_array", "peer_tensor", "tensor",
    "TEAM_INVALID", "TEAM_NODE", "TEAM_SAME_MYPE_NODE", "TEAM_SHARED", "TEAM_WORLD", "Team",
    "team_destroy", "team_my_pe", "team_n_pes", "team_split_2d", "team_split_strided",
    "team_translate_pe",
    "get", "put", "put_signal", "quiet", "signal_op", "signal_wait",
    "allgather", "allreduce", "alltoall", "barrier", "barrier_all", "broadcast", "fcollect",
    "reduce", "reducescatter", "sync", "sync_all",
    "compile_options", "include_dir", "module_finalize", "module_init", "library_path",
]
