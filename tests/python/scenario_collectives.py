"""Rank side of the operation matrix: every collective and send/recv, over
every element type and op, in three modes -- "alloc" (out=None: mcl makes
the result), "out" (a separate out) and "inplace" (out aliases the input
as mcl.h's in-place rules say) -- checked bit for bit against reference.py.

One process group runs a whole part of the matrix: starting processes per
case would cost more than the cases. Every rank runs the same cases in the
same order. A refused case (InvalidArgumentError) is a failure that leaves
the communicator usable; any other mcl.Error breaks it, so the run stops
there. The report lists the cases checked, so a test can tell the matrix
ran in full.
"""

import numpy as np

import mcl

from reference import (MOVABLE, REDUCIBLE, expected_reduction, ops_for,
                       payload, reduction_input, same_bits)

MODES = ("alloc", "out", "inplace")
MAX_REPORTED_FAILURES = 40


def _differences(got, want):
    """What is wrong with `got` (an array) against `want`; [] if nothing."""
    if got is None:
        return ["got None"]
    if not isinstance(got, np.ndarray):
        return [f"got a {type(got).__name__}, not an ndarray"]
    problems = []
    if got.shape != want.shape:
        problems.append(f"shape {got.shape}, expected {want.shape}")
    if got.dtype != want.dtype:
        problems.append(f"dtype {got.dtype}, expected {want.dtype}")
    if problems or same_bits(got, want):
        return problems
    flat_got = np.ascontiguousarray(got).reshape(-1)
    flat_want = np.ascontiguousarray(want).reshape(-1)
    bytes_got = flat_got.view(np.uint8).reshape(len(flat_got), -1)
    bytes_want = flat_want.view(np.uint8).reshape(len(flat_want), -1)
    bad = np.nonzero((bytes_got != bytes_want).any(axis=1))[0]
    first = bad[0]
    return [f"{len(bad)} of {len(flat_got)} elements differ; first at "
            f"{first}: got {flat_got[first]!r}, expected "
            f"{flat_want[first]!r}"]


def _returned(mode, got, out):
    """With out given, the call returns that very object."""
    if mode != "alloc" and got is not out:
        return [f"returned {type(got).__name__}, not the out passed"]
    return []


def _untouched(label, array, before):
    return [] if same_bits(array, before) else [f"{label} was modified"]


def _filled(shape, dtype):
    """An array of recognisable garbage, to see what a call leaves alone."""
    array = np.empty(shape, dtype)
    array.reshape(-1).view(np.uint8)[:] = 0xA5
    return array


