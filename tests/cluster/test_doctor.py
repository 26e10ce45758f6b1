"""The doctor (`mcl-perf topo --check`, and the same checks at init) on the
cabling mistakes Mac owners make, built with network namespaces: a cable
whose far end was never configured, or configured in another subnet; a
doubled cable in one /24; Thunderbolt ports in a bridge; data over Wi-Fi;
MTUs that differ across a cable; a topology file that contradicts the
cables; interfaces in odd states. Each test shows the message a user sees.

Needs root (skips otherwise) and MCL_PERF (CTest sets it)."""

import json
import os
import re
import subprocess
import time

import pytest

from jobs import PERF, SECRET, finish, start_ranks
from testbed import Testbed

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"),
    pytest.mark.skipif(not os.path.exists(PERF), reason="MCL_PERF not built"),
]

LAN_ROOT = "10.78.0.1:{}"  # host 0 on the LAN: reachable whatever the cables


def sh(bed, host, *commands):
    for command in commands:
        bed.run(host, command.split(), check=True)


def doctor(bed, hosts, port, expect, extra_env=None, args=()):
    """`mcl-perf topo --check` on every host; rank 0's report. The other
    ranks only join (exit 0)."""
    env = {"MCL_DEBUG": "WARN"}
    env.update(extra_env or {})
    outs = finish(start_ranks(bed, hosts, LAN_ROOT.format(port),
                              ["topo", "--check"] + list(args), env))
    assert outs[0][0] == expect, f"rank 0 exited {outs[0][0]}:\n{outs[0][1]}"
    for rank, (code, out) in enumerate(outs[1:], 1):
        assert code == 0, f"rank {rank} exited {code}:\n{out}"
    return outs[0][1]


def unconfigured_far_end(bed):
    """Host 0's cable port has a /30 of its own; host 1's end has none."""
    sh(bed, 0, "ip addr flush dev tb1", "ip addr add 10.99.3.1/30 dev tb1")
    sh(bed, 1, "ip addr flush dev tb0")


def test_cable_whose_far_end_has_no_address(tmp_path):
    with Testbed("pair", "mcl-doc-far", lan=True) as bed:
        unconfigured_far_end(bed)
        dot = tmp_path / "cluster.dot"
        out = doctor(bed, [0, 1], 29950, 1, args=["--dot", str(dot)])
        assert "# Checks: 2 errors, 0 warnings" in out, out
        # Hosts are named "<host name>/<network namespace>".
        assert "ERROR   host 0 (" in out, out
        assert ("mcl-doc-far-h0) tb1 has 10.99.3.1/30, a cable's own subnet, "
                "but its far end has no address: host 1 (") in out, out
        assert "mcl-doc-far-h1) tb0 is up with a link and no address\n" in out
        assert ("mcl-doc-far-h1) tb0 the other address of the subnet: `sudo ip "
                "addr add 10.99.3.2/30 dev tb0`") in out, out
        assert "are cabled (tb1<->tb0 not configured), but their traffic " \
               "takes lan lan0>lan0" in out, out
        # The picture: a dashed red edge where the cable should work, and
        # a note on each host the errors are about.
        picture = dot.read_text()
        assert "h0 -- h1 [style=dashed, color=red" in picture, picture
        assert "shape=note, color=red" in picture, picture
        assert "-- h1 [style=dotted, color=red]" in picture, picture

        # A job prints the errors before its table, the library logs each
        # as one WARN line at init, and the verdict names the slow path.
        outs = finish(start_ranks(bed, [0, 1], LAN_ROOT.format(29951),
                                  ["allreduce", "-b", "8", "-e", "64K", "-f",
                                   "64", "-c", "1", "-n", "2", "-w", "1"],
                                  {"MCL_DEBUG": "WARN"}))
        for rank, (code, text) in enumerate(outs):
            assert code == 0, f"rank {rank}:\n{text}"
        out = outs[0][1]
        assert "# Topology: 2 errors in the cabling (mcl-perf topo --check " \
               "explains each)" in out, out
        assert out.index("# Topology: 2 errors") < out.index("# Out of bounds")
        warns = [l for l in out.splitlines() if "MCL WARN" in l and
                 "topology error" in l]
        assert len(warns) == 2, out
        assert "tb1 has 10.99.3.1/30" in warns[0] + warns[1], warns
        assert "traffic takes host 0 (" in out and \
               ") over lan lan0>lan0 (mcl-perf topo --check says why)" in out, out


