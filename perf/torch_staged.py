"""What a staged all-reduce costs: "mcl" on a tensor of a device that is
not the CPU goes through host buffers of its own (a copy to the host, mcl's
all-reduce on mclMemAlloc memory, a copy back). Times each part and the
whole, 2 ranks, median of --iterations, so that the whole can be held
against the sum of its parts.

The device: --device cuda where there is one, else the tests' PrivateUse1
device (tests/python/torch_device, built here with torch's extension
tooling: its copies unscramble bytes one by one, so they are slower than a
real device's; the parts are measured on it all the same).

    PYTHONPATH=build/bindings/python /usr/bin/python3 perf/torch_staged.py
        [--bytes 64M] [--iterations 20] [--device privateuseone|cuda]"""

import argparse
import os
import statistics
import tempfile
import time

from torch_ranks import run_ranks

HERE = os.path.dirname(os.path.abspath(__file__))


def device_module():
    """tests/python/torch_device's loader of the tests' device."""
    import sys
    sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))
    from torch_device import device_module as module
    return module


def device_module_dir():
    """Builds the tests' device (once) and returns where its module is."""
    build = os.path.join(tempfile.gettempdir(), "mcl-perf-torch-device")
    os.makedirs(build, exist_ok=True)
    return device_module().build(build, optimize="-O2")


def open_device(kind, module_dir, rank):
    import torch
    if kind == "cuda":
        return torch.device("cuda", rank % torch.cuda.device_count()), \
            torch.cuda.synchronize
    return device_module().open_device(module_dir)


def median_seconds(call, iterations, before=None):
    times = []
    for _ in range(iterations):
        if before is not None:
            before()
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def rank_main(rank, ranks, store, args, module_dir, out):
    import torch
    import torch.distributed as dist
    import mcl.torch  # noqa: F401 - registers "mcl"
    device, synchronize = open_device(args.device, module_dir, rank)
    dist.init_process_group("mcl", init_method="file://" + store, rank=rank,
                            world_size=ranks)
    n = args.bytes // 4
    on_device = torch.ones(n).to(device)
    host = torch.ones(n)
    # mcl's own time on the memory the backend stages through (mclMemAlloc,
    # which same-host ranks reduce in place), as mcl-perf -R 1 measures it.
    from mcl import _mcl
    shared = torch.frombuffer(_mcl.SharedMemory(args.bytes),
                              dtype=torch.float32)
    shared.fill_(1.0)
    dist.all_reduce(on_device)  # the staging buffer is made here
    parts = {
        # The copies to and from mclMemAlloc memory, as the backend's.
        "copy to host": median_seconds(
            lambda: shared.copy_(on_device), args.iterations, synchronize),
        "copy to device": median_seconds(
            lambda: (on_device.copy_(shared), synchronize()),
            args.iterations),
        "mcl all_reduce (cpu tensor)": median_seconds(
            lambda: dist.all_reduce(host), args.iterations, dist.barrier),
        "mcl all_reduce (mclMemAlloc)": median_seconds(
            lambda: dist.all_reduce(shared), args.iterations, dist.barrier),
        "staged all_reduce (device tensor)": median_seconds(
            lambda: (dist.all_reduce(on_device), synchronize()),
            args.iterations, dist.barrier),
    }
    dist.destroy_process_group()
    if rank == 0:
        out.put(parts)


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text[-1].upper() in units:
        return int(text[:-1]) * units[text[-1].upper()]
    return int(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bytes", type=parse_size, default=64 << 20)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--device", choices=("privateuseone", "cuda"),
                        default="privateuseone")
    args = parser.parse_args()
    module_dir = device_module_dir() if args.device != "cuda" else None
    parts = run_ranks(rank_main, 2, (args, module_dir))
    print(f"# {args.bytes} bytes, 2 ranks, {args.device}, median of "
          f"{args.iterations} (ms); mcl transport "
          f"{os.environ.get('MCL_TRANSPORT', 'auto')}")
    for name, seconds in parts.items():
        print(f"{name:>36} {seconds * 1e3:>9.2f}")
    whole = parts["staged all_reduce (device tensor)"]
    summed = (parts["copy to host"] + parts["copy to device"] +
              parts["mcl all_reduce (mclMemAlloc)"])
    print(f"{'two copies + mcl (mclMemAlloc)':>36} {summed * 1e3:>9.2f}  "
          f"(staged / parts: {whole / summed:.2f})")


if __name__ == "__main__":
    main()
