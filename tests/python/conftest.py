"""Fixtures for the mcl Python tests. Every multi-rank test runs real
processes (launcher.py); `ranks` runs them in the test's own temporary
directory, where their reports and output stay for a failure's post
mortem."""

import itertools

import pytest

import launcher

_runs = itertools.count()


class Ranks:
    """launcher.py's entry points, with a fresh work directory per run."""

    def __init__(self, tmp_path):
        self._tmp_path = tmp_path

    def workdir(self):
        return self._tmp_path / f"run{next(_runs)}"

    def run(self, scenario, nranks, **kwargs):
        """Every rank's report; fails unless every rank succeeded."""
        return launcher.run_ranks(self.workdir(), scenario, nranks, **kwargs)

    def start(self, scenario, nranks, **kwargs):
        """A started launcher.RankGroup, to signal or collect."""
        return launcher.start_ranks(self.workdir(), scenario, nranks,
                                    **kwargs)


@pytest.fixture
def ranks(tmp_path):
    return Ranks(tmp_path)
