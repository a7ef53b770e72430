"""The papers' claims (registry data) tested against our evidence.

A claim in ``paper_numbers/<table>.yaml`` says that one row beats another on one
column ("RCRN > 3L-BiLSTM on TREC accuracy"), or costs less (seconds per epoch),
or generalises better. ``evaluate`` pairs our reported runs of the two rows by
seed and gives the paired t interval of (better - worse) over seeds and, for
test metrics with per-item scores, the paired bootstrap over test items; the
verdict needs every interval to agree (see ``rnnbench.results.stats``).
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

import numpy as np

from rnnbench.results import evidence, stats
from rnnbench.results.tables import paper_table

QUANTITIES = {"test", "seconds_per_epoch", "inference_seconds_per_example", "parameters"}
TIMED = {"seconds_per_epoch", "inference_seconds_per_example"}  # compared only between runs timed alike
COST_METRICS = {"seconds", "parameters"}  # the metrics of a cost benchmark's rows (RCRN Table 10)


@dataclass
class ClaimResult:
    table: str
    claim: dict
    paper: tuple[float | None, float | None]  # the paper's numbers of (better, worse)
    ours: tuple[float | None, float | None]  # our means of (better, worse)
    seeds: list[int] = field(default_factory=list)  # paired seeds
    t: stats.Interval | None = None
    bootstrap: stats.Interval | None = None
    verdict: str = stats.NOT_RUN
    note: str = ""
    compared: tuple[str, str] | None = None  # the rows compared: the claim's, or those standing in for them
    counted: bool = False  # decided on parameter counts read off the rows' configs, without runs


def load_claims(table: str) -> list[dict]:
    claims = paper_table(table).get("claims") or []
    for claim in claims:
        missing = {"id", "text", "better", "worse", "column"} - set(claim)
        if missing:
            raise ValueError(f"paper_numbers/{table}.yaml: claim {claim.get('id', '?')!r} lacks {', '.join(sorted(missing))}")
        if claim.get("quantity", "test") not in QUANTITIES:
            raise ValueError(f"paper_numbers/{table}.yaml: claim {claim['id']!r}: quantity must be one of {sorted(QUANTITIES)}")
    return claims


def split_row(name: str) -> tuple[str, str]:
    """'bilstm/ap' -> ('bilstm', 'ap'); 'rcrn' -> ('rcrn', '')."""
    encoder, _, variant = name.partition("/")
    return encoder, variant


def _paper_value(table: dict, name: str, column: str) -> float | None:
    encoder, variant = split_row(name)
    for row in table["rows"]:
        if row.get("encoder") == encoder and (row.get("variant") or "") == variant:
            return (row.get("values") or {}).get(column)
    return None


def with_macro_average(rows: list[dict], column: str, claim: dict) -> tuple[list[dict], str]:
    """Rows plus, per model and seed, the mean test score over the datasets both of the claim's
    models have (a macro average, e.g. RCRN Table 1's over the Amazon domains), and a note
    with the sign test across those datasets (mean over seeds per dataset)."""
    def by_dataset(name: str) -> dict[str, dict[int, float]]:
        encoder, variant = split_row(name)
        out: dict[str, dict[int, float]] = {}
        for r in rows:
            if r["encoder"] == encoder and r["variant"] == variant and r.get("reported") == "yes":
                out.setdefault(r["dataset"], {})[r["seed"]] = r["test"]
        return out

    a, b = by_dataset(claim["better"]), by_dataset(claim["worse"])
    datasets = sorted(set(a) & set(b))
    if not datasets:
        return rows, ""
    extra = []
    for name, per in ((claim["better"], a), (claim["worse"], b)):
        encoder, variant = split_row(name)
        seeds = set.intersection(*(set(per[d]) for d in datasets))
        for seed in sorted(seeds):
            extra.append({"encoder": encoder, "variant": variant, "dataset": column, "reported": "yes", "seed": seed,
                          "model": name, "test": statistics.fmean(per[d][seed] for d in datasets)})
    wins, losses, p = stats.sign_test([statistics.fmean(a[d].values()) for d in datasets], [statistics.fmean(b[d].values()) for d in datasets])
    note = (f"macro average over the {len(datasets)} datasets run here ({', '.join(datasets)}); sign test across them: "
            f"{wins} wins, {losses} losses, p = {p:.3f}")
    return rows + extra, note


def paper_values(table: str, claim: dict) -> tuple[float | None, float | None]:
    """The paper's printed numbers of the claim's (better, worse) rows in its column."""
    registry = paper_table(table)
    return _paper_value(registry, claim["better"], claim["column"]), _paper_value(registry, claim["worse"], claim["column"])


def _reported(rows: list[dict], name: str, column: str) -> dict[int, dict]:
    encoder, variant = split_row(name)
    return {r["seed"]: r for r in rows
            if r["encoder"] == encoder and r["variant"] == variant and r["dataset"] == column and r.get("reported") == "yes"}


def _item_matrix(items: list[dict], model_rows: dict[int, dict], seeds: list[int], column: str) -> tuple[np.ndarray, list[str]] | None:
    if not seeds:
        return None
    any_row = next(iter(model_rows.values()))
    by_seed: dict[int, dict[str, float]] = {}
    for it in items:
        if it["dataset"] == column and it["model"] == any_row["model"] and it["variant"] == any_row["variant"] and it["seed"] in seeds:
            by_seed.setdefault(it["seed"], {})[it["item"]] = it["score"]
    if set(by_seed) != set(seeds):
        return None
    ids = sorted(set.intersection(*(set(v) for v in by_seed.values())))
    return np.array([[by_seed[s][i] for i in ids] for s in seeds]), ids


def evaluate(table: str, claim: dict, rows: list[dict], items: list[dict], confidence: float = 0.95,
             samples: int = 10000, counts: dict[str, tuple[int, str]] | None = None) -> ClaimResult:
    """``counts``: row -> (encoder parameters, experiment) read off the configs
    (``results/<table>.parameters.csv``), deciding a size claim whose rows lack runs."""
    column, quantity = claim["column"], claim.get("quantity", "test")
    lower = bool(claim.get("lower_is_better", False))
    paper = paper_values(table, claim)
    note = ""
    if column.lower().startswith("macro") and not any(r["dataset"] == column for r in rows):
        rows, note = with_macro_average(rows, column, claim)
        items = []  # the macro average is over datasets, not items: the seeds' interval and the sign test decide
    column = _column(rows, claim, column)
    better, worse = _reported(rows, claim["better"], column), _reported(rows, claim["worse"], column)
    if quantity == "parameters" and (not better or not worse):
        counted = _counted(table, claim, paper, counts or {})
        if counted is not None:
            return counted
    stand_in = _stand_in(table, rows, claim, column) if not better or not worse else None
    if stand_in:
        named, why = stand_in
        result = evaluate(table, {**claim, **named}, rows, items, confidence, samples, counts)
        result.claim, result.paper = claim, paper
        result.note = "; ".join(n for n in (why, result.note) if n)
        return result
    result = ClaimResult(table, claim, paper, (None, None), note=note, compared=(claim["better"], claim["worse"]))
    if not better or not worse:
        missing = [n for n, r in ((claim["better"], better), (claim["worse"], worse)) if not r]
        result.note = f"no reported runs of {', '.join(missing)}"
        return result
    value = (lambda r: r[quantity]) if quantity != "test" else (lambda r: r["test"])
    result.ours = (statistics.fmean(value(r) for r in better.values()), statistics.fmean(value(r) for r in worse.values()))
    seeds = sorted(set(better) & set(worse))
    result.seeds = seeds
    result.t = stats.paired_t_interval([value(better[s]) for s in seeds], [value(worse[s]) for s in seeds], confidence)
    if quantity == "test":
        a, b = _item_matrix(items, better, seeds, column), _item_matrix(items, worse, seeds, column)
        if a is not None and b is not None:
            common = sorted(set(a[1]) & set(b[1]))
            ia = [a[1].index(i) for i in common]
            ib = [b[1].index(i) for i in common]
            result.bootstrap = stats.paired_bootstrap(a[0][:, ia], b[0][:, ib], confidence, samples)
    if result.t is None:
        result.verdict = stats.INCONCLUSIVE
        result.note = "; ".join(n for n in (note, f"{len(seeds)} paired seed(s): no interval") if n)
        return result
    if quantity in TIMED and _timed_differently(result, [*(better[s] for s in seeds), *(worse[s] for s in seeds)]):
        return result
    if claim.get("relation") == "equal":
        result.verdict = equality_verdict(result.t, quantity)
        return result
    if claim.get("min_factor"):
        _judge_factor(result, [value(better[s]) for s in seeds], [value(worse[s]) for s in seeds], float(claim["min_factor"]), lower)
        return result
    result.verdict = stats.verdict([result.t, result.bootstrap], better_is_higher=not lower)
    if quantity == "test":
        _weigh_convergence(result, {claim["better"]: better, claim["worse"]: worse})
    return result


def _counted(table: str, claim: dict, paper, counts: dict[str, tuple[int, str]]) -> ClaimResult | None:
    """A claim on parameter counts whose rows lack runs, decided on the counts their experiment
    configs build (exact numbers: no interval, no seeds); None where a row has no count."""
    if claim["better"] not in counts or claim["worse"] not in counts:
        return None
    (b, b_exp), (w, w_exp) = counts[claim["better"]], counts[claim["worse"]]
    if claim.get("relation") == "equal":
        holds = b == w
    else:
        holds = b < w if claim.get("lower_is_better") else b > w
    return ClaimResult(table, claim, paper, (float(b), float(w)), verdict=stats.REPRODUCED if holds else stats.CONTRADICTED,
                       note=f"counted from the configs (experiment={b_exp}: {b:,}; experiment={w_exp}: {w:,}), without runs: "
                            "a count depends on neither the seed nor training",
                       compared=(claim["better"], claim["worse"]), counted=True)


def _judge_factor(result: ClaimResult, better: list[float], worse: list[float], factor: float, lower: bool) -> None:
    """A claim of size ("dramatically faster", min_factor 2): the better row must beat the worse
    by at least that factor, not merely in direction. The t interval over seeds of the log ratio
    (worse / better where lower is better) decides: above log(factor) reproduced, below it
    contradicted, across it inconclusive."""
    ratios = [w / b if lower else b / w for b, w in zip(better, worse)]
    logs = stats.paired_t_interval([math.log(r) for r in ratios], [math.log(factor)] * len(ratios))
    result.verdict = stats.verdict([logs])
    mean, low, high = (math.exp(math.log(factor) + v) for v in (logs.mean, logs.low, logs.high))
    said = f"{result.claim['better']} is {mean:.2f}x as {'fast' if lower else 'good'} [{low:.2f}, {high:.2f}] over {len(ratios)} paired seeds; the claim needs {factor:g}x"
    result.note = "; ".join(n for n in (result.note, said) if n)


def _timed_differently(result: ClaimResult, runs: list[dict]) -> bool:
    """Times compare only runs timed alike: on one kind of device and processor, with one thread
    count. A time claim whose paired runs differ in any of these is inconclusive, and says how."""
    conditions = {(r.get("device", ""), r.get("hardware", ""), str(r.get("threads", ""))) for r in runs}
    described = "; ".join(f"{d or '?'} {h or '?'}, {t or 'default'} thread(s)" for d, h, t in sorted(conditions))
    if len(conditions) < 2:  # the verdict holds for this hardware: say which (the paper's is its own)
        result.note = "; ".join(n for n in (result.note, f"timed here on {described}") if n)
        return False
    result.verdict = stats.INCONCLUSIVE
    result.note = "; ".join(n for n in (result.note, f"timed under different conditions ({described}): the times do not compare") if n)
    return True


def _unconverged_seeds(runs: dict[int, dict], seeds: list[int]) -> list[int]:
    return [s for s in seeds if runs[s].get("selected_epoch") not in (None, "") and evidence.not_converged(runs[s])]


def _weigh_convergence(result: ClaimResult, runs: dict[str, dict[int, dict]]) -> None:
    """A verdict against a row whose runs stopped at the epoch cap (their best dev epoch at the
    cap: they may still have been improving) is not a finding about that model: it becomes
    inconclusive, and says why. Runs at the cap on the winning side only get a note."""
    loser = {stats.CONTRADICTED: result.claim["better"], stats.REPRODUCED: result.claim["worse"]}.get(result.verdict)
    notes = []
    for name, by_seed in runs.items():
        capped = _unconverged_seeds(by_seed, result.seeds)
        if not capped:
            continue
        seeds = ", ".join(map(str, capped))
        if name == loser:
            result.verdict = stats.INCONCLUSIVE
            notes.append(f"the intervals favour the other row, but {name} stopped at the epoch cap in seed(s) {seeds} "
                         f"(not converged): a longer cap could change it")
        else:
            notes.append(f"{name} stopped at the epoch cap in seed(s) {seeds} (not converged)")
    result.note = "; ".join(n for n in (result.note, *notes) if n)


def _column(rows: list[dict], claim: dict, column: str) -> str:
    """The column whose rows the claim compares: its own, or for a cost claim in a table of training
    runs (not a cost benchmark) a column both rows were scored in, each run's cost being the same in all."""
    if claim.get("quantity", "test") != "test" and not any(r["dataset"] == column or r.get("metric") in COST_METRICS for r in rows):
        return _cost_column(rows, claim)
    return column


def _cost_column(rows: list[dict], claim: dict) -> str:
    """For a cost claim whose column is not one of ours (DCU Table 1's minutes per epoch): a
    table column both rows were scored in, whose rows carry each run's training cost."""
    def columns(name: str) -> set[str]:
        encoder, variant = split_row(name)
        return {r["dataset"] for r in rows if r["encoder"] == encoder and (not variant or r["variant"] == variant)}
    rescored = {r["dataset"] for r in rows if evidence.rescored(r)}  # their time is not the run's: own columns first
    common = sorted(columns(claim["better"]) & columns(claim["worse"]), key=lambda c: (c in rescored, c))
    return common[0] if common else claim["column"]


def _stand_in(table: str, rows: list[dict], claim: dict, column: str) -> tuple[dict, str] | None:
    """Our rows to test a claim on when its own rows have no runs here, and the note that says so:
    the rows the registry declares under ``stand_ins`` (LSTM-baseline Table 1: the paper's hidden-800
    rows by the same tricks at hidden 170), else our one variant of both rows (``_stand_in_variant``)."""
    declared = paper_table(table).get("stand_ins") or {}
    named = {side: declared.get("rows", {}).get(claim[side], claim[side]) if not _reported(rows, claim[side], column) else claim[side]
             for side in ("better", "worse")}
    named_column = _column(rows, {**claim, **named}, claim["column"])
    if named != {side: claim[side] for side in named} and all(_reported(rows, named[side], named_column) for side in named):
        swapped = ", ".join(f"{named[side]} for {claim[side]}" for side in named if named[side] != claim[side])
        return named, f"on our rows standing in for the paper's ({swapped}: {declared['why']})"
    variant = _stand_in_variant(rows, claim, column)
    if variant:
        return ({"better": f"{claim['better']}/{variant}", "worse": f"{claim['worse']}/{variant}"},
                f"on our variant '{variant}' (the paper's own rows were not run)")
    return None


def _stand_in_variant(rows: list[dict], claim: dict, column: str) -> str | None:
    """Our one variant (e.g. DCU Table 1's CPU-sized "small") with reported runs of both of the
    claim's rows in its column, when the claim names the paper's own rows and those have none."""
    (b_enc, b_var), (w_enc, w_var) = split_row(claim["better"]), split_row(claim["worse"])
    if b_var or w_var:
        return None
    def variants(encoder: str) -> set[str]:
        return {r["variant"] for r in rows if r["encoder"] == encoder and r["dataset"] == column and r.get("reported") == "yes" and r["variant"]}
    common = variants(b_enc) & variants(w_enc)
    return next(iter(common)) if len(common) == 1 else None


def equality_verdict(t: stats.Interval, quantity: str) -> str:
    """A claim that two rows are equal. Parameter counts are exact: equal or not. For a measured
    quantity an interval that contains 0 cannot prove equality: inconclusive; one that excludes 0
    contradicts it."""
    if quantity == "parameters":
        return stats.REPRODUCED if t.low == t.high == 0 else stats.CONTRADICTED
    return stats.CONTRADICTED if t.excludes_zero() else stats.INCONCLUSIVE
