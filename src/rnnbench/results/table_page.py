"""A paper table rendered from its evidence CSV alone: ours beside the paper's, cost and
trust per row, the claims' verdicts, and the learning curves.

``render`` reads nothing but the evidence rows (``results/<table>.csv`` and its items
file), the registry and the experiments' configs, so a committed table can be
regenerated, and checked, when the runs themselves are gone.
"""
from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path

from scipy import stats as sstats

from rnnbench.errors import RnnbenchError
from rnnbench.results import cells as shown
from rnnbench.results import claims as claims_mod
from rnnbench.results import decisions
from rnnbench.results import evidence, floors, gates, verdicts
from rnnbench.results import deviations, timing
from rnnbench.results.evidence import did_not_train, needs_rerun, not_converged
from rnnbench.results.dropout_choice import DropoutChoice
from rnnbench.results.rate_choice import RateChoice
from rnnbench.results.tables import PAPER_NOTE, build_rows, latex, markdown


class MixedVersions(RnnbenchError):
    """A table's reported runs were made by different versions of one component."""


@dataclass
class CostRow:
    model: str
    encoder: str
    variant: str
    lr: str  # the chosen rate; one per dataset, named, where a table's experiments chose differently
    seeds: list[int]
    parameters: int
    seconds_per_epoch: str  # the mean; one per dataset, named, where a table's experiments differ in it
    ms_per_example: str  # likewise; "–" where no run timed its test pass
    selected: str  # the selected epochs, one per run (grouped by dataset where there are several)
    cap: str  # the epoch cap; one per dataset, named, where a table's experiments differ in it
    not_converged: int
    cpu_hours: float
    untrained: int = 0  # runs that did not train, or need a re-run under the patience rule
    gpu_hours: float = 0.0  # runs trained on a GPU: device hours, never added to the CPU's


def reported(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r.get("reported") == "yes"]


def untrained(row: dict) -> bool:
    """Left out of a row's mean: the run did not train, or needs a re-run under the patience rule."""
    return did_not_train(row) or needs_rerun(row)


def untrained_lines(rows: list[dict]) -> list[str]:
    """Footnotes naming the reported runs left out of the means by the patience rule, and why."""
    lines = []
    for test, what in ((did_not_train, "Did not train (no dev score beat the dev split's majority-class score "
                                       "within the epoch cap; in the evidence, not averaged)"),
                       (needs_rerun, "To re-run under the patience rule (made before it: early stopping ended them before "
                                     "their dev score beat the majority-class score, where patience now starts counting; "
                                     "`make table-...` re-runs them; not averaged)")):
        runs: dict[tuple, list[dict]] = {}  # one entry per run, whichever columns it fills
        for r in reported(rows):
            if test(r):
                runs.setdefault((r["encoder"], r["variant"], int(r["seed"]), r["run"]), []).append(r)
        if runs:
            named = "; ".join(f"`{enc}`{' (' + variant + ')' if variant else ''} seed {seed} on {', '.join(r['dataset'] for r in rs)}"
                              + (f" (the majority-class dev score it never beat: {float(rs[0]['majority']):.1f})" if rs[0].get("majority", "") != "" else "")
                              for (enc, variant, seed, _), rs in sorted(runs.items()))
            lines.append(f"{what}: {named}.")
    return lines


def collapsed_lines(rows: list[dict]) -> list[str]:
    """A footnote naming the reported runs that collapsed (``guards.collapsed``): averaged in the
    row's mean, but every claim on their row is withheld."""
    from rnnbench.results import guards

    by_row: dict[str, list[dict]] = {}
    for r in reported(rows):
        if not untrained(r) and not str(r.get("metric", "")).startswith("stats:"):
            by_row.setdefault(f"{r['encoder']}/{r['variant']}" if r["variant"] else r["encoder"], []).append(r)
    notes = guards.collapsed(by_row)
    return [f"Collapsed runs (averaged in the row's mean; the claims on their row are withheld): {'; '.join(notes)}."] if notes else []


