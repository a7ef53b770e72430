"""Assembling a table from its evidence: the rows of every finished run of its protocol (read from
run folders, else kept from the committed CSV), the footnotes that say how they were obtained, and
the rendered table (``write``)."""
from __future__ import annotations

import datetime
import json
from pathlib import Path

from rnnbench.config import embeddings_frozen
from rnnbench.errors import RnnbenchError
from rnnbench.campaign.definitions import claimed_parameter_counts, table_spec
from rnnbench.campaign import protocol
from rnnbench.results import dropout_choice, evidence, patience, settings, subset_items
from rnnbench.results import table_page as report
from rnnbench.results.identity import run_dir
from rnnbench.results.records import PREDICTIONS, read_record
from rnnbench.results.run_record import git_commit
from rnnbench.results.openness import accuracy_vs_openness
from rnnbench.results.rate_choice import no_columns
from rnnbench.results.tables import column_metrics, model_name, table_title
from rnnbench.campaign import deviations, reruns
from rnnbench.campaign.floors import split_loader
from rnnbench.campaign.jobs import evaluated, job_config, with_status
from rnnbench.campaign.rates import chosen_dropout, known_choice


def left_out_rows(plans) -> dict[tuple[str, str | None], str]:
    """(encoder, variant) -> the cell of a row its experiment leaves out of the campaign (``table.not_run``)."""
    return {(enc, cfg.table.variant or None): str(cfg.table.not_run) for _, cfg, encoders in plans if cfg.table.not_run for enc in encoders}


