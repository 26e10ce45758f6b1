"""Rank side of the point-to-point tests of the PyTorch backend
(test_torch_p2p.py): tags, receives from any rank, receives posted before
the sends on both sides, and what fails: a tag that never comes, sizes
that differ, bad peers and tags."""

import datetime
import time

import torch
import torch.distributed as dist

from mcl.torch import BACKEND, ProcessGroupMCL  # registers the backend
from rank_helpers import touch, wait_for_file
from scenario_torch import Checks, _expect_refusal


def _init(ctx, timeout=None):
    kwargs = {} if timeout is None else {
        "timeout": datetime.timedelta(seconds=timeout)}
    dist.init_process_group(BACKEND, init_method="file://" + ctx.path("p2p"),
                            rank=ctx.rank, world_size=ctx.size, **kwargs)


def matching(ctx):
    """Needs 3 ranks."""
    _init(ctx)
    r, n = ctx.rank, ctx.size
    checks = Checks()

    # Tags out of order: rank 0 sends tag 5 then tag 7; rank 1 asks for 7
    # first. Within a tag, in order.
    if r == 0:
        dist.send(torch.full((4,), 5.0), 1, tag=5)
        dist.send(torch.full((2,), 7.0), 1, tag=7)
        for value in (1.0, 2.0, 3.0):
            dist.send(torch.full((3,), value), 1, tag=2)
    elif r == 1:
        seven, five = torch.empty(2), torch.empty(4)
        dist.recv(seven, 0, tag=7)
        dist.recv(five, 0, tag=5)
        checks.equal("tags out of order", (seven.tolist(), five.tolist()),
                     ([7.0] * 2, [5.0] * 4))
        got = []
        for _ in range(3):
            t = torch.empty(3)
            dist.recv(t, 0, tag=2)
            got.append(t[0].item())
        checks.equal("in order within a tag", got, [1.0, 2.0, 3.0])

    # From any rank: every other rank sends its rank to rank 0, tag 4.
    if r == 0:
        senders = []
        for _ in range(n - 1):
            t = torch.empty(2)
            source = dist.recv(t, tag=4)
            senders.append((source, t[0].item()))
        checks.equal("recv from any rank", sorted(senders),
                     [(i, float(i)) for i in range(1, n)])
    else:
        dist.send(torch.full((2,), float(r)), 0, tag=4)

    # Receives posted first on both sides of every pair of the ring, with
    # messages larger than any transport's buffering.
    size = 1 << 20
    got = torch.empty(size)
    receive = dist.irecv(got, (r - 1) % n, tag=11)
    time.sleep(0.2)  # every rank is waiting before anyone sends
    send = dist.isend(torch.full((size,), float(r)), (r + 1) % n, tag=11)
    receive.wait()
    send.wait()
    checks.equal("irecv before isend on every rank",
                 (got[0].item(), got[-1].item()),
                 (float((r - 1) % n), float((r - 1) % n)))

    # batch_isend_irecv on CPU, and a non-contiguous receive.
    column = torch.zeros(3, 2)
    ops = [dist.P2POp(dist.isend, torch.full((3,), r + 0.5), (r + 1) % n),
           dist.P2POp(dist.irecv, column[:, 1], (r - 1) % n)]
    for work in dist.batch_isend_irecv(ops):
        work.wait()
    checks.equal("batch_isend_irecv into a column", column[:, 1].tolist(),
                 [(r - 1) % n + 0.5] * 3)

    # PyTorch 2's coalescing manager with a device (as batch_isend_irecv
    # on CUDA uses it): the sends and receives in it, one handle for all.
    manager = getattr(dist, "_coalescing_manager", None)
    native = not isinstance(dist.distributed_c10d._get_default_group(),
                            ProcessGroupMCL)
    if manager is not None and native and \
            not torch.__version__.startswith("1."):
        got = torch.zeros(2)
        with manager(device=torch.device("cpu"), async_ops=True) as cm:
            dist.isend(torch.full((2,), r + 0.25), (r + 1) % n, tag=13)
            dist.irecv(got, (r - 1) % n, tag=13)
        cm.wait()
        checks.equal("a batch of sends and receives", got.tolist(),
                     [(r - 1) % n + 0.25] * 2)

    # Collectives and point-to-point do not wait on each other: a send
    # still in flight when both ranks all-reduce.
    if r == 0:
        pending = dist.isend(torch.ones(8), 1, tag=12)
    t = torch.ones(2)
    dist.all_reduce(t)
    if r == 0:
        pending.wait()
    elif r == 1:
        late = torch.empty(8)
        dist.recv(late, 0, tag=12)
        checks.equal("a send across a collective", late.tolist(), [1.0] * 8)
    checks.equal("the collective beside it", t.tolist(), [float(n)] * 2)

    group = dist.distributed_c10d._get_default_group()
    _expect_refusal(checks, "send to this rank",
                    lambda: group.send([torch.ones(1)], r, 0), "this rank")
    _expect_refusal(checks, "recv from a rank not in the group",
                    lambda: group.recv([torch.ones(1)], n + 5, 0),
                    f"src rank {n + 5}", "not in the group")
    if isinstance(group, ProcessGroupMCL):
        # The Python backend sees the tag as Python passed it; torch's
        # bindings narrow it to a C int before a C++ backend (Gloo's too)
        # sees it.
        _expect_refusal(checks, "a tag beyond 32 bits",
                        lambda: group.send([torch.ones(1)], (r + 1) % n,
                                           2**40),
                        "32-bit")
    python_backend = isinstance(group, ProcessGroupMCL)
    dist.barrier()
    dist.destroy_process_group()
    return dict(checks.report(), python_backend=python_backend)


