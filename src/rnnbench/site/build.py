"""Build the report: a static site from the committed evidence (``results/``) and your runs.

    rnnbench report [--out site] [--results results] [--runs runs] [--comparisons comparisons]     (make report)

Writes plain HTML, CSS, a little JavaScript and SVG figures into ``--out`` (default ``site/``,
ignored by git): open ``site/index.html`` in a browser, or serve the folder from any static
host. Nothing is fetched from elsewhere and no server is needed. The pages:

- Home: the question, the ledger's headline per paper (accuracy and cost apart), the budget.
- Ledger: every claim, filterable and sortable; each opens a claim card with its plot.
- Tables: one page per paper table (ours beside the paper, cost and trust, curves, claims).
- Cost: time against sequence length on CPU and GPU, parameters, CPU hours per table.
- Your runs: the runs under ``runs/``, and a comparison of any two or more.
- Your comparisons: each comparison ``rnnbench compare`` wrote under ``comparisons/`` (``--comparisons``).

The evidence files are copied under ``results/`` of the site, so every link works offline.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from rnnbench.campaign.definitions import benchmarks
from rnnbench.errors import ConfigError
from rnnbench.results import evidence, figures, floors, palette, timing
from rnnbench.results.tables import REGISTRY, model_name, paper_table
from rnnbench.site import comparisons as your_comparisons
from rnnbench.site import markdown, pages
from rnnbench.site.options import runs_folder
from rnnbench.site.claims_adapter import ClaimView, claim_views
from rnnbench.site.html import VERDICT_COLOURS, slug

ASSETS = Path(__file__).resolve().parent / "assets"
MARKER = ".rnnbench-report"  # marks a folder this command wrote, so --out never empties anything else
COPIED = ("*.csv", "*.csv.xz", "*.tex", "plots/*.png")  # *.csv.xz: the per-item scores
DEVICES = {"": "CPU", "_cuda": "GPU"}


class ReportError(ConfigError):
    """A report that cannot be built as asked (an --out folder that is not a report's)."""


def _prepare(out: Path) -> None:
    """An empty output folder: a new one, or one this command wrote before (emptied)."""
    if out.exists():
        if not out.is_dir():
            raise ReportError(f"--out {out} is a file; name a folder")
        if any(out.iterdir()) and not (out / MARKER).exists():
            raise ReportError(f"--out {out} is a folder the report did not write (no {MARKER} in it); "
                              "name an empty or new folder")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARKER).write_text("written by rnnbench report; emptied when the report is built again\n")


def _copy_evidence(results: Path, out: Path) -> set[str]:
    """The evidence files, copied under site/results/; their paths relative to results/."""
    copied = set()
    for pattern in COPIED:
        for path in sorted(results.glob(pattern)):
            rel = path.relative_to(results).as_posix()
            target = out / "results" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            copied.add(rel)
    return copied


def _commit(results: Path) -> str:
    try:
        done = subprocess.run(["git", "log", "-1", "--format=%h %cs", "--", "."], cwd=results, capture_output=True, text=True, timeout=10)
        return done.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


class Linker:
    """Maps a link found in a Markdown file of results/ to a path inside the site, or None."""

    def __init__(self, results: Path, copied: set[str], table_pages: set[str], doc_pages: dict[str, str]):
        self.results, self.copied, self.table_pages, self.doc_pages = results.resolve(), copied, table_pages, doc_pages

    def for_file(self, md: Path, root: str) -> Callable[[str], str | None]:
        here = md.resolve().parent

        def link(target: str) -> str | None:
            if target.startswith(("http://", "https://", "mailto:")):
                return target
            path, _, anchor = target.partition("#")
            if not path:
                return f"#{anchor}" if anchor else None
            try:
                rel = (here / path).resolve().relative_to(self.results).as_posix()
            except ValueError:  # outside results/ (the docs of the repository): not part of the site
                return None
            suffix = f"#{anchor}" if anchor else ""
            stem = rel[:-3] if rel.endswith(".md") else None
            if stem in self.table_pages:
                return f"{root}tables/{stem}.html{suffix}"
            if stem is not None and stem in self.doc_pages:
                return f"{root}docs/{self.doc_pages[stem]}.html{suffix}"
            if rel in self.copied:
                return f"{root}results/{rel}"
            return None

        return link


