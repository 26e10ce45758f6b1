"""Rank side of the lifetime tests: joining (every form of unique id,
init_from_env, init's refusals), inspection, async Work, split, the
context manager and use after close."""

import gc

import numpy as np

import mcl

from rank_helpers import (Checks, describe_error, expect, outcome_of,
                          still_works, touch, wait_for_file)
from scenario_inputs import DLPackOnly


def basic(ctx):
    """Joins (as the launcher's id form says, with args["config"] passed to
    init) and reports what the communicator says about itself."""
    comm = ctx.init(**ctx.args.get("config", {}))
    x = np.array([ctx.rank, 1], np.int64)
    report = {
        "rank": comm.rank, "size": comm.size, "repr": repr(comm),
        "closed": comm.closed, "sum": comm.all_reduce(x).tolist(),
        "topology": comm.topology(),
        "algorithms": {c: comm.algorithm(c, 1 << 20) for c in (
            "all_reduce", "all_gather", "broadcast", "reduce",
            "reduce_scatter", "all_to_all")},
        "async_error": repr(comm.async_error()),
    }
    comm.close()
    report["closed_after_close"] = comm.closed
    return report


def init_refusals(ctx):
    """mcl.init's bad arguments, one process: each must be refused before
    any waiting. Then a world of one works."""
    cases = {
        "rank == size": lambda: mcl.init(1, 1, mcl.UniqueId()),
        "rank -1": lambda: mcl.init(-1, 2, mcl.UniqueId()),
        "size 0": lambda: mcl.init(0, 0, mcl.UniqueId()),
        "timeout 0": lambda: mcl.init(0, 1, mcl.UniqueId(), timeout=0),
        "timeout -5": lambda: mcl.init(0, 1, mcl.UniqueId(), timeout=-5),
        "transport bogus": lambda: mcl.init(0, 1, mcl.UniqueId(),
                                            transport="bogus"),
        "unique id garbage": lambda: mcl.init(0, 1, "garbage"),
    }
    report = {name: outcome_of(call) for name, call in cases.items()}

    checks = Checks()

    def world_of_one():
        with mcl.init(0, 1, mcl.UniqueId(), name="alone") as comm:
            x = np.arange(5, dtype=np.float64)
            problems = expect(comm.all_reduce(x, "avg"), x)
            problems += expect(comm.all_gather(x), x.reshape(1, 5))
            comm.barrier()
            return problems
    checks.run("world of one", world_of_one)
    report["world_of_one"] = checks.report()
    return report


# -- async Work -------------------------------------------------------------

