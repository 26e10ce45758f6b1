"""A full disk under MCL_DEBUG_FILE: the log gives up the file for stderr
with one WARN that names the file and the OS's reason, and the job runs on.
MCL_TOPO_DUMP_FILE on a full disk fails init naming the setting and the
reason. Needs root for a private mount namespace with a tiny tmpfs; skipped
otherwise."""

import os
import shutil
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PERF = os.environ.get("MCL_PERF", os.path.join(ROOT, "build", "bin",
                                               "mcl-perf"))

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None,
    reason="needs root and unshare for a private tmpfs")


def perf_on_full_disk(env_extra, *args, filled=False):
    """mcl-perf with an 8 KiB tmpfs at /mnt/full (filled: already full),
    seen by it alone."""
    fill = ("dd if=/dev/zero of=/mnt/full/filler bs=1k count=16 "
            "2>/dev/null; " if filled else "")
    script = ('mount --make-rprivate / && mkdir -p /mnt/full && '
              'mount -t tmpfs -o size=8k tmpfs /mnt/full && ' + fill +
              'exec "$@"')
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCL_")}
    env.update(env_extra)
    return subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", PERF,
                           *args], capture_output=True, text=True,
                          timeout=120, env=env)


def test_debug_file_on_a_full_disk_goes_on_to_stderr_with_one_warning():
    run = perf_on_full_disk({"MCL_DEBUG": "TRACE",
                             "MCL_DEBUG_FILE": "/mnt/full/log.%p"},
                            "allreduce", "-np", "2", "-b", "8", "-e", "1K",
                            "-n", "5", "-w", "1", filled=True)
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
                            "-n", "1", "-w", "0", filled=True)
    out = run.stdout + run.stderr
    assert run.returncode != 0, out
    assert ("MCL_TOPO_DUMP_FILE=/mnt/full/topo.json: cannot write: "
            "No space left on device") in out, out
    assert "signal" not in out, out
