#!/usr/bin/env python3
"""Tensor parallelism with PyTorch's own tools (DTensor) on mcl.

A Llama-shaped transformer block (RMSNorm, attention with grouped-query
heads, rotary positions and a KV cache, a SwiGLU MLP; random weights from
a fixed seed) is sharded over the ranks with
torch.distributed.tensor.parallel.parallelize_module: the attention's
query, key and value projections and the MLP's gate and up projections
column-wise, the output and down projections row-wise, as torchtitan and
transformers' tp_plan shard a Llama. It runs a prompt, then decodes a few
tokens one at a time; every step is compared with the same block run
unsharded on this rank. The collectives DTensor makes (all-reduces of the
row-wise projections' partial sums) run on mcl's "mcl" backend. Then the
functional collectives themselves (all_reduce, all_gather_tensor,
reduce_scatter_tensor, wait_tensor), plain and under torch.compile.

    python3 examples/python/tensor_parallel_dtensor.py --ranks 2
    torchrun --nproc_per_node 4 examples/python/tensor_parallel_dtensor.py

Started without a launcher's RANK in the environment, it starts --ranks
copies of itself on this host (a store on 127.0.0.1; one host needs no
MCL_SECRET). Needs PyTorch 2.2 or newer (init_device_mesh). Exits 1 when
a step differs from the unsharded block by more than the tolerance
(float32 sums in another order: --atol, --rtol).
"""

import argparse
import json
import os
import socket
import subprocess
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

import mcl.torch  # registers the "mcl" backend


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ranks", type=int, default=2,
                        help="ranks to start when not under a launcher")
    parser.add_argument("--steps", type=int, default=4,
                        help="tokens to decode after the prompt")
    parser.add_argument("--compile", default="aot_eager",
                        help="torch.compile backend for the functional "
                        "collectives' check (inductor needs a C++ compiler; "
                        "'none' skips it)")
    parser.add_argument("--atol", type=float, default=1e-5)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--report", help="rank 0 writes its findings here "
                        "as JSON (the tests read it)")
    return parser.parse_args()


# -- the model ----------------------------------------------------------------

DIM, HEADS, KV_HEADS, HEAD_DIM, HIDDEN = 64, 8, 4, 8, 128


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True)
                                             + 1e-6)


def rotate(x, positions):
    """Rotary position embedding of x (batch, tokens, heads, head_dim)."""
    half = x.shape[-1] // 2
    freqs = 1.0 / (10000 ** (torch.arange(half, dtype=torch.float32) / half))
    angles = positions[:, None].float() * freqs[None, :]
    cos, sin = angles.cos()[None, :, None, :], angles.sin()[None, :, None, :]
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


class Attention(nn.Module):
    """Heads are counted from the projections' outputs: sharded
    column-wise, each rank holds HEADS / ranks of them."""

    def __init__(self):
        super().__init__()
        self.wq = nn.Linear(DIM, HEADS * HEAD_DIM, bias=False)
        self.wk = nn.Linear(DIM, KV_HEADS * HEAD_DIM, bias=False)
        self.wv = nn.Linear(DIM, KV_HEADS * HEAD_DIM, bias=False)
        self.wo = nn.Linear(HEADS * HEAD_DIM, DIM, bias=False)
        self.cache_k = self.cache_v = None

    def forward(self, x, start):
        b, t, _ = x.shape
        positions = torch.arange(start, start + t)
        q = rotate(self.wq(x).view(b, t, -1, HEAD_DIM), positions)
        k = rotate(self.wk(x).view(b, t, -1, HEAD_DIM), positions)
        v = self.wv(x).view(b, t, -1, HEAD_DIM)
        if start == 0:
            self.cache_k, self.cache_v = k, v
        else:
            self.cache_k = torch.cat([self.cache_k, k], dim=1)
            self.cache_v = torch.cat([self.cache_v, v], dim=1)
        repeat = q.shape[2] // self.cache_k.shape[2]
        keys = self.cache_k.repeat_interleave(repeat, dim=2)
        values = self.cache_v.repeat_interleave(repeat, dim=2)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, keys) / HEAD_DIM ** 0.5
        seen = torch.arange(keys.shape[1])[None, :] <= positions[:, None]
        scores = scores.masked_fill(~seen, float("-inf"))
        out = torch.einsum("bhqk,bkhd->bqhd", scores.softmax(-1), values)
        return self.wo(out.reshape(b, t, -1))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(DIM, HIDDEN, bias=False)  # gate
        self.w3 = nn.Linear(DIM, HIDDEN, bias=False)  # up
        self.w2 = nn.Linear(HIDDEN, DIM, bias=False)  # down

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention_norm, self.attention = RMSNorm(DIM), Attention()
        self.mlp_norm, self.mlp = RMSNorm(DIM), MLP()

    def forward(self, x, start):
        x = x + self.attention(self.attention_norm(x), start)
        return x + self.mlp(self.mlp_norm(x))


