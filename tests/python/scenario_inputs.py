"""Rank side of the input tests: the kinds of object an operation takes
(DLPack-only objects, buffer-protocol objects, torch tensors, float8 and
mcl.empty shared memory) and the inputs it refuses.

Every rank makes the same calls in the same order: a refusal is decided
locally, so all ranks refuse together and no rank is left waiting in an
operation its peers skipped.
"""

import array

import numpy as np

import mcl

from rank_helpers import Checks, describe_error, expect, still_works


class DLPackOnly:
    """An array seen only through __dlpack__ (no buffer protocol), as a
    framework's tensor is."""

    def __init__(self, array_):
        self.array = array_

    def __dlpack__(self, stream=None, **_newer_keywords):
        # Newer consumers may pass max_version etc.; the legacy capsule
        # NumPy 1.x makes is what the protocol says to return then.
        return self.array.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def _rank_sum(comm, base):
    """The all-reduce (sum) of base + rank over the ranks."""
    return base * comm.size + sum(range(comm.size))


# -- DLPack ---------------------------------------------------------------

def _dlpack_checks(comm, checks):
    def allocated():
        x = np.arange(12, dtype=np.float32).reshape(3, 4) + comm.rank
        got = comm.all_reduce(DLPackOnly(x))
        want = _rank_sum(comm, np.arange(12, dtype=np.float32)).reshape(3, 4)
        return expect(got, want)

    def into_dlpack_out():
        x = np.arange(10, dtype=np.int32) + comm.rank
        out = np.zeros(10, np.int32)
        wrapper = DLPackOnly(out)
        got = comm.all_reduce(DLPackOnly(x), "max", out=wrapper)
        problems = [] if got is wrapper else ["did not return the out"]
        want = np.arange(10, dtype=np.int32) + comm.size - 1
        return problems + expect(out, want, "out")

    def in_place():
        x = np.full(16, comm.rank + 1, np.float64)
        wrapper = DLPackOnly(x)
        comm.all_reduce(wrapper, out=wrapper)
        return expect(x, np.full(16, _rank_sum(comm, 1.0)), "x")

    def float16_broadcast():
        x = np.arange(6, dtype=np.float16).reshape(2, 3) * (comm.rank + 1)
        got = comm.broadcast(DLPackOnly(x), root=comm.size - 1)
        want = np.arange(6, dtype=np.float16).reshape(2, 3) * comm.size
        return expect(got, want)

    def all_gather_shape():
        x = np.full((2, 2), comm.rank, np.int64)
        got = comm.all_gather(DLPackOnly(x))
        want = np.stack([np.full((2, 2), r, np.int64)
                         for r in range(comm.size)])
        return expect(got, want)

    def reduce_scatter_shape():
        x = np.ones((comm.size * 2, 3), np.float32)
        got = comm.reduce_scatter(DLPackOnly(x))
        return expect(got, np.full((2, 3), comm.size, np.float32))

    def send_recv():
        following = (comm.rank + 1) % comm.size
        previous = (comm.rank - 1) % comm.size
        out = np.zeros(5, np.uint8)
        x = np.full(5, comm.rank, np.uint8)
        for step in ("send", "recv") if comm.rank % 2 == 0 else \
                ("recv", "send"):
            if step == "send":
                comm.send(DLPackOnly(x), following)
            else:
                comm.recv(DLPackOnly(out), previous)
        return expect(out, np.full(5, previous, np.uint8), "out")

    for name, check in [("dlpack all_reduce allocated", allocated),
                        ("dlpack out", into_dlpack_out),
                        ("dlpack in place", in_place),
                        ("dlpack float16 broadcast", float16_broadcast),
                        ("dlpack all_gather shape", all_gather_shape),
                        ("dlpack reduce_scatter shape", reduce_scatter_shape),
                        ("dlpack send/recv", send_recv)]:
        checks.run(name, check)


# -- buffer-protocol objects -----------------------------------------------

