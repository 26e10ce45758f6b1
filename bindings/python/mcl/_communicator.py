"""Communicator and Work: the Python face of mcl's collectives.

Buffers are never copied: every operation hands the memory of its arguments
to mcl as it is. An argument may be any object with the buffer protocol
(NumPy arrays, memoryview, bytearray, array.array) or with ``__dlpack__``
(a CPU torch tensor, for one). It must be contiguous; outputs must also be
writable. Elements are taken in memory order, whatever the shape.
"""

from __future__ import annotations

from typing import Any, Optional, Union

from . import _mcl
from ._dtypes import dtype_name, numpy_dtype

# An object with the buffer protocol or __dlpack__ (typing has no name for
# either before Python 3.12's collections.abc.Buffer).
Array = Any
# What an operation returns: its output, or a Work with async_op=True.
Result = Union[Any, "Work"]


def _allocate(x: Array, dtype: Optional[str], shape: Optional[tuple]) -> Any:
    """A new array for a result, of x's kind (a torch tensor for a torch
    tensor, else NumPy) and dtype: x's shape and memory order, or the given
    shape (C order)."""
    import numpy
    if isinstance(x, numpy.ndarray):
        if shape is None:
            return numpy.empty_like(x)
        if not x.flags.c_contiguous:
            # Elements go in memory order: a Fortran-ordered x has no
            # C-ordered result of another shape that matches it.
            raise _mcl.invalid_argument(
                "x is Fortran-ordered: pass out=, or a C-ordered x "
                "(numpy.ascontiguousarray)")
        return numpy.empty(shape, dtype=x.dtype)
    if type(x).__module__.startswith("torch") and dtype is None:
        import torch
        if isinstance(x, torch.Tensor):
            return torch.empty(x.shape if shape is None else shape,
                               dtype=x.dtype, device=x.device)
    info = _mcl.describe(x, dtype)
    np_type = numpy_dtype(info.type_name)
    if np_type is None:
        raise _mcl.invalid_argument(
            f"out=None: NumPy has no {info.type_name} to hold the result "
            "(install ml_dtypes, or pass out=)")
    return numpy.empty(info.shape if shape is None else shape,
                       dtype=np_type)


def _shape_of(x, dtype):
    import numpy
    if isinstance(x, numpy.ndarray) or (
            dtype is None and type(x).__module__.startswith("torch")):
        return tuple(x.shape)
    return _mcl.describe(x, dtype).shape


