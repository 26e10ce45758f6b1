"""Self-test of the namespace testbed: /usr/bin/python3 -m pytest tests/cluster/test_testbed.py

Needs root (it creates network namespaces); skipped otherwise. Every testbed
here is named selftest-*; leftovers of an interrupted run are removed first.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testbed  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CLI = [sys.executable, os.path.join(HERE, "testbed.py")]

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("tc") is None,
    reason="needs root and iproute2 (network namespaces)")

# Expected cabling of the named shapes: host count and the cabled pairs.
SHAPES = {
    "pair": (2, [(0, 1)]),
    "pair2": (2, [(0, 1), (0, 1)]),
    "line3": (3, [(0, 1), (1, 2)]),
    "ring3": (3, [(0, 1), (0, 2), (1, 2)]),
    "ring4": (4, [(0, 1), (0, 3), (1, 2), (2, 3)]),
    "mesh4": (4, [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]),
}

# One ICMP echo from inside a namespace, in Python so the test needs no ping
# binary (Debian's minimal images have none). Exit 0 iff the echo came back.
PROBE = r"""
import os, socket, struct, sys, time

def csum(b):
    b += b"\0" * (len(b) % 2)
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xFFFF)
    return ~(s + (s >> 16)) & 0xFFFF

dst, timeout = sys.argv[1], float(sys.argv[2])
ident = os.getpid() & 0xFFFF
body = struct.pack("!BBHHH", 8, 0, 0, ident, 1) + b"mcl-testbed"
pkt = body[:2] + struct.pack("!H", csum(body)) + body[4:]
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
try:
    s.sendto(pkt, (dst, 0))
except OSError:  # no route: no cable to there, or it is down
    sys.exit(1)
deadline = time.monotonic() + timeout
while deadline > time.monotonic():
    s.settimeout(deadline - time.monotonic())
    try:
        data, (src, _) = s.recvfrom(2048)
    except socket.timeout:
        break
    ihl = (data[0] & 15) * 4
    kind, _, _, rid, _ = struct.unpack("!BBHHH", data[ihl:ihl + 8])
    if kind == 0 and rid == ident and src == dst:
        sys.exit(0)
