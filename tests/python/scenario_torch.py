"""Rank side of the PyTorch backend tests (test_torch_backend.py): every
torch.distributed operation over "mcl" against the values it must give,
and a small model trained with DistributedDataParallel over a backend
named by the test. The ranks meet through a FileStore in the run's work
directory."""

import time

import torch
import torch.distributed as dist

from mcl.torch import BACKEND  # the import registers the backend


class Checks:
    """Named comparisons; the report lists each and what went wrong."""

    def __init__(self):
        self.names, self.failures = [], []

    def equal(self, name, got, want):
        self.names.append(name)
        if got != want:
            self.failures.append(f"{name}: got {got!r}, expected {want!r}")

    def fail(self, message):
        self.failures.append(message)

    def report(self):
        return {"checks": self.names, "failures": self.failures}


def _init(ctx, backend, name="store"):
    dist.init_process_group(backend, init_method="file://" + ctx.path(name),
                            rank=ctx.rank, world_size=ctx.size)


def _check_collectives(ctx, checks):
    r, n = ctx.rank, ctx.size
    ranks = torch.arange(n, dtype=torch.float32)

    t = torch.full((5,), float(r + 1))
    dist.all_reduce(t)
    checks.equal("all_reduce sum", t.tolist(), [n * (n + 1) / 2] * 5)
    t = torch.tensor([float(r)])
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    checks.equal("all_reduce max", t.tolist(), [n - 1.0])
    t = torch.tensor([r + 1], dtype=torch.int64)
    dist.all_reduce(t, op=dist.ReduceOp.PRODUCT)
    checks.equal("all_reduce product int64", t.tolist(),
                 [int(torch.arange(1, n + 1).prod())])
    t = torch.tensor([float(r)], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    checks.equal("all_reduce avg", t.tolist(), [(n - 1) / 2])

    # A column of a matrix: not contiguous, written back in place.
    m = torch.zeros(3, 2)
    m[:, 1] = r + 1
    dist.all_reduce(m[:, 1])
    checks.equal("all_reduce non-contiguous", m.tolist(),
                 [[0.0, n * (n + 1) / 2]] * 3)

    outs = [torch.empty(2) for _ in range(n)]
    dist.all_gather(outs, torch.tensor([float(r), 10.0 * r]))
    checks.equal("all_gather", [o.tolist() for o in outs],
                 [[float(i), 10.0 * i] for i in range(n)])
    flat = torch.empty(n * 2)
    dist.all_gather_into_tensor(flat, torch.tensor([float(r), -1.0]))
    checks.equal("all_gather_into_tensor", flat.tolist(),
                 sum(([float(i), -1.0] for i in range(n)), []))

    t = torch.full((4,), float(r))
    dist.broadcast(t, src=n - 1)
    checks.equal("broadcast", t.tolist(), [n - 1.0] * 4)

    t = torch.full((3,), float(r + 1))
    dist.reduce(t, dst=0)
    if r == 0:
        checks.equal("reduce", t.tolist(), [n * (n + 1) / 2] * 3)

    out = torch.empty(2)
    dist.reduce_scatter(out, [torch.full((2,), float(r + j))
                              for j in range(n)])
    checks.equal("reduce_scatter", out.tolist(),
                 [float(ranks.sum()) + n * r] * 2)
    out = torch.empty(1)
    dist.reduce_scatter_tensor(out, torch.arange(n, dtype=torch.float32))
    checks.equal("reduce_scatter_tensor", out.tolist(), [float(n * r)])

    x = torch.tensor([100.0 * r + j for j in range(n)])
    out = torch.empty(n)
    dist.all_to_all_single(out, x)
    checks.equal("all_to_all_single", out.tolist(),
                 [100.0 * i + r for i in range(n)])
    # Uneven: rank r sends j + 1 rows to rank j (each row its sender).
    x = torch.full((sum(j + 1 for j in range(n)),), float(r))
    out = torch.empty(n * (r + 1))
    dist.all_to_all_single(out, x, output_split_sizes=[r + 1] * n,
                           input_split_sizes=[j + 1 for j in range(n)])
    checks.equal("all_to_all_single uneven", out.tolist(),
                 sum(([float(i)] * (r + 1) for i in range(n)), []))
    outs = [torch.empty(1) for _ in range(n)]
    dist.all_to_all(outs, [torch.tensor([10.0 * r + j]) for j in range(n)])
    checks.equal("all_to_all", [o.item() for o in outs],
                 [10.0 * i + r for i in range(n)])

    gathered = [torch.empty(1) for _ in range(n)] if r == 0 else None
    dist.gather(torch.tensor([float(r * r)]), gathered, dst=0)
    if r == 0:
        checks.equal("gather", [g.item() for g in gathered],
                     [float(i * i) for i in range(n)])
    out = torch.empty(2)
    dist.scatter(out, [torch.full((2,), float(j)) for j in range(n)]
                 if r == 0 else None, src=0)
    checks.equal("scatter", out.tolist(), [float(r)] * 2)

    # Point-to-point around the ring, blocking and with isend/irecv.
    nxt, prev = (r + 1) % n, (r - 1) % n
    got = torch.empty(3)
    if r % 2 == 0:
        dist.send(torch.full((3,), float(r)), nxt)
        dist.recv(got, prev)
    else:
        dist.recv(got, prev)
        dist.send(torch.full((3,), float(r)), nxt)
    checks.equal("send/recv", got.tolist(), [float(prev)] * 3)
    got = torch.empty(2)
    works = [dist.isend(torch.full((2,), r + 0.5), nxt),
             dist.irecv(got, prev)]
    for w in works:
        w.wait()
    checks.equal("isend/irecv", got.tolist(), [prev + 0.5] * 2)

    # Async handles: issued back to back, waited on later.
    a, b = torch.ones(1 << 16), torch.full((7,), float(r))
    wa = dist.all_reduce(a, async_op=True)
    wb = dist.all_reduce(b, async_op=True)
    wb.wait()
    checks.equal("async all_reduce done in order", wa.is_completed(), True)
    wa.wait()
    checks.equal("async all_reduce", [a[0].item(), a[-1].item(), b[0].item()],
                 [float(n), float(n), float(ranks.sum())])
    fut = dist.all_reduce(torch.ones(3), async_op=True).get_future()
    checks.equal("future", fut.wait()[0].tolist(), [float(n)] * 3)

    # The object collectives: pickles as uint8 tensors, sizes first.
    objects = [None] * n
    dist.all_gather_object(objects, {"rank": r, "name": "x" * r})
    checks.equal("all_gather_object", objects,
                 [{"rank": i, "name": "x" * i} for i in range(n)])
    payload = [("from", r), list(range(r + 3))]
    dist.broadcast_object_list(payload, src=1)
    checks.equal("broadcast_object_list", payload,
                 [("from", 1), list(range(4))])
    gathered = [None] * n if r == 0 else None
    dist.gather_object({"r": r, "bytes": b"x" * (100 * r)}, gathered, dst=0)
    if r == 0:
        checks.equal("gather_object", gathered,
                     [{"r": i, "bytes": b"x" * (100 * i)} for i in range(n)])
    mine = [None]
    dist.scatter_object_list(
        mine, [("to", i, "y" * i) for i in range(n)] if r == n - 1 else None,
        src=n - 1)
    checks.equal("scatter_object_list", mine, [("to", r, "y" * r)])

    # bfloat16 sums in mcl's own type.
    t = torch.full((8,), 1.5, dtype=torch.bfloat16)
    dist.all_reduce(t)
    checks.equal("all_reduce bfloat16", t.float().tolist(), [1.5 * n] * 8)

    dist.barrier()
    if n > 2:  # a subgroup without the last rank
        group = dist.new_group(list(range(n - 1)), backend="mcl")
        if r < n - 1:
            t = torch.ones(2)
            dist.all_reduce(t, group=group)
            checks.equal("new_group all_reduce", t.tolist(), [n - 1.0] * 2)


def _coalescing_manager():
    """torch.distributed's coalescing manager of PyTorch 2.x (1.x's is
    NCCL's alone), or None."""
    import inspect
    manager = getattr(dist.distributed_c10d, "_coalescing_manager", None)
    if manager is None or "async_ops" not in inspect.signature(
            manager).parameters:
        return None
    return manager


def _check_coalesced(ctx, checks):
    r, n = ctx.rank, ctx.size
    total = n * (n - 1) / 2  # the sum of the ranks

    ts = [torch.full((3,), float(r)), torch.full((2, 2), float(2 * r))]
    dist.all_reduce_coalesced(ts)
    checks.equal("all_reduce_coalesced", [t.reshape(-1).tolist() for t in ts],
                 [[total] * 3, [2 * total] * 4])

    # Two inputs of two shapes: one all-gather of their bytes.
    a = torch.tensor([float(r), 0.5])
    b = torch.tensor([[7.0 * r]])
    outs_a = [torch.empty(2) for _ in range(n)]
    outs_b = [torch.empty(1, 1) for _ in range(n)]
    dist.all_gather_coalesced([outs_a, outs_b], [a, b])
    checks.equal("all_gather_coalesced",
                 ([o.tolist() for o in outs_a], [o.tolist() for o in outs_b]),
                 ([[float(i), 0.5] for i in range(n)],
                  [[[7.0 * i]] for i in range(n)]))

    manager = _coalescing_manager()
    if manager is None:
        checks.equal("coalescing manager: PyTorch 1.x has NCCL's only",
                     torch.__version__.startswith("1."), True)
        return
    ts = [torch.full((3,), float(r + 1)), torch.full((1,), float(-r))]
    with manager():
        for t in ts:
            dist.all_reduce(t)
    checks.equal("coalescing manager all_reduce", [t.tolist() for t in ts],
                 [[total + n] * 3, [-total]])
    outs = [torch.empty(2 * n), torch.empty(n, dtype=torch.float64)]
    with manager(async_ops=True) as cm:
        dist.all_gather_into_tensor(outs[0], torch.tensor([float(r), 1.0]))
        dist.all_gather_into_tensor(
            outs[1], torch.tensor([-r], dtype=torch.float64))
    cm.wait()
    checks.equal("coalescing manager all_gather_into_tensor",
                 [o.tolist() for o in outs],
                 [sum(([float(i), 1.0] for i in range(n)), []),
                  [-float(i) for i in range(n)]])
    outs = [torch.empty(2), torch.empty(1)]
    with manager():
        dist.reduce_scatter_tensor(outs[0],
                                   torch.arange(2 * n, dtype=torch.float32) + r)
        dist.reduce_scatter_tensor(outs[1], torch.full((n,), float(r)))
    checks.equal("coalescing manager reduce_scatter_tensor",
                 [o.tolist() for o in outs],
                 [[n * 2 * r + total, n * (2 * r + 1) + total], [total]])


def _expect_refusal(checks, name, call, *needles):
    """`call` must raise ValueError, RuntimeError (NotImplementedError
    among them) or TypeError whose text has every needle, in any case; the
    group must stay usable (checked by the caller)."""
    try:
        call()
        checks.fail(f"{name}: accepted")
    except (ValueError, RuntimeError, TypeError) as e:
        missing = [x for x in needles if x.lower() not in str(e).lower()]
        checks.equal(f"{name} refused naming it", missing, [])


def _check_bad_input(ctx, checks):
    r, n = ctx.rank, ctx.size
    group = dist.distributed_c10d._get_default_group()
    meta = torch.ones(2, device="meta")
    # Refused by torch's dispatcher (no c10d kernel for meta tensors) or,
    # where it lets them through, by the backend.
    _expect_refusal(checks, "all_reduce meta tensor",
                    lambda: dist.all_reduce(meta), "meta")
    _expect_refusal(checks, "all_gather meta output",
                    lambda: dist.all_gather([meta] * n, torch.ones(2)),
                    "meta", "all_gather's output[0]")
    if hasattr(group, "allgather_into_tensor_coalesced"):
        def unpaired():
            group.allgather_into_tensor_coalesced(
                [torch.empty(n)], [torch.ones(1), torch.ones(1)])
    else:  # PyTorch 1.x's C++ group has the list form only
        def unpaired():
            group.allgather_coalesced([[torch.empty(1)] * n],
                                      [torch.ones(1), torch.ones(1)])
    _expect_refusal(checks, "coalesced lists that do not pair", unpaired,
                    "1 output tensors for 2 inputs")
    _expect_refusal(checks, "coalesced reduction of two types",
                    lambda: group.allreduce_coalesced(
                        [torch.ones(1), torch.ones(1, dtype=torch.int64)]),
                    "all_reduce_coalesced[1]", "one type")
    t = torch.ones(3)
    dist.all_reduce(t)
    checks.equal("usable after refusals", t.tolist(), [float(n)] * 3)


def _check_refusals(ctx, checks):
    for what, call in {
            "band": lambda: dist.all_reduce(torch.ones(1, dtype=torch.int32),
                                            op=dist.ReduceOp.BAND)}.items():
        try:
            call()
            checks.fail(f"{what}: accepted")
        except (ValueError, RuntimeError) as e:
            checks.equal(f"{what} refused naming it", "mcl backend" in str(e),
                         True)


def collectives(ctx):
    _init(ctx, BACKEND)
    checks = Checks()
    checks.equal("backend", dist.get_backend(), "mcl")
    _check_collectives(ctx, checks)
    _check_coalesced(ctx, checks)
    _check_refusals(ctx, checks)
    _check_bad_input(ctx, checks)
    dist.barrier()
    dist.destroy_process_group()
    return checks.report()


def train(ctx):
    """A few steps of a small model under DDP over args["backend"], from
    a fixed seed: every rank sees its own slice of one batch. Reports the
    final weights (exact values, as hex floats)."""
    backend = ctx.args["backend"]
    _init(ctx, backend, "store-" + backend)
    torch.manual_seed(1234)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(),
                                torch.nn.Linear(32, 4))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)
    data = torch.randn(64, 16)
    target = torch.randn(64, 4)
    rows = data.shape[0] // ctx.size
    mine = slice(ctx.rank * rows, (ctx.rank + 1) * rows)
    for _ in range(ctx.args.get("steps", 20)):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(data[mine]), target[mine])
        loss.backward()
        optimizer.step()
    weights = [float(v).hex() for p in model.parameters()
               for v in p.detach().reshape(-1)]
    dist.destroy_process_group()
    return {"weights": weights, "loss": float(loss)}