def async_work(ctx):
    comm = ctx.init()
    rank, size = comm.rank, comm.size
    checks = Checks()

    def one_work():
        x = np.arange(1000, dtype=np.float64) + rank
        work = comm.all_reduce(x, async_op=True)
        problems = [] if isinstance(work, mcl.Work) else [f"got {work!r}"]
        got = work.result()
        if not work.is_completed():
            problems.append("not completed after result()")
        if work.wait() is not True:
            problems.append("wait() after completion is not True")
        if "completed" not in repr(work):
            problems.append(f"repr {work!r}")
        want = np.arange(1000, dtype=np.float64) * size + sum(range(size))
        return problems + expect(got, want)

    def many_in_flight():
        works = [comm.all_reduce(np.full(100, i + rank, np.int64),
                                 async_op=True) for i in range(16)]
        problems = []
        for i in reversed(range(16)):
            problems += expect(works[i].result(), np.full(
                100, i * size + sum(range(size)), np.int64), f"work {i}")
        return problems

    def every_operation():
        following, previous = (rank + 1) % size, (rank - 1) % size
        x = np.full(size * 2, rank, np.int32)
        works = {
            "all_gather": comm.all_gather(x[:2], async_op=True),
            "broadcast": comm.broadcast(x, root=size - 1, async_op=True),
            "reduce": comm.reduce(x, root=0, op="max", async_op=True),
            "reduce_scatter": comm.reduce_scatter(x, async_op=True),
            "all_to_all": comm.all_to_all(x, async_op=True),
            "barrier": comm.barrier(async_op=True),
        }
        # Issued in the order a blocking ring would run them (see
        # scenario_collectives.send_recv): async work runs in issue order.
        received = np.zeros(3, np.int32)
        for step in ("send", "recv") if rank % 2 == 0 else ("recv", "send"):
            if step == "send":
                works["send"] = comm.send(np.full(3, rank, np.int32),
                                          following, async_op=True)
            else:
                works["recv"] = comm.recv(received, previous, async_op=True)
        results = {name: work.result() for name, work in works.items()}
        problems = [f"{name} gave no Work" for name, work in works.items()
                    if not isinstance(work, mcl.Work)]
        problems += expect(results["all_gather"], np.repeat(
            np.arange(size, dtype=np.int32), 2).reshape(size, 2),
            "all_gather")
        problems += expect(results["broadcast"], np.full(
            size * 2, size - 1, np.int32), "broadcast")
        if rank == 0:
            problems += expect(results["reduce"], np.full(
                size * 2, size - 1, np.int32), "reduce")
        elif results["reduce"] is not None:
            problems.append("reduce off the root gave a result")
        problems += expect(results["reduce_scatter"], np.full(
            2, sum(range(size)), np.int32), "reduce_scatter")
        problems += expect(results["all_to_all"], np.repeat(
            np.arange(size, dtype=np.int32), 2), "all_to_all")
        for name in ("barrier", "send"):
            if results[name] is not None:
                problems.append(f"{name} result is {results[name]!r}")
        if results["recv"] is not received:
            problems.append("recv did not give its out")
        problems += expect(received, np.full(3, previous, np.int32), "recv")
        return problems

    def late_peer():
        """Rank 0's work cannot finish while the others hold back: wait
        with a timeout says so; the others go once rank 0 has seen it."""
        go = ctx.path("late_peer_go")
        x = np.full(4, rank + 1, np.int64)
        problems = []
        if rank == 0:
            work = comm.all_reduce(x, async_op=True)
            if work.wait(timeout=0.2) is not False:
                problems.append("wait(0.2) did not return False")
            if work.is_completed():
                problems.append("completed without its peers")
            if "running" not in repr(work):
                problems.append(f"repr {work!r}")
            touch(go)
            if work.wait(timeout=30) is not True:
                problems.append("wait(30) did not return True")
            got = work.result()
        else:
            if not wait_for_file(go):
                return ["rank 0 never said go"]
            got = comm.all_reduce(x)
        return problems + expect(got, np.full(4, size * (size + 1) // 2,
                                              np.int64))

    def blocking_after_async():
        a = np.full(8, rank, np.float32)
        b = np.full(8, 2 * rank, np.float32)
        work = comm.all_reduce(a, out=a, async_op=True)
        got_b = comm.all_reduce(b, "max")
        work.wait()
        return expect(a, np.full(8, sum(range(size)), np.float32), "a") + \
            expect(got_b, np.full(8, 2 * (size - 1), np.float32), "b")

    def temporaries_stay_alive():
        """Inputs nobody else holds must live until the work is done: rank
        0's peers join only after rank 0 dropped them, collected garbage
        and filled memory with other data."""
        go = ctx.path("temporaries_go")
        count = 1 << 17  # 1 MiB of float64: its own mapping, unmapped on free
        if rank == 0:
            works = [comm.all_reduce(np.full(count, 3.0), async_op=True),
                     comm.all_reduce(DLPackOnly(np.full(count, 5.0)),
                                     async_op=True)]
            gc.collect()
            clutter = [np.full(count, -1.0) for _ in range(8)]
            touch(go)
            results = [work.result() for work in works]
            # Nor may the work write into memory that is no longer its own.
            if any((c != -1.0).any() for c in clutter):
                return ["memory allocated after the call was overwritten"]
        else:
            if not wait_for_file(go):
                return ["rank 0 never said go"]
            results = [comm.all_reduce(np.full(count, 3.0)),
                       comm.all_reduce(np.full(count, 5.0))]
        return expect(results[0], np.full(count, 3.0 * size), "buffer") + \
            expect(results[1], np.full(count, 5.0 * size), "dlpack")

    for name, check in [("one work", one_work),
                        ("temporaries stay alive", temporaries_stay_alive),
                        ("many in flight", many_in_flight),
                        ("every operation", every_operation),
                        ("late peer", late_peer),
                        ("blocking after async", blocking_after_async)]:
        checks.run(name, check)
    comm.close()
    return checks.report()


