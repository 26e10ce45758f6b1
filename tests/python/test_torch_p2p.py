"""Point-to-point over the PyTorch backend "mcl", as Gloo gives it, with
real processes: tags matched (in order within a tag), receives from any
rank, receives posted before the sends on every rank of a ring, and the
failures: a tag that never comes, sizes that differ, bad peers and tags.
Skipped, saying so, where PyTorch is not installed."""

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed (Debian: python3-torch): the "
    "mcl backend for torch.distributed is not tested")


def test_tags_any_source_and_receives_posted_first(ranks):
    reports = ranks.run("torch_p2p_matching", 3)
    for rank, report in enumerate(reports):
        assert report["failures"] == [], f"rank {rank}: {report['failures']}"
        wanted = {"irecv before isend on every rank",
                  "batch_isend_irecv into a column",
                  "the collective beside it",
                  "send to this rank refused naming it",
                  "recv from a rank not in the group refused naming it"}
        if report["python_backend"]:  # the C++ one gets torch's C int
            wanted.add("a tag beyond 32 bits refused naming it")
        elif not torch.__version__.startswith("1."):
            wanted.add("a batch of sends and receives")
        wanted |= {0: {"recv from any rank"},
                   1: {"tags out of order", "in order within a tag",
                       "a send across a collective"}}.get(rank, set())
        missing = wanted - set(report["checks"])
        assert not missing, f"rank {rank} did not check {missing}"


def test_a_tag_that_never_comes_and_a_size_that_differs(ranks):
    report = ranks.run("torch_p2p_failures", 2)[1]
    never = report["never"]
    assert never is not None, report
    assert "Timed out after 2 s" in never and "tag 9" in never, never
    # What did come is named: the receiver can see the tags disagree.
    assert "tag 8 from rank 0" in never, never
    assert 2 <= report["never_seconds"] < 2 + 7, report
    assert report["never_is_dist_error"], report
    assert "sent 24 bytes with tag 3" in report["size"], report
    assert "takes 20 bytes" in report["size"], report
    assert report["after"] == [9.0, 9.0], report


def test_a_dead_peer_fails_its_receives_and_spares_the_others(ranks):
    outcomes = ranks.start("torch_p2p_peer_dies", 3).collect(timeout=90)
    assert outcomes[1].returncode == 17, outcomes[1].describe()
    for outcome in (outcomes[0], outcomes[2]):
        assert outcome.returncode == 0, outcome.describe()
    report = outcomes[0].report
    assert report["first"] == [1.0, 1.0], report
    assert report["second"] is not None and "rank 1" in report["second"], \
        report
    assert report["seconds"] < 15, report  # noticed, not timed out (30 s)
    assert report["any"] == [2, [2.0, 2.0]], report