def bench(ctx):
    """all_reduce through torch.distributed over args["backend"]: the
    median time per call at each size (float32), after a warm-up."""
    backend = ctx.args["backend"]
    _init(ctx, backend, "store-bench-" + backend)
    report = {}
    for count in ctx.args["counts"]:
        t = torch.ones(count)
        for _ in range(5):
            dist.all_reduce(t)
        times = []
        for _ in range(ctx.args.get("iterations", 50)):
            start = time.perf_counter()
            dist.all_reduce(t)
            times.append(time.perf_counter() - start)
        times.sort()
        report[str(count * 4)] = times[len(times) // 2] * 1e6
    dist.destroy_process_group()
    return report


def stalled_peer(ctx):
    """Rank 1 joins no call; rank 0's all_reduce must fail within the
    group's timeout (3 s) with mcl's message naming rank 1."""
    import datetime
    dist.init_process_group(BACKEND, init_method="file://" + ctx.path("s"),
                            rank=ctx.rank, world_size=ctx.size,
                            timeout=datetime.timedelta(seconds=3))
    if ctx.rank == 1:
        time.sleep(6)
        return {}
    start = time.monotonic()
    try:
        if ctx.args.get("async_op"):  # the error comes through the future
            dist.all_reduce(torch.ones(4), async_op=True).wait()
        else:
            dist.all_reduce(torch.ones(4))
        return {"error": None}
    except Exception as e:  # noqa: BLE001 (what the caller sees)
        return {"error": str(e), "type": type(e).__name__,
                "seconds": time.monotonic() - start,
                "is_dist_backend_error": isinstance(
                    e, getattr(dist, "DistBackendError", RuntimeError)),
                "is_runtime_error": isinstance(e, RuntimeError)}


def monitored(ctx):
    """mcl.torch.monitored_barrier: all arrive; then the last rank comes
    3 s late to a 1 s barrier (rank 0 names it, the others hear of it);
    then the group still all-reduces."""
    import datetime
    from mcl.torch import monitored_barrier
    _init(ctx, BACKEND, "monitored")
    r, n = ctx.rank, ctx.size
    second = datetime.timedelta(seconds=1)
    monitored_barrier()  # the group's timeout: the ranks start apart
    report = {"first": "passed"}
    if r == n - 1:
        time.sleep(3)
    try:
        monitored_barrier(timeout=second, wait_all_ranks=True)
        report["second"] = None
    except RuntimeError as e:
        report["second"] = str(e)
    t = torch.ones(2)
    dist.all_reduce(t)
    report["after"] = t.tolist()
    dist.destroy_process_group()
    return report


def _move_to_another_host(name):
    """This rank's own UTS namespace with another host name: to mcl.torch
    it runs on another host (the file system is still shared, which the
    one-host handshake must not rely on)."""
    import ctypes
    import socket
    clone_newuts = 0x04000000
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(clone_newuts) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWUTS)")
    socket.sethostname(name)


