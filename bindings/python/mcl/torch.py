"""PyTorch's c10d backend "mcl": CPU tensors over mcl's collectives.

    import mcl.torch                      # registers the backend
    torch.distributed.init_process_group("mcl", rank=r, world_size=n,
                                         init_method="tcp://host:port")

Everything torch.distributed does with a process group then runs on mcl:
all_reduce, all_gather (and all_gather_into_tensor), broadcast, reduce,
reduce_scatter (and reduce_scatter_tensor), all_to_all (even and uneven
splits), gather, scatter, send, recv, barrier, DistributedDataParallel.
Operations run in issue order: those asked for with ``async_op=True``, and
DDP's, in the background (the work handle's ``wait()`` raises the
operation's error, ``get_future()`` gives DDP its future); blocking calls
on the calling thread. Tensors must be on the CPU. Sends and receives between two
ranks match in the order they are issued: tags other than 0 are refused.

The ranks meet through torch's store: rank 0 makes the mcl unique id and
puts it there; every group (``new_group``) gets its own communicator.
mcl's own settings (MCL_TRANSPORT, MCL_TIMEOUT, ...) apply; the group's
timeout becomes the communicator's.
"""

from __future__ import annotations

import atexit
import datetime
import queue
import sys
import threading
import weakref
from typing import Any, Callable, List, Optional

try:
    import torch
    import torch.distributed as dist
    from torch._C import _distributed_c10d as _c10d
    from torch.futures import Future
except ImportError as e:  # pragma: no cover - depends on the machine
    raise ImportError(
        "mcl.torch needs PyTorch with torch.distributed (Debian: "
        "python3-torch; pip: torch): " + str(e)) from e

import mcl

BACKEND = "mcl"
_STORE_KEY = "mcl/unique_id"

_OPS = {
    _c10d.ReduceOp.RedOpType.SUM: "sum",
    _c10d.ReduceOp.RedOpType.PRODUCT: "prod",
    _c10d.ReduceOp.RedOpType.MIN: "min",
    _c10d.ReduceOp.RedOpType.MAX: "max",
    _c10d.ReduceOp.RedOpType.AVG: "avg",
}


def _op_name(reduce_op) -> str:
    op = getattr(reduce_op, "op", reduce_op)
    if op not in _OPS:
        raise ValueError(
            f"mcl backend: reduce op {op} is not supported (sum, product, "
            "min, max, avg)")
    return _OPS[op]


def _one(tensors: List[Any], what: str):
    """c10d passes a list per call (one tensor per device in the days of
    several GPUs per process); mcl takes one CPU tensor."""
    if len(tensors) != 1:
        raise ValueError(f"mcl backend: {what} takes one tensor per process, "
                         f"got {len(tensors)}")
    return _cpu(tensors[0], what)


def _cpu(t, what: str):
    if t.device.type != "cpu":
        raise ValueError(f"mcl backend: {what}: the tensor is on {t.device}; "
                         "mcl moves CPU tensors only")
    return t


class _Contiguous:
    """A tensor mcl can read and write in place: the tensor itself when it
    is contiguous, else a contiguous copy written back by ``finish``."""

    def __init__(self, t) -> None:
        self.target = t
        self.buffer = t if t.is_contiguous() else t.contiguous()

    def finish(self) -> None:
        if self.buffer is not self.target:
            self.target.copy_(self.buffer)


class _Pending:
    """An operation of the process group: mcl's work handles when it runs
    in the background (in issue order; the last done means all are), the
    future's value, and what to do once they are done (copies into the
    caller's tensors)."""

    def __init__(self, natives, outputs: List[Any],
                 after: Optional[Callable[[], None]]) -> None:
        # What mcl's calls returned: work handles, or (operations that ran
        # on the calling thread) their outputs.
        self.natives = [w for w in natives if isinstance(w, mcl.Work)]
        self.outputs = outputs
        self.after = after

    def settle(self, future: Future) -> None:
        """Waits for the operation and completes `future` with its
        outputs, or with its error."""
        try:
            for native in self.natives:
                native.wait(None)
            if self.after is not None:
                self.after()
        except BaseException as e:  # the waiter gets it
            future.set_exception(e)
            return
        future.set_result(self.outputs)


