#!/usr/bin/python3
"""A fake Mac cluster made of Linux network namespaces.

Each Mac is a network namespace (mcl-NAME-h0, -h1, ...). Each Thunderbolt
cable is a veth pair between two of them, on its own point-to-point /30, the
way macOS gives every Thunderbolt port its own small subnet. Optionally every
host also joins a shared "LAN" (a bridge in namespace mcl-NAME-lan), the
Wi-Fi/Ethernet network real Macs have next to their cables.

Nothing is created in the root namespace: every interface lives inside a
testbed namespace, so deleting the namespaces removes everything, and two
testbeds (even with the same addresses) cannot disturb each other or the host.

CLI: see `testbed.py --help`. API: `with Testbed("ring3", "x") as tb: ...`.
Standard library only; needs root and iproute2 (`ip`, `tc`).
"""

import argparse
import contextlib
import ipaddress
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

# Two private ranges that real Mac clusters rarely use (MLX uses 192.168.x.y,
# home networks 192.168/10.0). They only ever exist inside the namespaces.
CABLE_NET = "10.77.0.0/16"  # cable c gets 10.77.c.0/30: .1 on the lower host, .2 on the higher
LAN_NET = "10.78.0.0/24"    # host i gets 10.78.0.(i+1)

LAN_IF = "lan0"      # the host's LAN interface
LAN_BRIDGE = "br0"   # the switch, inside mcl-NAME-lan

IFNAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,15}$")  # Linux allows 15 chars (IFNAMSIZ - 1)
NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,32}$")


class TestbedError(Exception):
    pass


# --- Cabling specs -----------------------------------------------------------

@dataclass(frozen=True)
class Cable:
    a: int        # lower host
    b: int        # higher host
    if_a: str     # interface name on host a
    if_b: str     # interface name on host b


@dataclass(frozen=True)
class Layout:
    hosts: int
    cables: tuple  # of Cable, ordered by (a, b, k); the order gives cable ids


def _shape_pairs(shape):
    """Host count and the list of cabled pairs (a pair twice = two cables)."""
    fixed = {"pair": (2, [(0, 1)]), "pair2": (2, [(0, 1), (0, 1)])}
    if shape in fixed:
        return fixed[shape]
    m = re.fullmatch(r"(ring|mesh|line)(\d+)", shape)
    if not m:
        raise TestbedError(f"unknown shape {shape!r} (pair, pair2, lineN, ringN, meshN "
                           "or a path to a JSON device matrix)")
    kind, n = m.group(1), int(m.group(2))
    if n < 2 or (kind == "ring" and n < 3):
        raise TestbedError(f"shape {shape!r} needs more hosts")
    if kind == "line":
        return n, [(i, i + 1) for i in range(n - 1)]
    if kind == "ring":
        return n, [(i, i + 1) for i in range(n - 1)] + [(0, n - 1)]
    return n, [(i, j) for i in range(n) for j in range(i + 1, n)]


def layout_from_shape(shape):
    n, pairs = _shape_pairs(shape)
    count = {}
    for p in pairs:
        count[p] = count.get(p, 0) + 1
    # tb<peer> reads as "the cable to host <peer>"; with several cables to one
    # peer every one of them gets its index, so none looks like "the" cable.
    cables = []
    for (a, b), k in sorted(count.items()):
        for i in range(k):
            suffix = f"c{i}" if k > 1 else ""
            cables.append(Cable(a, b, f"tb{b}{suffix}", f"tb{a}{suffix}"))
    return Layout(n, tuple(cables))