def new_block():
    torch.manual_seed(1234)
    return Block()




def shard(block, mesh):
    from torch.distributed.tensor.parallel import (ColwiseParallel,
                                                   RowwiseParallel,
                                                   parallelize_module)
    plan = {"attention.wq": ColwiseParallel(),
            "attention.wk": ColwiseParallel(),
            "attention.wv": ColwiseParallel(),
            "attention.wo": RowwiseParallel(),
            "mlp.w1": ColwiseParallel(), "mlp.w3": ColwiseParallel(),
            "mlp.w2": RowwiseParallel()}
    return parallelize_module(block, mesh, plan)


# -- the checks ---------------------------------------------------------------

def decode(block, prompt, steps):
    """The outputs of the prompt, then of each token decoded after it (the
    next token's input: the last output, normalized)."""
    outputs = []
    with torch.no_grad():
        out = block(prompt, 0)
        outputs.append(out)
        start = prompt.shape[1]
        for _ in range(steps):
            token = F.normalize(out[:, -1:, :], dim=-1)
            out = block(token, start)
            outputs.append(out)
            start += 1
    return outputs


def check_decode(args, mesh):
    torch.manual_seed(99)
    prompt = torch.randn(1, 6, DIM)
    reference = decode(new_block(), prompt, args.steps)
    sharded = decode(shard(new_block(), mesh), prompt, args.steps)
    worst = max(float((a - b).abs().max())
                for a, b in zip(reference, sharded))
    close = all(torch.allclose(a, b, atol=args.atol, rtol=args.rtol)
                for a, b in zip(reference, sharded))
    bitwise = all(torch.equal(a, b) for a, b in zip(reference, sharded))
    return {"steps": len(sharded), "max_difference": worst, "close": close,
            "bitwise": bitwise}


def check_functional(args, group):
    """The functional collectives DTensor is built on, with known values:
    plain, then (where this torch compiles them) under torch.compile."""
    import torch.distributed._functional_collectives as funcol
    r, n = dist.get_rank(), dist.get_world_size()

    def collectives(x):
        total = funcol.all_reduce(x, "sum", group)
        gathered = funcol.all_gather_tensor(x, 0, group)
        mine = funcol.reduce_scatter_tensor(gathered, "sum", 0, group)
        return (funcol.wait_tensor(total), funcol.wait_tensor(gathered),
                funcol.wait_tensor(mine))

    x = torch.full((2,), float(r + 1))
    want = ([n * (n + 1) / 2] * 2,
            [float(i + 1) for i in range(n) for _ in range(2)],
            [float(n * (r + 1))] * 2)
    got = [t.tolist() for t in collectives(x)]
    found = {"functional": got == [list(w) for w in want]}
    if args.compile != "none":
        compiled = torch.compile(collectives, backend=args.compile,
                                 fullgraph=True)
        got = [t.tolist() for t in compiled(x)]
        found["compiled"] = got == [list(w) for w in want]
        found["compile_backend"] = args.compile
    return found


def rank_main(args):
    dist.init_process_group("mcl")  # torchrun's or our own env://
    from torch.distributed.device_mesh import init_device_mesh
    mesh = init_device_mesh("cpu", (dist.get_world_size(),))
    found = check_decode(args, mesh)
    found.update(check_functional(args, mesh.get_group()))
    dist.barrier()
    dist.destroy_process_group()
    ok = found["close"] and found["functional"] and found.get("compiled",
                                                             True)
    if int(os.environ["RANK"]) == 0:
        print(f"{os.environ['WORLD_SIZE']} ranks: {found['steps']} steps "
              f"(prompt + {args.steps} tokens), largest difference from one "
              f"rank {found['max_difference']:.3g} (bitwise: "
              f"{found['bitwise']}); functional collectives "
              f"{'ok' if found['functional'] else 'WRONG'}"
              + (f", compiled ({args.compile}) "
                 f"{'ok' if found['compiled'] else 'WRONG'}"
                 if "compiled" in found else ""))
        if args.report:
            with open(args.report, "w") as f:
                json.dump(found, f)
    return 0 if ok else 1


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(args):
    """--ranks copies of this script, as torchrun would start them."""
    env = dict(os.environ, MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(free_port()), WORLD_SIZE=str(args.ranks))
    # Debian's torch 2 has a TCPStore without libuv, which env:// asks for.
    env.setdefault("USE_LIBUV", "0")
    procs = [subprocess.Popen([sys.executable] + sys.argv,
                              env=dict(env, RANK=str(r), LOCAL_RANK=str(r)))
             for r in range(args.ranks)]
    codes = [p.wait(timeout=600) for p in procs]
    return max(codes)


def main():
    args = parse_args()
    if "RANK" in os.environ:
        return rank_main(args)
    return launch(args)


if __name__ == "__main__":
    sys.exit(main())
