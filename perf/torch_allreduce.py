"""torch.distributed.all_reduce over "mcl" against "gloo": the same ranks,
the same float32 tensors, each backend in turn (mcl's C++ backend, then
its Python one with MCL_TORCH_BACKEND=python, then Gloo); the median time
per call at each size, in microseconds. With --op send_recv, a ping-pong instead:
rank 0 sends to rank 1 and receives it back (dist.send, dist.recv; the
time is the round trip), the other ranks idle.

    PYTHONPATH=build/bindings/python /usr/bin/python3 perf/torch_allreduce.py
        [--ranks 2] [--iterations 200] [--sizes 8,1K,64K,1M,16M]
        [--op all_reduce|send_recv]

The ranks are processes of this host started here; mcl picks shared memory
between them (MCL_TRANSPORT=tcp to compare over loopback TCP, as Gloo
runs). Needs PyTorch (Debian: python3-torch)."""

import argparse
import os
import time

from torch_ranks import run_ranks


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text[-1].upper() in units:
        return int(text[:-1]) * units[text[-1].upper()]
    return int(text)


def one_call(op, rank, t):
    """The operation timed: one all-reduce, or one ping-pong round trip."""
    import torch.distributed as dist
    if op == "all_reduce":
        dist.all_reduce(t)
    elif rank == 0:
        dist.send(t, 1)
        dist.recv(t, 1)
    elif rank == 1:
        dist.recv(t, 0)
        dist.send(t, 0)


def rank_main(rank, ranks, store, backend, sizes, iterations, op, out):
    import torch
    import torch.distributed as dist
    from mcl.torch import BACKEND  # the import registers it
    assert BACKEND == "mcl"

    dist.init_process_group(backend, init_method="file://" + store,
                            rank=rank, world_size=ranks)
    medians = []
    for nbytes in sizes:
        t = torch.ones(max(1, nbytes // 4))
        for _ in range(10):
            one_call(op, rank, t)
        times = []
        for _ in range(iterations):
            if nbytes >= (1 << 20):  # start together: large calls
                dist.barrier()
            start = time.perf_counter()
            one_call(op, rank, t)
            times.append(time.perf_counter() - start)
        times.sort()
        medians.append(times[len(times) // 2] * 1e6)
    dist.destroy_process_group()
    if rank == 0:
        out.put(medians)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--sizes", default="8,1K,64K,1M,16M")
    parser.add_argument("--op", choices=("all_reduce", "send_recv"),
                        default="all_reduce")
    args = parser.parse_args()
    if args.ranks < 2:
        parser.error("--ranks: at least 2")
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    columns = {"mcl": ("mcl", {}),
               "mcl-py": ("mcl", {"MCL_TORCH_BACKEND": "python"}),
               "gloo": ("gloo", {})}
    results = {name: run_ranks(rank_main, args.ranks,
                               (backend, sizes, args.iterations, args.op),
                               env, timeout=600)
               for name, (backend, env) in columns.items()}
    what = ("torch.distributed.all_reduce" if args.op == "all_reduce" else
            "torch.distributed send+recv round trip, ranks 0 and 1")
    print(f"# {what}, {args.ranks} ranks, float32, "
          f"median of {args.iterations} (us); mcl transport "
          f"{os.environ.get('MCL_TRANSPORT', 'auto')}; mcl: the C++ "
          "backend, mcl-py: the Python one")
    print(f"{'bytes':>10} {'mcl':>10} {'mcl-py':>10} {'gloo':>10} "
          f"{'gloo/mcl':>9}")
    for i, nbytes in enumerate(sizes):
        m, p, g = (results[c][i] for c in ("mcl", "mcl-py", "gloo"))
        print(f"{nbytes:>10} {m:>10.1f} {p:>10.1f} {g:>10.1f} "
              f"{g / m:>9.2f}")


if __name__ == "__main__":
    main()