def layout_from_matrix(matrix):
    """MLX's JACCL device matrix: matrix[i][j] is null, "rdma_enX", or a list
    with one device per cable; the k-th cable of a pair is the k-th name on
    both sides. rdma_enX sits on interface enX, so that is the name we use."""
    n = len(matrix) if isinstance(matrix, list) else 0
    if n < 1 or any(not isinstance(row, list) or len(row) != n for row in matrix):
        raise TestbedError("device matrix must be a square JSON array of arrays")

    def names(i, j):
        cell = matrix[i][j]
        cell = [] if cell is None else [cell] if isinstance(cell, str) else cell
        if not isinstance(cell, list) or not all(isinstance(c, str) for c in cell):
            raise TestbedError(f"device matrix [{i}][{j}]: expected null, a name or a list of names")
        return [c[len("rdma_"):] if c.startswith("rdma_") else c for c in cell]

    cables, used = [], [set() for _ in range(n)]
    for i in range(n):
        if names(i, i):
            raise TestbedError(f"device matrix [{i}][{i}]: a host has no cable to itself")
        for j in range(i + 1, n):
            ni, nj = names(i, j), names(j, i)
            if len(ni) != len(nj):
                raise TestbedError(f"device matrix: host {i} lists {len(ni)} cable(s) to "
                                   f"host {j}, host {j} lists {len(nj)} back")
            for a_if, b_if in zip(ni, nj):
                for host, ifname in ((i, a_if), (j, b_if)):
                    if not IFNAME_RE.match(ifname) or ifname in ("lo", LAN_IF):
                        raise TestbedError(f"host {host}: bad interface name {ifname!r}")
                    if ifname in used[host]:
                        raise TestbedError(f"host {host}: interface {ifname!r} used twice")
                    used[host].add(ifname)
                cables.append(Cable(i, j, a_if, b_if))
    return Layout(n, tuple(cables))


def parse_spec(spec):
    """A shape name, a path to a device-matrix JSON file, or the matrix itself."""
    if isinstance(spec, Layout):
        return spec
    if isinstance(spec, list):
        return layout_from_matrix(spec)
    if os.path.exists(spec):
        with open(spec) as f:
            try:
                return layout_from_matrix(json.load(f))
            except json.JSONDecodeError as e:
                raise TestbedError(f"{spec}: not JSON: {e}") from None
    return layout_from_shape(spec)


def cable_subnet(cable_net, c):
    """Cable c's /30: the first /30 of the c-th /24, so the third octet reads
    as the cable id (10.77.3.1 <-> 10.77.3.2 is cable 3)."""
    net = ipaddress.ip_network(cable_net)
    if net.version != 4 or net.prefixlen > 24:
        raise TestbedError(f"cable net {cable_net} must be IPv4 and /24 or larger")
    if c >= 2 ** (24 - net.prefixlen):
        raise TestbedError(f"cable net {cable_net} has no room for {c + 1} cables")
    return ipaddress.ip_network((int(net.network_address) + (c << 8), 30))


# --- Running iproute2 --------------------------------------------------------

def _run(argv, check=True):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and p.returncode != 0:
        raise TestbedError(f"{' '.join(argv)}: {p.stderr.strip() or 'exit %d' % p.returncode}")
    return p


def _ip(*args, ns=None):
    return _run(["ip"] + (["-n", ns] if ns else []) + list(args))


def _ip_json(*args, ns=None):
    return json.loads(_ip("-j", *args, ns=ns).stdout or "[]")


def _set_sysctl(ns, path, value):
    # /proc/sys/net shows the namespace of the process reading it, so write
    # it from inside; sh is always there, the sysctl tool not always.
    _run(["ip", "netns", "exec", ns, "sh", "-c", 'echo "$1" > "$2"', "sh", str(value), path])