def check_versions(rows: list[dict]) -> None:
    """Refuse a table one of whose rows averages runs of one component at different versions.

    A version reads ``implementation:number``; two implementations of one role are two components
    (RCRN Table 8's TrecQA and WikiQA readers), and only one implementation at two numbers is mixed.
    The check is per row (encoder and variant): a component's version may depend on its options
    (``version_for``: a fix to Res-V2 moves only the rows that use Res-V2), so two rows of one
    encoder may stand at two versions, each row's runs at one."""
    seen: dict[str, dict[str, list[str]]] = {}
    for r in reported(rows):
        row = r["encoder"] + (f" ({r['variant']})" if r.get("variant") else "")
        for component, version in json.loads(r["versions"] or "{}").items():
            role = f"{component} of row {row}"
            implementation = version.rpartition(":")[0]
            key = f"{role} ({implementation})" if implementation else role
            seen.setdefault(key, {}).setdefault(version, []).append(r["run"])
    mixed = {c: v for c, v in seen.items() if len(v) > 1}
    if mixed:
        parts = [f"{c}: " + "; ".join(f"{ver} ({', '.join(sorted(set(runs)))})" for ver, runs in v.items()) for c, v in mixed.items()]
        raise MixedVersions("runs of different component versions cannot share a table (" + " | ".join(parts)
                            + "); re-run the runs of the older version (make table-...)")


def _per_dataset(runs, value, summary=lambda values: values[0], collapse: bool = True) -> str:
    """One value (``0.001``), or one per dataset where the runs differ (``0.001 (Restaurant-DS); 0.0005 (Laptop-DS)``):
    a table of several experiments (MZU Table 6's two domains, RCRN Table 8's TrecQA and WikiQA) chose a rate,
    set a cap and costs differently in each. ``summary`` turns a dataset's values into its text; without
    ``collapse`` several datasets are named even where their texts agree (the selected epochs: one per run)."""
    by_dataset: dict[str, list] = {}
    for r in runs:
        v = value(r)
        if v is not None:
            by_dataset.setdefault(r["dataset"], []).append(v)
    shown = {d: summary(vs) for d, vs in by_dataset.items()}
    if not shown:
        return "–"
    if len(set(shown.values())) == 1 and (collapse or len(shown) == 1):
        return next(iter(shown.values()))
    return "; ".join(f"{v} ({d})" for d, v in shown.items())


def _per_device(runs, value, summary) -> str:
    """``_per_dataset`` of a time, split by device where a row's runs trained on both a CPU and a
    GPU (RCRN Table 4: 3l_bilstm seeds on an H100 and on a CPU): one mean over both would describe
    neither (``121.9 on CPU; 15.0 on GPU``)."""
    runs = list(runs)
    kinds = {"GPU" if timing.on_gpu(r) else "CPU" for r in runs}
    if len(kinds) < 2:
        return _per_dataset(runs, value, summary)
    return "; ".join(f"{_per_dataset([r for r in runs if timing.on_gpu(r) == (kind == 'GPU')], value, summary)} on {kind}"
                     for kind in sorted(kinds))


