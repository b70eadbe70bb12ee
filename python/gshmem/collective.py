"""Collectives on a stream over a team: reductions (reduce / allreduce, reducescatter),
fcollect / allgather, alltoall, broadcast, barrier and sync. Every PE of the team calls them in
the same order with the same sizes; each is one C on-stream call (one kernel launch, or a
copy-engine path outside graph capture), capturable in a CUDA graph. Arrays must be symmetric
(gshmem.tensor()/array()); reductions take the dtypes of gshmem._types.REDUCIBLE, the others
move bytes of any dtype."""

from . import _heap, _init, _lib
from ._lib import GshmemArgumentError
from ._objects import describe, stream_handle
from ._types import op_name, reduce_typename
from .rma import same_shape
from .teams import TEAM_WORLD, _team, team_n_pes, team_sync


def _overlap(d, s):
    return d.ptr < s.ptr + s.nbytes and s.ptr < d.ptr + d.nbytes


def _refuse_overlap(d, s, call, why):
    if d.nbytes and s.nbytes and _overlap(d, s):
        raise GshmemArgumentError("%s: dst (0x%x, %d bytes) and src (0x%x, %d bytes) overlap; "
                                  "%s" % (call, d.ptr, d.nbytes, s.ptr, s.nbytes, why))


def _operands(team, dst, src, call):
    """(library, team, team size, dst View, src View): both symmetric, of one dtype."""
    lib = _init.require(call)
    t = _team(team, call)
    n = team_n_pes(t, call)
    d = _heap.symmetric(dst, "dst", call)
    s = _heap.symmetric(src, "src", call)
    if d.dtype != s.dtype:
        raise GshmemArgumentError("%s: dst is %s but src is %s; both must have one dtype"
                                  % (call, d.dtype, s.dtype))
    return lib, t, n, d, s


def _reduction(coll, team, dst, src, op, stream, call):
    lib, t, n, d, s = _operands(team, dst, src, call)
    opn = op_name(op, call)
    typename = reduce_typename(d.dtype, opn, call)
    if coll == "reduce":
        if d.nbytes != s.nbytes:
            same_shape(d, s, call)
        if d.ptr != s.ptr:
            _refuse_overlap(d, s, call, "pass the same tensor for an in-place reduction, or "
                            "disjoint ones")
    else:
        if s.nbytes != d.nbytes * n:
            raise GshmemArgumentError(
                "%s: src must hold team-size (%d) times dst's elements: src %s has %d, dst %s "
                "has %d" % (call, n, describe(s), s.count, describe(d), d.count))
        _refuse_overlap(d, s, call, "reducescatter cannot run in place")
    name = "gshmemx_%s_%s_%s_on_stream" % (typename, opn, coll)
    rc = getattr(lib, name)(t, d.ptr, s.ptr, d.count, stream_handle(stream, call))
    _lib.check(rc, name)


def reduce(team, dst, src, op="sum", stream=None):
    """All-reduce over `team`: every member's `dst` gets the elementwise `op` ('sum',
    'prod', 'min', 'max'; 'and', 'or', 'xor' on integer dtypes) of every member's `src`.
    `dst` may be `src` (in place). float16 and bfloat16 included."""
    _reduction("reduce", team, dst, src, op, stream, "gshmem.reduce")


def allreduce(tensor, op="sum", *, out=None, team=TEAM_WORLD, stream=None):
    """reduce() shaped like torch.distributed.all_reduce: in place on `tensor`, or into
    `out`."""
    _reduction("reduce", team, tensor if out is None else out, tensor, op, stream,
               "gshmem.allreduce")


def reducescatter(team, dst, src, op="sum", stream=None):
    """Reduce-scatter over `team`: `src` holds team-size blocks of len(dst) elements; member
    i's `dst` gets the `op` of every member's block i."""
    _reduction("reducescatter", team, dst, src, op, stream, "gshmem.reducescatter")


