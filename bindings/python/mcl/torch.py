"""PyTorch's c10d backend "mcl": CPU tensors over mcl's collectives.

    import mcl.torch                      # registers the backend
    torch.distributed.init_process_group("mcl", rank=r, world_size=n,
                                         init_method="tcp://host:port")

Everything torch.distributed does with a process group then runs on mcl:
all_reduce (and its coalesced forms), all_gather (all_gather_into_tensor,
all_gather_coalesced), broadcast, reduce, reduce_scatter
(reduce_scatter_tensor), all_to_all (even and uneven splits), gather,
scatter, send, recv, barrier, the coalescing manager's batched calls,
DistributedDataParallel; ``mcl.torch.monitored_barrier`` is Gloo's
monitored barrier. Works on PyTorch 1.13 and 2.x.

Operations run in issue order: those asked for with ``async_op=True``, and
DDP's, in the background (the work handle's ``wait()`` raises the
operation's error, ``get_future()`` gives DDP its future); blocking calls
on the calling thread. Tensors must be on the CPU (others are refused,
naming the device, before anything is sent). Sends and receives are
Gloo's: matched by tag (in order within a tag), from any rank
(``recv(t)`` without ``src``), and a receive posted first never holds up
a send; they travel on links of their own, apart from the collectives
(_torch_p2p). A failed communication raises torch's DistBackendError (a
RuntimeError on 1.x) with mcl's message; a timeout's says "Timed out".

The ranks meet through torch's store: rank 0 makes the mcl unique id and
puts it there, its secret sealed under MCL_SECRET (set the same on every
rank), or, when every rank is on one host, under a random key shared
through a file only the user can read; across hosts without MCL_SECRET,
only where ``allow_secret_in_store()`` says the store is private, as it is
(_torch_store_id); else init refuses. Every group
(``new_group``) gets its own communicator.
mcl's own settings (MCL_TRANSPORT, MCL_TIMEOUT, ...) apply; the group's
timeout becomes the communicator's.
"""

from __future__ import annotations

import datetime
import itertools

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

from ._torch_args import (BackendError, Contiguous, as_bytes, backend_error,
                          check_count, check_pairs, check_same_dtype,
                          check_tag, cpu, cpu_all, one, one_list, op_name,
                          translating_errors)
from ._torch_barrier import monitored_barrier as _monitored_barrier
from ._torch_p2p import P2PEngine
from ._torch_store_id import allow_secret_in_store, meet
from . import _torch_native
from ._torch_work import Completer, Pending, TransferWork, Work, \
    asked_from_python, in_background

__all__ = ["BACKEND", "ProcessGroupMCL", "BackendError", "monitored_barrier",
           "allow_secret_in_store", "create_group"]

BACKEND = "mcl"