def _names(registry: dict | None, rows: list[dict]) -> dict[tuple[str, str], str]:
    keys = {(r["encoder"], r["variant"]) for r in rows}
    if not registry or not registry.get("rows"):
        return {k: k[0] + (f" ({k[1]})" if k[1] else "") for k in keys}
    return {(e, v): model_name(registry, e, v or None) for e, v in keys}


def _columns(registry: dict | None, rows: list[dict]) -> list[str]:
    ordered: list[str] = []
    for row in (registry or {}).get("rows") or []:
        ordered += [c for c in (row.get("values") or {}) if c not in ordered]
    return ordered + sorted({r["dataset"] for r in rows} - set(ordered))


def _table_title(table: str, registry: dict | None, md: Path) -> str:
    if md.exists():
        first = md.read_text().splitlines()[0] if md.read_text() else ""
        if first.startswith("# "):
            return first[2:].strip()
    if registry:
        return f"{(registry.get('paper') or '').upper()} Table {registry.get('table')}: {registry.get('caption', '')}"
    return table


def _paper_only_html(registry: dict) -> str:
    """The paper's numbers of a table with no evidence here, as the registry holds them."""
    columns = _columns(registry, [])
    head = "".join(f"<th class=\"right\">{markdown.inline(c)}</th>" for c in columns)
    body = "".join("<tr><td>" + markdown.inline(r.get("model", "")) + "</td>"
                   + "".join(f"<td class=\"right\">{'' if (r.get('values') or {}).get(c) is None else r['values'][c]}</td>" for c in columns)
                   + "</tr>" for r in registry.get("rows") or [])
    return (f'<h2>The paper\'s numbers</h2><div class="scroll"><table class="md"><thead><tr><th>row</th>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def _hours(results: Path, titles: dict[str, str]) -> list[pages.TableHours]:
    out = []
    for csv_path in sorted(results.glob("*.csv")):
        name = csv_path.stem
        if "." in name or csv_path.name == floors.FILE:  # <table>.parameters.csv, <table>.superseded.csv; the floors
            continue
        rows = evidence.read_csv(csv_path)
        superseded = evidence.read_superseded(evidence.superseded_path(csv_path))
        cpu, gpu = timing.cpu_hours(rows), timing.gpu_hours(rows)
        if not cpu and not gpu:  # a benchmark's timing rows (RCRN Table 10), not training runs
            continue
        out.append(pages.TableHours(name, titles.get(name, name), cpu, gpu, timing.cpu_hours(superseded), len({r["run"] for r in rows})))
    return sorted(out, key=lambda h: -(h.cpu + h.gpu))


def _cost_figures(results: Path, out: Path) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, int]]]:
    """Time against length from the benchmark table's evidence (RCRN Table 10, the registry's
    ``measured_by``: CPU, and GPU where there is one), and each encoder's parameter count in that setting."""
    figs, parameters = [], {}
    cost_table = next(iter(benchmarks()), None)
    if cost_table is None:
        return [], []
    registry = paper_table(cost_table)
    for suffix, device in DEVICES.items():
        path = results / f"{cost_table}{suffix}.csv"
        if not path.exists():
            continue
        rows = evidence.read_csv(path)
        series: dict[tuple[str, str], dict[int, list[float]]] = {}
        for r in rows:
            parts = r["dataset"].split("/")
            if r["dataset"] == "parameters":
                parameters[r["encoder"]] = int(r["parameters"])
            if len(parts) == 3 and parts[2].startswith("len"):
                phase = "training" if parts[1].startswith("train") else "inference"
                series.setdefault((r["encoder"], phase), {}).setdefault(int(parts[2][3:]), []).append(float(r["seconds_per_epoch"]))
        medians = {k: {n: statistics.median(v) for n, v in points.items()} for k, points in series.items()}
        hardware = ", ".join(sorted({r["hardware"] for r in rows if r.get("hardware")}))
        names = {(e, ""): model_name(registry, e, None) for e, _ in medians}
        fig = figures.time_against_length(medians, ["training", "inference"], f"Seconds per IMDb epoch on the {device} ({hardware})", names)
        if fig is not None:
            figures.save(fig, out / "cost" / f"time_{device.lower()}.svg")
            figs.append((f"On the {device}", f"cost/time_{device.lower()}.svg",
                         f"Median over rounds, log scales; {hardware}; evidence: results/{path.name}."))
    named = [(e, model_name(registry, e, None), n) for e, n in sorted(parameters.items(), key=lambda x: x[1])]
    return figs, named