def _move(coll, team, dst, src, stream, call, root=None):
    lib, t, n, d, s = _operands(team, dst, src, call)
    st = stream_handle(stream, call)
    if coll == "fcollect":
        if d.nbytes != s.nbytes * n:
            raise GshmemArgumentError(
                "%s: dst must hold team-size (%d) times src's elements: dst %s has %d, src %s "
                "has %d" % (call, n, describe(d), d.count, describe(s), s.count))
        mine = d.ptr + _team_index(t, call) * s.nbytes
        if s.ptr != mine:
            _refuse_overlap(d, s, call, "in place, src must be this member's block of dst")
        rc = lib.gshmemx_fcollectmem_on_stream(t, d.ptr, s.ptr, s.nbytes, st)
    elif coll == "alltoall":
        same_shape(d, s, call)
        if s.count % n:
            raise GshmemArgumentError("%s: src's %d elements (%s) do not split into team-size "
                                      "(%d) equal blocks" % (call, s.count, describe(s), n))
        _refuse_overlap(d, s, call, "alltoall cannot run in place")
        rc = lib.gshmemx_alltoallmem_on_stream(t, d.ptr, s.ptr, s.nbytes // n, st)
    else:
        same_shape(d, s, call)
        try:
            r = int(root)
        except (TypeError, ValueError):
            raise GshmemArgumentError("%s: root %r is not an int" % (call, root))
        if not 0 <= r < n:
            raise GshmemArgumentError("%s: root %d is not a PE index of the team (which has %d "
                                      "PEs)" % (call, r, n))
        if d.ptr != s.ptr:
            _refuse_overlap(d, s, call, "pass the same tensor for an in-place broadcast, or "
                            "disjoint ones")
        rc = lib.gshmemx_broadcastmem_on_stream(t, d.ptr, s.ptr, s.nbytes, r, st)
    _lib.check(rc, "gshmemx_%smem_on_stream" % coll)


def _team_index(t, call):
    if t == 0:
        return _init.state.pe
    return _init.require(call).gshmem_team_my_pe(t)


def fcollect(team, dst, src, stream=None):
    """All-gather over `team`: member i's `src` lands in block i of every member's `dst`
    (team-size times src's elements)."""
    _move("fcollect", team, dst, src, stream, "gshmem.fcollect")


def allgather(output, input, *, team=TEAM_WORLD, stream=None):
    """fcollect() shaped like torch.distributed.all_gather_into_tensor."""
    _move("fcollect", team, output, input, stream, "gshmem.allgather")


def alltoall(team, dst, src, stream=None):
    """All-to-all over `team`: block j of member i's `src` lands in block i of member j's
    `dst` (both split into team-size equal blocks)."""
    _move("alltoall", team, dst, src, stream, "gshmem.alltoall")


def broadcast(team, dst, src, root=0, stream=None):
    """Every member's `dst` gets member `root`'s `src` (root is an index in the team)."""
    _move("broadcast", team, dst, src, stream, "gshmem.broadcast", root=root)


def barrier(team=TEAM_WORLD, stream=None):
    """Later work on `stream` starts once every member's puts enqueued before the barrier
    are complete and every member has reached it."""
    call = "gshmem.barrier"
    lib = _init.require(call)
    t = _team(team, call)
    st = stream_handle(stream, call)
    if t == 0:
        lib.gshmemx_barrier_all_on_stream(st)
        return
    _lib.check(lib.gshmemx_barrier_on_stream(t, st), "gshmemx_barrier_on_stream")


def barrier_all(stream=None):
    """barrier(TEAM_WORLD, stream)."""
    barrier(TEAM_WORLD, stream)


def sync(team=TEAM_WORLD, stream=None):
    """Later work on `stream` starts once every member has reached the sync (no quiet:
    cheaper than barrier where no puts are in flight)."""
    team_sync(team, stream, "gshmem.sync")


def sync_all(stream=None):
    """sync(TEAM_WORLD, stream)."""
    sync(TEAM_WORLD, stream)
