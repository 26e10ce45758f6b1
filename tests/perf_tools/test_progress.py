"""mcl-perf shows progress on stderr when, and only when, stderr is a
terminal: rewritten in place and erased before the rows and at the end."""

import os
import pty
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PERF = os.environ.get("MCL_PERF", os.path.join(ROOT, "build", "bin",
                                               "mcl-perf"))


def run_with_terminal(args):
    """(stdout, what the terminal on stderr received, exit status)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([PERF, *args], stdout=subprocess.PIPE,
                            stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the terminal closed: every writer is gone
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    stdout = proc.stdout.read().decode()
    proc.wait(timeout=120)
    return stdout, seen.decode(errors="replace"), proc.returncode


def test_progress_on_a_terminal_is_erased_at_the_end():
    for args, first in [
        (["allreduce", "-np", "2", "-b", "8", "-e", "1K", "-f", "2", "-n",
          "2"], "mcl-perf: allreduce 1/8: 8 B float sum"),
        (["latency", "-np", "2", "-n", "10"], "mcl-perf: latency 1/1: ranks "
                                              "0 <-> 1, 8 B"),
    ]:
        stdout, terminal, status = run_with_terminal(args)
        assert status == 0, stdout + terminal
        assert terminal.startswith("\r" + first), repr(terminal)
        # Every line shown is erased: the terminal ends on a blanked line.
        assert terminal.endswith("\r"), repr(terminal)
        assert "\n" not in terminal, repr(terminal)
        assert "mcl-perf:" not in stdout


def test_no_progress_when_stderr_is_not_a_terminal():
    run = subprocess.run([PERF, "allreduce", "-np", "2", "-b", "8", "-e",
                          "1K", "-f", "2", "-n", "2"], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stderr == ""
