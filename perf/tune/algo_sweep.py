#!/usr/bin/env python3
"""Checks the tuner against every algorithm, measured side by side.

Runs `mcl-perf COLLECTIVE --algo all` ROUNDS times: each run measures, size
by size, the tuner's choice (auto) and every algorithm forced, one after
the other in the same processes (this VM's speed drifts between runs, not
within one). Prints per size the median over the runs of each time, which
algorithm auto used, the best forced one, the forced median of auto's pick
over the best one's (pick/best: how good the tuner's choice is), and auto's
median over the same algorithm's forced (auto/same: 1.00 but for the
tuner's own cost and the noise of the machine, which on a shared VM reaches
10-50 % for a block of a few milliseconds; that is why the choice is judged
by the forced times). Exits 1 when pick/best exceeds --limit at any size
(the tuner's acceptance: 1.10).

  perf/tune/algo_sweep.py allreduce -np 2 [--rounds 3] [--limit 1.10]
      [-b 8] [-e 64M] [-f 2] [-n 20] [--bands 4K:20000,64K:2000,1M:200,8M:40]
      [-d TYPE] [--decode] [-J FILE] [--testbed SPEC] [-- EXTRA ARGS]
-d names the element type (default float); --decode sweeps what a decode
step of tensor-parallel inference runs: bf16 from 4 KiB to 64 KiB.
Environment (MCL_TRANSPORT, MCL_RDMA_PROVIDER, ...) passes through.
--testbed mesh4 runs one rank per host of tests/cluster's network-namespace
testbed of that cabling instead of -np (needs root).
"""

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys

ALGORITHMS = {
    "allreduce": ["ring", "tree", "direct", "halving_doubling"],
    "allgather": ["ring", "direct"],
    "broadcast": ["chain", "tree"],
    "reduce": ["chain", "tree"],
    "reducescatter": ["ring", "direct"],
}
HERE = os.path.dirname(os.path.abspath(__file__))
PERF = os.environ.get("MCL_PERF", os.path.join(HERE, "..", "..", "build", "bin", "mcl-perf"))