def cost_rows(rows: list[dict], names: dict[tuple[str, str], str]) -> list[CostRow]:
    """One cost row per (encoder, variant), each run's cost read from a column of its own test
    pass (not a re-scored one: ``evidence.rescored``)."""
    out = []
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in reported(rows):
        groups.setdefault((r["encoder"], r["variant"]), []).append(r)
    for (enc, variant), rs in groups.items():
        first: dict[str, dict] = {}
        for r in sorted(rs, key=evidence.rescored):  # stable: its own columns first
            first.setdefault(r["run"], r)
        by_run = first.values()  # one row per run, its first own column (a run fills several; its cost is the same in each)
        all_runs = [r for r in rows if r["encoder"] == enc and r["variant"] == variant]
        out.append(CostRow(
            model=names.get((enc, variant), enc), encoder=enc, variant=variant, lr=_per_dataset(by_run, lambda r: f"{float(r['lr']):g}"),
            seeds=sorted({int(r["seed"]) for r in by_run}), parameters=int(rs[0]["parameters"]),
            seconds_per_epoch=_per_device(by_run, lambda r: float(r["seconds_per_epoch"]), lambda v: f"{statistics.fmean(v):.1f}"),
            ms_per_example=_per_device(by_run, lambda r: float(r["inference_seconds_per_example"]) if r["inference_seconds_per_example"] != "" else None,
                                        lambda v: f"{statistics.fmean(v) * 1000:.2f}"),
            selected=_per_dataset(by_run, lambda r: int(r["selected_epoch"]), lambda v: ", ".join(map(str, sorted(v))), collapse=False),
            cap=_per_dataset(by_run, lambda r: str(int(r["epoch_cap"]))),
            not_converged=sum(not_converged(r) for r in by_run), cpu_hours=timing.cpu_hours(all_runs), gpu_hours=timing.gpu_hours(all_runs),
            untrained=sum(untrained(r) for r in by_run)))
    return out


def mean_interval(values: list[float], confidence: float) -> tuple[float, float] | None:
    if len(values) < 2:
        return None
    mean, sd = statistics.fmean(values), statistics.stdev(values)
    half = float(sstats.t.ppf(0.5 + confidence / 2, len(values) - 1)) * sd / math.sqrt(len(values))
    return mean - half, mean + half


def cost_markdown(costs: list[CostRow], rows: list[dict], columns: list[str], confidence: float, digits: int) -> list[str]:
    pct = f"{confidence * 100:g}%"
    head = ["| Model | lr (chosen on dev) | seeds | " + " | ".join(f"{c}: {pct} CI of mean" for c in columns)
            + " | parameters | s / training epoch | ms / test example | selected epoch / cap | converged | CPU h (all runs) |",
            "|---|---:|---:|" + "---:|" * len(columns) + "---:|---:|---:|---|---|---:|"]
    lines = []
    for c in costs:
        cis = []
        for column in columns:
            values = [float(r["test"]) for r in reported(rows) if r["encoder"] == c.encoder and r["variant"] == c.variant
                      and r["dataset"] == column and not untrained(r)]
            ci = mean_interval(values, confidence)
            cis.append(f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]" if ci else "–")
        conv = "yes" if not c.not_converged else f"**no** ({c.not_converged} of {len(c.seeds)} runs)"
        if c.untrained:
            conv += f"; {c.untrained} of {len(c.seeds)} runs **did not train** or need a re-run"
        lines.append(f"| {c.model} | {c.lr} | {len(c.seeds)} | " + " | ".join(cis)
                     + f" | {c.parameters:,} | {c.seconds_per_epoch} | {c.ms_per_example} | {c.selected} / {c.cap} | {conv} | {timing.hours_cell(c.cpu_hours, c.gpu_hours)} |")
    return ["## Cost and trust", "", *head, *lines, "", timing.cost_note(timing.first_per_run(reported(rows))), ""]