# A Python subclass of c10d's ProcessGroup: both 1.13 and 2.x take it as
# the whole process group (2.x's c10d Backend has no Python constructor).
class ProcessGroupMCL(_c10d.ProcessGroup):
    """The process group behind ``init_process_group("mcl")`` and
    ``new_group(backend="mcl")``."""

    def __init__(self, store, rank: int, size: int,
                 timeout: datetime.timedelta) -> None:
        super().__init__(rank, size)
        self.timeout_seconds = max(1, int(timeout.total_seconds()))
        self._store = store
        self._barriers = itertools.count()
        try:
            # Rank 0's id is kept alive until every rank joined (init
            # returns after).
            unique_id = mcl.UniqueId() if rank == 0 else None
            self._seal, text = meet(store, rank, size,
                                    None if unique_id is None
                                    else str(unique_id))
            self.comm = mcl.init(rank, size, unique_id or text,
                                 timeout=self.timeout_seconds, name="torch")
        except mcl.Error as e:
            raise backend_error(e, "init_process_group",
                                self.timeout_seconds) from e
        self._completer = Completer()
        self._p2p = P2PEngine(store, self._seal, rank, size,
                               self.timeout_seconds)

    def getBackendName(self) -> str:
        return BACKEND

    def close(self) -> None:
        """Ends the group: its sends and receives, then the communicator."""
        self._p2p.close()
        self.comm.close()

    # -- work handles ------------------------------------------------------

    def _work(self, native, outputs, what, after=None):
        return self._works([native], outputs, what, after)

    def _works(self, natives, outputs, what, after=None):
        """The work handle of operation `what`: mcl's work handles
        `natives` (or, when it ran on the calling thread, its outputs). Its
        future is fulfilled by the completer thread, or at once. C++
        callers get c10d's handle for the future (PyTorch 1.x calls no
        Python method of a handle), Python callers one whose wait() raises
        errors."""
        future = Future()
        pending = Pending(natives, outputs, after, what,
                          self.timeout_seconds)
        if pending.natives:
            self._completer.watch(pending, future)
        else:
            pending.settle(future)
        work = _c10d._create_work_from_future(future)
        return Work(work, future) if asked_from_python() else work

    # -- collectives -------------------------------------------------------

    @translating_errors("all_reduce")
    def allreduce(self, tensors, opts=None):
        op = op_name(opts.reduceOp) if opts is not None else "sum"
        t = Contiguous(one(tensors, "all_reduce"))
        native = self.comm.all_reduce(t.buffer, op, out=t.buffer,
                                      async_op=in_background())
        return self._work(native, tensors, "all_reduce", t.finish)

    @translating_errors("all_reduce_coalesced")
    def allreduce_coalesced(self, tensors, opts=None):
        what = "all_reduce_coalesced"
        op = op_name(opts.reduceOp) if opts is not None else "sum"
        cpu_all(tensors, what)
        if not tensors:
            raise ValueError(f"mcl backend: {what}: no tensors")
        check_same_dtype(tensors, what)
        flat = torch.cat([t.reshape(-1) for t in tensors])
        native = self.comm.all_reduce(flat, op, out=flat,
                                      async_op=in_background())

        def unpack():
            offset = 0
            for t in tensors:
                n = t.numel()
                t.copy_(flat[offset:offset + n].view_as(t))
                offset += n
        return self._work(native, tensors, what, unpack)

    @translating_errors("broadcast")
    def broadcast(self, tensors, opts):
        t = Contiguous(one(tensors, "broadcast"))
        native = self.comm.broadcast(t.buffer, root=opts.rootRank,
                                     out=t.buffer, async_op=in_background())
        return self._work(native, tensors, "broadcast", t.finish)

    @translating_errors("reduce")
    def reduce(self, tensors, opts):
        t = Contiguous(one(tensors, "reduce"))
        native = self.comm.reduce(t.buffer, root=opts.rootRank,
                                  op=op_name(opts.reduceOp), out=t.buffer,
                                  async_op=in_background())
        return self._work(native, tensors, "reduce", t.finish)

    @translating_errors("all_gather")
    def allgather(self, output_tensors, input_tensors, opts=None):
        x = one(input_tensors, "all_gather").contiguous()
        outputs = cpu_all(one_list(output_tensors, "all_gather"),
                          "all_gather's output")
        check_count(outputs, self.size(), "all_gather's output list")
        flat = torch.empty((self.size(),) + tuple(x.shape), dtype=x.dtype)
        native = self.comm.all_gather(x, out=flat, async_op=in_background())

        def unpack():
            for i, out in enumerate(outputs):
                out.copy_(flat[i].view_as(out))
        return self._work(native, output_tensors, "all_gather", unpack)

    @translating_errors("all_gather_coalesced")
    def allgather_coalesced(self, output_lists, input_tensors, opts=None):
        """Every input gathered into its list of outputs (one per rank), in
        one all-gather of all the inputs' bytes."""
        what = "all_gather_coalesced"
        inputs = [t.contiguous() for t in cpu_all(input_tensors, what)]
        check_pairs(output_lists, inputs, what)
        for i, outputs in enumerate(output_lists):
            check_count(outputs, self.size(), f"{what}'s output list {i}")
            for j, out in enumerate(cpu_all(outputs, f"{what} output {i}")):
                if out.numel() != inputs[i].numel() or \
                        out.dtype != inputs[i].dtype:
                    raise ValueError(
                        f"mcl backend: {what}: output {i}[{j}] is "
                        f"{out.dtype} x {out.numel()}; input {i} is "
                        f"{inputs[i].dtype} x {inputs[i].numel()}")
        native, piece = self._gather_bytes(inputs)

        def unpack():
            for i, outputs in enumerate(output_lists):
                for rank, out in enumerate(outputs):
                    out.copy_(piece(rank, i).view_as(out))
        return self._work(native, output_lists, what, unpack)

    @translating_errors("all_gather_into_tensor")
    def _allgather_base(self, output, input, opts=None):
        out = Contiguous(cpu(output, "all_gather_into_tensor"))
        native = self.comm.all_gather(
            cpu(input, "all_gather_into_tensor").contiguous(),
            out=out.buffer, async_op=in_background())
        return self._work(native, [output], "all_gather_into_tensor",
                          out.finish)

    @translating_errors("all_gather_into_tensor_coalesced")
    def allgather_into_tensor_coalesced(self, outputs, inputs, opts=None):
        """The coalescing manager's batch of all_gather_into_tensor: one
        all-gather of all the inputs' bytes."""
        what = "all_gather_into_tensor_coalesced"
        inputs = [t.contiguous() for t in cpu_all(inputs, what)]
        cpu_all(outputs, what + " output")
        check_pairs(outputs, inputs, what)
        for i, (out, x) in enumerate(zip(outputs, inputs)):
            if out.numel() != x.numel() * self.size() or out.dtype != x.dtype:
                raise ValueError(
                    f"mcl backend: {what}: output {i} is {out.dtype} x "
                    f"{out.numel()}; it must hold {self.size()} x "
                    f"{x.numel()} of input {i}'s {x.dtype}")
        native, piece = self._gather_bytes(inputs)

        def unpack():
            for i, out in enumerate(outputs):
                rows = torch.stack([piece(rank, i)
                                    for rank in range(self.size())])
                out.copy_(rows.reshape(out.shape))
        return self._work(native, outputs, what, unpack)

    @translating_errors("reduce_scatter")
    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        op = op_name(opts.reduceOp) if opts is not None else "sum"
        out = Contiguous(one(output_tensors, "reduce_scatter"))
        inputs = cpu_all(one_list(input_tensors, "reduce_scatter"),
                         "reduce_scatter's input")
        check_count(inputs, self.size(), "reduce_scatter's input list")
        flat = torch.stack([t.reshape(out.target.shape) for t in inputs])
        native = self.comm.reduce_scatter(flat, op, out=out.buffer,
                                          async_op=in_background())
        return self._work(native, output_tensors, "reduce_scatter",
                          out.finish)

    @translating_errors("reduce_scatter_tensor")
    def _reduce_scatter_base(self, output, input, opts=None):
        op = op_name(opts.reduceOp) if opts is not None else "sum"
        out = Contiguous(cpu(output, "reduce_scatter_tensor"))
        native = self.comm.reduce_scatter(
            cpu(input, "reduce_scatter_tensor").contiguous(), op,
            out=out.buffer, async_op=in_background())
        return self._work(native, [output], "reduce_scatter_tensor",
                          out.finish)

    @translating_errors("reduce_scatter_tensor_coalesced")
    def reduce_scatter_tensor_coalesced(self, outputs, inputs, opts=None):
        """The coalescing manager's batch of reduce_scatter_tensor: rank
        r's share of every input side by side in row r of one matrix, then
        one reduce-scatter."""
        what = "reduce_scatter_tensor_coalesced"
        op = op_name(opts.reduceOp) if opts is not None else "sum"
        cpu_all(inputs, what)
        cpu_all(outputs, what + " output")
        check_pairs(outputs, inputs, what)
        check_same_dtype(list(inputs) + list(outputs), what)
        n = self.size()
        for i, (out, x) in enumerate(zip(outputs, inputs)):
            if x.numel() != out.numel() * n:
                raise ValueError(
                    f"mcl backend: {what}: input {i} has {x.numel()} "
                    f"elements; it must hold {n} x output {i}'s "
                    f"{out.numel()}")
        rows = torch.cat([x.reshape(n, -1) for x in inputs], dim=1)
        mine = torch.empty(rows.shape[1], dtype=rows.dtype)
        native = self.comm.reduce_scatter(rows.contiguous(), op, out=mine,
                                          async_op=in_background())

        def unpack():
            offset = 0
            for out in outputs:
                out.copy_(mine[offset:offset + out.numel()].view_as(out))
                offset += out.numel()
        return self._work(native, outputs, what, unpack)

    @translating_errors("all_to_all_single")
    def alltoall_base(self, output, input, output_split_sizes,
                      input_split_sizes, opts=None):
        what = "all_to_all_single"
        out = Contiguous(cpu(output, what))
        x = cpu(input, what).contiguous()
        if not output_split_sizes and not input_split_sizes:
            native = self.comm.all_to_all(x, out=out.buffer,
                                          async_op=in_background())
            return self._work(native, [output], what, out.finish)
        sends = self._split_rows(x, input_split_sizes)
        receives = self._split_rows(out.buffer, output_split_sizes)
        return self._exchange(sends, receives, [output], what, out.finish)

    @translating_errors("all_to_all")
    def alltoall(self, output_tensors, input_tensors, opts=None):
        check_count(output_tensors, self.size(), "all_to_all's output list")
        check_count(input_tensors, self.size(), "all_to_all's input list")
        sends = [t.contiguous() for t in cpu_all(input_tensors, "all_to_all")]
        targets = [Contiguous(t) for t in cpu_all(output_tensors,
                                                  "all_to_all's output")]

        def finish():
            for t in targets:
                t.finish()
        return self._exchange(sends, [t.buffer for t in targets],
                              output_tensors, "all_to_all", finish)

    @translating_errors("gather")
    def gather(self, output_tensors, input_tensors, opts):
        x = one(input_tensors, "gather").contiguous()
        root = opts.rootRank
        if self.rank() != root:
            native = self.comm.send(x, root, async_op=in_background())
            return self._work(native, [], "gather")
        outputs = cpu_all(one_list(output_tensors, "gather"),
                          "gather's output")
        check_count(outputs, self.size(), "gather's output list")
        targets = [Contiguous(t) for t in outputs]
        background = in_background()
        natives = [None if i == root else self.comm.recv(
            t.buffer, i, async_op=background)
            for i, t in enumerate(targets)]
        targets[root].buffer.copy_(x.view_as(targets[root].buffer))
        return self._after_all(natives, output_tensors, "gather", targets)

    @translating_errors("scatter")
    def scatter(self, output_tensors, input_tensors, opts):
        out = Contiguous(one(output_tensors, "scatter"))
        root = opts.rootRank
        if self.rank() != root:
            native = self.comm.recv(out.buffer, root,
                                    async_op=in_background())
            return self._work(native, output_tensors, "scatter", out.finish)
        inputs = [t.contiguous() for t in cpu_all(
            one_list(input_tensors, "scatter"), "scatter's input")]
        check_count(inputs, self.size(), "scatter's input list")
        background = in_background()
        natives = [None if i == root else self.comm.send(
            t, i, async_op=background) for i, t in enumerate(inputs)]
        out.buffer.copy_(inputs[root].reshape(out.buffer.shape))
        return self._after_all(natives, output_tensors, "scatter", [out])

    @translating_errors("barrier")
    def barrier(self, opts=None):
        return self._work(self.comm.barrier(async_op=in_background()), [],
                          "barrier")

    def monitored_barrier(self, timeout=None, wait_all_ranks=False):
        """See mcl.torch.monitored_barrier."""
        if timeout is None:
            timeout = datetime.timedelta(seconds=self.timeout_seconds)
        _monitored_barrier(self._store, self.rank(), self.size(),
                           next(self._barriers), timeout, wait_all_ranks)

    # -- point-to-point (see _torch_p2p) -----------------------------------

    def send(self, tensors, dst_rank, tag=0):
        check_tag(tag)
        self._check_peer(dst_rank, "send", "dst")
        x = one(tensors, "send").contiguous()
        return TransferWork(self._p2p.send(x, dst_rank, tag,
                                           waits=not in_background()))

    def recv(self, tensors, src_rank, tag=0):
        check_tag(tag)
        self._check_peer(src_rank, "recv", "src")
        return self._receive(tensors, src_rank, tag)

    def recv_anysource(self, tensors, tag=0):
        check_tag(tag)
        if self.size() < 2:
            raise ValueError("mcl backend: recv from any rank: the group "
                             "has no other rank")
        return self._receive(tensors, None, tag)

    # -- helpers -----------------------------------------------------------

    def _receive(self, tensors, source, tag):
        out = Contiguous(one(tensors, "recv"))
        return TransferWork(self._p2p.recv(out.buffer, source, tag,
                                           waits=not in_background(),
                                           after=out.finish))

    def _check_peer(self, peer, what: str, name: str) -> None:
        if not isinstance(peer, int) or not 0 <= peer < self.size():
            raise ValueError(f"mcl backend: {what}: {name} rank {peer!r} is "
                             f"not in the group (ranks 0 to "
                             f"{self.size() - 1})")
        if peer == self.rank():
            raise ValueError(f"mcl backend: {what}: {name} rank {peer} is "
                             "this rank")

    def _gather_bytes(self, inputs):
        """All-gathers the bytes of `inputs` side by side. Returns mcl's
        work and piece(rank, i): input i of that rank, in its type."""
        sizes = [as_bytes(t).numel() for t in inputs]
        offsets = list(itertools.accumulate([0] + sizes[:-1]))
        flat = torch.cat([as_bytes(t) for t in inputs])
        gathered = torch.empty((self.size(), flat.numel()),
                               dtype=torch.uint8)
        native = self.comm.all_gather(flat, out=gathered,
                                      async_op=in_background())

        # The send buffer lives as long as the unpacking that needs the
        # gathered bytes (the default argument holds it).
        def piece(rank, i, _send_buffer=flat):
            start = offsets[i]
            return gathered[rank, start:start + sizes[i]].view(
                inputs[i].dtype)
        return native, piece

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

    def _exchange(self, sends, receives, outputs, what, finish):
        """All-to-all with blocks of any size: in round k, rank r sends to
        r + k and receives from r - k (each round one sendrecv)."""
        n, r = self.size(), self.rank()
        if sends[r].numel() != receives[r].numel():
            raise ValueError(f"mcl backend: {what}: this rank's block to "
                             "itself differs in size on the two sides")
        receives[r].copy_(sends[r].view_as(receives[r]))
        natives = []
        for k in range(1, n):
            dest, source = (r + k) % n, (r - k) % n
            natives.append(self.comm.sendrecv(
                sends[dest], dest, receives[source], source,
                async_op=in_background()))
        return self._after_all(natives, outputs, what, [], finish)

    def _after_all(self, natives, outputs, what, targets, finish=None):
        """One work handle for several of mcl's, then `targets` written
        back and `finish` run."""
        def after():
            for t in targets:
                t.finish()
            if finish is not None:
                finish()
        return self._works(natives, outputs, what, after)


