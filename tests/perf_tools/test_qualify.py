"""mcl-perf qualify on the emulated fabric: every wire of a doubled pair is
tested on its own, a port taken down makes that cable DEAD (and the exit
status 1) while the other passes, the emulator is labelled as such, the
table and the JSON agree; `allreduce --qualify` qualifies before its table;
misused flags are refused."""

import json
import os
import re
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PERF = os.environ.get("MCL_PERF", os.path.join(ROOT, "build", "bin",
                                               "mcl-perf"))
PAIR2 = os.path.join(ROOT, "tests", "fixtures", "rdma", "pair2.json")
CABLE_ROW = re.compile(r"^\s+(\d+)\s+(\S+ <-> \S+)(?: \(wire (\d) of (\d)\))?"
                       r"\s+(\S+)\s+(\S+ Gb/s)\s+(\S+)\s+(\S+)\s+(\S+)\s+"
                       r"(OK|LOSSY|SLOW|FLAPPING|DEAD)(.*)$")


def perf(*args, env=None):
    full_env = dict(os.environ)
    for name in ("MCL_TRANSPORT", "MCL_RDMA_PROVIDER", "MCL_EMU_FABRIC",
                 "MCL_EMU_FAULTS", "MCL_RDMA_DEVICES", "MCL_SOCKET_IFNAME"):
        full_env.pop(name, None)
    full_env.update({"MCL_RDMA_PROVIDER": "emu", "MCL_EMU_FABRIC": PAIR2})
    full_env.update(env or {})
    return subprocess.run([PERF, *args], capture_output=True, text=True,
                          timeout=180, env=full_env)


def cable_rows(output):
    return [CABLE_ROW.match(line) for line in output.splitlines()
            if CABLE_ROW.match(line)]


def test_both_wires_of_a_doubled_pair_pass(tmp_path):
    report = tmp_path / "q.json"
    run = perf("qualify", "-np", "2", "-J", str(report))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "EMULATED Thunderbolt fabric" in run.stdout
    rows = cable_rows(run.stdout)
    assert [(r.group(2), r.group(3), r.group(4), r.group(10))
            for r in rows] == [
        ("mac0:rdma_en2 <-> mac1:rdma_en3", "1", "2", "OK"),
        ("mac0:rdma_en5 <-> mac1:rdma_en6", "2", "2", "OK")], run.stdout
    assert "# Qualify: PASS: 2 cable(s) and 1 Mac(s) OK" in run.stdout
    data = json.load(open(report))
    assert data["operation"] == "qualify" and data["emulated"]
    assert data["transport"] == "rdma" and data["passed"]
    for row, cable in zip(rows, data["cables"]):
        assert cable["verdict"] == "OK" and cable["reasons"] == []
        assert row.group(2) == "mac0:{} <-> mac1:{}".format(
            cable["a"]["end"], cable["b"]["end"])
        # The table rounds what the JSON holds.
        assert abs(float(row.group(7)) -
                   cable["round_trip_us"]["median"]) < 0.006
        assert abs(float(row.group(8)) - cable["a_to_b_gbytes_per_s"]) < 6e-4
        assert abs(float(row.group(9)) - cable["b_to_a_gbytes_per_s"]) < 6e-4
        assert cable["a_to_b_gbytes_per_s"] > 0
        assert cable["b_to_a_gbytes_per_s"] > 0
    (mac,) = data["macs"]
    assert mac["memcpy_gbytes_per_s"] > 0 and mac["reduce_gbytes_per_s"] > 0


def test_a_port_taken_down_is_dead_and_fails_the_run(tmp_path):
    report = tmp_path / "q.json"
    run = perf("qualify", "-np", "2", "-J", str(report),
               env={"MCL_EMU_FAULTS": "port_down:1:rdma_en6@0"})
    assert run.returncode == 1, run.stdout + run.stderr
    rows = {r.group(2): r for r in cable_rows(run.stdout)}
    assert rows["mac0:rdma_en2 <-> mac1:rdma_en3"].group(10) == "OK"
    dead = rows["mac0:rdma_en5 <-> mac1:rdma_en6"]
    assert dead.group(10) == "DEAD", run.stdout
    assert "rdma_en" in dead.group(11) and "down" in dead.group(11)
    assert "# Qualify: FAIL: cable 1 (mac0:rdma_en5 <-> mac1:rdma_en6) DEAD" \
        in run.stdout
    data = json.load(open(report))
    assert not data["passed"]
    assert [c["verdict"] for c in data["cables"]] == ["OK", "DEAD"]
    assert data["cables"][1]["a_to_b_gbytes_per_s"] is None


def test_allreduce_qualifies_first_and_fails_at_the_end():
    run = perf("allreduce", "-np", "2", "--qualify", "-b", "8", "-e", "64K",
               "-f", "64", env={"MCL_EMU_FAULTS": "port_down:0:rdma_en2@0"})
    assert run.returncode == 1, run.stdout + run.stderr
    qualify = run.stdout.index("# Qualify: FAIL: cable 0")
    table = run.stdout.index("# Out of bounds values : 0 OK")
    assert qualify < table


def test_misused_flags_are_refused():
    for args, words in [
        (["qualify", "--transport", "shm"], "tcp or rdma"),
        (["qualify", "--csv", "/tmp/q.csv"], "--csv"),
        (["latency", "--qualify"], "--qualify goes with a benchmark"),
    ]:
        run = perf(*args)
        assert run.returncode == 2, (args, run.stdout, run.stderr)
        assert words in run.stderr, (args, run.stderr)


def test_allreduce_ends_with_the_cluster_verdict():
    run = perf("allreduce", "-np", "2", "--transport", "rdma", "-b", "8",
               "-e", "1M", "-f", "32")
    assert run.returncode == 0, run.stdout + run.stderr
    line = [l for l in run.stdout.splitlines() if l.startswith("# Cluster:")]
    assert len(line) == 1, run.stdout
    assert "(EMULATED fabric)" in line[0]
    assert "the 15 GB/s the slowest pair's cables allow (mac0 <-> mac1, " \
        "120 Gb/s)" in line[0]
    assert "slowest cable mac0:rdma_en" in line[0]
    # One host, the emulated fabric configured but not used (shm): nothing
    # to judge.
    run = perf("allreduce", "-np", "2", "-b", "8", "-e", "8")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "# Cluster:" not in run.stdout
