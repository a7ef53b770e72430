"""A comparison of your own: each encoder of a table against one baseline row, decided together.

``rnnbench compare`` (docs/compare.md) runs your encoders under the comparison protocol and writes
a table no paper printed, whose definition (``definition``, held in memory by
``tables.define_table``) names the baseline and holds one claim per other encoder: "encoder
against baseline" on the table's column. Each is evaluated as a paper's claim is
(``claims.evaluate``: paired by seed, one interval for the run-to-run and the test-set noise
together, the guards, the majority-class floor), and all are decided together as one family
(``verdicts.decide``: Holm's correction over the pairs). Unlike a paper's claim, a pair has no
direction declared before the runs, so it reads the same both ways:

- **better** / **worse**: the interval at the pair's Holm level excludes 0 (above / below, in
  the metric's direction) on at least ``verdicts.MIN_SEEDS`` paired seeds;
- **inconclusive**: it does not, or too few seeds back it; the pair says what would decide it:
  the paired seeds for 80% power at the observed difference, at the family's strictest Holm
  level, and their price in hours (``seeds_needed``);
- **withheld**: decided, but a row's runs are not to be trusted yet (a rate at its grid's edge,
  a run at its epoch cap, one that did not train or collapsed: ``guards``);
- **not evidence**: a row does not beat the test split's majority-class score (``gates``);
- **not run**: no paired runs of both rows yet.
"""
from __future__ import annotations

from dataclasses import dataclass

from rnnbench.results import claims as claims_mod
from rnnbench.results import decisions, stats, verdicts
from rnnbench.results.gates import NOT_EVIDENCE
from rnnbench.results.tables import define_table

BETTER, WORSE = "better", "worse"
VERDICTS = (BETTER, WORSE, verdicts.INCONCLUSIVE, verdicts.WITHHELD, NOT_EVIDENCE, verdicts.NOT_RUN)


def definition(caption: str, encoders: list[str], baseline: str, column: str, lower_is_better: bool) -> dict:
    """The table definition of a comparison, shaped as a registry file: no paper row, one claim
    per encoder other than ``baseline`` on ``column``, and the comparison it is."""
    pairs = [{"id": f"{encoder}-against-{baseline}", "text": f"{encoder} against {baseline}", "better": encoder,
              "worse": baseline, "column": column, "quantity": "test", "lower_is_better": lower_is_better}
             for encoder in encoders if encoder != baseline]
    return {"paper": None, "table": None, "caption": caption, "rows": [], "ours_only": True, "claims": pairs,
            "comparison": {"baseline": baseline, "encoders": list(encoders), "column": column,
                           "lower_is_better": lower_is_better}}


@dataclass
class Pair:
    encoder: str
    baseline: str
    result: claims_mod.ClaimResult
    verdict: str  # one of VERDICTS
    why: str = ""  # what withholds it, the gate, or the evidence it lacks
    would_decide: str = ""  # an inconclusive pair: the seeds that would decide it

    @property
    def seeds(self) -> int:
        return len(self.result.seeds)


def decide(table: str, definition_: dict, rows: list[dict], items, floors: dict | None = None) -> list[Pair]:
    """Every pair of the comparison ``table`` (its ``definition``) decided together on the evidence
    ``rows`` (``evidence.read_csv``) and per-item scores ``items``, ``floors`` the majority-class
    scores (``floors.read_floors``) the floor gate reads."""
    define_table(table, definition_)  # what the claims' evidence reads as the table's registry
    return [_reading(r) for r in decisions.one_family(table, rows, items, floors)]


def _reading(r: claims_mod.ClaimResult) -> Pair:
    encoder, baseline = r.claim["better"], r.claim["worse"]
    if not r.seeds:
        return Pair(encoder, baseline, r, verdicts.NOT_RUN, r.note)
    d = r.decision
    if d is None:  # one paired seed: the run-to-run variance is unknown
        return Pair(encoder, baseline, r, verdicts.INCONCLUSIVE, r.note, f"at least {verdicts.MIN_SEEDS} paired seeds")
    # The statistics' own reading, before the minimum evidence that a paper's contradiction alone needs:
    # here both directions need it alike.
    direction = {verdicts.REPRODUCED: BETTER, verdicts.CONTRADICTED: WORSE}.get(d.statistical)
    pair = Pair(encoder, baseline, r, verdicts.INCONCLUSIVE)
    if direction is not None and len(r.seeds) < verdicts.MIN_SEEDS:
        pair.why = f"the interval says {direction}, on {len(r.seeds)} paired seeds: a verdict either way needs {verdicts.MIN_SEEDS}"
    elif direction is not None and r.guards:
        pair.verdict, pair.why = verdicts.WITHHELD, f"the statistics say {direction}, but {'; '.join(r.guards)}"
    elif direction is not None:
        pair.verdict = direction
    if r.gate is not None:
        pair.verdict, pair.why = r.gate.kind, r.gate.why
    if pair.verdict == verdicts.INCONCLUSIVE:
        pair.would_decide = seeds_needed(r, verdicts.ALPHA / d.size)
    return pair


