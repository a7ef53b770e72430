"""The papers' claims (registry data) tested against our evidence.

A claim in ``paper_numbers/<table>.yaml`` says that one row beats another on one column ("RCRN >
3L-BiLSTM on TREC accuracy"), costs less (seconds per epoch), is a stated factor faster
(``min_factor``), or is as large within a declared margin (``relation: equal``). ``evaluate``
pairs our reported runs of the two rows by seed and gathers the evidence its verdict needs: the
estimate of the effect over seeds and test items together (``stats.two_level_estimate``, the
items clustered by the table's ``item_unit``: ``clusters``), the same without the seeds that
chose the learning rate, the paired t over seeds as a cross-check, the guards
(``guards``), what the claim says (``verdicts.Hypothesis``), and the price of one more paired seed.
The verdict is decided with the paper's other claims (``verdicts.decide``); alone, ``evaluate``
decides a claim as a family of one.

The effect is the difference better - worse of the table's metric, or for time (and for a
claim of size) the log of the ratio better / worse, paired by seed: for the cost benchmark
(RCRN Table 10) the seed is the timing round, in which both rows were timed together.
Parameter counts are exact: counted, not tested.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from rnnbench.results import choices, clusters, evidence, gates, guards, settings, stats, timing, verdicts
from rnnbench.results.tables import paper_table

QUANTITIES = {"test", "seconds_per_epoch", "inference_seconds_per_example", "parameters"}
TIMED = {"seconds_per_epoch", "inference_seconds_per_example"}  # judged on ratios timed together
COST_METRICS = {"seconds", "parameters"}  # the metrics of a cost benchmark's rows (RCRN Table 10)


@dataclass
class ClaimResult:
    table: str
    claim: dict
    paper: tuple[float | None, float | None]  # the paper's numbers of (better, worse)
    ours: tuple[float | None, float | None]  # our means of (better, worse)
    seeds: list[int] = field(default_factory=list)  # paired seeds
    t: stats.Interval | None = None  # the paired t interval of the effect over seeds (95%): the cross-check
    estimate: stats.Estimate | None = None  # the effect over seeds and test items: what the verdict is decided on
    held_out: stats.Estimate | None = None  # the same on the seeds that did not choose the learning rate
    held_out_seeds: list[int] = field(default_factory=list)
    test: verdicts.Hypothesis | None = None  # what the claim says, on the effect
    guards: list[str] = field(default_factory=list)  # what withholds a decided verdict
    price: tuple[float, str] | None = None  # one more paired seed: (hours, "CPU h" or "GPU h")
    verdict: str = verdicts.NOT_RUN
    note: str = ""
    compared: tuple[str, str] | None = None  # the rows compared: the claim's, or those standing in for them
    counted: bool = False  # decided on exact parameter counts (no statistics)
    decision: verdicts.Decision | None = None  # set by verdicts.decide
    gate: gates.Gate | None = None  # a verdict the gates give in place of the statistics' (pipeline check, floor, mechanism)
    scope: gates.Scope | None = None  # an accuracy claim's verdict: about the paper, or in our setting (parity)
    choice: choices.Choice | None = None  # a choice the paper leaves open: the claim decided in each of its cells

    def label(self) -> str:
        """The verdict with what it is about: ``contradicted, in our setting (reference row ...)``;
        a gated verdict with its reason; any other verdict as it is."""
        if self.gate is not None and self.verdict == self.gate.kind:
            return self.gate.label()
        if self.scope is not None and self.verdict in verdicts.STATISTICAL:
            return f"{self.verdict}, {self.scope.label()}"
        return self.verdict


def load_claims(table: str) -> list[dict]:
    """The table's claims, checked: a malformed claim is one line naming its file and id."""
    registry = paper_table(table)
    where = f"paper_numbers/{table}.yaml"
    unit = registry.get("item_unit", clusters.ITEM)
    if unit not in clusters.known_units():
        raise ValueError(f"{where}: item_unit {unit!r} is not one of {', '.join(clusters.known_units())}")
    claims = registry.get("claims") or []
    gates.check_registry(registry, where)
    for claim in claims:
        check_claim(claim, where)
        for side in ("better", "worse"):
            _paper_row(registry, claim, side, where)  # raises where the claim's paper row is not one row
    choices.check_registry(registry, where, {c.get("id") for c in claims})
    settings.check_registry(registry, where)
    return claims


