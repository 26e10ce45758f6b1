"""Running mcl-perf ranks inside testbed hosts (network namespaces): one
process per rank, joined through MCL_ROOT, with their outputs collected.
Shared by the cluster tests."""

import os
import secrets
import subprocess
import time

PERF = os.environ.get("MCL_PERF", "")
# Random per test run: a fixed secret in a script is a public one.
SECRET = secrets.token_hex(16)
SMALL = ["-b", "8", "-e", "64K", "-f", "64", "-n", "2", "-w", "1", "-c", "1"]
# Long enough that a fault lands mid-run; results not checked (-c 0).
LONG = ["allreduce", "-b", "16M", "-e", "16M", "-n", "100000", "-w", "0",
        "-c", "0"]


def wait_for_traffic(procs, seconds=1.5):
    """The ranks have been running a while and none has ended: a fault
    injected now lands mid-run."""
    time.sleep(seconds)
    for p in procs:
        assert p.poll() is None, "a rank ended before the fault"



def start_ranks(bed, hosts, root, args, extra_env=None):
    """One mcl-perf per entry of hosts (the host of rank i)."""
    procs = []
    for rank, host in enumerate(hosts):
        env = {
            "MCL_RANK": str(rank),
            "MCL_WORLD_SIZE": str(len(hosts)),
            "MCL_ROOT": root,
            "MCL_SECRET": SECRET,
            "MCL_TIMEOUT": "20",
            "MCL_DEBUG": "INFO",
            "MCL_DEBUG_SUBSYS": "INIT",
        }
        env.update(extra_env or {})
        procs.append(bed.exec(host, [PERF] + args, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True))
    return procs


def finish(procs, timeout=120):
    outputs = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            out += "\n(killed: hung)"
        outputs.append((p.returncode, out))
    return outputs


def run_job(bed, hosts, root, args, extra_env=None):
    outputs = finish(start_ranks(bed, hosts, root, args, extra_env))
    for rank, (code, out) in enumerate(outputs):
        assert code == 0, f"rank {rank} failed ({code}):\n{out}"
    table = outputs[0][1]
    assert "# Out of bounds values : 0 OK" in table, table
    return outputs


def cable_root(port):
    return f"10.77.0.1:{port}"  # host 0's end of cable 0
