"""The C++ backend of mcl.torch (mcl._torch_backend, built against the
installed torch where its headers were there): how a group is made on it,
and the Python half it calls for sends, receives and the monitored
barrier (the tag-matching engine of _torch_p2p), with tensors of other
devices staged through host copies.

Where the module is missing or does not load (built for another torch),
mcl.torch makes its Python backend instead and says so once.
MCL_TORCH_BACKEND=python asks for the Python one (to compare the two)."""

from __future__ import annotations

import datetime
import itertools
import json
import os
import threading
import warnings
from typing import Optional

import mcl

from ._torch_args import Contiguous, check_tag
from ._torch_barrier import monitored_barrier as _monitored_barrier
from ._torch_p2p import P2PEngine
from ._torch_store_id import meet
from ._torch_work import in_background

try:
    from . import _torch_backend as native
    _WHY_NOT = None
except ImportError as e:  # pragma: no cover - depends on the install
    native = None
    _WHY_NOT = str(e)

_said = threading.Lock()
_said_python = False


def why_not_native() -> Optional[str]:
    """Why groups get the Python backend, or None when they get C++'s."""
    if os.environ.get("MCL_TORCH_BACKEND", "").lower() == "python":
        return "MCL_TORCH_BACKEND=python"
    if native is None:
        return ("mcl._torch_backend is not there or does not load (" +
                str(_WHY_NOT) + "); build mcl where torch has its C++ "
                "headers (Debian: libtorch-dev; pip's torch has them)")
    return None


def say_python_backend_once(reason: str) -> None:
    global _said_python
    with _said:
        if _said_python:
            return
        _said_python = True
    if reason != "MCL_TORCH_BACKEND=python":
        warnings.warn("mcl.torch: using the Python backend (30-50 us a "
                      f"call): {reason}", RuntimeWarning, stacklevel=4)


class NativeHelper:
    """What the C++ backend asks of Python: sends and receives (matched by
    tag, from any rank; _torch_p2p), the monitored barrier over the store,
    and closing them."""

    def __init__(self, store, seal, rank: int, size: int,
                 timeout_seconds: int) -> None:
        self._store, self._rank, self._size = store, rank, size
        self._timeout_seconds = timeout_seconds
        self._barriers = itertools.count()
        self._p2p = P2PEngine(store, seal, rank, size, timeout_seconds)

    def send(self, tensor, dst: int, tag: int):
        check_tag(tag)
        payload = tensor.to("cpu").contiguous()
        return self._p2p.send(payload, dst, tag, waits=not in_background())

    def recv(self, tensor, src: Optional[int], tag: int):
        check_tag(tag)
        out = Contiguous(tensor)
        return self._p2p.recv(out.buffer, src, tag, waits=not in_background(),
                              after=out.finish)

    def monitored_barrier(self, timeout: Optional[datetime.timedelta],
                          wait_all_ranks: bool) -> None:
        if timeout is None:
            timeout = datetime.timedelta(seconds=self._timeout_seconds)
        _monitored_barrier(self._store, self._rank, self._size,
                           next(self._barriers), timeout, wait_all_ranks)

    def close(self) -> None:
        self._p2p.close()


def create(store, rank: int, size: int, timeout: datetime.timedelta):
    """The C++ backend of a group: the handshake in the store (the id, its
    secret sealed), then the communicator, joined in C++."""
    timeout_seconds = max(1, int(timeout.total_seconds()))
    # Rank 0's id hosts the rendezvous: alive until init returns.
    unique_id = mcl.UniqueId() if rank == 0 else None
    seal, text = meet(store, rank, size,
                      None if unique_id is None else str(unique_id))
    helper = NativeHelper(store, seal, rank, size, timeout_seconds)
    try:
        backend = native.NativeBackend(rank, size, text, timeout_seconds,
                                       helper)
    except BaseException:
        helper.close()
        raise
    _warn_topology_errors(backend, rank, size)
    return backend


def _warn_topology_errors(backend, rank: int, size: int) -> None:
    """The doctor's errors on rank 0, as mcl.init warns them."""
    if rank != 0 or size < 2:
        return
    for finding in json.loads(backend.topology()).get("findings", []):
        if finding.get("severity") == "error":
            warnings.warn(f"topology error: {finding.get('what')}. "
                          f"Fix: {finding.get('fix')}", mcl.TopologyWarning,
                          stacklevel=4)
