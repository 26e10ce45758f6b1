"""MCL_TRANSPORT=auto on network namespaces with the emulated Thunderbolt
fabric: RDMA for every pair of hosts an emulated cable joins, TCP for the
others, shared memory within a host; a port that is down before init sends
its pair to TCP with one WARN on every rank under auto, and fails init naming
the device under MCL_TRANSPORT=rdma; a pair's last cable lost mid-run moves
it to its TCP standby.

Hosts 0-1 and 1-2 have cables (veth /30s, and emulated RDMA cables between
the same Macs); 0-2 only the LAN. Needs root and MCL_PERF."""

import json
import os
import re
import time

import pytest

from jobs import PERF, finish, run_job, start_ranks
from testbed import Testbed as Cluster

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"),
    pytest.mark.skipif(not os.path.exists(PERF), reason="MCL_PERF not built"),
]

ROOT = "10.78.0.1:{}"  # host 0 on the LAN
# Mac i of the fabric is host i's rank (one rank per host).
LINE3 = '[[null, "rdma_en2", null], ["rdma_en2", null, "rdma_en3"], ' \
        '[null, "rdma_en3", null]]'
SMALL = ["allreduce", "-b", "8", "-e", "256K", "-f", "8", "-n", "2", "-w",
         "1", "-c", "1", "-d", "all", "-o", "sum"]


def emu_env(tmp_path, **extra):
    fabric = tmp_path / "line3.json"
    fabric.write_text(LINE3)
    env = {"MCL_RDMA_PROVIDER": "emu", "MCL_EMU_FABRIC": str(fabric),
           "MCL_TRANSPORT": "auto"}
    env.update(extra)
    return env


def using_ranks(out):
    """Rank -> its "transport ..." text from mcl-perf's rank list."""
    return {int(m.group(1)): m.group(2) for m in
            re.finditer(r"^#  Rank +(\d+) Pid .* transport (.*)$", out, re.M)}


def test_auto_takes_rdma_where_a_cable_joins_the_macs(tmp_path):
    dump = tmp_path / "topo.json"
    with Cluster("line3", name="mcl-rauto", lan=True) as bed:
        outs = run_job(bed, [0, 1, 2], ROOT.format(29740), SMALL,
                       emu_env(tmp_path, MCL_TOPO_DUMP_FILE=str(dump)))
    out0 = outs[0][1]
    assert "# Out of bounds values : 0 OK" in out0, out0
    ranks = using_ranks(out0)
    # One transport for all of a rank's peers reads as before; a mix lists
    # the peers of each, in the order of the peers.
    assert ranks == {0: "rdma (emulated) to 1; tcp to 2",
                     1: "rdma (emulated)",
                     2: "tcp to 0; rdma (emulated) to 1"}, out0
    assert "EMULATED Thunderbolt fabric" in out0
    for _, out in outs:
        assert "fall back" not in out, out  # 0-2 has no cable: no warning
    paths = {tuple(p["ranks"]): p for p in json.loads(dump.read_text())["paths"]}
    assert paths[(0, 1)]["transport"] == "rdma"
    assert paths[(0, 1)]["link_kind"] == "emulated"
    assert paths[(0, 1)]["links"] == ["rdma_en2>rdma_en2"]
    assert paths[(1, 2)]["transport"] == "rdma"
    assert paths[(0, 2)]["transport"] == "tcp"
    assert paths[(0, 2)]["link_kind"] == "lan"
    # Beside each RDMA pair, TCP over its veth cable stands by; a TCP pair
    # has no standby.
    assert paths[(0, 1)]["standby"] == "tcp cable tb1>tb0", paths[(0, 1)]
    assert paths[(1, 2)]["standby"].startswith("tcp cable "), paths[(1, 2)]
    assert "standby" not in paths[(0, 2)], paths[(0, 2)]


