#!/usr/bin/env python3
"""Data-parallel training with mcl, in NumPy.

Every rank holds the same small model (a two-layer perceptron), computes
the gradient of the loss on its own shard of a synthetic regression data
set, and averages the gradients with one all_reduce per step: every rank
then takes the same step, and the models stay identical.

    python3 examples/python/data_parallel.py --ranks 2

Started like that (no launcher's rank in the environment), it starts
--ranks copies of itself on this machine and hands them a new
mcl.UniqueId. Under a launcher that sets MCL_RANK, MCL_WORLD_SIZE and
MCL_UNIQUE_ID (or mpirun, torchrun ...: see mcl.init_from_env), each copy
is one rank.
"""

import argparse
import os
import subprocess
import sys
import zlib

import numpy as np

import mcl


def parse_args():
    parser = argparse.ArgumentParser(
        description="Data-parallel training of a tiny NumPy model with mcl.")
    parser.add_argument("--ranks", type=int, default=2,
                        help="local ranks to start (without a launcher)")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--samples", type=int, default=4096,
                        help="samples in the whole data set")
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--log-every", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def launch_local_ranks(args):
    """Runs args.ranks copies of this script, as ranks 0..n-1, to their end.
    This process makes the UniqueId, so it hosts the rendezvous: it must
    live until every rank has joined (here: until they finish)."""
    unique_id = mcl.UniqueId()
    procs = []
    for rank in range(args.ranks):
        env = dict(os.environ, MCL_RANK=str(rank),
                   MCL_WORLD_SIZE=str(args.ranks),
                   MCL_UNIQUE_ID=str(unique_id))
        procs.append(subprocess.Popen(
            [sys.executable, os.path.abspath(__file__)] + sys.argv[1:],
            env=env))
    try:
        codes = [proc.wait() for proc in procs]
    except KeyboardInterrupt:
        # Ctrl-C reached the ranks too: each aborts its communicator.
        for proc in procs:
            proc.wait()
        return 130
    failed = [rank for rank, code in enumerate(codes) if code != 0]
    if failed:
        print(f"ranks {failed} failed", file=sys.stderr)
        return 1
    return 0


def make_data(samples, seed):
    """The whole data set, the same on every rank: y = sin(x0) cos(x1) plus
    a little noise."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, size=(samples, 2)).astype(np.float32)
    y = np.sin(x[:, :1]) * np.cos(x[:, 1:])
    y += rng.normal(0, 0.05, size=y.shape)
    return x, y.astype(np.float32)


class Model:
    """y = tanh(x W1 + b1) W2 + b2. The parameters (and the gradients) are
    views into one flat float32 vector, so that a single all_reduce
    averages every gradient at once, as frameworks do with their buckets."""

    def __init__(self, inputs, hidden):
        self.shapes = {"W1": (inputs, hidden), "b1": (hidden,),
                       "W2": (hidden, 1), "b2": (1,)}
        size = sum(int(np.prod(s)) for s in self.shapes.values())
        self.flat = np.zeros(size, np.float32)
        self.grad_flat = np.zeros(size, np.float32)
        self.p = self._views(self.flat)
        self.g = self._views(self.grad_flat)

    def _views(self, flat):
        views, offset = {}, 0
        for name, shape in self.shapes.items():
            count = int(np.prod(shape))
            views[name] = flat[offset:offset + count].reshape(shape)
            offset += count
        return views

    def init_random(self, rng):
        inputs, hidden = self.shapes["W1"]
        self.p["W1"][...] = rng.normal(0, 1 / np.sqrt(inputs), (inputs,
                                                                hidden))
        self.p["W2"][...] = rng.normal(0, 1 / np.sqrt(hidden), (hidden, 1))

    def loss(self, x, y):
        hidden = np.tanh(x @ self.p["W1"] + self.p["b1"])
        err = hidden @ self.p["W2"] + self.p["b2"] - y
        return float(np.mean(err * err)), hidden, err

    def loss_and_gradient(self, x, y):
        """The mean squared error on (x, y); its gradient goes to
        self.grad_flat."""
        loss, hidden, err = self.loss(x, y)
        d_out = (2.0 / len(x)) * err
        self.g["W2"][...] = hidden.T @ d_out
        self.g["b2"][...] = d_out.sum(axis=0)
        d_hidden = (d_out @ self.p["W2"].T) * (1 - hidden * hidden)
        self.g["W1"][...] = x.T @ d_hidden
        self.g["b1"][...] = d_hidden.sum(axis=0)
        return loss


def global_loss(comm, model, x, y):
    """The loss over every shard: shards are the same size, so the average
    of the ranks' losses."""
    local = np.array([model.loss(x, y)[0]])
    return float(comm.all_reduce(local, op="avg")[0])


def train(args):
    comm = mcl.init_from_env(name="data_parallel")
    with comm:  # closes the communicator, or aborts it on an exception
        rank, size = comm.rank, comm.size
        x, y = make_data(args.samples, args.seed)
        # Rank r takes every size-th sample from r on; all shards the same
        # size, so that averaging their gradients averages over the data.
        per_rank = args.samples // size
        x, y = x[rank::size][:per_rank], y[rank::size][:per_rank]

        model = Model(x.shape[1], args.hidden)
        if rank == 0:
            model.init_random(np.random.default_rng(args.seed + 1))
        # Everyone starts from rank 0's weights.
        comm.broadcast(model.flat, root=0, out=model.flat)

        velocity = np.zeros_like(model.flat)
        initial = global_loss(comm, model, x, y)
        for step in range(args.steps):
            loss = model.loss_and_gradient(x, y)
            # The mean of the shards' gradients, on every rank, in place.
            comm.all_reduce(model.grad_flat, op="avg", out=model.grad_flat)
            velocity = 0.9 * velocity + model.grad_flat
            model.flat -= args.lr * velocity
            if step % args.log_every == 0:
                # Every rank calls the all_reduce; rank 0 prints.
                mean = float(comm.all_reduce(np.array([loss]), op="avg")[0])
                if rank == 0:
                    print(f"step {step:4d}  loss {mean:.5f}", flush=True)
        final = global_loss(comm, model, x, y)

        # Identical steps keep identical weights: check it, with every
        # rank's weights gathered on every rank.
        gathered = comm.all_gather(model.flat)
        identical = all(np.array_equal(gathered[0], w) for w in gathered)
        if rank == 0:
            for r, weights in enumerate(gathered):
                print(f"rank {r}: weights checksum "
                      f"{zlib.crc32(weights.tobytes()):08x}")
            print(f"initial loss {initial:.5f}, final loss {final:.5f}")
            print(f"weights {'identical' if identical else 'DIFFER'} on all "
                  f"{size} ranks", flush=True)
    return 0 if identical and final < initial else 1


# The rank variables of the launchers mcl.init_from_env knows.
LAUNCHER_RANK_VARIABLES = ("MCL_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                           "SLURM_PROCID", "RANK", "MLX_RANK")


def main():
    args = parse_args()
    if not any(name in os.environ for name in LAUNCHER_RANK_VARIABLES):
        return launch_local_ranks(args)
    return train(args)


if __name__ == "__main__":
    sys.exit(main())