def _torch_caller():
    """The frame of torch.distributed's Python function that asked for the
    operation, or None when C++ did (DDP's reducer, its parameter checks)
    or the program called the process group itself."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__") == __name__:
        frame = frame.f_back
    if frame is not None and frame.f_globals.get(
            "__name__") == "torch.distributed.distributed_c10d":
        return frame
    return None


def _asked_from_python() -> bool:
    """Whether the caller waits on the work handle from Python."""
    return _torch_caller() is not None


def _in_background() -> bool:
    """Whether mcl runs the operation on its background thread. Not when
    torch.distributed's function that asked for it was called with
    async_op=False: it waits for the operation at once, so running it on
    the calling thread saves the hand-overs between threads (each a
    wake-up of tens of microseconds). Likewise send and recv, which always
    wait."""
    frame = _torch_caller()
    if frame is None:
        return True
    if frame.f_code.co_name in ("send", "recv"):  # they wait, and say so
        return False
    return frame.f_locals.get("async_op") is not False


class _Work(_c10d.Work):
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


class _Completer:
    """Completes the futures of operations still running: one thread per
    process group waits on them in issue order (the order they finish).

    The thread ends at interpreter exit (atexit), before Python stops its
    daemon threads: one stopped inside PyTorch, between fulfilling a future
    and taking the GIL back, unwinds through C++ that may not be unwound,
    and the process aborts."""

    _all: "weakref.WeakSet[_Completer]" = weakref.WeakSet()

    def __init__(self) -> None:
        self._queue: "queue.Queue[Optional[tuple]]" = queue.Queue()
        self._thread: Optional[threading.Thread] = None
        self._start_lock = threading.Lock()
        _Completer._all.add(self)

    def watch(self, pending: _Pending, future: Future) -> None:
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
    for completer in list(_Completer._all):
        completer.stop()


# PyTorch 2 wraps a backend object (c10d's Backend) in its process group;
# 1.x takes the process group itself. The methods are the same.
_BASE = getattr(_c10d, "Backend", None) or _c10d.ProcessGroup


class ProcessGroupMCL(_BASE):
    """The process group behind ``init_process_group("mcl")`` and
    ``new_group(backend="mcl")``."""

    def __init__(self, store, rank: int, size: int,
                 timeout: datetime.timedelta) -> None:
        super().__init__(rank, size)
        seconds = max(1, int(timeout.total_seconds()))
        if rank == 0:
            # Kept alive until every rank joined (init returns after).
            unique_id = mcl.UniqueId()
            store.set(_STORE_KEY, str(unique_id))
        else:
            unique_id = store.get(_STORE_KEY).decode()
        self.comm = mcl.init(rank, size, unique_id, timeout=seconds,
                             name="torch")
        self._completer = _Completer()

    def getBackendName(self) -> str:
        return BACKEND

    # -- collectives -------------------------------------------------------

    def _work(self, native, outputs, after=None):
        return self._works([native], outputs, after)

    def _works(self, natives, outputs, after=None):
        """The work handle of an operation: mcl's work handles `natives`
        (or, when it ran on the calling thread, its outputs). Its future is
        fulfilled by the completer thread, or at once. C++ callers get
        c10d's handle for the future (PyTorch 1.x calls no Python method of
        a handle), Python callers one whose wait() raises errors."""
        future = Future()
        pending = _Pending(natives, outputs, after)
        if pending.natives:
            self._completer.watch(pending, future)
        else:
            pending.settle(future)
        work = _c10d._create_work_from_future(future)
        return _Work(work, future) if _asked_from_python() else work

    def allreduce(self, tensors, opts=None):
        op = _op_name(opts.reduceOp) if opts is not None else "sum"
        t = _Contiguous(_one(tensors, "all_reduce"))
        native = self.comm.all_reduce(t.buffer, op, out=t.buffer,
                                      async_op=_in_background())
        return self._work(native, tensors, t.finish)

    def allreduce_coalesced(self, tensors, opts=None):
        op = _op_name(opts.reduceOp) if opts is not None else "sum"
        flat = torch.cat([_cpu(t, "all_reduce_coalesced").reshape(-1)
                          for t in tensors])
        native = self.comm.all_reduce(flat, op, out=flat,
                                      async_op=_in_background())

        def unpack():
            offset = 0
            for t in tensors:
                n = t.numel()
                t.copy_(flat[offset:offset + n].view_as(t))
                offset += n
        return self._work(native, tensors, unpack)

    def broadcast(self, tensors, opts):
        t = _Contiguous(_one(tensors, "broadcast"))
        native = self.comm.broadcast(t.buffer, root=opts.rootRank,
                                     out=t.buffer, async_op=_in_background())
        return self._work(native, tensors, t.finish)

    def reduce(self, tensors, opts):
        t = _Contiguous(_one(tensors, "reduce"))
        native = self.comm.reduce(t.buffer, root=opts.rootRank,
                                  op=_op_name(opts.reduceOp), out=t.buffer,
                                  async_op=_in_background())
        return self._work(native, tensors, t.finish)

    def allgather(self, output_tensors, input_tensors, opts=None):
        x = _one(input_tensors, "all_gather").contiguous()
        outputs = output_tensors[0]
        self._check_count(outputs, "all_gather's output list")
        flat = torch.empty((self.size(),) + tuple(x.shape), dtype=x.dtype)
        native = self.comm.all_gather(x, out=flat, async_op=_in_background())

        def unpack():
            for i, out in enumerate(outputs):
                out.copy_(flat[i].view_as(out))
        return self._work(native, output_tensors, unpack)

    def _allgather_base(self, output, input, opts=None):
        out = _Contiguous(_cpu(output, "all_gather_into_tensor"))
        native = self.comm.all_gather(
            _cpu(input, "all_gather_into_tensor").contiguous(),
            out=out.buffer, async_op=_in_background())
        return self._work(native, [output], out.finish)

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        op = _op_name(opts.reduceOp) if opts is not None else "sum"
        out = _Contiguous(_one(output_tensors, "reduce_scatter"))
        inputs = input_tensors[0]
        self._check_count(inputs, "reduce_scatter's input list")
        flat = torch.stack([t.reshape(out.target.shape) for t in inputs])
        native = self.comm.reduce_scatter(flat, op, out=out.buffer,
                                          async_op=_in_background())
        return self._work(native, output_tensors, out.finish)

    def _reduce_scatter_base(self, output, input, opts=None):
        op = _op_name(opts.reduceOp) if opts is not None else "sum"
        out = _Contiguous(_cpu(output, "reduce_scatter_tensor"))
        native = self.comm.reduce_scatter(
            _cpu(input, "reduce_scatter_tensor").contiguous(), op,
            out=out.buffer, async_op=_in_background())
        return self._work(native, [output], out.finish)

    def alltoall_base(self, output, input, output_split_sizes,
                      input_split_sizes, opts=None):
        out = _Contiguous(_cpu(output, "all_to_all_single"))
        x = _cpu(input, "all_to_all_single").contiguous()
        if not output_split_sizes and not input_split_sizes:
            native = self.comm.all_to_all(x, out=out.buffer,
                                          async_op=_in_background())
            return self._work(native, [output], out.finish)
        sends = self._split_rows(x, input_split_sizes)
        receives = self._split_rows(out.buffer, output_split_sizes)
        return self._exchange(sends, receives, [output], out.finish)

    def alltoall(self, output_tensors, input_tensors, opts=None):
        self._check_count(output_tensors, "all_to_all's output list")
        self._check_count(input_tensors, "all_to_all's input list")
        sends = [_cpu(t, "all_to_all").contiguous() for t in input_tensors]
        targets = [_Contiguous(_cpu(t, "all_to_all"))
                   for t in output_tensors]

        def finish():
            for t in targets:
                t.finish()
        return self._exchange(sends, [t.buffer for t in targets],
                              output_tensors, finish)

    def gather(self, output_tensors, input_tensors, opts):
        x = _one(input_tensors, "gather").contiguous()
        root = opts.rootRank
        if self.rank() != root:
            native = self.comm.send(x, root, async_op=_in_background())
            return self._work(native, [])
        outputs = output_tensors[0]
        self._check_count(outputs, "gather's output list")
        targets = [_Contiguous(t) for t in outputs]
        background = _in_background()
        natives = [None if i == root else self.comm.recv(
            t.buffer, i, async_op=background)
            for i, t in enumerate(targets)]
        targets[root].buffer.copy_(x.view_as(targets[root].buffer))
        return self._after_all(natives, output_tensors, targets)

    def scatter(self, output_tensors, input_tensors, opts):
        out = _Contiguous(_one(output_tensors, "scatter"))
        root = opts.rootRank
        if self.rank() != root:
            native = self.comm.recv(out.buffer, root,
                                    async_op=_in_background())
            return self._work(native, output_tensors, out.finish)
        inputs = input_tensors[0]
        self._check_count(inputs, "scatter's input list")
        background = _in_background()
        natives = [None if i == root else self.comm.send(
            t.contiguous(), i, async_op=background)
            for i, t in enumerate(inputs)]
        out.buffer.copy_(inputs[root].reshape(out.buffer.shape))
        return self._after_all(natives, output_tensors, [out])

    def barrier(self, opts=None):
        return self._work(self.comm.barrier(async_op=_in_background()), [])

    # -- point-to-point ----------------------------------------------------

    def send(self, tensors, dst_rank, tag=0):
        self._check_tag(tag)
        x = _one(tensors, "send").contiguous()
        native = self.comm.send(x, dst_rank, async_op=_in_background())
        return self._work(native, tensors)

    def recv(self, tensors, src_rank, tag=0):
        self._check_tag(tag)
        out = _Contiguous(_one(tensors, "recv"))
        native = self.comm.recv(out.buffer, src_rank,
                                async_op=_in_background())
        return self._work(native, tensors, out.finish)

    def recv_anysource(self, tensors, tag=0):
        raise ValueError("mcl backend: recv needs a source rank (mcl "
                         "matches sends and receives between two ranks)")

    # -- helpers -----------------------------------------------------------

    def _check_count(self, tensors, what: str) -> None:
        if len(tensors) != self.size():
            raise ValueError(f"mcl backend: {what} has {len(tensors)} "
                             f"tensors; the group has {self.size()} ranks")

    @staticmethod
    def _check_tag(tag: int) -> None:
        if tag != 0:
            raise ValueError(
                f"mcl backend: tag {tag}: mcl matches the sends and "
                "receives between two ranks in the order they are issued, "
                "and takes tag 0 only")

    def _split_rows(self, t, sizes):
        """t's rows in `sizes` blocks (equal blocks when sizes is empty)."""
        if not sizes:
            if t.shape[0] % self.size() != 0:
                raise ValueError(
                    f"mcl backend: all_to_all_single: {t.shape[0]} rows do "
                    f"not split evenly over {self.size()} ranks")
            sizes = [t.shape[0] // self.size()] * self.size()
        if len(sizes) != self.size() or sum(sizes) != t.shape[0]:
            raise ValueError(
                f"mcl backend: all_to_all_single: split sizes {list(sizes)} "
                f"do not cover the {t.shape[0]} rows in {self.size()} blocks")
        return list(torch.split(t, list(sizes)))

    def _exchange(self, sends, receives, outputs, finish):
        """All-to-all with blocks of any size: in round k, rank r sends to
        r + k and receives from r - k (each round one sendrecv)."""
        n, r = self.size(), self.rank()
        if sends[r].numel() != receives[r].numel():
            raise ValueError("mcl backend: all_to_all: this rank's block to "
                             "itself differs in size on the two sides")
        receives[r].copy_(sends[r].view_as(receives[r]))
        natives = []
        for k in range(1, n):
            dest, source = (r + k) % n, (r - k) % n
            natives.append(self.comm.sendrecv(
                sends[dest], dest, receives[source], source,
                async_op=_in_background()))
        return self._after_all(natives, outputs, [], finish)

    def _after_all(self, natives, outputs, targets, finish=None):
        """One work handle for several of mcl's, then `targets` written
        back and `finish` run."""
        def after():
            for t in targets:
                t.finish()
            if finish is not None:
                finish()
        return self._works(natives, outputs, after)


def _create(store, rank, size, timeout):
    return ProcessGroupMCL(store, rank, size, timeout)


if BACKEND.upper() not in getattr(dist.Backend, "_plugins", {}):
    dist.Backend.register_backend(BACKEND, _create)
