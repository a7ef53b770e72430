"""The claims ledger as the report shows it: one ``ClaimView`` per claim, with plain fields.

This module is the only part of the report that knows the shape of the claims library
(``rnnbench.results.claims``, ``decisions``, ``ledger``, ``stats`` and ``verdicts``): which function decides
the claims, what a result holds, where the evidence files are. Everything else in
``rnnbench.site`` reads ``ClaimView``. When the statistics change, this is the module to adapt.

The claims are decided once, by ``results.decisions.decided``, which the ledger reads too (every
claim decided together, Holm's adjustment within each family; the interval at the claim's Holm
level, the raw, Holm and Benjamini-Hochberg p-values, what would decide an open claim). So the
report and ``results/claims.md`` agree. Added here: each paired seed's
difference (or ratio, for times), the rows' names as the paper prints them, the units.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from scipy import stats as sstats

from rnnbench.campaign.definitions import experiments_of
from rnnbench.results import claims as claims_mod
from rnnbench.results import decisions, evidence, ledger
from rnnbench.results.tables import model_name

NOT_RUN, DATA_MISSING = "not run", "data missing"
CONFIDENCE = "95%"
KINDS = {"test": "accuracy", "seconds_per_epoch": "cost", "inference_seconds_per_example": "cost", "parameters": "parameters"}
PAPER_NAMES = {"lstm_odyssey": "LSTM baseline"}  # how the README names the papers; the rest upper-cased (RCRN)
UNITS = {"seconds_per_epoch": "seconds per training epoch", "inference_seconds_per_example": "seconds per test example",
         "parameters": "encoder parameters"}


@dataclass(frozen=True)
class Span:
    """An estimate with its interval, in the claim's display unit."""

    mean: float
    low: float
    high: float


@dataclass
class ClaimView:
    key: str  # unique, safe as a file name: "<table>--<claim id>", "--<device>" for another device's evidence
    paper: str  # "RCRN"
    table: str  # the registry's table name, "rcrn_table5"
    table_title: str  # "RCRN Table 5: Accuracy on TREC question classification"
    device: str  # "" for the main evidence; "cuda" for results/<table>_cuda.csv
    claim_id: str
    text: str
    cite: str
    kind: str  # accuracy | cost | parameters
    better: str  # the rows compared, as the paper names them
    worse: str
    better_key: str  # as the registry names them: encoder[/variant]
    worse_key: str
    column: str
    unit: str  # what the differences are in: "TREC accuracy", "ms per test example"
    lower_is_better: bool
    paper_numbers: tuple[float | None, float | None]  # the paper's (better, worse) as printed
    ours: tuple[float | None, float | None]  # our means, display unit
    seeds: list[int] = field(default_factory=list)
    differences: list[float] = field(default_factory=list)  # better − worse per paired seed, display unit
    ratio: bool = False  # the effect is better / worse (times), not better − worse: differences are ratios, "none" is 1
    interval: Span | None = None  # the effect the verdict is decided on, with its interval
    level: str = CONFIDENCE  # the interval's confidence ("99.4%, Holm's level in a family of 8")
    second: Span | None = None  # a second interval (the cross-check), drawn under the first
    second_label: str = ""
    claimed_difference: float | None = None  # the paper's own effect, where in our unit (a ratio for times)
    verdict: str = NOT_RUN
    p_value: float | None = None  # raw, where the ledger computes one
    p_adjusted: float | None = None  # Holm within the claim's family: what the verdict follows
    p_fdr: float | None = None  # Benjamini-Hochberg over the whole ledger, shown beside
    note: str = ""
    counted: bool = False  # decided on parameter counts from the configs, without runs
    evidence_csv: str | None = None  # file name under results/, e.g. "rcrn_table5.csv"
    would_decide: str = ""
    scope: str = ""  # an accuracy verdict: "about the paper" or "in our setting" (the gates); a gated verdict: its kind
    scope_note: str = ""  # why: the reference row's gap, the floor, the absent mechanism, the stand-in data

    @property
    def headline_kind(self) -> str:
        """Accuracy apart from cost (time and parameters), as the home page counts them."""
        return "accuracy" if self.kind == "accuracy" else "cost"


def _span(interval, factor: float = 1.0) -> Span | None:
    if interval is None:
        return None
    return Span(interval.mean * factor, interval.low * factor, interval.high * factor)


def _paper(registry: dict) -> str:
    key = registry.get("paper") or ""
    return PAPER_NAMES.get(key, key.upper())


def _name(registry: dict, row: str) -> str:
    encoder, variant = claims_mod.split_row(row)
    return model_name(registry, encoder, variant or None) if registry.get("rows") else row


