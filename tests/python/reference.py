"""The element types the tests move and reduce, the inputs every rank makes
from its rank alone (so any rank can compute every other rank's input), and
NumPy references for the results.

Reduction inputs are small integers (times 0.5 for floats): every sum and
product is exact in every type, so results compare bit for bit whatever the
order mcl folds them in. Only avg rounds, and mcl.h says how: integers
truncate, float64 divides in fp64, other floats divide once in fp32 and
round once to their type; the references do the same.
"""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ElementType:
    name: str              # mcl's name, for messages
    storage: np.dtype      # the NumPy dtype that holds it
    dtype_arg: str = None  # what to pass as dtype= (None: the array says)
    kind: str = "other"    # "int", "uint", "float", "complex" or "other"


def _t(name, kind, storage=None, dtype_arg=None):
    return ElementType(name, np.dtype(storage or name), dtype_arg, kind)


# Every type mcl reduces (float8 aside: see the float8 scenario).
REDUCIBLE = [
    _t("int8", "int"), _t("uint8", "uint"), _t("int32", "int"),
    _t("uint32", "uint"), _t("int64", "int"), _t("uint64", "uint"),
    _t("float16", "float"), _t("float32", "float"), _t("float64", "float"),
    _t("bfloat16", "float", storage="uint16", dtype_arg="bfloat16"),
    _t("complex64", "complex"), _t("complex128", "complex"),
]

# Moved (gathered, broadcast, exchanged, sent) but not reduced by mcl.
MOVE_ONLY = [
    _t("bool", "other"), _t("int16", "other"), _t("uint16", "other"),
    ElementType("structured", np.dtype([("id", "<i4"), ("value", "<f8")])),
    ElementType("bytes3", np.dtype("S3")),  # an odd item size
]

MOVABLE = REDUCIBLE + MOVE_ONLY

REDUCE_OPS = ("sum", "prod", "max", "min", "avg")


def ops_for(element_type):
    """The ops mcl reduces `element_type` with: complex only sums."""
    if element_type.kind == "complex":
        return ("sum", "avg")
    return REDUCE_OPS


# -- bfloat16, which NumPy lacks: bits in uint16 -----------------------------

def bfloat16_bits(values):
    """float32 values -> bfloat16 bits, rounded to nearest even (no NaNs)."""
    bits = np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)
    sixteen, one = np.uint64(16), np.uint64(1)  # no mixing with signed ints
    rounding = np.uint64(0x7FFF) + ((bits >> sixteen) & one)
    return ((bits + rounding) >> sixteen).astype(np.uint16)


def bfloat16_values(bits):
    """bfloat16 bits (uint16) -> float32 values, exactly."""
    wide = np.asarray(bits, np.uint16).astype(np.uint32)
    return (wide << np.uint32(16)).view(np.float32)


# -- reduction inputs and results ---------------------------------------------

def _real_input(kind, op, rank, count):
    """Exact values (float64) of a rank's input: small integers, signed
    unless `kind` is unsigned, halves for floats; products stay small."""
    i = np.arange(count)
    if op == "prod":
        values = (i + rank * 5) % 3 + 1
        if kind != "uint":
            values = np.where((i * 3 + rank) % 4 == 0, -values, values)
    else:
        values = (i + rank * 7) % 13
        if kind != "uint":
            values = values - 6
    values = values.astype(np.float64)
    if kind in ("float", "complex") and op != "prod":
        values *= 0.5
    return values


def reduction_input(element_type, op, rank, count):
    """Rank `rank`'s input for reducing `count` elements with `op`."""
    t = element_type
    if t.kind == "complex":
        real = _real_input(t.kind, op, rank, count)
        imag = _real_input(t.kind, op, rank + 5, count)
        return (real + 1j * imag).astype(t.storage)
    values = _real_input(t.kind, op, rank, count)
    if t.name == "bfloat16":
        return bfloat16_bits(values)
    return values.astype(t.storage)


def _exact(element_type, array):
    """An input's values in a type that holds them and their sums exactly."""
    t = element_type
    if t.name == "bfloat16":
        return bfloat16_values(array).astype(np.float64)
    if t.kind in ("int", "uint"):
        return array.astype(np.int64)
    if t.kind == "complex":
        return array.astype(np.complex128)
    return array.astype(np.float64)


def _divide_once(element_type, total, n):
    """avg's division, as mcl.h says each type does it."""
    t = element_type
    if t.kind in ("int", "uint"):
        return np.sign(total) * (np.abs(total) // n)  # C: toward zero
    if t.name == "float64":
        return total / n
    if t.name == "complex128":  # two float64 divisions
        return (total.real / n) + 1j * (total.imag / n)
    if t.kind == "complex":  # complex64: two float32 divisions
        real = total.real.astype(np.float32) / np.float32(n)
        imag = total.imag.astype(np.float32) / np.float32(n)
        return real.astype(np.float64) + 1j * imag.astype(np.float64)
    return (total.astype(np.float32) / np.float32(n)).astype(np.float64)


def _to_storage(element_type, values):
    t = element_type
    if t.name == "bfloat16":
        return bfloat16_bits(values.astype(np.float32))
    if t.name == "float16":
        # float64 -> float32 -> float16 is exact for sums, and for avg
        # repeats mcl's fp32 quotient rounded once to half.
        return values.astype(np.float32).astype(np.float16)
    return values.astype(t.storage)


def expected_reduction(element_type, op, inputs):
    """The reduction of every rank's input (a list, rank order) by `op`."""
    stack = np.stack([_exact(element_type, x) for x in inputs])
    if op == "sum":
        values = stack.sum(axis=0)
    elif op == "prod":
        values = stack.prod(axis=0)
    elif op == "max":
        values = stack.max(axis=0)
    elif op == "min":
        values = stack.min(axis=0)
    elif op == "avg":
        values = _divide_once(element_type, stack.sum(axis=0), len(inputs))
    else:
        raise ValueError(f"unknown op {op}")
    return _to_storage(element_type, values).reshape(inputs[0].shape)


# -- payloads for operations that only move data ------------------------------

def payload(element_type, rank, shape, salt=0):
    """Rank `rank`'s data for a moving operation: bytes that differ per rank,
    position and `salt`, read as `element_type` (any bit pattern will do,
    NaNs included, since nothing computes on it; bools stay 0 or 1)."""
    count = int(np.prod(shape, dtype=np.int64))
    nbytes = count * element_type.storage.itemsize
    pattern = (np.arange(nbytes, dtype=np.int64) * 31 + rank * 17 +
               salt * 7 + 3) % 251
    if element_type.storage == np.bool_:
        pattern %= 2
    return pattern.astype(np.uint8).view(element_type.storage).reshape(shape)


def same_bits(a, b):
    """True when a and b hold the same bytes (NaN payloads included)."""
    return (np.ascontiguousarray(a).tobytes() ==
            np.ascontiguousarray(b).tobytes())
