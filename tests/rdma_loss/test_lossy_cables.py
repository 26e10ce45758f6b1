"""RDMA over cables that lose, duplicate and delay frames (the emulated
fabric's MCL_EMU_FAULTS): every collective still exact, losses counted and
resent, a lossy cable named while the job runs and called LOSSY by qualify,
mlx-lm's traffic back to back for thousands of calls, and a job killed in
the middle of RDMA traffic started again at once on the same cables. Real
processes on one machine; no root needed. No verdict here depends on the
machine's speed: only on results, counts and messages.

Needs MCL_PERF, MCL_MLX_REPLAY and MCL_MPI_LIBRARY (CTest sets them)."""

import os
import re
import signal
import subprocess
import time

import pytest

PERF = os.environ.get("MCL_PERF", "")
REPLAY = os.environ.get("MCL_MLX_REPLAY", "")
MPI_LIBRARY = os.environ.get("MCL_MPI_LIBRARY", "")
FABRICS = os.path.join(os.path.dirname(__file__), "..", "fixtures", "rdma")

pytestmark = pytest.mark.skipif(not os.path.exists(PERF),
                                reason="MCL_PERF not built")


def fabric(name):
    return os.path.abspath(os.path.join(FABRICS, name + ".json"))


def emu_env(name, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MCL_") or k == "MCL_DEBUG"}
    env.update({"MCL_RDMA_PROVIDER": "emu", "MCL_EMU_FABRIC": fabric(name),
                "MCL_TRANSPORT": "rdma", "MCL_TIMEOUT": "60"})
    env.update(extra)
    return env


def rdma_frames(out):
    """The counts of mcl-perf's RDMA line."""
    m = re.search(r"# RDMA frames \(all ranks\): (\d+) received, (\d+) lost "
                  r"\([0-9.]+%\), (\d+) duplicated, (\d+) sent again", out)
    assert m, out
    return dict(zip(["received", "lost", "duplicated", "resent"],
                    map(int, m.groups())))


@pytest.mark.parametrize("faults", ["drop:0.001", "dup:0.001",
                                    "drop:0.0005,dup:0.0005,delay:0.001:200"])
def test_every_size_exact_with_frames_lost(faults):
    # Doubled cables: pieces striped over two wires, each losing its own.
    run = subprocess.run(
        [PERF, "allreduce", "-np", "2", "-b", "8", "-e", "16M", "-f", "8",
         "-n", "10", "-w", "1", "-c", "1"],
        env=emu_env("pair2", MCL_EMU_FAULTS=faults), text=True,
        capture_output=True, timeout=300)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "# Out of bounds values : 0 OK" in run.stdout, out
    frames = rdma_frames(run.stdout)
    if "drop" in faults:
        assert frames["lost"] > 0 and frames["resent"] > 0, out
    if "dup" in faults:
        assert frames["duplicated"] > 0, out


@pytest.mark.parametrize("collective", ["allreduce", "allgather",
                                        "reducescatter", "alltoall"])
def test_four_macs_every_type_exact_with_frames_lost(collective):
    # Every pair on two cables, small and large sizes (direct, tree and
    # ring schedules alike), every data type.
    run = subprocess.run(
        [PERF, collective, "-np", "4", "-b", "8", "-e", "1M", "-f", "16",
         "-n", "5", "-w", "1", "-c", "1", "-d", "all"],
        env=emu_env("mesh4_doubled", MCL_EMU_FAULTS="drop:0.002,dup:0.001"),
        text=True, capture_output=True, timeout=300)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "# Out of bounds values : 0 OK" in run.stdout, out
    frames = rdma_frames(run.stdout)
    assert frames["lost"] > 0 and frames["resent"] > 0, out


def test_no_loss_counts_nothing_lost():
    run = subprocess.run(
        [PERF, "allreduce", "-np", "2", "-b", "8", "-e", "4M", "-f", "16",
         "-n", "5", "-w", "1", "-c", "1"],
        env=emu_env("pair2"), text=True, capture_output=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    frames = rdma_frames(run.stdout)
    assert frames["lost"] == 0 and frames["duplicated"] == 0, run.stdout
    assert frames["received"] > 0, run.stdout


def test_a_lossy_cable_is_named_while_the_job_runs():
    # One cable of the doubled pair loses 1 frame in 20: the job goes on,
    # exact, and a WARN names that cable's two ends and the loss rate.
    run = subprocess.run(
        [PERF, "allreduce", "-np", "2", "-b", "16M", "-e", "16M", "-n", "40",
         "-w", "1", "-c", "1"],
        env=emu_env("pair2", MCL_EMU_FAULTS="drop:0.05:0:rdma_en2"),
        text=True, capture_output=True, timeout=300)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "# Out of bounds values : 0 OK" in run.stdout, out
    lossy = re.findall(r"rdma from rank \d over (rdma_en\d)<-(rdma_en\d) "
                       r"loses frames: \d+ of \d+ \(([0-9.]+)%\)", out)
    assert lossy, out
    for local, remote, share in lossy:
        assert {local, remote} == {"rdma_en2", "rdma_en3"}, out
        assert float(share) > 1, out


def test_qualify_calls_the_lossy_cable_lossy_with_its_loss_rate():
    run = subprocess.run([PERF, "qualify", "-np", "2"],
                         env=emu_env("pair2",
                                     MCL_EMU_FAULTS="drop:0.05:1:rdma_en6"),
                         text=True, capture_output=True, timeout=300)
    out = run.stdout + run.stderr
    assert run.returncode != 0, out  # a LOSSY cable fails qualification
    rows = {m.group(1): m.group(2) for m in re.finditer(
        r"^\s+(\d)\s+mac0:rdma_en\d <-> mac1:rdma_en\d .*?  "
        r"(OK|LOSSY.*|SLOW.*|FLAPPING.*|DEAD.*)$",
        run.stdout, re.M)}
    assert rows.get("0") == "OK", out
    assert re.match(r"LOSSY: loses [0-9.]+% of its frames \(\d+ of \d+\), "
                    r"each sent again", rows.get("1", "")), out


@pytest.mark.skipif(not os.path.exists(REPLAY) or
                    not os.path.exists(MPI_LIBRARY),
                    reason="mcl-mlx-replay not built")
def test_mlx_lm_traffic_back_to_back_on_three_macs_losing_frames():
    # 3 Macs, every pair on two cables, frames dropped and duplicated on
    # all of them: decode rows, prefill all-reduces of 32 MiB, all-gathers
    # and send/recv of different shapes in sequence, thousands of calls.
    run = subprocess.run(
        [REPLAY, "--library", MPI_LIBRARY, "--np", "3", "--transport", "rdma",
         "--fabric", fabric("ring3_doubled"), "--scenario", "soak"],
        env=emu_env("ring3_doubled", MCL_EMU_FAULTS="drop:0.0005,dup:0.0002",
                    MCL_DEBUG="INFO", MCL_DEBUG_SUBSYS="INIT"),
        text=True, capture_output=True, timeout=400)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "PASS: soak over rdma, 3 ranks" in out, out
    calls = [int(c) for c in re.findall(r"soak: (\d+) calls", out)]
    assert len(calls) == 3 and min(calls) >= 2000, out
    lost = sum(int(n) for n in re.findall(r"rdma frames: \d+ received, (\d+) "
                                          r"lost", out))
    resent = sum(int(n) for n in re.findall(r"(\d+) sent again", out))
    assert lost > 0 and resent > 0, out


def test_a_job_killed_mid_traffic_runs_again_at_once():
    # Every rank SIGKILLed in the middle of RDMA traffic leaves nothing that
    # stops the same job, started again at once on the same cables.
    env = emu_env("pair2", MCL_EMU_FAULTS="drop:0.001")
    long_run = subprocess.Popen(
        [PERF, "allreduce", "-np", "2", "-b", "16M", "-e", "16M", "-n",
         "100000", "-w", "0", "-c", "0"],
        env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True)
    seen = ""
    deadline = time.monotonic() + 60
    while "# Using ranks" not in seen and time.monotonic() < deadline:
        line = long_run.stdout.readline()
        if not line:
            break
        seen += line
    assert "# Using ranks" in seen, seen
    time.sleep(1)  # mid-traffic
    os.killpg(long_run.pid, signal.SIGKILL)
    long_run.wait(timeout=30)
    again = subprocess.run(
        [PERF, "allreduce", "-np", "2", "-b", "8", "-e", "1M", "-f", "32",
         "-n", "5", "-w", "1", "-c", "1"],
        env=env, text=True, capture_output=True, timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "# Out of bounds values : 0 OK" in again.stdout, again.stdout