class Work:
    """An operation started with ``async_op=True``. It runs in the
    background, after every operation issued before it on the same
    communicator. Keep its buffers alive and unchanged until it completes
    (the Work holds a reference to them)."""

    def __init__(self, native: _mcl.Work, result: Any) -> None:
        self._native = native
        self._result = result

    def is_completed(self) -> bool:
        """True once the operation finished, successfully or not."""
        return self._native.is_completed()

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Waits until the operation finishes, or `timeout` seconds pass
        (None: as long as it takes; the communicator's timeout bounds it).
        Returns True when it finished, False on timeout. Raises the
        operation's mcl.Error if it failed. Ctrl-C aborts the communicator
        and raises KeyboardInterrupt."""
        return self._native.wait(timeout)

    def result(self) -> Any:
        """Waits for the operation and returns its output (None for
        operations with none: send, barrier, reduce off the root)."""
        self._native.wait(None)
        return self._result

    def __repr__(self) -> str:
        state = "completed" if self.is_completed() else "running"
        return f"<mcl.Work {self._native.name} {state}>"


class Communicator:
    """A group of ranks that run collectives together. Make one with
    mcl.init or mcl.init_from_env; close it with close() (or use it as a
    context manager). Every rank must issue the same collectives in the
    same order.

    Results go to `out` when it is given (it may be the input itself: the
    operation then runs in place), else to a new array of the input's dtype
    that the call returns: a torch tensor for a torch tensor, else a NumPy
    array. With ``async_op=True`` a call returns a
    Work instead. `dtype` names the element type when the buffer's own does
    not say it, for instance "bfloat16" for uint16 arrays that hold
    bfloat16 bits; reductions need one of mcl's types (int8, uint8, int32,
    uint32, int64, uint64, float16, bfloat16, float32, float64,
    float8_e4m3, float8_e5m2; complex64 and complex128 for sum and avg),
    other operations move any type.
    """

    def __init__(self, native: _mcl.Comm) -> None:
        self._native = native

    # -- identity ----------------------------------------------------------

    @property
    def rank(self) -> int:
        """This process's rank, from 0."""
        return self._native.rank

    @property
    def size(self) -> int:
        """The number of ranks."""
        return self._native.size

    @property
    def closed(self) -> bool:
        """True after close() or abort()."""
        return self._native.closed

    def __repr__(self) -> str:
        if self.closed:
            return "<mcl.Communicator closed>"
        return f"<mcl.Communicator rank {self.rank} of {self.size}>"

    # -- collectives -------------------------------------------------------

    def all_reduce(self, x: Array, op: str = "sum", out: Optional[Array] = None,
                   *, dtype: Optional[str] = None,
                   async_op: bool = False) -> Result:
        """Reduces x element-wise across ranks with `op` ("sum", "prod",
        "max", "min" or "avg"); every rank gets the result, shaped as x."""
        dtype = dtype_name(dtype)
        if out is None:
            out = _allocate(x, dtype, None)
        work = self._native.all_reduce(x, out, op, dtype, async_op)
        return self._finish(work, out)

    def all_gather(self, x: Array, out: Optional[Array] = None, *,
                   dtype: Optional[str] = None,
                   async_op: bool = False) -> Result:
        """Concatenates every rank's x in rank order; every rank gets the
        result, shaped (size, *x.shape) when mcl allocates it. In place:
        x is out's block for this rank (``out[rank]``)."""
        dtype = dtype_name(dtype)
        if out is None:
            out = _allocate(x, dtype, (self.size,) + tuple(
                _shape_of(x, dtype)))
        work = self._native.all_gather(x, out, dtype, async_op)
        return self._finish(work, out)

    def broadcast(self, x: Array, root: int = 0, out: Optional[Array] = None,
                  *, dtype: Optional[str] = None,
                  async_op: bool = False) -> Result:
        """Every rank gets the root's x. Other ranks' x gives only the shape
        and type when mcl allocates the result; ``out=x`` fills x in
        place, as MPI and torch.distributed do."""
        dtype = dtype_name(dtype)
        if out is None:
            out = _allocate(x, dtype, None)
        work = self._native.broadcast(x, out, root, dtype, async_op)
        return self._finish(work, out)

    def reduce(self, x: Array, root: int = 0, op: str = "sum",
               out: Optional[Array] = None, *, dtype: Optional[str] = None,
               async_op: bool = False) -> Result:
        """Reduces x element-wise across ranks into the root's result. The
        root gets it; other ranks get None (their `out` is left as it
        is)."""
        dtype = dtype_name(dtype)
        if self._native.rank != root:
            out = None
        elif out is None:
            out = _allocate(x, dtype, None)
        work = self._native.reduce(x, out, root, op, dtype, async_op)
        return self._finish(work, out)

    def reduce_scatter(self, x: Array, op: str = "sum",
                       out: Optional[Array] = None, *,
                       dtype: Optional[str] = None,
                       async_op: bool = False) -> Result:
        """Reduces x element-wise across ranks; rank r gets block r of the
        result (x holds size equal blocks). mcl allocates x.shape[0] / size
        rows when x's first dimension divides, else a flat block."""
        dtype = dtype_name(dtype)
        if out is None:
            out = _allocate(x, dtype, self._block_shape(x, dtype))
        work = self._native.reduce_scatter(x, out, op, dtype, async_op)
        return self._finish(work, out)

    def all_to_all(self, x: Array, out: Optional[Array] = None, *,
                   dtype: Optional[str] = None,
                   async_op: bool = False) -> Result:
        """x holds size equal blocks: block j goes to rank j, and block i of
        the result comes from rank i. The result is shaped as x."""
        dtype = dtype_name(dtype)
        if out is None:
            out = _allocate(x, dtype, None)
        work = self._native.all_to_all(x, out, dtype, async_op)
        return self._finish(work, out)

    def barrier(self, *, async_op: bool = False) -> Optional[Work]:
        """Returns once every rank has called it."""
        return self._finish(self._native.barrier(async_op), None)

    # -- point-to-point ----------------------------------------------------

    def send(self, x: Array, peer: int, *, dtype: Optional[str] = None,
             async_op: bool = False) -> Optional[Work]:
        """Sends x to rank `peer`; it matches that peer's recv of the same
        size, in order. Two ranks that both send to each other before they
        receive wait on each other once a message outgrows the link's
        buffers (512 KiB on shared memory): exchange with sendrecv."""
        dtype = dtype_name(dtype)
        work = self._native.send(x, peer, dtype, async_op)
        return self._finish(work, None)

    def recv(self, out: Array, peer: int, *, dtype: Optional[str] = None,
             async_op: bool = False) -> Result:
        """Receives from rank `peer` into `out` and returns it."""
        dtype = dtype_name(dtype)
        work = self._native.recv(out, peer, dtype,
                                 async_op)
        return self._finish(work, out)

    def sendrecv(self, x: Array, dest: int, out: Array, source: int, *,
                 dtype: Optional[str] = None,
                 async_op: bool = False) -> Result:
        """Sends x to rank `dest` and receives from rank `source` into
        `out`, both at once (MPI_Sendrecv): the way to exchange with
        neighbours. A send and a recv called one after the other wait on
        each other once a message outgrows the link's buffers (512 KiB on
        shared memory), when both sides send first."""
        dtype = dtype_name(dtype)
        work = self._native.sendrecv(x, dest, out, source, dtype, async_op)
        return self._finish(work, out)

    # -- lifetime ----------------------------------------------------------

    def split(self, color: Optional[int],
              key: Optional[int] = None) -> Optional[Communicator]:
        """Collective: ranks that pass the same color (>= 0) form a new
        Communicator, ranked by key (default: their rank here). A rank
        passing color None (or -1) takes part and gets None."""
        color = -1 if color is None else color
        key = self.rank if key is None else key
        native = self._native.split(color, key)
        return None if native is None else Communicator(native)

    def abort(self) -> None:
        """Stops every operation on the communicator at once, without
        waiting for peers, and frees it. Waiting calls (other threads,
        async work) raise mcl.RemoteError."""
        self._native.abort()

    def close(self) -> None:
        """Waits for the communicator's operations, then frees it.
        Closing twice does nothing."""
        self._native.close()

    def __enter__(self) -> Communicator:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        # An exception may mean the ranks no longer agree: do not wait on
        # work that may never finish.
        if exc_type is None:
            self.close()
        else:
            self.abort()
        return False

    # -- inspection --------------------------------------------------------

    def topology(self) -> dict:
        """The cluster this communicator was built on (hosts, cables, the
        path between each pair of ranks), as a dict; mclCommGetTopology's
        JSON."""
        import json
        return json.loads(self._native.topology())

    def algorithm(self, collective: str, count: int,
                  dtype: str = "float32") -> str:
        """The algorithm mcl picks for `collective` ("all_reduce",
        "all_gather", "broadcast", "reduce", "reduce_scatter",
        "all_to_all") of `count` elements of `dtype`."""
        return self._native.algorithm(collective, count, dtype)

    def async_error(self) -> Optional[BaseException]:
        """The error that broke the communicator, as an mcl.Error (not
        raised), or None while it is healthy."""
        return self._native.async_error()

    # -- helpers -----------------------------------------------------------

    def _finish(self, work, out):
        if work is None:
            return out
        return Work(work, out)

    def _block_shape(self, x, dtype):
        shape = tuple(_shape_of(x, dtype))
        if len(shape) >= 1 and shape[0] % self.size == 0:
            return (shape[0] // self.size,) + shape[1:]
        total = 1
        for extent in shape:
            total *= extent
        return (total // self.size,)
