"""The PyTorch c10d backend "mcl" (mcl/torch.py), with real processes:
every torch.distributed operation on 2 and 3 ranks, and the same small
model trained under DistributedDataParallel over "mcl" and over "gloo"
from one seed, which must end with the same weights. Skipped, saying so,
where PyTorch is not installed."""

import os

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed (Debian: python3-torch): the "
    "mcl backend for torch.distributed is not tested")


def test_the_backend_is_the_one_built():
    # MCLTEST_TORCH_BACKEND (CTest and check-pip set it): "cpp" where the
    # C++ backend was built for this torch, "python" where it was not or
    # MCL_TORCH_BACKEND=python asks for the Python one.
    import mcl.torch
    from mcl import _torch_native
    expected = os.environ.get("MCLTEST_TORCH_BACKEND")
    if expected is None:
        pytest.skip("MCLTEST_TORCH_BACKEND is not set: nothing to expect")
    reason = _torch_native.why_not_native()
    if expected == "cpp":
        assert reason is None, reason
    else:
        assert reason is not None
    assert mcl.torch.BACKEND == "mcl"


@pytest.mark.parametrize("nranks", [2, 3])
def test_every_operation_gives_the_right_values(ranks, nranks):
    reports = ranks.run("torch_collectives", nranks)
    everywhere = {
        "all_reduce sum", "all_reduce max", "all_reduce product int64",
        "all_reduce avg", "all_reduce non-contiguous", "all_gather",
        "all_gather_into_tensor", "broadcast", "reduce_scatter",
        "reduce_scatter_tensor", "all_to_all_single",
        "all_to_all_single uneven", "all_to_all", "scatter", "send/recv",
        "isend/irecv", "async all_reduce", "future", "all_gather_object",
        "broadcast_object_list", "scatter_object_list",
        "all_reduce bfloat16",
        "band refused naming it",
        "all_reduce_coalesced", "all_gather_coalesced",
        "all_reduce meta tensor refused naming it",
        "all_gather meta output refused naming it",
        "coalesced lists that do not pair refused naming it",
        "coalesced reduction of two types refused naming it",
        "usable after refusals"}
    if torch.__version__.startswith("1."):
        everywhere.add("coalescing manager: PyTorch 1.x has NCCL's only")
    else:
        everywhere |= {"coalescing manager all_reduce",
                       "coalescing manager all_gather_into_tensor",
                       "coalescing manager reduce_scatter_tensor"}
    at_root = {"reduce", "gather", "gather_object"}
    for rank, report in enumerate(reports):
        assert report["failures"] == [], f"rank {rank}: {report['failures']}"
        missing = (everywhere | (at_root if rank == 0 else set())) - set(
            report["checks"])
        assert not missing, f"rank {rank} did not check {missing}"


def test_ddp_over_mcl_ends_with_gloos_weights(ranks):
    got = {}
    for backend in ("mcl", "gloo"):
        reports = ranks.run("torch_train", 2,
                            args={"backend": backend, "steps": 20})
        # DDP keeps the replicas identical...
        assert reports[0]["weights"] == reports[1]["weights"], backend
        got[backend] = reports[0]
    # ...and both backends sum the same two gradients: the same bits.
    assert got["mcl"]["weights"] == got["gloo"]["weights"]
    assert got["mcl"]["loss"] == got["gloo"]["loss"]


@pytest.mark.parametrize("async_op", [False, True])
def test_a_stalled_peer_fails_the_call_naming_it(ranks, async_op):
    report = ranks.run("torch_stalled_peer", 2,
                       args={"async_op": async_op})[0]
    assert report["error"] is not None, report
    assert "rank 1" in report["error"], report
    # The 3-s timeout, and what a busy machine adds to it.
    assert report["seconds"] < 3 + 7, report
    # As torch's own backends fail: DistBackendError on 2.x (a
    # RuntimeError), saying "Timed out" and the timeout.
    assert report["is_runtime_error"], report
    if not torch.__version__.startswith("1."):
        assert report["is_dist_backend_error"], report
    assert "Timed out after 3 s" in report["error"], report


def test_monitored_barrier_names_the_rank_that_did_not_arrive(ranks):
    reports = ranks.run("torch_monitored_barrier", 3)
    for rank, report in enumerate(reports):
        assert report["first"] == "passed", (rank, report)
        assert report["after"] == [3.0, 3.0], (rank, report)
    assert "Rank 2 failed to pass monitoredBarrier in 1000 ms" in \
        reports[0]["second"], reports[0]
    assert "reported by rank 0" in reports[1]["second"], reports[1]
    assert "Rank 2 failed" in reports[1]["second"], reports[1]
    assert "Rank 2 failed" in reports[2]["second"], reports[2]


def test_the_store_holds_the_secret_only_sealed_or_where_allowed(ranks):
    # MCL_SECRET on every rank (the launcher's default): the ids are in the
    # store sealed, the link a send opens too; no secret in a usable form.
    reports = ranks.run("torch_store_secret", 2, args={"p2p": True})
    for report in reports:
        assert report["error"] is None, report
    stored, link = reports[0]["stored"], reports[0]["link"]
    assert stored and stored.startswith("mcl-sealed1:"), stored
    assert link and link.startswith("mcl-sealed1:"), link
    assert "mcl1:" not in stored + link, (stored, link)

    # No MCL_SECRET, every rank on this host: a key of the group's own,
    # through a private file, seals both; nothing to set.
    reports = ranks.run("torch_store_secret", 3, env={"MCL_SECRET": ""},
                        args={"p2p": True})
    for report in reports:
        assert report["error"] is None, report
    stored, link = reports[0]["stored"], reports[0]["link"]
    assert stored.startswith("mcl-one-host1:"), stored
    assert "mcl-sealed1:" in stored and link.startswith("mcl-sealed1:"), \
        (stored, link)
    assert "mcl1:" not in stored + link, (stored, link)


def test_across_hosts_the_secret_is_refused_without_mcl_secret(ranks):
    if os.geteuid() != 0:
        pytest.skip("another host is a UTS namespace of its own: needs root")
    # Rank 1 on "another host" (its own host name), no MCL_SECRET and no
    # permission: every rank refuses, saying how and naming the rank.
    reports = ranks.run("torch_store_secret", 3, env={"MCL_SECRET": ""},
                        args={"other_host": 1})
    for rank, report in enumerate(reports):
        assert report["error"] and "PermissionError" in report["error"], report
        assert "set MCL_SECRET" in report["error"], report
        assert "allow_secret_in_store" in report["error"], report
        assert "rank 1 not on rank 0's host" in report["error"], report
    assert reports[0]["stored"].startswith("mcl-refused:"), reports[0]

    # Declared private: the id as it is.
    reports = ranks.run("torch_store_secret", 2, env={"MCL_SECRET": ""},
                        args={"allow": True, "other_host": 1})
    for report in reports:
        assert report["error"] is None, report
    assert reports[0]["stored"].startswith("mcl1:"), reports[0]


def test_a_rank_that_cannot_read_the_one_host_secret_fails_every_rank(ranks):
    # One host, but rank 2 looks for the file in a private directory of its
    # own (another XDG_RUNTIME_DIR): no rank waits for the rendezvous.
    reports = ranks.run("torch_store_secret", 3, env={"MCL_SECRET": ""},
                        args={"own_directory": 2})
    for report in reports:
        assert report["error"] and "PermissionError" in report["error"], report
        assert "MCL_SECRET" in report["error"], report
    assert "rank 2: cannot read" in reports[0]["error"], reports[0]
    assert "rank 2: cannot read" in reports[1]["error"], reports[1]