def check_claim(claim: dict, where: str = "claim") -> None:
    """A claim's fields: the required ones present, a known quantity, a margin for an equality
    (declared before any run is read), positive factors and margins."""
    missing = {"id", "text", "better", "worse", "column"} - set(claim)
    if missing:
        raise ValueError(f"{where}: claim {claim.get('id', '?')!r} lacks {', '.join(sorted(missing))}")
    name = f"{where}: claim {claim['id']!r}"
    if claim.get("quantity", "test") not in QUANTITIES:
        raise ValueError(f"{name}: quantity must be one of {sorted(QUANTITIES)}")
    if claim.get("relation") == "equal" and claim.get("margin") is None and claim.get("relative_margin") is None:
        raise ValueError(f"{name}: an equality claim declares its margin (margin: in the column's units, or "
                         "relative_margin: a fraction of the worse row's value) before any run is read")
    for key in ("min_factor", "relative_margin", "margin", "smallest_effect"):
        if key in claim and not (isinstance(claim[key], (int, float)) and claim[key] > 0):
            raise ValueError(f"{name}: {key} must be a positive number, got {claim[key]!r}")
    if claim.get("relative_margin", 0) >= 1:
        raise ValueError(f"{name}: relative_margin is a fraction below 1 (0.1: within 10%)")


def split_row(name: str) -> tuple[str, str]:
    """'bilstm/ap' -> ('bilstm', 'ap'); 'rcrn' -> ('rcrn', '')."""
    encoder, _, variant = name.partition("/")
    return encoder, variant


def _paper_row(registry: dict, claim: dict, side: str, where: str = "") -> dict | None:
    """The paper's row a claim's side names: the registry row its ``paper_rows`` names by model,
    else the one row of that encoder and variant that prints the claim's column (RCRN Table 10
    prints three pairs of rows of one encoder each: there, the claim must say which)."""
    named = (claim.get("paper_rows") or {}).get(side)
    if named is not None:
        for row in registry["rows"]:
            if row.get("model") == named:
                return row
        raise ValueError(f"{where}: claim {claim['id']!r}: paper_rows.{side} {named!r} is not a row's model")
    encoder, variant = split_row(claim[side])
    rows = [r for r in registry["rows"] if r.get("encoder") == encoder and (r.get("variant") or "") == variant]
    printing = [r for r in rows if (r.get("values") or {}).get(claim["column"]) is not None]
    if len(printing) > 1:
        raise ValueError(f"{where}: claim {claim['id']!r}: {len(printing)} rows of {claim[side]} print {claim['column']} "
                         f"({', '.join(r['model'] for r in printing)}): name the paper's row in paper_rows.{side}")
    return printing[0] if printing else (rows[0] if rows else None)


def with_macro_average(rows: list[dict], column: str, claim: dict) -> tuple[list[dict], str]:
    """Rows plus, per model and seed, the mean test score over the datasets both of the claim's
    models have (a macro average, e.g. RCRN Table 1's over the Amazon domains: ``macro_datasets``),
    and a note with the sign test across those datasets (mean over seeds per dataset). A seed's
    macro row is a selection run's where any of its datasets' runs chose the rate."""
    def by_dataset(name: str) -> dict[str, dict[int, dict]]:
        encoder, variant = split_row(name)
        out: dict[str, dict[int, dict]] = {}
        for r in rows:
            if r["encoder"] == encoder and r["variant"] == variant and r.get("reported") == "yes":
                out.setdefault(r["dataset"], {})[r["seed"]] = r
        return out

    a, b = by_dataset(claim["better"]), by_dataset(claim["worse"])
    datasets = sorted(macro_datasets(rows, claim))
    if not datasets:
        return rows, ""
    extra = []
    for name, per in ((claim["better"], a), (claim["worse"], b)):
        encoder, variant = split_row(name)
        seeds = set.intersection(*(set(per[d]) for d in datasets))
        for seed in sorted(seeds):
            phase = "select" if any(per[d][seed].get("phase") == "select" for d in datasets) else "final"
            extra.append({"encoder": encoder, "variant": variant, "dataset": column, "reported": "yes", "seed": seed,
                          "model": name, "phase": phase, "test": statistics.fmean(per[d][seed]["test"] for d in datasets)})
    mean = lambda per, d: statistics.fmean(r["test"] for r in per[d].values())  # noqa: E731
    wins, losses, p = stats.sign_test([mean(a, d) for d in datasets], [mean(b, d) for d in datasets])
    note = (f"macro average over the {len(datasets)} datasets run here ({', '.join(datasets)}); sign test across them: "
            f"{wins} wins, {losses} losses, p = {p:.3f}")
    return rows + extra, note


