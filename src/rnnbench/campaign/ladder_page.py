"""results/regime_ladder.md, rendered from the ladder's CSV rows alone (``render``): per table and
reference row, each rung's dev and test means beside the paper's number, the rung closest to the
paper against the parity gate's margin, the held rate, rung 2's choice of p, and a column-by-column
table where the row has several. It reads nothing but the rows, the registry and the experiments'
configs, so ``rnnbench ladder --no-run`` regenerates the file byte for byte."""
from __future__ import annotations

import statistics
from dataclasses import dataclass

from rnnbench.campaign.ladder_rungs import (DROPOUTS, NO_DATA_OPTION, NOT_AVERAGED, RUNG_TEXT, RUNGS, SEEDS, chosen_dropout,
                                            paper_data_of, sort_key)
from rnnbench.results import gates, timing
from rnnbench.results.tables import paper_table


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _fmt(value: float | None, signed: bool = False) -> str:
    return "" if value is None else f"{value:+.1f}" if signed else f"{value:.1f}"


def counted(row: dict) -> bool:
    """Whether a run's scores enter a mean: not one that did not train, needs re-running, or is a smoke run."""
    return row["status"] not in NOT_AVERAGED


def chosen_rows(rows: list[dict], rung: int) -> list[dict]:
    """A rung's rows that stand for it: at rung 2 each experiment's chosen p only."""
    at = [r for r in rows if r["rung"] == str(rung)]
    if rung != 2:
        return at
    choices: dict[str, float | None] = {}
    for r in at:
        choices.setdefault(r["experiment"], chosen_dropout(rows, (r["table"], r["reference"], r["experiment"])))
    return [r for r in at if choices[r["experiment"]] is not None and float(r["dropout"]) == choices[r["experiment"]]]


def column_means(rows: list[dict], quantity: str) -> dict[str, float]:
    """Per column, the mean over the counted runs (seeds) of ``quantity`` (dev or test)."""
    by_column: dict[str, list[float]] = {}
    for r in rows:
        if counted(r) and r[quantity] != "":
            by_column.setdefault(r["column"], []).append(float(r[quantity]))
    return {c: statistics.fmean(v) for c, v in by_column.items()}


def hours(rows: list[dict]) -> tuple[float, float]:
    """(CPU-thread hours, GPU hours) of the runs of ``rows`` (each run once, whatever its columns)."""
    runs = {r["run"]: r for r in rows}.values()
    return (sum(float(r["cpu_hours"]) for r in runs if r["cpu_hours"]),
            sum(float(r["gpu_hours"]) for r in runs if r["gpu_hours"]))


@dataclass
class Step:
    """One rung of a reference row: its means over seeds and columns beside the paper's."""

    rung: int
    adds: str
    dev: float | None
    test: float | None
    paper: float | None
    columns: int  # columns with a test mean
    cpu: float
    gpu: float
    left_out: str  # the runs not averaged, by status ("1 did not train"), or ""
    unrun: tuple[int, ...] = ()  # the seeds with no run at this rung yet in some column (its mean is the others')

    @property
    def gap(self) -> float | None:
        return None if self.test is None or self.paper is None else self.test - self.paper


def paper_numbers(table: str, reference: str, columns: list[str]) -> dict[str, float]:
    row = gates._paper_row(paper_table(table), reference)  # the parity gate's lookup of the reference row
    values = (row or {}).get("values") or {}
    return {c: float(values[c]) for c in columns if values.get(c) is not None}


def step_of(rung: int, rows: list[dict], paper: dict[str, float], adds: str) -> Step:
    """A rung's step: dev and test averaged over seeds, then over the columns with a paper number
    and a test mean (the parity gate's averaging); the paper's number averaged over the same."""
    chosen = chosen_rows(rows, rung)
    test, dev = column_means(chosen, "test"), column_means(chosen, "dev")
    shared = [c for c in sorted(test) if c in paper]
    cpu, gpu = hours([r for r in rows if r["rung"] == str(rung)])
    # A seed missing in any column (Amazon's domains run one by one): the rung's mean is not yet both seeds'.
    ran, columns = {(r["column"], int(r["seed"])) for r in chosen}, {r["column"] for r in chosen}
    unrun = tuple(seed for seed in SEEDS if any((c, seed) not in ran for c in columns))
    return Step(rung, adds, _mean([dev[c] for c in shared if c in dev]), _mean([test[c] for c in shared]),
                _mean([paper[c] for c in shared]), len(shared), cpu, gpu, left_out(chosen), unrun)


def left_out(rows: list[dict]) -> str:
    """The runs of ``rows`` not averaged, counted by status (each run once)."""
    runs = {r["run"]: r["status"] for r in rows if not counted(r)}
    return ", ".join(f"{list(runs.values()).count(status)} {status}" for status in NOT_AVERAGED if status in runs.values())


