"""Element types and operators: which torch / numpy / cupy dtypes gshmem reduces (and under
which C TYPENAME), the reduction operators, signal operators and comparisons. Data-moving
calls (put, get, fcollect, alltoall, broadcast) move bytes and take any dtype."""

import enum

from ._lib import GshmemArgumentError

# dtype name (torch's without "torch.", numpy's .name): (C TYPENAME of the reductions, class)
REDUCIBLE = {
    "float16": ("half", "float"),
    "bfloat16": ("bfloat16", "float"),
    "float32": ("float", "float"),
    "float64": ("double", "float"),
    "int8": ("int8", "int"),
    "int16": ("int16", "int"),
    "int32": ("int32", "int"),
    "int64": ("int64", "int"),
    "uint8": ("uint8", "int"),
    "uint16": ("uint16", "int"),
    "uint32": ("uint32", "int"),
    "uint64": ("uint64", "int"),
    "bool": ("uint8", "bool"),
}
_ALIASES = {"half": "float16", "float": "float32", "double": "float64", "short": "int16",
            "int": "int32", "long": "int64"}

OPS = ("sum", "prod", "min", "max", "and", "or", "xor")
# the operators each class of type has (bool: logical, through uint8's bitwise and min/max)
OPS_OF_CLASS = {
    "float": ("sum", "prod", "min", "max"),
    "int": OPS,
    "bool": ("min", "max", "and", "or", "xor"),
}
# other spellings: torch.distributed.ReduceOp names, numpy-style names
_OP_ALIASES = {"product": "prod", "band": "and", "bor": "or", "bxor": "xor", "add": "sum",
               "minimum": "min", "maximum": "max", "avg": None, "premul_sum": None}


def dtype_name(dtype):
    """'float32' for torch.float32, numpy.float32, cupy.float32, 'float32', 'torch.float32'."""
    name = getattr(dtype, "name", None)          # numpy / cupy dtypes
    if not isinstance(name, str):
        name = str(dtype)                         # torch.dtype prints as 'torch.float32'
    name = name.rsplit(".", 1)[-1]
    return _ALIASES.get(name, name)


def reduce_typename(dtype, op, call):
    """The C TYPENAME for reducing `dtype` with `op`; GshmemArgumentError when gshmem has no
    such reduction."""
    name = dtype_name(dtype)
    entry = REDUCIBLE.get(name)
    if entry is None:
        raise GshmemArgumentError(
            "%s: dtype %s cannot be reduced by gshmem; reductions take %s (data-moving calls "
            "take any dtype)" % (call, name, ", ".join(sorted(REDUCIBLE))))
    typename, cls = entry
    if op not in OPS_OF_CLASS[cls]:
        hint = ""
        if cls == "bool" and op in ("sum", "prod"):
            hint = ": for bool use 'or' (any) or 'and' (all)"
        elif cls == "float":
            hint = ": bitwise operators take integer dtypes"
        raise GshmemArgumentError("%s: op '%s' is not defined for dtype %s%s (it takes %s)"
                                  % (call, op, name, hint, ", ".join(OPS_OF_CLASS[cls])))
    return typename


def op_name(op, call):
    """'sum' for 'sum', 'SUM', torch.distributed.ReduceOp.SUM, ..."""
    text = getattr(op, "name", None)
    if not isinstance(text, str):
        text = str(op)
    text = text.rsplit(".", 1)[-1].lower()
    text = _OP_ALIASES.get(text, text)
    if text not in OPS:
        raise GshmemArgumentError("%s: op %r is not one of %s" % (call, op, ", ".join(OPS)))
    return text


class SignalOp(enum.IntEnum):
    """What put_signal / signal_op do to the signal word (GSHMEM_SIGNAL_*)."""
    SET = 0
    ADD = 1


class Cmp(enum.IntEnum):
    """Comparisons of signal_wait (GSHMEM_CMP_*)."""
    EQ = 0
    NE = 1
    GT = 2
    LE = 3
    LT = 4
    GE = 5


def enum_value(value, kind, call, what):
    """SignalOp / Cmp from the enum, its int value, or its name ('add', 'ge', ...)."""
    if isinstance(value, str):
        try:
            return kind[value.upper()]
        except KeyError:
            pass
    else:
        try:
            return kind(int(value))
        except (ValueError, TypeError):
            pass
    raise GshmemArgumentError("%s: %s %r is not one of %s" % (
        call, what, value, ", ".join("%s.%s" % (kind.__name__, m.name) for m in kind)))
