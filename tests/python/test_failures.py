"""Failures must raise, never hang: a peer that dies (its exit or SIGKILL),
a peer that never calls (timeout), abort() from another thread, Ctrl-C
(SIGINT) in a blocking call or in init, and init waiting for a rank that
never comes. A program with a SIGINT handler of its own keeps its
communicator."""

import signal
import time

import pytest

from rank_helpers import wait_for_file

# Short, so that a failure detected only by the timeout still fails fast;
# a dead peer must be reported well within it.
MCL_TIMEOUT = 10
SLACK = 5


@pytest.mark.parametrize("how", ["exit", "sigkill", "sigkill_mid_call"])
@pytest.mark.parametrize("nranks", [2, 3])
def test_a_dead_peer_makes_the_others_raise(ranks, nranks, how):
    _check_dead_peer(ranks, nranks, how, {})


def test_a_dead_peer_over_tcp_makes_the_other_raise(ranks):
    _check_dead_peer(ranks, 2, "sigkill_mid_call", {"MCL_TRANSPORT": "tcp"})


def _check_dead_peer(ranks, nranks, how, env):
    victim = nranks - 1
    outcomes = ranks.start(
        "peer_dies", nranks, args={"victim": victim, "how": how},
        env=dict(env, MCL_TIMEOUT=str(MCL_TIMEOUT))).collect(timeout=60)
    dead = outcomes[victim]
    assert dead.returncode == (17 if how == "exit" else -signal.SIGKILL), \
        dead.describe()
    assert dead.report is None, "the victim finished its loop alive"
    for survivor in outcomes[:victim]:
        assert survivor.returncode == 0 and survivor.report, \
            survivor.describe()
        report = survivor.report
        error = report["error"]
        assert error is not None and error["is_mcl_error"], survivor.describe()
        assert report["elapsed"] < MCL_TIMEOUT + SLACK, survivor.describe()
        if nranks == 2:  # with more, a survivor may blame another survivor
            assert f"rank {victim}" in error["message"], error
        # The error sticks: reported, and raised by the next call.
        assert report["async_error"] == error["class"], report
        assert not report["next_call"]["ok"]
        assert report["next_call"]["error"]["is_mcl_error"]
        assert report["closed_after_abort"] is True


def test_a_peer_that_never_calls_times_out(ranks):
    timeout = 3
    reports = ranks.run("peer_never_calls", 2, args={"timeout": timeout},
                        timeout=60)
    report = reports[0]
    error = report["error"]
    assert error["class"] == "TimeoutError", report
    assert "TimeoutError" in error["classes"][1:], "not a builtins one"
    assert error["code"] == 8
    assert "rank 1" in error["message"], error
    assert timeout - 0.5 <= report["elapsed"] < timeout + SLACK, report
    assert report["async_error"] == "TimeoutError"
    assert not report["next_call"]["ok"]
    assert reports[1] == {"stood_by": True}


@pytest.mark.parametrize("wait", ["blocking", "work"])
def test_abort_from_another_thread_ends_a_wait(ranks, wait):
    report = ranks.run("abort_from_thread", 2, args={"wait": wait})[0]
    error = report["error"]
    assert error is not None and error["is_mcl_error"], report
    # Aborted after 1 s, and the wait ended then, not at the communicator's
    # timeout (60 s).
    assert 0.9 <= report["elapsed"], report
    assert 0 <= report["after_abort"] < SLACK, report
    assert report["closed"] is True
    assert not report["next_call"]["ok"]
    assert report["next_call"]["error"]["is_mcl_error"], report


@pytest.mark.parametrize("wait", ["blocking", "work"])
def test_ctrl_c_interrupts_a_blocking_call(ranks, wait):
    timeout = 60  # far above what the interrupt may take
    group = ranks.start("interrupted", 2,
                        args={"wait": wait, "timeout": timeout})
    try:
        assert wait_for_file(f"{group.workdir}/blocked", timeout=60)
        time.sleep(2.0)  # well inside the all-reduce by now
        sent = time.monotonic()
        group.signal(0, signal.SIGINT)
        code = group.wait_for(0, timeout=timeout)
        took = time.monotonic() - sent
    finally:
        outcomes = group.collect(timeout=90)
    rank0 = outcomes[0]
    assert code is not None, rank0.describe()
    assert took < 15, f"exited {took:.1f} s after SIGINT"  # timeout: 60
    # An uncaught KeyboardInterrupt: the traceback, and death by SIGINT.
    assert code == -signal.SIGINT, rank0.describe()
    assert "KeyboardInterrupt" in rank0.stderr, rank0.describe()
    report = rank0.report
    assert report["interrupted"] is True, rank0.describe()
    assert report["closed"] is True, "Ctrl-C did not abort the communicator"
    assert not report["next_call"]["ok"]
    assert report["next_call"]["error"]["is_mcl_error"], report
    assert outcomes[1].returncode == 0, outcomes[1].describe()


def test_init_without_the_other_ranks_times_out(ranks):
    report, = ranks.run("lonely_init", 1, args={"timeout": 2})
    error = report["error"]
    assert error is not None and error["class"] == "TimeoutError", report
    assert 1.5 <= report["elapsed"] < 2 + SLACK, report


def _interrupt_lone_rank(ranks, scenario, settle, **kwargs):
    """Starts a one-rank scenario, sends SIGINT `settle` seconds after it
    wrote "blocked", and checks it died of it promptly, with
    KeyboardInterrupt. Returns its outcome."""
    group = ranks.start(scenario, 1, **kwargs)
    try:
        assert wait_for_file(f"{group.workdir}/blocked", timeout=60)
        time.sleep(settle)
        sent = time.monotonic()
        group.signal(0, signal.SIGINT)
        code = group.wait_for(0, timeout=60)
        took = time.monotonic() - sent
    finally:
        outcome, = group.collect(timeout=90)
    assert code == -signal.SIGINT, outcome.describe()
    assert took < 15, f"exited {took:.1f} s after SIGINT"  # timeout: 60
    assert "KeyboardInterrupt" in outcome.stderr, outcome.describe()
    return outcome


def test_ctrl_c_interrupts_init(ranks):
    # 2 s: well inside init by then.
    outcome = _interrupt_lone_rank(ranks, "lonely_init", 2.0,
                                   args={"timeout": 60})
    assert outcome.report["interrupted"] is True


def test_ctrl_c_still_interrupts_system_calls_after_mcl_ran(ranks):
    """mcl's SIGINT handler must keep Python's flags: without SA_RESTART a
    blocked read returns EINTR and Python raises KeyboardInterrupt."""
    _interrupt_lone_rank(ranks, "read_after_a_call", 0.5)


def test_ctrl_c_with_a_handler_of_its_own_keeps_the_communicator(ranks):
    group = ranks.start("sigint_with_own_handler", 2)
    try:
        assert wait_for_file(f"{group.workdir}/blocked", timeout=60)
        time.sleep(2.0)  # well inside the all-reduce by now
        group.signal(0, signal.SIGINT)
        time.sleep(1.0)  # time to (wrongly) abort, if it were to
        open(f"{group.workdir}/go", "w").close()
    finally:
        outcomes = group.collect(timeout=90)
    for outcome in outcomes:
        assert outcome.returncode == 0, outcome.describe()
        report = outcome.report
        assert report["right"] and report["closed"] is False, report
        assert report["still_works"] is None, report
    assert outcomes[0].report["handler_calls"] == 1