def _paired_differences(result, rows: list[dict], quantity: str) -> list[float]:
    """better − worse per paired seed of the rows the result compared (the claim's own, or the
    ones standing in for them), in the column it compared them in (a macro average included)."""
    own = getattr(result, "differences", None)
    if own is not None:
        return list(own)
    if not result.seeds or result.compared is None or result.counted:
        return []
    claim = {**result.claim, "better": result.compared[0], "worse": result.compared[1]}
    column = claim["column"]
    if claims_mod.is_macro_average(rows, column):
        rows, _ = claims_mod.with_macro_average(rows, column, claim)
    column = claims_mod.claim_column(rows, claim, column)
    better, worse = claims_mod.reported_by_seed(rows, claim["better"], column), claims_mod.reported_by_seed(rows, claim["worse"], column)
    if not all(s in better and s in worse for s in result.seeds):
        return []
    if _is_ratio(result):
        return [math.log(float(better[s][quantity]) / float(worse[s][quantity])) for s in result.seeds]
    return [float(better[s][quantity]) - float(worse[s][quantity]) for s in result.seeds]


def _is_ratio(result) -> bool:
    """Times are judged on the ratio better / worse (its log), where the ledger says so."""
    return getattr(getattr(result, "test", None), "effect", "") == "log ratio"


def _seeds_to_decide(interval: Span, seeds: int) -> int | None:
    """Paired seeds at which an interval of the present spread would exclude 0, if the mean
    difference held; None where the mean is 0."""
    if seeds < 2 or interval.mean == 0:
        return None
    t = float(sstats.t.ppf(0.975, seeds - 1))
    sd = (interval.high - interval.low) / 2 / t * math.sqrt(seeds)
    for n in range(seeds + 1, 1001):
        if float(sstats.t.ppf(0.975, n - 1)) * sd / math.sqrt(n) < abs(interval.mean):
            return n
    return None


def _would_decide(view: ClaimView, result, experiments_of: Callable[[str], list[str]] = experiments_of) -> str:
    """What would decide the claim, in one or two sentences."""
    power = getattr(getattr(result, "decision", None), "power", "")
    if power:  # the ledger's own answer: paired seeds for 80% power at the paper's effect, and their price
        return f"{power[0].upper()}{power[1:]}."
    experiments = " ".join(experiments_of(view.table))
    make = f"`python scripts/make_table.py {experiments}`" if experiments else "an experiment config for the table"
    if view.verdict == DATA_MISSING:
        return f"The dataset files (set RNNBENCH_DATA to the folder that holds them), then runs of both rows: {make}."
    if view.verdict == NOT_RUN:
        return f"Runs of both rows under the comparison protocol: {make}."
    if view.counted:
        return "Nothing more: parameter counts are exact, read off the rows' experiment configs."
    if view.interval is None:
        return (f"At least two paired seeds of both rows (now {len(view.seeds)}): an interval over seeds needs two. "
                f"Run more seeds: {make}.")
    if "epoch cap" in view.note and "not converged" in view.note:
        extra = " Runs that stopped at the epoch cap were still improving: a longer cap comes first."
    else:
        extra = ""
    if view.verdict == "withheld":
        return f"The statistics decide it, but it is withheld until what withholds it is fixed: {view.note}."
    if view.verdict in ("reproduced", "contradicted", "smaller than claimed"):
        return ("Decided: the interval excludes 0. More seeds narrow it; they would change the verdict only if the "
                f"mean difference moved across 0.{extra}")
    if view.ratio:
        return f"More paired rounds, timed together, would narrow the ratio's interval.{extra}"
    needed = _seeds_to_decide(view.interval, len(view.seeds))
    if needed is None:
        return f"The mean difference is too small for any number of seeds at this spread to tell it from 0.{extra}"
    return (f"About {needed} paired seeds (now {len(view.seeds)}) would make an interval of this spread exclude 0, "
            f"if the mean difference stayed at {view.interval.mean:+.3g}; if the true difference is 0, no number of "
            f"seeds will.{extra}")


def _intervals(result, factor: float) -> tuple[Span | None, str, Span | None, str]:
    """(the verdict's interval, its level, a second interval, its label), in the effect's units.

    Where the ledger decides claims together (a ``decision``: Holm within a family), the
    verdict's interval is the two-level estimate at the claim's Holm level and the second is the
    paired t over seeds; before that, the paired t at 95% and the bootstrap over test items."""
    decision, estimate = getattr(result, "decision", None), getattr(result, "estimate", None)
    t = getattr(result, "t", None)
    if decision is not None and estimate is not None:
        low, high = decision.interval
        level = f"{(1 - decision.level) * 100:.4g}%" + (f", Holm's level in {decision.family} ({decision.size} claims)"
                                                         if getattr(decision, "size", 1) > 1 else "")
        second = None if t is None else Span(t.mean * factor, t.low * factor, t.high * factor)
        return Span(estimate.mean * factor, low * factor, high * factor), level, second, "paired t over seeds, 95%"
    bootstrap = getattr(result, "bootstrap", None)
    return _span(t, factor), CONFIDENCE, _span(bootstrap, factor), "over test items (bootstrap)"


