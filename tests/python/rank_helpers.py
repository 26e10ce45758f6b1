"""Small helpers the scenarios share: describing exceptions in a report,
files the ranks signal each other with, and a check that a communicator
still works."""

import os
import time

import numpy as np

import mcl

from reference import same_bits


def describe_error(exc):
    """An exception, as a JSON-able dict a test can assert on."""
    return {
        "class": type(exc).__name__,
        "classes": [cls.__name__ for cls in type(exc).__mro__],
        "is_mcl_error": isinstance(exc, mcl.Error),
        "code": getattr(exc, "code", None),
        "code_name": getattr(exc, "code_name", None),
        "message": getattr(exc, "message", None),
        "text": str(exc),
    }


def outcome_of(call):
    """Runs call(); {"ok": True, "value": ...} or {"ok": False, "error":
    describe_error(...)}, so a scenario can go on after a refusal."""
    try:
        value = call()
    except Exception as exc:  # noqa: BLE001 (reported, then asserted on)
        return {"ok": False, "error": describe_error(exc)}
    return {"ok": True, "value": repr(value)[:200]}


def touch(path):
    with open(path, "w"):
        pass


def wait_for_file(path, timeout=60.0):
    """Waits until `path` exists; False after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def still_works(comm):
    """One all-reduce whose result is checked: a communicator that survived
    a refused call must still compute right. Returns an error text or
    None."""
    x = np.array([comm.rank + 1, 7], dtype=np.int64)
    got = comm.all_reduce(x)
    want = [comm.size * (comm.size + 1) // 2, 7 * comm.size]
    if got.tolist() != want:
        return f"all_reduce gave {got.tolist()}, expected {want}"
    return None


class Checks:
    """Runs named checks; each returns a list of problems."""

    def __init__(self):
        self.failures = []
        self.names = []

    def run(self, name, check, *args):
        self.names.append(name)
        try:
            problems = check(*args)
        except Exception as exc:  # noqa: BLE001 (reported to the test)
            problems = [f"raised {describe_error(exc)['text']!r} "
                        f"({type(exc).__name__})"]
        self.failures.extend(f"{name}: {p}" for p in problems)

    def report(self):
        return {"checks": self.names, "failures": self.failures}


def expect(got, want, what="result"):
    """Problems of got (an ndarray) against want: type, dtype, shape, bits."""
    if not isinstance(got, np.ndarray):
        return [f"{what} is a {type(got).__name__}, not an ndarray"]
    if got.dtype != want.dtype or got.shape != want.shape:
        return [f"{what} is {got.dtype}{got.shape}, expected "
                f"{want.dtype}{want.shape}"]
    if not same_bits(got, want):
        return [f"{what} is {got.ravel()[:8]}..., expected "
                f"{want.ravel()[:8]}..."]
    return []