def added_overrides(rows: list[dict], rung: int) -> str:
    """The overrides a rung adds to the one below, from its rows (code font); rung 2's p as ``p``."""
    def overrides_at(r: int) -> list[str]:
        at = chosen_rows(rows, r) or [x for x in rows if x["rung"] == str(r)]  # rung 2 before its choice: either p
        return at[0]["overrides"].split() if at else []

    def key(override: str) -> str:
        return override.lstrip("+").split("=")[0]
    below = {key(o) for o in overrides_at(rung - 1)}
    new = [o.lstrip("+") for o in overrides_at(rung) if key(o) not in below]
    if rung == 2:
        new = [o.split("=")[0] + "=p" for o in new]
    return ", ".join(f"`{o}`" for o in new)


def rung_adds(rung: int, rows: list[dict], experiments: list[str]) -> str:
    """What a rung adds, in words, with the keys it sets; rung 2 with the p chosen."""
    if rung == 0:
        return RUNG_TEXT[0]
    if not any(r["rung"] == str(rung) for r in rows):
        return RUNG_TEXT[rung] + (": " + rung4_plan(experiments) if rung == 4 else " (not run yet)")
    keys = added_overrides(rows, rung)
    if rung == 2:
        table, reference = rows[0]["table"], rows[0]["reference"]
        choices = [chosen_dropout(rows, (table, reference, e)) for e in experiments]
        chosen = " / ".join(sorted({f"{c:g}" for c in choices if c is not None})) or "p (not chosen yet)"
        return f"+ dropout {chosen}, chosen on dev of {{{', '.join(f'{p:g}' for p in DROPOUTS)}}} ({keys})"
    if rung == 4:
        return f"{RUNG_TEXT[4]} ({keys}): " + "; ".join(sorted({paper_data_of(e).what for e in experiments if paper_data_of(e)}))
    return f"{RUNG_TEXT[rung]} ({keys})"


def rung4_plan(experiments: list[str]) -> str:
    """Rung 4 without runs: what it would train on, else why it is not built."""
    data = [d for d in map(paper_data_of, experiments) if d]
    options = sorted({d.what for d in data})
    if not options:
        return f"not built ({NO_DATA_OPTION})"
    # A file the rung reads that the shipped datasets may lack (TrecQA's TRAIN-ALL): named, so that a
    # reader knows what to add to the data folder before `--rungs 4` can run
    needs = sorted({d.needs for d in data if d.needs})
    return "not run yet (`--rungs 4`" + "".join(f"; needs `{n}` in the data folder" for n in needs) + "): " + "; ".join(options)


def render_reference(table: str, reference: str, rows: list[dict]) -> list[str]:
    """One reference row's ladder: a line per rung, the choice of p, the held rate, the columns."""
    registry = paper_table(table)
    experiments = list(dict.fromkeys(r["experiment"] for r in rows))
    columns = list(dict.fromkeys(r["column"] for r in rows))
    paper = paper_numbers(table, reference, columns)
    steps = [step_of(rung, rows, paper, rung_adds(rung, rows, experiments)) for rung in RUNGS]
    lines = [f"## {registry['paper'].upper()} Table {registry['table']}: {rows[0]['model']} (`{reference}`)", "",
             f"{registry['caption']}; test {', '.join(dict.fromkeys(r['metric'] for r in rows))} in the table's units, "
             f"the mean of seeds {', '.join(map(str, SEEDS))}" + (f" and of {len(columns)} columns" if len(columns) > 1 else "") + ".", "",
             "| rung | adds | dev | test | paper | test − paper | CPU h |", "|---:|---|---:|---:|---:|---:|---:|"]
    for s in steps:
        ran = s.cpu or s.gpu or s.test is not None
        note = f" (not averaged: {s.left_out})" if s.left_out else ""
        partial = f" ({s.columns} of {len(columns)} columns)" if s.test is not None and s.columns < len(columns) else ""
        partial += f" (seed {', '.join(map(str, s.unrun))} not run yet)" if s.test is not None and s.unrun else ""
        lines.append(f"| {s.rung} | {s.adds}{note}{partial} | {_fmt(s.dev)} | {_fmt(s.test)} | {_fmt(s.paper)} | {_fmt(s.gap, True)} | "
                     + (timing.hours_cell(s.cpu, s.gpu) if ran else "") + " |")
    lines += ["", closest_line(steps, registry, reference, columns), ""]
    lines += held_rate_lines(rows) + choice_lines(rows, experiments) + stand_in_lines(registry, columns)
    cpu, gpu = hours(rows)
    lines.append(f"- Hours: {timing.hours_cell(cpu, gpu, ' CPU h')} in all (training time; rung 2 counts both p's runs).")
    if len(columns) > 1:
        lines += ["", *column_table(rows, columns, paper)]
    return lines + [""]


