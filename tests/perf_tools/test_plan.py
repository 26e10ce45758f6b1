"""mcl-perf plan: the parameter counts of the presets against the published
ones, the prediction from a saved cluster against the formula of
docs/planning.md worked out here independently, what does not fit or
cannot split refused with the reason, bad input named, and a measured
cluster saved and planned from again."""

import json
import os
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PERF = os.environ.get("MCL_PERF", os.path.join(ROOT, "build", "bin",
                                               "mcl-perf"))

# A small Llama-shaped model: 4 layers of hidden 256.
SMALL = {"num_hidden_layers": 4, "hidden_size": 256,
         "num_attention_heads": 8, "num_key_value_heads": 4,
         "intermediate_size": 704, "vocab_size": 1000}


def perf(*args):
    env = dict(os.environ)
    for name in ("MCL_TRANSPORT", "MCLPERF_PARSE_ONLY"):
        env.pop(name, None)
    return subprocess.run([PERF, *map(str, args)], capture_output=True,
                          text=True, timeout=180, env=env)


def write(path, doc):
    path.write_text(json.dumps(doc))
    return str(path)


def cluster(ranks=2, free=100e9, rate=50e9, flops=1e12, ar_us=(20, 2020),
            hop_us=(10, 1010)):
    """A saved cluster: alike ranks; all-reduce and hop costs linear from
    1000 B to 1e6 B."""
    return {"mcl_plan_cluster": 1, "transport": "tcp",
            "ranks": [{"host": f"mac{r}", "memory_bytes": free * 1.1,
                       "free_bytes": free, "weight_bytes_per_s": rate,
                       "flops_per_s": flops, "rate_source": "test"}
                      for r in range(ranks)],
            "allreduce": [{"bytes": [1000, 1e6], "us": list(ar_us)}
                          for _ in range(ranks - 1)],
            "hop": {"bytes": [1000, 1e6], "us": list(hop_us)}}


def plan(tmp_path, model, figures, *extra):
    run = perf("plan", "--model", model, "--from",
               write(tmp_path / "cluster.json", figures), "--json", *extra)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize("preset,published", [
    ("llama-8b", 8.03e9), ("llama-70b", 70.6e9), ("llama-405b", 405.9e9),
    ("mixtral-8x7b", 46.7e9), ("qwen3-30b-a3b", 30.5e9),
    ("deepseek-v3", 671e9)])
def test_presets_count_the_published_parameters(tmp_path, preset,
                                                published):
    doc = plan(tmp_path, preset, cluster())
    assert doc["parameters"] == pytest.approx(published, rel=0.01)


def linear(points, x):
    (x0, x1), (y0, y1) = points
    return y0 if x < x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)