def is_macro_average(rows: list[dict], column: str) -> bool:
    """Whether a claim's column is a macro average we compute over its datasets (no run scores it directly)."""
    return column.lower().startswith("macro") and not any(r["dataset"] == column for r in rows)


def macro_datasets(rows: list[dict], claim: dict) -> set[str]:
    """The datasets a macro average is over (gates.macro_block: a dataset whose runs are under way
    waits outside it until its seeds catch up)."""
    return gates.macro_block(rows, [claim["better"], claim["worse"]])


def paper_values(table: str, claim: dict) -> tuple[float | None, float | None]:
    """The paper's printed numbers of the claim's (better, worse) rows in its column."""
    registry = paper_table(table)
    values = []
    for side in ("better", "worse"):
        row = _paper_row(registry, claim, side, f"paper_numbers/{table}.yaml")
        values.append(None if row is None else (row.get("values") or {}).get(claim["column"]))
    return values[0], values[1]


def reported_by_seed(rows: list[dict], name: str, column: str) -> dict[int, dict]:
    encoder, variant = split_row(name)
    return {r["seed"]: r for r in rows
            if r["encoder"] == encoder and r["variant"] == variant and r["dataset"] == column and r.get("reported") == "yes"}


def _item_scores(items: evidence.ItemScores, model_rows: dict[int, dict], seeds: list[int], column: str) -> dict[int, dict[str, float]] | None:
    """Seed -> item -> score of one row's runs, or None where a seed has none."""
    if not seeds:
        return None
    any_row = next(iter(model_rows.values()))
    scores = items.of(column, any_row["model"], any_row["variant"])
    by_seed = {s: scores[s] for s in seeds if s in scores}
    return by_seed if set(by_seed) == set(seeds) else None


def _two_level(table: str, items: list[dict] | evidence.ItemScores, better: dict, worse: dict, seeds: list[int],
               column: str) -> stats.Estimate | None:
    """The difference over seeds and test items (the items both rows scored in every seed, in
    clusters of the table's ``item_unit``); None without per-item scores of every seed."""
    items = evidence.grouped_items(items)
    a, b = _item_scores(items, better, seeds, column), _item_scores(items, worse, seeds, column)
    if a is None or b is None:
        return None
    ids = sorted(set.intersection(*(set(a[s]) for s in seeds), *(set(b[s]) for s in seeds)))
    if len(ids) < 2:
        return None
    unit = paper_table(table).get("item_unit", clusters.ITEM)
    return stats.two_level_estimate([[a[s][i] for i in ids] for s in seeds], [[b[s][i] for i in ids] for s in seeds],
                                    clusters.cluster_labels(unit, ids))


def _test(claim: dict, paper: tuple[float | None, float | None], quantity: str) -> verdicts.Hypothesis:
    """What the claim says, on its effect: a difference, or for time and size the log ratio."""
    direction = -1 if claim.get("lower_is_better") else 1
    ratio = quantity in TIMED or bool(claim.get("min_factor")) or claim.get("relative_margin") is not None
    pb, pw = paper
    if claim.get("smallest_effect") is not None:
        reference = float(claim["smallest_effect"])
        reference = math.log(1 + reference) if ratio else reference
    elif pb is None or pw is None:
        reference = None
    elif ratio:
        reference = direction * math.log(pb / pw) if pb > 0 and pw > 0 else None
    else:
        reference = direction * (pb - pw)
    if claim.get("relation") == "equal":
        m = claim.get("relative_margin")
        bounds = (math.log(1 - m), math.log(1 + m)) if m is not None else (-float(claim["margin"]), float(claim["margin"]))
        return verdicts.Hypothesis(verdicts.LOG_RATIO if m is not None else verdicts.DIFFERENCE, direction, bounds=bounds)
    threshold = math.log(float(claim["min_factor"])) if claim.get("min_factor") else 0.0
    return verdicts.Hypothesis(verdicts.LOG_RATIO if ratio else verdicts.DIFFERENCE, direction, threshold, reference)


