"""Sanity-check every row a campaign runs, and write results/sanity.md (``rnnbench sanity``).

    rnnbench sanity                      # every committed table's rows, then the default task's
    rnnbench sanity rcrn_table5 default  # some tables ("default": every encoder on the default task)
    rnnbench sanity --plan               # list the rows, cached or to check, with their estimated cost
    rnnbench sanity --budget-minutes 45  # stop starting rows after 45 CPU minutes (the rest: "not checked")

A row is an encoder under one experiment config, checked by ``rnnbench.training.sanity`` (five checks:
docs/sanity.md) and cached under <paths.runs_dir>/sanity/ by its config identity, so the
command resumes where it stopped and checks again only what changed (a verdict written in
results/sanity.md counts as cached, and so does the previous version's where the checks' change
cannot alter it: ``gate.committed_entry``). Rows run one after the
other at one thread, the priority tables (LSTM baseline Table 1, MZU Table 6, RCRN Tables 1-8)
first, rows a table leaves out of its campaign (``table.not_run``) last. The markdown is
rewritten after every row.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

from rnnbench.compose import compose_config
from rnnbench.errors import RnnbenchError
from rnnbench.campaign import sanity_gate as gate


def plan_rows(tables: list[str], extra: list[str]) -> list[gate.Row]:
    return [row for table in gate.by_priority(tables) for row in gate.table_rows(table, extra)]


def estimate(row: gate.Row, task: str, done: list[dict]) -> float | None:
    """CPU seconds of a row: the mean of checked rows of the same task and encoder, else of the encoder, else None."""
    for same in (lambda e: e["row"]["task"] == task and e["row"]["encoder"] == row.encoder, lambda e: e["row"]["encoder"] == row.encoder):
        seconds = [e["cpu_seconds"] for e in done if same(e) and e.get("verdict")]
        if seconds:
            return statistics.fmean(seconds)
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rnnbench sanity", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tables", nargs="*", help="tables (results/<table>.csv) or 'default'; none: every committed table and the default task")
    parser.add_argument("--plan", action="store_true", help="check nothing: list the rows, cached or to check, with estimated CPU minutes")
    parser.add_argument("--no-run", action="store_true", help="check nothing: write the markdown from the cached verdicts")
    parser.add_argument("--budget-minutes", type=float, default=None, help="start no row after this many CPU minutes of checks")
    parser.add_argument("--out", default=None, help="the markdown file (default: <paths.results_dir>/sanity.md)")
    parser.add_argument("--only", action="append", default=[], metavar="ENCODER", help="only the rows of this encoder (repeatable)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], help="an extra Hydra override for every row (repeatable)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # the checks' numbers and costs are one thread's, as the campaign's runs

    extra = list(args.overrides)
    results_dir = Path(str(compose_config(extra).paths.results_dir))
    named = [gate.DEFAULT_TABLE if t == "default" else t for t in args.tables]
    tables = named or [*gate.committed_tables(results_dir), gate.DEFAULT_TABLE]
    try:
        rows = [r for r in plan_rows(tables, extra) if not args.only or r.encoder in args.only]
    except RnnbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else results_dir / gate.MARKDOWN
    committed = gate.committed_lines(out)
    # Tables not asked for keep their rows as written; with --only, so do the other rows of those asked for.
    kept = {t: lines for t, lines in gate.written_sections(out).items() if t not in tables or args.only}

    # The cached entries first: what --plan prices from, and what needs no work.
    # A verdict written in the markdown counts as cached too, and so does the previous version's where it carries over.
    configs, entries, written, bases = [], {}, {}, {}
    for row in rows:
        if row.experiment and row.experiment not in bases:
            bases[row.experiment] = compose_config([f"experiment={row.experiment}", *extra])
        cfg = gate.row_config(row, extra, bases.get(row.experiment))
        key = gate.row_key(cfg)
        configs.append((row, cfg, key))
        entries[row] = gate.read_cached(cfg, key)
        written[row] = None if entries[row] else gate.committed_entry(cfg, key, committed)
        if entries[row] is None and written[row] is None:  # not checked under these checks: the previous version's line
            previous = gate.previous_line(cfg, committed)
            if previous is not None and previous["status"] in (gate.PASS, gate.FAIL, gate.NOT_CHECKED):
                written[row] = {"status": gate.NOT_CHECKED, "line": gate.not_checked_line(row, previous)}
    # Rows a table leaves out of its campaign (table.not_run: the paper-sized rows no run was made of) come last.
    configs.sort(key=lambda item: bool((item[1].get("table") or {}).get("not_run")))
    done = [e for e in entries.values() if e]
    if args.plan:
        return print_plan(configs, entries, written, done)

    data, spent, skipped = gate.DataCache(), 0.0, []
    started = time.process_time()
    for i, (row, cfg, key) in enumerate(configs, 1):
        where = f"[{i}/{len(configs)}] {row.table} · {row.name} ({cfg.task.name})"
        known = entries[row] or written[row]
        if known is not None and known["status"] != gate.NOT_CHECKED:
            carried = " (cached, carried over from the previous checks)" if known.get("carried_from") else " (cached)"
            print(f"{where}: {known['status']}{carried}", flush=True)
            continue
        if args.no_run:
            continue
        spent = (time.process_time() - started) / 60
        if args.budget_minutes is not None and spent >= args.budget_minutes:
            skipped.append(row)
            continue
        print(f"{where}: checking", flush=True)
        entry = gate.evaluate(row, cfg, key, data, say=lambda line: print(line, flush=True))
        entries[row] = entry
        print(f"{where}: {entry['status']}{' (' + '; '.join(entry['failures']) + ')' if entry['failures'] else ''}"
              f"{' ' + entry['message'] if entry['message'] else ''}; {entry['cpu_seconds']:.0f} CPU s", flush=True)
        write(out, configs, entries, written, skipped, args.budget_minutes, kept)
    write(out, configs, entries, written, skipped, args.budget_minutes, kept)
    print_costs(configs, entries)
    print(f"wrote {out}")
    return 0


def write(out: Path, configs, entries: dict, written: dict, skipped: list, budget: float | None, kept: dict) -> None:
    note = ""
    listed = [(row, entries[row] or written[row]) for row, _, _ in configs]
    if skipped:
        note = (f"Not checked, the budget of {budget:g} CPU minutes having run out: "
                + ", ".join(f"{r.table} · {r.name}" for r in skipped) + ".")
    elif any(entry is None or entry["status"] == gate.NOT_CHECKED for _, entry in listed):
        note = ("Rows marked not checked have no verdict yet: `make sanity` (or `rnnbench sanity <table>`) "
                "checks them, resuming where it stopped; `--plan` prices them.")
    if kept:  # a table asked for with --only: its other rows stay, after this command's
        listed_rows = {gate.row_cells_key(row) for row, _ in listed}
        kept = {t: [line for line in lines if gate.line_row_key(line) not in listed_rows] for t, lines in kept.items()}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(gate.render(listed, note, kept))


def print_plan(configs, entries: dict, written: dict, done: list[dict]) -> int:
    by_table: dict[str, list[float | None]] = {}
    for row, cfg, key in configs:
        known = entries[row] or written[row]
        if known is not None and known["status"] != gate.NOT_CHECKED:
            print(f"{row.table:22} {row.name:50} {known['status']} (cached{', carried over' if known.get('carried_from') else ''})")
            continue
        seconds = estimate(row, str(cfg.task.name), done)
        by_table.setdefault(row.table, []).append(seconds)
        print(f"{row.table:22} {row.name:50} to check, {'?' if seconds is None else f'~{seconds / 60:.1f}'} CPU min")
    for table, costs in by_table.items():
        known = [c for c in costs if c is not None]
        total = f"~{sum(known) / 60:.0f} CPU min" + (f" for the {len(known)} priced" if len(known) < len(costs) else "")
        print(f"{table}: {len(costs)} row(s) to check, {total if known else 'no estimate yet (check one row first)'}")
    return 0


def print_costs(configs, entries: dict) -> None:
    """CPU minutes of the rows checked, per table and per row."""
    per_table: dict[str, list[float]] = {}
    for row, _, _ in configs:
        entry = entries[row]
        if entry and entry.get("verdict"):
            per_table.setdefault(row.table, []).append(entry["cpu_seconds"])
    for table, seconds in per_table.items():
        print(f"{table}: {len(seconds)} row(s) checked, {sum(seconds) / 60:.1f} CPU min "
              f"({statistics.fmean(seconds) / 60:.1f} a row, at most {max(seconds) / 60:.1f})")

