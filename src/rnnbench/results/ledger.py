"""The claims ledger, results/claims.md: every claim of every paper table, decided from the
committed evidence CSVs alone (``make claims``).

It opens with what was found: per paper, the accuracy claims and the cost claims apart (cost
verdicts on the CPU and on the GPU side by side), counted by verdict after the correction for
multiplicity, then the decided claims with their intervals. Below, table by table in the papers'
order, every claim with the paper's numbers, ours, the interval at its Holm level, the paired t
beside it, the raw and adjusted p-values, the verdict and what would decide an inconclusive one.
The rule: ``rnnbench.results.verdicts`` and docs/verdicts.md.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from rnnbench.encoders.build import known_encoders
from rnnbench.results import claims as claims_mod
from rnnbench.results import choices, evidence, floors, gates, report, verdicts
from rnnbench.results.tables import REGISTRY, paper_table

RULE = [
    "How to read a verdict ([docs/verdicts.md](../docs/verdicts.md)). Each claim \"A beats B\" is tested on our runs of A and B",
    "paired by seed: one interval for the run-to-run and the test-set noise together (items that share a sentence, passage or",
    "premise count as one), its p-value, and Holm's correction over the paper's claims of the same kind (accuracy or cost, on one",
    "device), which decides the verdict; Benjamini-Hochberg's over the whole ledger is printed beside. Intervals are at each",
    "claim's Holm level (its verdict and its interval never disagree); the paired t over seeds is the cross-check.",
    "**reproduced** / **contradicted**: the interval excludes 0 in the paper's direction / the other way (for a claim of size,",
    "the factor it states); **smaller than claimed**: it excludes the paper's own difference but not 0; **inconclusive**:",
    "neither, with the paired seeds that would give 80% power at the paper's difference, or \"not reachable by seeds\";",
    "**withheld**: decided by the statistics, but a row chose its rate at its grid's edge, stopped at its epoch cap or has a run",
    "that did not train, or the times were not taken together (whichever side it favours). Times are judged on the ratio of",
    "two rows timed in the same round; parameter counts are exact (counted, not tested). **not run** / **data missing**: no runs.",
    "",
    "Whether an accuracy verdict is about the paper or about our setting (the gates, [docs/verdicts.md](../docs/verdicts.md#the-gates)):",
    "**pipeline check**: the table trained on a stand-in for the paper's training data; **not evidence**: a row of the claim",
    "does not beat the test split's majority-class score; **not tested**: the mechanism the paper credits is absent from (or not",
    "measured in) our runs; each shows the statistics' verdict beside. The other verdicts are **about the paper** only where the",
    "table's reference row (the paper's own baseline) is within its margin of the paper's number (the larger of 2 points and",
    "twice the paper's std), otherwise **in our setting**, with the reference row's gap. An accuracy claim is smaller than",
    "claimed or contradicted only on 5 paired seeds or more, and smaller than claimed only with an interval narrower than half",
    "the paper's difference. **depends on an unspecified choice**: the paper leaves open a choice its claim may rest on;",
    "the claim is decided in every cell consistent with the paper's text (each a hypothesis of the paper's family), and the",
    "cells' verdicts differ (a contradiction stands only where it holds in every cell); the claim's own rows, where not such a",
    "cell, are shown beside as \"outside the paper's cells\" and decide nothing.",
]

# Evidence of the same table measured on another device, decided beside the main evidence
# (the paper's cost claims are about a GPU; `make gpu-check` writes <table>_cuda.csv on one).
DEVICE_EVIDENCE = {"cuda": "on the GPU"}
# Quantities too small to read at two decimals in their own unit: our means shown scaled.
DISPLAY_SCALE = {"inference_seconds_per_example": (1000.0, "ours in ms")}
STATISTICAL = verdicts.STATISTICAL
SHORT = {verdicts.SMALLER: "smaller"}


@dataclass
class Section:
    """One table's claims decided on one body of evidence (its CSV, or another device's)."""

    table: str
    registry: dict
    rows: list[dict]
    results: list[claims_mod.ClaimResult]
    title: str
    device: str = ""  # "" for the table's own evidence, else the device key ("cuda")
    hardware: str = ""


def natural_key(table: str) -> tuple:
    """rcrn_table2 before rcrn_table10: the papers' own order of their tables."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", table))