def evaluate(table: str, claim: dict, rows: list[dict], items: list[dict] | evidence.ItemScores, confidence: float = 0.95,
             counts: dict[str, tuple[int, str]] | None = None, floors: dict | None = None) -> ClaimResult:
    """The claim's evidence, decided alone (a family of one; the ledger decides it again with
    the paper's other claims). ``counts``: row -> (encoder parameters, experiment) read off the
    configs (``results/<table>.parameters.csv``), deciding a size claim whose rows lack runs.
    ``floors``: the majority-class scores (``floors.read_floors``) the floor gate reads.
    ``confidence`` is the level of the paired t printed beside."""
    check_claim(claim, f"paper_numbers/{table}.yaml")
    # Grouped once per claim here (once per table where the caller passes them grouped: the ledger).
    items = evidence.grouped_items(items)
    result = _gated(table, claim, rows, items, confidence, counts, floors)
    registry = paper_table(table)
    open_choice = choices.declared(registry, claim["id"]) if not result.counted else None
    if open_choice is not None:
        result = _with_open_choice(table, registry, claim, open_choice, result, rows, items, confidence, counts, floors)
    elif settings.declared(registry) and not result.counted:
        result = _across_settings(table, registry, claim, result, rows, items, confidence, counts, floors)
    verdicts.decide([result])
    return result


def _gated(table: str, claim: dict, rows: list[dict], items: evidence.ItemScores, confidence: float,
           counts: dict | None, floors: dict | None) -> ClaimResult:
    result = _evaluate(table, claim, rows, items, confidence, counts)
    if result.seeds and not result.counted:
        result.gate, result.scope = gates.apply(table, paper_table(table), rows, claim, result.compared, floors)
    return result


def _with_open_choice(table: str, registry: dict, claim: dict, open_choice: dict, outside: ClaimResult, rows: list[dict],
                      items: evidence.ItemScores, confidence: float, counts: dict | None, floors: dict | None) -> ClaimResult:
    """The claim decided in each paper-consistent cell of its open choice (``choices``): the claim
    with the cell's rows (the same column, the paper's numbers of the claim's own rows), gated
    as any claim. The claim's own rows, where not a cell, are ``outside``: decided alone, shown beside."""
    cells = [(str(cell["value"]), _gated(table, _in_cell(table, registry, claim, cell["better"], cell["worse"]), rows, items,
                                          confidence, counts, floors)) for cell in open_choice["cells"]]
    own = (claim["better"], claim["worse"])
    is_cell = any((c["better"], c["worse"]) == own for c in open_choice["cells"])
    outside = None if is_cell or not outside.seeds else outside  # without paired runs it has nothing to show
    result = ClaimResult(table, claim, paper_values(table, claim), (None, None), compared=own)
    result.choice = choices.Choice(open_choice["option"], open_choice["why"], cells, outside)
    return result


def _in_cell(table: str, registry: dict, claim: dict, better: str, worse: str, others: dict[str, str] | None = None) -> dict:
    """The claim on other rows (an open choice's cell, a rung of the table's settings): the same
    column and the paper's numbers of the claim's own rows; ``cell_of`` maps the claim's rows (and
    ``others``: a rung's reference rows) to the cell's, so the parity gate reads the cell's reference row."""
    where = f"paper_numbers/{table}.yaml"
    named = {side: (_paper_row(registry, claim, side, where) or {}).get("model") for side in ("better", "worse")}
    paper_rows = {**{s: m for s, m in named.items() if m}, **(claim.get("paper_rows") or {})}
    return {**claim, "better": better, "worse": worse, "paper_rows": paper_rows,
            "cell_of": {**(others or {}), claim["better"]: better, claim["worse"]: worse}}


