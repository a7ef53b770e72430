"""The regime ladder's rungs: its tables, seeds and rungs, what each rung adds (its overrides on an
experiment's composed config), rung 2's choice of dropout, and rung 4's data setting.

Shared by the climb (``campaign.ladder``) and the Markdown rendered from its evidence
(``campaign.ladder_page``). Loading this module loads neither torch nor the experiment configs'
reader (``definitions``, imported where rung 4 is read), so the command's ``--help`` stays cheap.
"""
from __future__ import annotations

from dataclasses import dataclass

from rnnbench.campaign import protocol
from rnnbench.campaign.dropout import dropout_overrides, setting
from rnnbench.results.patience import DID_NOT_TRAIN, NEEDS_RERUN
from rnnbench.results.tables import registry_key

# The complete-data tables, cheapest first: the order they run in and are shown (each registry file's
# `regime_ladder`).
TABLES = tuple(t for t, _ in sorted(registry_key("regime_ladder").items(), key=lambda item: int(item[1])))
SEEDS = (1, 2)  # the protocol's selection seeds: every table has both at rung 0
RUNGS = (0, 1, 2, 3, 4)
DEFAULT_RUNGS = (0, 1, 2, 3)
DROPOUTS = (0.2, 0.5)
CHAR_COST = 1.3  # a run with the character BiGRU, priced from rung 0's runs
SMOKE = "smoke"  # the status of a run scored on part of its test split: no result, never averaged
NOT_AVERAGED = (DID_NOT_TRAIN, NEEDS_RERUN, SMOKE)  # as a paper table leaves them out of its means, counted beside them

RUNG_TEXT = {
    0: "today's setting (the table's committed runs)",
    1: "+ trained word vectors",
    2: "+ dropout",
    3: "+ the character BiGRU",
    4: "+ the paper's data setting",
}

NO_DATA_OPTION = "no option gives another data setting: the training data are already the paper's"


@dataclass(frozen=True)
class PaperData:
    """Rung 4 of an experiment: the overrides that give the paper's data setting, and its price
    (the experiment config's ``table.paper_data``)."""

    overrides: tuple[str, ...]
    what: str
    cost: float  # the rung's training work per epoch over rung 3's (tokens, or pairs), measured on the data
    needs: str = ""  # a file under the data folder the rung reads (said in the plan where it is absent)


def paper_data_of(experiment: str) -> PaperData | None:
    """Rung 4 of an experiment: its config's ``table.paper_data`` (read from its file and its parents'), or None."""
    from rnnbench.campaign import definitions  # the configs' reader, which loads torch: only where rung 4 is read

    spec = definitions.table_key(experiment, "paper_data")
    if not spec:
        return None
    return PaperData(tuple(str(o) for o in spec.get("overrides") or ()), str(spec.get("what", "")), float(spec.get("work", 1.0)),
                     str(spec.get("needs") or ""))


def rung_overrides(cfg, rung: int, p: float | None, data: PaperData | None) -> list[str]:
    """The overrides of ``rung`` on the experiment's composed config: each rung adds to the one below."""
    out = []
    if rung >= 1:
        out.append(setting(cfg, "embedding.freeze", "false"))
    if rung >= 2:
        out += dropout_overrides(cfg, p)
    if rung >= 3:
        out.append(setting(cfg, "embedding.char.kind", "bigru"))
    if rung >= 4:
        out += list(data.overrides)
    return out


def choose_dropout(dev_by_p: dict[float, list[float]]) -> float:
    """The p with the best mean dev score; a tie goes to the smaller p (the smaller change)."""
    return protocol.choose_lr({p: dev_by_p[p] for p in sorted(dev_by_p)})


def chosen_dropout(rows: list[dict], target_key: tuple[str, str, str]) -> float | None:
    """Rung 2's choice for (table, reference, experiment), from its runs' dev scores on the select
    metric (rows of the ladder's CSV); None until every p has a run on each seed."""
    dev: dict[float, list[float]] = {p: [] for p in DROPOUTS}
    for r in rows:
        if (r["table"], r["reference"], r["experiment"]) == target_key and r["rung"] == "2" and r["metric"] == r["select_metric"]:
            dev.setdefault(float(r["dropout"]), []).append(float(r["dev"]))
    if any(len(values) < len(SEEDS) for values in dev.values()):
        return None
    return choose_dropout(dev)


def sort_key(row: dict) -> tuple:
    """The order of the ladder's rows, in its CSV and its Markdown: the tables' order, then rung, p, seed, column."""
    table = TABLES.index(row["table"]) if row["table"] in TABLES else len(TABLES)
    return (table, row["table"], row["reference"], row["experiment"], int(row["rung"]), row["dropout"], int(row["seed"]), row["column"])