def is_accuracy(claim: dict) -> bool:
    return claim.get("quantity", "test") == "test"


def device_of(result: claims_mod.ClaimResult, rows: list[dict]) -> str:
    """"GPU" where every paired run of the claim's rows ran on one, else "CPU"."""
    compared = {claims_mod.split_row(n) for n in result.compared or (result.claim["better"], result.claim["worse"])}
    runs = [r for r in rows if (r["encoder"], r["variant"]) in compared and r.get("reported") == "yes"]
    return "GPU" if runs and all(str(r.get("device", "")).startswith("cuda") for r in runs) else "CPU"


def family_of(section: Section, result: claims_mod.ClaimResult) -> str:
    kind = "accuracy" if is_accuracy(result.claim) else f"cost on the {device_of(result, section.rows)}"
    return f"{section.registry['paper'].upper()} {kind}"


def table_results(name: str, claims: list[dict], rows: list[dict], items: list[dict] | evidence.ItemScores, missing_status: str | None,
                  built: set[str], sizes: dict | None = None, floor_map: dict | None = None) -> list[claims_mod.ClaimResult]:
    """Each claim's evidence on one table's rows; a table without rows gives ``missing_status``
    (a size claim is still counted from ``sizes``, the configs' parameter counts). ``floor_map``:
    the majority-class scores the floor gate reads (``floors.read_floors``)."""
    results = []
    for claim in claims:
        if missing_status:
            result = claims_mod.evaluate(name, claim, [], [], counts=sizes) if sizes and claim.get("quantity") == "parameters" else None
            if result is None or not result.counted:
                result = claims_mod.ClaimResult(name, claim, claims_mod.paper_values(name, claim), (None, None), verdict=missing_status)
        else:
            result = claims_mod.evaluate(name, claim, rows, items, counts=sizes, floors=floor_map)
        unbuilt = [claims_mod.split_row(claim[s])[0] for s in ("better", "worse") if claims_mod.split_row(claim[s])[0] not in built]
        if unbuilt and result.verdict in (verdicts.NOT_RUN, verdicts.DATA_MISSING):
            result.note = f"{', '.join(f'`{u}`' for u in unbuilt)} not built yet"
        results.append(result)
    return results


def decide(sections: list[Section]) -> None:
    """Every claim of every section decided together: Holm within each family, BH across all."""
    owner = {id(r): s for s in sections for r in s.results}
    verdicts.decide([r for s in sections for r in s.results], lambda r: family_of(owner[id(r)], r))


# ---------------------------------------------------------------------------------------------
# Cells


def _num(x: float | None, digits: int = 1) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _ours(x: float | None, quantity: str) -> str:
    """Our mean: parameter counts as whole numbers (1,632,960), the rest at two decimals."""
    return "–" if x is None else f"{x:,.0f}" if quantity == "parameters" else f"{x:.2f}"


def _confidence(level: float) -> str:
    text = f"{(1 - level) * 100:.2f}".rstrip("0").rstrip(".")
    return ">99.99%" if 1 - level > 0.9999 else f"{text}%"


def _value(test: verdicts.Hypothesis, x: float) -> str:
    return f"{math.exp(x):.2f}×" if test.effect == verdicts.LOG_RATIO else f"{x:+.2f}"


def _with_interval(test: verdicts.Hypothesis, mean: float, low: float, high: float) -> str:
    """``+1.10 [-0.55, +2.74]``, or for a ratio ``0.89× [0.75, 1.07]``."""
    if test.effect == verdicts.LOG_RATIO:
        return f"{math.exp(mean):.2f}× [{math.exp(low):.2f}, {math.exp(high):.2f}]"
    return f"{mean:+.2f} [{low:+.2f}, {high:+.2f}]"


