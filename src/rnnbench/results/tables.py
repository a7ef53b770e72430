"""Paper tables: the paper's numbers (our registry) beside ours (run records), in Markdown and LaTeX.

A cell of ours is mean ± sample standard deviation over seeds, with the number
of seeds. Runs that did not train (never beat the dev split's majority-class score:
``results/patience.py``) or that need a re-run under that rule are not averaged in: the
cell counts them instead ("1 of 5 runs did not train"). Rows for the paper's other
systems keep their number and say they are not an rnnbench encoder; rows for encoders
not built yet say so.
"""
from __future__ import annotations

import copy
import functools
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from omegaconf import OmegaConf

from rnnbench.config import embeddings_frozen
from rnnbench.results.patience import DID_NOT_TRAIN, NEEDS_RERUN

REGISTRY = Path(__file__).resolve().parent / "paper_numbers"

NOT_OURS = "not an rnnbench encoder"
NOT_BUILT = "not built yet"
NO_RUNS = "no finished runs"
NOT_IN_PAPER = "our baseline, not in the paper"
PAPER_NOTE = "Paper: numbers as printed in the paper (its own embeddings and hardware), from src/rnnbench/results/paper_numbers/."
OUR_VARIANT = "variant, ours"  # a paper model run in our own setting (e.g. a CPU-sized "small")


# Tables defined in memory instead of by a registry file: a comparison of your own encoders on your
# own data (``rnnbench compare``, rnnbench.campaign.comparison), table name -> its definition.
DEFINED: dict[str, dict] = {}


def define_table(name: str, table: dict) -> None:
    """Define table ``name`` in memory, shaped as a registry file is (rows, claims, caption): every
    reader of ``paper_table`` sees it, in this process, as if the file existed."""
    DEFINED[name] = copy.deepcopy(table)


def registry_key(key: str) -> dict[str, object]:
    """{table: its registry file's value of ``key``} for every registry file that sets it: what a table
    says of itself in its one definition (``measured_by``, ``sanity_priority``)."""
    out = {}
    for path in sorted(REGISTRY.glob("*.yaml")):
        value = paper_table(path.stem).get(key)
        if value is not None:
            out[path.stem] = value
    return out


