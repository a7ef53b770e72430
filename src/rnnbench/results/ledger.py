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

from collections import Counter
from dataclasses import replace
from pathlib import Path

from rnnbench.results import cells as shown
from rnnbench.results import claims as claims_mod
from rnnbench.results import choices, decisions, gates, settings, timing, verdicts
from rnnbench.results.decisions import DEVICE_EVIDENCE, Section, device_of, is_accuracy, paper_name  # noqa: F401 - the ledger's names

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
    "twice the paper's std), otherwise **in our setting**, with the reference row's gap. An accuracy claim is reproduced,",
    "smaller than claimed or contradicted only on 5 paired seeds or more, and smaller than claimed only with an interval",
    "narrower than half the paper's difference. **depends on an unspecified choice**: the paper leaves open a choice its claim may rest on;",
    "the claim is decided in every cell consistent with the paper's text (each a hypothesis of the paper's family), and the",
    "cells' verdicts differ (a contradiction stands only where it holds in every cell); the claim's own rows, where not such a",
    "cell, are shown beside as \"outside the paper's cells\" and decide nothing.",
]
# Said once a table is run at several rungs of the regime ladder (results/settings.py).
SETTING_RULE = [
    "**depends on the setting**: a table run at several rungs of the regime ladder (results/regime_ladder.md) decides the",
    "claim at each rung with runs, and two rungs decide it in opposite directions; elsewhere the claim reads its chosen rung's",
    "verdict, each rung's beside.",
]

# Quantities too small to read at two decimals in their own unit: our means shown scaled.
DISPLAY_SCALE = {"inference_seconds_per_example": (1000.0, "ours in ms")}
STATISTICAL = verdicts.STATISTICAL
SHORT = {verdicts.SMALLER: "smaller"}


def _budget(rows: list[dict]) -> str:
    if not rows:
        return ""
    caps = sorted({int(r["epoch_cap"]) for r in rows})
    if caps == [0]:  # timing rows of a benchmark (RCRN Table 10), not training runs
        return f"benchmark, {len({int(r['seed']) for r in rows})} rounds"
    lrs = sorted({float(r["lr"]) for r in rows})
    return f"≤{'/'.join(map(str, caps))} epochs, {len(lrs)} lr, {timing.hours_text(rows)}"


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
    return (f"| {what} | {shown.num(result.paper[0])} / {shown.num(result.paper[1])} | {shown.ours_cell(ours[0], quantity)} / {shown.ours_cell(ours[1], quantity)}"
            f" | {shown.effect_cell(result)} | {shown.t_cell(result)} | {shown.p_cell(result)} | {shown.verdict_cell(result, unbuilt)}"
            f" | {', '.join(map(str, result.seeds)) or '–'} | {budget or '–'} | {claim.get('cite', '')} |")


# ---------------------------------------------------------------------------------------------
# The opening: what was found


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
    seen = {r.verdict for sections in by_paper.values() for s in sections for r in s.results}
    # "depends on the setting" has a column once a claim has that verdict (tables run at one rung have none)
    other = (*gates.GATED, verdicts.DEPENDS, *[k for k in (verdicts.DEPENDS_ON_SETTING,) if k in seen],
             verdicts.NOT_RUN, verdicts.DATA_MISSING)
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
    for depends in (verdicts.DEPENDS, verdicts.DEPENDS_ON_SETTING):
        mine = [r for r in accuracy if r.verdict == depends]
        if mine:
            parts.append(_summary(_counts(mine)))
    cost = [r for r in results if not is_accuracy(r.claim)
            and r.verdict in verdicts.STATISTICAL + (verdicts.DEPENDS, verdicts.DEPENDS_ON_SETTING)]
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
    return f"{paper_name(section.registry)} T{section.registry['table']}"


def _decided_accuracy(sections: list[Section]) -> list[str]:
    lines = ["| claim | table | ours: better − worse, interval at its Holm level | p: raw / Holm / BH | verdict | about |",
             "|---|---|---:|---:|---|---|"]
    for s in sections:
        for r in s.results:
            if is_accuracy(r.claim) and not s.device and r.decision is not None and r.decision.statistical in verdicts.DECIDED:
                verdict = r.verdict if r.verdict in (verdicts.DECIDED + (verdicts.INCONCLUSIVE,)) else f"{r.verdict} (statistics: {r.decision.statistical})"
                about = (r.gate.why if r.gate is not None and r.verdict == r.gate.kind
                         else r.scope.label() if r.scope is not None else "–")
                lines.append(f"| {r.claim['text']} | {_where(s)} | {shown.effect_cell(r)} | {shown.p_cell(r)} | **{verdict}** | {about} |")
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
            cells += [shown.effect_cell(r), f"**{verdict}**"]
        lines.append(f"| {first[1].claim['text']} | {_where(first[0])} | " + " | ".join(cells) + " |")
    return lines if len(lines) > 2 else ["None."]


def _counted_lines(sections: list[Section]) -> list[str]:
    lines = []
    for s in sections:
        for r in s.results:
            if r.counted and not s.device:
                lines.append(f"- {r.claim['text']} ({_where(s)}): **{r.verdict}**, {shown.effect_cell(r)}.")
    return lines


def opening(sections: list[Section]) -> list[str]:
    by_paper: dict[str, list[Section]] = {}
    for s in sections:
        by_paper.setdefault(paper_name(s.registry), []).append(s)
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
    rule = RULE + (SETTING_RULE if any(r.choice is not None and r.choice.rule == settings.SETTING for r in own) else [])
    return ["## What was found", "", *head, "", *rule, "",
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


def build(results_dir: Path, status_of_table=None) -> str:
    """The ledger's Markdown. ``status_of_table(name)`` says why a table without evidence has
    none ("not run" or "data missing"); by default "not run". A table with evidence from
    another device (``<table>_cuda.csv``) gets a section deciding its claims on that evidence;
    those verdicts are counted on their own line, so each claim counts once."""
    sections = decisions.decided(results_dir, status_of_table)
    lines = ["# Claims ledger", "", "Generated by `make claims` from the committed evidence (`results/<table>.csv`); do not edit.", "",
             *opening(sections)]
    for s in sections:
        lines += [f"{'###' if s.device else '##'} {s.title}", "", *HEADER, *(claim_line(r, s.rows) for r in s.results), ""]
    return "\n".join(lines).rstrip("\n") + "\n"