def _across_settings(table: str, registry: dict, claim: dict, own: ClaimResult, rows: list[dict],
                     items: evidence.ItemScores, confidence: float, counts: dict | None, floors: dict | None) -> ClaimResult:
    """The claim at each rung of the table's settings (``settings``): the claim with the rung's
    rows (the same column, the paper's numbers of the claim's own rows), gated as any claim. Where
    no rung above 0 has runs of the claim's rows, the claim is its rung-0 result, unchanged."""
    ran = {(r["encoder"], r.get("variant") or "") for r in rows}
    higher = [rung for rung in settings.rungs(registry) if rung
              and all(split_row(settings.row_at(claim[side], rung)) in ran for side in ("better", "worse"))]
    partial = {rung: covered for rung in higher if (covered := _macro_coverage(rows, claim, rung)) is not None}
    higher = [rung for rung in higher if rung not in partial]
    if partial:  # a macro average over fewer datasets than rung 0's is another average: not read until complete
        own.note = "; ".join(n for n in (own.note, *(f"rung {rung} has runs on {covered}, not read until it covers them all"
                                                       for rung, covered in partial.items())) if n)
    if not higher:
        return own
    references = list((registry.get("reference") or {}).get("rows") or [])  # the parity gate's rows, read at the rung too
    cells = [("rung 0", own)] + [
        (f"rung {rung}", _gated(table, _in_cell(table, registry, claim, settings.row_at(claim["better"], rung),
                                                 settings.row_at(claim["worse"], rung),
                                                 {name: settings.row_at(name, rung) for name in references}),
                                rows, items, confidence, counts, floors))
        for rung in higher]
    result = ClaimResult(table, claim, paper_values(table, claim), (None, None), compared=(claim["better"], claim["worse"]))
    entry = settings.declared(registry)
    result.choice = choices.Choice("setting", str(entry["why"]), cells, None, settings.SETTING, int(entry["chosen"]))
    return result


def _macro_coverage(rows: list[dict], claim: dict, rung: int) -> str | None:
    """For a macro-average claim whose rows at ``rung`` cover fewer of rung 0's datasets: "k of n
    datasets" (None where the claim is not a macro average or the rung covers them all)."""
    if not is_macro_average(rows, claim["column"]):
        return None
    base = macro_datasets(rows, claim)
    at = macro_datasets(rows, {**claim, **{side: settings.row_at(claim[side], rung) for side in ("better", "worse")}})
    return None if base <= at else f"{len(base & at)} of the {len(base)} datasets rung 0 compares"


