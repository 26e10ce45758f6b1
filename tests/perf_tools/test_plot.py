"""perf/plot: draws PNG and SVG from recorded and fresh mcl-perf JSON,
overlays several files and the algorithms of an --algo all run, and refuses
what is not mcl-perf's JSON with a clear message."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PLOT = os.path.join(ROOT, "perf", "plot")
RECORDED = os.path.join(ROOT, "tests", "fixtures", "perf",
                        "allreduce_2ranks.json")
PERF = os.environ.get("MCL_PERF", os.path.join(ROOT, "build", "bin",
                                               "mcl-perf"))


def plot(*args):
    return subprocess.run([sys.executable, PLOT, *args], capture_output=True,
                          text=True, timeout=120)


def test_recorded_json_renders_png_and_svg(tmp_path):
    prefix = str(tmp_path / "recorded")
    run = plot(RECORDED, "-o", prefix, "--title", "recorded")
    assert run.returncode == 0, run.stderr
    with open(prefix + ".png", "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    svg = open(prefix + ".svg").read()
    assert "<svg" in svg
    assert "recorded" in svg


def test_two_files_overlay_with_their_labels(tmp_path):
    fresh = tmp_path / "fresh.json"
    perf = subprocess.run([PERF, "allreduce", "-np", "2", "-b", "8", "-e",
                           "64K", "-f", "8", "-n", "3", "-w", "1", "-J",
                           str(fresh)], capture_output=True, text=True,
                          timeout=120)
    assert perf.returncode == 0, perf.stdout + perf.stderr
    prefix = str(tmp_path / "both")
    run = plot(RECORDED, str(fresh), "-o", prefix, "--label", "tcp-series",
               "--label", "rdma-series")
    assert run.returncode == 0, run.stderr
    svg = open(prefix + ".svg").read()
    assert "tcp-series" in svg and "rdma-series" in svg


def test_algo_all_gives_a_series_per_algorithm(tmp_path):
    fresh = tmp_path / "all.json"
    perf = subprocess.run([PERF, "allgather", "-np", "2", "-b", "1K", "-e",
                           "64K", "-f", "8", "-n", "3", "-w", "1", "--algo",
                           "all", "-J", str(fresh)], capture_output=True,
                          text=True, timeout=120)
    assert perf.returncode == 0, perf.stdout + perf.stderr
    prefix = str(tmp_path / "algos")
    run = plot(str(fresh), "-o", prefix, "--label", "shm")
    assert run.returncode == 0, run.stderr
    svg = open(prefix + ".svg").read()
    for name in ("shm auto", "shm ring", "shm direct"):
        assert name in svg, name


def test_refuses_what_is_not_mcl_perf_json(tmp_path):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"rows": []}))
    run = plot(str(other), "-o", str(tmp_path / "x"))
    assert run.returncode == 1
    assert "not an mcl-perf -J file" in run.stderr
    assert not (tmp_path / "x.png").exists()
    run = plot(RECORDED, "--label", "a", "--label", "b")
    assert run.returncode == 2
    assert "2 --label for 1 files" in run.stderr