def _claim_plot(view: ClaimView, out: Path) -> str | None:
    label = f"{view.better} − {view.worse}: {view.unit}" + (" (lower is better)" if view.lower_is_better else "")
    interval = None if view.interval is None else (view.interval.mean, view.interval.low, view.interval.high)
    second = None if view.second is None else (view.second_label, (view.second.mean, view.second.low, view.second.high))
    fig = figures.paired_differences(view.differences, view.seeds, interval, label, view.claimed_difference,
                                     level=view.level.split(",")[0], second=second,
                                     colour=VERDICT_COLOURS.get(view.verdict, "#333333"), ratio=view.ratio)
    if fig is None:
        return None
    figures.save(fig, out / "claims" / f"{view.key}.svg")
    return f"{view.key}.svg"


def _evidence_links(table: str, copied: set[str], root: str) -> list[tuple[str, str]]:
    names = [(f"{table}.csv", "evidence CSV (one row per run and column)"), (f"{table}{evidence.ITEMS_SUFFIX}", "per-item test scores"),
             (f"{table}.parameters.csv", "parameter counts from the configs"), (f"{table}.superseded.csv", "superseded runs"),
             (f"{table}_cuda.csv", "evidence on the GPU"), (f"{table}.tex", "LaTeX table")]
    return [(f"{label}: {name}", f"{root}results/{name}") for name, label in names if name in copied]


def _stylesheet(out: Path) -> None:
    """The stylesheet, with one rule per verdict from the same colours as the claim plots."""
    css = (ASSETS / "site.css").read_text()
    rules = "\n".join(f".v-{slug(v)} {{ --verdict: {c}; }}" for v, c in VERDICT_COLOURS.items())
    (out / "assets").mkdir(parents=True, exist_ok=True)
    (out / "assets" / "site.css").write_text(css + "\n/* verdict colours (rnnbench.site.html.VERDICT_COLOURS) */\n" + rules + "\n")
    shutil.copyfile(ASSETS / "site.js", out / "assets" / "site.js")


def _curves_svg(csv_path: Path, table: str, registry: dict | None, target: Path) -> str | None:
    """The table's learning curves as SVG (run in a worker process); the file name, or None."""
    rows = evidence.read_csv(csv_path)
    fig = figures.learning_curves(rows, _columns(registry, rows), "Dev score per epoch (mean over seeds, band min to max)",
                                  _names(registry, rows))
    return None if fig is None else figures.save(fig, target).name


def _pool() -> ProcessPoolExecutor:
    """Workers for the figures, which are drawn while the claims are decided (2 cores: half the time)."""
    return ProcessPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1)))