def paper_table(name: str) -> dict:
    """The registry's numbers for table ``name`` (src/rnnbench/results/paper_numbers/<name>.yaml),
    or the table defined in memory under that name (``define_table``)."""
    if name in DEFINED:
        return copy.deepcopy(DEFINED[name])
    path = REGISTRY / f"{name}.yaml"
    if not path.exists():
        known = sorted(p.stem for p in REGISTRY.glob("*.yaml"))
        raise KeyError(f"no paper table {name!r}; known: {', '.join(known)}")
    stat = path.stat()
    # A copy: callers may change what they get, and must not change what the next caller reads.
    return copy.deepcopy(_parsed(str(path), stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=256)
def _parsed(path: str, mtime_ns: int, size: int) -> dict:
    """One YAML parse per registry file and version: the ledger asks for a table's registry once
    per claim (its paper numbers, item unit, stand-ins), and parsing it each time was a large part
    of the report's time. The file's path, mtime and size are the key, so an edited file is read again."""
    return yaml.safe_load(Path(path).read_text())


def ours_only_table(caption: str) -> dict:
    """A table no paper printed (our synthetic tasks): every row is one of our encoders."""
    return {"paper": None, "table": None, "caption": caption, "rows": [], "ours_only": True}


def table_title(table: dict, metrics: list[str], units: str = "") -> str:
    split = f"(test {', '.join(metrics)}{units})"
    if table.get("ours_only"):
        return f"{table['caption']} {split}"
    return f"{table['paper'].upper()} Table {table['table']}: {table['caption']} {split}"


def column_metrics(table_cfg, root=None) -> dict[str, str]:
    """{paper column: our test metric} of an experiment's ``table`` config. OmegaConf never
    interpolates dict keys, so ``${...}`` in a column name is resolved here against ``root``
    (the whole run config), e.g. ``picking/accuracy/len${task.reader.length}``."""
    if not table_cfg.get("columns"):
        return {table_cfg.column: table_cfg.metric}
    out = {}
    for column, metric in table_cfg.columns.items():
        if root is not None and "${" in column:
            column = re.sub(r"\$\{([^}]+)\}", lambda m: str(OmegaConf.select(root, m.group(1))), column)
        out[column] = metric
    return out


@dataclass
class Row:
    model: str
    encoder: str | None
    variant: str | None
    paper: dict[str, float | None]  # column -> the paper's number
    ours: dict[str, list[float]]  # column -> our test values (paper units), one per seed
    status: str  # "" when ours holds values
    digits: int = 1  # decimals shown (bits per character needs 2-3)
    untrained: dict[str, list[str]] = field(default_factory=dict)  # column -> the patience status of each run left out of ``ours``

    def mean(self, column: str) -> float | None:
        values = self.ours.get(column) or []
        return statistics.fmean(values) if values else None

    def std(self, column: str) -> float | None:
        values = self.ours.get(column) or []
        return statistics.stdev(values) if len(values) > 1 else None


def build_rows(table: dict, columns: list[str], ours: dict[tuple[str, str | None], dict[str, list[float]]], built: set[str], digits: int = 1,
               not_run: dict[tuple[str, str | None], str] | None = None,
               untrained: dict[tuple[str, str | None], dict[str, list[str]]] | None = None) -> list[Row]:
    """``ours`` maps (encoder, variant) -> column -> test values (paper units) of its finished runs that
    trained; ``untrained`` likewise -> the patience status of each run that did not (or needs a re-run);
    ``not_run`` (encoder, variant) -> the cell of a row left out of the campaign (``table.not_run``)."""
    untrained = untrained or {}

    def flagged(key) -> dict[str, list[str]]:
        return {c: v for c, v in untrained.get(key, {}).items() if c in columns and v}

    rows = []
    for r in table["rows"]:
        enc, variant = r.get("encoder"), r.get("variant")
        values = {c: v for c, v in ours.get((enc, variant), {}).items() if c in columns and v} if enc else {}
        left_out = flagged((enc, variant)) if enc else {}
        if not enc:
            status = NOT_OURS
        elif enc not in built:
            status = NOT_BUILT
        elif not values and not left_out:
            status = (not_run or {}).get((enc, variant)) or NO_RUNS
        else:
            status = ""
        paper = {c: (r.get("values") or {}).get(c) for c in columns}
        rows.append(Row(r["model"], enc, variant, paper, values, status, digits, left_out))
    # Runs no paper row takes, shown after the paper's rows with empty paper cells: our baselines the
    # paper did not run (bilstm in MZU Table 6), a paper model in our own setting (capMZU "small"), or
    # every row of a table no paper printed.
    listed = {(r.get("encoder"), r.get("variant")) for r in table["rows"]}
    for enc, variant in dict.fromkeys([*ours, *untrained]):
        values = {c: v for c, v in ours.get((enc, variant), {}).items() if c in columns and v}
        if (enc, variant) in listed or not (values or flagged((enc, variant))):
            continue
        rows.append(Row(model_name(table, enc, variant), enc, variant, {c: None for c in columns}, values, "", digits, flagged((enc, variant))))
    return rows


def model_name(table: dict, encoder: str, variant: str | None) -> str:
    """The row name our runs of (encoder, variant) appear under: the paper's row when it has one;
    else our baseline the paper did not run (bilstm in MZU Table 6), a paper model in our own
    setting (capMZU "small"; named as the registry's ``our_rows`` says where it does), or, in a
    table no paper printed, the encoder itself."""
    for r in table["rows"]:
        if r.get("encoder") == encoder and r.get("variant") == variant:
            return r["model"]
    if table.get("ours_only"):
        return encoder
    # The registry can name our variants' rows itself: where the plain row is not the plain model
    # (LSTM-baseline Table 1's plain `2l_lstm` is the enhanced 2-LSTM+MC+Pooling+ResV+ResL, and
    # its one-trick rows are not that model).
    if encoder in (table.get("our_rows") or {}):
        return f"{table['our_rows'][encoder]} ({variant or 'default'} {OUR_VARIANT})"
    paper_model: dict[str, str] = {}  # encoder -> the paper's name for it, from its plain (variant-less) row first
    for r in sorted(table["rows"], key=lambda r: r.get("variant") is not None):
        if r.get("encoder"):
            paper_model.setdefault(r["encoder"], r["model"])
    if encoder in paper_model:
        return f"{paper_model[encoder]} ({variant or 'default'} {OUR_VARIANT})"
    return f"{encoder} ({NOT_IN_PAPER})"


def _fmt(x: float | None, digits: int = 1) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def untrained_note(statuses: list[str], total: int) -> str:
    """``1 of 5 runs did not train``, ``2 of 5 runs to re-run (patience rule)``, or both joined:
    what a cell says of the runs its mean leaves out; "" where there are none."""
    parts = []
    for status, text in ((DID_NOT_TRAIN, "did not train"), (NEEDS_RERUN, "to re-run (patience rule)")):
        count = statuses.count(status)
        if count:
            parts.append(f"{count} of {total} runs {text}" if not parts else f"{count} {text}")
    return ", ".join(parts)


def _ours_cell(row: Row, column: str, pm: str) -> str:
    if row.status:
        return row.status
    left_out = row.untrained.get(column) or []
    note = untrained_note(left_out, len(row.ours.get(column) or []) + len(left_out))
    if row.mean(column) is None:
        return note or NO_RUNS
    std = row.std(column)
    spread = f" {pm} {std:.{row.digits}f}" if std is not None else ""
    return f"{row.mean(column):.{row.digits}f}{spread} (n={len(row.ours[column])})" + (f"; {note}" if note else "")


def _diff(row: Row, column: str) -> str:
    if row.status or row.paper.get(column) is None or row.mean(column) is None:
        return ""
    return f"{row.mean(column) - row.paper[column]:+.{row.digits}f}"


def _encoder_cell(row: Row) -> str:
    if not row.encoder:
        return ""
    return f"`{row.encoder}`" + (f" ({row.variant})" if row.variant else "")


def markdown(title: str, rows: list[Row], footnotes: list[str], columns: list[str], paper: bool = True) -> str:
    if not paper:  # a table no paper printed: our columns only
        lines = [f"# {title}", "", "| Model | Encoder | " + " | ".join(f"{c} (mean ± std, n)" for c in columns) + " |",
                 "|---|---|" + "---:|" * len(columns)]
        lines += [f"| {row.model} | {_encoder_cell(row)} | " + " | ".join(_ours_cell(row, c, "±") for c in columns) + " |" for row in rows]
        return "\n".join([*lines, "", *[f"- {note}" for note in footnotes]]) + "\n"
    if len(columns) == 1:
        head = ["| Model | Encoder | Paper | Ours (mean ± std, n seeds) | Ours − paper |", "|---|---|---:|---:|---:|"]
    else:
        head = ["| Model | Encoder | " + " | ".join(f"{c} paper | {c} ours | Δ" for c in columns) + " |",
                "|---|---|" + "---:|---:|---:|" * len(columns)]
    lines = [f"# {title}", "", *head]
    for row in rows:
        cells = " | ".join(f"{_fmt(row.paper[c], row.digits)} | {_ours_cell(row, c, '±')} | {_diff(row, c)}" for c in columns)
        lines.append(f"| {row.model} | {_encoder_cell(row)} | {cells} |")
    lines.append("")
    if len(columns) > 1:
        lines.append("Ours: mean ± std over seeds (n seeds); Δ = ours − paper.")
        lines.append("")
    lines += [f"- {note}" for note in footnotes]
    return "\n".join(lines) + "\n"


def _tex_escape(text: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#"), ("$", r"\$")):
        text = text.replace(a, b)
    return text


def _tex_ours(row: Row, column: str) -> str:
    if row.status:
        return r"\textit{" + _tex_escape(row.status) + "}"
    return _tex_escape(_ours_cell(row, column, "PLUSMINUS")).replace("PLUSMINUS", r"$\pm$")


def latex(title: str, rows: list[Row], footnotes: list[str], columns: list[str], paper: bool = True) -> str:
    if not paper:
        spec = "ll" + "r" * len(columns)
        header = "Model & Encoder & " + " & ".join(_tex_escape(c) for c in columns) + r" \\"
    elif len(columns) == 1:
        spec, header = "llrrr", r"Model & Encoder & Paper & Ours (mean $\pm$ std, $n$) & $\Delta$ \\"
    else:
        spec = "ll" + "rrr" * len(columns)
        header = "Model & Encoder & " + " & ".join(f"{_tex_escape(c)} paper & ours & $\\Delta$" for c in columns) + r" \\"
    out = [r"\begin{table}[t]", r"\centering", f"\\begin{{tabular}}{{{spec}}}", r"\toprule", header, r"\midrule"]
    for row in rows:
        enc = _tex_escape(row.encoder or "") + (f" ({_tex_escape(row.variant)})" if row.variant else "")
        if paper:
            cells = " & ".join(f"{_fmt(row.paper[c], row.digits)} & {_tex_ours(row, c)} & {_diff(row, c)}" for c in columns)
        else:
            cells = " & ".join(_tex_ours(row, c) for c in columns)
        out.append(f"{_tex_escape(row.model)} & {enc} & {cells} \\\\")
    out += [r"\bottomrule", r"\end{tabular}", f"\\caption{{{_tex_escape(title)}. " + _tex_escape(" ".join(footnotes)) + "}", r"\end{table}"]
    return "\n".join(out) + "\n"


def describe_runs(records: list[dict]) -> list[str]:
    """Footnotes saying how our numbers were obtained, read from the records themselves."""
    if not records:
        return ["No finished runs yet."]
    hw = records[0]["hardware"]
    cfg = records[0]["config"]
    epochs = sorted({r["epochs_run"] for r in records})
    best = sorted({r["best_epoch"] for r in records})
    seeds = sorted({r["seed"] for r in records})
    commits = sorted({r["git_commit"] for r in records})
    train_sizes = sorted({r["data"]["train"] for r in records})
    return [
        f"Ours: test split, best epoch chosen on dev; embeddings {records[0]['embedding']} "
        f"({'frozen' if embeddings_frozen(cfg) else 'trained'}); seeds {', '.join(map(str, seeds))}.",
        f"Training: at most {cfg['trainer']['epochs']} epochs"
        + (f" of at most {cfg['trainer']['max_batches']} batches" if cfg["trainer"].get("max_batches") else "")
        + f", early stopping patience {cfg['trainer']['patience']}; "
        f"epochs run {epochs}, best epochs {best}; {cfg['trainer']['optimizer']} lr {cfg['trainer']['lr']}, batch {cfg['trainer']['batch_size']}; "
        f"{train_sizes[0]} training examples.",
        f"Hardware: {hw.get('cpu', hw.get('gpu', '?'))}, {hw.get('cpu_count')} cores, device {hw['device']}, torch {hw['torch']}; code {', '.join(c[:12] for c in commits)}.",
        *[f"Metric {k}: {v}." for k, v in sorted(records[0].get("metric_implementations", {}).items())],
    ]


def write_table(name: str, title: str, rows: list[Row], footnotes: list[str], out_dir: Path, columns: list[str],
                paper: bool = True) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    md, tex = out_dir / f"{name}.md", out_dir / f"{name}.tex"
    md.write_text(markdown(title, rows, footnotes, columns, paper))
    tex.write_text(latex(title, rows, footnotes, columns, paper))
    return md, tex