def seeds_needed(r: claims_mod.ClaimResult, alpha: float) -> str:
    """The paired seeds that would give 80% power at the observed difference (at ``alpha``: the
    family's strictest Holm level), at least ``verdicts.MIN_SEEDS``, and the price of the rest."""
    estimate = r.estimate
    aim = abs(estimate.mean)
    if aim == 0:
        return "no difference observed to aim at"
    shown = f"{estimate.mean:+.2f}"
    seeds = stats.seeds_for_power(estimate, aim, alpha, verdicts.POWER)
    if seeds is None:
        return (f"not reachable by seeds: the test set alone keeps the interval wider than the observed {shown} "
                "(a larger test set would narrow it)")
    if seeds > 1000:
        return f"more than 1,000 paired seeds for 80% power at the observed {shown}"
    seeds = max(seeds, verdicts.MIN_SEEDS)
    text = f"{seeds} paired seeds for 80% power at the observed {shown} ({estimate.seeds} run"
    more = seeds - estimate.seeds
    if more > 0 and r.price is not None:
        hours, unit = r.price
        text += f"; {more} more ≈ {more * hours:.2f} {unit}"
    return text + ")"


def _level(d: verdicts.Decision) -> str:
    return f"{100 * (1 - d.level):.4g}%"


def _p(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def cells(pair: Pair, digits: int) -> tuple[str, str, str, str]:
    """(mean difference, its interval at the pair's Holm level, p raw, p Holm) as text; "–" where none."""
    d = pair.result.decision
    if d is None:
        return "–", "–", "–", "–"
    low, high = d.interval
    return (f"{pair.result.estimate.mean:+.{digits}f}", f"[{low:+.{digits}f}, {high:+.{digits}f}] ({_level(d)})", _p(d.p), _p(d.p_holm))


def verdict_text(pair: Pair) -> str:
    """The verdict and why, in a few words: ``rcrn better than bilstm``, ``inconclusive (...)``."""
    if pair.verdict in (BETTER, WORSE):
        return f"{pair.encoder} {pair.verdict} than {pair.baseline}"
    return pair.verdict + (f" ({pair.why})" if pair.why else "")


def section(table: str, definition_: dict, rows: list[dict], items, floors: dict | None, digits: int, unit: str = "") -> list[str]:
    """The comparison's section of its table (Markdown lines)."""
    comparison = definition_["comparison"]
    baseline = comparison["baseline"]
    pairs = decide(table, definition_, rows, items, floors)
    tested = [p for p in pairs if p.result.decision is not None]
    lines = [f"## Against `{baseline}`", "",
             f"| Encoder | Ours − `{baseline}`{unit} | Interval at its Holm level | p | p, Holm over {len(tested) or len(pairs)} pair(s) "
             "| Paired seeds | Verdict | What would decide it |",
             "|---|---:|---:|---:|---:|---:|---|---|"]
    for pair in pairs:
        mean, interval, p, p_holm = cells(pair, digits)
        lines.append(f"| `{pair.encoder}` | {mean} | {interval} | {p} | {p_holm} | {pair.seeds or '–'} | **{verdict_text(pair)}** "
                     f"| {pair.would_decide or '–'} |")
    direction = "lower" if comparison.get("lower_is_better") else "higher"
    lines += ["",
              f"Each encoder against `{baseline}` on the test split, paired by seed ({direction} is better): the mean over seeds and test "
              "items of the per-item difference, its interval carrying the run-to-run and the test-set noise together, the p-value "
              "two-sided. Holm's correction over the pairs decides: an encoder is better or worse than the baseline where the "
              f"interval at its Holm level excludes 0, on at least {verdicts.MIN_SEEDS} paired seeds, and no row's runs are in doubt "
              "(a rate at its grid's edge, a run at its epoch cap, one that did not train); else the pair is inconclusive, and says "
              "the paired seeds that would give 80% power at the observed difference. How to read it: docs/compare.md.", ""]
    return lines


def summary(table: str, definition_: dict, rows: list[dict], items, floors: dict | None, digits: int = 2) -> list[str]:
    """The comparison in a few lines, as ``rnnbench compare`` prints it."""
    baseline = definition_["comparison"]["baseline"]
    pairs = decide(table, definition_, rows, items, floors)
    width = max(len(p.encoder) for p in pairs) if pairs else 0
    tested = sum(1 for p in pairs if p.result.decision is not None)
    lines = [f"against {baseline}, Holm's correction over {tested} pair(s) (interval at each pair's Holm level; p raw, then Holm):"]
    for pair in pairs:
        mean, interval, p, p_holm = cells(pair, digits)
        numbers = f"{mean} {interval}, p {p}, Holm {p_holm}, {pair.seeds} paired seeds" if pair.result.decision else "no interval"
        lines.append(f"  {pair.encoder:{width}} − {baseline}: {numbers}: {verdict_text(pair)}"
                     + (f"; to decide it: {pair.would_decide}" if pair.would_decide else ""))
    return lines
