#!/usr/bin/python3
"""Does a second cable pay, and does a mesh run at its cables' speed? 64 MiB
all-reduce over TCP between two hosts (network namespaces) joined by one
cable and then by two, and among four hosts cabled as a full mesh, each
cable capped at RATE Mbit/s with tbf so the cable, not the CPU, is the
limit, as on real Thunderbolt. Prints each busbw and its ratio to one
cable's (issue 49: two cables at least 1.9x, the mesh at least 1x). Needs
root and a build.

  perf/cluster/doubled_cable.py [RATE_MBIT] [ROUNDS]
"""

import os
import re
import secrets
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "cluster"))
from testbed import Testbed  # noqa: E402

PERF = os.path.join(ROOT, "build", "bin", "mcl-perf")
SECRET = secrets.token_hex(16)  # random: a secret in a script is public


def busbw(spec, rate, port, ranks=2):
    # Two hosts meet on their cable; more meet on a LAN (uncapped, and only
    # for the rendezvous: the data takes the cables).
    lan = ranks > 2
    root = f"10.78.0.1:{port}" if lan else f"10.77.0.1:{port}"
    with Testbed(spec, name="mcl-bw-" + spec, rate=rate, lan=lan) as bed:
        procs = []
        for rank in range(ranks):
            env = {"MCL_RANK": str(rank), "MCL_WORLD_SIZE": str(ranks),
                   "MCL_ROOT": root, "MCL_SECRET": SECRET,
                   "MCL_TIMEOUT": "60"}
            procs.append(bed.exec(rank, [PERF, "allreduce", "-b", "64M",
                                         "-e", "64M", "-n", "5", "-w", "1",
                                         "-c", "0"], env=env,
                                  stdout=subprocess.PIPE, text=True))
        outs = [p.communicate(timeout=600)[0] for p in procs]
        for rank, p in enumerate(procs):
            if p.returncode != 0:
                sys.exit(f"{spec}: rank {rank} failed ({p.returncode}):\n"
                         f"{outs[rank]}")
        row = [l for l in outs[0].splitlines()
               if re.match(r"^\s+67108864", l)]
        return float(row[0].split()[7])  # out-of-place busbw, GB/s


def main():
    rate = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    one, two, mesh = [], [], []
    for r in range(rounds):
        one.append(busbw("pair", rate, 29800 + 3 * r))
        two.append(busbw("pair2", rate, 29801 + 3 * r))
        mesh.append(busbw("mesh4", rate, 29802 + 3 * r, ranks=4))
    a, b, m = (statistics.median(x) for x in (one, two, mesh))
    print(f"cable cap {rate} Mbit/s, 64 MiB all-reduce, median of {rounds}")
    print(f"one cable      : busbw {a:.3f} GB/s  {one}")
    print(f"two cables     : busbw {b:.3f} GB/s  {two}  {b / a:.2f}x one "
          f"cable (target 1.9x: {'MET' if b >= 1.9 * a else 'MISS'})")
    print(f"4 hosts, mesh  : busbw {m:.3f} GB/s  {mesh}  {m / a:.2f}x one "
          f"cable (target 1x: {'MET' if m >= a else 'MISS'})")


if __name__ == "__main__":
    main()