class Matrix:
    """Runs cases, records failures and coverage."""

    def __init__(self, comm):
        self.comm = comm
        self.rank = comm.rank
        self.size = comm.size
        self.covered = []
        self.failures = []
        self.broken = None
        self._case_key = None
        self._case = None
        self._payloads = {}

    def run(self, label, case, *case_args):
        if self.broken:
            return
        try:
            problems = case(*case_args)
        except mcl.InvalidArgumentError as exc:
            problems = [f"refused: {exc}"]
        except mcl.Error as exc:
            problems = [f"failed: {exc}"]
            self.broken = f"{label}: {exc}"
        self.covered.append(label)
        self.failures.extend(f"{label}: {p}" for p in problems)

    def report(self):
        paths = self.comm.topology()["paths"]
        return {"transports": sorted({p["transport"] for p in paths}),
                "covered": self.covered, "broken": self.broken,
                "failure_count": len(self.failures),
                "failures": self.failures[:MAX_REPORTED_FAILURES]}

    # -- reductions -----------------------------------------------------

    def _reduction_case(self, t, op, shape):
        """Every rank's input and the exact reduction: the same for each
        mode and each operation of one type, op and shape, so worked out
        once for them all (the reference, in float64 on every rank, was
        most of the matrix's time). Read-only, so no case can change what
        the next one checks against."""
        key = (t.name, op, shape)
        if self._case_key != key:
            count = int(np.prod(shape))
            inputs = [reduction_input(t, op, r, count).reshape(shape)
                      for r in range(self.size)]
            want = expected_reduction(t, op, inputs)
            for array in inputs + [want]:
                array.flags.writeable = False
            self._case_key, self._case = key, (inputs, want)
        return self._case

    def all_reduce(self, t, op, shape, mode):
        inputs, want = self._reduction_case(t, op, shape)
        x = inputs[self.rank].copy()
        out = {"alloc": None, "out": np.empty_like(x), "inplace": x}[mode]
        got = self.comm.all_reduce(x, op, out=out, dtype=t.dtype_arg)
        problems = _returned(mode, got, out) + _differences(got, want)
        if mode != "inplace":
            problems += _untouched("x", x, inputs[self.rank])
        return problems

    def reduce(self, t, op, shape, mode, root):
        inputs, want = self._reduction_case(t, op, shape)
        x = inputs[self.rank].copy()
        out = {"alloc": None, "out": _filled(x.shape, x.dtype),
               "inplace": x}[mode]
        before = None if out is None else out.copy()
        got = self.comm.reduce(x, root, op, out=out, dtype=t.dtype_arg)
        if self.rank == root:
            return _returned(mode, got, out) + _differences(got, want)
        # Off the root: nothing returned, nothing written.
        problems = [] if got is None else [f"returned {type(got).__name__}"
                                           " off the root"]
        if out is not None:
            problems += _untouched("out off the root", out, before)
        return problems

    def reduce_scatter(self, t, op, shape, mode):
        inputs, whole = self._reduction_case(t, op, shape)
        rows = shape[0] // self.size
        mine = slice(self.rank * rows, (self.rank + 1) * rows)
        want = whole[mine]
        x = inputs[self.rank].copy()
        out = {"alloc": None, "out": np.empty_like(want),
               "inplace": x[mine]}[mode]
        got = self.comm.reduce_scatter(x, op, out=out, dtype=t.dtype_arg)
        return _returned(mode, got, out) + _differences(got, want)

    # -- moving operations ----------------------------------------------

    def _payload(self, t, rank, shape, salt=0):
        """payload(), made once per type, shape and rank for every mode
        and operation (kept only for the type at hand; read-only, like the
        reductions' inputs)."""
        if any(k[0] != t.name for k in self._payloads):
            self._payloads.clear()
        key = (t.name, shape, rank, salt)
        if key not in self._payloads:
            array = payload(t, rank, shape, salt=salt)
            array.flags.writeable = False
            self._payloads[key] = array
        return self._payloads[key]

    def all_gather(self, t, shape, mode):
        inputs = [self._payload(t, r, shape) for r in range(self.size)]
        want = np.stack(inputs)
        x = inputs[self.rank].copy()
        if mode == "inplace":
            out = np.empty_like(want)
            out[self.rank] = x
            x = out[self.rank]
        else:
            out = {"alloc": None, "out": np.empty_like(want)}[mode]
        got = self.comm.all_gather(x, out=out, dtype=t.dtype_arg)
        problems = _returned(mode, got, out) + _differences(got, want)
        if mode != "inplace":
            problems += _untouched("x", x, inputs[self.rank])
        return problems

    def broadcast(self, t, shape, mode, root):
        x = self._payload(t, self.rank, shape, salt=1).copy()
        want = self._payload(t, root, shape, salt=1)
        before = x.copy()
        out = {"alloc": None, "out": np.empty_like(x), "inplace": x}[mode]
        got = self.comm.broadcast(x, root, out=out, dtype=t.dtype_arg)
        problems = _returned(mode, got, out) + _differences(got, want)
        if mode != "inplace":
            problems += _untouched("x", x, before)
        return problems

    def all_to_all(self, t, shape, mode):
        inputs = [self._payload(t, r, shape, salt=2)
                  for r in range(self.size)]
        rows = shape[0] // self.size
        mine = slice(self.rank * rows, (self.rank + 1) * rows)
        want = np.concatenate([inputs[r][mine] for r in range(self.size)])
        x = inputs[self.rank].copy()
        out = {"alloc": None, "out": np.empty_like(x), "inplace": x}[mode]
        got = self.comm.all_to_all(x, out=out, dtype=t.dtype_arg)
        return _returned(mode, got, out) + _differences(got, want)

    def send_recv(self, t, shape):
        """A ring: each rank sends to the next and receives from the
        previous; even ranks send first, odd ranks receive first, so no
        two ranks wait on each other."""
        following = (self.rank + 1) % self.size
        previous = (self.rank - 1) % self.size
        x = payload(t, self.rank, shape, salt=3)
        out = np.empty_like(x)
        got = None
        for step in ("send", "recv") if self.rank % 2 == 0 else \
                ("recv", "send"):
            if step == "send":
                sent = self.comm.send(x, following, dtype=t.dtype_arg)
                if sent is not None:
                    return [f"send returned {sent!r}"]
            else:
                got = self.comm.recv(out, previous, dtype=t.dtype_arg)
        return _returned("out", got, out) + _differences(
            got, payload(t, previous, shape, salt=3))