def closest_line(steps: list[Step], registry: dict, reference: str, columns: list[str]) -> str:
    """The rung nearest the paper among those with a test mean in every column, against the parity
    gate's margin (the larger of 2 points and twice the paper's printed std)."""
    whole = [s for s in steps if s.gap is not None and s.columns == len(columns) and not s.unrun]
    if not whole:
        return "Closest to the paper: no rung has a test mean in every column and on every seed yet."
    best = min(whole, key=lambda s: (abs(s.gap), s.rung))
    paper_row = gates._paper_row(registry, reference)
    margin = max(gates.margin_of(registry.get("reference") or {}, paper_row, c) for c in columns)
    within = "within" if abs(best.gap) <= margin else "outside"
    return (f"Closest to the paper: rung {best.rung} ({_fmt(best.gap, True)}), {within} the parity gate's margin of "
            f"±{margin:g} (docs/verdicts.md).")


def held_rate_lines(rows: list[dict]) -> list[str]:
    """The rate every rung ran at: rung 0's choice, per experiment where they differ."""
    by_experiment = {r["experiment"]: f"{float(r['lr']):g}" for r in rows if r["rung"] == "0"}
    rates = sorted(set(by_experiment.values()), key=float)
    shown = rates[0] if len(rates) == 1 else ", ".join(f"{lr} ({e})" for e, lr in by_experiment.items())
    return [f"- Learning rate {shown}: rung 0's choice on dev, held at every rung and not chosen again (a limitation: a rung "
            "whose best rate differs is under-tuned here)."]


def choice_lines(rows: list[dict], experiments: list[str]) -> list[str]:
    """Rung 2's dev means per p and experiment (every run's: what the choice reads), and the p chosen."""
    out = []
    for e in experiments:
        at = [r for r in rows if r["experiment"] == e and r["rung"] == "2" and r["metric"] == r["select_metric"]]
        if not at:
            continue
        means = {p: _mean([float(r["dev"]) for r in at if float(r["dropout"]) == p]) for p in DROPOUTS}
        choice = chosen_dropout(rows, (at[0]["table"], at[0]["reference"], e))
        shown = ", ".join(f"p {p:g}: {_fmt(m) or 'no run yet'}" for p, m in means.items())
        out.append(f"- Rung 2 in {e}, dev {at[0]['select_metric']} (mean of seeds): {shown}"
                   + (f"; chosen {choice:g}." if choice is not None else "; chosen when both p have both seeds."))
    return out


def stand_in_lines(registry: dict, columns: list[str]) -> list[str]:
    """The columns whose training data stand in for the paper's (the pipeline-check gate's registry entry)."""
    stand_in = registry.get("training_data_stand_in") or {}
    named = {c: stand_in[c] for c in columns if c in stand_in}
    return [f"- {c}: trained on {why}: a pipeline check, not the paper's data." for c, why in named.items()]


def column_table(rows: list[dict], columns: list[str], paper: dict[str, float]) -> list[str]:
    """Per column, each rung's test mean with its gap to the paper."""
    lines = ["| column | paper | " + " | ".join(f"rung {r}" for r in RUNGS) + " |", "|---|---:|" + "---:|" * len(RUNGS)]
    means = {rung: column_means(chosen_rows(rows, rung), "test") for rung in RUNGS}
    for c in columns:
        cells = []
        for rung in RUNGS:
            value = means[rung].get(c)
            gap = None if value is None or c not in paper else value - paper[c]
            cells.append("" if value is None else f"{_fmt(value)}" + (f" ({_fmt(gap, True)})" if gap is not None else ""))
        lines.append(f"| {c} | {_fmt(paper.get(c))} | " + " | ".join(cells) + " |")
    return lines


def provenance(rows: list[dict]) -> str:
    commits = sorted({r["commit"][:12] + ("-dirty" if r["commit"].endswith("-dirty") else "") for r in rows if r["commit"]})
    span = timing.date_span(r["date"] for r in rows) or "undated"
    return (f"Runs dated {span} (rung 0: its code's commit date), code at {', '.join(commits) or 'no recorded commit'}; "
            f"hardware: {'; '.join(sorted({r['hardware'] for r in rows if r['hardware']}))}.")


def render(rows: list[dict]) -> str:
    """results/regime_ladder.md from the CSV's rows (strings, as read back)."""
    lines = ["# The regime ladder", "",
             "Each complete-data table's reference row (the paper's own baseline, the parity gate's: docs/verdicts.md) on the "
             f"selection seeds {', '.join(map(str, SEEDS))}, on rungs that climb from today's setting toward the paper's, each "
             "adding to the one below. Generated by `python scripts/regime_ladder.py` from its per-run evidence "
             "[regime_ladder.runs.csv](regime_ladder.runs.csv) (one row per run and column); docs/reproducing.md says how.", "",
             provenance(rows), ""]
    blocks: dict[tuple[str, str], list[dict]] = {}
    for r in sorted(rows, key=sort_key):
        blocks.setdefault((r["table"], r["reference"]), []).append(r)
    for (table, reference), block in blocks.items():
        lines += render_reference(table, reference, block)
    return "\n".join(lines).rstrip("\n") + "\n"
