"""Choices the paper leaves open: a claim decided in every cell consistent with the paper's text.

Where a paper leaves a choice open that its claim may rest on (MZU Table 6: how capMZU's
disagreement term is normalised), the registry declares it before any run of its cells is read:

    open_choices:
    - option: encoder.disagreement_normalizer       # what the paper leaves open
      claims: [cap-mzu-beats-gru-restaurant-ds]     # the claims it applies to
      cells:                                        # the cells consistent with the paper's text, no others
      - {value: token, better: mzu_cap/a_token, worse: dt_gru/fn3}
      - {value: sequence, better: mzu_cap/a_sequence, worse: dt_gru/fn3}
      why: "..."

Each cell is the claim with its rows replaced by the cell's (same column, the paper's numbers of
the claim's own rows), evaluated and gated as any claim, and decided with the paper's other
claims: every cell is one hypothesis of the paper's family (Holm). The claim's verdict
(``combine``):

- a cell without runs: **not run**, naming the cells without runs;
- every cell the same verdict: that verdict (a contradiction stands only where it holds in every
  cell), its numbers those of the least decisive cell (the largest Holm p);
- otherwise: **depends on an unspecified choice** (the option and each value's verdict).

The claim's own rows, where they are not a paper-consistent cell, decide nothing: they are
decided alone (a family of one, at 95%) and shown beside as "outside the paper's cells".
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

from rnnbench.results import settings

DEPENDS = "depends on an unspecified choice"
_NO_RUNS = ("not run", "data missing")


@dataclass
class Choice:
    """A claim's open choice: its option, each value's cell (a ``ClaimResult``), and the claim on
    its own rows (``outside``: the rows the claim names, not a paper-consistent cell)."""

    option: str
    why: str
    cells: list  # [(value, ClaimResult)]
    outside: object | None = None
    rule: str = "open"  # "open": a choice the paper leaves open; "setting": the ladder's rungs (results/settings.py)
    chosen: int | None = None  # a setting's chosen rung


def check_registry(registry: dict, where: str, claim_ids: set[str]) -> None:
    """The table's ``open_choices``, checked: one line naming the file and what is wrong."""
    entries = registry.get("open_choices")
    if entries is None:
        return
    if not isinstance(entries, list):
        raise ValueError(f"{where}: open_choices is a list of entries (option, claims, cells, why)")
    seen: set[str] = set()
    for entry in entries:
        if not isinstance(entry, dict):
            raise ValueError(f"{where}: an open_choices entry is a mapping (option, claims, cells, why)")
        missing = {"option", "claims", "cells", "why"} - set(entry)
        if missing:
            raise ValueError(f"{where}: open choice {entry.get('option', '?')!r} lacks {', '.join(sorted(missing))}")
        name = f"{where}: open choice {entry['option']!r}"
        if not entry["claims"] or not isinstance(entry["claims"], list):
            raise ValueError(f"{name}: claims is a non-empty list of claim ids")
        for claim_id in entry["claims"]:
            if claim_id not in claim_ids:
                raise ValueError(f"{name}: {claim_id!r} is not a claim id of the table")
            if claim_id in seen:
                raise ValueError(f"{name}: claim {claim_id!r} has more than one open choice")
            seen.add(claim_id)
        cells = entry["cells"]
        if not isinstance(cells, list) or len(cells) < 2:
            raise ValueError(f"{name}: cells lists two or more paper-consistent cells (value, better, worse)")
        values = []
        for cell in cells:
            if not isinstance(cell, dict) or {"value", "better", "worse"} - set(cell):
                raise ValueError(f"{name}: a cell names its value, better and worse rows (encoder[/variant])")
            values.append(str(cell["value"]))
        if len(set(values)) != len(values):
            raise ValueError(f"{name}: two cells share a value")


def declared(registry: dict, claim_id: str) -> dict | None:
    """The open choice the registry declares for a claim, or None."""
    for entry in registry.get("open_choices") or []:
        if claim_id in entry.get("claims", []):
            return entry
    return None


def expand(results: list) -> list[tuple[object, object]]:
    """(result to decide, the claim it belongs to): a claim with an open choice by its cells."""
    out = []
    for r in results:
        choice = getattr(r, "choice", None)
        out += [(cell, r) for _, cell in choice.cells] if choice is not None else [(r, r)]
    return out


def _effect(result) -> str:
    d, estimate = getattr(result, "decision", None), getattr(result, "estimate", None)
    if d is None or estimate is None or result.test is None:
        return ""
    if result.test.effect == "log ratio":
        return f", {math.exp(estimate.mean):.2f}× [{math.exp(d.interval[0]):.2f}, {math.exp(d.interval[1]):.2f}]"
    return f", {estimate.mean:+.2f} [{d.interval[0]:+.2f}, {d.interval[1]:+.2f}]"


def outside_text(result) -> str:
    """The claim's own rows, decided alone: "outside the paper's cells (`a` vs `b`, alone at 95%): verdict"."""
    outside = result.choice.outside
    if outside is None:
        return ""
    better, worse = outside.compared or (result.claim["better"], result.claim["worse"])
    d = outside.decision
    statistics = f" (the statistics say {d.statistical})" if d is not None and d.statistical != outside.verdict else ""
    return f"outside the paper's cells (`{better}` vs `{worse}`, alone at 95%): {outside.label()}{statistics}{_effect(outside)}"


def cells_text(result) -> str:
    """"option: value verdict; value verdict; ..."."""
    choice = result.choice
    return f"{choice.option}: " + "; ".join(f"{value} {cell.verdict}" for value, cell in choice.cells)


def combine(result) -> None:
    """The claim's verdict from its cells' (decided already), set on ``result`` in place."""
    choice = result.choice
    if choice.rule == settings.SETTING:
        if settings.directions_differ(choice):
            _clear(result)
            result.verdict, result.note = settings.DEPENDS_ON_SETTING, ""
        else:
            settings.take_headline(result)
        return
    cells = [cell for _, cell in choice.cells]
    without = [(value, cell) for value, cell in choice.cells if cell.verdict in _NO_RUNS]
    if without:
        _clear(result)
        result.verdict = "not run"
        named = ", ".join(f"{value} (`{cell.claim['better']}` vs `{cell.claim['worse']}`)" for value, cell in without)
        result.note = "; ".join(n for n in (f"no runs of the paper-consistent cell(s) {named} ({choice.option})", outside_text(result)) if n)
        return
    verdicts_seen = {cell.verdict for cell in cells}
    if len(verdicts_seen) == 1:
        decided = [c for c in cells if c.decision is not None]
        least = max(decided, key=lambda c: c.decision.p_holm) if decided else cells[0]
        for f in fields(least):
            if f.name not in ("claim", "table", "paper", "choice"):
                setattr(result, f.name, getattr(least, f.name))
        value = next(v for v, c in choice.cells if c is least)
        result.note = "; ".join(n for n in (f"the numbers of the least decisive cell ({choice.option} = {value})", least.note) if n)
        return
    _clear(result)
    result.verdict = DEPENDS
    result.note = ""


def _clear(result) -> None:
    """The claim's own numbers emptied: its verdict comes from several cells, none of which it shows alone."""
    blank = {"seeds": [], "t": None, "estimate": None, "held_out": None, "held_out_seeds": [], "test": None, "guards": [],
             "price": None, "decision": None, "gate": None, "scope": None, "ours": (None, None),
             "compared": (result.claim["better"], result.claim["worse"]), "counted": False}
    for key, value in blank.items():
        setattr(result, key, value)
