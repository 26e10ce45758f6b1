"""Starts the ranks of a perf/torch_*.py benchmark on this host: spawned
processes meeting through a FileStore, the environment given added to
theirs, and what rank 0 reports back."""

import multiprocessing
import os
import secrets
import tempfile


def run_ranks(rank_main, ranks, extra, env=None, timeout=900):
    """Runs rank_main(rank, ranks, store, *extra, out) on `ranks` spawned
    processes, with `env` added to the environment (and a random
    MCL_SECRET for the run unless one is set); returns what rank 0 put on
    `out`. Exits naming the backend's failure when a rank fails."""
    saved = dict(os.environ)
    os.environ.setdefault("MCL_SECRET", secrets.token_hex(16))
    os.environ.update(env or {})
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            store = os.path.join(tmp, "store")
            procs = [context.Process(target=rank_main,
                                     args=(r, ranks, store, *extra, out))
                     for r in range(ranks)]
            for p in procs:
                p.start()
            result = out.get(timeout=timeout)
            for p in procs:
                p.join(60)
                if p.exitcode != 0:
                    raise SystemExit(f"a rank exited {p.exitcode}")
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return result