def collect(plans, extra: list[str], built: set[str], committed: evidence.CommittedEvidence,
            run: bool = False, replaced: list[tuple[list[dict], str]] | None = None) -> tuple[list[dict], list[dict]]:
    """Evidence rows of every finished run of the plans' protocol, and per-item test scores
    of the runs the table reports (the chosen learning rate). Columns of ``table.evaluated_columns``
    come from evaluating the reported runs' checkpoints (scored by the campaign as each run finishes,
    ``jobs.evaluate_columns``; here computed only when ``run``). A run
    without its folder here contributes its committed rows; so does one whose folder's numbers
    differ from its committed rows (another processor kind: ``reruns``), said in one line, unless
    ``reruns.POLICY.replace``: then its folder's rows stand and the committed rows, with the reason,
    are added to ``replaced``."""
    rows, items = [], []
    for experiment, cfg, encoders in plans:
        table = table_spec(cfg)
        mapping = column_metrics(cfg.table, cfg)
        variant = cfg.table.variant or ""
        superseded = evidence.superseded_path(Path(cfg.paths.results_dir) / f"{cfg.table.name}.csv")
        for enc in encoders:
            model = model_name(table, enc, variant or None)
            lr, choice = known_choice(experiment, cfg, enc, extra, committed)  # one rate: a finished seed is reported before the others
            jobs = protocol.choice_jobs(enc, cfg.table.protocol, cfg.trainer.lr, choice)
            encoder_rows: list[dict] = []  # this encoder's rows in this experiment: they state its rate choice
            by_p = protocol.dropout_jobs(enc, cfg.table.protocol, lr) if lr is not None else []
            dropout = chosen_dropout(experiment, cfg, enc, lr, extra, committed) if by_p else None
            if by_p:  # a dropout grid: its runs at the chosen rate, the finals once the choice is made
                jobs += by_p + (protocol.final_jobs(enc, cfg.table.protocol, lr, dropout.p) if dropout else [])
            elif lr is not None:
                jobs += protocol.final_jobs(enc, cfg.table.protocol, lr)
            else:  # the choice waits on selection runs (a rate new to the grid): finals at any rate stay, unreported
                jobs += [job for rate in protocol.grid(cfg.table.protocol, cfg.trainer.lr)
                         for job in protocol.final_jobs(enc, cfg.table.protocol, rate)]
            for job in jobs:
                job_cfg = job_config(experiment, job, extra)
                folder = run_dir(job_cfg)
                record = read_record(folder)
                is_reported = lr is not None and job.lr == lr and (not by_p or (dropout is not None and job.dropout == dropout.p))
                columns = {*mapping, *(cfg.table.evaluated_columns or {})}
                label = (enc, folder.name, model, variant, job.phase, is_reported, columns)  # the committed rows as this job
                stored = committed.by_run.get((enc, folder.name), []) if record is not None else []
                if stored and not reruns.POLICY.replace and reruns.differences(record, stored):
                    # another processor kind's numbers (or another code's): the committed rows stand, said once
                    print(reruns.line(cfg.table.name, folder.name, enc, stored, record, reruns.differences(record, stored), superseded),
                          flush=True)
                    record = None
                if record is None:
                    kept, kept_items = committed_rows(committed, label, job_cfg)
                    if is_reported and kept and not committed.reported_rows(enc, folder.name) and not stored:  # (stored: its folder is here, other numbers)
                        # a committed selection run the choice now reports: its item scores were never stored
                        print(f"{cfg.table.name}: {enc} {folder.name} is reported now, but its per-item test scores were not "
                              f"committed (it was a selection run): claims decided on items lack its seed ({job.seed}) until its "
                              f"run folder is in {folder.parent} (or the run is trained again)", flush=True)
                    encoder_rows += kept
                    items += kept_items
                    continue
                committed.use(enc, folder.name)  # its committed rows, if any, are these rows
                record = with_status(record, job_cfg)  # a record made before the patience rule is judged by it
                # Its files are where the record was read, whatever folder it was trained from (its
                # run_dir may be relative to another working directory: --set paths.runs_dir=...).
                record = {**record, "run_dir": str(folder)}
                run_rows = evidence.evidence_rows(record, model, variant, mapping, cfg.table.scale, job.phase, is_reported)
                run_items: list[dict] = []
                predictions = Path(record["run_dir"]) / PREDICTIONS
                scored = {column: (metric, predictions) for column, metric in mapping.items()}
                unscored = []
                for column, overrides in (cfg.table.evaluated_columns or {}).items() if is_reported else ():
                    evaluation = evaluated(record, overrides, run)
                    if evaluation is None:
                        unscored.append(column)
                        continue
                    metric = str(cfg.table.metric)
                    row = evidence.evidence_rows(record, model, variant, {column: metric}, cfg.table.scale, job.phase, True)[0]
                    row.update(test=evaluation["metrics"][metric], dev="", dev_curve="",
                               inference_seconds_per_example=evaluation["inference_seconds_per_example"])
                    run_rows.append(row)
                    scored[column] = (metric, Path(record["run_dir"]) / evaluation["predictions"])
                committed_columns = {row["dataset"] for row in stored}
                unscored = [column for column in unscored if column not in committed_columns]
                if unscored:  # --no-run scores nothing: the run is left out of those columns (unless committed), said once
                    print(f"{cfg.table.name}: {enc} {folder.name} is not scored at {', '.join(unscored)} yet: those columns "
                          f"leave it out until `rnnbench table {cfg.table.name}` scores it (finished runs first)", flush=True)
                local_scores: dict[str, dict[str, float]] = {}
                if is_reported:
                    for column, (metric, path) in scored.items():
                        scores = evidence.item_scores(path, metric) if path.exists() else None
                        local_scores[column] = scores or {}
                        run_items += [{"model": model, "variant": variant, "dataset": column, "seed": record["seed"], "item": i, "score": v,
                                       "scale": float(cfg.table.scale)}
                                      for i, v in (scores or {}).items()]
                if stored:
                    what = reruns.differences(record, stored)
                    for column, scores in local_scores.items():
                        old = reruns.committed_items(committed, stored, column) if column in mapping and scores else None
                        if old is not None and reruns.items_differ(scores, old):
                            what.append("test items")
                            break
                    if what:
                        print(reruns.line(cfg.table.name, folder.name, enc, stored, record, what, superseded), flush=True)
                        if reruns.POLICY.replace:
                            if replaced is not None:
                                replaced.append((stored, reruns.reason(record, stored, what)))
                        else:  # the same dev, test and epoch, other items: the committed rows stand
                            run_rows, run_items = committed_rows(committed, label, job_cfg)
                    else:  # the same numbers (a re-run on the same processor kind): the committed rows stay as they are
                        kept, kept_items = committed_rows(committed, label, job_cfg)
                        have = {(r["dataset"], r["metric"]) for r in kept}
                        run_rows = kept + [r for r in run_rows if (r["dataset"], r["metric"]) not in have]
                        kept_columns = {i["dataset"] for i in kept_items}
                        run_items = kept_items + [i for i in run_items if i["dataset"] not in kept_columns]
                if by_p:
                    run_rows = [{**row, "dropout": "" if job.dropout is None else job.dropout} for row in run_rows]
                encoder_rows += run_rows
                items += run_items
            # The choice is stored with the evidence, so the table states it rather than re-deriving it.
            choice_columns = choice.columns() if choice else no_columns()
            rows += [{**row, "chosen_lr": "" if lr is None else lr, **choice_columns,
                      **((dropout.columns() if dropout else dropout_choice.no_columns()) if by_p else {})} for row in encoder_rows]
    return rows, items


