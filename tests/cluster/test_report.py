"""`mcl-perf report` as a Mac owner runs it, once per Mac: here two network
namespaces cabled like two Macs, with the emulated RDMA fabric on the
cable. Each rank writes its Markdown and JSON files, labelled emulated, and
every step runs and writes its verdict: the doctor, qualify over TCP and
RDMA, latency, both all-reduce sweeps, and the failure drill (the last rank
killed, the other noticing it). Which verdict a timed step gives (qualify's
OK or SLOW, the drill's "within 2 s") depends on how busy the machine is
that minute, so the test asks only that each was judged and that nothing
failed for any other reason: the verdicts themselves are mcl-perf's to
give, on a quiet machine. Needs root and MCL_PERF."""

import json
import os
import re

import pytest

from jobs import PERF, SECRET, finish
from testbed import Testbed as Cluster

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"),
    pytest.mark.skipif(not os.path.exists(PERF), reason="MCL_PERF not built"),
]


def judged_on_speed(step):
    """A step whose failure is a verdict on speed: qualify calling a cable or
    a Mac SLOW, or a cable LOSSY (a veth on a loaded machine drops packets
    for real), never DEAD; the drill noticing the kill later than its 2 s.
    Any other failure (a timeout, a crash, no verdict) is not."""
    verdict = step["verdict"]
    if step["name"].startswith("qualify-"):
        return ("# Qualify: FAIL" in verdict and
                ("SLOW" in verdict or "LOSSY" in verdict) and
                "DEAD" not in verdict)
    if step["name"] == "failure":
        return re.match(r"rank 1 killed; noticed within [0-9.]+ s", verdict)
    return False


def test_report_on_two_emulated_macs(tmp_path):
    fabric = tmp_path / "pair.json"
    fabric.write_text('[[null, "rdma_en2"], ["rdma_en3", null]]')
    with Cluster("pair", name="mcl-report", lan=True) as bed:
        procs = []
        for rank in range(2):
            out = tmp_path / f"mac{rank}"
            env = {"MCL_ROOT": "10.78.0.1:29750", "MCL_RANK": str(rank),
                   "MCL_WORLD_SIZE": "2", "MCL_SECRET": SECRET,
                   "MCL_RDMA_PROVIDER": "emu", "MCL_EMU_FABRIC": str(fabric),
                   "MCL_TIMEOUT": "30"}
            procs.append(bed.exec(rank, [PERF, "report", "--quick", "--out",
                                         str(out), "-T", "120"], env=env,
                                  stdout=-1, stderr=-2, text=True))
        results = finish(procs, timeout=600)
    # Steps judged on speed on some rank: qualify's verdict is printed by
    # rank 0 alone, and the other ranks of a step that failed on it only
    # exit 1 with it.
    on_speed = set()
    for rank in range(2):
        for f in os.listdir(tmp_path / f"mac{rank}"):
            if f.endswith(f"-r{rank}.json"):
                report = json.loads((tmp_path / f"mac{rank}" / f).read_text())
                on_speed |= {s["name"] for s in report["steps"]
                             if not s["passed"] and judged_on_speed(s)}
    for rank, (code, out) in enumerate(results):
        files = os.listdir(tmp_path / f"mac{rank}")
        md = [f for f in files if f.endswith(f"-r{rank}.md")]
        js = [f for f in files if f.endswith(f"-r{rank}.json")]
        assert md and js, (files, out)
        text = (tmp_path / f"mac{rank}" / md[0]).read_text()
        report = json.loads((tmp_path / f"mac{rank}" / js[0]).read_text())
        assert "EMULATED RDMA fabric" in text.splitlines()[0], text[:400]
        assert "no figure here is real hardware's" in text
        assert "is not an mcl parameter" not in text, text
        assert report["emulated"] is True
        names = [s["name"] for s in report["steps"]]
        assert names == ["doctor", "qualify-tcp", "qualify-rdma", "latency",
                         "allreduce-tcp", "allreduce-rdma", "failure"]
        failed = [(s["name"], s["verdict"], s["output_tail"][-2000:])
                  for s in report["steps"]
                  if not s["passed"] and s["name"] not in on_speed]
        assert not failed, failed
        passed = sum(s["passed"] for s in report["steps"])
        assert report["passed"] is (passed == 7), report
        assert code == (0 if passed == 7 else 1), out
        assert f"{passed} of 7 steps passed" in text
    drill = json.loads((tmp_path / "mac0" / [
        f for f in os.listdir(tmp_path / "mac0") if f.endswith(".json")
        and f.startswith("mcl-report") and f.count(".") == 1][0]).read_text())
    verdict = [s for s in drill["steps"] if s["name"] == "failure"][0]["verdict"]
    noticed = re.match(r"rank 1 killed; noticed within ([0-9.]+) s", verdict)
    assert noticed, verdict
    # Noticed by the side channel, not by the 30-s timeout.
    assert float(noticed.group(1)) < 15, verdict
    # Rank 0 writes the steps' own JSON (the topology, the sweeps).
    rdma = [s for s in drill["steps"] if s["name"] == "allreduce-rdma"][0]
    assert rdma["result"] is not None