def test_far_end_configured_in_another_subnet():
    with Testbed("pair", "mcl-doc-sub", lan=True) as bed:
        sh(bed, 0, "ip addr flush dev tb1", "ip addr add 10.99.3.1/30 dev tb1")
        sh(bed, 1, "ip addr flush dev tb0", "ip addr add 10.99.4.2/30 dev tb0")
        out = doctor(bed, [0, 1], 29952, 1)
        assert "tb1 (10.99.3.1/30) and host 1 (" in out, out
        assert "tb0 (10.99.4.2/30) look like the two ends of one cable, in " \
               "different subnets" in out, out
        assert "replace 10.99.4.2/30 with 10.99.3.2/30, `sudo ip addr add " \
               "10.99.3.2/30 dev tb0`" in out, out


def test_doubled_cable_in_one_subnet():
    # The most common way to misconfigure a doubled cable: both cables'
    # four ends in one /24. mcl sees a shared network and no cable.
    with Testbed("pair2", "mcl-doc-24", lan=True) as bed:
        sh(bed, 0, "ip addr flush dev tb1c0", "ip addr flush dev tb1c1",
           "ip addr add 10.99.0.1/24 dev tb1c0",
           "ip addr add 10.99.0.2/24 dev tb1c1")
        sh(bed, 1, "ip addr flush dev tb0c0", "ip addr flush dev tb0c1",
           "ip addr add 10.99.0.3/24 dev tb0c0",
           "ip addr add 10.99.0.4/24 dev tb0c1")
        out = doctor(bed, [0, 1], 29953, 1)
        assert "# Cables (0)" in out, out
        assert "# Checks: 1 error, 0 warnings" in out, out
        assert ") tb1c0, tb1c1 and host 1 (" in out, out
        assert ") tb0c0, tb0c1: 2 cables in one subnet, 10.99.0.0/24" in out, out
        assert "fix: Give each cable its own /30" in out, out


LINE_OF_THUNDERBOLT = [[None, "rdma_thunderbolt0", None],
                       ["rdma_thunderbolt0", None, "rdma_thunderbolt1"],
                       [None, "rdma_thunderbolt0", None]]


def test_thunderbolt_ports_in_a_bridge():
    # Interfaces named thunderbolt* are Thunderbolt links to mcl (Linux'
    # thunderbolt-net names them so). Host 1 bridges both of its cables.
    with Testbed(LINE_OF_THUNDERBOLT, "mcl-doc-br", lan=True) as bed:
        sh(bed, 1, "ip link add br0 type bridge",
           "ip addr flush dev thunderbolt0", "ip addr flush dev thunderbolt1",
           "ip link set thunderbolt0 master br0",
           "ip link set thunderbolt1 master br0",
           "ip addr add 10.99.0.2/24 dev br0", "ip link set br0 up")
        sh(bed, 0, "ip addr flush dev thunderbolt0",
           "ip addr add 10.99.0.1/24 dev thunderbolt0")
        sh(bed, 2, "ip addr flush dev thunderbolt0",
           "ip addr add 10.99.0.3/24 dev thunderbolt0")
        out = doctor(bed, [0, 1, 2], 29954, 1)
        assert "WARNING bridge (br0) is on on host 1 (" in out, out
        assert ") with Thunderbolt ports thunderbolt0, thunderbolt1\n" in out, out
        assert "fix: Take the ports out of the bridge and give each cable its " \
               "own subnet: `sudo ip link set <port> nomaster`" in out, out
        assert "ERROR   Thunderbolt links share one subnet, 10.99.0.0/24: " \
               "host 0 (" in out, out


def test_bridges_on_every_host_of_a_ring():
    # Every host bridges its two cables: a loop. The bridges run STP, so
    # the test cannot make a broadcast storm on the machine running it;
    # the doctor cannot see cables through bridges and says what it knows.
    ring = [[None, "rdma_thunderbolt0", "rdma_thunderbolt1"],
            ["rdma_thunderbolt0", None, "rdma_thunderbolt1"],
            ["rdma_thunderbolt0", "rdma_thunderbolt1", None]]
    with Testbed(ring, "mcl-doc-loop", lan=True) as bed:
        for h in range(3):
            sh(bed, h, "ip link add br0 type bridge stp_state 1",
               "ip addr flush dev thunderbolt0",
               "ip addr flush dev thunderbolt1",
               "ip link set thunderbolt0 master br0",
               "ip link set thunderbolt1 master br0", "ip link set br0 up")
        out = doctor(bed, [0, 1, 2], 29955, 0)
        assert "# Checks: 0 errors, 3 warnings" in out, out
        for h in range(3):
            assert f"WARNING bridge (br0) is on on host {h} (" in out, out
        assert "other hosts bridge their ports too" in out, out
        assert "if they close a loop, every broadcast circles it forever" in out