def effect_cell(result: claims_mod.ClaimResult, with_level: bool = True) -> str:
    """Ours: the effect (better − worse, or the ratio better / worse) with its interval at the
    claim's Holm level; a count where the claim was counted."""
    if result.counted:
        better, worse = result.ours
        return f"count: {better:,.0f} / {worse:,.0f} ({better / worse:.2f}×)"
    d = result.decision
    if d is None or result.estimate is None:
        return "–"
    low, high = d.interval
    shown = _with_interval(result.test, result.estimate.mean, low, high)
    level = 2 * d.level if result.test.bounds is not None else d.level
    return f"{shown} at {_confidence(level)}" if with_level else shown


def t_cell(result: claims_mod.ClaimResult) -> str:
    t = result.t
    if t is None or result.test is None:
        return "–"
    return _with_interval(result.test, t.mean, t.low, t.high)


def _p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def p_cell(result: claims_mod.ClaimResult) -> str:
    d = result.decision
    return "–" if d is None else f"{_p(d.p)} / {_p(d.p_holm)} / {_p(d.p_bh)}"


def statistics_text(result: claims_mod.ClaimResult) -> str:
    """What the statistics say where a gate or the minimum evidence set the verdict ("" elsewhere)."""
    d = result.decision
    if d is None:
        return ""
    if result.gate is not None:
        return f"the statistics say {d.statistical}" + (f", but {d.missing}" if d.missing else "")
    if d.missing:
        return f"the statistics say {d.statistical}, but {d.missing}"
    return ""


def verdict_label(result: claims_mod.ClaimResult) -> str:
    """The verdict with its scope: ``contradicted, in our setting (reference row ...)``; a gated
    verdict with its reason."""
    if result.gate is not None and result.verdict == result.gate.kind:
        return result.gate.label()
    if result.scope is not None and result.verdict in verdicts.STATISTICAL:
        return f"{result.verdict}, {result.scope.label()}"
    return result.verdict


def verdict_cell(result: claims_mod.ClaimResult, status_note: bool = True) -> str:
    d = result.decision
    parts = []
    gated = result.gate is not None and result.verdict == result.gate.kind
    if gated:
        parts.append(result.gate.why)
    elif result.scope is not None and result.verdict in verdicts.STATISTICAL:
        parts.append(result.scope.label())
    if statistics_text(result):
        parts.append(statistics_text(result))
    if result.choice is not None and choice_text(result):
        parts.append(choice_text(result))
    if result.verdict == verdicts.WITHHELD and d is not None:
        parts.append(f"the statistics say {d.statistical}, but " + "; ".join(result.guards))
    elif result.guards and d is not None:
        parts.append("; ".join(result.guards))
    if d is not None and d.power and not gated:
        parts.append(d.power)
    if d is not None and result.held_out_seeds:
        dropped = sorted(set(result.seeds) - set(result.held_out_seeds))
        if result.held_out is None:
            parts.append(f"without the selection seeds ({', '.join(map(str, dropped))}): {len(result.held_out_seeds)} seed(s), no interval")
        else:
            low, high = result.test.interval(result.held_out, d.level)
            parts.append(f"without the selection seeds ({', '.join(map(str, dropped))}): "
                         f"{_with_interval(result.test, result.held_out.mean, low, high)}, {d.held_out}")
    if result.counted:
        parts.append("count")
    if result.note and (status_note or result.verdict != verdicts.NOT_RUN):
        parts.append(result.note)
    return f"**{result.verdict}**" + (f" ({'; '.join(parts)})" if parts else "")


