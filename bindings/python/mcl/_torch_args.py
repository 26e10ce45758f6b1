"""What mcl.torch checks in the arguments c10d hands a process group, and
how it turns mcl's errors into torch's: every tensor is checked before
anything is sent, and a failure of the communication raises
torch.distributed's DistBackendError (RuntimeError on PyTorch 1.x)."""

from __future__ import annotations

import functools
from typing import Any, Callable, List, Sequence

import torch
import torch.distributed as dist
from torch._C import _distributed_c10d as _c10d

import mcl

_OPS = {
    _c10d.ReduceOp.RedOpType.SUM: "sum",
    _c10d.ReduceOp.RedOpType.PRODUCT: "prod",
    _c10d.ReduceOp.RedOpType.MIN: "min",
    _c10d.ReduceOp.RedOpType.MAX: "max",
    _c10d.ReduceOp.RedOpType.AVG: "avg",
}

# c10d passes tags as a C++ int.
TAG_MIN, TAG_MAX = -(2**31), 2**31 - 1


def op_name(reduce_op) -> str:
    op = getattr(reduce_op, "op", reduce_op)
    if op not in _OPS:
        raise ValueError(
            f"mcl backend: reduce op {op} is not supported (sum, product, "
            "min, max, avg)")
    return _OPS[op]


def cpu(t, what: str):
    """`t` when mcl can move it: a CPU tensor. Any other device is refused
    before anything is sent, naming the device and the fix."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"mcl backend: {what}: expected a tensor, got "
                        f"{type(t).__name__}")
    if t.device.type != "cpu":
        raise ValueError(
            f"mcl backend: {what}: the tensor is on {t.device}; mcl moves "
            "CPU tensors only. Pass tensor.cpu() and copy the result back "
            "(on a Mac, CPU and GPU share memory, so the copy is cheap)")
    return t


def cpu_all(tensors: Sequence[Any], what: str) -> List[Any]:
    """Every tensor of a list checked by `cpu`, the index named."""
    return [cpu(t, f"{what}[{i}]") for i, t in enumerate(tensors)]


def one(tensors: List[Any], what: str):
    """c10d passes a list per call (one tensor per device in the days of
    several GPUs per process); mcl takes one CPU tensor."""
    if len(tensors) != 1:
        raise ValueError(f"mcl backend: {what} takes one tensor per process, "
                         f"got {len(tensors)}")
    return cpu(tensors[0], what)


def one_list(lists: List[Any], what: str) -> List[Any]:
    """The one list of tensors (one per rank) of a gather-like call."""
    if len(lists) != 1:
        raise ValueError(f"mcl backend: {what} takes one list of tensors per "
                         f"process, got {len(lists)}")
    return lists[0]


def check_count(tensors: Sequence[Any], size: int, what: str) -> None:
    if len(tensors) != size:
        raise ValueError(f"mcl backend: {what} has {len(tensors)} "
                         f"tensors; the group has {size} ranks")


def check_pairs(outputs: Sequence[Any], inputs: Sequence[Any],
                what: str) -> None:
    """The two lists of a coalesced call pair up one to one."""
    if len(outputs) != len(inputs):
        raise ValueError(
            f"mcl backend: {what}: {len(outputs)} output tensors for "
            f"{len(inputs)} inputs; the lists pair up one to one")
    if not inputs:
        raise ValueError(f"mcl backend: {what}: no tensors")


def check_same_dtype(tensors: Sequence[Any], what: str) -> None:
    """Coalesced reductions reduce one element type."""
    for i, t in enumerate(tensors):
        if t.dtype != tensors[0].dtype:
            raise ValueError(
                f"mcl backend: {what}[{i}] is {t.dtype} and {what}[0] is "
                f"{tensors[0].dtype}; a coalesced reduction takes one type")


def check_tag(tag: int) -> None:
    if not isinstance(tag, int) or not TAG_MIN <= tag <= TAG_MAX:
        raise ValueError(f"mcl backend: tag {tag!r} is not a 32-bit integer")


class Contiguous:
    """A tensor mcl can read and write in place: the tensor itself when it
    is a contiguous CPU tensor, else a contiguous host copy written back
    by ``finish`` (on the tensor's device)."""

    def __init__(self, t) -> None:
        self.target = t
        same = t.device.type == "cpu" and t.is_contiguous()
        self.buffer = t if same else t.to("cpu").contiguous()

    def finish(self) -> None:
        if self.buffer is not self.target:
            self.target.copy_(self.buffer)


def as_bytes(t):
    """A contiguous tensor's bytes, as a flat uint8 tensor (no copy)."""
    return t.reshape(-1).view(torch.uint8)


# -- errors ------------------------------------------------------------------

_DIST_BACKEND_ERROR = getattr(dist, "DistBackendError", RuntimeError)


class BackendError(_DIST_BACKEND_ERROR):
    """A communication of the "mcl" process group failed (a peer died or
    left, a timeout, the system): torch.distributed's DistBackendError on
    PyTorch 2.x, RuntimeError on 1.x. ``mcl_error`` is mcl's exception
    (its ``code`` the C API's result code)."""

    def __init__(self, message: str, mcl_error: Exception = None) -> None:
        super().__init__(message)
        self.mcl_error = mcl_error


def backend_error(error: BaseException, what: str,
                  timeout_seconds: float) -> BaseException:
    """The exception torch's caller sees for `error`, raised by mcl in
    operation `what`: mcl's own for bad arguments (they are ValueErrors)
    and anything not mcl's; else a BackendError that reads as torch's
    ("Timed out ..." for a timeout)."""
    if not isinstance(error, mcl.Error) or isinstance(
            error, mcl.InvalidArgumentError):
        return error
    if isinstance(error, mcl.TimeoutError):
        message = (f"mcl backend: {what}: Timed out after "
                   f"{timeout_seconds:g} s (the group's timeout): {error}")
    else:
        message = f"mcl backend: {what} failed: {error}"
    translated = BackendError(message, error)
    translated.__cause__ = error
    return translated


def translating_errors(what: str) -> Callable:
    """Decorates a process-group method: mcl's errors raised while it runs
    leave it as `backend_error` makes them."""

    def decorate(method: Callable) -> Callable:
        @functools.wraps(method)
        def wrapper(self, *args, **kwargs):
            try:
                return method(self, *args, **kwargs)
            except mcl.Error as e:
                raise backend_error(e, what, self.timeout_seconds) from e
        return wrapper
    return decorate
