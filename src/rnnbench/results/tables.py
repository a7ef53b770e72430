"""Paper tables: the paper's numbers (our registry) beside ours (run records), in Markdown and LaTeX.

A cell of ours is mean ± sample standard deviation over seeds, with the number
of seeds. Rows for the paper's other systems keep their number and say they
are not an rnnbench encoder; rows for encoders not built yet say so.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

import yaml

REGISTRY = Path(__file__).resolve().parent / "paper_numbers"

NOT_OURS = "not an rnnbench encoder"
NOT_BUILT = "not built yet"
NO_RUNS = "no finished runs"


def paper_table(name: str) -> dict:
    path = REGISTRY / f"{name}.yaml"
    if not path.exists():
        known = sorted(p.stem for p in REGISTRY.glob("*.yaml"))
        raise KeyError(f"no paper table {name!r}; known: {', '.join(known)}")
    return yaml.safe_load(path.read_text())


@dataclass
class Row:
    model: str
    encoder: str | None
    paper: float | None
    ours: list[float]
    status: str  # "" when ours holds values

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.ours) if self.ours else None

    @property
    def std(self) -> float | None:
        return statistics.stdev(self.ours) if len(self.ours) > 1 else None


def build_rows(table: dict, column: str, ours: dict[str, list[float]], built: set[str]) -> list[Row]:
    """``ours`` maps encoder name -> test values (paper units) of its finished runs."""
    rows = []
    for r in table["rows"]:
        enc = r.get("encoder")
        values = ours.get(enc, []) if enc else []
        if not enc:
            status = NOT_OURS
        elif enc not in built:
            status = NOT_BUILT
        elif not values:
            status = NO_RUNS
        else:
            status = ""
        rows.append(Row(r["model"], enc, (r.get("values") or {}).get(column), values, status))
    return rows


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f}"


def _ours_cell(row: Row, pm: str) -> str:
    if row.status:
        return row.status
    spread = f" {pm} {row.std:.1f}" if row.std is not None else ""
    return f"{row.mean:.1f}{spread} (n={len(row.ours)})"


def _diff(row: Row) -> str:
    if row.status or row.paper is None:
        return ""
    return f"{row.mean - row.paper:+.1f}"


def markdown(title: str, rows: list[Row], footnotes: list[str]) -> str:
    lines = [f"# {title}", "", "| Model | Encoder | Paper | Ours (mean ± std, n seeds) | Ours − paper |", "|---|---|---:|---:|---:|"]
    for row in rows:
        enc = f"`{row.encoder}`" if row.encoder else ""
        lines.append(f"| {row.model} | {enc} | {_fmt(row.paper)} | {_ours_cell(row, '±')} | {_diff(row)} |")
    lines.append("")
    lines += [f"- {note}" for note in footnotes]
    return "\n".join(lines) + "\n"


def _tex_escape(text: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#"), ("$", r"\$")):
        text = text.replace(a, b)
    return text


def latex(title: str, rows: list[Row], footnotes: list[str]) -> str:
    out = [r"\begin{table}[t]", r"\centering", r"\begin{tabular}{llrrr}", r"\toprule",
           r"Model & Encoder & Paper & Ours (mean $\pm$ std, $n$) & $\Delta$ \\", r"\midrule"]
    for row in rows:
        ours = _tex_escape(_ours_cell(row, "$\\pm$")) if not row.status else r"\textit{" + _tex_escape(row.status) + "}"
        ours = ours.replace(r"\$\textbackslash{}pm\$", r"$\pm$")
        out.append(f"{_tex_escape(row.model)} & {_tex_escape(row.encoder or '')} & {_fmt(row.paper)} & {ours} & {_diff(row)} \\\\")
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
        f"({'frozen' if cfg['task'].get('freeze_embeddings') else 'trained'}); seeds {', '.join(map(str, seeds))}.",
        f"Training: at most {cfg['trainer']['epochs']} epochs, early stopping patience {cfg['trainer']['patience']}; "
        f"epochs run {epochs}, best epochs {best}; {cfg['trainer']['optimizer']} lr {cfg['trainer']['lr']}, batch {cfg['trainer']['batch_size']}; "
        f"{train_sizes[0]} training examples.",
        f"Hardware: {hw.get('cpu', hw.get('gpu', '?'))}, {hw.get('cpu_count')} cores, device {hw['device']}, torch {hw['torch']}; code {', '.join(c[:12] for c in commits)}.",
        "Paper: numbers as printed in the paper (its own embeddings and hardware), from src/rnnbench/results/paper_numbers/.",
    ]


def write_table(name: str, title: str, rows: list[Row], footnotes: list[str], out_dir: Path) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    md, tex = out_dir / f"{name}.md", out_dir / f"{name}.tex"
    md.write_text(markdown(title, rows, footnotes))
    tex.write_text(latex(title, rows, footnotes))
    return md, tex