def rename_lan_to_wifi(bed, hosts):
    for h in range(hosts):
        sh(bed, h, "ip link set lan0 down", "ip link set lan0 name wlan0",
           "ip link set wlan0 up")
    # Carrier comes back through the kernel's link watcher.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        states = [bed.run(h, ["cat", "/sys/class/net/wlan0/operstate"],
                          capture_output=True, text=True).stdout.strip()
                  for h in range(hosts)]
        if all(s == "up" for s in states):
            return
        time.sleep(0.05)


def test_data_over_wifi():
    # wl* interfaces are Wi-Fi (kernel and systemd names).
    with Testbed("pair", "mcl-doc-wifi", lan=True) as bed:
        rename_lan_to_wifi(bed, 2)
        out = doctor(bed, [0, 1], 29956, 1, {"MCL_SOCKET_IFNAME": "wlan0"})
        assert "are cabled (tb1<->tb0), but their traffic takes lan " \
               "wlan0>wlan0 (Wi-Fi: host 0 (" in out, out
    # Two hosts with no cable at all, over Wi-Fi: a warning.
    with Testbed([[None, None], [None, None]], "mcl-doc-air", lan=True) as bed:
        rename_lan_to_wifi(bed, 2)
        out = doctor(bed, [0, 1], 29957, 0)
        assert "# Checks: 0 errors, 1 warning" in out, out
        assert ") exchange data over Wi-Fi: lan wlan0>wlan0" in out, out
        assert "fix: Cable the hosts (Thunderbolt or Ethernet)" in out, out


def test_mtu_that_differs_across_a_cable():
    with Testbed("pair", "mcl-doc-mtu", lan=True) as bed:
        sh(bed, 0, "ip link set tb1 mtu 9000")
        out = doctor(bed, [0, 1], 29958, 0)
        assert "# Checks: 0 errors, 1 warning" in out, out
        assert ") tb0: MTU 9000 at tb1, 1500 at tb0" in out, out
        assert "`sudo ip link set tb1 mtu 1500`" in out, out


def test_interfaces_in_odd_states():
    # Down, no carrier, no address, many addresses, IPv6 only: the doctor
    # reports what matters and nothing breaks.
    with Testbed("pair", "mcl-doc-odd", lan=True) as bed:
        sh(bed, 0, "ip link add odd0 type veth peer name odd1",
           "ip addr add 10.99.9.1/30 dev odd1", "ip link set odd1 up",
           "ip link add bare0 type veth peer name bare1",
           "ip link set bare0 up", "ip link set bare1 up",
           "ip addr add 10.99.10.1/24 dev tb1",
           "ip addr add 10.99.11.1/24 dev tb1",
           "ip addr add fd00:99::1/64 dev tb1 nodad")
        # A second cable with IPv6 addresses only, in a /127.
        sh(bed, 0, f"ip link add v6a type veth peer name v6b netns "
                   f"{bed.netns(1)}",
           "ip addr add fd00:77::0/127 dev v6a nodad", "ip link set v6a up")
        sh(bed, 1, "ip addr add fd00:77::1/127 dev v6b nodad",
           "ip link set v6b up")
        out = doctor(bed, [0, 1], 29959, 0)
        assert "# Cables (2)" in out, out
        assert "0:v6a          fd00:77::       <-> 1:v6b          fd00:77::1" \
               in out, out
        assert "INFO    host 0 (" in out and \
               ") odd1 has a cable's address (10.99.9.1/30) but no link" in out
        assert "# Checks: 0 errors, 0 warnings" in out, out


@pytest.mark.parametrize("spec", ["pair2", "pair"])
def test_cable_down_at_one_end_names_both_ends(spec):
    # Host 0's end of the first cable switched off, as a cable pulled out
    # of a port (or a port turned off) leaves it: the doctor once said
    # "0 errors, 0 warnings" and an info about host 1's end. A warning
    # where the pair keeps a cable, an error where it was their only one.
    with Testbed(spec, f"mcl-doc-{spec}-down", lan=True) as bed:
        bed.cable(0, 1, 0, up=False)
        only = spec == "pair"
        out = doctor(bed, [0, 1], 29776 if only else 29777, 1 if only else 0)
        here, there = ("tb1", "tb0") if only else ("tb1c0", "tb0c0")
        assert re.search(
            rf"{'ERROR  ' if only else 'WARNING'} the cable between host 0 "
            rf"\(\S+\) {here} \(10\.77\.0\.1/30\) and host 1 \(\S+\) "
            rf"{there} \(10\.77\.0\.2/30\) is down: host 0 \(\S+\)'s end "
            rf"is switched off \(interface down\), host 1 \(\S+\)'s end has "
            rf"no link", out), out
        assert ("# Checks: 1 error, 0 warnings" if only
                else "# Checks: 0 errors, 1 warning") in out, out
        assert "but no link" not in out, out  # said once, as the cable