sys.exit(1)
"""


def reachable(tb, probes, timeout=1.0):
    """{(host, address): bool}, all probes at once to keep the test short."""
    procs = {(h, addr): tb.exec(h, [sys.executable, "-c", PROBE, addr, str(timeout)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for h, addr in probes}
    return {k: p.wait() == 0 for k, p in procs.items()}


def cable_addrs(desc, host):
    return [i["address"] for h in desc["hosts"] if h["host"] == host
            for i in h["interfaces"] if i["name"] != "lan0"]


def ours(name):
    return [ns for ns in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                                        check=True).stdout.split() if ns.startswith(f"mcl-{name}-")]


def root_links():
    out = subprocess.run(["ip", "-j", "link", "show"], capture_output=True, text=True, check=True).stdout
    return {l["ifname"] for l in json.loads(out)}


@pytest.fixture(scope="module", autouse=True)
def clean_slate():
    for name in testbed.list_netns():
        if name.startswith("selftest-"):
            testbed.teardown(name)
    yield


@pytest.mark.parametrize("shape", SHAPES)
def test_shape_cables_reach_and_nothing_else(shape):
    hosts, pairs = SHAPES[shape]
    with testbed.Testbed(shape, f"selftest-{shape}") as tb:
        d = tb.describe()
        assert [h["host"] for h in d["hosts"]] == list(range(hosts))
        assert sorted((c["a"]["host"], c["b"]["host"]) for c in d["cables"]) == pairs
        for c in d["cables"]:
            # tb<peer>, or tb<peer>c<k> when the pair has several cables
            doubled = pairs.count((c["a"]["host"], c["b"]["host"])) > 1
            suffix = f"c{c['index']}" if doubled else ""
            assert c["a"]["interface"] == f"tb{c['b']['host']}{suffix}"
            assert c["b"]["interface"] == f"tb{c['a']['host']}{suffix}"
            assert c["subnet"].endswith("/30")

        probes = []
        for c in d["cables"]:
            probes += [(c["a"]["host"], c["b"]["address"]), (c["b"]["host"], c["a"]["address"])]
        uncabled = [(a, b) for a in range(hosts) for b in range(hosts) if a != b
                    and (min(a, b), max(a, b)) not in pairs]
        denied = [(a, addr) for a, b in uncabled for addr in cable_addrs(d, b)]
        got = reachable(tb, probes + denied)
        assert [p for p in probes if not got[p]] == [], "cable ends that cannot ping each other"
        assert [p for p in denied if got[p]] == [], "hosts reach each other without a cable"


def test_lan_reaches_everyone_but_does_not_route_cables():
    with testbed.Testbed("line3", "selftest-lan", lan=True) as tb:
        d = tb.describe()
        assert d["lan"]["subnet"] == "10.78.0.0/24"
        lan = {h["host"]: i["address"] for h in d["hosts"] for i in h["interfaces"] if i["name"] == "lan0"}
        assert lan == {0: "10.78.0.1", 1: "10.78.0.2", 2: "10.78.0.3"}
        over_lan = [(a, lan[b]) for a in lan for b in lan if a != b]
        # The LAN does not make h0 and h2 neighbours on the cables.
        no_cable = [(0, addr) for addr in cable_addrs(d, 2)] + [(2, addr) for addr in cable_addrs(d, 0)]
        got = reachable(tb, over_lan + no_cable)
        assert all(got[p] for p in over_lan)
        assert not any(got[p] for p in no_cable)


def test_hosts_are_distinct_network_stacks():
    with testbed.Testbed("mesh4", "selftest-ns") as tb:
        ids = [tb.run(h, ["readlink", "/proc/self/ns/net"], capture_output=True, text=True,
                      check=True).stdout.strip() for h in range(tb.hosts)]
        assert len(set(ids)) == 4
        assert os.readlink("/proc/self/ns/net") not in ids


def test_cable_down_and_up():
    with testbed.Testbed("pair2", "selftest-cable") as tb:
        c0, c1 = tb.describe()["cables"]
        both = [(0, c0["b"]["address"]), (1, c0["a"]["address"]),
                (0, c1["b"]["address"]), (1, c1["a"]["address"])]
        assert all(reachable(tb, both).values())

        assert tb.cable(0, 1, 1, up=False) == "tb1c1"
        got = reachable(tb, both)
        assert got[both[0]] and got[both[1]], "the other cable of the pair must keep working"
        assert not got[both[2]] and not got[both[3]]
        states = {i["name"]: i["state"] for h in tb.describe()["hosts"] if h["host"] == 0
                  for i in h["interfaces"]}
        assert states == {"tb1c0": "UP", "tb1c1": "DOWN"}

        tb.cable(0, 1, 1, up=True)
        assert all(reachable(tb, both).values())
        with pytest.raises(testbed.TestbedError):
            tb.cable(0, 1, 2, up=False)


def test_exit_removes_everything_and_ends_processes():
    before = root_links()
    with testbed.Testbed("ring3", "selftest-clean", lan=True) as tb:
        assert len(ours("selftest-clean")) == 4
        sleeper = tb.exec(1, ["sleep", "600"])
        assert root_links() == before, "nothing may be created in the root namespace"
    assert ours("selftest-clean") == []
    assert root_links() == before
    assert sleeper.poll() is not None, "processes inside a host must end with it"


@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt])
def test_exception_midway_still_tears_down(exc):
    with pytest.raises(exc):
        with testbed.Testbed("mesh4", "selftest-raise", lan=True) as tb:
            tb.exec(2, ["sleep", "600"])
            raise exc("mid-test")
    assert ours("selftest-raise") == []


def test_failed_up_cleans_up_after_itself(monkeypatch):
    calls = []

    def failing_tbf(ns, ifname, rate):  # fail on the third cable end
        calls.append(ifname)
        if len(calls) == 3:
            raise testbed.TestbedError("injected")
    monkeypatch.setattr(testbed, "_add_tbf", failing_tbf)
    with pytest.raises(testbed.TestbedError, match="injected"):
        with testbed.Testbed("ring4", "selftest-halfup", rate=100):
            pass
    assert ours("selftest-halfup") == []


def test_down_removes_leftovers_and_is_idempotent():
    for ns in ("mcl-selftest-left-h0", "mcl-selftest-left-h3", "mcl-selftest-left-lan"):
        subprocess.run(["ip", "netns", "add", ns], check=True)
    for _ in range(2):
        assert subprocess.run(CLI + ["down", "--name", "selftest-left"]).returncode == 0
        assert ours("selftest-left") == []


def test_sigterm_tears_down():
    code = ("import sys; sys.path.insert(0, %r)\n"
            "import testbed\n"
            "with testbed.Testbed('pair', 'selftest-term'):\n"
            "    print('up', flush=True); import time; time.sleep(60)\n" % HERE)
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "up"
    assert len(ours("selftest-term")) == 2
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=10) == 128 + signal.SIGTERM
    assert ours("selftest-term") == []


def test_two_testbeds_coexist():
    # Same addresses in both: they live in different namespaces.
    with testbed.Testbed("pair", "selftest-a") as a, testbed.Testbed("ring3", "selftest-b") as b:
        da, db = a.describe(), b.describe()
        assert da["cables"][0]["subnet"] == db["cables"][0]["subnet"]
        assert all(reachable(a, [(0, da["cables"][0]["b"]["address"])]).values())
        from_h0 = [(0, c["b"]["address"]) for c in db["cables"] if c["a"]["host"] == 0]
        assert all(reachable(b, from_h0).values())
        a.down()
        assert ours("selftest-a") == [] and len(ours("selftest-b")) == 3
        assert all(reachable(b, [(1, db["cables"][-1]["b"]["address"])]).values())


def test_jaccl_matrix_with_doubled_pair(tmp_path):
    # Host 0 and 1 have two cables (en3<->en2 and en4<->en5), 0 and 2 one,
    # 1 and 2 none. The k-th name on each side is the k-th cable.
    matrix = [[None, ["rdma_en3", "rdma_en4"], "rdma_en5"],
              [["rdma_en2", "rdma_en5"], None, None],
              [["rdma_en7"], None, None]]
    path = tmp_path / "devices.json"
    path.write_text(json.dumps(matrix))
    with testbed.Testbed(str(path), "selftest-jaccl") as tb:
        d = tb.describe()
        ends = [(c["a"]["host"], c["a"]["interface"], c["b"]["host"], c["b"]["interface"], c["index"])
                for c in d["cables"]]
        assert ends == [(0, "en3", 1, "en2", 0), (0, "en4", 1, "en5", 1), (0, "en5", 2, "en7", 0)]
        probes = [(0, c["b"]["address"]) for c in d["cables"]] + [(c["b"]["host"], c["a"]["address"])
                                                                  for c in d["cables"]]
        denied = [(1, addr) for addr in cable_addrs(d, 2)]
        got = reachable(tb, probes + denied)
        assert all(got[p] for p in probes) and not any(got[p] for p in denied)
        assert tb.cable(1, 0, 1, up=False) == "en5"


@pytest.mark.parametrize("matrix, message", [
    ([[None, "rdma_en3"], [None, None]], "lists 1 cable"),
    ([[None, ["en3", "en3"]], [["en1", "en2"], None]], "used twice"),
    ([["en1"]], "no cable to itself"),
    ([[None, "a-very-long-interface-name"], ["en1", None]], "bad interface name"),
])
def test_bad_matrix_is_rejected(matrix, message):
    with pytest.raises(testbed.TestbedError, match=message):
        testbed.parse_spec(matrix)


def test_rate_limits_the_cable():
    mbit, size = 20, 1 << 20  # 1 MiB at 20 Mbit/s takes ~0.4 s
    with testbed.Testbed("pair", "selftest-rate", rate=mbit) as tb:
        c = tb.describe()["cables"][0]
        assert {i["rate_mbit"] for h in tb.describe()["hosts"] for i in h["interfaces"]} == {mbit}
        server = tb.exec(1, [sys.executable, "-c", (
            "import socket, sys, time\n"
            "s = socket.create_server((sys.argv[1], 7777)); print('ready', flush=True)\n"
            "c, _ = s.accept(); t = time.monotonic(); n = 0\n"
            "while (b := c.recv(1 << 16)): n += len(b)\n"
            "print(n, time.monotonic() - t)\n"), c["b"]["address"]], stdout=subprocess.PIPE, text=True)
        assert server.stdout.readline().strip() == "ready"
        tb.run(0, [sys.executable, "-c",
                   "import socket, sys; s = socket.create_connection((sys.argv[1], 7777)); "
                   "s.sendall(b'x' * int(sys.argv[2])); s.close()", c["b"]["address"], str(size)],
               check=True, timeout=20)
        n, seconds = server.communicate(timeout=20)[0].split()
        assert int(n) == size
        # Loose: only that tbf is in the way (unlimited veth takes milliseconds).
        assert float(seconds) > 0.5 * size * 8 / (mbit * 1e6)


def test_cli_round_trip():
    name = "selftest-cli"
    assert subprocess.run(CLI + ["up", "pair", "--name", name, "--lan"], capture_output=True).returncode == 0
    try:
        again = subprocess.run(CLI + ["up", "pair", "--name", name], capture_output=True, text=True)
        assert again.returncode == 1 and "already exists" in again.stderr

        d = json.loads(subprocess.run(CLI + ["describe", "--name", name], capture_output=True,
                                      check=True).stdout)
        assert len(d["hosts"]) == 2 and len(d["cables"]) == 1 and d["lan"] is not None

        # exec passes the environment through and returns the command's exit code
        r = subprocess.run(CLI + ["exec", "--name", name, "--host", "1", "--", "sh", "-c",
                                  'readlink /proc/self/ns/net; echo "$MCL_PROBE"; exit 7'],
                           capture_output=True, text=True, env={**os.environ, "MCL_PROBE": "hello"})
        assert r.returncode == 7 and r.stdout.split()[1] == "hello"
        assert r.stdout.split()[0] != os.readlink("/proc/self/ns/net")

        down = subprocess.run(CLI + ["cable", "--name", name, "--host", "1", "--peer", "0", "down"],
                              capture_output=True, text=True, check=True)
        assert down.stdout.strip() == "h1 tb0 down"
        states = [i["state"] for h in json.loads(subprocess.run(
            CLI + ["describe", "--name", name], capture_output=True, check=True).stdout)["hosts"]
            for i in h["interfaces"] if i["name"] == "tb0"]
        assert states == ["DOWN"]
        subprocess.run(CLI + ["cable", "--name", name, "--host", "1", "--peer", "0", "up"],
                       capture_output=True, check=True)
    finally:
        assert subprocess.run(CLI + ["down", "--name", name]).returncode == 0
    assert ours(name) == []
    assert subprocess.run(CLI + ["describe", "--name", name], capture_output=True).returncode == 1
