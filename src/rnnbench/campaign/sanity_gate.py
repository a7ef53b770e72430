"""The sanity gate: which rows a campaign runs, their cached sanity verdicts, the committed
table of them (results/sanity.md), and the check a sweep makes before it trains a row.

A row is one encoder under one experiment config (conf/experiment/), composed as
scripts/make_table.py composes its jobs (``row_config``), at the protocol's first seed and
the experiment's ``trainer.lr``; the rows of the default task (conf/config.yaml, the
embedded default job) are every encoder under the default config. ``rnnbench.training.sanity``
checks a row's model; its verdict is cached in ``<paths.runs_dir>/sanity/<key>.json``,
keyed by the row's run identity (config, component versions, data fingerprint:
``results.identity``) and the checks' thresholds, so a fixed encoder (a bumped version),
other data or other thresholds give a new key and a fresh check. results/sanity.md lists
each row with its key: a verdict there counts as cached too (a fresh clone checks nothing
it has committed), and a line of the checks' previous version carries over to the new key
where a cached entry would (``committed_entry``, ``sanity.carried_over``: rows whose training
loss has no regulariser), so the committed file alone gives those rows their verdicts.

``Gate.allows`` is what a sweep asks before it trains a run of a row: it returns False,
saying once which check failed with its value, for a row whose verdict is a failure.
``RNNBENCH_SANITY_GATE=off`` switches it off (the test suite's setting: its tiny smoke
models are not meant to pass); ``make_table.py --skip-sanity`` does so for one command,
and the table says so.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from rnnbench.training import sanity
from rnnbench.compose import compose_config
from rnnbench.data.embeddings import GLOVE_SOURCE
from rnnbench.errors import DatasetMissingError, RnnbenchError
from rnnbench.campaign.definitions import ExperimentPlan, all_experiments, experiments_of, sweep_of
from rnnbench.campaign.jobs import at_seed_and_rate
from rnnbench.results.identity import identity_parts
from rnnbench.results.records import write_json_atomic
from rnnbench.results.run_record import git_commit
from rnnbench.results.tables import column_metrics, registry_key
from rnnbench.data.prepare import prepare
from rnnbench.encoders.build import known_encoders

DEFAULT_TABLE = "default task"  # the rows of conf/config.yaml's task, every encoder
GATE_ENV = "RNNBENCH_SANITY_GATE"
MARKDOWN = "sanity.md"
# Checked first when a budget cannot cover every row: the tables whose verdicts the known defects touched.
# RCRN Table 1 comes last of them: its 16 domains repeat one model (three encoders on Amazon reviews).
PASS, FAIL, DATA_MISSING, ERROR, NOT_CHECKED = "pass", "fail", "data missing", "error", "not checked"


@dataclass(frozen=True)
class Row:
    table: str
    experiment: str | None  # None: the default config (no experiment)
    encoder: str

    @property
    def name(self) -> str:
        return f"{self.experiment or 'default'}: {self.encoder}"


def committed_tables(results_dir: str | Path = "results") -> list[str]:
    """The tables with committed evidence (results/<table>.csv) that experiment configs fill."""

    filled = {e.table for e in all_experiments()}
    return sorted(p.stem for p in Path(results_dir).glob("*.csv") if "." not in p.stem and p.stem in filled)


def table_rows(table: str, extra: list[str] = ()) -> list[Row]:
    """Every (experiment, encoder) row of ``table``'s sweeps, encoders without a config left out."""

    if table == DEFAULT_TABLE:
        return [Row(table, None, enc) for enc in known_encoders()]
    built = set(known_encoders())
    return [Row(table, exp, enc) for exp in sorted(experiments_of(table)) for enc in sweep_of(exp, list(extra)) if enc in built]  # name order


def by_priority(tables: list[str]) -> list[str]:
    """The tables to check, those whose registry file sets a ``sanity_priority`` first, in its order."""

    priority = registry_key("sanity_priority")
    first = sorted((t for t in tables if t in priority), key=lambda t: priority[t])
    return first + [t for t in tables if t not in first and t != DEFAULT_TABLE] + ([DEFAULT_TABLE] if DEFAULT_TABLE in tables else [])