def _buffer_checks(comm, checks):
    n = comm.size

    def from_bytearray():
        got = comm.all_reduce(bytearray(range(comm.rank, comm.rank + 10)))
        return expect(got, _rank_sum(comm, np.arange(10)).astype(np.uint8))

    def from_bytes():  # read-only memory is a fine input
        got = comm.all_reduce(bytes([comm.rank + 1] * 4), "max")
        return expect(got, np.full(4, n, np.uint8))

    def read_only_ndarray_input():
        x = np.full(8, 2.0, np.float32)
        x.setflags(write=False)
        return expect(comm.all_reduce(x), np.full(8, 2.0 * n, np.float32))

    def from_memoryview():
        got = comm.all_reduce(memoryview(np.full(6, 3, np.int32)))
        return expect(got, np.full(6, 3 * n, np.int32))

    def cast_memoryview():
        raw = bytearray(np.full(4, 1.5, np.float32).tobytes())
        got = comm.all_reduce(memoryview(raw).cast("f"))
        return expect(got, np.full(4, 1.5 * n, np.float32))

    def array_in_place():
        x = array.array("d", [comm.rank + 0.5] * 5)
        got = comm.all_reduce(x, out=x)
        problems = [] if got is x else ["did not return x"]
        want = _rank_sum(comm, 0.5)
        return problems + ([] if list(x) == [want] * 5 else
                           [f"x is {list(x)}, expected {want}"])

    def array_gathered():
        got = comm.all_gather(array.array("q", [comm.rank, -comm.rank]))
        want = np.array([[r, -r] for r in range(n)], np.int64)
        return expect(got, want)

    def zero_dimensional():
        got = comm.all_reduce(np.array(2.5 + comm.rank))
        return expect(got, np.array(_rank_sum(comm, 2.5)))

    def numpy_scalar():
        got = comm.all_reduce(np.float64(1.25))
        return expect(np.asarray(got), np.array(1.25 * n))

    def out_of_another_shape():
        # Elements go in memory order, whatever the shape.
        x = np.arange(12, dtype=np.int64).reshape(3, 4)
        out = np.empty(12, np.int64)
        comm.all_reduce(x, out=out)
        return expect(out, np.arange(12, dtype=np.int64) * n, "out")

    def reduce_scatter_flat_block():
        # 5 rows do not split among 2 or 3 ranks: a flat block of 10.
        x = np.arange(10 * n, dtype=np.float64).reshape(5, 2 * n)
        want = x.reshape(-1)[comm.rank * 10:(comm.rank + 1) * 10] * n
        return expect(comm.reduce_scatter(x), want)

    def empty_arrays():
        problems = expect(comm.all_reduce(np.ones((0, 3), np.float32)),
                          np.ones((0, 3), np.float32))
        return problems + expect(comm.all_gather(np.ones(0, np.int8)),
                                 np.ones((n, 0), np.int8), "all_gather")

    def explicit_matching_dtype():
        got = comm.all_reduce(np.ones(3, np.float32), dtype="float32")
        return expect(got, np.full(3, n, np.float32))

    for name, check in [("bytearray", from_bytearray), ("bytes", from_bytes),
                        ("read-only input", read_only_ndarray_input),
                        ("memoryview", from_memoryview),
                        ("memoryview cast", cast_memoryview),
                        ("array.array in place", array_in_place),
                        ("array.array all_gather", array_gathered),
                        ("0-d array", zero_dimensional),
                        ("numpy scalar", numpy_scalar),
                        ("out of another shape", out_of_another_shape),
                        ("reduce_scatter flat block",
                         reduce_scatter_flat_block),
                        ("empty arrays", empty_arrays),
                        ("explicit dtype", explicit_matching_dtype)]:
        checks.run(name, check)


# -- float8, held in uint8 ---------------------------------------------------

# The bits of 1.0 .. 4.0 (OCP FP8: E4M3 bias 7, E5M2 bias 15).
FLOAT8_BITS = {"float8_e4m3": [0x38, 0x40, 0x44, 0x48],
               "float8_e5m2": [0x3C, 0x40, 0x42, 0x44]}


def _float8_checks(comm, checks):
    def check(name, op):
        bits = FLOAT8_BITS[name]
        # Every rank 1.0 (sum: size), or rank + 1 (max: size).
        value = bits[0] if op == "sum" else bits[comm.rank]
        got = comm.all_reduce(np.full(8, value, np.uint8), op, dtype=name)
        return expect(got, np.full(8, bits[comm.size - 1], np.uint8))

    for name in FLOAT8_BITS:
        for op in ("sum", "max"):
            checks.run(f"{name} {op}", check, name, op)


def accepted_inputs(ctx):
    comm = ctx.init()
    checks = Checks()
    _dlpack_checks(comm, checks)
    _buffer_checks(comm, checks)
    _float8_checks(comm, checks)
    comm.close()
    return checks.report()


