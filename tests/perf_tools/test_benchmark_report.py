"""The benchmark's table and its JSON (-J) hold the same rows, cell for
cell: sizes, counts, types, ops, roots, times, bandwidths, wrong counts and
the algorithm; and the JSON carries the run's settings."""

import json
import os
import re
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PERF = os.environ.get("MCL_PERF", os.path.join(ROOT, "build", "bin",
                                               "mcl-perf"))


def table_rows(output):
    rows = []
    for line in output.splitlines():
        cols = line.split()
        if len(cols) == 14 and cols[0].isdigit():
            rows.append(cols)
    return rows


def shown_time(us):
    if us >= 10000:
        return f"{us:.0f}"
    if us >= 100:
        return f"{us:.1f}"
    return f"{us:.2f}"


def test_table_and_json_hold_the_same_rows(tmp_path):
    report = tmp_path / "run.json"
    run = subprocess.run([PERF, "reduce", "-np", "3", "-b", "64", "-e", "4K",
                          "-f", "8", "-n", "3", "-w", "1", "-d", "all", "-o",
                          "max", "-r", "all", "-J", str(report)],
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = table_rows(run.stdout)
    data = json.load(open(report))
    assert data["operation"] == "reduce" and data["nranks"] == 3
    assert data["config"]["op"] == "max" and data["config"]["root"] == -1
    assert data["out_of_bounds"] == {"count": 0, "ok": True}
    # The cluster the rows were measured on, and the tuner's model of it.
    assert [h["ranks"] for h in data["topology"]["hosts"]] == [[0, 1, 2]]
    assert data["topology"]["tuner"]["link_kind"] == "shm"
    # 3 sizes x 3 roots x the 12 types.
    assert len(rows) == len(data["results"]) == 3 * 3 * 12
    for cols, row in zip(rows, data["results"]):
        assert int(cols[0]) == row["size"] and int(cols[1]) == row["count"]
        assert cols[2:5] == [row["type"], row["redop"], str(row["root"])]
        for offset, cell in ((5, row["out_of_place"]), (9, row["in_place"])):
            assert cols[offset] == shown_time(cell["time_us"])
            assert cols[offset + 1] == f"{cell['algbw_gbps']:.2f}"
            assert cols[offset + 2] == f"{cell['busbw_gbps']:.2f}"
            assert cols[offset + 3] == str(cell["wrong"])
        assert cols[13] == row["algorithm"]
    # mcl's buffers: shared-memory rings for each of the two peers (the
    # defaults: 2 channels x 8 slots x 64 KiB), under the limit; the
    # largest rank's resident set.
    memory = data["memory"]
    assert memory["library"]["per_peer_bytes"]["shm"] == 1 << 20
    assert memory["library"]["shm_bytes"] == 2 << 20
    assert memory["library"]["per_peer_limit_bytes"] == 8 << 20
    assert memory["peak_resident_bytes"] > 1 << 20
    assert re.search(r"^# mcl buffers: 2\.0 MiB \(shm 2\.0 MiB, tcp 0 B, "
                     r"rdma 0 B; at most 1\.0 MiB per peer and transport, "
                     r"limit 8\.0 MiB; staging peak [^)]*\); peak resident "
                     r"memory [\d.]+ MiB \(the largest rank\)$",
                     run.stdout, re.M), run.stdout


def test_buffers_over_the_limit_are_refused_naming_the_settings():
    env = dict(os.environ, MCL_TCP_SLOTS="128", MCL_TRANSPORT="tcp")
    run = subprocess.run([PERF, "allreduce", "-np", "2", "-b", "8", "-e",
                          "8"], capture_output=True, text=True, timeout=120,
                         env=env)
    assert run.returncode == 1
    assert "the tcp transport would hold 67108864 bytes per peer " \
        "(MCL_TCP_SLOTS x MCL_TCP_SLOT_BYTES), over " \
        "MCL_PEER_BUFFER_LIMIT=8388608" in run.stderr
    env["MCL_PEER_BUFFER_LIMIT"] = str(64 << 20)
    run = subprocess.run([PERF, "allreduce", "-np", "2", "-b", "8", "-e",
                          "8"], capture_output=True, text=True, timeout=120,
                         env=env)
    assert run.returncode == 0, run.stderr
