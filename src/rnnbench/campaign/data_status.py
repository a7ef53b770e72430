"""Why a table has no evidence: its experiments' data files are absent from the data folder
(``RNNBENCH_DATA``): "data missing", or it has not been run: "not run". The claims ledger, the
report and the command line ask it of every table without a results/<table>.csv."""
from __future__ import annotations

from rnnbench.campaign.definitions import experiments_of
from rnnbench.compose import compose_config
from rnnbench.errors import RnnbenchError
from rnnbench.results import verdicts
from rnnbench.results.identity import data_inputs


def status_of_table(table: str) -> str:
    """Why ``table`` has no evidence: its data is absent here, or it has not been run."""
    for experiment in experiments_of(table):
        try:
            inputs, _ = data_inputs(compose_config([f"experiment={experiment}"]))
        except RnnbenchError:
            continue
        if any(not p.exists() for name, p in inputs.items() if name != "embedding"):
            return verdicts.DATA_MISSING
    return verdicts.NOT_RUN