def expected_step(m, tp, pp, ctx, batch, rate, flops, ar, hop):
    """One decode step in seconds, worked out from docs/planning.md."""
    h, L = m["hidden_size"], m["num_hidden_layers"]
    heads, kv = m["num_attention_heads"], m["num_key_value_heads"]
    d = h // heads
    attn = 2 * h * heads * d + 2 * h * kv * d
    mlp = 3 * h * m["intermediate_size"]
    embed = m["vocab_size"] * h
    layers = [L // pp + (1 if s < L % pp else 0) for s in range(pp)]
    message = batch * h * 2
    step = 0.0
    for s, n in enumerate(layers):
        head = embed / tp if s == pp - 1 else 0
        read = (n * (attn + mlp) / tp + head) * 2 + \
            n * 2 * (kv // tp) * d * 2 * ctx * batch
        work = 2 * batch * (n * (attn + mlp) / tp + head) + \
            batch * n * 2 * 2 * ctx * (heads / tp) * d
        step += max(read / rate, work / flops)
        if tp > 1:
            step += (n * 2 * linear(ar, message) +
                     (linear(ar, 16 * tp) if s == pp - 1 else 0)) * 1e-6
    if pp > 1:
        step += ((pp - 1) * linear(hop, message) + linear(hop, 4 * batch)) \
            * 1e-6
    return step


@pytest.mark.parametrize("batch,ctx", [(1, 4096), (8, 512)])
def test_prediction_follows_the_documented_formula(tmp_path, batch, ctx):
    model = write(tmp_path / "config.json", SMALL)
    figures = cluster(ranks=4, rate=5e9, flops=2e10)
    doc = plan(tmp_path, model, figures, "--context", ctx, "--batch", batch)
    ar = ((1000, 1e6), (20, 2020))
    hop = ((1000, 1e6), (10, 1010))
    seen = {(l["tp"], l["pp"]): l for l in doc["layouts"]}
    # Every split of 1-4 ranks but tp3 (3 does not divide 8 heads).
    assert set(seen) == {(1, 1), (2, 1), (1, 2), (1, 3), (4, 1), (2, 2),
                         (1, 4)}
    for (tp, pp), layout in seen.items():
        step = expected_step(SMALL, tp, pp, ctx, batch, 5e9, 2e10, ar, hop)
        assert layout["step_s"] == pytest.approx(step, rel=1e-9), (tp, pp)
        assert layout["decode_tokens_per_s"] == pytest.approx(batch / step)
    # One rank's prefill of the default 2048-token prompt: one step, every
    # weight read once, each token multiplying by all of them and attending
    # to 1024 positions on average.
    h, L = SMALL["hidden_size"], SMALL["num_hidden_layers"]
    d = h // SMALL["num_attention_heads"]
    weights = L * (2 * h * 8 * d + 2 * h * 4 * d + 3 * h * 704) + 1000 * h
    work = 2 * 2048 * weights + 2048 * L * 2 * 2 * 1024 * 8 * d
    assert seen[(1, 1)]["prefill_s"] == pytest.approx(
        max(2 * weights / 5e9, work / 2e10), rel=1e-9)
    speeds = [l["decode_tokens_per_s"] for l in doc["layouts"]]
    assert speeds == sorted(speeds, reverse=True)
    assert doc["refused"] == [{"name": "tp3", "tp": 3, "pp": 1,
                               "reason": "TP 3 does not divide the 8 "
                                         "attention heads"}]


def test_what_does_not_fit_is_refused_naming_the_rank(tmp_path):
    # llama-8b in bf16 is 16 GB: not on one rank with 10 GB, on two.
    doc = plan(tmp_path, "llama-8b", cluster(ranks=2, free=10e9))
    assert sorted(l["name"] for l in doc["layouts"]) == ["pp2", "tp2"]
    (single,) = [r for r in doc["refused"] if r["name"] == "1 rank"]
    assert "rank 0 (mac0) would hold 16.6 GB" in single["reason"]
    assert "9.0 GB usable" in single["reason"]
    for layout in doc["layouts"]:
        assert layout["memory_per_rank_bytes"] < 9e9
        # What the fullest rank has left of its 9 GB usable.
        assert layout["headroom_bytes"] == pytest.approx(
            9e9 - layout["memory_per_rank_bytes"], rel=1e-9)
        assert layout["hosts"] == ["mac0", "mac1"]
    # 4 bits: 4.5 GB fits one rank; over links of 5 ms a call one rank is
    # fastest, over links of 20 us tensor parallelism.
    slow = cluster(ranks=2, free=10e9, ar_us=(5000, 7000), hop_us=(5000, 7000))
    doc = plan(tmp_path, "llama-8b", slow, "--bits", 4)
    assert doc["layouts"][0]["name"] == "1 rank"
    doc = plan(tmp_path, "llama-8b", cluster(ranks=2, free=10e9), "--bits", 4)
    assert doc["layouts"][0]["name"] == "tp2"


def test_nothing_fits_says_why(tmp_path):
    doc = plan(tmp_path, "llama-405b", cluster(ranks=2, free=20e9))
    assert doc["layouts"] == []
    assert doc["reason"].startswith("nothing fits: the weights are 811.7 GB")
    assert "rank 0 (mac0) would hold" in doc["reason"]
    table = perf("plan", "--model", "llama-405b", "--from",
                 write(tmp_path / "c.json", cluster(ranks=2, free=20e9)))
    assert table.returncode == 0, table.stderr
    assert "best: nothing fits" in table.stdout
    assert "mlx.launch" not in table.stdout


def test_table_ends_with_the_launch_lines_of_the_best(tmp_path):
    run = perf("plan", "--model", "llama-70b", "--bits", 4, "--from",
               write(tmp_path / "c.json", cluster(ranks=2, free=30e9)))
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "best: tp2:" in out
    assert '[{"ips":[],"ssh":"mac0"},{"ips":[],"ssh":"mac1"}]' in out
    assert "MCL_WORLD_SIZE=2 MCL_ROOT=mac0:29500" in out
    assert "torchrun --nnodes 2" in out


@pytest.mark.parametrize("config,field", [
    ({k: v for k, v in SMALL.items() if k != "num_hidden_layers"},
     '"num_hidden_layers"'),
    (dict(SMALL, hidden_size=-3), '"hidden_size" is -3'),
    (dict(SMALL, num_key_value_heads=3),
     '"num_attention_heads" (8) is not a multiple of "num_key_value_heads"'),
    (dict(SMALL, num_experts=8), '"num_experts_per_tok"'),
    (dict(SMALL, tie_word_embeddings="yes"), '"tie_word_embeddings"'),
])
def test_a_bad_config_names_the_field(tmp_path, config, field):
    path = write(tmp_path / "config.json", config)
    run = perf("plan", "--model", path, "--from",
               write(tmp_path / "c.json", cluster()))
    assert run.returncode == 2
    assert field in run.stderr
    assert path in run.stderr


@pytest.mark.parametrize("args,message", [
    (["--model", "llama-8b", "--bits", "5"], "--bits takes 16, 8 or 4"),
    (["--model", "no-such-model"], "no such file, and not a preset"),
    (["--model", "llama-8b", "--from", "/nonexistent.json"],
     "cannot read --from /nonexistent.json"),
    (["--model", "llama-8b", "--from", "x", "--save", "y"],
     "give one of them"),
    (["--model", "llama-8b", "--mem-bw", "0"], "--mem-bw takes a number"),
])
def test_bad_flags_are_named(args, message):
    run = perf("plan", *args)
    assert run.returncode == 2
    assert message in run.stderr


def test_a_saved_cluster_that_is_not_one_is_named(tmp_path):
    bad = cluster()
    del bad["ranks"][1]["weight_bytes_per_s"]
    run = perf("plan", "--model", "llama-8b", "--from",
               write(tmp_path / "c.json", bad))
    assert run.returncode == 2
    assert 'entry 1 of "ranks" needs "weight_bytes_per_s"' in run.stderr
    run = perf("plan", "--model", "llama-8b", "--from",
               write(tmp_path / "d.json", {"ranks": []}))
    assert run.returncode == 2
    assert "not a cluster saved by `mcl-perf plan --save`" in run.stderr
    for field, value, message in [
            ("ranks_on_host", "2", '"ranks_on_host" must be a whole number'),
            ("rank", 5, '"rank" must be a rank number from 0 to 1, each once'),
            ("host", 3, "a field has the wrong type")]:
        bad = cluster()
        bad["ranks"][0][field] = value
        run = perf("plan", "--model", "llama-8b", "--from",
                   write(tmp_path / "e.json", bad))
        assert run.returncode == 2, (field, run.stdout)
        assert message in run.stderr, (field, run.stderr)
    bad = cluster()
    bad["hop"]["us"][0] = -1
    run = perf("plan", "--model", "llama-8b", "--from",
               write(tmp_path / "f.json", bad))
    assert run.returncode == 2 and '"hop": "us" holds times >= 0' in \
        run.stderr


def test_a_saved_cluster_keeps_its_rank_numbers_and_takes_the_rate_flags(
        tmp_path):
    # Saved fastest first: rank 1 before rank 0. A refusal names rank 1 as
    # rank 1, and --mem-bw and --tflops apply to a saved cluster too.
    figures = cluster(ranks=2, free=10e9)
    figures["ranks"][0]["rank"] = 1
    figures["ranks"][1]["rank"] = 0
    doc = plan(tmp_path, "llama-8b", figures)
    (single,) = [r for r in doc["refused"] if r["name"] == "1 rank"]
    assert single["reason"].startswith("rank 1 (mac0) would hold")
    slow = plan(tmp_path, "llama-8b", cluster(ranks=2), "--bits", 4)
    fast = plan(tmp_path, "llama-8b", cluster(ranks=2), "--bits", 4,
                "--mem-bw", 500, "--tflops", 100)
    assert fast["layouts"][0]["decode_tokens_per_s"] > \
        5 * slow["layouts"][0]["decode_tokens_per_s"]


@pytest.mark.parametrize("transport", ["shm", "tcp"])
def test_measured_cluster_saved_and_planned_again(tmp_path, transport):
    model = write(tmp_path / "config.json", SMALL)
    saved = tmp_path / "cluster.json"
    run = perf("plan", "-np", 2, "--transport", transport, "--model", model,
               "--json", "--save", saved)
    assert run.returncode == 0, run.stderr
    live = json.loads(run.stdout)
    figures = json.loads(saved.read_text())
    assert len(figures["ranks"]) == 2
    for r in figures["ranks"]:
        assert r["weight_bytes_per_s"] > 0 and r["flops_per_s"] > 0
        assert r["rate_source"] == "measured"
        assert 0 < r["free_bytes"] <= r["memory_bytes"]
    # Two ranks on one machine: each has half of its memory.
    assert figures["ranks"][0]["memory_bytes"] == pytest.approx(
        os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2,
        rel=0.02)
    (curve,) = figures["allreduce"]
    assert all(us > 0 for us in curve["us"])
    assert curve["us"][-1] > curve["us"][0]  # 8 MiB costs more than 2 KiB
    assert all(us > 0 for us in figures["hop"]["us"])
    again = plan(tmp_path, model, figures)
    assert again["layouts"] == live["layouts"]
    assert {l["name"] for l in live["layouts"]} == {"1 rank", "tp2", "pp2"}


def test_pipeline_stages_get_layers_by_speed(tmp_path):
    # Alike Macs (within 10%: measurement noise) split evenly, the earlier
    # stage taking the odd layer; a Mac twice as fast holds twice the
    # layers, and comes first.
    figures = cluster(ranks=2)
    figures["ranks"][1]["weight_bytes_per_s"] = 47e9
    doc = plan(tmp_path, "llama-8b", figures, "--bits", 4)
    (pp2,) = [l for l in doc["layouts"] if l["name"] == "pp2"]
    assert pp2["layers_per_stage"] == [16, 16]
    assert pp2["hosts"] == ["mac0", "mac1"]
    figures = cluster(ranks=3)
    figures["ranks"][2]["weight_bytes_per_s"] = 100e9
    doc = plan(tmp_path, "llama-8b", figures, "--bits", 4)
    (pp2,) = [l for l in doc["layouts"] if l["name"] == "pp2"]
    assert pp2["hosts"] == ["mac2", "mac0"]
    assert pp2["layers_per_stage"] == [21, 11]
    (pp3,) = [l for l in doc["layouts"] if l["name"] == "pp3"]
    assert pp3["layers_per_stage"] == [16, 8, 8]


def test_a_mac_on_no_cable_is_left_out_and_named(tmp_path):
    # Rank 1 reaches the others over the LAN only: layouts take ranks 0
    # and 2; one on all three is refused naming rank 1.
    figures = cluster(ranks=3)
    figures["ranks"][1]["on_cable"] = False
    doc = plan(tmp_path, "llama-8b", figures, "--bits", 4)
    for layout in doc["layouts"]:
        assert "mac1" not in layout["hosts"]
    names = {l["name"] for l in doc["layouts"]}
    assert {"tp2", "pp2", "1 rank"} <= names
    (pp3,) = [r for r in doc["refused"] if r["name"] == "pp3"]
    assert pp3["reason"].startswith("rank 1 (mac1) is on no cable")
