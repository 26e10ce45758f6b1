"""mcl: collective communication for Mac clusters (Thunderbolt RDMA, TCP,
shared memory), from Python.

    import mcl
    uid = mcl.UniqueId()              # on one process; hand str(uid) out
    comm = mcl.init(rank, size, uid)  # on every rank
    total = comm.all_reduce(numpy_array)
    comm.close()

Or, under a launcher (mpirun, torchrun, mlx.launch, MCL_RANK and
MCL_WORLD_SIZE ...): ``comm = mcl.init_from_env()``.
"""

from __future__ import annotations

from typing import Optional, Sequence, Union

from . import _mcl
from ._communicator import Communicator, Work
from ._errors import (Error, InternalError, InvalidArgumentError,
                      InvalidUsageError, RemoteError, SystemCallError,
                      TimeoutError)
from ._errors import BY_CODE as _ERRORS_BY_CODE

_mcl.set_error_classes(Error, _ERRORS_BY_CODE)

__all__ = [
    "Communicator", "Work", "UniqueId", "init", "init_from_env", "version",
    "params", "empty", "zeros", "Error", "SystemCallError", "InternalError",
    "InvalidArgumentError", "InvalidUsageError", "RemoteError",
    "TimeoutError", "TopologyWarning",
]

__version__ = _mcl.version_string()


def version() -> str:
    """The mcl library's version, "major.minor.patch"."""
    return _mcl.version_string()


def params() -> dict[str, tuple[str, str]]:
    """mcl's tunables, read from the environment: {name: (default, doc)}."""
    return {name: (default, doc) for name, default, doc in _mcl.params()}


class UniqueId:
    """The rendezvous of one communicator: the root's addresses and a
    random secret. ``UniqueId()`` makes a new one and starts the rendezvous
    in this process (keep it running until every rank joined); hand
    ``str(uid)`` (or the pickled UniqueId) to every rank. Treat it as a
    password: whoever holds it can join."""

    def __init__(self, text: Optional[str] = None) -> None:
        self._text = _mcl.new_unique_id() if text is None else \
            _mcl.check_unique_id(text)

    @classmethod
    def from_string(cls, text: str) -> UniqueId:
        """The id whose str() is `text`."""
        return cls(text)

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        # The secret stays out of logs and tracebacks.
        return "<mcl.UniqueId>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UniqueId) and other._text == self._text

    def __hash__(self) -> int:
        return hash(self._text)

    def __reduce__(self):
        return (UniqueId.from_string, (self._text,))


class TopologyWarning(UserWarning):
    """A cabling error the doctor found at init (what `mcl-perf topo
    --check` reports as ERROR): the job runs, slower than its cables allow,
    or may fail. Rank 0 warns once per error; ``-W
    error::mcl.TopologyWarning`` makes them exceptions."""


def _warn_topology_errors(comm: Communicator) -> Communicator:
    """The doctor's errors, on rank 0, at init: the job's log shows them
    (the library's WARN lines can be turned off; these come through
    Python's warnings, where a framework collects them)."""
    if comm.rank != 0 or comm.size < 2:
        return comm
    import warnings
    for finding in comm.topology().get("findings", []):
        if finding.get("severity") == "error":
            warnings.warn(f"topology error: {finding.get('what')}. "
                          f"Fix: {finding.get('fix')}", TopologyWarning,
                          stacklevel=3)
    return comm


def _config(timeout, transport, name, algorithms):
    return dict(timeout=timeout, transport=transport, name=name,
                algorithms=algorithms)


def init(rank: int, size: int, unique_id: Union[UniqueId, str], *,
         timeout: Optional[int] = None, transport: Optional[str] = None,
         name: Optional[str] = None,
         algorithms: Optional[str] = None) -> Communicator:
    """Joins communicator `unique_id` (a UniqueId or its string) as `rank`
    of `size`; every rank calls it. timeout: seconds any wait may last
    (default MCL_TIMEOUT, 300). transport: "auto" or "shm". name: shown in
    log messages. algorithms: forced algorithms, MCL_ALGO's syntax.
    Ctrl-C while it waits for the other ranks raises KeyboardInterrupt."""
    text = str(unique_id) if isinstance(unique_id, UniqueId) else \
        _mcl.check_unique_id(unique_id)
    return _warn_topology_errors(Communicator(_mcl.Comm.init_rank(
        size, text, rank, **_config(timeout, transport, name, algorithms))))


def init_from_env(*, timeout: Optional[int] = None,
                  transport: Optional[str] = None, name: Optional[str] = None,
                  algorithms: Optional[str] = None) -> Communicator:
    """Joins the job a launcher started: rank and size from MCL_RANK and
    MCL_WORLD_SIZE, Open MPI, PMI, SLURM, torchrun or mlx.launch; the
    rendezvous from MCL_UNIQUE_ID, MCL_ROOT or the launcher (see
    mclCommInitFromEnv in mcl.h)."""
    return _warn_topology_errors(Communicator(_mcl.Comm.init_from_env(
        **_config(timeout, transport, name, algorithms))))


def empty(shape: Union[int, Sequence[int]], dtype: object = "float32"):
    """A NumPy array in memory same-host ranks can map (mclMemAlloc):
    collectives whose every buffer is such memory run in place, without
    copies through the rings, once they reach MCL_ZERO_COPY_MIN_BYTES. The
    memory goes when the last array using it does. Its contents are
    zeros."""
    import numpy
    import operator
    dtype = numpy.dtype(dtype)
    shape = (shape,) if not hasattr(shape, "__iter__") else tuple(shape)
    sizes = []
    for extent in shape:
        try:
            size = operator.index(extent)
        except TypeError:
            size = -1
        if size < 0:
            raise _mcl.invalid_argument(
                f"shape: {extent!r} is not a size (an int >= 0)")
        sizes.append(size)
    shape = tuple(sizes)
    count = 1
    for size in sizes:
        count *= size
    memory = _mcl.SharedMemory(count * dtype.itemsize)
    return numpy.frombuffer(memory, dtype=dtype, count=count).reshape(shape)


zeros = empty