def dump(bed, hosts, port, path, extra_env=None):
    env = {"MCL_TOPO_DUMP_FILE": str(path)}
    env.update(extra_env or {})
    doctor(bed, hosts, port, 0, env)
    return json.loads(path.read_text())


def test_topology_file_that_contradicts_detection(tmp_path):
    with Testbed("pair2", "mcl-doc-file", lan=True) as bed:
        topo = dump(bed, [0, 1], 29960, tmp_path / "both.json")
        assert len(topo["links"]) == 2
        one = tmp_path / "one.json"
        one.write_text(json.dumps(dict(topo, links=topo["links"][:1])))
        setting = f"MCL_TOPO_FILE={one}"
        # Not forced: the job follows detection (both cables) and says so.
        out = doctor(bed, [0, 1], 29961, 0, {"MCL_TOPO_FILE": str(one)})
        assert f"(detected; {setting} contradicts it (MCL_TOPO_FILE_FORCE=1 " \
               "follows the file))" in out, out
        assert "tcp  cable: tb1c0>tb0c0 + tb1c1>tb0c1" in out, out
        assert "WARNING detection sees cable tb1c1<->tb0c1 between host 0 (" \
               in out, out
        assert f"which {setting} does not list" in out, out
        assert "why: the file lists tb1c0<->tb0c0; the job follows detection" \
               in out, out
        # Forced: the file wins, and the difference is still reported.
        out = doctor(bed, [0, 1], 29962, 0, {"MCL_TOPO_FILE": str(one),
                                             "MCL_TOPO_FILE_FORCE": "1"})
        assert f"shape pair (file {one})" in out, out
        assert "tcp  cable: tb1c0>tb0c0\n" in out, out
        assert "the file is forced (MCL_TOPO_FILE_FORCE=1), so the cable " \
               "stays unused" in out, out
        # A cable the file lists and detection does not see (pulled).
        both = tmp_path / "both.json"
        sh(bed, 1, "ip link set tb0c1 down")
        out = doctor(bed, [0, 1], 29963, 0, {"MCL_TOPO_FILE": str(both)})
        assert f"WARNING MCL_TOPO_FILE={both} lists cable tb1c1<->tb0c1 " \
               "between host 0 (" in out, out
        assert "which detection does not see" in out, out
        assert "why: detection sees tb1c0<->tb0c0 between them; the job " \
               "follows detection" in out, out
        assert "tcp  cable: tb1c0>tb0c0\n" in out, out
        out = doctor(bed, [0, 1], 29964, 1, {"MCL_TOPO_FILE": str(both),
                                             "MCL_TOPO_FILE_FORCE": "1"})
        assert "ERROR   MCL_TOPO_FILE=" in out, out
        assert "the job will try a cable that may not be there" in out, out


PYTHONPATH = os.environ.get("CLUSTER_PYTHONPATH", "")


@pytest.mark.skipif(not os.path.isdir(os.path.join(PYTHONPATH, "mcl")),
                    reason="the Python bindings are not built (CLUSTER_PYTHONPATH)")
def test_python_init_warns_of_the_doctors_errors():
    script = ("import mcl\n"
              "comm = mcl.init_from_env()\n"
              "print('joined', comm.rank, flush=True)\n"
              "comm.close()\n")
    with Testbed("pair", "mcl-doc-py", lan=True) as bed:
        unconfigured_far_end(bed)
        procs = []
        for rank in range(2):
            env = {"MCL_RANK": str(rank), "MCL_WORLD_SIZE": "2",
                   "MCL_ROOT": LAN_ROOT.format(29965), "MCL_SECRET": SECRET,
                   "MCL_TIMEOUT": "20", "MCL_DEBUG": "NONE",
                   "PYTHONPATH": PYTHONPATH}
            procs.append(bed.exec(rank, ["/usr/bin/python3", "-c", script],
                                  env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True))
        outs = finish(procs)
        for rank, (code, out) in enumerate(outs):
            assert code == 0 and f"joined {rank}" in out, out
        # Rank 0 warns once per error, through Python's warnings (the
        # library's own WARN lines are off here: MCL_DEBUG=NONE).
        assert outs[0][1].count("TopologyWarning: topology error:") == 2, outs[0][1]
        assert "tb1 has 10.99.3.1/30, a cable's own subnet" in outs[0][1]
        assert "TopologyWarning" not in outs[1][1], outs[1][1]