def selection_lines(rows: list[dict], digits: int, select_metric: str | None = None) -> list[str]:
    """How each encoder's learning rate was chosen: mean dev per rate on the selection seeds, of
    the metric runs select on (a table's other columns are not what chose the rate), the chosen
    rate as the evidence stores it (``chosen_lr``; rows written before it: the reported runs'),
    and what the protocol says of the grid (``RateChoice.statement`` of the choice the rows store:
    its extension past an edge). A table of several experiments (MZU Table 6's two domains) chose
    a rate in each: one line per encoder and dataset, named by the dataset (named too where other
    columns borrowed its choice)."""
    if select_metric is not None:
        rows = [r for r in rows if r["metric"] == select_metric] or rows
    out = []
    groups: dict[tuple[str, str, str, str], dict[float, list[float]]] = {}
    chosen: dict[tuple[str, str, str, str], float] = {}
    statements: dict[tuple[str, str, str, str], str] = {}
    selected_in = {r["dataset"] for r in rows if r["phase"] == "select"}
    # Named also when other columns borrowed the rate (lr_from: RCRN Table 1's domains take Apparel's).
    several = len(selected_in) > 1 or any(r["dataset"] not in selected_in for r in rows if r["reported"] == "yes")
    by_p: dict[tuple[str, str, str, str], dict[float | None, list[float]]] = {}  # dropout chosen after the rate
    for r in rows:
        key = (r["model"], r["encoder"], r["variant"], r["dataset"] if several else "")
        if r["phase"] == "select" and r["dev"] != "":
            if r.get("dropout", "") not in ("", None):
                by_p.setdefault(key, {}).setdefault(float(r["dropout"]), []).append(float(r["dev"]))
            else:
                groups.setdefault(key, {}).setdefault(float(r["lr"]), []).append(float(r["dev"]))
        if r.get("chosen_lr", "") != "":
            chosen[key] = float(r["chosen_lr"])
        elif r["reported"] == "yes":
            chosen.setdefault(key, float(r["lr"]))
        if key not in statements:
            choice = RateChoice.from_columns(r)
            if choice is not None and choice.statement():
                statements[key] = choice.statement()
    for key, by_lr in groups.items():
        if len(by_lr) < 2:
            continue
        # A rate whose selection runs are not all in yet (a run in progress) says how many its mean rests on.
        seeds = max(len(v) for v in by_lr.values())
        parts = ", ".join(f"{lr:g}: {statistics.fmean(v):.{digits}f}" + (f" ({len(v)} of {seeds} seeds so far)" if len(v) < seeds else "")
                          + (" (chosen)" if chosen.get(key) == lr else "") for lr, v in by_lr.items())
        metric = f" {select_metric}" if select_metric else ""
        where = f" on {key[3]}" if key[3] else ""
        statement = statements.get(key)
        out.append(f"Learning rate of `{key[1]}`{' (' + key[2] + ')' if key[2] else ''}{where}, mean dev{metric} over the selection seeds: {parts}"
                   f"{'; ' + statement if statement else ''}.")
    out += dropout_lines(rows, by_p, groups, chosen, digits, select_metric)
    return out


def dropout_lines(rows: list[dict], by_p: dict, by_lr: dict, chosen_lr: dict, digits: int, select_metric: str | None) -> list[str]:
    """How each encoder's dropout was chosen at its chosen rate (``table.protocol.dropout_grid``):
    mean dev per p over the selection seeds, the config's own dropout being the rate's own runs."""
    statements = {}
    for r in rows:
        choice = DropoutChoice.from_columns(r)
        if choice is not None:
            statements.setdefault((r["model"], r["encoder"], r["variant"]), choice.statement())
    out = []
    for key, means in by_p.items():
        own = by_lr.get(key, {}).get(chosen_lr.get(key))
        parts = ([f"the config's own: {statistics.fmean(own):.{digits}f}"] if own else []) + [
            f"{p:g}: {statistics.fmean(v):.{digits}f}" for p, v in sorted(means.items())]
        metric = f" {select_metric}" if select_metric else ""
        where = f" on {key[3]}" if key[3] else ""
        statement = statements.get(key[:3])
        out.append(f"Dropout of `{key[1]}`{' (' + key[2] + ')' if key[2] else ''}{where} at its chosen rate, mean dev{metric} over the "
                   f"selection seeds: {'; '.join(parts)}{'; ' + statement if statement else ''}.")
    return out