def _evaluate(table: str, claim: dict, rows: list[dict], items: evidence.ItemScores, confidence: float,
              counts: dict[str, tuple[int, str]] | None) -> ClaimResult:
    column, quantity = claim["column"], claim.get("quantity", "test")
    paper = paper_values(table, claim)
    note, datasets = "", set()  # datasets: the columns whose runs the claim compares
    if is_macro_average(rows, column):
        datasets = macro_datasets(rows, claim)
        rows, note = with_macro_average(rows, column, claim)
        items = evidence.ItemScores()  # the macro average is over datasets, not items: the seeds and the sign test decide
    column = claim_column(rows, claim, column)
    datasets = datasets or {column}
    better, worse = reported_by_seed(rows, claim["better"], column), reported_by_seed(rows, claim["worse"], column)
    if quantity == "parameters":
        counted = _counted(table, claim, paper, better, worse, counts or {})
        if counted is not None:
            return counted
    stand_in = _stand_in(table, rows, claim, column) if not better or not worse else None
    if stand_in:
        named, why = stand_in
        result = _evaluate(table, {**claim, **named}, rows, items, confidence, counts)
        result.claim, result.paper = claim, paper
        result.test = None if result.counted or result.test is None else _test(claim, paper, quantity)
        result.note = "; ".join(n for n in (why, result.note) if n)
        return result
    result = ClaimResult(table, claim, paper, (None, None), note=note, compared=(claim["better"], claim["worse"]))
    if not better or not worse:
        missing = [n for n, r in ((claim["better"], better), (claim["worse"], worse)) if not r]
        result.note = f"no reported runs of {', '.join(missing)}"
        return result
    value = lambda r: r[quantity]  # noqa: E731
    result.ours = (statistics.fmean(value(r) for r in better.values()), statistics.fmean(value(r) for r in worse.values()))
    seeds = sorted(set(better) & set(worse))
    result.seeds = seeds
    result.test = _test(claim, paper, quantity)
    ratio = result.test.effect == verdicts.LOG_RATIO
    effect = (lambda s: math.log(value(better[s]) / value(worse[s]))) if ratio else (lambda s: value(better[s]) - value(worse[s]))
    result.t = stats.paired_t_interval([effect(s) for s in seeds], [0.0] * len(seeds), confidence)
    runs = _runs_in(rows, claim, datasets, seeds)
    # The seeds whose dev scores chose a row's rate among two or more: their test scores may be flattered.
    chose = {side: len(guards.grid(rows, *split_row(claim[side]), datasets)) > 1 for side in ("better", "worse")}
    held_out = [s for s in seeds if not any(chose[side] and by_seed[s].get("phase") == "select"
                                            for side, by_seed in (("better", better), ("worse", worse)))]

    def estimate(on: list[int]) -> stats.Estimate | None:
        two_level = _two_level(table, items, better, worse, on, column) if quantity == "test" and not ratio else None
        return two_level or stats.seed_estimate([effect(s) for s in on])

    result.estimate = estimate(seeds)
    if held_out != seeds:
        result.held_out, result.held_out_seeds = estimate(held_out), held_out
    if quantity in TIMED:
        timed = [*runs[claim["better"]], *runs[claim["worse"]]]
        result.guards = guards.timed_apart(timed)
        note = "; ".join(n for n in (note, f"timed on {guards.timing_conditions(timed)[0]}") if n)
    elif quantity == "test":
        result.guards = [*guards.grid_edges(rows, runs, datasets), *guards.at_cap(runs), *guards.untrained(runs), *guards.collapsed(runs)]
    result.price = _price(runs)
    result.note = note
    if result.estimate is None:
        result.verdict = verdicts.INCONCLUSIVE
        result.note = "; ".join(n for n in (note, f"{len(seeds)} paired seed(s): the run-to-run variance is unknown") if n)
    return result


def _runs_in(rows: list[dict], claim: dict, datasets: set[str], seeds: list[int]) -> dict[str, list[dict]]:
    """Each row's reported runs of the paired seeds in the claim's datasets (a macro average's:
    every domain's)."""
    out = {}
    for side in ("better", "worse"):
        encoder, variant = split_row(claim[side])
        out[claim[side]] = [r for r in rows if r["encoder"] == encoder and r["variant"] == variant and r["dataset"] in datasets
                            and r.get("reported") == "yes" and r["seed"] in seeds and "run" in r]
    return out


def _price(runs: dict[str, list[dict]]) -> tuple[float, str] | None:
    """One more paired seed: per row, the mean over its paired seeds of the training hours of a
    seed's runs (one run, or one per dataset of a macro average: the runs' own seconds per epoch
    x epochs x threads, as the tables' cost columns and --plan count them). None for benchmark
    rows (no training), and where some runs trained on a GPU and some not (no one unit)."""
    every = [r for side in runs.values() for r in side]
    if not every or guards.benchmark(every) or any(r.get("seconds_per_epoch") in (None, "") for r in every):
        return None
    gpu = {str(r.get("device", "")).startswith("cuda") for r in every}
    if len(gpu) > 1:
        return None
    hours = 0.0
    for side in runs.values():
        per_seed: dict[int, dict[str, float]] = {}
        for r in side:  # one row per run and column: a run counts once
            per_seed.setdefault(r["seed"], {})[r["run"]] = timing.run_cpu_hours(r["seconds_per_epoch"], r["epochs_run"],
                                                                                 1 if gpu == {True} else r["threads"])
        hours += statistics.fmean(sum(v.values()) for v in per_seed.values())
    return hours, "GPU h" if gpu == {True} else "CPU h"