def parse_size(text):
    """"64K" -> 65536, as mcl-perf reads sizes."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.upper().rstrip("B")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def run_perf(cmd, args, round_index):
    """rank 0's output of one mcl-perf job: forked locally (-np), or one
    process per host of a network-namespace testbed."""
    if not args.testbed:
        if args.np:
            cmd = cmd + ["-np", str(args.np)]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        if run.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{run.stdout}\n{run.stderr}")
        return run.stdout
    bed = args.bed
    hosts = len(bed.describe()["hosts"])
    procs = []
    for rank in range(hosts):
        env = {"MCL_RANK": str(rank), "MCL_WORLD_SIZE": str(hosts),
               "MCL_ROOT": f"10.78.0.1:{29900 + round_index}",
               "MCL_SECRET": secrets.token_hex(16)}
        procs.append(bed.exec(rank, cmd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True))
    outs = [p.communicate(timeout=3600)[0] for p in procs]
    for rank, p in enumerate(procs):
        if p.returncode != 0:
            sys.exit(f"rank {rank} of {' '.join(cmd)} failed:\n{outs[rank]}")
    return outs[0]


def size_bands(args):
    """[(low, high, iterations)]: the sizes -b/-e/-f walk through, cut where
    --bands says, each band with its own iteration count (a measurement of a
    few hundred microseconds is mostly noise on a shared VM), the sizes past
    the last band with -n."""
    sizes, size = [], parse_size(args.minbytes)
    while size <= parse_size(args.maxbytes):
        sizes.append(size)
        size = size * args.factor if args.factor > 1 else size + 1
    limits = []
    for band in filter(None, args.bands.split(",")):
        limit, iters = band.split(":")
        limits.append((parse_size(limit), int(iters)))
    limits.append((float("inf"), args.iters))
    groups = {}
    for size in sizes:
        band = next(k for k, (limit, _) in enumerate(limits) if size <= limit)
        groups.setdefault(band, []).append(size)
    return [(group[0], group[-1], limits[band][1])
            for band, group in sorted(groups.items())]


def run_tables(collective, args, extra, round_index):
    """{variant: {bytes: time_us}} and {bytes: auto's algorithm} from one
    round: mcl-perf --algo all over each band of sizes. A time is the mean
    of the out-of-place and the in-place column (the same algorithm twice:
    half the noise)."""
    times, chosen = {}, {}
    output = ""
    for k, (low, high, iters) in enumerate(size_bands(args)):
        cmd = [PERF, collective, "--algo", "all", "-b", str(low), "-e",
               str(high), "-f", str(args.factor), "-c", "0", "-n", str(iters),
               "-w", str(args.warmup), "-d", args.datatype]
        output += run_perf(cmd + extra, args, 8 * round_index + k)
    for line in output.splitlines():
        cols = line.split()
        if not cols or not cols[0].isdigit():
            continue
        size, algo = int(cols[0]), cols[-1]
        t = (float(cols[5]) + float(cols[9])) / 2
        if algo.startswith("auto:"):
            chosen[size] = algo[5:]
            algo = "auto"
        times.setdefault(algo, {})[size] = t
    return times, chosen


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("collective", choices=sorted(ALGORITHMS))
    p.add_argument("-np", dest="np", type=int, default=0)
    p.add_argument("-b", dest="minbytes", default="8")
    p.add_argument("-e", dest="maxbytes", default="64M")
    p.add_argument("-f", dest="factor", type=int, default=2)
    p.add_argument("-n", dest="iters", type=int, default=20)
    p.add_argument("--bands", default="4K:20000,64K:2000,1M:200,8M:40",
                   help="SIZE:ITERS,...: sizes up to SIZE get ITERS "
                   "iterations; larger ones -n")
    p.add_argument("-w", dest="warmup", type=int, default=5)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--limit", type=float, default=1.10)
    p.add_argument("-d", dest="datatype", default="float")
    p.add_argument("--decode", action="store_true",
                   help="bf16 from 4 KiB to 64 KiB: a decode step's sizes")
    p.add_argument("-J", dest="json")
    p.add_argument("--testbed")
    args, extra = p.parse_known_args()
    extra = [a for a in extra if a != "--"]
    if args.decode:
        args.datatype, args.minbytes, args.maxbytes = "bfloat16", "4K", "64K"
    variants = ["auto"] + ALGORITHMS[args.collective]
    args.bed = None
    if args.testbed:
        sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "cluster"))
        from testbed import Testbed  # noqa: E402
        args.bed = Testbed(args.testbed, name="mcl-sweep", lan=True)
        args.bed.__enter__()
    try:
        return sweep(args, extra, variants)
    finally:
        if args.bed:
            args.bed.__exit__(None, None, None)


def sweep(args, extra, variants):
    times = {v: {} for v in variants}
    chosen = {}
    for round_index in range(args.rounds):
        run, uses = run_tables(args.collective, args, extra, round_index)
        for size, algo in uses.items():
            chosen.setdefault(size, set()).add(algo)
        for v in variants:
            for size, t in run[v].items():
                times[v].setdefault(size, []).append(t)
    header = f"{'size':>10} {'auto':>9} {'(uses)':>17}" + "".join(
        f" {a:>16}" for a in ALGORITHMS[args.collective]) + f" {'best':>16} {'pick/best':>9} {'auto/same':>9}"
    print(header)
    worst = 0.0
    report = []
    for size in sorted(times["auto"]):
        med = {v: statistics.median(times[v][size]) for v in variants}
        best = min(ALGORITHMS[args.collective], key=lambda a: med[a])
        uses = "/".join(sorted(chosen[size]))
        # The tuner's choice, timed forced (one algorithm per size: a
        # choice that changed between runs is judged by auto's own time).
        pick = med.get(uses, med["auto"])
        ratio = pick / med[best] if med[best] > 0 else 1.0
        worst = max(worst, ratio)
        # Auto against the same algorithm forced: apart from noise, 1.00.
        same = med["auto"] / med[uses] if med.get(uses, 0) > 0 else None
        print(f"{size:>10} {med['auto']:>9.2f} {uses:>17}" + "".join(
            f" {med[a]:>16.2f}" for a in ALGORITHMS[args.collective]) +
            f" {best:>16} {ratio:>9.2f} {'-' if same is None else f'{same:.2f}':>9}" +
            ("  <-- over the limit" if ratio > args.limit else ""))
        report.append({"bytes": size, "median_us": med, "auto_uses": uses,
                       "best": best, "ratio": ratio, "auto_over_same": same})
    print(f"# worst pick/best {worst:.2f} (limit {args.limit:.2f}), "
          f"medians of {args.rounds} runs, each measuring all side by side")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"collective": args.collective, "np": args.np,
                       "datatype": args.datatype, "extra": extra,
                       "rows": report, "worst": worst}, f, indent=1)
    return 1 if worst > args.limit else 0


if __name__ == "__main__":
    sys.exit(main())