def choice_text(result: claims_mod.ClaimResult) -> str:
    """A claim with an open choice: each paper-consistent cell's verdict (with its interval at
    its Holm level), and the claim's own rows outside the cells."""
    choice = result.choice
    cells = []
    for value, cell in choice.cells if result.verdict != verdicts.NOT_RUN else []:  # not run: its note names the cells
        shown = effect_cell(cell)
        gated = cell.gate is not None and cell.verdict == cell.gate.kind
        cells.append(f"{value} (`{cell.claim['better']}` vs `{cell.claim['worse']}`) {cell.gate.label() if gated else cell.verdict}"
                     + (f", {shown}" if shown != "–" else ""))
    outside = choices.outside_text(result)
    outside = "" if outside in result.note else outside  # a claim without runs in its cells says it in its note
    return "; ".join(p for p in (f"{choice.option}: " + "; ".join(cells) if cells else "", outside) if p)


def _budget(rows: list[dict]) -> str:
    if not rows:
        return ""
    caps = sorted({int(r["epoch_cap"]) for r in rows})
    if caps == [0]:  # timing rows of a benchmark (RCRN Table 10), not training runs
        return f"benchmark, {len({int(r['seed']) for r in rows})} rounds"
    lrs = sorted({float(r["lr"]) for r in rows})
    return f"≤{'/'.join(map(str, caps))} epochs, {len(lrs)} lr, {report.hours_text(rows)}"


def _scaled(x, factor: float):
    return None if x is None else x * factor


HEADER = ["| claim | paper: better / worse | ours: better / worse | ours: effect, interval at its Holm level | paired t over seeds, 95% "
          "| p: raw / Holm / BH | verdict | seeds | budget | cite |",
          "|---|---:|---:|---:|---:|---:|---|---:|---|---|"]


def claim_line(result: claims_mod.ClaimResult, rows: list[dict]) -> str:
    claim = result.claim
    quantity = claim.get("quantity", "test")
    sign = "<" if claim.get("lower_is_better") else ">"
    factor, unit = DISPLAY_SCALE.get(quantity, (1.0, ""))
    ours = tuple(_scaled(v, factor) for v in result.ours)
    compared = {claims_mod.split_row(n) for n in result.compared or (claim["better"], claim["worse"])}
    budget = "no runs: counted" if result.counted and not result.seeds and "configs" in result.note else \
        _budget([r for r in rows if (r["encoder"], r["variant"]) in compared])
    what = (f"{claim['text']} (`{claim['better']}` {sign} `{claim['worse']}`, {claim['column']}"
            + ("" if quantity == "test" else f", {quantity}") + (f"; {unit}" if unit else "") + ")")
    unbuilt = "not built yet" in result.note or result.choice is not None
    return (f"| {what} | {_num(result.paper[0])} / {_num(result.paper[1])} | {_ours(ours[0], quantity)} / {_ours(ours[1], quantity)}"
            f" | {effect_cell(result)} | {t_cell(result)} | {p_cell(result)} | {verdict_cell(result, unbuilt)}"
            f" | {', '.join(map(str, result.seeds)) or '–'} | {budget or '–'} | {claim.get('cite', '')} |")


# ---------------------------------------------------------------------------------------------
# The opening: what was found


def _paper_name(registry: dict) -> str:
    return registry["paper"].upper()


def _counts(results) -> Counter:
    return Counter(r.verdict for r in results)


def _summary(counts: Counter) -> str:
    return ", ".join(f"{v} {counts[v]}" for v in verdicts.KINDS if counts[v])


def scope_of(result: claims_mod.ClaimResult) -> str:
    """An accuracy verdict's group in the counts: about the paper, in our setting, or its own kind
    (gated, not run, data missing)."""
    if result.verdict in verdicts.STATISTICAL and result.scope is not None:
        return result.scope.kind
    return result.verdict