# -- Fortran order ----------------------------------------------------------

def fortran_order(ctx):
    """A Fortran-ordered x (contiguous, columns first) with out=None, through
    the buffer protocol and through DLPack: either refused, or a result
    equal to the ranks' x summed element by element."""
    comm = ctx.init()
    x = np.asfortranarray(np.arange(6.0).reshape(2, 3) + comm.rank)
    want = np.arange(6.0).reshape(2, 3) * comm.size + sum(range(comm.size))
    report = {}
    for name, arg in (("buffer", x), ("dlpack", DLPackOnly(x))):
        try:
            got = comm.all_reduce(arg)
            report[name] = {"refused": False,
                            "right": bool(np.array_equal(got, want)),
                            "got": np.asarray(got).tolist()}
        except mcl.InvalidArgumentError as exc:
            report[name] = {"refused": True, "message": str(exc)}
    comm.close()
    return report


# -- torch tensors (the test skips without torch) ---------------------------

def torch_tensors(ctx):
    import torch
    comm = ctx.init()
    checks = Checks()

    def tensor_in_place():
        t = torch.full((4, 2), float(comm.rank + 1))
        got = comm.all_reduce(t, out=t)
        want = torch.full((4, 2), float(_rank_sum(comm, 1)))
        return ([] if got is t else ["did not return the tensor"]) + \
            ([] if torch.equal(t, want) else [f"tensor is {t}"])

    def tensor_allocated():
        # A torch tensor in, a torch tensor out (of its dtype and shape).
        got = comm.all_reduce(torch.arange(6, dtype=torch.int32), "max")
        gathered = comm.all_gather(torch.ones(2, 3, dtype=torch.bfloat16))
        problems = []
        if not isinstance(got, torch.Tensor) or \
                not isinstance(gathered, torch.Tensor):
            return [f"results are {type(got)}, {type(gathered)}"]
        if not torch.equal(got, torch.arange(6, dtype=torch.int32)):
            problems.append(f"max is {got}")
        if gathered.shape != (comm.size, 2, 3) or \
                gathered.dtype != torch.bfloat16 or \
                not bool((gathered == 1).all()):
            problems.append(f"all_gather gave {gathered}")
        return problems

    def bfloat16_tensor():
        t = torch.full((8,), 1.5, dtype=torch.bfloat16)
        out = torch.empty_like(t)
        comm.all_reduce(t, out=out)
        want = torch.full((8,), 1.5 * comm.size, dtype=torch.bfloat16)
        return [] if torch.equal(out, want) else [f"out is {out}"]

    checks.run("torch in place", tensor_in_place)
    checks.run("torch allocated", tensor_allocated)
    checks.run("torch bfloat16", bfloat16_tensor)
    comm.close()
    return checks.report()


# -- mcl.empty: shared memory, zero-copy -----------------------------------

def _shared_copy(array_):
    """array_'s contents in mcl.empty memory."""
    shared = mcl.empty(array_.shape, array_.dtype)
    shared[...] = array_
    return shared