# -- split -------------------------------------------------------------------

def split(ctx):
    comm = ctx.init()
    rank, size = comm.rank, comm.size
    checks = Checks()

    def by_parity_reversed():
        # Same parity together, ranked by key = -rank: highest rank first.
        sub = comm.split(rank % 2, key=-rank)
        members = sorted((r for r in range(size) if r % 2 == rank % 2),
                         reverse=True)
        problems = []
        if (sub.rank, sub.size) != (members.index(rank), len(members)):
            problems.append(f"rank {sub.rank} of {sub.size}, expected "
                            f"{members.index(rank)} of {len(members)}")
        problems += expect(sub.all_reduce(np.array([rank])),
                           np.array([sum(members)]), "sum")
        problems += expect(sub.all_gather(np.array([rank])),
                           np.array(members).reshape(-1, 1), "gather")
        sub.close()
        return problems

    def last_rank_left_out():
        sub = comm.split(None if rank == size - 1 else 0)
        if rank == size - 1:
            return [] if sub is None else [f"got {sub!r}, expected None"]
        problems = []
        if (sub.rank, sub.size) != (rank, size - 1):
            problems.append(f"rank {sub.rank} of {sub.size}")
        problems += expect(sub.all_reduce(np.array([1.0])),
                           np.array([float(size - 1)]))
        sub.close()
        return problems

    def parent_still_works():
        problem = still_works(comm)
        return [problem] if problem else []

    checks.run("by parity, reversed", by_parity_reversed)
    checks.run("last rank left out", last_rank_left_out)
    checks.run("parent still works", parent_still_works)
    comm.close()
    return checks.report()


# -- context manager and use after close -------------------------------------

def _after_close(comm):
    """What each call does on a closed communicator."""
    return {
        "closed": comm.closed,
        "repr": repr(comm),
        "all_reduce": outcome_of(lambda: comm.all_reduce(np.ones(4))),
        "barrier": outcome_of(comm.barrier),
        "send": outcome_of(lambda: comm.send(np.ones(4), 0)),
        "close again": outcome_of(comm.close),
    }


def lifetime(ctx):
    report = {}
    with ctx.init() as comm:
        report["closed inside with"] = comm.closed
        report["works inside with"] = still_works(comm)
        # Two more communicators, to close and to abort.
        closing, failing = comm.split(0), comm.split(0)

        with closing:
            report["works inside closing"] = still_works(closing)
        report["after with closing"] = _after_close(closing)

        try:
            with failing:
                failing.barrier()
                raise ValueError("boom")
        except ValueError as exc:
            report["exception kept"] = str(exc)
        report["after with failing"] = _after_close(failing)
        report["parent works"] = still_works(comm)
    report["after with parent"] = _after_close(comm)
    return report


def error_attributes(ctx):
    """The attributes of a refused call's exception."""
    comm = ctx.init()
    try:
        comm.all_reduce(np.ones(4, np.float32), op="foo")
        report = {"error": None}
    except mcl.Error as exc:
        report = {"error": describe_error(exc),
                  "is_value_error": isinstance(exc, ValueError)}
    comm.close()
    return report


SCENARIOS = {"basic": basic, "init_refusals": init_refusals,
             "async_work": async_work, "split": split, "lifetime": lifetime,
             "error_attributes": error_attributes}
