"""Topology detection across real hosts (network namespaces joined by veth
cables): the dump of each cabling must match the testbed's own description
exactly (hosts, ranks, every cable with both interfaces and addresses, the
shape); MCL_TOPO_FILE reads a dump back; `mcl-perf topo --check` finds
traffic that avoids a cable.

Needs root (skips otherwise) and MCL_PERF (CTest sets it)."""

import json
import os
import subprocess

import pytest

from jobs import PERF, SECRET, SMALL, cable_root, finish, start_ranks
from testbed import Testbed as Cluster

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"),
    pytest.mark.skipif(not os.path.exists(PERF), reason="MCL_PERF not built"),
]

SHAPES = {"pair": "pair", "pair2": "pair", "ring3": "ring", "mesh4": "full_mesh",
          "line3": "line"}


def run_topo(bed, hosts, root, args, extra_env=None, expect=0):
    outputs = finish(start_ranks(bed, hosts, root, ["topo"] + args, extra_env))
    for rank, (code, out) in enumerate(outputs):
        if expect is None:
            break
        assert code == expect, f"rank {rank} exited {code}, wanted {expect}:\n{out}\n" + "\n".join(o for _, o in outputs)
    return outputs


def dump_topology(bed, hosts, root, tmp_path, extra_env=None):
    path = tmp_path / "topo.json"
    env = {"MCL_TOPO_DUMP_FILE": str(path)}
    env.update(extra_env or {})
    run_topo(bed, hosts, root, [], env)
    with open(path) as f:
        return json.load(f)


def end_of(link_end):
    return (link_end["host"], link_end["interface"], link_end["address"])


def check_matches_testbed(topo, desc, ranks_of_host, shape):
    assert topo["shape"] == shape, topo["shape"]
    assert topo["source"] == "detected"
    assert [h["id"] for h in topo["hosts"]] == list(range(len(ranks_of_host)))
    assert [h["ranks"] for h in topo["hosts"]] == ranks_of_host
    expected = sorted((end_of(c["a"]), end_of(c["b"]), c["subnet"])
                      for c in desc["cables"])
    found = sorted((end_of(l["a"]), end_of(l["b"]), l["subnet"])
                   for l in topo["links"])
    assert found == expected
    # Every cable of a pair is its own wire, numbered 0, 1, ...
    wires = {}
    for link in topo["links"]:
        wires.setdefault((link["a"]["host"], link["b"]["host"]), []).append(link["wire"])
    for pair, numbers in wires.items():
        assert sorted(numbers) == list(range(len(numbers))), (pair, numbers)
    for link in topo["links"]:
        assert link["matched_by"] == "subnet" and link["kind"] == "ethernet"
        assert link["speed_gbps"] > 0  # veth reports its speed


@pytest.mark.parametrize("spec", ["pair2", "ring3", "mesh4"])
def test_dump_matches_the_cabling(spec, tmp_path):
    with Cluster(spec, name=f"mcl-topo-{spec}", lan=True) as bed:
        n = len(bed.describe()["hosts"])
        topo = dump_topology(bed, list(range(n)), "10.78.0.1:29720", tmp_path)
        check_matches_testbed(topo, bed.describe(), [[h] for h in range(n)],
                              SHAPES[spec])
        # Namespaces share the host name; the namespace tells them apart.
        for h in topo["hosts"]:
            assert h["name"].endswith("/" + bed.netns(h["id"])), h["name"]
        # The LAN is a shared network, not a cable.
        assert [len(net["members"]) for net in topo["networks"]] == [n]
        # Every pair of ranks takes its cable(s).
        for path in topo["paths"]:
            assert path["transport"] == "tcp" and path["link_kind"] == "cable", path
        assert topo["findings"] == []


def test_two_ranks_per_host_and_a_line(tmp_path):
    with Cluster("line3", name="mcl-topo-line3", lan=True) as bed:
        topo = dump_topology(bed, [0, 0, 1, 1, 2, 2], "10.78.0.1:29721", tmp_path)
        check_matches_testbed(topo, bed.describe(), [[0, 1], [2, 3], [4, 5]],
                              "line")
        kinds = {tuple(p["ranks"]): (p["transport"], p["link_kind"])
                 for p in topo["paths"]}
        assert kinds[(0, 1)] == ("shm", "")
        assert kinds[(0, 2)] == ("tcp", "cable")
        # Hosts 0 and 2 share no cable: their ranks meet over the LAN.
        assert kinds[(0, 4)] == ("tcp", "lan")


