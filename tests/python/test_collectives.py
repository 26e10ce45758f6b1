"""Every operation x every element type x in place / out of place / mcl
allocating the result, on 2, 3 and 4 ranks, over shared memory, and on 2
ranks over TCP. The ranks check results bit for bit (scenario_collectives);
here we check they all agree nothing failed and the matrix ran in full."""

import pytest

from reference import MOVABLE, REDUCIBLE, ops_for
from scenario_collectives import MODES


def _expected_labels(part, size):
    """The cases of the matrix's small shape (where every mode runs)."""
    roots = sorted({0, size - 1})
    labels = set()
    if part == "reductions":
        for t in REDUCIBLE:
            for op in ops_for(t):
                for mode in MODES:
                    tag = f"{t.name}/{op}/{mode}/{(size * 2, 3)}"
                    labels.add(f"all_reduce/{tag}")
                    labels.update(f"reduce(root={root})/{tag}"
                                  for root in roots)
                    labels.add(f"reduce_scatter/{tag}")
    else:
        for t in MOVABLE:
            for mode in MODES:
                tag = f"{t.name}/{mode}/{(size * 2, 3)}"
                labels.add(f"all_gather/{tag}")
                labels.update(f"broadcast(root={root})/{tag}"
                              for root in roots)
                labels.add(f"all_to_all/{tag}")
            labels.add(f"send_recv/{t.name}/out/{(size * 2, 3)}")
    return labels


def _check_matrix(reports, part, size, transport):
    for rank, report in enumerate(reports):
        assert report["transports"] == [transport], report["transports"]
        assert report["failure_count"] == 0, (
            f"rank {rank}: {report['failure_count']} failures, first "
            "ones:\n" + "\n".join(report["failures"]))
        assert report["broken"] is None, report["broken"]
        missing = _expected_labels(part, size) - set(report["covered"])
        assert not missing, f"rank {rank} skipped {sorted(missing)[:10]}"
        # The large shape ran too.
        assert len(report["covered"]) > len(_expected_labels(part, size))


@pytest.mark.parametrize("part", ["reductions", "moves"])
@pytest.mark.parametrize("nranks", [2, 3, 4])
def test_matrix_over_shared_memory(ranks, nranks, part):
    reports = ranks.run(part, nranks, timeout=240)
    _check_matrix(reports, part, nranks, "shm")


@pytest.mark.parametrize("part", ["reductions", "moves"])
def test_matrix_over_tcp(ranks, part):
    reports = ranks.run(part, 2, env={"MCL_TRANSPORT": "tcp"},
                        args={"large": 10000}, timeout=240)
    _check_matrix(reports, part, 2, "tcp")


@pytest.mark.parametrize("nranks", [2, 3])
def test_sendrecv_exchanges_around_the_ring_beyond_the_buffers(ranks, nranks):
    for rank, report in enumerate(ranks.run("exchange", nranks,
                                            env={"MCL_TIMEOUT": "20"},
                                            timeout=120)):
        assert not report["problems"], (rank, report["problems"])
