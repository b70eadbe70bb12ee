"""Teams: TEAM_WORLD, TEAM_SHARED / TEAM_NODE (the PEs of this node), TEAM_SAME_MYPE_NODE,
and teams split from them (strided, 2-D). A Team is an int (gshmem_team_t) with methods;
plain ints are accepted wherever a team is. A PE outside a split team gets TEAM_INVALID, which
is false in a boolean context."""

import ctypes

from . import _init, _lib
from ._lib import GshmemArgumentError, GshmemError
from ._objects import stream_handle


class Team(int):
    """A gshmem team handle."""

    def __bool__(self):
        return int(self) >= 0

    def __repr__(self):
        return _NAMES.get(int(self), "Team(%d)" % int(self))

    def my_pe(self):
        """This PE's index in the team (-1 when not a member)."""
        return team_my_pe(self)

    def n_pes(self):
        """The team's number of PEs."""
        return team_n_pes(self)

    def translate_pe(self, pe, dest=None):
        """The index in `dest` (default TEAM_WORLD) of this team's PE `pe`, or -1."""
        return team_translate_pe(self, pe, TEAM_WORLD if dest is None else dest)

    def split_strided(self, start, stride, size):
        return team_split_strided(self, start, stride, size)

    def split_2d(self, xrange):
        return team_split_2d(self, xrange)

    def sync(self, stream=None):
        """A barrier of the team's PEs on `stream` (gshmemx_team_sync_on_stream)."""
        team_sync(self, stream)

    def destroy(self):
        team_destroy(self)


TEAM_INVALID = Team(-1)
TEAM_WORLD = Team(0)
TEAM_SHARED = Team(1)
TEAM_NODE = Team(2)
TEAM_SAME_MYPE_NODE = Team(3)
_NAMES = {-1: "TEAM_INVALID", 0: "TEAM_WORLD", 1: "TEAM_SHARED", 2: "TEAM_NODE",
          3: "TEAM_SAME_MYPE_NODE"}
_PREDEFINED = (0, 1, 2, 3)
_sizes = {}          # team -> n_pes (a team's size never changes while it exists)


def _team(team, call):
    try:
        t = int(team)
    except (TypeError, ValueError):
        raise GshmemArgumentError("%s: team %r is not a gshmem team" % (call, team))
    if t < 0:
        raise GshmemArgumentError("%s: team is TEAM_INVALID (this PE is not a member of the "
                                  "team the split made)" % call)
    return t


def team_n_pes(team, call="gshmem.team_n_pes"):
    t = _team(team, call)
    n = _sizes.get(t)
    if n is None:
        lib = _init.require(call)
        n = lib.gshmem_team_n_pes(t)
        if n <= 0:
            raise GshmemArgumentError("%s: team %d does not exist (destroyed, or never made)"
                                      % (call, t))
        _sizes[t] = n
    return n


def team_my_pe(team):
    lib = _init.require("gshmem.team_my_pe")
    return lib.gshmem_team_my_pe(_team(team, "gshmem.team_my_pe"))


def team_translate_pe(src_team, src_pe, dest_team):
    call = "gshmem.team_translate_pe"
    lib = _init.require(call)
    return lib.gshmem_team_translate_pe(_team(src_team, call), int(src_pe),
                                        _team(dest_team, call))


def team_split_strided(parent, start, stride, size):
    """Collective over `parent`: the team of parent's PEs start, start+stride, ...
    (size of them). Returns the new Team, or TEAM_INVALID on PEs outside it."""
    call = "gshmem.team_split_strided"
    lib = _init.require(call)
    new = ctypes.c_int32(-1)
    rc = lib.gshmem_team_split_strided(_team(parent, call), int(start), int(stride), int(size),
                                       None, 0, ctypes.byref(new))
    if rc:
        raise GshmemError("%s(start=%d, stride=%d, size=%d) failed (status %d); gshmem's "
                          "message on stderr says why" % (call, start, stride, size, rc))
    return Team(new.value)


def team_split_2d(parent, xrange):
    """Collective over `parent`: parent's PEs as rows of `xrange`; returns (x team: my row,
    y team: my column)."""
    call = "gshmem.team_split_2d"
    lib = _init.require(call)
    x, y = ctypes.c_int32(-1), ctypes.c_int32(-1)
    rc = lib.gshmem_team_split_2d(_team(parent, call), int(xrange), None, 0, ctypes.byref(x),
                                  None, 0, ctypes.byref(y))
    if rc:
        raise GshmemError("%s(xrange=%d) failed (status %d); gshmem's message on stderr says "
                          "why" % (call, xrange, rc))
    return Team(x.value), Team(y.value)


def team_destroy(team):
    """Collective over the team's PEs. The predefined teams cannot be destroyed."""
    call = "gshmem.team_destroy"
    lib = _init.require(call)
    t = _team(team, call)
    if t in _PREDEFINED:
        raise GshmemArgumentError("%s: %r is predefined and cannot be destroyed"
                                  % (call, Team(t)))
    _sizes.pop(t, None)
    lib.gshmem_team_destroy(t)


def team_sync(team, stream=None, call="gshmem.sync"):
    """Later work on `stream` starts once every member of `team` has reached the sync
    (gshmemx_team_sync_on_stream; gshmem.sync and Team.sync)."""
    lib = _init.require(call)
    _lib.check(lib.gshmemx_team_sync_on_stream(_team(team, call), stream_handle(stream, call)),
               "gshmemx_team_sync_on_stream")


@_init.at_finalize
def forget_all():
    _sizes.clear()
