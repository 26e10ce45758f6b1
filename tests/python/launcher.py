"""Starts the ranks of a test as real processes (rank_main.py running one
scenario) and collects what each reports.

The test process makes the UniqueId, so it hosts the rendezvous: it keeps
the id alive until every rank has finished. Output goes to files, not
pipes, so a rank that logs a lot cannot block on a full pipe while the
test waits for another rank. Every wait is bounded: a hang fails the test
with the ranks' stderr instead of stalling the suite.
"""

import json
import os
import pickle
import secrets
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

import mcl

HERE = os.path.dirname(os.path.abspath(__file__))
RANK_MAIN = os.path.join(HERE, "rank_main.py")

# Bound on a whole run; generous because 4 ranks share 2 cores.
DEFAULT_RUN_TIMEOUT = 120
# Every mcl wait is bounded by it: a test bug that leaves a rank waiting
# shows up as an mcl.TimeoutError well before DEFAULT_RUN_TIMEOUT.
DEFAULT_MCL_TIMEOUT = "30"


@dataclass
class RankOutcome:
    rank: int
    returncode: int
    report: dict  # what the scenario reported, or None
    stdout: str
    stderr: str

    def describe(self):
        return (f"rank {self.rank}: exit {self.returncode}, report "
                f"{self.report!r}\n--- stdout ---\n{self.stdout[-3000:]}"
                f"\n--- stderr ---\n{self.stderr[-6000:]}")


def _read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def _default_sigint():
    """A rank handles Ctrl-C as a program started from a terminal does,
    even when the tests run in the background (a shell without job control
    starts them with SIGINT ignored, which Python then keeps)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class RankGroup:
    """The processes of one run, from start to collection."""

    def __init__(self, workdir, scenario, nranks, args, env, id_form, n_ids):
        self.workdir = workdir
        self.nranks = nranks
        os.makedirs(workdir, exist_ok=True)
        # Held until collect(): the rendezvous lives in this process.
        self.unique_ids = [mcl.UniqueId() for _ in range(n_ids)]
        # Random, the same on every rank of the run: what a job sets for
        # mcl.torch (a secret written in a script is a public one).
        self.secret = secrets.token_hex(16)
        args = dict(args or {}, workdir=workdir)
        self.procs = []
        for rank in range(nranks):
            self.procs.append(self._start(rank, scenario, args, env, id_form))

    def _paths(self, rank):
        base = os.path.join(self.workdir, f"rank{rank}")
        return base + ".json", base + ".out", base + ".err"

    def _start(self, rank, scenario, args, extra_env, id_form):
        report, out, err = self._paths(rank)
        ids = [str(uid) for uid in self.unique_ids]
        env = dict(os.environ)
        # The children import the same mcl as this process.
        package_root = os.path.dirname(os.path.dirname(mcl.__file__))
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (package_root, env.get("PYTHONPATH")) if p)
        env.setdefault("MCL_TIMEOUT", DEFAULT_MCL_TIMEOUT)
        env.setdefault("MCL_SECRET", self.secret)
        env.update({
            "PYTHONUNBUFFERED": "1",
            "PYTHONFAULTHANDLER": "1",
            "MCL_RANK": str(rank),
            "MCL_WORLD_SIZE": str(self.nranks),
            "MCL_UNIQUE_ID": ids[0] if ids else "",
            "MCLTEST_UNIQUE_IDS": json.dumps(ids),
            "MCLTEST_ID_FORM": id_form,
            "MCLTEST_PICKLED_ID": pickle.dumps(
                self.unique_ids[0]).hex() if ids else "",
        })
        env.update(extra_env or {})
        with open(out, "w") as stdout, open(err, "w") as stderr:
            return subprocess.Popen(
                [sys.executable, RANK_MAIN, scenario, report,
                 json.dumps(args)],
                stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                env=env, cwd=self.workdir, preexec_fn=_default_sigint)

    def wait_for(self, rank, timeout):
        """Waits for one rank's process; its exit code, or None if it is
        still running after `timeout` seconds."""
        try:
            return self.procs[rank].wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def signal(self, rank, signum):
        self.procs[rank].send_signal(signum)

    def kill_all(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
        for proc in self.procs:
            proc.wait()

    def collect(self, timeout=DEFAULT_RUN_TIMEOUT):
        """Waits for every rank (at most `timeout` seconds in all) and
        returns their outcomes; kills them all and fails on a hang."""
        deadline = time.monotonic() + timeout
        hung = []
        for rank, proc in enumerate(self.procs):
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                hung.append(rank)
                # A stack of every thread, for the failure message.
                proc.send_signal(signal.SIGABRT)
        if hung:
            time.sleep(1)
            self.kill_all()
        outcomes = [self._outcome(rank) for rank in range(self.nranks)]
        if hung:
            raise AssertionError(
                f"ranks {hung} still running after {timeout} s:\n" +
                "\n".join(o.describe() for o in outcomes))
        return outcomes

    def _outcome(self, rank):
        report_path, out, err = self._paths(rank)
        report = None
        if os.path.exists(report_path):
            with open(report_path) as f:
                report = json.load(f)
        return RankOutcome(rank, self.procs[rank].returncode, report,
                           _read(out), _read(err))


def start_ranks(workdir, scenario, nranks, args=None, env=None,
                id_form="string", n_ids=1):
    """Starts `nranks` processes running `scenario` with `args` (a JSON-able
    dict; "workdir" is added). id_form says how ranks get the UniqueId
    ("string", "object", "pickle" or "env": mcl.init_from_env); n_ids
    UniqueIds are made, for scenarios that build several communicators."""
    return RankGroup(str(workdir), scenario, nranks, args, env, id_form,
                     n_ids)


def run_ranks(workdir, scenario, nranks, timeout=DEFAULT_RUN_TIMEOUT,
              **kwargs):
    """Runs a scenario to its end on every rank; returns the reports and
    fails unless every rank exited 0 with one."""
    outcomes = start_ranks(workdir, scenario, nranks, **kwargs).collect(
        timeout)
    return reports_of(outcomes)


def reports_of(outcomes):
    """Every rank's report; fails, with their output, unless every rank
    exited 0 and reported."""
    bad = [o for o in outcomes if o.returncode != 0 or o.report is None]
    if bad:
        raise AssertionError("\n".join(o.describe() for o in bad))
    return [o.report for o in outcomes]