def _view(table: str, registry: dict, result, rows: list[dict], device: str, csv_name: str | None,
          experiments_of: Callable[[str], list[str]] = experiments_of) -> ClaimView:
    claim = result.claim
    quantity = claim.get("quantity", "test")
    ratio = _is_ratio(result)
    factor, scaled_unit = ledger.DISPLAY_SCALE.get(quantity, (1.0, ""))
    unit = {"inference_seconds_per_example": "ms per test example"}.get(quantity) if scaled_unit else UNITS.get(quantity)
    metrics = registry.get("metrics") or []
    if quantity == "test":
        unit = f"{claim['column']} {metrics[0] if len(metrics) == 1 else ''}".strip()
    paper_numbers = tuple(result.paper)
    claimed = None
    if None not in paper_numbers and (quantity == "test" or ratio):
        claimed = math.log(paper_numbers[0] / paper_numbers[1]) if ratio and 0 not in paper_numbers else (
            None if ratio else paper_numbers[0] - paper_numbers[1])
    effect_factor = 1.0 if ratio else factor
    interval, level, second, second_label = _intervals(result, effect_factor)
    differences = [d * effect_factor for d in _paired_differences(result, rows, quantity)]
    if ratio:  # shown as ratios (1.00x: no difference), computed on the log scale
        def exp(s: Span | None) -> Span | None:
            return None if s is None else Span(math.exp(s.mean), math.exp(s.low), math.exp(s.high))
        interval, differences = exp(interval), [math.exp(d) for d in differences]
        claimed = None if claimed is None else math.exp(claimed)
        second, second_label = None, ""  # the paired t is of the raw difference in seconds: another scale
        unit = f"{unit}, better / worse"
    decision = getattr(result, "decision", None)
    compared = result.compared or (claim["better"], claim["worse"])
    guards = list(getattr(result, "guards", []) or [])
    view = ClaimView(
        key=f"{table}--{claim['id']}" + (f"--{device}" if device else ""),
        paper=_paper(registry), table=table,
        table_title=f"{_paper(registry)} Table {registry.get('table')}: {registry.get('caption', '')}",
        device=device, claim_id=claim["id"], text=claim["text"], cite=claim.get("cite", ""),
        kind=KINDS.get(quantity, "accuracy"), better=_name(registry, compared[0]), worse=_name(registry, compared[1]),
        better_key=claim["better"], worse_key=claim["worse"], column=claim["column"], unit=unit or quantity,
        lower_is_better=bool(claim.get("lower_is_better", False)), paper_numbers=paper_numbers,
        ours=tuple(None if v is None else v * factor for v in result.ours), seeds=list(result.seeds),
        differences=differences, ratio=ratio, interval=interval, level=level, second=second, second_label=second_label,
        claimed_difference=claimed, verdict=result.verdict,
        p_value=getattr(decision, "p", None), p_adjusted=getattr(decision, "p_holm", None), p_fdr=getattr(decision, "p_bh", None),
        note="; ".join(n for n in (*guards, result.note) if n), counted=bool(result.counted), evidence_csv=csv_name)
    view.would_decide = _would_decide(view, result, experiments_of)
    view.scope, view.scope_note = _scope(result)
    return view


def _scope(result) -> tuple[str, str]:
    """(the verdict's scope, why), as the ledger states it (``ledger.scope_of``)."""
    gate, scope = getattr(result, "gate", None), getattr(result, "scope", None)
    if gate is not None and result.verdict == gate.kind:
        statistical = getattr(getattr(result, "decision", None), "statistical", "")
        return gate.kind, gate.why + (f"; the statistics say {statistical}" if statistical else "")
    if scope is not None and result.verdict in ledger.STATISTICAL:
        return scope.kind, scope.why
    return "", ""


def _decided(results_dir: Path, status_of_table, tables) -> list[tuple[str, dict, object, list[dict], str, str | None]]:
    """(table, registry, result, rows, device, evidence file) per claim, as ``decisions.decided`` decides it."""
    out = []
    for s in decisions.decided(results_dir, status_of_table):
        if tables is not None and s.table not in tables:
            continue
        csv_path = results_dir / (f"{s.table}_{s.device}.csv" if s.device else f"{s.table}.csv")
        out += [(s.table, s.registry, r, s.rows, s.device, csv_path.name if csv_path.exists() else None) for r in s.results]
    return out


def claim_views(results_dir: Path, status_of_table: Callable[[str], str] | None = None,
                tables: list[str] | None = None) -> list[ClaimView]:
    """Every claim of the registry (or of ``tables``), decided on the evidence in ``results_dir``
    as the ledger decides it, in the ledger's order, each table's claims on another device's
    evidence (``<table>_cuda.csv``) after its own. ``status_of_table(name)`` says why a table
    without evidence has none ("not run" or "data missing"; by default "not run")."""
    # A table's experiments are looked up once, not once for each of its claims (some 200 in all):
    # a lookup may read every experiment config.
    experiments = functools.cache(experiments_of)
    return [_view(*decided, experiments) for decided in _decided(results_dir, status_of_table, tables)]


def device_label(device: str) -> str:
    """"on the GPU" for "cuda": how the ledger names another device's evidence."""
    return decisions.DEVICE_EVIDENCE.get(device, f"on {device}") if device else ""
