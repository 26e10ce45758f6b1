"""Joining a communicator (every form of the unique id, init_from_env,
init's config and refusals), what a communicator tells about itself, async
Work, split, the context manager and use after close."""

import pytest


@pytest.mark.parametrize("id_form", ["string", "object", "pickle", "env"])
def test_ranks_join_with_each_form_of_the_id(ranks, id_form):
    reports = ranks.run("basic", 2, id_form=id_form)
    for rank, report in enumerate(reports):
        assert (report["rank"], report["size"]) == (rank, 2)
        assert report["sum"] == [1, 2]
        assert report["repr"] == f"<mcl.Communicator rank {rank} of 2>"
        assert report["closed"] is False
        assert report["closed_after_close"] is True


def test_init_config_and_inspection(ranks):
    config = {"timeout": 20, "transport": "shm", "name": "pytest",
              "algorithms": "allreduce:ring"}
    reports = ranks.run("basic", 3, args={"config": config})
    for rank, report in enumerate(reports):
        assert report["sum"] == [3, 3]
        assert isinstance(report["topology"], dict) and report["topology"]
        for collective, name in report["algorithms"].items():
            assert isinstance(name, str) and name, collective
        assert report["algorithms"]["all_reduce"] == "ring"
        assert report["async_error"] == "None"


def test_init_refuses_bad_arguments(ranks):
    report, = ranks.run("init_refusals", 1)
    words = {"rank == size": "rank", "rank -1": "rank", "size 0": "",
             "timeout 0": "timeout", "timeout -5": "timeout",
             "transport bogus": "bogus", "unique id garbage": ""}
    for case, word in words.items():
        outcome = report[case]
        assert not outcome["ok"], f"{case} was accepted"
        assert outcome["error"]["class"] == "InvalidArgumentError", outcome
        assert word in outcome["error"]["text"], outcome
    assert report["world_of_one"]["checks"] == ["world of one"]
    assert not report["world_of_one"]["failures"]


@pytest.mark.parametrize("nranks", [2, 3])
def test_async_work(ranks, nranks):
    for rank, report in enumerate(ranks.run("async_work", nranks)):
        assert len(report["checks"]) == 6
        assert not report["failures"], f"rank {rank}: {report['failures']}"


@pytest.mark.parametrize("nranks", [3, 4])
def test_split(ranks, nranks):
    for rank, report in enumerate(ranks.run("split", nranks)):
        assert len(report["checks"]) == 3
        assert not report["failures"], f"rank {rank}: {report['failures']}"


def _refused_as_closed(outcome):
    return not outcome["ok"] and \
        outcome["error"]["class"] == "InvalidUsageError"


def test_context_manager_and_use_after_close(ranks):
    for rank, report in enumerate(ranks.run("lifetime", 2)):
        assert report["closed inside with"] is False
        for key in ("works inside with", "works inside closing",
                    "parent works"):
            assert report[key] is None, f"rank {rank}: {key}: {report[key]}"
        assert report["exception kept"] == "boom"
        for key in ("after with closing", "after with failing",
                    "after with parent"):
            after = report[key]
            assert after["closed"] is True, (rank, key)
            assert after["repr"] == "<mcl.Communicator closed>"
            for call in ("all_reduce", "barrier", "send"):
                assert _refused_as_closed(after[call]), (rank, key, after)
            assert after["close again"]["ok"], (rank, key, after)


def test_refusal_carries_code_and_message(ranks):
    for report in ranks.run("error_attributes", 2):
        error = report["error"]
        assert error["class"] == "InvalidArgumentError"
        assert (error["code"], error["code_name"]) == (4, "mclInvalidArgument")
        assert report["is_value_error"]
        assert "foo" in error["message"]
        assert error["text"] == f"mclInvalidArgument: {error['message']}"
