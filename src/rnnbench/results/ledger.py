"""The claims ledger, results/claims.md: every claim of every paper table, with the paper's
numbers, ours, the interval, the verdict, the seeds and the budget, from the committed
evidence CSVs alone (``make claims``)."""
from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

from rnnbench.encoders.build import known_encoders
from rnnbench.results import claims as claims_mod
from rnnbench.results import evidence, report, stats
from rnnbench.results.tables import REGISTRY, paper_table

VERDICT_HELP = [
    "How to read a verdict. For each claim \"A beats B\" we pair our runs of A and B by seed (the same seed gives both",
    "the same data order) and take the 95% t interval of the mean difference A − B over seeds; for test metrics that",
    "are a mean over items (accuracy, MAP, MRR) also a paired bootstrap over test items (10,000 resamples).",
    "**reproduced**: every interval excludes 0 in the paper's direction; **contradicted**: every interval excludes 0",
    "the other way; **inconclusive**: an interval contains 0 (or the two disagree), so our runs cannot tell;",
    "**not run**: no runs of one of the two rows under the protocol yet; **data missing**: the dataset is not in",
    "the data folder. Cost claims (seconds, parameters) use the t interval over seeds only; a parameter claim whose rows",
    "have no runs is decided on the counts their experiment configs build (exact; no seeds). A verdict against a row",
    "whose runs stopped at the epoch cap (best dev epoch at the cap: not converged) is given as **inconclusive**,",
    "with a note: a longer cap could change it. A time claim whose paired runs were timed differently (another",
    "device, processor or thread count) is **inconclusive**: the times do not compare. A claim of size (\"dramatically",
    "faster\", 4 vs 16 min) is judged on the ratio against the factor its registry entry states (min_factor).",
]


def _budget(rows: list[dict]) -> str:
    if not rows:
        return ""
    caps = sorted({int(r["epoch_cap"]) for r in rows})
    if caps == [0]:  # timing rows of a benchmark (RCRN Table 10), not training runs
        return f"benchmark, {len({int(r['seed']) for r in rows})} rounds"
    lrs = sorted({float(r["lr"]) for r in rows})
    return f"≤{'/'.join(map(str, caps))} epochs, {len(lrs)} lr, {report.hours_text(rows)}"


def _num(x: float | None, digits: int = 1) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _ours(x: float | None, quantity: str) -> str:
    """Our mean: parameter counts as whole numbers (1,632,960), the rest at two decimals."""
    return "–" if x is None else f"{x:,.0f}" if quantity == "parameters" else f"{x:.2f}"


# Evidence of the same table measured on another device, decided again beside the main evidence
# (the paper's cost claims are about a GPU; `make gpu-check` writes <table>_cuda.csv on one).
DEVICE_EVIDENCE = {"cuda": "on the GPU"}
HEADER = ["| claim | paper: better / worse | ours: better / worse | ours: better − worse, 95% CI (seeds) | bootstrap over items | verdict | seeds | budget | cite |",
          "|---|---:|---:|---:|---:|---|---:|---|---|"]


# Quantities too small to read at two decimals in their own unit: shown scaled (the verdict is unchanged).
DISPLAY_SCALE = {"inference_seconds_per_example": (1000.0, "ours in ms")}


def _scaled(x, factor: float):
    if x is None:
        return None
    return replace(x, mean=x.mean * factor, low=x.low * factor, high=x.high * factor) if hasattr(x, "low") else x * factor