def claim_lines(table: str, rows: list[dict], items: list[dict], confidence: float,
                counts: dict | None = None, floor_map: dict | None = None) -> tuple[list[str], list[claims_mod.ClaimResult]]:
    """The table's claims with their evidence, each read alone at 95%, through the gates
    (``floor_map``: the majority-class scores, ``floors.read_floors``); their verdicts, decided
    with the paper's other claims (Holm), are the ledger's (results/claims.md)."""
    results = decisions.alone(table, rows, items, confidence, counts, floor_map)
    tested = [r for r in results if r.verdict != "not run" or r.choice is not None]  # an open choice: its cells and rows beside
    if not results:
        return [], results
    lines = ["## The paper's claims", "",
             f"Each claim read alone at 95%. The verdicts, decided with the paper's other claims (Holm's correction), are in "
             f"[claims.md](claims.md); how to read them: [docs/verdicts.md](../docs/verdicts.md).", ""]
    if not tested:
        lines.append(f"None of the {len(results)} claims has runs of both of its rows here yet (see results/claims.md).")
    for r in tested:
        lines.append("- " + describe_result(r))
    untested = len(results) - len(tested)
    if tested and untested:
        lines.append(f"- {untested} more claim(s) of this table compare rows not run here (results/claims.md lists them).")
    return [*lines, ""], results


def describe_result(r: claims_mod.ClaimResult) -> str:
    """One claim's evidence in a sentence or three: ours over seeds and test items with its 95%
    interval, the paired t beside it, the p-value, the reading alone, and what withholds it."""
    c = r.claim
    quantity = c.get("quantity", "test")
    what = f"{c['column']}" + ("" if quantity == "test" else f" {quantity}")
    head = f"{c['text']} ({c['better']} {'<' if c.get('lower_is_better') else '>'} {c['worse']}, {what}; {c.get('cite', '')})."
    note = f" {r.note[0].upper()}{r.note[1:]}." if r.note else ""
    if r.counted:
        return f"**{r.verdict}** (exact counts): {head} Ours: {r.ours[0]:,.0f} / {r.ours[1]:,.0f}.{note}"
    gate = r.gate is not None and r.verdict == r.gate.kind
    scope = (f" Gate: {r.gate.why}." if gate else
             f" {r.scope.label()[0].upper()}{r.scope.label()[1:]}." if r.scope is not None and r.verdict in verdicts.STATISTICAL else "")
    choice = shown.choice_text(r) if r.choice is not None else ""  # each paper-consistent cell's verdict, the claim's own rows beside
    if choice:
        note = f" {choice[0].upper()}{choice[1:]}.{note}"
    if r.decision is None:
        return f"**{r.verdict}**: {head}{scope}{note}"
    d = r.decision
    effect = "ratio" if r.test.effect == "log ratio" else "difference"
    where = f"{len(r.seeds)} paired seeds" + (f" and {r.estimate.clusters:,} test-item clusters" if r.estimate.clusters else "")
    reading = (f"**{r.verdict}** (the statistics say {d.statistical})" if r.verdict in ("withheld", *gates.GATED)
               else f"**{r.verdict}** (the statistics say {d.statistical}, but {d.missing})" if d.missing else f"**{r.verdict}**")
    guards = "; ".join(r.guards)
    guards = (f" Withheld: {guards}." if r.verdict == "withheld" else f" Would withhold a decided verdict: {guards}.") if guards else ""
    held = ""
    if r.held_out_seeds:
        held = (f" Without the selection seeds ({len(r.held_out_seeds)} left): " +
                (f"{shown.effect_value(r.test, r.held_out.mean)}, {d.held_out}." if r.held_out is not None else "no interval."))
    p = "p < 0.001" if d.p < 0.001 else f"p = {d.p:.3f}"
    power = f" {d.power[0].upper()}{d.power[1:]}." if d.power else ""
    return (f"{reading}: {head}{scope} Ours, the {effect} over {where}: {shown.effect_cell(r)} (paired t over seeds: "
            f"{shown.t_cell(r)}), {p}.{guards}{held}{note}{power}")