def _count_verdict(claim: dict, better: float, worse: float) -> str:
    if claim.get("relation") == "equal":
        m = claim.get("relative_margin")
        holds = abs(better / worse - 1) <= m if m is not None else abs(better - worse) <= float(claim["margin"])
    elif claim.get("min_factor"):
        ratio = worse / better if claim.get("lower_is_better") else better / worse
        holds = ratio >= float(claim["min_factor"])
    else:
        holds = better < worse if claim.get("lower_is_better") else better > worse
    return verdicts.REPRODUCED if holds else verdicts.CONTRADICTED


def _counted(table: str, claim: dict, paper, better: dict, worse: dict, counts: dict[str, tuple[int, str]]) -> ClaimResult | None:
    """A claim on parameter counts: exact numbers, no interval. Read off the rows' runs where both
    have runs (one count per row), else off the counts their experiment configs build; None
    where a row has neither."""
    if better and worse:
        sizes = [sorted({int(r["parameters"]) for r in side.values()}) for side in (better, worse)]
        if any(len(s) != 1 for s in sizes):
            raise ValueError(f"{table}: claim {claim['id']!r}: a row's runs record different parameter counts ({sizes})")
        b, w = sizes[0][0], sizes[1][0]
        how = f"counted in the runs: {b:,} and {w:,} parameters"
    elif claim["better"] in counts and claim["worse"] in counts:
        (b, b_exp), (w, w_exp) = counts[claim["better"]], counts[claim["worse"]]
        how = (f"counted from the configs (experiment={b_exp}: {b:,}; experiment={w_exp}: {w:,}), without runs: "
               "a count depends on neither the seed nor training")
    else:
        return None
    margin = claim.get("relative_margin")
    if margin is not None:
        how += f"; ratio {b / w:.2f}, the claim allows {1 - margin:.2f}-{1 + margin:.2f}"
    return ClaimResult(table, claim, paper, (float(b), float(w)), verdict=_count_verdict(claim, b, w), note=how,
                       compared=(claim["better"], claim["worse"]), counted=True)


def claim_column(rows: list[dict], claim: dict, column: str) -> str:
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
    named = {side: declared.get("rows", {}).get(claim[side], claim[side]) if not reported_by_seed(rows, claim[side], column) else claim[side]
             for side in ("better", "worse")}
    named_column = claim_column(rows, {**claim, **named}, claim["column"])
    if named != {side: claim[side] for side in named} and all(reported_by_seed(rows, named[side], named_column) for side in named):
        swapped = ", ".join(f"{named[side]} for {claim[side]}" for side in named if named[side] != claim[side])
        return named, f"on our rows standing in for the paper's ({swapped}: {declared['why']})"
    variant = _stand_in_variant(table, rows, claim, column)
    if variant:
        return ({"better": f"{claim['better']}/{variant}", "worse": f"{claim['worse']}/{variant}"},
                f"on our variant '{variant}' (the paper's own rows were not run)")
    return None


def _stand_in_variant(table: str, rows: list[dict], claim: dict, column: str) -> str | None:
    """Our one variant (e.g. DCU Table 1's CPU-sized "small") with reported runs of both of the
    claim's rows in its column, when the claim names the paper's own rows and those have none.
    Several such variants are the registry's to choose between (``stand_ins``), not a claim
    left "not run"."""
    (b_enc, b_var), (w_enc, w_var) = split_row(claim["better"]), split_row(claim["worse"])
    if b_var or w_var:
        return None
    def variants(encoder: str) -> set[str]:
        return {r["variant"] for r in rows if r["encoder"] == encoder and r["dataset"] == column and r.get("reported") == "yes" and r["variant"]}
    common = variants(b_enc) & variants(w_enc)
    if len(common) > 1:
        raise ValueError(f"{table}: claim {claim['id']!r}: our variants {', '.join(sorted(common))} all have runs of "
                         f"{b_enc} and {w_enc} in {column}: name the rows that stand in for the paper's under "
                         "`stand_ins` in the table's registry file")
    return next(iter(common)) if common else None
