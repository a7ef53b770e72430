"""A table's deviations from the paper's setting, found from the configs its rows were composed
with: each row's resolved config held against the paper's settings (``results.deviations``, which
holds the settings, the comparison and the section's text)."""
from __future__ import annotations

import functools

from rnnbench.campaign import definitions
from rnnbench.compose import compose_config
from rnnbench.results.deviations import differences, has_settings
from rnnbench.results.tables import column_metrics


@functools.lru_cache(maxsize=512)
def _compose(experiment: str, encoder: str | None, overrides: tuple[str, ...]):
    """An experiment's config with one encoder of its sweep (as the table writer composes a run's), or
    without one."""
    if encoder is None:
        return compose_config([f"experiment={experiment}", *overrides])
    return compose_config([f"experiment={experiment}", f"encoder={encoder}", *overrides])


def table_configs(table: str, rows: list[dict] | None = None, overrides=()) -> list:
    """One resolved config per row of ``table`` and experiment that fills it: each experiment's
    encoders with a reported run among ``rows`` (the table's evidence rows), or, without rows,
    every encoder of the experiments the campaign runs (not those left out: ``table.not_run``).
    ``overrides``: the Hydra overrides the table's runs were composed with (``rnnbench table --set``)."""
    extra = tuple(overrides)
    reported = None
    if rows is not None:
        reported = {(r["encoder"], r.get("variant") or "", r["dataset"]) for r in rows if r.get("reported") == "yes"}
    configs = []
    for experiment in definitions.experiments_of(table):
        base = _compose(experiment, None, extra)
        sweep = definitions.sweep_of(experiment, list(extra))
        if reported is None:
            encoders = [] if base.table.not_run else sweep
        else:
            columns = {*column_metrics(base.table, base), *(base.table.evaluated_columns or {})}
            variant = base.table.variant or ""
            encoders = [e for e in sweep if any((e, variant, column) in reported for column in columns)]
        configs += [_compose(experiment, encoder, extra) for encoder in encoders]
    return configs


def lines(table: str, rows: list[dict] | None = None, overrides=()) -> list[str]:
    """The table's deviations as the lines it prints; [] for a table without a settings file or rows."""
    if not has_settings(table):
        return []
    configs = table_configs(table, rows, overrides)
    return [d.text for d in differences(table, configs)] if configs else []