@contextlib.contextmanager
def _signals_deferred():
    """Hold SIGINT/SIGTERM while tearing down, so a second Ctrl-C cannot
    leave half a testbed behind; they are delivered right after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    sigs = {signal.SIGINT, signal.SIGTERM}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def host_netns(name, host):
    return f"mcl-{name}-h{host}"


def lan_netns(name):
    return f"mcl-{name}-lan"


def list_netns(name=None):
    """Testbed namespaces present: {name: [netns, ...]} (or just one name's)."""
    out = _run(["ip", "netns", "list"]).stdout
    found = {}
    for line in out.splitlines():
        ns = line.split()[0] if line.split() else ""
        m = re.fullmatch(r"mcl-(.+)-(h\d+|lan)", ns)
        if m and (name is None or m.group(1) == name):
            found.setdefault(m.group(1), []).append(ns)
    return found if name is None else found.get(name, [])


def _kill_netns_pids(ns):
    """A namespace outlives `ip netns del` while a process still runs in it
    (with its veths and addresses), so end its processes first."""
    def pids():
        p = _run(["ip", "netns", "pids", ns], check=False)
        return [int(x) for x in p.stdout.split()] if p.returncode == 0 else []

    for sig, wait in ((signal.SIGTERM, 1.0), (signal.SIGKILL, 2.0)):
        left = pids()
        if not left:
            return
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while pids() and time.monotonic() < deadline:
            time.sleep(0.02)


def teardown(name):
    """Remove every namespace of testbed NAME (and with them every veth,
    bridge and qdisc in them). Idempotent; also cleans up a half-made `up`."""
    with _signals_deferred():
        for ns in sorted(list_netns(name)):
            _kill_netns_pids(ns)
            _run(["ip", "netns", "del", ns], check=False)
        left = list_netns(name)
        if left:
            raise TestbedError(f"could not delete {', '.join(left)}")


def bring_up(name, layout, lan=False, rate=None, cable_net=CABLE_NET, lan_net=LAN_NET):
    if not NAME_RE.match(name):
        raise TestbedError(f"bad testbed name {name!r} (letters, digits, _ and -; up to 32)")
    if list_netns(name):
        raise TestbedError(f"testbed {name!r} already exists; run: testbed.py down --name {name}")
    subnets = [cable_subnet(cable_net, c) for c in range(len(layout.cables))]  # fail before creating
    lan_net = ipaddress.ip_network(lan_net)
    if lan and layout.hosts + 2 > lan_net.num_addresses:
        raise TestbedError(f"LAN {lan_net} too small for {layout.hosts} hosts")
    # Give every veth end its own ifindex. Fresh namespaces would number both
    # ends of a cable alike (2, 3, ...), and the kernel then batches the
    # carrier-up of such a veth with others for up to a second (linkwatch
    # only hurries links whose ifindex differs from their peer's).
    ifindex = iter(range(100, 1 << 20))
    try:
        for h in range(layout.hosts):
            ns = host_netns(name, h)
            _ip("netns", "add", ns)
            _ip("link", "set", "lo", "up", ns=ns)
            # A Mac does not route between its ports; a new namespace may have
            # inherited forwarding from the root one (devconf_inherit_init_net).
            _set_sysctl(ns, "/proc/sys/net/ipv4/ip_forward", 0)

        for cable, net in zip(layout.cables, subnets):
            ends = ((host_netns(name, cable.a), cable.if_a, net[1]),
                    (host_netns(name, cable.b), cable.if_b, net[2]))
            (ns_a, if_a, _), (ns_b, if_b, _) = ends
            # Create the pair already split between the two hosts, so it never
            # shows up (or collides with anything) in the root namespace.
            _ip("link", "add", if_a, "index", str(next(ifindex)), "type", "veth",
                "peer", "name", if_b, "index", str(next(ifindex)), "netns", ns_b, ns=ns_a)
            for ns, ifname, addr in ends:
                _ip("addr", "add", f"{addr}/{net.prefixlen}", "dev", ifname, ns=ns)
                if rate:
                    _add_tbf(ns, ifname, rate)
                _ip("link", "set", ifname, "up", ns=ns)

        if lan:
            ns_lan = lan_netns(name)
            _ip("netns", "add", ns_lan)
            _ip("link", "add", LAN_BRIDGE, "type", "bridge", ns=ns_lan)
            _ip("link", "set", LAN_BRIDGE, "up", ns=ns_lan)
            for h in range(layout.hosts):
                port = f"h{h}"
                _ip("link", "add", port, "index", str(next(ifindex)), "type", "veth",
                    "peer", "name", LAN_IF, "index", str(next(ifindex)),
                    "netns", host_netns(name, h), ns=ns_lan)
                _ip("link", "set", port, "master", LAN_BRIDGE, "up", ns=ns_lan)
                addr = lan_net[h + 1]
                _ip("addr", "add", f"{addr}/{lan_net.prefixlen}", "dev", LAN_IF, ns=host_netns(name, h))
                _ip("link", "set", LAN_IF, "up", ns=host_netns(name, h))
        # Wait for carrier: until the kernel's link watcher marks both ends of
        # a veth running, its qdisc drops every packet, so the first ping (or
        # connect) right after `up` could fail.
        ifaces = [(host_netns(name, c.a), c.if_a) for c in layout.cables]
        ifaces += [(host_netns(name, c.b), c.if_b) for c in layout.cables]
        if lan:
            ifaces += [(host_netns(name, h), LAN_IF) for h in range(layout.hosts)]
        _wait_running(ifaces)
    except BaseException:
        teardown(name)
        raise


def _wait_running(ifaces, timeout=5.0):
    """Poll until every (netns, interface) has operstate UP."""
    want = {}
    for ns, ifname in ifaces:
        want.setdefault(ns, set()).add(ifname)
    deadline = time.monotonic() + timeout
    while want:
        for ns in list(want):
            up = {l["ifname"] for l in _ip_json("link", "show", ns=ns) if l.get("operstate") == "UP"}
            want[ns] -= up
            if not want[ns]:
                del want[ns]
        if not want:
            return
        if time.monotonic() > deadline:
            raise TestbedError(f"links not up after {timeout} s: {want}")
        time.sleep(0.01)


def _add_tbf(ns, ifname, rate_mbit):
    # Bucket of ~10 ms of traffic (at least 64 KiB, so one GSO super-packet
    # from veth still fits), and a 20 ms queue: the link gets slower, not lossy.
    burst = max(64 * 1024, int(rate_mbit * 1e6 / 8 / 100))
    _run(["tc", "-n", ns, "qdisc", "add", "dev", ifname, "root", "tbf",
          "rate", f"{rate_mbit}mbit", "burst", str(burst), "latency", "20ms"])


# --- Reading a testbed back --------------------------------------------------

def describe(name):
    """What is there now, read from the namespaces themselves (so it also
    shows cables taken down). Cables are matched by subnet: two hosts with
    addresses in the same /30 are the two ends of one cable."""
    present = list_netns(name)
    if not present:
        raise TestbedError(f"no testbed {name!r}")
    hosts = sorted(int(ns.rsplit("-h", 1)[1]) for ns in present if not ns.endswith("-lan"))
    out = {"name": name, "hosts": [], "cables": [], "lan": None}
    ends = {}  # subnet -> [(host, interface, address)]
    for h in hosts:
        ns = host_netns(name, h)
        rates = {}
        for q in json.loads(_run(["tc", "-n", ns, "-j", "qdisc", "show"]).stdout or "[]"):
            if q.get("kind") == "tbf" and q.get("root"):
                rates[q.get("dev")] = q["options"]["rate"] * 8 / 1e6
        ifaces = []
        for link in _ip_json("addr", "show", ns=ns):
            if link["ifname"] == "lo":
                continue
            for a in link.get("addr_info", []):
                if a.get("family") != "inet":
                    continue
                ifaces.append({"name": link["ifname"], "address": a["local"], "prefix": a["prefixlen"],
                               "state": link.get("operstate"), "rate_mbit": rates.get(link["ifname"])})
                if link["ifname"] != LAN_IF:
                    net = ipaddress.ip_network(f"{a['local']}/{a['prefixlen']}", strict=False)
                    ends.setdefault(net, []).append((h, link["ifname"], a["local"]))
        out["hosts"].append({"host": h, "netns": ns, "interfaces": ifaces})

    per_pair = {}
    for net in sorted(ends):
        pair = sorted(ends[net])
        if len(pair) != 2 or pair[0][0] == pair[1][0]:
            continue  # not a cable (someone added an address by hand)
        (a, if_a, ad_a), (b, if_b, ad_b) = pair
        k = per_pair[(a, b)] = per_pair.get((a, b), -1) + 1
        out["cables"].append({"id": len(out["cables"]), "subnet": str(net), "index": k,
                              "a": {"host": a, "interface": if_a, "address": ad_a},
                              "b": {"host": b, "interface": if_b, "address": ad_b}})
    if lan_netns(name) in present:
        lan_addrs = [i for h in out["hosts"] for i in h["interfaces"] if i["name"] == LAN_IF]
        subnet = (str(ipaddress.ip_network(f"{lan_addrs[0]['address']}/{lan_addrs[0]['prefix']}",
                                           strict=False)) if lan_addrs else None)
        out["lan"] = {"netns": lan_netns(name), "bridge": LAN_BRIDGE, "interface": LAN_IF, "subnet": subnet}
    return out


def find_cable(desc, host, peer, index=0):
    """The description of the index-th cable between host and peer."""
    a, b = sorted((host, peer))
    for c in desc["cables"]:
        if (c["a"]["host"], c["b"]["host"], c["index"]) == (a, b, index):
            return c
    raise TestbedError(f"no cable {index} between host {host} and host {peer}")


def set_cable(name, host, peer, index=0, up=True):
    """Take host's end of a cable down or up (the peer sees carrier loss)."""
    c = find_cable(describe(name), host, peer, index)
    end = c["a"] if c["a"]["host"] == host else c["b"]
    _ip("link", "set", end["interface"], "up" if up else "down", ns=host_netns(name, host))
    if up:
        _wait_running([(host_netns(name, e["host"]), e["interface"]) for e in (c["a"], c["b"])])
    return end["interface"]


def exec_argv(name, host, argv):
    return ["ip", "netns", "exec", host_netns(name, host)] + list(argv)


# --- The API -----------------------------------------------------------------

class Testbed:
    """with Testbed("mesh4", "t1", lan=True) as tb:
           tb.run(0, ["ip", "addr"])

    Creates the testbed on enter and always removes it on exit, including on
    exceptions, Ctrl-C and (from the main thread) SIGTERM."""

    def __init__(self, spec, name, lan=False, rate=None, cable_net=CABLE_NET, lan_net=LAN_NET):
        self.layout = parse_spec(spec)
        self.name, self.lan, self.rate = name, lan, rate
        self.cable_net, self.lan_net = cable_net, lan_net
        self.hosts = self.layout.hosts
        self._procs = []
        self._old_sigterm = None

    def __enter__(self):
        # SIGTERM would end Python without running __exit__; turn it into an
        # exception so the with-block unwinds and the namespaces go away.
        if threading.current_thread() is threading.main_thread() \
                and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            self._old_sigterm = signal.signal(signal.SIGTERM, _raise_on_sigterm)
        try:
            self.up()
        except BaseException:
            self._restore_sigterm()
            raise
        return self

    def __exit__(self, *exc):
        try:
            self.down()
        finally:
            self._restore_sigterm()
        return False

    def _restore_sigterm(self):
        if self._old_sigterm is not None:
            signal.signal(signal.SIGTERM, self._old_sigterm)
            self._old_sigterm = None

    def up(self):
        bring_up(self.name, self.layout, self.lan, self.rate, self.cable_net, self.lan_net)

    def down(self):
        teardown(self.name)  # also ends the processes started with exec()
        for p in self._procs:  # reap them, they are ours
            with contextlib.suppress(Exception):
                p.wait(timeout=5)
        self._procs.clear()

    def netns(self, host):
        self._check_host(host)
        return host_netns(self.name, host)

    def exec(self, host, argv, env=None, **popen_kwargs):
        """Start argv inside host's namespace. env adds to (and overrides)
        this process's environment rather than replacing it."""
        self._check_host(host)
        p = subprocess.Popen(exec_argv(self.name, host, argv), env=_merged_env(env), **popen_kwargs)
        self._procs.append(p)
        return p

    def run(self, host, argv, env=None, **run_kwargs):
        self._check_host(host)
        return subprocess.run(exec_argv(self.name, host, argv), env=_merged_env(env), **run_kwargs)

    def cable(self, host, peer, index=0, up=True):
        return set_cable(self.name, host, peer, index, up)

    def describe(self):
        return describe(self.name)

    def _check_host(self, host):
        if not 0 <= host < self.hosts:
            raise TestbedError(f"host {host} out of range (testbed {self.name!r} has {self.hosts})")


def _raise_on_sigterm(signum, frame):
    raise SystemExit(128 + signum)


def _merged_env(env):
    return None if env is None else {**os.environ, **env}


# --- The CLI -----------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake Mac cluster: namespaces as Macs, veth pairs as "
                                 "Thunderbolt cables.")
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("up", help="create a testbed")
    p.add_argument("spec", help="pair, pair2, lineN, ringN, meshN, or a JACCL device-matrix JSON file")
    p.add_argument("--name", required=True)
    p.add_argument("--lan", action="store_true", help="also join every host to a shared LAN bridge")
    p.add_argument("--rate", type=float, metavar="MBIT", help="limit every cable end with tbf")
    p.add_argument("--cable-net", default=CABLE_NET, help=f"cable c uses the first /30 of its c-th /24 "
                   f"(default {CABLE_NET})")
    p.add_argument("--lan-net", default=LAN_NET, help=f"LAN subnet (default {LAN_NET})")

    p = sub.add_parser("down", help="remove a testbed (idempotent)")
    p.add_argument("--name", required=True)

    p = sub.add_parser("exec", help="run a command in a host's namespace")
    p.add_argument("--name", required=True)
    p.add_argument("--host", type=int, required=True)
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD ARGS...")

    p = sub.add_parser("cable", help="take one end of a cable down or up")
    p.add_argument("--name", required=True)
    p.add_argument("--host", type=int, required=True)
    p.add_argument("--peer", type=int, required=True)
    p.add_argument("--index", type=int, default=0, help="which cable of a doubled pair (default 0)")
    p.add_argument("state", choices=["down", "up"])

    p = sub.add_parser("describe", help="print the testbed as JSON")
    p.add_argument("--name", required=True)

    sub.add_parser("list", help="list the testbeds present")

    args = ap.parse_args(argv)
    if os.geteuid() != 0:
        print("testbed.py: needs root (network namespaces)", file=sys.stderr)
        return 1
    try:
        if args.cmd == "up":
            layout = parse_spec(args.spec)
            bring_up(args.name, layout, args.lan, args.rate, args.cable_net, args.lan_net)
            for c in describe(args.name)["cables"]:
                a, b = c["a"], c["b"]
                print(f"h{a['host']} {a['interface']} {a['address']} <-> "
                      f"h{b['host']} {b['interface']} {b['address']}  ({c['subnet']})")
        elif args.cmd == "down":
            teardown(args.name)
        elif args.cmd == "exec":
            cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
            if not cmd:
                ap.error("exec needs a command after --")
            ns = host_netns(args.name, args.host)
            if ns not in list_netns(args.name):
                raise TestbedError(f"no host {args.host} in testbed {args.name!r}")
            sys.stdout.flush()
            os.execvp("ip", exec_argv(args.name, args.host, cmd))  # keeps env, exit code, signals
        elif args.cmd == "cable":
            ifname = set_cable(args.name, args.host, args.peer, args.index, args.state == "up")
            print(f"h{args.host} {ifname} {args.state}")
        elif args.cmd == "describe":
            print(json.dumps(describe(args.name), indent=2))
        elif args.cmd == "list":
            for name, nss in sorted(list_netns().items()):
                print(f"{name}: {' '.join(sorted(nss))}")
    except TestbedError as e:
        print(f"testbed.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
