"""Your comparisons, as the report shows them: each folder under ``comparisons/`` (``--comparisons``)
that ``rnnbench compare`` wrote (``<name>/<name>.md`` beside ``<name>.csv``: a table's files, in the
formats of ``results/``), one page each, and a page listing them.

A comparison's page is its Markdown table rendered as a paper table's page is, its learning curves
drawn from its evidence, and its files copied beside the page, so its own links (the evidence CSV,
the plot) resolve in the site. Nothing is decided again: the page shows what the command wrote.
"""
from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from rnnbench.results import evidence
from rnnbench.site import markdown, pages

# The per-item scores: .items.csv.xz, or .items.csv.gz in a folder an earlier version wrote.
COPIED = ("*.csv", "*.csv.xz", "*.csv.gz", "*.tex", "plots/*.png")


@dataclass
class Found:
    name: str  # the comparison's (its files' stem)
    folder: Path  # its folder, whose name is its page's
    title: str
    baseline: str = ""
    verdicts: list[tuple[str, str]] = field(default_factory=list)  # (encoder, verdict) of each pair, as its table states it

    @property
    def href(self) -> str:
        return f"comparisons/{self.folder.name}/index.html"


def find(root: Path | None) -> list[Found]:
    """Every comparison under ``root`` (a folder per comparison), in name order; [] where there is none."""
    if root is None or not Path(root).is_dir():
        return []
    found = []
    for folder in sorted(p for p in Path(root).iterdir() if p.is_dir()):
        # <name>.md beside <name>.csv: comparisons/<name>/ by default, any folder with --out
        tables = [md for md in sorted(folder.glob("*.md")) if md.with_suffix(".csv").is_file()]
        if len(tables) != 1:
            continue
        text = tables[0].read_text()
        title = text.splitlines()[0][2:].strip() if text.startswith("# ") else tables[0].stem
        baseline, verdicts = stated_verdicts(text)
        found.append(Found(tables[0].stem, folder, title, baseline, verdicts))
    return found


def stated_verdicts(text: str) -> tuple[str, list[tuple[str, str]]]:
    """(the baseline, [(encoder, verdict)]) as the table's "Against" section states them ("", [] without one)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        heading = re.match(r"## Against `([^`]+)`", line)
        if not heading:
            continue
        rows = []
        for row in lines[i + 2:]:  # the table follows the heading and a blank line
            if not row.startswith("|"):
                break
            rows.append([cell.strip() for cell in row.strip().strip("|").split("|")])
        if len(rows) < 2 or "Verdict" not in rows[0]:
            return heading.group(1), []
        column = rows[0].index("Verdict")
        found = [(row[0].strip("`"), row[column].strip("*").split(" (")[0]) for row in rows[2:] if len(row) > column]
        return heading.group(1), found
    return "", []


def _copy(folder: Path, target: Path) -> set[str]:
    copied = set()
    for pattern in COPIED:
        for path in sorted(folder.glob(pattern)):
            rel = path.relative_to(folder).as_posix()
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target / rel)
            copied.add(rel)
    return copied


def _curves(csv_path: Path, target: Path) -> str | None:
    from rnnbench.results import figures

    rows = evidence.read_csv(csv_path)
    columns = sorted({r["dataset"] for r in rows})
    names = {(r["encoder"], r["variant"]): r["encoder"] + (f" ({r['variant']})" if r["variant"] else "") for r in rows}
    fig = figures.learning_curves(rows, columns, "Dev score per epoch (mean over seeds, band min to max)", names)
    return None if fig is None else figures.save(fig, target).name


def write(found: list[Found], out: Path) -> None:
    """Each comparison's page (``out/comparisons/<name>/index.html``, its files beside it) and the
    page listing them (``out/comparisons/index.html``); nothing where there is no comparison."""
    if not found:
        return
    for comparison in found:
        target = out / "comparisons" / comparison.folder.name
        target.mkdir(parents=True, exist_ok=True)
        copied = _copy(comparison.folder, target)
        curves = _curves(comparison.folder / f"{comparison.name}.csv", target / "curves.svg")

        def link(href: str) -> str | None:  # its own files, copied beside the page; nothing else of the machine it ran on
            if href.startswith(("http://", "https://")):
                return href
            path, _, anchor = href.partition("#")
            return href if path in copied else (f"#{anchor}" if anchor and not path else None)

        body = markdown.to_html((comparison.folder / f"{comparison.name}.md").read_text(), link, skip_title=True)
        files = [(f"{label}: {name}", name) for name, label in
                 ((f"{comparison.name}.csv", "evidence CSV (one row per run)"), (f"{comparison.name}{evidence.ITEMS_SUFFIX}", "per-item test scores"),
                  (f"{comparison.name}{evidence.LEGACY_ITEMS_SUFFIX}", "per-item test scores"),
                  (f"{comparison.name}.tex", "LaTeX table")) if name in copied]
        (target / "index.html").write_text(pages.comparison_page(comparison.title, body, curves, files))
    (out / "comparisons" / "index.html").write_text(pages.comparisons_index(
        [(c.folder.name, c.title, c.baseline, c.verdicts) for c in found]))
