"""Multi-host tests: mcl over TCP between network namespaces (hosts) joined
by veth cables, with real processes and real sockets. Each rank is an
mcl-perf process started in its host's namespace; mcl-perf checks every
element of every result (-c 1), for every type and op.

Needs root (skips otherwise) and MCL_PERF (the mcl-perf binary; CTest sets
it)."""

import json
import os
import re
import signal
import threading
import time

import pytest

from jobs import (LONG, PERF, SMALL, cable_root, finish, run_job, start_ranks,
                  wait_for_traffic)
import testbed
from testbed import Testbed as Cluster

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"),
    pytest.mark.skipif(not os.path.exists(PERF), reason="MCL_PERF not built"),
]


COLLECTIVES = ["allreduce", "allgather", "broadcast", "reduce",
               "reducescatter", "sendrecv"]


@pytest.mark.parametrize("collective", COLLECTIVES)
def test_every_type_and_op_across_two_hosts(collective):
    with Cluster("pair", name=f"mcl-{collective[:6]}") as bed:
        outs = run_job(bed, [0, 1], cable_root(29700),
                       [collective, "-d", "all", "-o", "all"] + SMALL)
        # One rank per host: shared memory must not be used across hosts.
        for _, out in outs:
            assert "over shm 1 ranks, over tcp 1 ranks" in out, out


def test_two_cables_are_both_used():
    with Cluster("pair2", name="mcl-pair2") as bed:
        outs = run_job(bed, [0, 1], cable_root(29701),
                       ["allreduce", "-b", "8", "-e", "8M", "-f", "64", "-c", "1"])
        log = outs[0][1]
        link = re.search(r"to rank 1 via tcp (\S+)", log)
        assert link and link.group(1).count("->") == 2, log
        assert "cable" in log
        # The verdict line: both 10 Gb/s veth cables count, 2.5 GB/s.
        assert re.search(r"^# Cluster: peak busbw [\d.]+ GB/s, \d+% of the "
                         r"2\.5 GB/s the slowest pair's cables allow \(\S+ "
                         r"<-> \S+, 20 Gb/s\); slowest cable \S+:tb1c\d <-> "
                         r"\S+:tb0c\d \(10 Gb/s nominal", log, re.M), log


@pytest.mark.parametrize("collective", COLLECTIVES)
def test_two_ranks_per_host_mix_shm_and_tcp(collective):
    with Cluster("pair", name=f"mcl-mix-{collective[:6]}") as bed:
        outs = run_job(bed, [0, 0, 1, 1], cable_root(29702),
                       [collective, "-d", "all", "-o", "all"] + SMALL)
        for _, out in outs:
            assert "over shm 2 ranks, over tcp 2 ranks" in out, out


def test_ring_of_three():
    # Host 0's end of one cable is not on the others' cables: the
    # rendezvous takes the LAN, as it would on Wi-Fi; data takes the cables.
    with Cluster("ring3", name="mcl-ring3", lan=True) as bed:
        outs = run_job(bed, [0, 1, 2], "10.78.0.1:29703",
                       ["allreduce", "-d", "float", "-o", "all"] + SMALL)
        for _, out in outs:
            assert "(cable," in out and "(lan," not in out, out


def test_mesh_of_four_with_lan_bootstrap():
    with Cluster("mesh4", name="mcl-mesh4", lan=True) as bed:
        outs = run_job(bed, [0, 1, 2, 3], "10.78.0.1:29704",
                       ["allreduce", "-d", "all", "-o", "sum"] + SMALL)
        # Data takes the cables, not the LAN the rendezvous used.
        for _, out in outs:
            assert "(cable," in out and "(lan," not in out, out


def test_filter_that_excludes_the_cable_warns():
    with Cluster("pair", name="mcl-warn", lan=True) as bed:
        outs = run_job(bed, [0, 1], "10.78.0.1:29705",
                       ["allreduce", "-b", "8", "-e", "8", "-c", "1"],
                       {"MCL_SOCKET_IFNAME": "lan"})
        assert "a cable joins this host" in outs[0][1], outs[0][1]


def test_slow_doubled_cable_sender_that_exits_first():
    # The last pieces of a message may still travel on one cable after the
    # sender is done and gone: that is not a dead peer.
    with Cluster("pair2", name="mcl-slow2", rate=200) as bed:
        run_job(bed, [0, 1], cable_root(29708),
                ["broadcast", "-b", "4M", "-e", "4M", "-n", "2", "-w", "0",
                 "-c", "1"])