def test_auto_sends_a_pair_whose_port_is_down_to_tcp_with_a_warning(tmp_path):
    with Cluster("line3", name="mcl-rdown", lan=True) as bed:
        outs = run_job(bed, [0, 1, 2], ROOT.format(29741),
                       SMALL + ["--transport", "auto"],
                       emu_env(tmp_path,
                               MCL_EMU_FAULTS="port_down:1:rdma_en3@0"))
    ranks = using_ranks(outs[0][1])
    assert ranks[1] == "rdma (emulated) to 0; tcp to 2", outs[0][1]
    assert ranks[2] == "tcp", outs[0][1]
    for rank, (_, out) in enumerate(outs):
        warns = [l for l in out.splitlines()
                 if "MCL WARN" in l and "fall back" in l]
        assert len(warns) == 1, f"rank {rank}:\n{out}"
        assert "ranks 1 and 2 use tcp" in warns[0], warns[0]
        assert "rdma_en3: the port is down" in warns[0], warns[0]


def test_rdma_named_fails_init_naming_the_device(tmp_path):
    fabric = tmp_path / "pair.json"
    fabric.write_text('[[null, "rdma_en2"], ["rdma_en3", null]]')
    env = {"MCL_RDMA_PROVIDER": "emu", "MCL_EMU_FABRIC": str(fabric),
           "MCL_TRANSPORT": "rdma", "MCL_TIMEOUT": "10",
           "MCL_EMU_FAULTS": "port_down:1:rdma_en3@0"}
    with Cluster("pair", name="mcl-rstrict", lan=True) as bed:
        outs = finish(start_ranks(bed, [0, 1], ROOT.format(29742), SMALL, env),
                      timeout=60)
    for rank, (code, out) in enumerate(outs):
        assert code != 0, out
        assert "(killed: hung)" not in out, out
        assert "MCL_TRANSPORT=rdma cannot join ranks 0 and 1" in out, out
        assert "rank 1's rdma_en3: the port is down" in out, out


@pytest.mark.parametrize("tcp_cable_too", [False, True])
def test_the_last_rdma_cable_lost_mid_run_goes_on_over_tcp(tmp_path,
                                                           tcp_cable_too):
    # The one emulated cable between Macs 0 and 1 goes down (both ports)
    # 1.5 s after init, in the middle of a run of checked all-reduces (about
    # 10 s here): under auto the
    # pair carries on over its TCP standby (made at init beside it), every
    # result right, and both ends say which cable went and where the job
    # goes on. tcp_cable_too: the veth cable between the two hosts goes down
    # with it, as a Thunderbolt cable carries both: TCP moves to the LAN.
    args = ["allreduce", "-b", "1M", "-e", "1M", "-n", "1000", "-w", "0",
            "-c", "1"]
    with Cluster("line3", name="mcl-rlast", lan=True) as bed:
        procs = start_ranks(bed, [0, 1, 2], ROOT.format(29743), args,
                            emu_env(tmp_path, MCL_TIMEOUT="30",
                                    MCL_EMU_FAULTS="port_down:1:rdma_en2@1500"))
        if tcp_cable_too:
            time.sleep(1.55)  # the fault counts from init, a little later
            bed.cable(1, 0, up=False)
        outs = finish(procs, timeout=240)
    for rank, (code, out) in enumerate(outs):
        assert code == 0, f"rank {rank} failed ({code}):\n{out}"
        assert "(killed: hung)" not in out, out
    assert "# Out of bounds values : 0 OK" in outs[0][1], outs[0][1]
    for rank in (0, 1):
        out = outs[rank][1]
        warns = [l for l in out.splitlines() if "MCL WARN" in l and
                 "no cable to it is left, and the job goes on over" in l]
        assert warns, f"rank {rank}:\n{out}"
        assert "rdma_en2" in warns[0], warns[0]
        if tcp_cable_too:  # the standby's own connections went on the LAN
            assert re.search(r"MCL WARN tcp to rank [01]: cable .* no cable "
                             r"to rank [01] is left: what it carried goes on "
                             r"over lan", out), f"rank {rank}:\n{out}"