def committed_rows(committed: evidence.CommittedEvidence, label: tuple, cfg) -> tuple[list[dict], list[dict]]:
    """A job's committed rows and per-item scores, labelled as the current configs name them
    (``label``: ``CommittedEvidence.rows_of``'s arguments), with their run's status (``with_row_status``)."""
    encoder, run = label[:2]
    kept, kept_items = committed.rows_of(*label)
    return with_row_status(kept, committed.record(encoder, run), cfg), kept_items


def with_row_status(rows: list[dict], stand_in: dict | None, cfg) -> list[dict]:
    """Committed rows with their run's ``status`` and ``majority`` filled in where they predate the
    patience rule (judged from the run's committed dev curve: ``with_status``)."""
    if stand_in is None or all(row.get("status") for row in rows):
        return rows
    judged = with_status(stand_in, cfg)
    majority = judged.get("majority_baseline")
    return [row if row.get("status") else {**row, "status": judged["status"], "majority": "" if majority is None else majority}
            for row in rows]


def footnotes(plans, rows: list[dict]) -> list[str]:
    """How our numbers were obtained: from the configs and the evidence rows."""
    if not rows:
        return ["No finished runs yet."]
    # The embeddings described are those of the first experiment with runs (DCU Table 1: the
    # CPU-sized "small" variant, not the paper-sized experiment listed first).
    with_runs = [(name, cfg) for name, cfg, _ in plans if any(r["variant"] == (cfg.table.variant or "") for r in rows)] or [plans[0][:2]]
    first = with_runs[0][1]
    seeds = sorted({int(r["seed"]) for r in rows if r["reported"] == "yes"})
    commits = sorted({r["commit"][:12] for r in rows})
    hardware = sorted({f"{r['hardware']} ({r['device']})" for r in rows})
    notes = [
        f"Ours: test split, best epoch chosen on dev; embeddings {embeddings_used(with_runs)}; "
        + (f"reported seeds {', '.join(map(str, seeds))}." if seeds else "no reported runs yet (learning-rate selection runs only)."),
        *protocol_notes(with_runs),
        f"Hardware: {'; '.join(hardware)}; code {', '.join(commits)}.",
    ]
    notes += [n for n in dict.fromkeys(str(cfg.table.data_note) for _, cfg, _ in plans) if n]
    notes += [n for n in dict.fromkeys(str(cfg.table.setting_note) for _, cfg, _ in plans) if n]
    declared = settings.declared(table_spec(plans[0].config))
    if declared:
        notes.append(settings.note(declared))
    return notes


