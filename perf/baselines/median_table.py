#!/usr/bin/python3
"""The table the compare scripts end with: per size, the median over rounds
of mcl's time and a peer library's, their ratio, and nccl-tests' all-reduce
busbw of each.

  median_table.py WORKDIR ROUNDS NRANKS PEER_NAME
reads WORKDIR/mcl.<r> and WORKDIR/<peer>.<r> ("bytes time_us" lines)."""

import statistics
import sys


def load(work, name, rounds):
    rows = {}
    for r in range(1, rounds + 1):
        for line in open(f"{work}/{name}.{r}"):
            size, us = line.split()
            rows.setdefault(int(size), []).append(float(us))
    return {size: statistics.median(v) for size, v in rows.items()}


def main():
    work, rounds, n, peer = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    mcl, other = load(work, "mcl", rounds), load(work, peer, rounds)
    label = {"mpi": "openmpi", "gloo": "gloo"}.get(peer, peer)
    print(f"{'bytes':>10} {'mcl us':>10} {label + ' us':>11} {'mcl/' + peer:>8}"
          f" {'mcl busbw':>10} {peer + ' busbw':>10}")
    for size in sorted(mcl):
        if size not in other:
            continue
        bus = lambda t: 2 * (n - 1) / n * size / t / 1e3  # GB/s
        print(f"{size:>10} {mcl[size]:>10.2f} {other[size]:>11.2f}"
              f" {mcl[size] / other[size]:>8.2f} {bus(mcl[size]):>10.2f}"
              f" {bus(other[size]):>10.2f}")


if __name__ == "__main__":
    main()
