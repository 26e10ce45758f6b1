"""examples/python/data_parallel.py, as the README runs it: it starts its
own 2 ranks, which must train (the loss falls) and end with identical
weights."""

import os
import re
import subprocess
import sys

import mcl

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                       "..", "examples", "python", "data_parallel.py")


def test_data_parallel_example_trains_on_two_ranks(tmp_path):
    env = dict(os.environ, MCL_TIMEOUT="30")
    # No launcher's rank in sight: it must start its own ranks.
    for name in ("MCL_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                 "SLURM_PROCID", "RANK", "MLX_RANK", "MCL_UNIQUE_ID"):
        env.pop(name, None)
    package_root = os.path.dirname(os.path.dirname(mcl.__file__))
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (package_root, env.get("PYTHONPATH")) if p)
    run = subprocess.run(
        [sys.executable, EXAMPLE, "--ranks", "2", "--steps", "200"],
        env=env, cwd=tmp_path, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=120)
    out = run.stdout
    assert run.returncode == 0, out + run.stderr

    losses = [float(v) for v in re.findall(r"^step +\d+ +loss ([\d.]+)$",
                                           out, re.M)]
    assert len(losses) == 4, out  # steps 0, 50, 100, 150
    summary = re.search(r"^initial loss ([\d.]+), final loss ([\d.]+)$",
                        out, re.M)
    assert summary, out
    initial, final = float(summary.group(1)), float(summary.group(2))
    assert final < initial / 10, out
    assert losses[-1] < losses[0], out

    checksums = dict(re.findall(r"^rank (\d): weights checksum (\w+)$",
                                out, re.M))
    assert set(checksums) == {"0", "1"}, out
    assert checksums["0"] == checksums["1"], out
    assert "weights identical on all 2 ranks" in out, out
