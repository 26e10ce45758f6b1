"""One rank of a test: runs a named scenario and writes its report (a JSON
object) to a file.

    rank_main.py SCENARIO REPORT_PATH ARGS_JSON

launcher.py sets MCL_RANK, MCL_WORLD_SIZE and the unique ids in the
environment. A scenario that raises exits non-zero with the traceback on
stderr, and writes no report (unless it reported before raising).
"""

import json
import os
import pickle
import sys

import mcl

import scenario_collectives
import scenario_failures
import scenario_inputs
import scenario_lifetime

SCENARIOS = {}
for _module in (scenario_collectives, scenario_failures, scenario_inputs,
                scenario_lifetime):
    SCENARIOS.update(_module.SCENARIOS)


class RankContext:
    """What a scenario gets: its rank, the world size, its arguments, a
    directory shared by the ranks, and init() to join a communicator."""

    def __init__(self, report_path, args):
        self.rank = int(os.environ["MCL_RANK"])
        self.size = int(os.environ["MCL_WORLD_SIZE"])
        self.args = args
        self.workdir = args["workdir"]
        self._report_path = report_path
        self._ids = json.loads(os.environ["MCLTEST_UNIQUE_IDS"])
        self._id_form = os.environ["MCLTEST_ID_FORM"]

    def init(self, index=0, **config):
        """Joins communicator number `index` of the run, handed over as the
        launcher's id form says; `config` goes to mcl.init."""
        text = self._ids[index]
        form = self._id_form if index == 0 else "string"
        if form == "env":
            return mcl.init_from_env(**config)
        if form == "pickle":
            unique_id = pickle.loads(
                bytes.fromhex(os.environ["MCLTEST_PICKLED_ID"]))
            assert isinstance(unique_id, mcl.UniqueId)
        elif form == "object":
            unique_id = mcl.UniqueId.from_string(text)
        else:
            unique_id = text
        return mcl.init(self.rank, self.size, unique_id, **config)

    def unique_id_text(self, index=0):
        """The string of the run's unique id number `index`."""
        return self._ids[index]

    def path(self, name):
        return os.path.join(self.workdir, name)

    def report(self, report):
        """Writes the report now (atomically: a reader never sees half)."""
        tmp = self._report_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(report, f)
        os.replace(tmp, self._report_path)


def main():
    scenario, report_path, args = sys.argv[1], sys.argv[2], sys.argv[3]
    if scenario.startswith("torch_"):
        # PyTorch takes a second or two to import: only its ranks load it.
        import scenario_torch
        import scenario_torch_device
        import scenario_torch_p2p
        SCENARIOS.update(scenario_torch.SCENARIOS)
        SCENARIOS.update(scenario_torch_device.SCENARIOS)
        SCENARIOS.update(scenario_torch_p2p.SCENARIOS)
    ctx = RankContext(report_path, json.loads(args))
    report = SCENARIOS[scenario](ctx)
    if report is not None:
        ctx.report(report)


if __name__ == "__main__":
    main()
