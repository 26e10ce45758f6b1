"""torch.distributed.all_reduce over "mcl" against "gloo": the same ranks,
the same float32 tensors, each backend in turn; the median time per call
at each size, in microseconds.

    PYTHONPATH=build/bindings/python /usr/bin/python3 perf/torch_allreduce.py
        [--ranks 2] [--iterations 200] [--sizes 8,1K,64K,1M,16M]

The ranks are processes of this host started here; mcl picks shared memory
between them (MCL_TRANSPORT=tcp to compare over loopback TCP, as Gloo
runs). Needs PyTorch (Debian: python3-torch)."""

import argparse
import multiprocessing
import os
import tempfile
import time


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text[-1].upper() in units:
        return int(text[:-1]) * units[text[-1].upper()]
    return int(text)


def rank_main(rank, ranks, backend, store, sizes, iterations, out):
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
            dist.all_reduce(t)
        times = []
        for _ in range(iterations):
            if nbytes >= (1 << 20):  # start together: large calls
                dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(t)
            times.append(time.perf_counter() - start)
        times.sort()
        medians.append(times[len(times) // 2] * 1e6)
    dist.destroy_process_group()
    if rank == 0:
        out.put(medians)


def run(backend, ranks, sizes, iterations):
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "store")
        procs = [context.Process(target=rank_main, args=(
            r, ranks, backend, store, sizes, iterations, out))
            for r in range(ranks)]
        for p in procs:
            p.start()
        medians = out.get(timeout=600)
        for p in procs:
            p.join(60)
            if p.exitcode != 0:
                raise SystemExit(f"{backend}: a rank exited {p.exitcode}")
    return medians


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--sizes", default="8,1K,64K,1M,16M")
    args = parser.parse_args()
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    results = {b: run(b, args.ranks, sizes, args.iterations)
               for b in ("mcl", "gloo")}
    print(f"# torch.distributed.all_reduce, {args.ranks} ranks, float32, "
          f"median of {args.iterations} (us); mcl transport "
          f"{os.environ.get('MCL_TRANSPORT', 'auto')}")
    print(f"{'bytes':>10} {'mcl':>10} {'gloo':>10} {'gloo/mcl':>9}")
    for i, nbytes in enumerate(sizes):
        m, g = results["mcl"][i], results["gloo"][i]
        print(f"{nbytes:>10} {m:>10.1f} {g:>10.1f} {g / m:>9.2f}")


if __name__ == "__main__":
    main()
