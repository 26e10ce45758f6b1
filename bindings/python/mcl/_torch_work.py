"""The work handles and futures of mcl.torch's operations: each
operation's future is fulfilled when mcl's work is done (by one thread per
process group, in issue order), and failures reach the waiter as torch's
errors (see _torch_args.backend_error)."""

from __future__ import annotations

import atexit
import datetime
import queue
import sys
import threading
import weakref
from typing import Any, Callable, List, Optional

from torch._C import _distributed_c10d as _c10d
from torch.futures import Future

import mcl

from ._torch_args import backend_error


class Pending:
    """An operation of the process group: mcl's work handles when it runs
    in the background (in issue order; the last done means all are), the
    future's value, and what to do once they are done (copies into the
    caller's tensors)."""

    def __init__(self, natives, outputs: List[Any],
                 after: Optional[Callable[[], None]], what: str,
                 timeout_seconds: float) -> None:
        # What mcl's calls returned: work handles, or (operations that ran
        # on the calling thread) their outputs.
        self.natives = [w for w in natives if isinstance(w, mcl.Work)]
        self.outputs = outputs
        self.after = after
        self.what = what
        self.timeout_seconds = timeout_seconds

    def settle(self, future: Future) -> None:
        """Waits for the operation and completes `future` with its
        outputs, or with its error."""
        try:
            for native in self.natives:
                native.wait(None)
            if self.after is not None:
                self.after()
        except BaseException as e:  # the waiter gets it
            future.set_exception(
                backend_error(e, self.what, self.timeout_seconds))
            return
        future.set_result(self.outputs)


def torch_caller():
    """The frame of torch.distributed's Python function that asked for the
    operation, or None when C++ did (DDP's reducer, its parameter checks)
    or the program called the process group itself."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get(
            "__name__", "").startswith("mcl."):
        frame = frame.f_back
    if frame is not None and frame.f_globals.get(
            "__name__") == "torch.distributed.distributed_c10d":
        return frame
    return None


def asked_from_python() -> bool:
    """Whether the caller waits on the work handle from Python."""
    return torch_caller() is not None


def in_background() -> bool:
    """Whether mcl runs the operation on its background thread. Not when
    torch.distributed's function that asked for it was called with
    async_op=False: it waits for the operation at once, so running it on
    the calling thread saves the hand-overs between threads (each a
    wake-up of tens of microseconds). Likewise send and recv, which always
    wait."""
    frame = torch_caller()
    if frame is None:
        return True
    if frame.f_code.co_name in ("send", "recv"):  # they wait, and say so
        return False
    return frame.f_locals.get("async_op") is not False


class Work(_c10d.Work):
    """The work handle Python callers get. c10d's handle for a future
    (what C++ callers get: they call no Python method) returns from wait()
    as if the operation had succeeded when it failed; this one raises the
    operation's error, as a backend's handle must."""

    def __init__(self, inner, future: Future) -> None:
        super().__init__()
        self._inner = inner
        self._future = future

    def wait(self, timeout: datetime.timedelta = datetime.timedelta(0)
             ) -> bool:
        # The communicator's timeout bounds the operation already.
        self._future.wait()  # raises the operation's error
        return True

    def is_completed(self) -> bool:
        return self._future.done()

    def is_success(self) -> bool:
        return self._inner.is_success()

    def exception(self):
        return self._inner.exception()

    def result(self) -> List[Any]:
        return self._future.wait()

    def get_future(self) -> Future:
        return self._future

    def source_rank(self) -> int:
        return self._inner.source_rank()


class Completer:
    """Completes the futures of operations still running: one thread per
    process group waits on them in issue order (the order they finish).

    The thread ends at interpreter exit (atexit), before Python stops its
    daemon threads: one stopped inside PyTorch, between fulfilling a future
    and taking the GIL back, unwinds through C++ that may not be unwound,
    and the process aborts."""

    _all: "weakref.WeakSet[Completer]" = weakref.WeakSet()

    def __init__(self) -> None:
        self._queue: "queue.Queue[Optional[tuple]]" = queue.Queue()
        self._thread: Optional[threading.Thread] = None
        self._start_lock = threading.Lock()
        Completer._all.add(self)

    def watch(self, pending: Pending, future: Future) -> None:
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="mcl-torch-futures", daemon=True)
                self._thread.start()
        self._queue.put((pending, future))

    def stop(self) -> None:
        """Lets queued operations finish (each bounded by the
        communicator's timeout), then ends the thread."""
        with self._start_lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            pending, future = item
            pending.settle(future)


@atexit.register
def _stop_completers() -> None:
    for completer in list(Completer._all):
        completer.stop()


class TransferWork(_c10d.Work):
    """The work handle of a send or receive (see _torch_p2p.Transfer):
    wait() raises the transfer's error, or a timeout after the group's
    timeout; a receive from any rank tells its sender."""

    def __init__(self, transfer) -> None:
        super().__init__()
        self._transfer = transfer

    def wait(self, timeout: datetime.timedelta = datetime.timedelta(0)
             ) -> bool:
        self._transfer.wait()
        return True

    def is_completed(self) -> bool:
        return self._transfer.done()

    def is_success(self) -> bool:
        return self._transfer.done() and self._transfer.failed() is None

    def exception(self):
        return self._transfer.failed()

    def result(self) -> List[Any]:
        self._transfer.wait()
        return []

    def get_future(self) -> Future:
        return self._transfer.future

    def source_rank(self) -> int:
        if self._transfer.source is None:
            raise RuntimeError("mcl backend: the receive has not completed")
        return self._transfer.source

    _source_rank = source_rank