def _accuracy_table(by_paper: dict[str, list[Section]]) -> list[str]:
    short = "/".join(SHORT.get(k, k) for k in STATISTICAL)
    other = (*gates.GATED, verdicts.DEPENDS, verdicts.NOT_RUN, verdicts.DATA_MISSING)
    lines = [f"| paper | claims | about the paper: {short} | in our setting: {short} | " + " | ".join(other) + " |",
             "|---|---:|---:|---:|" + "---:|" * len(other)]
    total: dict[str, Counter] = {}

    def cell(results) -> str:
        counts = _counts(results)
        return " / ".join(str(counts[k]) for k in STATISTICAL) if results else "–"

    every: list = []
    for paper, sections in by_paper.items():
        results = [r for s in sections if not s.device for r in s.results if is_accuracy(r.claim)]
        if not results:
            continue
        every += results
        lines.append(_accuracy_line(paper, results, other, cell))
    lines.append(_accuracy_line("**all**", every, other, cell, bold=True))
    return lines


def _accuracy_line(paper: str, results: list, other: tuple, cell, bold: bool = False) -> str:
    about = [r for r in results if scope_of(r) == gates.ABOUT_PAPER]
    ours = [r for r in results if scope_of(r) == gates.IN_OUR_SETTING]
    counts = _counts(results)
    b = "**" if bold else ""
    cells = [f"{b}{len(results)}{b}", cell(about), cell(ours), *(f"{b}{counts[k]}{b}" if counts[k] or bold else "–" for k in other)]
    return f"| {paper} | " + " | ".join(cells) + " |"


def headline(results: list) -> str:
    """The ledger's first line: accuracy verdicts about the papers and in our setting apart, the
    gated ones, those that depend on a choice the paper leaves open, the cost verdicts, and the
    claims without runs."""
    accuracy = [r for r in results if is_accuracy(r.claim)]
    parts = []
    for scope in (gates.ABOUT_PAPER, gates.IN_OUR_SETTING):
        mine = [r for r in accuracy if scope_of(r) == scope]
        parts.append(f"accuracy, {scope}: " + (_summary(_counts(mine)) if mine else "none"))
    gated = [r for r in accuracy if r.verdict in gates.GATED]
    if gated:
        parts.append(_summary(_counts(gated)))
    open_choice = [r for r in accuracy if r.verdict == verdicts.DEPENDS]
    if open_choice:
        parts.append(_summary(_counts(open_choice)))
    cost = [r for r in results if not is_accuracy(r.claim)
            and r.verdict in verdicts.STATISTICAL + (verdicts.REPRODUCED, verdicts.CONTRADICTED, verdicts.DEPENDS)]
    if cost:
        parts.append("cost and size: " + _summary(_counts(cost)))
    missing = [r for r in results if r.verdict in (verdicts.NOT_RUN, verdicts.DATA_MISSING)]
    if missing:
        parts.append(_summary(_counts(missing)))
    return f"**{len(results)} claims. " + "; ".join(parts) + ".**"