def test_killed_peer_is_named_within_the_timeout():
    with Cluster("pair", name="mcl-kill") as bed:
        procs = start_ranks(bed, [0, 1], cable_root(29706), LONG,
                            {"MCL_TIMEOUT": "10"})
        wait_for_traffic(procs)
        start = time.monotonic()
        procs[1].send_signal(signal.SIGKILL)
        code, out = finish(procs[:1], timeout=30)[0]
        elapsed = time.monotonic() - start
        assert code != 0
        assert "rank 1" in out and ("remote error" in out or
                                    "timed out" in out), out
        assert elapsed < 10 + 5, f"took {elapsed:.1f} s"
        finish(procs[1:])


def test_cable_pulled_mid_operation_fails_cleanly():
    with Cluster("pair", name="mcl-cable") as bed:
        procs = start_ranks(bed, [0, 1], cable_root(29707), LONG,
                            {"MCL_TIMEOUT": "5"})
        wait_for_traffic(procs)
        start = time.monotonic()
        bed.cable(0, 1, 0, up=False)
        outputs = finish(procs, timeout=40)
        elapsed = time.monotonic() - start
        for rank, (code, out) in enumerate(outputs):
            assert code != 0, f"rank {rank} did not notice:\n{out}"
            assert ("remote error" in out or "timed out" in out), out
            assert f"rank {1 - rank}" in out, out
        assert elapsed < 5 + 10, f"took {elapsed:.1f} s"


def test_latency_compares_transports_across_hosts():
    # Two hosts with two ranks each: shared memory serves the pairs within
    # a host, TCP every pair; RDMA has no device here and says so.
    with Cluster("pair", name="mcl-latency") as bed:
        outs = finish(start_ranks(bed, [0, 0, 1, 1], cable_root(29712),
                                  ["latency", "-n", "50"]))
        for rank, (code, out) in enumerate(outs):
            assert code == 0, f"rank {rank} failed ({code}):\n{out}"
        table = outs[0][1]
        rows = re.findall(r"^\s+(\d) <-> (\d)\s+(\S+(?: <-> \S+)?)\s+8\s+(.*)$",
                          table, re.M)
        assert len(rows) == 6, table
        for a, b, hosts, cells in rows:
            same_host = (a, b) in (("0", "1"), ("2", "3"))
            assert ("<->" in hosts) != same_host, table
            shm_median = cells.split()[0]
            assert (shm_median != "-") == same_host, table
        assert "# rdma: not measured: " in table, table


def test_qualify_calls_the_rate_limited_cable_slow(tmp_path):
    # ring3: three cables. Host 0's end of its cable to host 1 sends at
    # 100 Mbit/s: that cable is SLOW (that way), the other two OK on a quiet
    # machine. The other two share this VM's cores with everything else
    # that runs, so they are asked only not to be DEAD: a verdict on their
    # speed is qualify's to give, not this test's.
    report = tmp_path / "qualify.json"
    with Cluster("ring3", name="mcl-qualify", lan=True) as bed:
        testbed._add_tbf(bed.netns(0), "tb1", 100)
        outs = finish(start_ranks(bed, [0, 1, 2], "10.78.0.1:29713",
                                  ["qualify", "-J", str(report)],
                                  {"MCL_DEBUG": "WARN"}))
    for rank, (code, out) in enumerate(outs):
        assert code == 1, f"rank {rank} should fail ({code}):\n{out}"
    table = outs[0][1]
    assert "WARN" not in table, table
    rows = re.findall(r"^\s+\d+\s+(\S+:tb\d <-> \S+:tb\d)\s.*?\s(OK|LOSSY|SLOW|FLAPPING|DEAD)"
                      r"(.*)$", table, re.M)
    assert len(rows) == 3, table
    limited = [r for r in rows
               if r[0].startswith("vm/mcl-mcl-qualify-h0:tb1 ")]
    assert len(limited) == 1, table
    for ends, verdict, why in rows:
        if ends.startswith("vm/mcl-mcl-qualify-h0:tb1 "):
            assert verdict == "SLOW", table
            assert "h0 -> vm/mcl-mcl-qualify-h1" in why, table
        else:
            # Loaded by the other tests beside it, a veth drops packets
            # for real (seen in a full ctest run: 1.65% of 814 MB sent
            # again on an unthrottled cable): LOSSY is qualify's true word
            # then, as SLOW is.
            assert verdict in ("OK", "SLOW", "LOSSY"), table
    assert "# Qualify: FAIL: cable" in table, table
    data = json.load(open(report))
    verdicts = sorted(c["verdict"] for c in data["cables"])
    assert verdicts.count("SLOW") >= 1 and "DEAD" not in verdicts, data
    # Every host measured (their verdicts compare this VM's memory with its
    # own veth cables, which share it: not asserted).
    assert len(data["macs"]) == 3
    assert all(m["reduce_gbytes_per_s"] > 0 for m in data["macs"])