def _shapes(size, args):
    """A small 2-d shape and a large 1-d one, both splitting into `size`
    blocks: large enough that operations go through several slots."""
    return [(size * 2, 3), (size * args.get("large", 40000),)]


def _modes(shape_index, args):
    # The large shape may run fewer modes (the small one covers aliasing).
    return MODES if shape_index == 0 else tuple(args.get("large_modes",
                                                         MODES))


def _types(table, args):
    names = args.get("types")
    return [t for t in table if names is None or t.name in names]


def reductions(ctx):
    comm = ctx.init()
    m = Matrix(comm)
    roots = sorted({0, comm.size - 1})
    for t in _types(REDUCIBLE, ctx.args):
        for op in ops_for(t):
            for i, shape in enumerate(_shapes(comm.size, ctx.args)):
                for mode in _modes(i, ctx.args):
                    tag = f"{t.name}/{op}/{mode}/{shape}"
                    m.run(f"all_reduce/{tag}", m.all_reduce, t, op, shape,
                          mode)
                    for root in roots:
                        m.run(f"reduce(root={root})/{tag}", m.reduce, t,
                              op, shape, mode, root)
                    m.run(f"reduce_scatter/{tag}", m.reduce_scatter, t, op,
                          shape, mode)
    if not m.broken:
        comm.barrier()
    report = m.report()
    comm.close()
    return report


def moves(ctx):
    comm = ctx.init()
    m = Matrix(comm)
    roots = sorted({0, comm.size - 1})
    for t in _types(MOVABLE, ctx.args):
        for i, shape in enumerate(_shapes(comm.size, ctx.args)):
            gather_shape = (shape[0] // comm.size,) + shape[1:]
            for mode in _modes(i, ctx.args):
                tag = f"{t.name}/{mode}/{shape}"
                m.run(f"all_gather/{tag}", m.all_gather, t, gather_shape,
                      mode)
                for root in roots:
                    m.run(f"broadcast(root={root})/{tag}", m.broadcast, t,
                          shape, mode, root)
                m.run(f"all_to_all/{tag}", m.all_to_all, t, shape, mode)
            m.run(f"send_recv/{t.name}/out/{shape}", m.send_recv, t, shape)
    if not m.broken:
        comm.barrier()
    report = m.report()
    comm.close()
    return report


def exchange(ctx):
    """Every rank sends 4 MiB to the next and receives from the previous at
    once, with sendrecv (as one call and as async work): far beyond what
    the rings hold, so a send that waited for its receive would hang."""
    comm = ctx.init()
    n, r = comm.size, comm.rank
    count = 1 << 20  # float32: 4 MiB
    problems = []
    for mode in ("blocking", "async"):
        x = np.arange(count, dtype=np.float32) + r * 1000.0
        out = np.full(count, -1.0, np.float32)
        got = comm.sendrecv(x, (r + 1) % n, out, (r - 1) % n,
                            async_op=mode == "async")
        if mode == "async":
            got = got.result()
        want = np.arange(count, dtype=np.float32) + ((r - 1) % n) * 1000.0
        if got is not out or not np.array_equal(out, want):
            problems.append(f"{mode}: got {out[:4]}..., want {want[:4]}...")
    comm.close()
    return {"problems": problems}


SCENARIOS = {"reductions": reductions, "moves": moves, "exchange": exchange}
