"""mcl-perf's command line as nccl-tests users type it: nccl-tests' program
names, its flags with their meanings (or a refusal that says what to use),
a help per operation that shows only that operation's flags, --version, and
report files whose format comes from the name."""

import csv
import json
import os
import re
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PERF = os.environ.get("MCL_PERF", os.path.join(ROOT, "build", "bin",
                                               "mcl-perf"))
ROW = re.compile(r"^\s+(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(-?\d+)\s+(.*)$")
SMALL = ["-np", "2", "-b", "1K", "-e", "4K", "-f", "4", "-n", "3", "-w", "1"]

NCCL_TESTS_PROGRAMS = {
    "all_reduce_perf": "allreduce", "all_gather_perf": "allgather",
    "broadcast_perf": "broadcast", "reduce_perf": "reduce",
    "reduce_scatter_perf": "reducescatter", "alltoall_perf": "alltoall",
    "sendrecv_perf": "sendrecv",
}


def perf(*args, program=PERF, name=None):
    env = dict(os.environ)
    for var in ("MCL_TRANSPORT", "MCL_ALGO", "MCLPERF_PARSE_ONLY"):
        env.pop(var, None)
    return subprocess.run([name or program, *args], executable=program,
                          capture_output=True, text=True, timeout=180,
                          env=env)


def rows(output):
    """(size, type, redop, out-of-place #wrong, in-place #wrong)."""
    found = []
    for line in output.splitlines():
        m = ROW.match(line)
        if m:
            cells = m.group(6).split()
            found.append((int(m.group(1)), m.group(3), m.group(4), cells[3],
                          cells[7]))
    return found


def test_nccl_tests_program_names_run_their_benchmark(tmp_path):
    for program, operation in NCCL_TESTS_PROGRAMS.items():
        link = tmp_path / program
        link.symlink_to(PERF)
        run = perf(*SMALL, "-g", "1", program=str(link))
        assert run.returncode == 0, (program, run.stderr)
        assert "# Collective test starting: %s" % operation in run.stdout
        assert rows(run.stdout), (program, run.stdout)


def test_the_nccl_tests_command_line_runs():
    run = perf("allreduce", "-b", "8", "-e", "1M", "-f", "2", "-g", "1",
               "-t", "1", "-z", "0", "-G", "0", "-C", "0", "-p", "0", "-np",
               "2", "-n", "3", "-w", "1")
    assert run.returncode == 0, run.stderr
    sizes = [r[0] for r in rows(run.stdout)]
    assert sizes == [8 << i for i in range(18)], sizes
    assert "Out of bounds values : 0 OK" in run.stdout
    assert ("agg iters: 1 validation: 1 graph: 0" in run.stdout)


def test_flags_may_come_before_the_operation_and_values_attached():
    run = perf("-np", "2", "-b1K", "-e", "1K", "-n3", "allreduce")
    assert run.returncode == 0, run.stderr
    assert [r[0] for r in rows(run.stdout)] == [1024]


def test_agg_iters_run_cycles_blocking_and_cputime_do_what_they_say():
    run = perf("allreduce", *SMALL, "-m", "4", "-N", "2", "-z", "1", "-C",
               "1")
    assert run.returncode == 0, run.stderr
    assert "agg iters: 4" in run.stdout
    assert "# Run cycles: 2" in run.stdout
    assert "# Blocking Enabled: a barrier after each timed iteration, timed" \
        in run.stdout
    assert re.search(r"root\s+cputime", run.stdout), run.stdout
    # Two cycles: every size twice.
    assert [r[0] for r in rows(run.stdout)] == [1024, 4096, 1024, 4096]
    assert all(r[3] == "0" and r[4] == "0" for r in rows(run.stdout))


def test_mulsum_is_checked_for_every_type():
    for operation in ("allreduce", "reducescatter", "reduce"):
        run = perf(operation, *SMALL, "-o", "mulsum", "-d", "all", "-r",
                   "all")
        assert run.returncode == 0, (operation, run.stderr)
        found = rows(run.stdout)
        assert {r[1] for r in found} >= {"int8", "half", "bfloat16",
                                         "f8e5m2", "double"}
        assert {r[2] for r in found} == {"mulsum"}
        assert all(r[3] == "0" and r[4] == "0" for r in found), run.stdout