def _claim_lines(name: str, claims: list[dict], rows: list[dict], items, missing_status, built: set, counts: Counter,
                 sizes: dict | None = None) -> list[str]:
    lines = []
    for claim in claims:
        if missing_status:
            # No runs (the data may be absent): a size claim can still be decided on the counted sizes.
            result = claims_mod.evaluate(name, claim, [], [], counts=sizes) if sizes and claim.get("quantity") == "parameters" else None
            if result is None or not result.counted:
                result = claims_mod.ClaimResult(name, claim, claims_mod.paper_values(name, claim), (None, None), verdict=missing_status)
        else:
            result = claims_mod.evaluate(name, claim, rows, items, counts=sizes)
        unbuilt = [claims_mod.split_row(claim[s])[0] for s in ("better", "worse") if claims_mod.split_row(claim[s])[0] not in built]
        if unbuilt and result.verdict in (stats.NOT_RUN, stats.DATA_MISSING):
            result.note = f"{', '.join(f'`{u}`' for u in unbuilt)} not built yet"
        counts[result.verdict] += 1
        sign = "<" if claim.get("lower_is_better") else ">"
        factor, unit = DISPLAY_SCALE.get(claim.get("quantity", "test"), (1.0, ""))
        ours = tuple(_scaled(v, factor) for v in result.ours)
        compared = {claims_mod.split_row(n) for n in result.compared or (claim["better"], claim["worse"])}
        budget = _budget([r for r in rows if (r["encoder"], r["variant"]) in compared])  # every run of those rows, no other variant
        if result.counted:
            budget = "no runs: counted"
        lines.append(
            f"| {claim['text']} (`{claim['better']}` {sign} `{claim['worse']}`, {claim['column']}"
            + ("" if claim.get("quantity", "test") == "test" else f", {claim['quantity']}") + (f"; {unit}" if unit else "") + ")"
            f" | {_num(result.paper[0])} / {_num(result.paper[1])} | {_ours(ours[0], claim.get('quantity', 'test'))} / {_ours(ours[1], claim.get('quantity', 'test'))}"
            f" | {report.fmt_interval(_scaled(result.t, factor))} | {report.fmt_interval(_scaled(result.bootstrap, factor))} | **{result.verdict}**"
            f"{' (' + result.note + ')' if result.note and (result.verdict != stats.NOT_RUN or unbuilt) else ''}"
            f" | {', '.join(map(str, result.seeds)) or '–'} | {budget or '–'} | {claim.get('cite', '')} |")
    return lines


def _summary(counts: Counter) -> str:
    return ", ".join(f"{v} {counts[v]}" for v in (stats.REPRODUCED, stats.CONTRADICTED, stats.INCONCLUSIVE, stats.NOT_RUN, stats.DATA_MISSING) if counts[v])


def build(results_dir: Path, status_of_table=None) -> str:
    """The ledger's Markdown. ``status_of_table(name)`` says why a table without evidence has
    none ("not run" or "data missing"); by default "not run". A table with evidence from
    another device (``<table>_cuda.csv``) gets a second section deciding its claims on that
    evidence; those verdicts are counted on their own line, so each claim counts once."""
    lines = ["# Claims ledger", "", "Generated by `make claims` from the committed evidence (`results/<table>.csv`); do not edit.", "",
             *VERDICT_HELP, ""]
    body: list[str] = []
    counts: Counter = Counter()
    device_counts: Counter = Counter()
    device_tables: list[str] = []
    built = set(known_encoders())
    for path in sorted(REGISTRY.glob("*.yaml")):
        name = path.stem
        claims = claims_mod.load_claims(name)
        if not claims:
            continue
        registry = paper_table(name)
        csv_path = results_dir / f"{name}.csv"
        rows = evidence.read_csv(csv_path) if csv_path.exists() else []
        items = evidence.read_items(results_dir / f"{name}.items.csv.gz")
        missing_status = (status_of_table(name) if status_of_table else stats.NOT_RUN) if not rows else None
        link = f"[{name}]({name}.md)" if (results_dir / f"{name}.md").exists() else name
        body += [f"## {registry['paper'].upper()} Table {registry['table']}: {registry['caption']} ({link})", "", *HEADER]
        sizes = evidence.read_parameter_counts(evidence.parameters_path(csv_path))
        body += _claim_lines(name, claims, rows, items, missing_status, built, counts, sizes)
        body.append("")
        for device, where in DEVICE_EVIDENCE.items():
            device_csv = results_dir / f"{name}_{device}.csv"
            if not device_csv.exists():
                continue
            device_rows = evidence.read_csv(device_csv)
            hardware = ", ".join(sorted({r["hardware"] for r in device_rows}))
            device_tables.append(f"{name}_{device}")
            body += [f"### The same claims {where} ({hardware}; [{name}_{device}]({name}_{device}.md))", "", *HEADER]
            body += _claim_lines(name, claims, device_rows, [], None, built, device_counts)
            body.append("")
    head = [f"**{sum(counts.values())} claims: {_summary(counts)}.**", ""]
    if device_counts:
        head += [f"Decided again on evidence from another device ({', '.join(device_tables)}): "
                 f"{sum(device_counts.values())} verdicts: {_summary(device_counts)}.", ""]
    return "\n".join([*lines, *head, *body]).rstrip("\n") + "\n"
