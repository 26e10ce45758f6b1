"""What another user of the host, a stranger on the LAN and someone on the
path between two hosts can and cannot do to a job, with real processes,
real users (setpriv to nobody) and network namespaces:

- a single-host job without MCL_SECRET listens on loopback only, shares a
  random secret through a file only its user can read, and removes it;
- another local user can neither read that secret, nor join with the
  secret mcl used to derive from public values, nor make the job fail;
- across hosts without MCL_SECRET, init refuses and says how to set one;
- a transparent proxy between two hosts (in a router namespace) that
  flips one byte makes the receiving rank fail with an integrity error
  naming its peer, in the rendezvous and in TCP data under mac, encrypt and
  auto (a routed path); a capture there under auto holds none of a known
  plaintext payload, and under none it does (the capture works).

Needs root (skips otherwise), iptables and setpriv, and MCL_PERF and
CLUSTER_PYTHONPATH (CTest sets them)."""

import glob
import hashlib
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time

import pytest

from jobs import PERF, SMALL, finish

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHONPATH = os.environ.get("CLUSTER_PYTHONPATH", "")

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="namespaces and setpriv need root"),
    pytest.mark.skipif(not os.path.exists(PERF), reason="MCL_PERF not built"),
    pytest.mark.skipif(shutil.which("iptables") is None or
                       shutil.which("setpriv") is None,
                       reason="iptables and setpriv (scripts/install-deps.sh)"),
]

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]


def ns_exec(ns, argv, env=None, **kwargs):
    full = dict(os.environ)
    full.update(env or {})
    return subprocess.Popen(["ip", "netns", "exec", ns] + argv, env=full,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, **kwargs)


def ns_run(ns, argv, **kwargs):
    return subprocess.run(["ip", "netns", "exec", ns] + argv,
                          capture_output=True, text=True, **kwargs)


class Namespaces:
    """Hosts A (10.81.1.1) and B (10.81.2.1) in networks of their own,
    joined by router R; optionally, every TCP connection through R goes
    through proxy.py (iptables REDIRECT), which records and may alter it."""

    def __init__(self, name):
        self.a, self.r, self.b = (f"{name}-a", f"{name}-r", f"{name}-b")
        self.proxy = None

    def __enter__(self):
        self.down()
        for ns in (self.a, self.r, self.b):
            subprocess.run(["ip", "netns", "add", ns], check=True)
            ns_run(ns, ["ip", "link", "set", "lo", "up"], check=True)
        for host, ns, net in (("a", self.a, 1), ("b", self.b, 2)):
            subprocess.run(["ip", "link", "add", f"sec{host}0", "netns", ns,
                            "type", "veth", "peer", "name", f"r{host}0",
                            "netns", self.r], check=True)
            ns_run(ns, ["ip", "addr", "add", f"10.81.{net}.1/24", "dev",
                        f"sec{host}0"], check=True)
            ns_run(ns, ["ip", "link", "set", f"sec{host}0", "up"], check=True)
            ns_run(ns, ["ip", "route", "add", "default", "via",
                        f"10.81.{net}.254"], check=True)
            ns_run(self.r, ["ip", "addr", "add", f"10.81.{net}.254/24", "dev",
                            f"r{host}0"], check=True)
            ns_run(self.r, ["ip", "link", "set", f"r{host}0", "up"], check=True)
        ns_run(self.r, ["sysctl", "-qw", "net.ipv4.ip_forward=1"], check=True)
        return self

    def __exit__(self, *exc):
        self.down()

    def down(self):
        if self.proxy is not None and self.proxy.poll() is None:
            self.proxy.kill()
            self.proxy.communicate()
        for ns in (self.a, self.r, self.b):
            pids = subprocess.run(["ip", "netns", "pids", ns],
                                  capture_output=True, text=True).stdout.split()
            for pid in pids:
                subprocess.run(["kill", "-9", pid], capture_output=True)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)

    def start_proxy(self, capture, flip_after=None, flip_port=None):
        """Every TCP connection routed through R goes through the proxy:
        `capture` gets every byte; with flip_after, the byte at that
        offset of what flows back on each connection to flip_port (or any
        port) is flipped."""
        ns_run(self.r, ["iptables", "-t", "nat", "-A", "PREROUTING", "-p",
                        "tcp", "-j", "REDIRECT", "--to-ports", "7777"],
               check=True)
        argv = [sys.executable, os.path.join(HERE, "proxy.py"), "7777", capture]
        if flip_after is not None:
            argv += [str(flip_after), str(flip_port or 0)]
        self.proxy = ns_exec(self.r, argv)
        line = self.proxy.stdout.readline()
        assert "listening" in line, line


def perf_rank(ns, rank, nranks, root, env=None, wrap=(), args=None):
    full = {"MCL_RANK": str(rank), "MCL_WORLD_SIZE": str(nranks),
            "MCL_ROOT": root, "MCL_TIMEOUT": "20", "MCL_DEBUG": "WARN"}
    full.update(env or {})
    return ns_exec(ns, list(wrap) + [PERF] + (args or ["allreduce"] + SMALL),
                   env=full)