def row_config(row: Row, extra: list[str] = (), base: DictConfig | None = None) -> DictConfig:
    """The row's config: make_table's job config at the protocol's first seed and the experiment's
    ``trainer.lr`` (``base``: the experiment's composed config, if at hand)."""
    extra = list(extra)
    if row.experiment is None:
        return compose_config([f"encoder={row.encoder}", *extra])
    base = base if base is not None else compose_config([f"experiment={row.experiment}", *extra])
    # The composition the row's jobs share, at the seed and rate set as values (as campaign.jobs sets them).
    cfg = compose_config([f"experiment={row.experiment}", f"encoder={row.encoder}", *extra])
    return at_seed_and_rate(cfg, int(base.table.protocol.seeds[0]), float(base.trainer.lr), extra)


def row_key(cfg: DictConfig, checks: dict | None = None) -> str:
    """The row's cache key under the checks' constants (``checks``: the current ones by default)."""
    blob = json.dumps({"run": identity_parts(cfg), "checks": checks or sanity.thresholds()}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def cache_file(cfg: DictConfig, key: str) -> Path:
    return Path(str(cfg.paths.runs_dir)) / "sanity" / f"{key[:16]}.json"


def _read_entry(cfg: DictConfig, key: str) -> dict | None:
    try:
        entry = json.loads(cache_file(cfg, key).read_text())
    except (OSError, ValueError):
        return None
    return entry if entry.get("key") == key else None


def read_cached(cfg: DictConfig, key: str) -> dict | None:
    """The row's cached entry under ``key``; else its entry from the checks' previous version where
    the current checks would give the same (``sanity.carried_over``: the row's training loss has
    no regulariser), stored under ``key`` with ``carried_from`` naming the old key."""
    entry = _read_entry(cfg, key)
    if entry is not None:
        return entry
    old_key = row_key(cfg, sanity.PREVIOUS)
    old = _read_entry(cfg, old_key)
    carried = sanity.carried_over(old, sanity.regulariser_in_use(cfg)) if old is not None else None
    if carried is None:
        return None
    entry = {**carried, "key": key, "carried_from": old_key}
    write_json_atomic(cache_file(cfg, key), entry)
    return entry


def committed_lines(path: str | Path) -> dict[str, dict]:
    """{key prefix: {"status", "failures", "line"}} of the rows of a written results/sanity.md."""
    path = Path(path)
    if not path.exists():
        return {}
    out = {}
    for line in path.read_text().splitlines():
        match = re.search(r"`([0-9a-f]{16})`\s*\|\s*$", line)
        if match:
            cells = _cells(line)
            failures = [f for f in cells[-2].split("; ") if f and f != "-"]
            out[match.group(1)] = {"status": cells[-3].strip("*"), "failures": failures, "line": line}
    return out


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def written_sections(path: str | Path) -> dict[str, list[str]]:
    """{table: its row lines} of a written results/sanity.md (kept when other tables are checked)."""
    path = Path(path)
    sections: dict[str, list[str]] = {}
    current = None
    for line in path.read_text().splitlines() if path.exists() else []:
        if line.startswith("## "):
            current = line[3:].strip()
            sections[current] = []
        elif current and line.startswith("| ") and not line.startswith("| experiment |"):
            sections[current].append(line)
    return sections


def committed_verdicts(results_dir: str | Path) -> dict[str, dict]:
    """The verdicts of the committed results/sanity.md, by key prefix."""
    return committed_lines(Path(results_dir) / MARKDOWN)


def _with_key(line: str, key: str) -> str:
    """A written row line with its key cell replaced by ``key``'s prefix."""
    return re.sub(r"`[0-9a-f]{16}`(\s*\|\s*)$", lambda m: f"`{key[:16]}`{m.group(1)}", line)


def committed_entry(cfg: DictConfig, key: str, committed: dict[str, dict]) -> dict | None:
    """The row's line in a written results/sanity.md (``committed``: ``committed_lines``): under
    ``key``, else the previous version's line where its verdict carries over as it is (the
    row's training loss has no regulariser: ``sanity.carried_over``), its key cell replaced by
    ``key``'s and ``carried_from`` naming the old prefix. A fresh clone, without the cache,
    so keeps the committed verdicts that the checks' change cannot alter."""
    if key[:16] in committed:
        return committed[key[:16]]
    old = row_key(cfg, sanity.PREVIOUS)[:16]
    line = committed.get(old)
    if line is None or line["status"] not in (PASS, FAIL) or sanity.regulariser_in_use(cfg):
        return None
    return {**line, "line": _with_key(line["line"], key), "carried_from": old}


def previous_line(cfg: DictConfig, committed: dict[str, dict]) -> dict | None:
    """The row's line of the checks' previous version in a written results/sanity.md (a verdict
    found without the regulariser, or a line already marked not checked again), where the
    current version has none: what a row not checked again shows beside "not checked"."""
    return committed.get(row_key(cfg, sanity.PREVIOUS)[:16])


def known_entry(cfg: DictConfig, key: str) -> dict | None:
    """The row's verdict on record: cached (``read_cached``), else committed (``committed_entry``)."""
    return read_cached(cfg, key) or committed_entry(cfg, key, committed_verdicts(cfg.paths.results_dir))


def data_identity(cfg: DictConfig) -> str:
    """What ``prepare`` reads: rows with equal identities share one prepared dataset."""
    parts = {k: OmegaConf.to_container(cfg[k], resolve=True) for k in ("embedding", "paths")}
    task = OmegaConf.to_container(cfg.task, resolve=True)
    parts["task"] = {k: task.get(k) for k in ("reader", "min_freq", "tokenizer")}
    return json.dumps(parts, sort_keys=True, default=str)


class DataCache:
    """The last prepared dataset (rows of one task follow each other)."""

    def __init__(self):
        self.key, self.data = None, None

    def get(self, cfg: DictConfig):

        key = data_identity(cfg)
        if key != self.key:
            self.key, self.data = None, None  # the last dataset is freed before the next is read
            self.data = prepare(cfg)
            self.key = key
        return self.data


def evaluate(row: Row, cfg: DictConfig, key: str, data: DataCache | None = None, say=lambda _: None) -> dict:
    """Check the row now, cache and return its entry; a dataset or embedding file that is absent
    gives the status "data missing", not a failure."""

    data = data or DataCache()
    cpu, wall = time.process_time(), time.perf_counter()
    entry = {"key": key, "row": {"table": row.table, "experiment": row.experiment, "encoder": row.encoder,
                                 "task": str(cfg.task.name)}, "verdict": None, "failures": [], "message": ""}
    embedding = Path(str(cfg.embedding.path)) if cfg.embedding.get("kind") == "glove" and cfg.embedding.get("path") else None
    try:
        if embedding is not None and not embedding.exists():
            raise DatasetMissingError(f"embeddings {cfg.embedding.name}", [embedding.name], embedding.parent, GLOVE_SOURCE)
        prepared = data.get(cfg)
        entry["prepare_cpu_seconds"] = round(time.process_time() - cpu, 1)
        verdict = sanity.check_model(cfg, prepared, say)
        entry.update(status=PASS if verdict.passed else FAIL, verdict=verdict.to_dict(), failures=verdict.failures())
    except DatasetMissingError as exc:
        entry.update(status=DATA_MISSING, message=str(exc))
    except RnnbenchError as exc:
        entry.update(status=ERROR, message=str(exc))
    except Exception as exc:  # noqa: BLE001 - one row's crash is that row's verdict, not the end of the table
        entry.update(status=ERROR, message=f"{type(exc).__name__}: {exc}")
    entry.update(cpu_seconds=round(time.process_time() - cpu, 1), wall_seconds=round(time.perf_counter() - wall, 1),
                 checked=datetime.datetime.now(datetime.timezone.utc).date().isoformat(), commit=git_commit())
    path = cache_file(cfg, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, entry)
    return entry


class Gate:
    """What a sweep asks before it trains a run of a row (scripts/make_table.py, ``ensure``)."""

    def __init__(self, skip: bool = False, say=lambda line: print(line, flush=True)):
        self.skip = skip
        self.say = say
        self.decided: dict[tuple, bool] = {}
        self.unchecked: set[tuple[str, str]] = set()  # rows started with the gate skipped

    def off(self) -> bool:
        return self.skip or os.environ.get(GATE_ENV, "").lower() == "off"

    def allows(self, experiment: str, encoder: str, extra: list[str]) -> bool:
        """Whether a run of ``encoder`` under ``experiment`` may start: its row's cached verdict,
        else its verdict now (checked and cached; minutes), is not a failure."""
        if self.off():
            if self.skip:
                self.unchecked.add((experiment, encoder))
            return True
        memo = (experiment, encoder, tuple(extra))
        if memo not in self.decided:
            row = Row("", experiment, encoder)
            cfg = row_config(row, extra)
            key = row_key(cfg)
            entry = known_entry(cfg, key)
            if entry is None:
                self.say(f"sanity check of {experiment}: {encoder} (before its first run; cached for the next)")
                entry = evaluate(row, cfg, key, say=self.say)
            allowed = entry["status"] != FAIL
            if not allowed:
                failures = "; ".join(entry["failures"])
                why = (": it memorises without its regulariser, not with it, and its runs train with it"
                       if sanity.PREVENTS_FITTING in failures else "")
                self.say(f"refused: {experiment}: {encoder} fails the sanity gate ({failures}){why}; "
                         f"no run of it starts (docs/sanity.md; --skip-sanity runs it anyway, and the table says so)")
            self.decided[memo] = allowed
        return self.decided[memo]

    def known_failures(self, experiment: str, encoder: str, extra: list[str], base: DictConfig | None = None) -> list[str]:
        """The failed checks of the row's cached or committed verdict ([] when it passes or is not
        checked yet; nothing is checked here)."""
        return _known_failures(*_composed(experiment, encoder, extra, base))

    def notes(self, plans: list[ExperimentPlan], extra: list[str], rows: list[dict] | None = None) -> list[str]:
        """Table notes: rows started with the gate skipped, and rows whose verdict on record (cached,
        or committed in results/sanity.md) is a failure, whether the gate is on or not: what the
        table says follows from its evidence. ``rows``: the table's evidence rows, which tell a
        failing row with runs (made with --skip-sanity or before the gate) from one without."""
        notes = []
        if self.unchecked:
            started = ", ".join(f"{e}: {enc}" for e, enc in sorted(self.unchecked))
            today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
            notes.append(f"Runs of {started} were started on {today} without the sanity gate (--skip-sanity).")
        ran = {(r["encoder"], r.get("variant", ""), r.get("dataset", "")) for r in rows or []}
        for experiment, base, encoders in plans:
            columns = [*_columns(base)]
            for encoder in encoders:
                cfg, key = _composed(experiment, encoder, extra, base)  # once per row: the questions below share it
                failures = _known_failures(cfg, key)
                has_runs = any((encoder, base.table.variant or "", column) in ran for column in columns)
                if not failures:
                    earlier = _earlier_failures(cfg, key)
                    if earlier:  # not checked with its regulariser yet, and it failed without it
                        what = "its runs predate the check" if has_runs else "the gate checks it before its first run"
                        notes.append(f"{experiment}: {encoder} is not checked with its regulariser yet and failed the "
                                     f"sanity gate without it ({'; '.join(earlier)}; results/{MARKDOWN}): {what}.")
                    continue
                if committed_entry(cfg, key, committed_verdicts(cfg.paths.results_dir)) is None:
                    # the note cites results/sanity.md: a verdict only cached would leave the table citing a
                    # line that is not there (and a clone regenerating the table without the note)
                    table = base.table.name
                    print(f"{table}: the sanity verdict of {experiment}: {encoder} is cached in the run folders only: "
                          f"`rnnbench sanity {table} --no-run` writes it into results/{MARKDOWN}; commit that with the "
                          f"table", flush=True)
                what = ("its runs were made with --skip-sanity or before the gate" if has_runs
                        else "no run of it was started")
                notes.append(f"{experiment}: {encoder} fails the sanity gate ({'; '.join(failures)}; "
                             f"results/{MARKDOWN}): {what}.")
        return notes



def _composed(experiment: str, encoder: str, extra: list[str], base: DictConfig | None) -> tuple[DictConfig, str]:
    """A row's config and cache key."""
    cfg = row_config(Row("", experiment, encoder), extra, base)
    return cfg, row_key(cfg)


def _known_failures(cfg: DictConfig, key: str) -> list[str]:
    """The failed checks of the row's cached or committed verdict ([] when it passes or is not
    checked yet; nothing is checked here)."""
    entry = known_entry(cfg, key)
    return list(entry["failures"]) if entry and entry["status"] == FAIL else []


def _earlier_failures(cfg: DictConfig, key: str) -> list[str]:
    """The failed checks the previous version of the checks found for a row the current version
    has not checked (a row whose regulariser weighs in: results/sanity.md's "not checked" line
    keeps them), or []."""
    if known_entry(cfg, key) is not None:
        return []
    line = previous_line(cfg, committed_verdicts(cfg.paths.results_dir))
    return list(line["failures"]) if line and line["status"] in (FAIL, NOT_CHECKED) else []


def _columns(base: DictConfig) -> list[str]:
    """The table columns an experiment's runs fill (its evidence rows' ``dataset``)."""

    return [*column_metrics(base.table, base), *(base.table.evaluated_columns or {})]


# ---- results/sanity.md ---------------------------------------------------------------------------

CHECK_TITLES = {"initial_loss": "initial loss (prior)", "gradients": "gradients", "input": "input: token / padding",
                "train_eval": "train/eval norm", "memorisation": "memorised"}


# Marks a row that memorises only without its encoder's regulariser (results/sanity.md's memorised cell).
REGULARISER_MARK = "⚠ regulariser"
NOT_CHECKED_AGAIN = "not checked with its regulariser"  # the memorised cell of a row whose regulariser weighs in, not checked again


def _cell(check: dict) -> str:
    cell = check["shown"] if check["passed"] else f"**{check['shown']}** ✗"
    return f"{cell} {REGULARISER_MARK}" if (check.get("detail") or {}).get("regulariser_prevents_fitting") else cell


def not_checked_line(row: Row, previous: dict) -> str:
    """The line of a row not checked under the current checks whose previous version's line is
    ``previous`` (``previous_line``): "not checked", its four checks at initialisation as they
    were (the change does not touch them), the memorisation found without the regulariser
    beside, and the previous key (which no current key equals: the gate reads no verdict from it)."""
    if previous["status"] == NOT_CHECKED:
        return previous["line"]
    cells = _cells(previous["line"])
    version = sanity.PREVIOUS["version"]
    memorised = f"{NOT_CHECKED_AGAIN}; without it (version {version}): {cells[-5]}"
    failed = "-" if previous["status"] == PASS else f"version {version}, without the regulariser: {cells[-2]}"
    return "| " + " | ".join([*cells[:-5], memorised, "", NOT_CHECKED, failed, cells[-1]]) + " |"


def render(entries: list[tuple[Row, dict | None]], skipped_note: str = "", kept: dict[str, list[str]] | None = None) -> str:
    """results/sanity.md: one section per table, one line per row (``None``: not checked; an entry
    read from the markdown written earlier, ``committed_lines``, keeps its line). ``kept``: the row
    lines of other tables (``written_sections`` of the earlier file), listed as they were."""

    sections: dict[str, list[str]] = {}
    for row, entry in entries:
        line = entry["line"] if entry and "line" in entry else "| " + " | ".join(_row_cells(row, entry)) + " |"
        sections.setdefault(row.table, []).append(line)
    for table, lines in (kept or {}).items():
        sections.setdefault(table, []).extend(lines)
    counts: dict[str, int] = {}
    cpu, flagged = 0.0, 0
    for line in (line for lines in sections.values() for line in lines):
        cells = _cells(line)
        status = cells[-3].strip("*")
        counts[status] = counts.get(status, 0) + 1
        flagged += REGULARISER_MARK in line
        cpu += float(cells[-4]) if re.fullmatch(r"[0-9.]+", cells[-4]) else 0.0
    t = sanity.thresholds()
    lines = [
        "# Sanity checks of every campaign row",
        "",
        f"Written by `make sanity` (scripts/sanity.py); code {git_commit()[:12]}. Every row is an encoder under one "
        "experiment config, built as its runs build it (the protocol's first seed, the experiment's `trainer.lr`, "
        f"its optimizer), checked on a fixed subset of {t['examples']} training examples. What each check measures and "
        "why its threshold is what it is: docs/sanity.md.",
        "",
        f"- initial loss: within {t['prior_tolerance']:.0%} (at least {t['prior_floor']:g} nats) of the uniform prior's "
        "(ln C for C classes);",
        "- gradients: every trainable parameter tensor gets a non-zero gradient (excused tensors are counted);",
        f"- input: one changed real token changes the output (median relative change >= {t['token_change_min']:g}); "
        f"{t['padding_extra']} more padding positions and random vectors at padding change it by <= {t['padding_change_max']:g};",
        f"- train/eval norm: the encoder states' norm in train mode (dropout on, {t['draws']} draws) over eval mode's, "
        f"within {1 / t['train_eval_factor']:.2f}-{t['train_eval_factor']:g}x;",
        f"- memorised: >= {t['memorise_target']:.0%} training accuracy on the subset within {t['memorise_steps']} full-batch "
        f"steps of the row's optimizer at its rate, at {t['memorise_reference_lr']:g} or above; below it the budget grows as "
        f"1/lr, up to {t['memorise_max_steps']} steps (scored every {t['memorise_every']} steps), on the loss the row's runs "
        "train on, the encoder's regulariser included (MZU's zone disagreement weighted by lambda, FHE's differentiable "
        "sparsity penalty). Where the regulariser weighs in, the same steps without it, from the same initial weights, are "
        "shown after the verdict's (\"without the regulariser\"); rows without one, or whose weight is 0, train on one loss "
        "and show one number. Gates sampled in training (FHE) are scored sampled; the accuracy with eval-mode gates is shown "
        "beside.",
        "",
        f"{REGULARISER_MARK} marks a row that memorises only without its encoder's regulariser: {sanity.PREVENTS_FITTING}, "
        "so the row fails and the gate starts none of its runs, which would train with it.",
        "",
        "Rows: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        + (f" ({flagged} fail {REGULARISER_MARK})" if flagged else "")
        + f"; {cpu / 60:.0f} CPU minutes of checks (one thread).",
    ]
    if any(NOT_CHECKED_AGAIN in line for lines in sections.values() for line in lines):
        lines += ["", f"A row {NOT_CHECKED_AGAIN} shows the memorisation that version {sanity.PREVIOUS['version']} of the "
                  "checks found without it, and that version's key; no verdict is read from it: the gate checks the row "
                  "before its first run."]
    if skipped_note:
        lines += ["", skipped_note]
    header = ["experiment", "encoder", "task", "lr", *CHECK_TITLES.values(), "CPU s", "verdict", "failed", "key"]
    for table in by_priority(list(sections)):
        lines += ["", f"## {table}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header), *sections[table]]
    return "\n".join(lines) + "\n"


def row_cells_key(row: Row) -> tuple[str, str]:
    """The experiment and encoder cells of ``row``'s line (how a written line is matched to its row)."""
    return (f"`{row.experiment}`" if row.experiment else "(default config)", f"`{row.encoder}`")


def line_row_key(line: str) -> tuple[str, str]:
    cells = _cells(line)
    return cells[0], cells[1]


def _row_cells(row: Row, entry: dict | None) -> list[str]:
    experiment = row_cells_key(row)[0]
    blank = [""] * len(CHECK_TITLES)
    if entry is None:
        return [experiment, f"`{row.encoder}`", "", "", *blank, "", "not checked", "-", ""]
    task, key, cpu = entry["row"]["task"], f"`{entry['key'][:16]}`", f"{entry.get('cpu_seconds', 0):.0f}"
    verdict = entry.get("verdict")
    if verdict is None:
        reason = entry.get("message", "")[:160].replace("|", "/")
        return [experiment, f"`{row.encoder}`", task, "", *blank, cpu, entry["status"], reason or "-", key]
    checks = {c["name"]: c for c in verdict["checks"]}
    cells = [_cell(checks[name]) if name in checks else "" for name in CHECK_TITLES]
    status = entry["status"] if entry["status"] == PASS else f"**{entry['status']}**"
    failures = "; ".join(entry.get("failures") or []) or "-"
    return [experiment, f"`{row.encoder}`", task, f"{verdict['lr']:g} ({verdict['optimizer']})", *cells, cpu, status,
            failures.replace("|", "/"), key]
