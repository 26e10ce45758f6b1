"""monitored_barrier for mcl.torch, as Gloo's: rank 0 waits for every other
rank to arrive and, when some do not within the timeout, fails naming them
(the first, or all with wait_all_ranks); the others learn rank 0's verdict.

It runs over the group's c10d store, not over mcl: a missing rank leaves
the communicator as it was, so the program can report and carry on."""

from __future__ import annotations

import datetime
import time
from typing import List

# How often rank 0 looks for late ranks: a barrier is for debugging hangs,
# not for speed, and the store may be a file.
_POLL_SECONDS = 0.005


def _seconds(timeout) -> float:
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    return float(timeout)


def _describe(missing: List[int], seconds: float) -> str:
    which = ", ".join(str(r) for r in missing)
    noun = "Rank" if len(missing) == 1 else "Ranks"
    return (f"mcl backend: monitored_barrier: {noun} {which} failed to pass "
            f"monitoredBarrier in {seconds * 1000:.0f} ms (Timed out after "
            f"{seconds:g} s)")


def monitored_barrier(store, rank: int, size: int, sequence: int, timeout,
                      wait_all_ranks: bool) -> None:
    """The barrier numbered `sequence` of this group. Raises RuntimeError
    naming the ranks that did not arrive (on rank 0), or saying that rank 0
    found some missing or did not answer (on the others)."""
    seconds = _seconds(timeout)
    if seconds <= 0:
        raise ValueError(f"mcl backend: monitored_barrier: timeout "
                         f"{timeout!r} must be positive")
    prefix = f"mcl/monitored_barrier/{sequence}/"
    verdict_key = prefix + "verdict"
    if rank != 0:
        store.add(f"{prefix}arrived/{rank}", 1)
        # Rank 0 may come up to `timeout` after this rank and then wait
        # up to `timeout` for the others.
        try:
            store.wait([verdict_key],
                       datetime.timedelta(seconds=2 * seconds))
        except RuntimeError as e:  # the store's own timeout error
            raise RuntimeError(
                f"mcl backend: monitored_barrier: rank 0 did not answer "
                f"within {2 * seconds:g} s (Timed out): {e}") from e
        verdict = store.get(verdict_key).decode()
        if verdict != "ok":
            raise RuntimeError(verdict)
        return
    deadline = time.monotonic() + seconds
    waiting = list(range(1, size))
    while waiting:
        # add(key, 0) reads a counter (PyTorch 1.x's stores have no check).
        waiting = [r for r in waiting
                   if store.add(f"{prefix}arrived/{r}", 0) == 0]
        if not waiting or time.monotonic() >= deadline:
            break
        time.sleep(_POLL_SECONDS)
    if not waiting:
        store.set(verdict_key, "ok")
        return
    missing = waiting if wait_all_ranks else waiting[:1]
    message = _describe(missing, seconds)
    store.set(verdict_key, message.replace(
        "monitored_barrier:", "monitored_barrier (reported by rank 0):", 1))
    raise RuntimeError(message)