def build(results: Path, runs_dir: Path, out: Path, status_of_table: Callable[[str], str] | None = None, say=print,
          comparisons: Path | None = None) -> Path:
    """Write the whole site into ``out``; returns its home page. ``comparisons``: the folder of your
    comparisons (``rnnbench compare``), each shown as a page; None: none shown."""
    if not results.is_dir():
        raise ReportError(f"--results {results}: no such folder (the committed evidence lives in results/)")
    from rnnbench.site import runs_source

    _prepare(out)
    _stylesheet(out)
    copied = _copy_evidence(results, out)
    registry_tables = {p.stem for p in REGISTRY.glob("*.yaml")}
    md_tables = {p.stem for p in results.glob("*.md") if (results / f"{p.stem}.csv").exists()}
    table_names = sorted(registry_tables | md_tables, key=lambda t: (t not in registry_tables, t))
    registries = {t: paper_table(t) if t in registry_tables else None for t in table_names}
    doc_files = {p.relative_to(results).with_suffix("").as_posix(): p for p in sorted(results.rglob("*.md")) if p.stem not in table_names}
    doc_pages = {stem: slug(stem) for stem in doc_files}
    linker = Linker(results, copied, set(table_names), doc_pages)
    (out / "tables").mkdir(exist_ok=True)
    (out / "claims").mkdir(exist_ok=True)

    with _pool() as pool:
        curves = {t: pool.submit(_curves_svg, results / f"{t}.csv", t, registries[t], out / "tables" / f"{t}-curves.svg")
                  for t in table_names if t not in benchmarks() and (results / f"{t}.csv").exists()}
        say(f"deciding the claims on the evidence in {results} ...")
        views = claim_views(results, status_of_table)
        plots = {view.key: pool.submit(_claim_plot, view, out) for view in views if view.differences}
        cost_figs, parameters = _cost_figures(results, out)
        curves = {t: job.result() for t, job in curves.items()}
        plots = {key: job.result() for key, job in plots.items()}

    for view in views:
        links = _evidence_links(view.table, copied, "../")
        links.insert(0, (f"the table: {view.table_title}", pages.table_href(view.table, "../")))
        (out / "claims" / f"{view.key}.html").write_text(pages.claim_card(view, plots.get(view.key), links))

    titles: dict[str, str] = {}
    index_entries = []
    for table in table_names:
        registry = registries[table]
        md = results / f"{table}.md"
        title = _table_title(table, registry, md)
        titles[table] = title
        mine = [v for v in views if v.table == table]
        if md.exists():
            body = markdown.to_html(md.read_text(), linker.for_file(md, "../"), skip_title=True)
            status = ""
        else:
            body = _paper_only_html(registry) if registry else ""
            verdicts = {v.verdict for v in mine if not v.device}
            status = ("No evidence here yet: " + ", ".join(sorted(verdicts)) + "." if verdicts
                      else "No evidence here yet, and no claims in the registry.")
        (out / "tables" / f"{table}.html").write_text(
            pages.table_page(title, table, body, mine, curves.get(table), _evidence_links(table, copied, "../"), status))
        index_entries.append((table, title, Counter(v.verdict for v in mine if not v.device)))
    (out / "tables" / "index.html").write_text(pages.tables_index(index_entries))

    (out / "docs").mkdir(exist_ok=True)
    for stem, path in doc_files.items():
        text = path.read_text()
        title = text.splitlines()[0].lstrip("# ").strip() if text.startswith("# ") else stem
        (out / "docs" / f"{doc_pages[stem]}.html").write_text(pages.doc_page(title, markdown.to_html(text, linker.for_file(path, "../"))))

    hours = _hours(results, titles)
    (out / "cost.html").write_text(pages.cost(cost_figs, parameters, hours))
    my_runs = runs_source.runs(runs_dir)
    (out / "runs.html").write_text(pages.runs_page(my_runs, str(runs_dir), {**palette.ENCODER_COLOURS,
                                                                             **{r["encoder"]: palette.colour(r["encoder"]) for r in my_runs}}))
    (out / "ledger.html").write_text(pages.ledger(views))
    mine = your_comparisons.find(comparisons)
    your_comparisons.write(mine, out)
    (out / "index.html").write_text(pages.home(views, hours, len(my_runs), _commit(results), [(c.href, c.title) for c in mine],
                                               str(comparisons or "comparisons")))
    say(f"wrote {len(views)} claim cards, {len(table_names)} table pages, {len(my_runs)} runs, {len(mine)} comparison(s) into {out}")
    return out / "index.html"


def run(args: argparse.Namespace, status_of_table: Callable[[str], str] | None = None) -> int:
    index = build(args.results, runs_folder(args), args.out, status_of_table, comparisons=args.comparisons)
    print(f"open {index.resolve().as_uri()}")
    return 0
