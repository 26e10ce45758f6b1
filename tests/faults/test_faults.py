"""Faults injected into real jobs of mcl-fault-rank (tests/faults/
fault_rank.cpp), three ranks each, over every transport: shared memory and
the emulated RDMA fabric between processes of this host, TCP between network
namespaces (as root; skipped otherwise).

Faults: a peer killed before, during and after a collective; a peer stopped
(SIGSTOP) past MCL_TIMEOUT; a cable (TCP) or port (RDMA) taken down mid-
operation; the rank that runs the rendezvous killed during init; and
mclCommAbort from another thread while the job waits on a stopped peer.

Every surviving rank must: return an error naming the peer (or the link)
within MCL_TIMEOUT plus SLACK of the fault, report it through
mclCommGetAsyncError, hold no more descriptors, threads or mapped segments
after mclCommAbort than before init, and build a new communicator with the other
survivors that computes right.

Needs FAULT_RANK, the path of mcl-fault-rank (CTest sets it)."""

import itertools
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "cluster"))
import testbed  # noqa: E402

RANK = os.environ.get("FAULT_RANK", "")
FABRIC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..",
                                      "fixtures", "rdma", "ring3.json"))
SECRET = secrets.token_hex(16)  # random: a secret in a script is public
NRANKS = 3
TIMEOUT = 3    # MCL_TIMEOUT of the jobs, seconds
SLACK = 6.0    # what detection may add to it on a 2-core machine under load
VICTIM = 1

pytestmark = pytest.mark.skipif(not os.path.exists(RANK),
                                reason="FAULT_RANK not built")

# Two ports a case, below Linux's ephemeral range (32768 on), where the
# ranks' own outgoing connections could hold one.
_ports = itertools.count(20000 + (os.getpid() % 250) * 48)


class LocalHosts:
    """Every rank a process of this host; addresses are loopback."""

    def exec(self, rank, env):
        return subprocess.Popen([RANK], env={**os.environ, **env}, text=True,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)

    def address(self, rank):
        return "127.0.0.1"

    def cut(self, up):
        raise AssertionError("no cable between local ranks")