def qualify_while_flapping(bed, port, report):
    """qualify on pair2 while host 0's end of the second cable goes down for
    0.1 s every 0.35 s, from 0.25 s on (after the cabling is read, so that
    the cable is found; its half-second test then sees a flap)."""
    stop = threading.Event()

    def flap():
        if stop.wait(0.25):
            return
        while not stop.is_set():
            bed.cable(0, 1, 1, up=False)
            time.sleep(0.1)
            bed.cable(0, 1, 1, up=True)
            stop.wait(0.25)

    flapper = threading.Thread(target=flap)
    procs = start_ranks(bed, [0, 1], f"10.78.0.1:{port}",
                        ["qualify", "-J", str(report)], {"MCL_DEBUG": "ERROR"})
    flapper.start()
    try:
        finish(procs, timeout=120)
    finally:
        stop.set()
        flapper.join()
        bed.cable(0, 1, 1, up=True)
    return json.load(open(report))["cables"]


def test_qualify_calls_a_cable_that_flaps_during_its_test_flapping(tmp_path):
    # Its link goes down and comes back while it is tested: FLAPPING, with
    # the count, and never the steady cable beside it. Where to land a flap
    # in a half-second test is a matter of timing: up to 5 tries, of which
    # one must show it (a flap at the wrong moment makes it DEAD instead).
    with Cluster("pair2", name="mcl-flapping", lan=True) as bed:
        for attempt in range(5):
            cables = qualify_while_flapping(bed, 29715 + attempt,
                                            tmp_path / f"q{attempt}.json")
            assert cables[0]["verdict"] != "FLAPPING", cables
            assert cables[0]["link_losses"] == 0, cables
            if cables[1]["verdict"] == "FLAPPING":
                break
    assert cables[1]["verdict"] == "FLAPPING", cables
    assert cables[1]["link_losses"] >= 1, cables
    assert re.match(r"its link went down \d+ time\(s\) during the test",
                    cables[1]["reasons"][0]), cables


def test_qualify_calls_a_pulled_wire_of_a_doubled_pair_dead():
    # pair2, host 0's end of the second cable down: host 1's end still
    # carries the cable's /30 address and nothing answers there.
    with Cluster("pair2", name="mcl-pulled", lan=True) as bed:
        bed.cable(0, 1, 1, up=False)
        outs = finish(start_ranks(bed, [0, 1], "10.78.0.1:29714",
                                  ["qualify"], {"MCL_DEBUG": "WARN"}))
    for rank, (code, out) in enumerate(outs):
        assert code == 1, f"rank {rank} should fail ({code}):\n{out}"
    table = outs[0][1]
    rows = re.findall(r"^\s+\d+\s+(\S+ <-> \S+)\s.*\s(OK|LOSSY|SLOW|FLAPPING|DEAD)(.*)$",
                      table, re.M)
    # The live cable OK, or SLOW when the machine is busy: not DEAD. The
    # pulled one DEAD, both its ends named (host 0's switched off).
    assert [(ends.split(" <-> ")[1], verdict != "DEAD")
            for ends, verdict, _ in rows] \
        == [("vm/mcl-mcl-pulled-h1:tb0c0", True),
            ("vm/mcl-mcl-pulled-h1:tb0c1", False)], table
    assert rows[1][0].startswith("vm/mcl-mcl-pulled-h0:tb1c1 ")
    assert re.search(r"the cable is down \(subnet 10\.77\.1\.0/30\): port "
                     r"tb1c1 \(10\.77\.1\.1\) is switched off, port tb0c1 "
                     r"\(10\.77\.1\.2\) has no link", rows[1][2]), table