@pytest.mark.parametrize("flags, words", [
    (["-t", "2"], "-t/--nthreads 2"),
    (["-g", "8"], "-np N"),
    (["-G", "10"], "no CUDA graphs"),
    (["-R", "2"], "-R 1 registers"),
    (["-I", "1"], "mcl-perf latency"),
    (["-u", "4"], "-u/--unalign 4"),
    (["-x", "0"], "-x/--cta_policy"),
    (["-D", "1"], "device-API"),
    (["-z", "4"], "-z/--blocking"),
    (["-o", "xor"], "unknown reduction op 'xor'"),
    (["--nonsense"], "unknown flag '--nonsense'"),
    (["-b", "12Q"], "invalid size '12Q'"),
])
def test_flags_that_cannot_be_honoured_are_refused_naming_them(flags, words):
    run = perf("allreduce", "-np", "2", *flags)
    assert run.returncode == 2, (flags, run.stdout, run.stderr)
    assert words in run.stderr, (flags, run.stderr)
    assert "mcl-perf allreduce --help" in run.stderr


def test_a_flag_of_another_operation_names_the_operations_that_take_it():
    run = perf("topo", "-m", "2")
    assert run.returncode == 2
    assert "-m goes with a benchmark (" in run.stderr, run.stderr
    assert "not with topo" in run.stderr


def test_help_per_operation_shows_only_its_flags():
    bench = perf("allreduce", "--help")
    latency = perf("latency", "--help")
    top = perf("--help")
    for run in (bench, latency, top):
        assert run.returncode == 0, run.stderr
    assert "--agg_iters" in bench.stdout and "--algo" in bench.stdout
    assert "--agg_iters" not in latency.stdout
    assert "--algo" not in latency.stdout
    assert "shm,tcp,rdma" in latency.stdout
    # The top level lists the operations, not every flag.
    assert "latency" in top.stdout and "--agg_iters" not in top.stdout
    assert "Usage: mcl-perf allreduce" in bench.stdout
    assert max(len(line) for line in bench.stdout.splitlines()) <= 100


def test_version():
    run = perf("--version")
    assert run.returncode == 0
    assert re.fullmatch(r"mcl-perf \d+\.\d+\.\d+ \(mcl library \d+\.\d+\.\d+\)",
                        run.stdout.strip()), run.stdout


def test_output_file_format_comes_from_its_suffix(tmp_path):
    as_json = tmp_path / "run.json"
    as_csv = tmp_path / "run.csv"
    run = perf("allreduce", *SMALL, "--output_file", str(as_json), "-m", "2")
    assert run.returncode == 0, run.stderr
    report = json.loads(as_json.read_text())
    assert report["config"]["agg_iters"] == 2
    assert [r["size"] for r in report["results"]] == [1024, 4096]
    run = perf("allreduce", *SMALL, "-J", str(as_csv))
    assert run.returncode == 0, run.stderr
    table = list(csv.DictReader(as_csv.open()))
    assert len(table) == 2, table


def test_parse_only_runs_nothing():
    env_run = subprocess.run(
        [PERF, "allreduce", "-np", "64", "-e", "1G"], capture_output=True,
        text=True, timeout=30, env=dict(os.environ, MCLPERF_PARSE_ONLY="1"))
    assert env_run.returncode == 0, env_run.stderr
    assert env_run.stdout == ""


def test_report_parses_its_flags_the_same_way():
    helped = perf("report", "--help")
    assert helped.returncode == 0
    assert "--quick" in helped.stdout and "--agg_iters" not in helped.stdout
    for flags, words in [(["-np", "0"], "--np"), (["--bogus"], "--bogus"),
                         (["-T", "x"], "-T/--timeout")]:
        run = perf("report", *flags)
        assert run.returncode == 2, (flags, run.stderr)
        assert words in run.stderr, (flags, run.stderr)
