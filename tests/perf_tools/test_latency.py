"""mcl-perf latency: its table, JSON and CSV say the same thing; the
emulated fabric is labelled as such wherever RDMA figures appear; transports
that cannot serve a pair are named with the reason; bad flags are refused."""

import csv
import json
import os
import re
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PERF = os.environ.get("MCL_PERF", os.path.join(ROOT, "build", "bin",
                                               "mcl-perf"))
PAIR_FABRIC = os.path.join(ROOT, "tests", "fixtures", "rdma", "pair.json")
ROW = re.compile(r"^\s+(\d+) <-> (\d+)\s+(\S+)\s+(\d+)\s+(.*)$")


def latency(*args, env=None):
    full_env = dict(os.environ)
    for name in ("MCL_TRANSPORT", "MCL_RDMA_PROVIDER", "MCL_EMU_FABRIC"):
        full_env.pop(name, None)
    full_env.update(env or {})
    return subprocess.run([PERF, "latency", *args], capture_output=True,
                          text=True, timeout=180, env=full_env)


def table_rows(output):
    """(rank a, rank b, hosts, bytes, [numbers after the size])."""
    rows = []
    for line in output.splitlines():
        m = ROW.match(line)
        if m:
            cells = [None if c == "-" else float(c)
                     for c in m.group(5).split()]
            rows.append((int(m.group(1)), int(m.group(2)), m.group(3),
                         int(m.group(4)), cells))
    return rows


def shown(value):
    """A time as the table prints it."""
    if value >= 100000:
        return float(f"{value:.0f}")
    if value >= 1000:
        return float(f"{value:.1f}")
    return float(f"{value:.2f}")


def test_table_json_and_csv_agree(tmp_path):
    json_path, csv_path = tmp_path / "lat.json", tmp_path / "lat.csv"
    run = latency("-np", "2", "-b", "8", "-e", "4K", "-f", "8", "-n", "200",
                  "-J", str(json_path), "--csv", str(csv_path))
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.load(open(json_path))
    assert report["tool"] == "mcl-perf" and report["operation"] == "latency"
    assert report["round_trips"] == 200 and report["warmup"] == 20
    names = [t["name"] for t in report["transports"]]
    assert names == ["shm", "tcp", "rdma"]
    rdma = report["transports"][2]
    assert not rdma["available"] and "one host" in rdma["note"]
    assert "# rdma: not measured: " + rdma["note"] in run.stdout

    rows = table_rows(run.stdout)
    assert [(a, b, size) for a, b, _, size, _ in rows] == [
        (0, 1, 8), (0, 1, 64), (0, 1, 512), (0, 1, 4096)], run.stdout
    assert len(report["rows"]) == 4
    with open(csv_path) as f:
        csv_rows = list(csv.DictReader(f))
    assert len(csv_rows) == 4
    for (a, b, host, size, cells), row, crow in zip(rows, report["rows"],
                                                    csv_rows):
        assert row["ranks"] == [a, b] and row["bytes"] == size
        assert row["hosts"] == [host, host]
        shm, tcp = row["round_trip_us"]["shm"], row["round_trip_us"]["tcp"]
        assert row["round_trip_us"]["rdma"] is None
        for stats in (shm, tcp):
            assert stats["count"] == 200
            assert 0 < stats["min"] <= stats["median"] <= stats["p99"]
        # Columns: shm median, p99, tcp median, p99, tcp/shm (no rdma).
        assert cells == [shown(shm["median"]), shown(shm["p99"]),
                         shown(tcp["median"]), shown(tcp["p99"]),
                         float(f"{tcp['median'] / shm['median']:.2f}")]
        assert abs(row["ratios"]["tcp/shm"] -
                   tcp["median"] / shm["median"]) < 1e-9
        assert set(row["ratios"]) == {"tcp/shm"}  # rdma was not measured
        assert int(crow["bytes"]) == size
        assert abs(float(crow["shm_median_us"]) - shm["median"]) < 0.001
        assert abs(float(crow["tcp_p99_us"]) - tcp["p99"]) < 0.001
        assert crow["rdma_median_us"] == ""
    assert re.search(r"# Medians over the pairs at 8 B: shm [\d.]+ us, "
                     r"tcp [\d.]+ us; tcp/shm [\d.]+x", run.stdout), run.stdout


def test_emulated_rdma_is_labelled_everywhere(tmp_path):
    json_path = tmp_path / "emu.json"
    run = latency("-np", "2", "--transport", "tcp,rdma", "-n", "100", "-J",
                  str(json_path), env={"MCL_RDMA_PROVIDER": "emu",
                                       "MCL_EMU_FABRIC": PAIR_FABRIC})
    assert run.returncode == 0, run.stdout + run.stderr
    assert "rdma (emulated)" in run.stdout
    assert "EMULATED Thunderbolt fabric" in run.stdout
    report = json.load(open(json_path))
    rdma = report["transports"][1]
    assert rdma["name"] == "rdma" and rdma["emulated"] and rdma["available"]
    assert rdma["label"] == "rdma (emulated)"
    (row,) = report["rows"]
    assert row["round_trip_us"]["rdma"]["count"] == 100
    assert row["ratios"]["tcp/rdma"] > 0
    assert "tcp/rdma" in run.stdout and "rdma (emulated) " in run.stdout


def test_every_pair_of_three_ranks_over_one_transport():
    run = latency("-np", "3", "--transport", "shm", "-n", "50")
    assert run.returncode == 0, run.stdout + run.stderr
    rows = table_rows(run.stdout)
    assert [(a, b) for a, b, _, _, _ in rows] == [(0, 1), (0, 2), (1, 2)]
    for *_, cells in rows:
        assert len(cells) == 2  # median and p99; no ratio with one transport


def test_rdma_asked_for_without_a_fabric_says_why():
    run = latency("-np", "2", "--transport", "shm,rdma", "-n", "20")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "# rdma: not measured: " in run.stdout
    assert "MCL_RDMA_PROVIDER=emu" in run.stdout


def test_bad_flags_are_refused():
    for args, words in [
        (["--transport", "shm,udp"], "'udp' is not a transport"),
        (["--transport", "tcp,tcp"], "tcp is listed twice"),
        (["--transport", "shm,"], "'' is not a transport"),
        (["-np", "1"], "at least 2"),
        (["--algo", "ring"], "--algo goes with"),
    ]:
        run = latency(*args)
        assert run.returncode == 2, (args, run.stdout, run.stderr)
        assert words in run.stderr, (args, run.stderr)


def test_report_paths_are_checked_before_ranks_start():
    run = latency("-np", "2", "-J", "/nonexistent-dir/lat.json")
    assert run.returncode == 2
    assert "/nonexistent-dir/lat.json" in run.stderr
