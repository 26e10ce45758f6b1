"""Rank side of the failure tests: a peer that dies, a peer that never
calls (timeout), abort() from another thread, Ctrl-C in a blocking call
(with Python's handler, and with the program's own), and init waiting for
a rank that never comes. Ranks that only stand by wait for a file
(ctx.path("done")) the rank under test writes when it has its answer, then
abort: they must not end (and so fail) the communicator before the rank
under test has seen what the test is about."""

import os
import signal
import threading
import time

import numpy as np

import mcl

from rank_helpers import (describe_error, outcome_of, still_works, touch,
                          wait_for_file)


def _stand_by(ctx, comm):
    wait_for_file(ctx.path("done"), timeout=90)
    comm.abort()
    return {"stood_by": True}


def _failure_report(comm, call):
    """Times call() until it raises; then what the broken communicator
    says."""
    start = time.monotonic()
    try:
        call()
        report = {"error": None}
    except Exception as exc:  # noqa: BLE001 (the test judges it)
        report = {"error": describe_error(exc)}
    report["elapsed"] = time.monotonic() - start
    try:  # the error that broke it, returned (not raised)
        report["async_error"] = type(comm.async_error()).__name__
    except Exception as exc:  # noqa: BLE001 (the test judges it)
        report["async_error"] = f"raised {exc!r}"
    # A broken communicator stays broken: the next call fails too.
    report["next_call"] = outcome_of(lambda: comm.all_reduce(np.ones(4)))
    comm.abort()
    report["closed_after_abort"] = comm.closed
    return report


def peer_dies(ctx):
    """args: victim (rank), how: "exit" or "sigkill" (between two calls) or
    "sigkill_mid_call" (from a timer, while all-reduces run). Everyone
    completes one all-reduce; then every rank runs all-reduces until one
    fails, and the victim dies."""
    comm = ctx.init()
    first = comm.all_reduce(np.ones(1 << 14, np.float32))
    assert (first == comm.size).all()
    if ctx.rank == ctx.args["victim"]:
        if ctx.args["how"] == "sigkill_mid_call":
            threading.Timer(0.3, os.kill,
                            (os.getpid(), signal.SIGKILL)).start()
        elif ctx.args["how"] == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        else:
            os._exit(17)  # no cleanup at all, as a crash

    def until_failure():
        for _ in range(100000):
            comm.all_reduce(np.ones(1 << 16, np.float32))
    return _failure_report(comm, until_failure)


def peer_never_calls(ctx):
    """Rank 0 all-reduces; the others never do: rank 0 times out after
    init's timeout (args["timeout"])."""
    comm = ctx.init(timeout=ctx.args["timeout"])
    if ctx.rank != 0:
        return _stand_by(ctx, comm)
    report = _failure_report(comm, lambda: comm.all_reduce(np.ones(64)))
    touch(ctx.path("done"))
    return report


def _all_reduce_waiting(comm, wait):
    """An all-reduce that waits for peers: as one blocking call, or (wait
    "work") as async work whose wait() blocks."""
    if wait == "work":
        comm.all_reduce(np.ones(64), async_op=True).wait()
    else:
        comm.all_reduce(np.ones(64))


def abort_from_thread(ctx):
    """Rank 0 waits in an all-reduce (args["wait"]: "blocking" or "work",
    an async Work's wait()) that the others never join; another thread
    aborts after 1 s, which must end the wait with an mcl.Error."""
    comm = ctx.init(timeout=60)
    if ctx.rank != 0:
        return _stand_by(ctx, comm)
    # The abort's moment is taken in its own thread: the wait it ends is
    # measured from there, however late either thread runs.
    aborted = []
    aborter = threading.Timer(
        1.0, lambda: (aborted.append(time.monotonic()), comm.abort()))
    start = time.monotonic()
    aborter.start()
    try:
        _all_reduce_waiting(comm, ctx.args["wait"])
        report = {"error": None}
    except Exception as exc:  # noqa: BLE001 (the test judges it)
        report = {"error": describe_error(exc)}
    ended = time.monotonic()
    report["elapsed"] = ended - start
    aborter.join()
    report["after_abort"] = ended - aborted[0] if aborted else None
    report["closed"] = comm.closed
    report["next_call"] = outcome_of(lambda: comm.all_reduce(np.ones(4)))
    touch(ctx.path("done"))
    return report


def interrupted(ctx):
    """Rank 0 blocks in an all-reduce (or an async Work's wait(), per
    args["wait"]) that the others never join, after writing
    ctx.path("blocked"); the test sends it SIGINT. It reports, then lets the
    KeyboardInterrupt end the process as an uncaught one would."""
    comm = ctx.init(timeout=ctx.args["timeout"])
    if ctx.rank != 0:
        return _stand_by(ctx, comm)
    touch(ctx.path("blocked"))
    start = time.monotonic()
    try:
        _all_reduce_waiting(comm, ctx.args["wait"])
    except KeyboardInterrupt:
        ctx.report({
            "interrupted": True, "elapsed": time.monotonic() - start,
            "closed": comm.closed,
            "next_call": outcome_of(lambda: comm.all_reduce(np.ones(4))),
        })
        raise
    finally:
        touch(ctx.path("done"))
    return {"interrupted": False, "elapsed": time.monotonic() - start}


def sigint_with_own_handler(ctx):
    """A program with a SIGINT handler of its own keeps its communicator:
    rank 0 blocks in an all-reduce (after writing ctx.path("blocked")), the
    test sends SIGINT, then writes ctx.path("go"), and rank 1 joins: the
    call completes, and the handler ran."""
    comm = ctx.init(timeout=60)
    calls = []
    if ctx.rank == 0:
        signal.signal(signal.SIGINT, lambda signum, frame: calls.append(1))
        touch(ctx.path("blocked"))
    else:
        wait_for_file(ctx.path("go"), timeout=60)
    got = comm.all_reduce(np.full(64, ctx.rank + 1.0))
    report = {"handler_calls": len(calls), "closed": comm.closed,
              "right": bool((got == 3.0).all()),
              "still_works": still_works(comm)}
    comm.close()
    return report


def read_after_a_call(ctx):
    """After an mcl call (which puts mcl's SIGINT handler in front of
    Python's), a blocking os.read that nothing will satisfy: Ctrl-C must
    still end it (the read returns EINTR, as without mcl)."""
    comm = ctx.init()
    comm.all_reduce(np.ones(4))
    reader, _writer = os.pipe()
    touch(ctx.path("blocked"))
    os.read(reader, 1)
    return {"read_returned": True}


def lonely_init(ctx):
    """Rank 0 of a world of 2 whose rank 1 never comes: init waits for it,
    until its timeout (args["timeout"]) ends the wait with mcl.TimeoutError,
    or the test's SIGINT (sent once ctx.path("blocked") exists) ends it
    with a KeyboardInterrupt."""
    touch(ctx.path("blocked"))
    start = time.monotonic()
    try:
        mcl.init(0, 2, ctx.unique_id_text(), timeout=ctx.args["timeout"])
        report = {"error": None}
    except mcl.Error as exc:
        report = {"error": describe_error(exc)}
    except KeyboardInterrupt:
        ctx.report({"interrupted": True,
                    "elapsed": time.monotonic() - start})
        raise
    report["elapsed"] = time.monotonic() - start
    return report


SCENARIOS = {"peer_dies": peer_dies, "peer_never_calls": peer_never_calls,
             "abort_from_thread": abort_from_thread,
             "interrupted": interrupted,
             "sigint_with_own_handler": sigint_with_own_handler,
             "read_after_a_call": read_after_a_call,
             "lonely_init": lonely_init}
