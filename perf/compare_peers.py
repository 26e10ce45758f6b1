"""perf/compare's peers beyond OpenMPI and Gloo: MLX's distributed backends
(ring over TCP, and mpi over Open MPI), built from an installed MLX, and the
TCP loopback socket itself (round trip and two-way exchange), the limit the
small all-reduces are held to. Each timer returns {bytes: us} like
perf/compare's own."""

import json
import os
import socket
import subprocess
import tempfile

BASELINES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                         "baselines")


def _build(argv):
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}):\n"
                           f"{proc.stdout}{proc.stderr}")


def build_tcp_limits(work):
    program = os.path.join(work, "tcp_limits")
    _build(["cc", "-O2", os.path.join(BASELINES, "tcp_limits.c"), "-o",
            program])
    return program


def build_mlx(work, notes):
    """mlx_bench linked against the MLX that MLX_PREFIX names (as
    shared/tools/build-mlx.sh installs it: PREFIX/include, PREFIX/lib), or
    None with a note saying why the MLX columns are missing."""
    prefix = os.environ.get("MLX_PREFIX")
    if not prefix:
        notes.append("MLX ring and mpi columns skipped: MLX_PREFIX is not "
                     "set (an MLX install: include/mlx, lib/libmlx)")
        return None
    header = os.path.join(prefix, "include", "mlx", "distributed",
                          "distributed.h")
    libdir = os.path.join(prefix, "lib")
    if not os.path.exists(header) or not any(
            name.startswith("libmlx.") for name in os.listdir(libdir)
            if os.path.isdir(libdir)):
        notes.append(f"MLX ring and mpi columns skipped: MLX_PREFIX={prefix} "
                     "has no include/mlx/distributed/distributed.h and "
                     "lib/libmlx")
        return None
    program = os.path.join(work, "mlx_bench")
    try:
        _build(["g++", "-O2", "-std=c++20", "-I", os.path.join(prefix,
                                                               "include"),
                os.path.join(BASELINES, "mlx_bench.cpp"), "-o", program,
                "-L", libdir, "-lmlx", f"-Wl,-rpath,{libdir}"])
    except RuntimeError as e:
        notes.append(f"MLX ring and mpi columns skipped: mlx_bench does not "
                     f"build against {prefix}: {str(e).splitlines()[-1]}")
        return None
    version = os.path.join(prefix, "include", "mlx", "version.h")
    numbers = {}
    if os.path.exists(version):
        for line in open(version):
            parts = line.split()
            if len(parts) == 3 and parts[1].startswith("MLX_VERSION_") \
                    and parts[2].isdigit():
                numbers[parts[1][len("MLX_VERSION_"):]] = parts[2]
    notes.append("MLX {} from {}: its ring backend (TCP, MLX_HOSTFILE on "
                 "loopback, one socket per peer as mlx.launch writes it) and "
                 "its mpi backend (Open MPI's libmpi)".format(
                     ".".join(numbers.get(k, "?") for k in ("MAJOR", "MINOR",
                                                            "PATCH")),
                     prefix))
    return program


def _free_ports(count):
    """Ports the kernel hands out now (bound, then released: a run that
    loses one to another process fails and says so, it never measures
    something else)."""
    holders = []
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        holders.append(s)
    ports = [s.getsockname()[1] for s in holders]
    for s in holders:
        s.close()
    return ports


def _arguments(setup, band, layers, per_layer):
    lo, hi, factor, iters, warmup = band
    if setup["op"] == "tp":
        # bfloat16 elements: half the bytes.
        return ["tp", str(layers), str(lo // 2), str(per_layer), str(iters),
                str(warmup)]
    return ["allreduce", str(lo), str(hi), str(factor), str(iters),
            str(warmup)]


def _rows(text):
    rows = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit():
            rows[int(parts[0])] = float(parts[1])
    return rows


def time_mlx_ring(program, setup, band, layers, per_layer):
    """MLX's ring backend: the ranks started as mlx.launch starts them
    (MLX_RANK, MLX_HOSTFILE), on loopback."""
    with tempfile.NamedTemporaryFile("w", suffix=".json",
                                     delete=False) as hostfile:
        json.dump([[f"127.0.0.1:{port}"]
                   for port in _free_ports(setup["np"])], hostfile)
    try:
        procs = []
        for rank in range(setup["np"]):
            env = dict(os.environ, MLX_RANK=str(rank),
                       MLX_HOSTFILE=hostfile.name)
            procs.append(subprocess.Popen(
                ["timeout", "600", program, "ring"] +
                _arguments(setup, band, layers, per_layer),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                env=env))
        outs = [p.communicate() for p in procs]
    finally:
        os.unlink(hostfile.name)
    for rank, (p, (_, err)) in enumerate(zip(procs, outs)):
        if p.returncode != 0:
            raise RuntimeError(f"mlx_bench ring, rank {rank}, failed "
                               f"({p.returncode}): {err}")
    return _rows(outs[0][0])


def time_mlx_mpi(program, setup, band, layers, per_layer):
    """MLX's mpi backend under mpirun, on Open MPI's libmpi (what MLX loads
    by default), over the byte-transfer layer the setup names."""
    mca = ["--mca", "btl", "self," + setup["btl"]]
    if setup["btl"] == "tcp":
        mca += ["--mca", "btl_tcp_if_include", "lo"]
    argv = (["mpirun", "--allow-run-as-root", "--oversubscribe", "-np",
             str(setup["np"])] + mca + [program, "mpi"] +
            _arguments(setup, band, layers, per_layer))
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"mlx_bench mpi failed ({proc.returncode}): "
                           f"{proc.stdout}{proc.stderr}")
    return _rows(proc.stdout)


def time_tcp_limit(program, mode, band, most):
    """The loopback socket's round trip (mode pingpong) or two-way exchange
    at the band's sizes up to `most` bytes."""
    lo, hi, factor, iters, warmup = band
    if lo > most:
        return {}
    proc = subprocess.run([program, mode, str(lo), str(min(hi, most)),
                           str(factor), str(iters), str(warmup)],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"tcp_limits {mode} failed ({proc.returncode}): "
                           f"{proc.stderr}")
    return _rows(proc.stdout)