def shared_memory(ctx):
    """Each operation twice, on ordinary arrays and on mcl.empty ones (large
    enough, 256 KiB and more, to run zero-copy): results must be identical
    and right. Values are small integers, exact in any order."""
    comm = ctx.init()
    checks = Checks()
    n, size, rank = ctx.args.get("count", 1 << 16), comm.size, comm.rank

    def inputs(r, dtype):
        return ((np.arange(n * size) + 7 * r) % 13).astype(dtype)

    def zero_copy_calls():
        return comm.topology()["memory"]["zero_copy_calls"]

    def both_ways(name, call, want):
        def check():
            problems = []
            for label, make in (("ordinary", np.copy), ("shared",
                                                        _shared_copy)):
                before = zero_copy_calls()
                got = call(make)
                problems += expect(got, want, f"{label} result")
                # mcl counts the calls that ran in place: shared ones must.
                ran_in_place = zero_copy_calls() > before
                if ran_in_place != (label == "shared"):
                    problems.append(f"{label} call ran in place: "
                                    f"{ran_in_place}")
            return problems
        checks.run(name, check)

    for dtype in (np.float32, np.int64):
        mine = inputs(rank, dtype)
        every = [inputs(r, dtype) for r in range(size)]
        total = np.sum(every, axis=0).astype(dtype)
        block = slice(rank * n, (rank + 1) * n)
        name = np.dtype(dtype).name

        both_ways(f"all_reduce {name}", lambda make: comm.all_reduce(
            make(mine), out=make(np.empty_like(mine))), total)

        def all_reduce_in_place(make):
            x = make(mine)
            return comm.all_reduce(x, out=x)
        both_ways(f"all_reduce in place {name}", all_reduce_in_place, total)

        both_ways(f"all_gather {name}", lambda make: comm.all_gather(
            make(mine[:n]), out=make(np.empty((size, n), dtype))),
            np.stack([e[:n] for e in every]))

        both_ways(f"broadcast {name}", lambda make: comm.broadcast(
            make(mine), root=size - 1, out=make(np.empty_like(mine))),
            every[size - 1])

        both_ways(f"reduce_scatter {name}", lambda make: comm.reduce_scatter(
            make(mine), out=make(np.empty(n, dtype))), total[block])

        both_ways(f"all_to_all {name}", lambda make: comm.all_to_all(
            make(mine), out=make(np.empty_like(mine))),
            np.concatenate([e[block] for e in every]))

        def reduce_to_root(make):
            got = comm.reduce(make(mine), root=0, op="max",
                              out=make(np.empty_like(mine)))
            # Off the root there is nothing to compare: stand in the answer.
            return got if rank == 0 else np.max(every, axis=0)
        both_ways(f"reduce {name}", reduce_to_root, np.max(every, axis=0))

    def allocation():
        problems = []
        a = mcl.empty((3, 5), "int64")
        if a.shape != (3, 5) or a.dtype != np.int64 or a.any():
            problems.append(f"mcl.empty((3, 5), int64) gave {a!r}")
        if not (a.flags.c_contiguous and a.flags.writeable):
            problems.append("mcl.empty memory is not writable contiguous")
        b = mcl.zeros(7)
        if b.shape != (7,) or b.dtype != np.float32 or b.any():
            problems.append(f"mcl.zeros(7) gave {b!r}")
        return problems
    checks.run("mcl.empty allocation", allocation)

    comm.close()
    return checks.report()


# -- refused inputs -----------------------------------------------------------

def _f32(n=8):
    return np.arange(n, dtype=np.float32)


def _read_only(array_):
    array_.setflags(write=False)
    return array_


def _overlapping_all_reduce(comm):
    memory = np.zeros(9, np.float32)
    return comm.all_reduce(memory[:8], out=memory[1:])


def _gather_from_wrong_block(comm):
    out = np.zeros((comm.size, 4), np.float32)
    return comm.all_gather(out[(comm.rank + 1) % comm.size], out=out)


