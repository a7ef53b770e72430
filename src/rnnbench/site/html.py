"""HTML building blocks of the report: the page frame, escaping, verdict badges, numbers.

Every page is written relative to the site's root (``root``: "" or "../"), so the site works
from ``file://`` and from any static host, with no server and nothing fetched from elsewhere.
"""
from __future__ import annotations

import html
import re

NAV = [("index.html", "Home"), ("ledger.html", "Ledger"), ("tables/index.html", "Tables"), ("cost.html", "Cost"),
       ("runs.html", "Your runs")]
VERDICT_ORDER = ["reproduced", "smaller than claimed", "contradicted", "inconclusive", "withheld", "pipeline check", "not evidence",
                 "not tested", "depends on an unspecified choice", "depends on the setting", "not run", "data missing"]
# One colour per verdict: the badges (CSS, generated from this) and the claim plots' intervals.
VERDICT_COLOURS = {"reproduced": "#1a7f37", "smaller than claimed": "#9a6700", "contradicted": "#cf222e",
                   "inconclusive": "#6e7781", "withheld": "#bc4c00", "pipeline check": "#0969da", "not evidence": "#57606a",
                   "not tested": "#a475f9", "depends on an unspecified choice": "#0a7ea4",
                   "depends on the setting": "#1b7c83", "not run": "#b0b7bf", "data missing": "#8250df"}


def esc(value) -> str:
    return html.escape("" if value is None else str(value))


def slug(text: str) -> str:
    """A CSS class or file name from free text: "not run" -> "not-run"."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def verdict_badge(verdict: str) -> str:
    return f'<span class="verdict v-{slug(verdict)}">{esc(verdict)}</span>'


def verdict_rank(verdict: str) -> int:
    return VERDICT_ORDER.index(verdict) if verdict in VERDICT_ORDER else len(VERDICT_ORDER)


def num(value: float | None, digits: int = 2, signed: bool = False) -> str:
    """A number for a cell: "–" for none, thousands separated when large."""
    if value is None:
        return "–"
    if abs(value) >= 10000:
        return f"{value:+,.0f}" if signed else f"{value:,.0f}"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def p_text(p: float | None) -> str:
    if p is None:
        return "–"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def page(title: str, body: str, root: str = "", current: str = "", description: str = "") -> str:
    """A whole page: head, the navigation bar (``current`` marks the section), ``body``, the script."""
    here = ' class="here"'
    links = "".join(f'<a href="{root}{href}"{here if href == current else ""}>{label}</a>' for href, label in NAV)
    meta = f'<meta name="description" content="{esc(description)}">' if description else ""
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(title)} · rnnbench</title>
{meta}
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{root}assets/site.css">
</head>
<body>
<header class="top"><nav><a class="brand" href="{root}index.html">rnnbench</a>{links}</nav></header>
<main>
{body}
</main>
<footer>Built by <code>make report</code> (<code>rnnbench report</code>) from the committed evidence in <code>results/</code> and the runs under <code>runs/</code>.</footer>
<script src="{root}assets/site.js"></script>
</body>
</html>
"""