def test_topology_file_is_read_back_and_checked(tmp_path):
    with Cluster("pair2", name="mcl-topo-file", lan=False) as bed:
        root = cable_root(29722)
        topo = dump_topology(bed, [0, 1], root, tmp_path)
        saved = tmp_path / "saved.json"
        saved.write_text(json.dumps(topo))
        outs = run_topo(bed, [0, 1], cable_root(29723), [],
                        {"MCL_TOPO_FILE": str(saved)})
        assert f"shape pair (file {saved})" in outs[0][1], outs[0][1]
        # A file for another job (3 ranks) fails init with a clear message.
        wrong = dict(topo)
        del wrong["shape"]  # a third host without cables is no pair
        wrong["hosts"] = topo["hosts"] + [
            {"id": 2, "name": "ghost", "ranks": [2]}]
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(wrong))
        outs = finish(start_ranks(bed, [0, 1], cable_root(29725), ["topo"],
                                  {"MCL_TOPO_FILE": str(bad)}))
        for code, out in outs:
            assert code != 0
            assert "describes 3 ranks, this communicator has 2" in out, out


def test_check_finds_traffic_that_avoids_the_cable(tmp_path):
    with Cluster("pair", name="mcl-topo-check", lan=True) as bed:
        outs = run_topo(bed, [0, 1], "10.78.0.1:29726", ["--check"],
                        {"MCL_SOCKET_IFNAME": "lan"}, expect=None)
        assert outs[0][0] == 1 and outs[1][0] == 0, outs
        out = outs[0][1]
        assert "are cabled (tb1<->tb0), but their traffic takes lan lan0>lan0" \
            in out, out
        assert "fix: Check MCL_SOCKET_IFNAME" in out, out
        # The job runs several times slower than its cable allows: an error
        # (and `topo --check` exits 1).
        assert "# Checks: 1 error, 0 warnings" in out, out
        # And the same cluster with the cable in use is clean.
        outs = run_topo(bed, [0, 1], "10.78.0.1:29727", ["--check"])
        assert "# Checks: 0 errors, 0 warnings" in outs[0][1], outs[0][1]


def test_topology_file_decides_which_cables_carry_traffic(tmp_path):
    # Forced, a file keeps traffic off a cable detection sees
    # (test_doctor.py shows the unforced file losing to detection).
    force = {"MCL_TOPO_FILE_FORCE": "1"}
    with Cluster("pair2", name="mcl-topo-only", lan=False) as bed:
        topo = dump_topology(bed, [0, 1], cable_root(29728), tmp_path)
        assert len(topo["links"]) == 2
        one = dict(topo, links=topo["links"][1:])
        path = tmp_path / "one.json"
        path.write_text(json.dumps(one))
        outs = run_topo(bed, [0, 1], cable_root(29729), [],
                        {"MCL_TOPO_FILE": str(path), **force})
        a, b = one["links"][0]["a"]["interface"], one["links"][0]["b"]["interface"]
        assert f"tcp  cable: {a}>{b}\n" in outs[0][1], outs[0][1]
        # Ends of two different cables share no subnet: a clear error.
        crossed = json.loads(json.dumps(one))
        crossed["links"][0]["b"]["interface"] = topo["links"][0]["b"]["interface"]
        path.write_text(json.dumps(crossed))
        outs = finish(start_ranks(bed, [0, 1], cable_root(29730), ["topo"],
                                  {"MCL_TOPO_FILE": str(path), **force}))
        assert any("MCL_TOPO_FILE names the cables to rank" in out
                   for _, out in outs), outs
        assert all(code != 0 for code, _ in outs), outs


FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "topology")


def test_mlx_device_matrix_as_topology_file():
    # The testbed cables hosts as the JACCL matrix says (rdma_enX on enX);
    # the same matrix given as MCL_TOPO_FILE then names those interfaces.
    matrix = os.path.abspath(os.path.join(FIXTURES, "device_matrix",
                                          "doubled_pair.json"))
    with Cluster(matrix, name="mcl-topo-mlx", lan=True) as bed:
        env = {"MCL_TOPO_FILE": matrix}
        outs = run_topo(bed, [0, 1, 2], "10.78.0.1:29731", [], env)
        out = outs[0][1]
        assert f"shape ring (file {matrix})" in out, out
        assert "0 <-> 1   tcp  cable: en2>en4 + en5>en2\n" in out, out
        assert "1 <-> 2   tcp  cable: en3>en4\n" in out, out
        # And data flows over those cables.
        outputs = finish(start_ranks(bed, [0, 1, 2], "10.78.0.1:29732",
                                     ["allreduce", "-b", "8", "-e", "1M", "-f",
                                      "32", "-c", "1"], env))
        for rank, (code, text) in enumerate(outputs):
            assert code == 0, f"rank {rank}:\n{text}"
        assert "# Out of bounds values : 0 OK" in outputs[0][1], outputs[0][1]