def embeddings_used(experiments) -> str:
    """The word vectors of the experiments with runs, and whether they were trained: the first
    experiment's, then each other setting with the variants that use it (a table re-run at a rung
    of the regime ladder trains the vectors its rung-0 rows keep frozen)."""
    def setting(cfg) -> str:
        return f"{cfg.embedding.name} ({'frozen' if embeddings_frozen(cfg) else 'trained'})"

    first, others = setting(experiments[0][1]), {}
    for _, cfg in experiments[1:]:
        if setting(cfg) != first:
            others.setdefault(setting(cfg), []).append(str(cfg.table.variant or ""))
    return "; ".join([first, *(f"{name} in variant {', '.join(dict.fromkeys(v or 'none' for v in variants))}"
                               for name, variants in others.items())])


def protocol_notes(experiments) -> list[str]:
    """The budget rule of the experiments with runs: one sentence when they share it (MZU Table
    6's two domains), else one per experiment, named, so no table states a cap some runs did not have."""
    def sentence(cfg) -> str:
        t = cfg.trainer
        return (protocol.describe(cfg.table.protocol, t.lr, t.epochs, t.patience, t.num_threads, str(cfg.task.select_metric),
                                  patience.applies(cfg.task), t.get("start_below_prior"))
                + (f" At most {t.max_batches} batches per epoch." if t.max_batches else "") + f" {t.optimizer}, batch {t.batch_size}.")

    by_sentence: dict[str, list[str]] = {}
    for name, cfg in experiments:
        by_sentence.setdefault(sentence(cfg), []).append(name)
    if len(by_sentence) == 1:
        return list(by_sentence)
    return [f"{', '.join(names)}: {text}" for text, names in by_sentence.items()]


def stale_runs(plans, rows: list[dict]) -> list[str]:
    """Finished runs filed under these experiments that the current configs do not select (another
    component version or data, or another setting: a ladder rung, a sweep cell): listed so a
    reader knows they were left out."""
    used = {r["run"] for r in rows}
    stale = []
    for experiment, cfg, encoders in plans:
        for enc in encoders:
            folder = Path(cfg.paths.runs_dir) / str(cfg.task.name) / enc
            for done in sorted(folder.glob("*/record.json")) if folder.exists() else []:
                if done.parent.name in used or not (done.parent / "done").exists():
                    continue
                try:
                    if json.loads(done.read_text()).get("experiment") == experiment:
                        stale.append(str(done.parent))
                except ValueError:
                    continue
    return stale


def scored_subset_items(cfgs, rows: list[dict], items: list[dict], where: str) -> list[dict]:
    """Item rows for the reported rows of a scored subset's column (MZU Table 6's HDS, RACE's levels)
    that have none: a run's predictions score the subset only as one number, so its items are its
    full column's, restricted to the subset's (``subset_items.derived_rows``, checked against that
    number). Stored units, as ``rows`` and ``items``. The test split is read only where a row lacks them."""
    load, added = split_loader(), []
    for cfg in cfgs:
        columns = {c: str(m) for c, m in column_metrics(cfg.table, cfg).items()}
        if not subset_items.lacking(rows, items + added, columns, cfg.task):
            continue
        splits, _ = load(cfg)
        added += subset_items.derived_rows(rows, items + added, columns, cfg.task, splits["test"], where)
    return added