def learning_curves(rows: list[dict], columns: list[str], title: str, path: Path,
                    names: dict[tuple[str, str], str] | None = None) -> Path | None:
    """Dev metric per epoch of each reported row, one small panel per column, the rows named as
    the paper names them (``rnnbench.results.figures.learning_curves``), written to ``path``."""
    from rnnbench.results import figures

    fig = figures.learning_curves(rows, columns, title, names)
    return None if fig is None else figures.save(fig, path)


def render(name: str, table: dict, title: str, columns: list[str], rows: list[dict], items: list[dict], built: set[str],
           notes: list[str], out_dir: Path, digits: int = 1, paper: bool = True, protocol=None,
           select_metric: str | None = None, not_run: dict[tuple[str, str | None], str] | None = None,
           deviation_lines: list[str] | None = None) -> tuple[Path, Path]:
    """Write results/<name>.{md,tex} (and the plot) from evidence rows; ``not_run`` as ``build_rows``. Under the
    Markdown table's notes, the deviations from the paper's setting (``deviations.section``): ``deviation_lines``,
    found by the caller from its rows' configs (campaign/deviations.py)."""
    check_versions(rows)
    confidence = float(protocol.confidence) if protocol is not None else 0.95
    ours: dict[tuple[str, str | None], dict[str, list[float]]] = {}
    left_out: dict[tuple[str, str | None], dict[str, list[str]]] = {}  # runs the patience rule keeps out of the means
    for r in sorted(reported(rows), key=lambda r: int(r["seed"])):
        if untrained(r):
            left_out.setdefault((r["encoder"], r["variant"] or None), {}).setdefault(r["dataset"], []).append(r["status"])
        else:
            ours.setdefault((r["encoder"], r["variant"] or None), {}).setdefault(r["dataset"], []).append(float(r["test"]))
    table_rows = build_rows(table, columns, ours, built, digits, not_run, left_out)
    names = {(r.encoder, r.variant or ""): r.model for r in table_rows if r.encoder}
    costs = cost_rows(rows, names)
    extra: list[str] = []
    if costs:
        extra += cost_markdown(costs, rows, columns, confidence, digits)
    plot = learning_curves(rows, columns, f"{title.split(' (')[0]}: dev score per epoch (mean over seeds, band min to max)",
                           out_dir / "plots" / f"{name}.png", names)
    if plot is not None:
        extra += [f"Learning curves (dev, mean over seeds, band min to max): [plots/{name}.png](plots/{name}.png)", ""]
    if paper:
        claim_md, _ = claim_lines(name, rows, items, confidence, evidence.read_parameter_counts(evidence.parameters_path(out_dir / f"{name}.csv")),
                                  floors.read_floors(out_dir))
        extra += claim_md
    if table.get("comparison"):  # a comparison of your own (rnnbench compare): each encoder against its baseline
        from rnnbench.results import comparison

        extra += comparison.section(name, table, rows, items, floors.read_floors(out_dir), digits)
    notes = [*notes, *untrained_lines(rows), *collapsed_lines(rows), *selection_lines(rows, digits, select_metric)]
    if rows:
        notes.append(f"Per-run evidence: [{name}.csv]({name}.csv) (every run of the protocol, one row per run and column)"
                     + (f", per-item test scores {name}{evidence.ITEMS_SUFFIX}" if items else "") + ".")
    if paper:
        notes.append(PAPER_NOTE)
    md_text = markdown(title, table_rows, [], columns, paper)
    md_text = md_text.rstrip("\n") + "\n\n" + "\n".join(extra) + "\n" + "\n".join(f"- {n}" for n in notes) + "\n"
    if paper:
        md_text += deviations.section(name, deviation_lines or [])
    out_dir.mkdir(parents=True, exist_ok=True)
    md, tex = out_dir / f"{name}.md", out_dir / f"{name}.tex"
    md.write_text(md_text)
    tex.write_text(latex(title, table_rows, notes, columns, paper))
    return md, tex