def create_group(store, rank: int, size: int,
                 timeout: datetime.timedelta):
    """What ``init_process_group("mcl")`` and ``new_group`` make for a
    group: the C++ backend (mcl._torch_backend) where it was built for
    this torch, else the Python one (ProcessGroupMCL), said once. Both
    have ``close()``."""
    reason = _torch_native.why_not_native()
    if reason is None:
        return _torch_native.create(store, rank, size, timeout)
    _torch_native.say_python_backend_once(reason)
    return ProcessGroupMCL(store, rank, size, timeout)


def _mcl_backend_of(group):
    """The mcl backend behind `group` (PyTorch 2 puts a backend per device
    type behind each group), or None."""
    if isinstance(group, ProcessGroupMCL):
        return group
    native = _torch_native.native
    if native is not None and isinstance(group, native.NativeBackend):
        return group
    get = getattr(group, "_get_backend", None)
    if get is not None and native is not None:
        try:
            backend = get(torch.device("cpu"))
        except RuntimeError:
            return None
        if isinstance(backend, native.NativeBackend):
            return backend
    return None


def monitored_barrier(group=None, timeout=None,
                      wait_all_ranks: bool = False) -> None:
    """Gloo's ``torch.distributed.monitored_barrier`` for "mcl" groups
    (torch.distributed's own refuses every backend but Gloo): rank 0 waits
    up to `timeout` (default: the group's) for the others and raises
    RuntimeError naming the first rank that did not arrive, or all of them
    with `wait_all_ranks`; the others raise too. It runs over the group's
    store, so the communicator stays usable."""
    if group is None:
        group = dist.distributed_c10d._get_default_group()
    backend = _mcl_backend_of(group)
    if backend is None:
        raise ValueError(
            "mcl.torch.monitored_barrier: the group's backend is not "
            f"\"mcl\" ({type(group).__name__}); Gloo groups have "
            "torch.distributed.monitored_barrier")
    if isinstance(backend, ProcessGroupMCL):
        backend.monitored_barrier(timeout, wait_all_ranks)
    else:
        if backend.helper is None:
            raise ValueError("mcl.torch.monitored_barrier: the group is "
                             "closed")
        backend.helper.monitored_barrier(timeout, wait_all_ranks)


def _devices():
    """The device types "mcl" groups take tensors of (PyTorch 2 asks):
    the CPU, and every device whose tensors the backend stages."""
    devices = ["cpu", "cuda", "mps"]
    name = getattr(torch._C, "_get_privateuse1_backend_name", None)
    if name is not None:
        devices.append(name())
    return devices


def _register() -> None:
    if BACKEND.upper() in getattr(dist.Backend, "_plugins", {}):
        return
    import inspect
    takes_devices = "devices" in inspect.signature(
        dist.Backend.register_backend).parameters
    if takes_devices and _torch_native.why_not_native() is None:
        dist.Backend.register_backend(BACKEND, create_group,
                                      devices=_devices())
        # c10d has kernels for CPU, CUDA and PrivateUse1 tensors only:
        # MPS tensors reach the backend through ones of mcl's.
        _torch_native.native.add_device_kernels("mps")
    else:
        dist.Backend.register_backend(BACKEND, create_group)


_register()