def write(plans, overrides: list[str], committed: evidence.CommittedEvidence, built: set[str], run: bool,
          sanity) -> int:
    """Write the table of ``plans`` (every experiment of one table: (name, composed config, encoders))
    under ``paths.results_dir``: its evidence CSV (finished runs, else their committed rows), its
    parameter counts where a claim needs them, its markdown and LaTeX, and its figure. ``run``:
    evaluate reported checkpoints whose evaluated columns are missing; ``sanity``: the runner's
    gate, whose notes on failing rows the table carries. Returns an exit status."""
    first = plans[0][1]
    name = first.table.name
    out_dir = Path(first.paths.results_dir)
    csv_path = out_dir / f"{name}.csv"
    items_path = evidence.items_path(csv_path)
    # Assemble from whatever has finished now (a parallel copy may have finished more), through the
    # evidence CSV: the table is always rendered from the CSV, so the committed CSV regenerates it.
    replaced: list[tuple[list[dict], str]] = []  # committed rows a re-run with other numbers replaces (--replace-committed)
    rows, items = collect(plans, overrides, built, committed, run=run, replaced=replaced)
    superseded, dropped = evidence.superseded_path(csv_path), []
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    if rows:
        scope = {(column, cfg.table.variant or "") for _, cfg, _ in plans
                 for column in [*column_metrics(cfg.table, cfg), *(cfg.table.evaluated_columns or {})]}
        other_rows, other_items = committed.outside(scope)  # another experiment's columns: kept as committed
        rows, items = rows + other_rows, items + other_items
        evidence.write_csv(csv_path, rows)
        for old_rows, why in replaced:
            reruns.record_superseded(superseded, old_rows, today, why)
        items += scored_subset_items([cfg for _, cfg, _ in plans], rows, items, str(csv_path))
        if items:
            evidence.write_items(items_path, items)
        else:  # no reported run has item scores now: an earlier file's would be another run's
            for stale in (items_path, evidence.legacy_items_path(items_path)):
                if stale is not None and stale.exists():
                    stale.unlink()
        dropped = committed.unused()
    elif csv_path.exists():
        # Nothing matched: more likely another data folder (RNNBENCH_DATA) than a config change, so nothing is dropped.
        print(f"no finished or committed run matches the current configs (is RNNBENCH_DATA the data the runs read?): "
              f"rendering the committed evidence {csv_path} as it is")
    counts = claimed_parameter_counts(name)  # a size claim's evidence, run or not (no file for other tables)
    if counts:
        evidence.write_parameter_counts(evidence.parameters_path(csv_path), counts, git_commit())
    rows = evidence.read_csv(csv_path) if csv_path.exists() else []
    items = evidence.read_items(items_path)
    table = table_spec(first)
    has_paper = not table.get("ours_only")
    columns: list[str] = []
    for _, cfg, _ in plans:
        columns += [c for c in [*column_metrics(cfg.table, cfg), *(cfg.table.evaluated_columns or {})] if c not in columns]
    metrics = dict.fromkeys(m for _, cfg, _ in plans for m in column_metrics(cfg.table, cfg).values())
    title = table_title(table, list(metrics), ", %" if first.table.scale == 100 else "")
    notes = footnotes(plans, rows) + sanity.notes(plans, overrides, rows)
    stale = stale_runs(plans, rows)
    if dropped:
        reruns.record_superseded(superseded, committed.unused_rows(), today)
        print(f"{len(dropped)} committed run(s) are no longer selected by the current configs (component versions, data or "
              f"config): moved to {superseded}: {', '.join(dropped)}", flush=True)
    for note in (evidence.superseded_note(superseded, rows), reruns.replaced_note(superseded, rows)):
        if note:
            notes.append(note)
    if stale:  # said here, not in the table: the table is what the committed evidence gives, on any machine
        print(f"{len(stale)} finished run(s) filed under these experiments are not this table's: their configs are not "
              f"the current ones (another component version or data: `make` runs them again; or another setting, such "
              f"as a rung of the regime ladder or a sweep's cell): {', '.join(stale)}", flush=True)
    md, tex = report.render(name, table, title, columns, rows, items, built, notes, out_dir, first.table.digits, has_paper,
                            first.table.protocol, str(first.task.select_metric), left_out_rows(plans),
                            deviations.lines(name, rows, overrides) if has_paper else [])
    print(md.read_text())
    print(f"wrote {md}, {tex} and {csv_path}" if csv_path.exists() else f"wrote {md} and {tex} (no run yet: no {csv_path.name})")
    figure = first.table.openness_figure
    if figure and not csv_path.exists():
        print(f"no figure: no run of {name} yet")
    elif figure:
        try:
            print(f"wrote {accuracy_vs_openness(csv_path, out_dir / figure)}")
        except RnnbenchError as exc:  # no FHE run with both columns yet: the table stands without its figure
            print(f"no figure: {exc}")
    return 0