def _cost_table(by_paper: dict[str, list[Section]]) -> list[str]:
    devices = ("CPU", "GPU")
    short = "/".join(SHORT.get(k, k) for k in STATISTICAL)
    lines = [f"| paper | claims | on the CPU: {short} | on the GPU: {short} | counted: holds / fails | not run | data missing |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for paper, sections in by_paper.items():
        cost = [(s, r) for s in sections for r in s.results if not is_accuracy(r.claim)]
        if not cost:
            continue
        claims_n = len([1 for s, r in cost if not s.device])
        cells = []
        for device in devices:
            decided = [r for s, r in cost if not r.counted and r.verdict in STATISTICAL and device_of(r, s.rows) == device]
            counts = _counts(decided)
            cells.append(" / ".join(str(counts[k]) for k in STATISTICAL) if decided else "–")
        counted = [r for s, r in cost if r.counted and not s.device]
        counts = _counts(counted)
        held = f"{counts[verdicts.REPRODUCED]} / {counts[verdicts.CONTRADICTED]}" if counted else "–"
        own = _counts([r for s, r in cost if not s.device])
        lines.append(f"| {paper} | {claims_n} | {cells[0]} | {cells[1]} | {held} | {own[verdicts.NOT_RUN] or '–'} | "
                     f"{own[verdicts.DATA_MISSING] or '–'} |")
    return lines


def _where(section: Section) -> str:
    return f"{_paper_name(section.registry)} T{section.registry['table']}"


def _decided_accuracy(sections: list[Section]) -> list[str]:
    lines = ["| claim | table | ours: better − worse, interval at its Holm level | p: raw / Holm / BH | verdict | about |",
             "|---|---|---:|---:|---|---|"]
    for s in sections:
        for r in s.results:
            if is_accuracy(r.claim) and not s.device and r.decision is not None and r.decision.statistical in verdicts.DECIDED:
                verdict = r.verdict if r.verdict in (verdicts.DECIDED + (verdicts.INCONCLUSIVE,)) else f"{r.verdict} (statistics: {r.decision.statistical})"
                about = (r.gate.why if r.gate is not None and r.verdict == r.gate.kind
                         else r.scope.label() if r.scope is not None else "–")
                lines.append(f"| {r.claim['text']} | {_where(s)} | {effect_cell(r)} | {p_cell(r)} | **{verdict}** | {about} |")
    return lines if len(lines) > 2 else ["None."]


def _decided_cost(sections: list[Section]) -> list[str]:
    """Cost claims decided on any device: one line per claim, the CPU's and the GPU's side by side."""
    by_claim: dict[tuple[str, str], dict[str, tuple[Section, claims_mod.ClaimResult]]] = {}
    for s in sections:
        for r in s.results:
            if not is_accuracy(r.claim) and not r.counted and r.decision is not None:
                by_claim.setdefault((s.table, r.claim["id"]), {})[device_of(r, s.rows)] = (s, r)
    lines = ["| claim | table | on the CPU: ours, interval at its Holm level | verdict | on the GPU: ours, interval at its Holm level | verdict |",
             "|---|---|---:|---|---:|---|"]
    for (table, _), on in by_claim.items():
        if not any(r.decision.statistical in verdicts.DECIDED for _, r in on.values()):
            continue
        first = next(iter(on.values()))
        cells = []
        for device in ("CPU", "GPU"):
            if device not in on:
                cells += ["–", "–"]
                continue
            _, r = on[device]
            verdict = r.verdict if r.verdict != verdicts.WITHHELD else f"withheld (statistics: {r.decision.statistical})"
            cells += [effect_cell(r), f"**{verdict}**"]
        lines.append(f"| {first[1].claim['text']} | {_where(first[0])} | " + " | ".join(cells) + " |")
    return lines if len(lines) > 2 else ["None."]


def _counted_lines(sections: list[Section]) -> list[str]:
    lines = []
    for s in sections:
        for r in s.results:
            if r.counted and not s.device:
                lines.append(f"- {r.claim['text']} ({_where(s)}): **{r.verdict}**, {effect_cell(r)}.")
    return lines


def opening(sections: list[Section]) -> list[str]:
    by_paper: dict[str, list[Section]] = {}
    for s in sections:
        by_paper.setdefault(_paper_name(s.registry), []).append(s)
    own = [r for s in sections if not s.device for r in s.results]
    device = [r for s in sections if s.device for r in s.results]
    counted = sum(r.counted for r in own)
    head = [headline(own) + (f" Of the cost and size verdicts, {counted} are exact counts of parameters, not tests." if counted else "")]
    if device:
        names = sorted({f"{s.table}_{s.device}" for s in sections if s.device})
        head += ["", f"Decided again on evidence from another device ({', '.join(names)}): {len(device)} verdicts: {_summary(_counts(device))}."]
    tested = [t for t, _ in choices.expand(own)]  # a claim with an open choice: each of its cells
    unadjusted = Counter(r.decision.statistical if r.decision.size == 1 else _alone(r) for r in tested if r.decision is not None)
    head += ["", f"Each claim tested alone at 95%, before the correction, the {sum(unadjusted.values())} tested would read: "
             f"{_summary(unadjusted)} (the guards aside)."]
    return ["## What was found", "", *head, "", *RULE, "",
            "### Accuracy claims, per paper (verdicts after Holm's correction within the paper; reproduced / contradicted / "
            "smaller / inconclusive / withheld, about the paper and in our setting apart)", "", *_accuracy_table(by_paper), "",
            "### Cost claims, per paper: on the CPU and on the GPU side by side", "", *_cost_table(by_paper), "",
            "### The decided accuracy claims", "", *_decided_accuracy(sections), "",
            "### The decided cost claims, on the CPU and on the GPU", "", *_decided_cost(sections), "",
            *(["### Counted (exact parameter counts, not tests)", "", *_counted_lines(sections), ""] if counted else [])]


def _alone(result: claims_mod.ClaimResult) -> str:
    """The claim's verdict at 95% as a family of one (the reading without the correction)."""
    alone = replace(result, decision=None)
    verdicts.decide([alone])
    return alone.decision.statistical


# ---------------------------------------------------------------------------------------------


def sections_of(results_dir: Path, status_of_table=None) -> list[Section]:
    """Every registry table with claims, in the papers' order, on its own evidence and on any
    other device's (``<table>_cuda.csv``), decided together."""
    sections = []
    built = set(known_encoders())
    floor_map = floors.read_floors(results_dir)
    for path in sorted(REGISTRY.glob("*.yaml"), key=lambda p: natural_key(p.stem)):
        name = path.stem
        table_claims = claims_mod.load_claims(name)
        if not table_claims:
            continue
        registry = paper_table(name)
        csv_path = results_dir / f"{name}.csv"
        rows = evidence.read_csv(csv_path) if csv_path.exists() else []
        items = evidence.read_item_scores(results_dir / f"{name}.items.csv.gz")  # grouped once for all the table's claims
        missing_status = (status_of_table(name) if status_of_table else verdicts.NOT_RUN) if not rows else None
        link = f"[{name}]({name}.md)" if (results_dir / f"{name}.md").exists() else name
        sizes = evidence.read_parameter_counts(evidence.parameters_path(csv_path))
        results = table_results(name, table_claims, rows, items, missing_status, built, sizes, floor_map)
        title = f"{_paper_name(registry)} Table {registry['table']}: {registry['caption']} ({link})"
        sections.append(Section(name, registry, rows, results, title))
        for device, where in DEVICE_EVIDENCE.items():
            device_csv = results_dir / f"{name}_{device}.csv"
            if not device_csv.exists():
                continue
            device_rows = evidence.read_csv(device_csv)
            hardware = ", ".join(sorted({r["hardware"] for r in device_rows}))
            device_results = table_results(name, table_claims, device_rows, [], None, built)
            sections.append(Section(name, registry, device_rows, device_results,
                                    f"The same claims {where} ({hardware}; [{name}_{device}]({name}_{device}.md))", device, hardware))
    decide(sections)
    return sections


def build(results_dir: Path, status_of_table=None) -> str:
    """The ledger's Markdown. ``status_of_table(name)`` says why a table without evidence has
    none ("not run" or "data missing"); by default "not run". A table with evidence from
    another device (``<table>_cuda.csv``) gets a section deciding its claims on that evidence;
    those verdicts are counted on their own line, so each claim counts once."""
    sections = sections_of(results_dir, status_of_table)
    lines = ["# Claims ledger", "", "Generated by `make claims` from the committed evidence (`results/<table>.csv`); do not edit.", "",
             *opening(sections)]
    for s in sections:
        lines += [f"{'###' if s.device else '##'} {s.title}", "", *HEADER, *(claim_line(r, s.rows) for r in s.results), ""]
    return "\n".join(lines).rstrip("\n") + "\n"