def failures(ctx):
    """2 ranks, a 2 s timeout: a receive whose tag never comes times out
    naming it and what did come; a message of another size fails the
    receive; the pair still works afterwards."""
    _init(ctx, timeout=2)
    r = ctx.rank
    report = {}
    if r == 0:
        dist.send(torch.ones(4), 1, tag=8)
        dist.send(torch.ones(6), 1, tag=3)
        dist.send(torch.full((2,), 9.0), 1, tag=1)
    else:
        start = time.monotonic()
        try:
            dist.recv(torch.empty(4), 0, tag=9)
            report["never"] = None
        except RuntimeError as e:
            report["never"] = str(e)
            report["never_seconds"] = time.monotonic() - start
            report["never_is_dist_error"] = isinstance(
                e, getattr(dist, "DistBackendError", RuntimeError))
        try:
            dist.recv(torch.empty(5), 0, tag=3)
            report["size"] = None
        except RuntimeError as e:
            report["size"] = str(e)
        t = torch.empty(2)
        dist.recv(t, 0, tag=1)
        report["after"] = t.tolist()
        touch(ctx.path("received"))
    if r == 0:  # outside any timed wait of the group: rank 1 takes 2 s
        wait_for_file(ctx.path("received"), timeout=30)
    dist.destroy_process_group()
    return report




def peer_dies(ctx):
    """3 ranks, a 30 s timeout: rank 1 sends one message and dies. Rank
    0's next receive from it fails at once naming it; a receive from any
    rank still takes rank 2's message."""
    import os
    _init(ctx, timeout=30)
    r = ctx.rank
    report = {}
    if r == 1:
        dist.send(torch.ones(2), 0, tag=1)
        time.sleep(0.5)
        os._exit(17)
    if r == 2:
        wait_for_file(ctx.path("rank1-failed"), timeout=60)
        dist.send(torch.full((2,), 2.0), 0, tag=2)
    if r == 0:
        t = torch.empty(2)
        dist.recv(t, 1, tag=1)
        report["first"] = t.tolist()
        start = time.monotonic()
        try:
            dist.recv(t, 1, tag=1)
            report["second"] = None
        except RuntimeError as e:
            report["second"] = str(e)
        report["seconds"] = time.monotonic() - start
        touch(ctx.path("rank1-failed"))
        source = dist.recv(t, tag=2)
        report["any"] = [source, t.tolist()]
        touch(ctx.path("done"))
    else:
        wait_for_file(ctx.path("done"), timeout=60)
    return report


SCENARIOS = {"torch_p2p_matching": matching,
             "torch_p2p_failures": failures,
             "torch_p2p_peer_dies": peer_dies}
