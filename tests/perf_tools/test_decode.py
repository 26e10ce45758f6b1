"""mcl-perf tp and pp: a decoded token's communication, checked, timed and
reported the same way in the table, JSON and CSV, over every transport;
bad shapes refused naming the flag."""

import csv
import json
import os
import re
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PERF = os.environ.get("MCL_PERF", os.path.join(ROOT, "build", "bin",
                                               "mcl-perf"))
PAIR_FABRIC = os.path.join(ROOT, "tests", "fixtures", "rdma", "pair.json")
SMALL = ["--layers", "4", "--hidden", "512", "-n", "5", "-w", "1"]
ROW = re.compile(r"^  (\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\d+)\s+(\d+)"
                 r"\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+([\d.]+)"
                 r"\s+(\S+)$")


def perf(*args, env=None):
    full = dict(os.environ)
    for name in ("MCL_TRANSPORT", "MCL_RDMA_PROVIDER", "MCL_EMU_FABRIC",
                 "MCLPERF_PARSE_ONLY"):
        full.pop(name, None)
    full.update(env or {})
    return subprocess.run([PERF, *args], capture_output=True, text=True,
                          timeout=180, env=full)


def rows(output):
    return [ROW.match(line).groups() for line in output.splitlines()
            if ROW.match(line)]


@pytest.mark.parametrize("transport", ["shm", "tcp"])
def test_tp_checks_and_times_every_model_and_batch(transport, tmp_path):
    report = tmp_path / "tp.json"
    table = tmp_path / "tp.csv"
    run = perf("tp", "-np", "2", "--transport", transport, "--preset",
               "llama-8b,qwen-32b", "--batch", "1,3", "--dtype", "fp16",
               "-n", "4", "-w", "1", "-J", str(report), "--csv", str(table))
    assert run.returncode == 0, run.stderr
    found = rows(run.stdout)
    assert [(r[0], int(r[3])) for r in found] == [
        ("llama-8b", 1), ("llama-8b", 3), ("qwen-32b", 1), ("qwen-32b", 3)]
    for r in found:
        layers, hidden, batch = int(r[1]), int(r[2]), int(r[3])
        assert r[4] == "fp16"
        assert int(r[5]) == hidden * batch * 2  # bytes per all-reduce
        assert int(r[6]) == 2 * layers  # all-reduces per token
        assert r[12] == "0"  # #wrong
    data = json.loads(report.read_text())
    assert data["operation"] == "tp" and data["nranks"] == 2
    lines = list(csv.DictReader(table.open()))
    assert len(data["rows"]) == len(lines) == 4
    for shown, kept, line in zip(found, data["rows"], lines):
        assert kept["wrong"] == 0 and line["wrong"] == "0"
        assert abs(kept["median_us"] - float(shown[7])) <= 0.051
        assert abs(float(line["median_us"]) - kept["median_us"]) < 1e-3
        assert kept["tokens"] == 4
        assert kept["tokens_per_s"] == pytest.approx(1e6 / kept["median_us"])


def test_tp_three_ranks_and_one():
    for n in ("3", "1"):
        run = perf("tp", "-np", n, *SMALL, "--allreduces-per-layer", "3")
        assert run.returncode == 0, (n, run.stderr)
        (row,) = rows(run.stdout)
        assert int(row[6]) == 12 and row[12] == "0"


def test_tp_on_the_emulated_fabric_says_so():
    run = perf("tp", "-np", "2", "--transport", "rdma", *SMALL,
               env={"MCL_RDMA_PROVIDER": "emu", "MCL_EMU_FABRIC": PAIR_FABRIC})
    assert run.returncode == 0, run.stderr
    assert "transport rdma (emulated)" in run.stdout
    assert "EMULATED" in run.stdout
    assert rows(run.stdout)[0][12] == "0"


@pytest.mark.parametrize("n", ["2", "3"])
def test_pp_passes_each_token_around_the_stages(n):
    run = perf("pp", "-np", n, *SMALL, "--batch", "1,16", "-c", "3")
    assert run.returncode == 0, run.stderr
    found = rows(run.stdout)
    assert [int(r[3]) for r in found] == [1, 16]
    for r in found:
        assert int(r[6]) == int(n)  # hops: n - 1 activations, 1 ids
        assert int(r[5]) == 512 * int(r[3]) * 2
        assert r[12] == "0"


def test_check_off_shows_not_applicable():
    run = perf("tp", "-np", "2", *SMALL, "-c", "0")
    assert run.returncode == 0, run.stderr
    assert rows(run.stdout)[0][12] == "N/A"


@pytest.mark.parametrize("args, words", [
    (["tp", "--hidden", "0"], "--hidden"),
    (["tp", "--layers", "0"], "--layers"),
    (["tp", "--batch", "0"], "--batch"),
    (["tp", "--preset", "gpt-5"], "unknown preset 'gpt-5'"),
    (["tp", "--dtype", "int8"], "bf16, fp16 or float"),
    (["tp", "--hidden", "1048576", "--batch", "65536"], "at most 1 GiB"),
    (["tp", "--preset", "all", "--hidden", "4096"], "describe one model"),
    (["pp", "-np", "1"], "at least 2 ranks"),
    (["pp", "--allreduces-per-layer", "2"], "goes with tp"),
])
def test_bad_shapes_are_refused_naming_the_flag(args, words):
    run = perf(*args)
    assert run.returncode == 2, (args, run.stdout, run.stderr)
    assert words in run.stderr, (args, run.stderr)


@pytest.mark.parametrize("operation", ["tp", "pp"])
def test_prompt_prefill_is_timed_beside_the_decode(operation, tmp_path):
    # 3000 tokens: a step of 2048 and one of 952, as mlx-lm prefills.
    report = tmp_path / "prefill.json"
    run = perf(operation, "-np", "2", "--transport", "shm", *SMALL,
               "--batch", "1,2", "--prompt", "3000", "-J", str(report))
    assert run.returncode == 0, run.stderr
    assert len(rows(run.stdout)) == 2  # the decode table is unchanged
    (prefill,) = json.loads(report.read_text())["prefill"]
    calls = 2 * 4 * 2 if operation == "tp" else 2 * 1 + 1
    assert prefill["model"] == "custom" and prefill["prompt_tokens"] == 3000
    assert prefill["steps"] == 2 and prefill["calls"] == calls
    assert prefill["median_ms"] > 0
    line = re.search(r"^  custom\s+3000\s+2\s+(\d+)\s+([\d.]+)$", run.stdout,
                     re.M)
    assert line and int(line.group(1)) == calls, run.stdout
    assert "# prefill: a prompt's" in run.stdout


def test_prompt_needs_tokens_and_room(tmp_path):
    run = perf("tp", "-np", "2", "--prompt", "0")
    assert run.returncode == 2
    assert "invalid value '0' for --prompt" in run.stderr
    run = perf("tp", "-np", "2", "--hidden", "1048576", "--layers", "1",
               "--prompt", "2048")
    assert run.returncode == 2
    assert "--prompt 2048: a step of 2048 tokens x --hidden 1048576" in \
        run.stderr