def wait_listening(ns, port, timeout=10):
    """The local addresses listening on port in ns, once there are any."""
    until = time.time() + timeout
    while time.time() < until:
        out = ns_run(ns, ["ss", "-ltnH", f"sport = :{port}"]).stdout
        found = [line.split()[3] for line in out.splitlines() if line.strip()]
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError(f"nothing listens on port {port} in {ns}")


def old_public_secret(root_text, job_id=""):
    """The secret mcl used to derive without MCL_SECRET: anyone could
    compute it from the port (ss) and the job id."""
    text = f"{len(root_text)}:{root_text}|{len(job_id)}:{job_id}|"
    return hashlib.blake2b(text.encode(), digest_size=16,
                           key=b"mcl-derived-secret-v1").hexdigest()


def test_single_host_job_without_secret_listens_on_loopback_only(tmp_path):
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    env = {"XDG_RUNTIME_DIR": str(runtime)}
    with Namespaces("mcl-sec-lo") as net:
        port = 29980
        rank0 = perf_rank(net.a, 0, 2, f"localhost:{port}", env)
        listening = wait_listening(net.a, port)
        # Only loopback, though host A has a routable address too.
        assert all(a.startswith("127.") or a.startswith("[::1]")
                   for a in listening), listening
        files = glob.glob(str(runtime / f"mcl-secret-{port}-*"))
        assert len(files) == 1, files
        assert os.stat(files[0]).st_mode & 0o777 == 0o600
        # A stranger on the other host cannot even connect.
        probe = ns_run(net.b, [sys.executable, "-c",
                               "import socket; socket.create_connection("
                               f"('10.81.1.1', {port}), timeout=2)"])
        assert probe.returncode != 0, "the rendezvous was reachable from B"
        rank1 = perf_rank(net.a, 1, 2, f"localhost:{port}", env)
        for rank, (code, out) in enumerate(finish([rank0, rank1], 60)):
            assert code == 0, f"rank {rank} failed:\n{out}"
            assert "Out of bounds values : 0 OK" in out or rank == 1, out
        # Once every rank had it, the secret is gone.
        assert glob.glob(str(runtime / "mcl-secret-*")) == []


def test_another_user_cannot_read_join_or_disturb_the_job():
    with Namespaces("mcl-sec-user") as net:
        port = 29981
        root = f"127.0.0.1:{port}"
        # Long enough for the watcher below to look at its segments.
        longer = ["allreduce", "-b", "8", "-e", "8M", "-f", "2", "-n", "20",
                  "-w", "2", "-c", "1"]
        rank0 = perf_rank(net.a, 0, 2, root, args=longer)
        wait_listening(net.a, port)
        secret_files = glob.glob(f"/tmp/mcl-0/mcl-secret-{port}-*") + glob.glob(
            os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/nonexistent"),
                         f"mcl-secret-{port}-*"))
        assert secret_files, "rank 0 left no secret file"
        # Nobody cannot read it.
        read = ns_run(net.a, NOBODY + ["cat", secret_files[0]])
        assert read.returncode != 0, "another user read the job's secret"
        # Nobody joins first, as rank 1, with the secret mcl used to derive
        # from public values: refused at once; the root keeps serving.
        intruder = perf_rank(net.a, 1, 2, root,
                             {"MCL_SECRET": old_public_secret(root),
                              "MCL_TIMEOUT": "5"}, wrap=NOBODY)
        code, out = finish([intruder], 30)[0]
        assert code != 0, f"another user joined the job:\n{out}"
        assert "wrong secret" in out, out
        # Nor can it read a shared-memory segment of the job while it runs.
        # Only the job's own segments are judged (a name carries its
        # creator's pid): tests beside this one make segments open to
        # others on purpose (shared_memory_owner_test).
        watcher = ns_exec(net.a, NOBODY + [sys.executable, "-c", (
            "import glob, os, time\n"
            "end = time.time() + 4\n"
            "while time.time() < end:\n"
            "    for name in glob.glob('/dev/shm/mcl-*'):\n"
            "        try:\n"
            "            os.close(os.open(name, os.O_RDONLY))\n"
            "            print('opened', name)\n"
            "        except OSError:\n"
            "            print('refused', name)\n")])
        rank1 = perf_rank(net.a, 1, 2, root, args=longer)
        for rank, (c, o) in enumerate(finish([rank0, rank1], 60)):
            assert c == 0, f"rank {rank} failed after the intrusion:\n{o}"
        watched, _ = watcher.communicate(timeout=30)
        job = {rank0.pid, rank1.pid}  # ip netns exec runs them in its place
        def of_job(verdict):
            return [line for line in watched.splitlines()
                    if line.startswith(verdict) and
                    int(re.search(r"/mcl-[a-z](\d+)-", line).group(1)) in job]
        # (The job unlinks its segments once its peer has them: the
        # watcher sees them only if it looks in that moment.)
        assert not of_job("opened"), watched


