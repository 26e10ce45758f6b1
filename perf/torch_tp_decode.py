"""A tensor-parallel decode step of a Llama-shaped model over
torch.distributed: tokens per second over "mcl" (its C++ backend, then its
Python one) against "gloo", in one run, one backend after the other.

Each rank holds its shard of every layer, Megatron's way (the attention's
heads and the MLP's columns split over the ranks; the output and down
projections' partial sums all-reduced): 2 all-reduces of batch x hidden
floats per layer, which is what tensor parallelism costs at decode. The
model is small enough that those calls, not the arithmetic, set the pace
on this machine (--hidden, --layers to change it); it runs --tokens tokens
one at a time after a short prompt, and reports the median time per token
over --rounds runs.

    PYTHONPATH=build/bindings/python /usr/bin/python3 perf/torch_tp_decode.py
        [--ranks 2] [--layers 16] [--hidden 512] [--tokens 64] [--rounds 3]

MCL_TRANSPORT=tcp puts mcl on loopback TCP, as Gloo runs. Needs PyTorch."""

import argparse
import os
import statistics
import time

from torch_ranks import run_ranks


def build_layers(args, rank, ranks):
    """This rank's shard of every layer: random weights from one seed."""
    import torch
    torch.manual_seed(7)
    hidden, heads = args.hidden, args.heads
    head_dim = hidden // heads
    kv_heads = max(ranks, heads // 2)
    inner = args.intermediate
    layers = []
    for _ in range(args.layers):
        full = {
            "wq": torch.randn(heads * head_dim, hidden) / hidden ** 0.5,
            "wk": torch.randn(kv_heads * head_dim, hidden) / hidden ** 0.5,
            "wv": torch.randn(kv_heads * head_dim, hidden) / hidden ** 0.5,
            "wo": torch.randn(hidden, heads * head_dim) / hidden ** 0.5,
            "w1": torch.randn(inner, hidden) / hidden ** 0.5,
            "w3": torch.randn(inner, hidden) / hidden ** 0.5,
            "w2": torch.randn(hidden, inner) / inner ** 0.5,
        }
        rows = {"wq": heads * head_dim, "wk": kv_heads * head_dim,
                "wv": kv_heads * head_dim, "w1": inner, "w3": inner}
        shard = {}
        for name, w in full.items():
            if name in rows:  # column-parallel: a slice of the outputs
                part = rows[name] // ranks
                shard[name] = w[rank * part:(rank + 1) * part].contiguous()
            else:  # row-parallel: a slice of the inputs
                part = w.shape[1] // ranks
                shard[name] = w[:, rank * part:(rank + 1) * part].contiguous()
        shard["k"], shard["v"] = [], []
        layers.append(shard)
    return layers, head_dim


def decode_token(x, layers, head_dim, dist):
    """One token through every layer: attention (own heads, KV cache),
    all-reduce; MLP (own columns), all-reduce."""
    import torch
    import torch.nn.functional as F
    for layer in layers:
        h = F.rms_norm(x, x.shape[-1:]) if hasattr(F, "rms_norm") else x
        q = (h @ layer["wq"].T).view(-1, head_dim)
        layer["k"].append((h @ layer["wk"].T).view(-1, head_dim))
        layer["v"].append((h @ layer["wv"].T).view(-1, head_dim))
        keys = torch.stack(layer["k"], 1)      # kv_heads x seen x d
        values = torch.stack(layer["v"], 1)
        repeat = q.shape[0] // keys.shape[0]
        keys = keys.repeat_interleave(repeat, 0)
        values = values.repeat_interleave(repeat, 0)
        scores = torch.einsum("hd,hsd->hs", q, keys) / head_dim ** 0.5
        out = torch.einsum("hs,hsd->hd", scores.softmax(-1), values)
        partial = out.reshape(1, -1) @ layer["wo"].T
        dist.all_reduce(partial)
        x = x + partial
        h = F.rms_norm(x, x.shape[-1:]) if hasattr(F, "rms_norm") else x
        partial = (F.silu(h @ layer["w1"].T) * (h @ layer["w3"].T)) @ \
            layer["w2"].T
        dist.all_reduce(partial)
        x = x + partial
    return x


def rank_main(rank, ranks, store, backend, args, out):
    import torch
    import torch.distributed as dist
    import mcl.torch  # noqa: F401 - registers "mcl"
    torch.set_num_threads(1)
    dist.init_process_group(backend, init_method="file://" + store,
                            rank=rank, world_size=ranks)
    per_token = []
    for _ in range(args.rounds):
        layers, head_dim = build_layers(args, rank, ranks)
        x = torch.ones(1, args.hidden) / args.hidden
        with torch.no_grad():
            for _ in range(4):  # the prompt, token by token
                x = decode_token(x, layers, head_dim, dist)
            dist.barrier()
            start = time.perf_counter()
            for _ in range(args.tokens):
                x = decode_token(x, layers, head_dim, dist)
            per_token.append((time.perf_counter() - start) / args.tokens)
    dist.destroy_process_group()
    if rank == 0:
        out.put(statistics.median(per_token))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--layers", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--intermediate", type=int, default=1408)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    columns = {"mcl": ("mcl", {}),
               "mcl-py": ("mcl", {"MCL_TORCH_BACKEND": "python"}),
               "gloo": ("gloo", {})}
    seconds = {name: run_ranks(rank_main, args.ranks, (backend, args), env)
               for name, (backend, env) in columns.items()}
    print(f"# TP decode, {args.ranks} ranks, {args.layers} layers, hidden "
          f"{args.hidden} ({2 * args.layers} all-reduces of "
          f"{args.hidden * 4} bytes per token), median of {args.rounds} "
          f"runs of {args.tokens} tokens; mcl transport "
          f"{os.environ.get('MCL_TRANSPORT', 'auto')}")
    print(f"{'backend':>8} {'ms/token':>9} {'tokens/s':>9} {'x gloo':>7}")
    for name, s in seconds.items():
        print(f"{name:>8} {s * 1e3:>9.2f} {1 / s:>9.1f} "
              f"{seconds['gloo'] / s:>7.2f}")


if __name__ == "__main__":
    main()