# (name, words of which the message must hold one (case-insensitive; None:
# a TypeError will also do), the call). The test reads this table.
REFUSED = [
    ("read-only out", ["out"], lambda c: c.all_reduce(
        _f32(), out=_read_only(np.empty(8, np.float32)))),
    ("non-contiguous out", ["out"], lambda c: c.all_reduce(
        _f32(), out=np.empty(16, np.float32)[::2])),
    ("non-contiguous x", ["contiguous"], lambda c: c.all_reduce(
        _f32(16)[::2])),
    ("out too small", ["out"], lambda c: c.all_reduce(
        _f32(), out=np.empty(7, np.float32))),
    ("out of another dtype", ["out"], lambda c: c.all_reduce(
        _f32(), out=np.empty(8, np.float64))),
    ("out of another dtype of the same size", ["out"], lambda c: c.all_reduce(
        _f32(), out=np.empty(8, np.int32))),
    ("unknown op", ["foo"], lambda c: c.all_reduce(_f32(), op="foo")),
    ("int16 reduction", ["int16"], lambda c: c.all_reduce(
        np.ones(4, np.int16))),
    ("uint16 reduction", ["uint16"], lambda c: c.all_reduce(
        np.ones(4, np.uint16))),
    ("bool sum", ["bool"], lambda c: c.all_reduce(
        np.ones(4, np.bool_), op="sum")),
    ("object array broadcast", ["objects"], lambda c: c.broadcast(
        np.array([object()] * 3))),
    ("NaN wait timeout", ["timeout"], lambda c: c.barrier(
        async_op=True).wait(float("nan"))),
    ("complex prod", ["prod"], lambda c: c.all_reduce(
        np.ones(4, np.complex64), op="prod")),
    ("complex max", ["max"], lambda c: c.all_reduce(
        np.ones(4, np.complex128), op="max")),
    ("unknown dtype name", ["nonsense"], lambda c: c.all_reduce(
        _f32(), dtype="nonsense")),
    ("broadcast root == size", ["root"], lambda c: c.broadcast(
        _f32(), root=c.size)),
    ("broadcast root -1", ["root"], lambda c: c.broadcast(_f32(), root=-1)),
    ("reduce root == size", ["root"], lambda c: c.reduce(_f32(),
                                                         root=c.size)),
    ("send to peer == size", ["peer"], lambda c: c.send(_f32(), c.size)),
    ("recv from peer -1", ["peer"], lambda c: c.recv(
        np.empty(8, np.float32), -1)),
    ("recv into read-only out", ["out"], lambda c: c.recv(
        _read_only(np.empty(8, np.float32)), (c.rank + 1) % c.size)),
    ("all_gather out too small", ["out"], lambda c: c.all_gather(
        _f32(), out=np.empty(8 * c.size - 1, np.float32))),
    ("reduce_scatter out of the wrong size", ["out"],
     lambda c: c.reduce_scatter(np.ones(8 * c.size, np.float32),
                                out=np.empty(7, np.float32))),
    ("reduce_scatter x that does not split", [],
     lambda c: c.reduce_scatter(np.ones(8 * c.size + 1, np.float32))),
    ("all_to_all x that does not split", [], lambda c: c.all_to_all(
        np.ones(3 * c.size + 1, np.float32))),
    ("all_reduce out overlapping x", ["overlap"], _overlapping_all_reduce),
    ("all_gather x in another rank's block", ["overlap"],
     _gather_from_wrong_block),
    ("non-buffer x", None, lambda c: c.all_reduce(object())),
    ("list x", None, lambda c: c.all_reduce([1.0, 2.0])),
    ("non-buffer out", None, lambda c: c.all_reduce(_f32(), out=object())),
    ("bytes out", ["out"], lambda c: c.all_reduce(
        np.zeros(8, np.uint8), out=bytes(8))),
    ("split with color -5", ["color"], lambda c: c.split(-5)),
    ("algorithm of an unknown collective", ["nonsense"],
     lambda c: c.algorithm("nonsense", 1024)),
    ("algorithm of an unknown dtype", ["nonsense"],
     lambda c: c.algorithm("all_reduce", 1024, "nonsense")),
    # Values pybind11 alone would refuse with a bare TypeError.
    ("root beyond a C int", ["root"], lambda c: c.broadcast(
        _f32(), root=2 ** 40)),
    ("peer beyond a C int", ["peer"], lambda c: c.send(_f32(), 2 ** 40)),
    ("root that is a bool", ["root"], lambda c: c.reduce(_f32(), root=True)),
    ("split color beyond a C int", ["color"], lambda c: c.split(2 ** 40)),
    ("algorithm of a negative count", ["count"],
     lambda c: c.algorithm("all_reduce", -1)),
    ("op None", ["op"], lambda c: c.all_reduce(_f32(), op=None)),
    ("dtype contradicting the buffer's own", ["contradicts"],
     lambda c: c.all_reduce(np.ones(4, np.int32), dtype="float32")),
    ("dtype that is not a type", ["dtype"], lambda c: c.all_reduce(
        _f32(), dtype=3.5)),
    ("all_gather allocating for a Fortran-ordered x", ["fortran"],
     lambda c: c.all_gather(np.asfortranarray(np.ones((2, 3), np.float32)))),
]


def refused_inputs(ctx):
    """Each refused call, then a checked all-reduce: the communicator must
    stay usable after an InvalidArgumentError."""
    comm = ctx.init()
    results = {}
    for name, _words, call in REFUSED:
        try:
            call(comm)
            error = None
        except Exception as exc:  # noqa: BLE001 (the test judges it)
            error = describe_error(exc)
        entry = {"error": error}
        if error is None or error["class"] == "InvalidArgumentError" or \
                error["class"] == "TypeError":
            entry["still_works"] = still_works(comm)
        results[name] = entry
        if error is not None and error["is_mcl_error"] and \
                error["class"] != "InvalidArgumentError":
            break  # anything else breaks the communicator
    comm.close()
    return {"results": results}


SCENARIOS = {"accepted_inputs": accepted_inputs,
             "fortran_order": fortran_order,
             "torch_tensors": torch_tensors,
             "shared_memory": shared_memory,
             "refused_inputs": refused_inputs}