def store_secret(ctx):
    """The backend's process group built on a store of the test's: with
    MCL_SECRET, without it, with the store declared private, with one rank
    on "another host" (its own UTS namespace) or with a private directory
    of its own. Reports the error, if any, and what the store held (the
    group's entry, and with p2p that of the link a send opened)."""
    import datetime
    import os
    import tempfile

    import mcl.torch
    if ctx.args.get("allow"):
        mcl.torch.allow_secret_in_store()
    if ctx.args.get("other_host") == ctx.rank:
        _move_to_another_host(f"elsewhere-{ctx.rank}")
    if ctx.args.get("own_directory") == ctx.rank:
        os.environ["XDG_RUNTIME_DIR"] = tempfile.mkdtemp()
    error, link = None, None
    store = dist.FileStore(ctx.path("store"), ctx.size)
    try:
        group = mcl.torch.create_group(store, ctx.rank, ctx.size,
                                       datetime.timedelta(seconds=20))
        if ctx.args.get("p2p") and ctx.rank < 2:
            t = torch.full((4,), float(ctx.rank))
            if ctx.rank == 0:
                group.send([t], 1, 0).wait()
            else:
                group.recv([t], 0, 0).wait()
                assert t.tolist() == [0.0] * 4, t
            link = store.get("mcl/p2p/0-1").decode()
        group.barrier().wait()
        group.close()
    except Exception as e:  # noqa: BLE001 - the report says which
        error = f"{type(e).__name__}: {e}"
    stored = store.get("mcl/unique_id").decode()
    return {"error": error, "stored": stored, "link": link}


SCENARIOS = {"torch_collectives": collectives, "torch_train": train,
             "torch_bench": bench, "torch_stalled_peer": stalled_peer,
             "torch_monitored_barrier": monitored,
             "torch_store_secret": store_secret}
