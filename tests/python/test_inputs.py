"""What operations take -- DLPack-only objects, buffer-protocol objects,
torch tensors, float8 bits, mcl.empty shared memory (zero-copy) -- and
what they refuse, with an InvalidArgumentError that names the argument
and leaves the communicator usable."""

import pytest

import launcher

from scenario_inputs import REFUSED


def _no_failures(reports):
    for rank, report in enumerate(reports):
        assert report["checks"], f"rank {rank} ran no checks"
        assert not report["failures"], (f"rank {rank}:\n" +
                                         "\n".join(report["failures"]))


@pytest.mark.parametrize("nranks", [2, 3])
def test_accepted_inputs(ranks, nranks):
    _no_failures(ranks.run("accepted_inputs", nranks))


def test_fortran_ordered_input_is_reduced_in_its_own_order(ranks):
    """The buffer protocol passes a Fortran-ordered array as it is, and the
    result mcl allocates keeps that order; DLPack (row-major only) refuses
    it."""
    for rank, report in enumerate(ranks.run("fortran_order", 2)):
        assert report["buffer"]["right"], (rank, report)
        assert report["dlpack"]["refused"], (rank, report)
        assert "contiguous" in report["dlpack"]["message"], (rank, report)


def test_torch_tensors(ranks):
    pytest.importorskip("torch")
    _no_failures(ranks.run("torch_tensors", 2))


@pytest.mark.parametrize("nranks", [2, 3])
def test_shared_memory_runs_zero_copy_with_the_same_results(ranks, nranks):
    reports = ranks.run("shared_memory", nranks, timeout=180)
    _no_failures(reports)
    assert len(reports[0]["checks"]) >= 14


@pytest.fixture(scope="module")
def refusals(tmp_path_factory):
    return launcher.run_ranks(tmp_path_factory.mktemp("refused"),
                              "refused_inputs", 2)


@pytest.mark.parametrize("name, words", [(name, words)
                                         for name, words, _ in REFUSED])
def test_refused_input(refusals, name, words):
    for rank, report in enumerate(refusals):
        assert name in report["results"], (
            f"rank {rank} stopped before {name!r}: {report['results']}")
        entry = report["results"][name]
        error = entry["error"]
        assert error is not None, f"rank {rank}: {name} was accepted"
        allowed = ("InvalidArgumentError",) if words is not None else \
            ("InvalidArgumentError", "TypeError")
        assert error["class"] in allowed, f"rank {rank}: {error}"
        if words:
            assert any(w.lower() in error["text"].lower() for w in words), (
                f"rank {rank}: {error['text']!r} names none of {words}")
        assert entry["still_works"] is None, (
            f"rank {rank}: after {name}: {entry['still_works']}")
