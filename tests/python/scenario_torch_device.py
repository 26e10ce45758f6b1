"""Rank side of test_torch_device.py: the collectives of the "mcl" backend
on tensors of a device that is not the CPU (torch_device/, a PrivateUse1
device whose memory is scrambled and whose fill_ runs later on a queue of
its own), and on CUDA where there is one. Each value is filled on the
device just before the call, so a missing copy or a missing
synchronization gives a wrong value."""

import os

import torch
import torch.distributed as dist

from mcl.torch import BACKEND  # the import registers the backend
from scenario_torch import Checks, _expect_refusal
from torch_device import device_module


def load_test_device():
    """The test device, built by the test (MCLTEST_TORCH_DEVICE_DIR)."""
    return device_module.open_device(os.environ["MCLTEST_TORCH_DEVICE_DIR"])[0]


def _filled(value, n, device):
    t = torch.zeros(n).to(device)
    t.fill_(float(value))  # later, on the device's queue
    return t


def _check_collectives(ctx, checks, device):
    r, n = ctx.rank, ctx.size
    total = n * (n + 1) / 2
    t = _filled(r + 1, 5, device)
    dist.all_reduce(t)
    checks.equal("all_reduce", t.cpu().tolist(), [total] * 5)

    t = _filled(r + 1, 3, device)
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    checks.equal("async all_reduce", t.cpu().tolist(), [total] * 3)

    t = _filled(r + 1, 2, device)
    future = dist.all_reduce(t, async_op=True).get_future()
    value = future.wait()
    checks.equal("future", [x.cpu().tolist() for x in value],
                 [[total] * 2])
    checks.equal("future's tensor is the caller's",
                 value[0].device.type, device.type)

    t = _filled(r + 10, 4, device)
    dist.broadcast(t, src=n - 1)
    checks.equal("broadcast", t.cpu().tolist(), [float(n - 1 + 10)] * 4)

    out = torch.zeros(2 * n).to(device)
    dist.all_gather_into_tensor(out, _filled(r, 2, device))
    checks.equal("all_gather_into_tensor", out.cpu().tolist(),
                 [float(i) for i in range(n) for _ in range(2)])

    outs = [torch.zeros(3).to(device) for _ in range(n)]
    dist.all_gather(outs, _filled(r * 2, 3, device))
    checks.equal("all_gather", [o.cpu().tolist() for o in outs],
                 [[float(i * 2)] * 3 for i in range(n)])

    mine = torch.zeros(2).to(device)
    dist.reduce_scatter_tensor(mine, _filled(r + 1, 2 * n, device))
    checks.equal("reduce_scatter_tensor", mine.cpu().tolist(), [total] * 2)

    got = torch.zeros(n).to(device)
    sent = torch.arange(n, dtype=torch.float32) + 100 * r
    dist.all_to_all_single(got, sent.to(device))
    checks.equal("all_to_all_single", got.cpu().tolist(),
                 [float(100 * i + r) for i in range(n)])

    outs = torch.zeros(2).to(device)
    dist.reduce_scatter(outs, [_filled(r + 1, 2, device) for _ in range(n)])
    checks.equal("reduce_scatter (list)", outs.cpu().tolist(), [total] * 2)

    # Splits of any size: block j of rank r holds j + 1 rows of 10 r + j.
    sent = torch.cat([torch.full((j + 1,), float(10 * r + j))
                      for j in range(n)]).to(device)
    got = torch.zeros(n * (r + 1)).to(device)
    work = dist.all_to_all_single(got, sent, [r + 1] * n,
                                  [j + 1 for j in range(n)], async_op=True)
    other = _filled(1, 2, device)  # a staging buffer of its own meanwhile
    dist.all_reduce(other, async_op=True).wait()
    work.wait()
    checks.equal("all_to_all_single uneven", got.cpu().tolist(),
                 [float(10 * i + r) for i in range(n) for _ in range(r + 1)])

    # Two async calls on one tensor run in issue order, each on what the
    # one before it left.
    t = _filled(r + 1, 2, device)
    first = dist.all_reduce(t, async_op=True)
    second = dist.all_reduce(t, async_op=True)
    second.wait()
    first.wait()
    checks.equal("two async calls on one tensor", t.cpu().tolist(),
                 [n * total] * 2)

    # A future's callback that issues another call and waits for it (as
    # DDP's PowerSGD hook does) runs to the end.
    def then(fut):
        inner = _filled(1, 1, device)
        dist.all_reduce(inner, async_op=True).get_future().wait()
        return [x.cpu() for x in fut.value()] + [inner.cpu()]
    t = _filled(r + 1, 1, device)
    value = dist.all_reduce(t, async_op=True).get_future().then(then).wait()
    checks.equal("a callback that waits for another call",
                 [x.tolist() for x in value], [[total], [float(n)]])

    if n >= 2 and r < 2:
        t = _filled(7 if r == 0 else 0, 3, device)
        if r == 0:
            dist.send(t, 1)
        else:
            dist.recv(t, 0)
            checks.equal("send/recv", t.cpu().tolist(), [7.0] * 3)


def _check_refusals(ctx, checks, device):
    n = ctx.size
    _expect_refusal(checks, "a call mixing devices",
                    lambda: dist.all_gather_into_tensor(
                        torch.zeros(n).to(device), torch.zeros(1)),
                    "cpu", "one device")
    t = _filled(1, 2, device)
    dist.all_reduce(t)
    checks.equal("usable after refusals", t.cpu().tolist(), [float(n)] * 2)


def device_collectives(ctx):
    device = (torch.device("cuda", ctx.rank % torch.cuda.device_count())
              if ctx.args.get("cuda") else load_test_device())
    dist.init_process_group(BACKEND, init_method="file://" + ctx.path("store"),
                            rank=ctx.rank, world_size=ctx.size)
    checks = Checks()
    _check_collectives(ctx, checks, device)
    _check_refusals(ctx, checks, device)
    # A work waited for after its group is gone.
    t = _filled(1, 2, device)
    work = dist.all_reduce(t, async_op=True)
    dist.barrier()
    dist.destroy_process_group()
    work.wait()
    checks.equal("waited after the group is gone", t.cpu().tolist(),
                 [float(ctx.size)] * 2)
    return checks.report()


SCENARIOS = {"torch_device_collectives": device_collectives}
