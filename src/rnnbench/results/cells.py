"""The cells a claim's verdict is shown in, one definition for the ledger (results/claims.md) and
the table pages: the effect with its interval at the claim's Holm level, the paired t, the
p-values, the verdict with its scope, gate and guards, and an open choice's cells."""
from __future__ import annotations

import math

from rnnbench.results import choices, verdicts
from rnnbench.results.claims import ClaimResult


def num(x: float | None, digits: int = 1) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def ours_cell(x: float | None, quantity: str) -> str:
    """Our mean: parameter counts as whole numbers (1,632,960), the rest at two decimals."""
    return "–" if x is None else f"{x:,.0f}" if quantity == "parameters" else f"{x:.2f}"


def confidence_text(level: float) -> str:
    text = f"{(1 - level) * 100:.2f}".rstrip("0").rstrip(".")
    return ">99.99%" if 1 - level > 0.9999 else f"{text}%"


def effect_value(test: verdicts.Hypothesis, x: float) -> str:
    return f"{math.exp(x):.2f}×" if test.effect == verdicts.LOG_RATIO else f"{x:+.2f}"


def with_interval(test: verdicts.Hypothesis, mean: float, low: float, high: float) -> str:
    """``+1.10 [-0.55, +2.74]``, or for a ratio ``0.89× [0.75, 1.07]``."""
    if test.effect == verdicts.LOG_RATIO:
        return f"{math.exp(mean):.2f}× [{math.exp(low):.2f}, {math.exp(high):.2f}]"
    return f"{mean:+.2f} [{low:+.2f}, {high:+.2f}]"


def effect_cell(result: ClaimResult, with_level: bool = True) -> str:
    """Ours: the effect (better − worse, or the ratio better / worse) with its interval at the
    claim's Holm level; a count where the claim was counted."""
    if result.counted:
        better, worse = result.ours
        return f"count: {better:,.0f} / {worse:,.0f} ({better / worse:.2f}×)"
    d = result.decision
    if d is None or result.estimate is None:
        return "–"
    low, high = d.interval
    shown = with_interval(result.test, result.estimate.mean, low, high)
    level = 2 * d.level if result.test.bounds is not None else d.level
    return f"{shown} at {confidence_text(level)}" if with_level else shown


def t_cell(result: ClaimResult) -> str:
    t = result.t
    if t is None or result.test is None:
        return "–"
    return with_interval(result.test, t.mean, t.low, t.high)


def p_text(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def p_cell(result: ClaimResult) -> str:
    d = result.decision
    return "–" if d is None else f"{p_text(d.p)} / {p_text(d.p_holm)} / {p_text(d.p_bh)}"


def statistics_text(result: ClaimResult) -> str:
    """What the statistics say where a gate or the minimum evidence set the verdict ("" elsewhere)."""
    d = result.decision
    if d is None:
        return ""
    if result.gate is not None:
        return f"the statistics say {d.statistical}" + (f", but {d.missing}" if d.missing else "")
    if d.missing:
        return f"the statistics say {d.statistical}, but {d.missing}"
    return ""


def verdict_cell(result: ClaimResult, status_note: bool = True) -> str:
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
                         f"{with_interval(result.test, result.held_out.mean, low, high)}, {d.held_out}")
    if result.counted:
        parts.append("count")
    if result.note and (status_note or result.verdict != verdicts.NOT_RUN):
        parts.append(result.note)
    return f"**{result.verdict}**" + (f" ({'; '.join(parts)})" if parts else "")


def choice_text(result: ClaimResult) -> str:
    """A claim with an open choice: each paper-consistent cell's verdict (with its interval at
    its Holm level), and the claim's own rows outside the cells."""
    choice = result.choice
    cells = []
    for value, cell in choice.cells if result.verdict != verdicts.NOT_RUN else []:  # not run: its note names the cells
        shown = effect_cell(cell)
        cells.append(f"{value} (`{cell.claim['better']}` vs `{cell.claim['worse']}`) {cell.label()}"
                     + (f", {shown}" if shown != "–" else ""))
    outside = choices.outside_text(result)
    outside = "" if outside in result.note else outside  # a claim without runs in its cells says it in its note
    option = f"`{choice.option}`" if "." in choice.option else choice.option  # a config key, as code (never capitalised)
    return "; ".join(p for p in (f"{option}: " + "; ".join(cells) if cells else "", outside) if p)
