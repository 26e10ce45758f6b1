"""The PyTorch c10d backend "mcl" (mcl/torch.py), with real processes:
every torch.distributed operation on 2 and 3 ranks, and the same small
model trained under DistributedDataParallel over "mcl" and over "gloo"
from one seed, which must end with the same weights. Skipped, saying so,
where PyTorch is not installed."""

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed (Debian: python3-torch): the "
    "mcl backend for torch.distributed is not tested")


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
        "broadcast_object_list", "all_reduce bfloat16",
        "tag refused naming it", "band refused naming it"}
    at_root = {"reduce", "gather"}
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


def test_a_stalled_peer_fails_the_call_naming_it(ranks):
    report = ranks.run("torch_stalled_peer", 2)[0]
    assert report["error"] is not None, report
    assert "rank 1" in report["error"], report
    assert report["seconds"] < 3 + 2, report