def test_across_hosts_without_a_secret_init_refuses_clearly():
    with Namespaces("mcl-sec-refuse") as net:
        root = "10.81.1.1:29982"
        procs = [perf_rank(net.a, 0, 2, root, {"MCL_TIMEOUT": "30"}),
                 perf_rank(net.b, 1, 2, root, {"MCL_TIMEOUT": "30"})]
        start = time.monotonic()
        for rank, (code, out) in enumerate(finish(procs, 30)):
            assert code != 0, f"rank {rank} ran without a secret:\n{out}"
            assert "MCL_SECRET is not set" in out, out
            assert "openssl rand -hex 16" in out, out
        assert time.monotonic() - start < 15, "the refusal waited for a timeout"


PAYLOAD_SCRIPT = """
import numpy, mcl
comm = mcl.init_from_env()
known = numpy.frombuffer(b"KNOWN-PLAINTEXT-" * 65536, dtype=numpy.uint8).copy()
x = known.copy() if comm.rank == 0 else numpy.zeros_like(known)
x = comm.broadcast(x, root=0)
assert bytes(x) == bytes(known), "broadcast came back wrong"
comm.close()
print("ok")
"""


def payload_job(net, port, protect, extra_env=None):
    secret = secrets.token_hex(16)
    procs = []
    for rank, ns in enumerate((net.a, net.b)):
        env = {"MCL_RANK": str(rank), "MCL_WORLD_SIZE": "2",
               "MCL_ROOT": f"10.81.1.1:{port}", "MCL_SECRET": secret,
               "MCL_TIMEOUT": "20", "MCL_DEBUG": "WARN",
               "MCL_WIRE_PROTECT": protect, "PYTHONPATH": PYTHONPATH}
        env.update(extra_env or {})
        procs.append(ns_exec(ns, ["/usr/bin/python3", "-c", PAYLOAD_SCRIPT],
                             env=env))
    return finish(procs, 60)


needs_bindings = pytest.mark.skipif(
    not PYTHONPATH, reason="the Python bindings are not built (CLUSTER_PYTHONPATH)")


@needs_bindings
def test_a_capture_on_a_routed_path_holds_no_plaintext_under_auto(tmp_path):
    for protect, port, plaintext_expected in (("none", 29983, True),
                                              ("auto", 29984, False)):
        capture = tmp_path / f"capture-{protect}.bin"
        with Namespaces(f"mcl-sec-cap{port % 10}") as net:
            net.start_proxy(str(capture))
            for rank, (code, out) in enumerate(payload_job(net, port, protect)):
                assert code == 0 and "ok" in out, f"rank {rank} ({protect}):\n{out}"
        data = capture.read_bytes()
        assert len(data) > 1 << 20, f"the proxy saw {len(data)} bytes"
        seen = b"KNOWN-PLAINTEXT-" * 4 in data
        assert seen == plaintext_expected, (
            f"MCL_WIRE_PROTECT={protect}: plaintext "
            f"{'missing from' if plaintext_expected else 'visible in'} the capture")


@needs_bindings
@pytest.mark.parametrize("protect", ["auto", "mac", "encrypt"])
def test_a_flipped_byte_in_tcp_data_is_an_integrity_error(tmp_path, protect):
    port = {"auto": 29985, "mac": 29986, "encrypt": 29987}[protect]
    with Namespaces(f"mcl-sec-flip{port % 10}") as net:
        # Far into a connection: only a data stream carries that much.
        net.start_proxy(str(tmp_path / "capture.bin"), flip_after=300000)
        outs = payload_job(net, port, protect, {"MCL_TRANSPORT": "tcp"})
    text = "\n".join(out for _, out in outs)
    assert any(code != 0 for code, _ in outs), text
    assert "integrity check failed" in text, text
    assert "tcp to rank" in text, text  # names the peer and the link


def test_a_flipped_byte_at_the_rendezvous_is_an_integrity_error(tmp_path):
    with Namespaces("mcl-sec-rdv") as net:
        port = 29988
        # The handshake's 80 bytes pass; the next frame is sealed.
        net.start_proxy(str(tmp_path / "capture.bin"), flip_after=100,
                        flip_port=port)
        secret = secrets.token_hex(16)
        root = f"10.81.1.1:{port}"
        procs = [perf_rank(net.a, 0, 2, root, {"MCL_SECRET": secret}),
                 perf_rank(net.b, 1, 2, root, {"MCL_SECRET": secret})]
        outs = finish(procs, 60)
    code1, out1 = outs[1]
    assert code1 != 0, out1
    assert "integrity check failed on a message from" in out1, out1
    assert "rendezvous root at 10.81.1.1" in out1, out1