def start_as_mlx_launch(bed, args, matrix, hostfile, coordinator):
    """The ranks of a job as mlx.launch starts them for JACCL: MLX_RANK,
    MLX_HOSTFILE, MLX_IBV_DEVICES and MLX_JACCL_COORDINATOR, and no MCL_*
    variable but the secret, which mcl requires for a rendezvous other
    hosts can reach."""
    procs = []
    for rank in range(3):
        env = {"MLX_RANK": str(rank), "MLX_HOSTFILE": str(hostfile),
               "MLX_IBV_DEVICES": matrix,
               "MLX_JACCL_COORDINATOR": coordinator,
               "MCL_SECRET": SECRET, "MCL_TIMEOUT": "20"}
        procs.append(bed.exec(rank, [PERF] + args, env=env,
                              stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True))
    return procs


def test_mlx_launch_environment_gives_mlxs_job_and_cabling(tmp_path):
    # The variables alone: the ranks, their number (the hostfile's
    # entries), the rendezvous (the coordinator's port + 1) and the cables
    # (the device matrix) are those of the MLX job.
    matrix = os.path.abspath(os.path.join(FIXTURES, "device_matrix",
                                          "doubled_pair.json"))
    hostfile = tmp_path / "hostfile.json"
    hostfile.write_text(json.dumps([[f"10.78.0.{h + 1}:5000"]
                                    for h in range(3)]))
    with Cluster(matrix, name="mcl-topo-mlxenv", lan=True) as bed:
        outs = finish(start_as_mlx_launch(bed, ["topo"], matrix, hostfile,
                                          "10.78.0.1:29740"))
        for rank, (code, out) in enumerate(outs):
            assert code == 0, f"rank {rank}:\n{out}"
        out = outs[0][1]
        assert f"shape ring (file {matrix})" in out, out
        assert "0 <-> 1   tcp  cable: en2>en4 + en5>en2\n" in out, out
        assert "1 <-> 2   tcp  cable: en3>en4\n" in out, out
        outputs = finish(start_as_mlx_launch(
            bed, ["allreduce", "-b", "8", "-e", "1M", "-f", "32", "-c", "1"],
            matrix, hostfile, "10.78.0.1:29742"))
        for rank, (code, text) in enumerate(outputs):
            assert code == 0, f"rank {rank}:\n{text}"
        assert "# Out of bounds values : 0 OK" in outputs[0][1], outputs[0][1]


def test_check_exits_nonzero_on_an_error_finding(tmp_path):
    # A host whose inventory says Thunderbolt Bridge is on, in a ring: the
    # check must fail the command (scripts rely on the exit status).
    with Cluster("ring3", name="mcl-topo-err", lan=True) as bed:
        topo = dump_topology(bed, [0, 1, 2], "10.78.0.1:29733", tmp_path)
        topo["hosts"][1]["inventory"]["bridge_active"] = True
        topo["hosts"][1]["inventory"]["bridge_device"] = "bridge0"
        path = tmp_path / "bridged.json"
        path.write_text(json.dumps(topo))
        outs = run_topo(bed, [0, 1, 2], "10.78.0.1:29734", ["--check"],
                        {"MCL_TOPO_FILE": str(path)}, expect=None)
        assert outs[0][0] == 1, outs[0][1]
        assert all(code == 0 for code, _ in outs[1:]), outs
        out = outs[0][1]
        assert "# Checks: 1 error, 0 warnings" in out, out
        assert "ERROR   Thunderbolt Bridge (bridge0) is on on host 1" in out, out
        assert "fix: On that Mac: System Settings > Network > Thunderbolt Bridge" in out


def test_rdma_between_hosts_without_devices_says_how_to_get_them():
    # Two ranks per host: the ranks of a host share memory, the hosts need
    # RDMA devices, and this machine has none: every rank fails at once with
    # a message that says what RDMA needs and points to the emulated fabric.
    with Cluster("pair", name="mcl-topo-rdma", lan=False) as bed:
        outs = finish(start_ranks(bed, [0, 0, 1, 1], cable_root(29735),
                                  ["allreduce"] + SMALL,
                                  {"MCL_TRANSPORT": "rdma"}))
        for rank, (code, out) in enumerate(outs):
            assert code != 0, f"rank {rank}:\n{out}"
            assert "no RDMA devices" in out, out
            assert "MCL_RDMA_PROVIDER=emu" in out, out
