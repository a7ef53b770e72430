"""A paper table's experiment configs (conf/experiment/), their sweeps, and the encoder size of
each row they fill, read off the configs without runs.

A claim about model size ("the Bi-2-LSTM has the same number of parameters as the Large
2-LSTM") needs no training: the count depends on neither the seed nor the data.
``make_table`` commits the counts beside the runs of a table with such a claim
(``results/<table>.parameters.csv``: ``claimed_parameter_counts``), and the claims ledger
decides the claim on them when a row has no runs.
"""
from __future__ import annotations

from hydra.errors import HydraException

from rnnbench.campaign.definitions import experiments_of
from rnnbench.compose import compose_config
from rnnbench.errors import RnnbenchError
from rnnbench.results.claims import load_claims
from rnnbench.results.tables import REGISTRY
from rnnbench.training.model import encoder_parameters


def sweep_of(experiment: str, extra: list[str] = ()) -> list[str]:
    """The encoders of an experiment's sweep (its ``hydra.sweeper.params.encoder``)."""
    cfg = compose_config([f"experiment={experiment}", *extra], return_hydra_config=True)
    return str(cfg.hydra.sweeper.params.encoder).split(",")


def row_name(cfg) -> str:
    """The table row a run of ``cfg`` fills: the encoder, with the table's variant if any."""
    variant = cfg.get("table", {}).get("variant")
    return f"{cfg.encoder.name}/{variant}" if variant else str(cfg.encoder.name)


def parameter_counts(table: str) -> dict[str, tuple[int, str]]:
    """Row name -> (encoder parameters, the experiment it was counted from), for every row of
    ``table`` whose experiment config builds an encoder without data."""
    counts: dict[str, tuple[int, str]] = {}
    ambiguous: set[str] = set()
    for experiment in experiments_of(table):
        for encoder in sweep_of(experiment):
            try:
                cfg = compose_config([f"experiment={experiment}", f"encoder={encoder}"])
                row, count = row_name(cfg), encoder_parameters(cfg)
            except (RnnbenchError, HydraException, TypeError, ValueError):
                continue  # an encoder not built yet, or a head that needs the data to size it: no count from the config
            if row in counts and counts[row][0] != count:
                ambiguous.add(row)  # two experiments fill the row with different sizes: no one count is the row's
            counts.setdefault(row, (count, experiment))
    return {row: c for row, c in counts.items() if row not in ambiguous}


def claimed_parameter_counts(table: str) -> dict[str, tuple[int, str]]:
    """``parameter_counts`` of a table one of whose claims is on parameter counts (the evidence the
    ledger decides it on without runs); {} for any other table, which keeps no counts file."""
    if not (REGISTRY / f"{table}.yaml").exists():  # a table no paper printed: no claims
        return {}
    if not any(claim.get("quantity") == "parameters" for claim in load_claims(table)):
        return {}
    return parameter_counts(table)