class NamespaceHosts:
    """Rank i on testbed host i (ring3: every pair cabled) with a LAN for
    the rendezvous."""

    def __init__(self, bed):
        self.bed = bed

    def exec(self, rank, env):
        return self.bed.exec(rank, [RANK], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def address(self, rank):
        return f"10.78.0.{rank + 1}"

    def cut(self, up):
        self.bed.cable(0, 1, 0, up=up)


@pytest.fixture(scope="module")
def netns_hosts():
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    with testbed.Testbed("ring3", f"mcl-faults{os.getpid() % 10000}",
                         lan=True) as bed:
        yield NamespaceHosts(bed)


def transport_env(transport):
    if transport == "rdma":
        return {"MCL_TRANSPORT": "rdma", "MCL_RDMA_PROVIDER": "emu",
                "MCL_EMU_FABRIC": FABRIC}
    return {"MCL_TRANSPORT": transport}


class Job:
    def __init__(self, hosts, transport, plan, timeout=TIMEOUT, extra=None):
        self.hosts, self.plan = hosts, plan
        self.victim = 0 if plan == "root_init" else VICTIM
        self.survivors = [r for r in range(NRANKS)
                          if plan == "cable" or r != self.victim]
        port, rejoin = next(_ports), next(_ports)
        self.scratch = tempfile.mkdtemp(prefix="mcl-faults-")
        self.gate = os.path.join(self.scratch, "gate")
        self.base = {
            "MCL_WORLD_SIZE": str(NRANKS),
            "MCL_ROOT": f"{hosts.address(0)}:{port}",
            "MCL_SECRET": SECRET,
            "MCL_TIMEOUT": str(timeout),
            "FAULT_PLAN": plan,
            "FAULT_VICTIM": "-1" if plan == "cable" else str(self.victim),
            "FAULT_SURVIVORS": ",".join(map(str, self.survivors)),
            "FAULT_REJOIN": f"{hosts.address(self.survivors[0])}:{rejoin}",
            "FAULT_GATE": self.gate if plan == "cable" else "",
            **transport_env(transport), **(extra or {})}
        self.procs = {}
        self.lines = {}

    def start(self, rank):
        self.procs[rank] = self.hosts.exec(rank, {**self.base,
                                                  "MCL_RANK": str(rank)})
        self.lines[rank] = []

    def wait_for(self, rank, word, limit=30):
        """Reads rank's output up to the line starting with word."""
        end = time.monotonic() + limit
        for line in self.procs[rank].stdout:
            self.lines[rank].append(line)
            if line.startswith(word):
                return
            assert time.monotonic() < end, f"no {word} from rank {rank}"
        raise AssertionError(f"rank {rank} ended before {word}:\n" +
                             "".join(self.lines[rank]))

    def signal(self, rank, sig):
        self.procs[rank].send_signal(sig)

    def results(self, limit=90):
        """The RESULT of every survivor (as a dict with its output)."""
        out = {}
        for rank in self.survivors:
            try:
                rest, _ = self.procs[rank].communicate(timeout=limit)
            except subprocess.TimeoutExpired:
                self.procs[rank].kill()
                rest, _ = self.procs[rank].communicate()
                rest += "\n(hung: killed by the test)"
            text = "".join(self.lines[rank]) + rest
            found = [ln for ln in text.splitlines() if ln.startswith("RESULT ")]
            assert found, f"rank {rank} reported nothing:\n{text}"
            result = json.loads(found[-1][len("RESULT "):])
            result["output"] = text
            out[rank] = result
        return out

    def end(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.kill()
            p.communicate()
        shutil.rmtree(self.scratch, ignore_errors=True)


def died_at(proc, limit=30):
    end = time.monotonic() + limit
    while proc.poll() is None:
        assert time.monotonic() < end, "the victim did not die"
        time.sleep(0.005)
    return time.monotonic()


def inject(job):
    """Runs the plan's fault; returns when it struck (time.monotonic())."""
    plan = job.plan
    if plan == "root_init":
        # Rank 0 runs the rendezvous; ranks 0 and 1 are in init, waiting
        # for rank 2, when rank 0 dies. Rank 2 comes after, to a dead root.
        job.start(0)
        job.start(1)
        job.wait_for(1, "INIT")
        time.sleep(0.5)
        job.signal(0, signal.SIGKILL)
        struck = died_at(job.procs[0])
        job.start(2)
        return struck
    for rank in range(NRANKS):
        job.start(rank)
    if plan in ("kill_before", "kill_during", "kill_after"):
        return died_at(job.procs[job.victim])
    if plan in ("stop", "abort_thread"):
        job.wait_for(job.victim, "LOOPING")
        time.sleep(0.3 if plan == "stop" else 0)
        job.signal(job.victim, signal.SIGSTOP)
        return time.monotonic()
    if plan == "cable":
        for rank in range(NRANKS):
            job.wait_for(rank, "LOOPING")
        time.sleep(0.5)
        if isinstance(job.hosts, NamespaceHosts):
            job.hosts.cut(up=False)
        return time.monotonic()
    raise AssertionError(plan)


def check_survivor(job, rank, r, struck, timeout, bound=None, says=None):
    out = r["output"]
    assert "(hung" not in out, out
    assert r["error_code"] != "no error", f"rank {rank} saw no error:\n{out}"
    assert "wrong_result" not in r, out
    if job.plan == "abort_thread":
        # The abort ends the waiting call at once (milliseconds on a quiet
        # machine), long before MCL_TIMEOUT (60 s).
        assert r["aborted_at"] > 0, out
        assert r["error_at"] - r["aborted_at"] < 10, out
        assert r["error_code"].startswith("remote error"), out
    else:
        waited = r["error_at"] - struck
        limit = timeout + SLACK if bound is None else bound
        assert waited < limit, \
            f"rank {rank}: error {waited:.2f} s after the fault:\n{out}"
        if says is not None:
            assert says in r["error"], out
        if job.plan == "root_init":
            # No communicator: init names the rendezvous (rank 0 runs it).
            assert r["failed_in"] == "init", out
            assert "rendezvous root" in r["error"], out
        else:
            assert r["async_error"] == r["error_code"], out
            assert "abort_error" not in r, out
            assert f"rank {job.victim}" in r["error"] or (
                job.plan == "cable" and "rank " in r["error"]), out
    assert r["fds_after_abort"] == r["fds_before"], out
    assert r["threads_after_abort"] == r["threads_before"], out
    assert r["mapped_segments"] == 0, out
    assert "rebuild_error" not in r, out
    assert r["fds_after_rebuild"] == r["fds_before"], out
    if job.plan == "kill_after":
        assert r["calls_done"] >= 3, out


def shm_segments(pids):
    """mcl's segments in /dev/shm made by the processes pids: a segment's
    name says which process made it (mcl-<kind><pid>-...). Other tests run
    beside this one, and their segments come and go meanwhile."""
    try:
        names = os.listdir("/dev/shm")
    except FileNotFoundError:  # macOS: POSIX segments have no directory
        return set()
    made_by = (re.match(r"mcl-[a-z](\d+)-", n) for n in names)
    return {m.string for m in made_by if m and int(m.group(1)) in pids}


def run_case(hosts, transport, plan, timeout=None, extra_env=None, bound=None,
             says=None):
    """bound: the seconds within which every survivor must fail (default
    MCL_TIMEOUT + SLACK); says: what its error must say."""
    if timeout is None:
        timeout = 60 if plan == "abort_thread" else TIMEOUT
    extra = {"FAULT_CALLS": "3", **(extra_env or {})}
    if plan == "cable" and transport == "rdma":
        # Mac 1's cable to Mac 0 (rdma_en3) goes down 1.5 s after init.
        extra["MCL_EMU_FAULTS"] = "port_down:1:rdma_en3@1500"
    if plan == "cable" and transport == "tcp":
        # No standby over the LAN: the pair has nowhere to go and every rank
        # must fail, then rebuild (test_cable_loss.py has the pair moving
        # to the LAN instead).
        extra["MCL_TCP_STANDBY"] = "0"
    job = Job(hosts, transport, plan, timeout, extra)
    try:
        struck = inject(job)
        if plan == "cable" and transport == "rdma":
            struck = None  # known only to the provider: checked by bounds
        if plan == "cable" and isinstance(hosts, NamespaceHosts):
            # Every rank fails within the timeout, then waits on the gate
            # for the cable to be back before it rebuilds.
            time.sleep(timeout + SLACK)
            hosts.cut(up=True)
        if plan == "cable":
            open(job.gate, "w").close()
        results = job.results()
        if struck is None:  # rdma port: 1.5 s after the ranks' init
            struck = min(r["error_at"] for r in results.values())
        # For people (pytest -s): how long each survivor took to fail.
        # abort_thread: from the abort on; else from the fault.
        print(f"\n{transport} {plan}: " + ", ".join(
            f"rank {k} {v['error_at'] - v.get('aborted_at', struck):.3f} s"
            for k, v in sorted(results.items())))
        for rank, r in results.items():
            try:
                check_survivor(job, rank, r, struck, timeout, bound, says)
            except AssertionError as failure:
                others = "".join(f"\n--- rank {k}:\n{v['output']}"
                                 for k, v in results.items() if k != rank)
                raise AssertionError(f"{failure}{others}") from None
    finally:
        job.end()
        if plan == "cable" and isinstance(hosts, NamespaceHosts):
            hosts.cut(up=True)
    # Not even the victim's segments stay: they are unlinked once mapped.
    assert shm_segments({p.pid for p in job.procs.values()}) == set()


PLANS = ["kill_before", "kill_during", "kill_after", "stop", "root_init",
         "abort_thread"]


@pytest.mark.parametrize("plan", PLANS + ["cable"])
@pytest.mark.parametrize("transport", ["shm", "rdma"])
def test_fault_on_this_host(transport, plan):
    if plan == "cable" and transport == "shm":
        pytest.skip("shared memory has no cable")
    run_case(LocalHosts(), transport, plan)


@pytest.mark.parametrize("plan", PLANS + ["cable"])
def test_fault_between_namespaces_over_tcp(netns_hosts, plan):
    run_case(netns_hosts, "tcp", plan)


# The side channel (MCL_PEER_TIMEOUT) over the emulated fabric, where UC
# itself says nothing: MCL_TIMEOUT is a minute, so only the side channel can
# end the survivors' wait well before it (a death within about a second, a
# stopped peer after PEER_TIMEOUT on a quiet machine; the bounds leave room
# for a loaded one, and `says` names the mechanism).
PEER_TIMEOUT = 3


@pytest.mark.parametrize("plan,bound,says", [
    ("kill_during", 10.0, "rank 1's process died"),
    ("stop", PEER_TIMEOUT + 10.0, "rank 1 stopped answering"),
])
def test_silent_peer_over_the_emulated_fabric(plan, bound, says):
    run_case(LocalHosts(), "rdma", plan, timeout=60,
             extra_env={"MCL_PEER_TIMEOUT": str(PEER_TIMEOUT)}, bound=bound,
             says=says)


def test_a_rank_computing_for_30_s_is_not_declared_dead():
    job = Job(LocalHosts(), "rdma", "compute", timeout=60,
              extra={"MCL_PEER_TIMEOUT": str(PEER_TIMEOUT),
                     "FAULT_COMPUTE_S": "30"})
    job.survivors = list(range(NRANKS))
    try:
        start = time.monotonic()
        for rank in range(NRANKS):
            job.start(rank)
        results = job.results(limit=120)
        for rank, r in results.items():
            assert r["error_code"] == "no error", r["output"]
            assert "wrong_result" not in r, r["output"]
        assert time.monotonic() - start >= 30
    finally:
        job.end()
