"""mcl-perf on a hostile host, as a user first meets it.

A container-sized /dev/shm: Docker's 64 MiB under 16 ranks (which used to end
in "rank 14 died with signal 7 (Bus error)") runs with shrunken rings and one
WARN; 256 KiB under 16 ranks fails init on every rank naming /dev/shm's size
and the fix; -R 1 (mclMemAlloc buffers) fits or says how much room there is;
topo --check names the small /dev/shm. Never a signal.

A full disk: under MCL_DEBUG_FILE the log gives up the file for stderr with
one WARN naming the file and the OS's reason, and the job runs on;
MCL_TOPO_DUMP_FILE on a full disk fails init naming the setting and the
reason.

Needs root for private mount namespaces (unshare -m); skipped otherwise."""

import os
import shutil
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PERF = os.environ.get("MCL_PERF", os.path.join(ROOT, "build", "bin",
                                               "mcl-perf"))

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None,
    reason="needs root and unshare for a private /dev/shm")


def perf_in_private_mounts(mounts, env_extra, *args):
    """mcl-perf after the shell commands `mounts`, in a mount namespace of
    its own (what they mount, only it sees), without the caller's MCL_*."""
    script = "mount --make-rprivate / && " + mounts + ' && exec "$@"'
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCL_")}
    env.update(env_extra)
    return subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", PERF,
                           *args], capture_output=True, text=True,
                          timeout=300, env=env)


def perf_in_small_shm(size, *args):
    """mcl-perf with a tmpfs of `size` over /dev/shm."""
    return perf_in_private_mounts(
        "mount -t tmpfs -o size=%s tmpfs /dev/shm" % size, {}, *args)


def test_docker_sized_dev_shm_runs_16_ranks_with_one_warning():
    run = perf_in_small_shm("64m", "allreduce", "-np", "16", "-b", "8",
                            "-e", "4M", "-f", "8", "-n", "2", "-w", "1")
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "signal" not in out, out
    assert "Out of bounds values : 0 OK" in out, out
    assert out.count("MCL WARN /dev/shm has 64.0 MiB free of 64.0 MiB") == 1, out
    assert "shrunk to MCL_SHM_SLOTS=4, MCL_SHM_SLOT_BYTES=16384" in out, out
    assert "--shm-size=384m" in out, out


def test_tiny_dev_shm_fails_init_on_every_rank_naming_the_fix():
    run = perf_in_small_shm("256k", "allreduce", "-np", "16", "-b", "8",
                            "-e", "8", "-n", "1", "-w", "0")
    out = run.stdout + run.stderr
    assert run.returncode != 0, out
    assert "signal" not in out, out
    for rank in range(16):
        line = next((l for l in out.splitlines()
                     if l.startswith(f"mcl-perf: rank {rank}: ")), "")
        assert "/dev/shm is too small" in line, out
        assert "256.0 KiB free of 256.0 KiB (df -h /dev/shm)" in line, out
        assert "MCL_TRANSPORT=tcp" in line, out


@pytest.mark.parametrize("size,fits", [("64m", True), ("256k", False)])
def test_mclmemalloc_buffers_fit_or_name_the_room(size, fits):
    # 4 ranks' buffers of 1 MiB fit in 64 MiB beside the rings; in 256 KiB
    # the shrunken rings leave 96 KiB.
    run = perf_in_small_shm(size, "allreduce", "-np", "4", "-b", "8",
                            "-e", "1M", "-f", "16", "-n", "2", "-w", "1",
                            "-R", "1")
    out = run.stdout + run.stderr
    assert "signal" not in out, out
    if fits:
        assert run.returncode == 0, out
        assert "Out of bounds values : 0 OK" in out, out
    else:
        assert run.returncode != 0, out
        assert "cannot allocate 1.0 MiB of shared memory: /dev/shm has" in out


def test_topo_check_shows_the_host_limits_and_the_small_dev_shm():
    run = perf_in_small_shm("64m", "topo", "--check", "-np", "16")
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "# Host limits (for one process)" in out, out
    row = next(l for l in out.splitlines() if l.startswith("#  0    64 MiB ("))
    assert row.split()[-1].startswith("16/"), row  # ranks/cores
    assert ("/dev/shm holds 64.0 MiB" in out and
            "the shared-memory rings of its 16 ranks want 256.5 MiB" in out), out


def perf_on_full_disk(env_extra, *args):
    """mcl-perf with a full 8 KiB tmpfs at /mnt/full."""
    return perf_in_private_mounts(
        "mkdir -p /mnt/full && mount -t tmpfs -o size=8k tmpfs /mnt/full && "
        "(dd if=/dev/zero of=/mnt/full/filler bs=1k count=16 2>/dev/null; "
        "true)", env_extra, *args)


def test_debug_file_on_a_full_disk_goes_on_to_stderr_with_one_warning():
    run = perf_on_full_disk({"MCL_DEBUG": "TRACE",
                             "MCL_DEBUG_FILE": "/mnt/full/log.%p"},
                            "allreduce", "-np", "2", "-b", "8", "-e", "1K",
                            "-n", "5", "-w", "1")
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "Out of bounds values : 0 OK" in out, out
    warnings = [l for l in out.splitlines()
                if "cannot write MCL_DEBUG_FILE '/mnt/full/log." in l]
    # One per process that logs (the ranks and mcl-perf's launcher, each
    # with a file of its own).
    assert 1 <= len(warnings) <= 3, out
    assert all("No space left on device" in w and
               "logging goes on to stderr" in w for w in warnings), out
    assert "MCL INFO" in run.stderr, out  # the lines went on


def test_topology_dump_on_a_full_disk_names_the_setting_and_reason():
    run = perf_on_full_disk({"MCL_TOPO_DUMP_FILE": "/mnt/full/topo.json"},
                            "allreduce", "-np", "2", "-b", "8", "-e", "8",
                            "-n", "1", "-w", "0")
    out = run.stdout + run.stderr
    assert run.returncode != 0, out
    assert ("MCL_TOPO_DUMP_FILE=/mnt/full/topo.json: cannot write: "
            "No space left on device") in out, out
    assert "signal" not in out, out
