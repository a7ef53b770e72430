"""The figures drawn from the evidence: learning curves of a table, the paired differences a
claim's verdict rests on, and time against sequence length.

Each function returns a matplotlib figure (or None when there is nothing to draw); ``save``
writes it as PNG (the committed ``results/plots``) or SVG (the report), with no timestamp or
version string, so the same evidence gives the same bytes. Colours come from
``rnnbench.results.palette``: one per encoder in every figure. Rows are labelled with the
paper's row names (``names``), never with internal keys.
"""
from __future__ import annotations

import contextlib
import functools
import math
import statistics
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.ticker  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import mathtext  # noqa: E402

from rnnbench.results import palette  # noqa: E402
from rnnbench.results.evidence import dev_curve  # noqa: E402

PANEL_COLUMNS = 4  # small multiples: at most this many panels a row (RCRN Table 1 has 16 domains)
PANEL_SIZE = (3.4, 2.5)  # inches of one panel


# matplotlib caches a parsed math label ("$10^{0}$", a log axis's tick) per parser, and every
# renderer has its own parser: each figure parses its labels anew, about four times each (layout,
# the tight bounding box, the drawing), and parsing was about half of a log-scale plot's time.
_PARSE_CACHED = mathtext.MathTextParser.__dict__.get("_parse_cached")
_PARSE = getattr(_PARSE_CACHED, "__wrapped__", None)  # None where matplotlib changed this: no sharing, same figures
_MATHTEXT_RC = sorted(k for k in matplotlib.rcParams if k.startswith("mathtext."))


@functools.lru_cache(maxsize=1024)
def _shared_parse(output_type: str, rc: tuple, *args):
    """matplotlib's parse of (label, dpi, font, ...) for one output type; ``rc``: the mathtext
    settings it reads, in the key so a changed setting is parsed again."""
    return _PARSE(mathtext.MathTextParser("path" if output_type == "vector" else "agg"), *args)


def _parse_cached(self, *args):
    rc = tuple(str(matplotlib.rcParams[k]) for k in _MATHTEXT_RC)
    return _shared_parse(self._output_type, rc, *args)


@contextlib.contextmanager
def _shared_math_parses():
    """Within it, every renderer's math labels are parsed once per process: the same result
    matplotlib computes, kept across figures (the report draws some 120)."""
    cls = mathtext.MathTextParser
    if _PARSE is None or cls.__dict__.get("_parse_cached") is not _PARSE_CACHED:  # unknown matplotlib, or already shared
        yield
        return
    cls._parse_cached = _parse_cached
    try:
        yield
    finally:
        cls._parse_cached = _PARSE_CACHED


def _sharing_math_parses(draw):
    """``draw`` (a figure's layout or its writing) run under ``_shared_math_parses``."""
    @functools.wraps(draw)
    def wrapper(*args, **kwargs):
        with _shared_math_parses():
            return draw(*args, **kwargs)
    return wrapper


@_sharing_math_parses
def save(fig, path: Path, dpi: int = 90) -> Path:
    """Write ``fig`` as PNG or SVG (by the suffix), reproducibly, and close it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".svg":
        with matplotlib.rc_context({"svg.hashsalt": "rnnbench", "svg.fonttype": "none"}):
            fig.savefig(path, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    else:
        fig.savefig(path, dpi=dpi, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return path


def _row_label(names: dict[tuple[str, str], str], encoder: str, variant: str) -> str:
    return names.get((encoder, variant)) or encoder + (f" ({variant})" if variant else "")


def _curves(rows: list[dict], column: str) -> dict[tuple[str, str], tuple[list[int], list[float], list[float], list[float], int]]:
    """(encoder, variant) -> (epochs, mean, min, max over seeds, seeds) of the dev curves in ``column``."""
    runs: dict[tuple[str, str], list[list[float]]] = {}
    for r in rows:
        if r["dataset"] == column:
            runs.setdefault((r["encoder"], r["variant"]), []).append([v for v in dev_curve(r) if v is not None])
    out = {}
    for key, curves in sorted(runs.items()):
        length = max(len(c) for c in curves)
        at = [[c[e] for c in curves if e < len(c)] for e in range(length)]
        out[key] = (list(range(1, length + 1)), [statistics.fmean(v) for v in at], [min(v) for v in at], [max(v) for v in at], len(curves))
    return out


MANY_ROWS = 4  # a one-column table with more rows than this gets one panel per row (LSTM-baseline Table 1)


@_sharing_math_parses
def learning_curves(rows: list[dict], columns: list[str], title: str, names: dict[tuple[str, str], str] | None = None):
    """Dev score per epoch of each reported row: the mean over seeds, the band from min to max.

    Small multiples, at most ``PANEL_COLUMNS`` a row: one panel per column (RCRN Table 1's
    domains) with one legend for all, below them; or, for a one-column table of many rows, one
    panel per row, the other rows drawn in grey behind it. Rows are named as the paper names them
    (``names``: (encoder, variant) -> row name). None when no reported run has a curve."""
    names = names or {}
    rep = [r for r in rows if r.get("reported") == "yes" and r.get("dev_curve")]
    columns = [c for c in columns if any(r["dataset"] == c for r in rep)]  # evaluated-only columns have no curves
    if not rep or not columns:
        return None
    style = palette.styles([(r["encoder"], r["variant"]) for r in rep])
    by_column = {c: _curves(rep, c) for c in columns}
    per_row = len(columns) == 1 and len(by_column[columns[0]]) > MANY_ROWS
    panels = [(columns[0], key) for key in by_column[columns[0]]] if per_row else [(c, None) for c in columns]
    ncols = min(PANEL_COLUMNS, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(PANEL_SIZE[0] * ncols, PANEL_SIZE[1] * nrows + 0.6), squeeze=False,
                             sharey=per_row)
    handles: dict[str, object] = {}
    metric = rep[0]["metric"]
    for ax, (column, highlighted) in zip(axes.flat, panels):
        for key, (epochs, mean, low, high, n) in by_column[column].items():
            kw = style[key]
            if highlighted is not None and key != highlighted:
                ax.plot(epochs, mean, color="#c8c8c8", linewidth=0.8, zorder=1)
                continue
            (line,) = ax.plot(epochs, mean, color=kw["color"], linestyle=kw["linestyle"], marker=kw["marker"], markersize=3,
                              markevery=max(1, len(epochs) // 6), linewidth=1.5, zorder=3)
            ax.fill_between(epochs, low, high, color=kw["color"], alpha=0.15, linewidth=0, zorder=2)
            handles.setdefault(_row_label(names, *key), line)
        heading = _row_label(names, *highlighted) if highlighted else (column if len(columns) > 1 else f"dev {metric}")
        ax.set_title(textwrap.fill(heading, 42), fontsize=8)
        ax.tick_params(labelsize=7)
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax.grid(True, alpha=0.25)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax in axes.flat[max(0, len(panels) - ncols):len(panels)]:
        ax.set_xlabel("epoch", fontsize=8)
    for ax in axes[:, 0]:
        ax.set_ylabel(f"dev {metric}", fontsize=8)
    if per_row:  # each panel names its row; the grey lines need a word
        fig.text(0.5, 0.01, "grey: the table's other rows", ha="center", fontsize=7, color="#555555")
        bottom = 0.3 / fig.get_figheight()
    else:
        legend_columns = min(3, len(handles))
        legend_rows = math.ceil(len(handles) / legend_columns)
        fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=legend_columns, fontsize=7, frameon=False)
        fig.set_figheight(fig.get_figheight() + 0.16 * legend_rows)
        bottom = (0.1 + 0.16 * legend_rows) / fig.get_figheight()  # the legend sits under the panels, outside their data
    fig.suptitle(textwrap.fill(title, 40 + 30 * ncols), fontsize=9)
    fig.tight_layout(rect=(0, bottom, 1, 1))
    return fig


def _stagger(xs: list[float], levels: int = 3) -> list[int]:
    """A height level per dot: dots closer than 3% of the x range to the one before them (in x
    order) step to the next level, so coinciding seeds and their labels stay apart."""
    span = (max(xs) - min(xs)) or 1.0
    cycle = [1, 0, 2][:levels]  # the line, then below it (labelled below), then above it
    out, previous, step = [0] * len(xs), None, 0
    for i in sorted(range(len(xs)), key=lambda i: xs[i]):
        step = step + 1 if previous is not None and xs[i] - previous < 0.03 * span else 0
        out[i], previous = cycle[step % len(cycle)], xs[i]
    return out


@_sharing_math_parses
def paired_differences(differences: list[float], seeds: list[int], interval: tuple[float, float, float] | None,
                       label: str, claimed: float | None = None, level: str = "95%",
                       second: tuple[str, tuple[float, float, float]] | None = None, colour: str = "#333333",
                       ratio: bool = False):
    """One claim's evidence: each paired seed's difference (better − worse) as a dot, labelled
    with its seed; the mean and its interval (``interval``: mean, low, high) as a bar; no
    difference (0) as a solid line; the paper's claimed difference (``claimed``), where it is in
    our units, as a dashed line. ``second``: (name, interval) of a second interval drawn under
    the first (the cross-check). ``ratio``: the values are ratios better / worse, drawn on a log
    scale with no difference at 1. None without differences."""
    if not differences:
        return None
    null = 1.0 if ratio else 0.0
    shown = (lambda x: f"{x:.3g}×") if ratio else (lambda x: f"{x:+.3g}")
    fig, ax = plt.subplots(figsize=(6.4, 2.3 if second else 2.0))
    y_dots, y_mean, y_second = 2.0, 1.0, 0.2
    tiers = _stagger(differences)
    heights = [y_dots + 0.2 * (tier - 1) for tier in tiers]  # close seeds stay apart
    ax.scatter(differences, heights, s=36, color=colour, alpha=0.8, zorder=3, edgecolor="white")
    if len(differences) <= 15:
        for x, y, seed, tier in zip(differences, heights, seeds, tiers):  # a label away from its neighbours: below the lower
            ax.annotate(str(seed), (x, y), textcoords="offset points", xytext=(0, -10 if tier == 0 else 5), ha="center",
                        fontsize=6, color="#555555")
    xs = list(differences)
    if interval is not None:
        mean, low, high = interval
        ax.plot([low, high], [y_mean, y_mean], color=colour, linewidth=3, solid_capstyle="butt", zorder=2)
        ax.scatter([mean], [y_mean], marker="D", s=40, color=colour, zorder=3)
        ax.annotate(f"{'geometric mean' if ratio else 'mean'} {shown(mean)}, {level} interval [{shown(low)}, {shown(high)}]",
                    (mean, y_mean), textcoords="offset points",
                    xytext=(0, -13), ha="center", fontsize=7)
        xs += [low, high]
    if second is not None:
        name, (mean, low, high) = second
        ax.plot([low, high], [y_second, y_second], color="#777777", linewidth=2, zorder=2)
        ax.scatter([mean], [y_second], marker="D", s=24, color="#777777", zorder=3)
        ax.annotate(name, (high, y_second), textcoords="offset points", xytext=(6, -3), fontsize=7, color="#555555")
        xs += [low, high]
    ax.axvline(null, color="black", linewidth=1)
    if claimed is not None:
        ax.axvline(claimed, color="#D55E00", linestyle="--", linewidth=1.2)
        ax.annotate(f"paper {shown(claimed)}", (claimed, 2.62), ha="center", fontsize=7, color="#D55E00")
        xs.append(claimed)
    if ratio:
        ax.set_xscale("log")
        low, high = math.log(min(xs + [null])), math.log(max(xs + [null]))
        pad = (high - low) * 0.12 or 0.1
        ax.set_xlim(math.exp(low - pad), math.exp(high + pad))
    else:
        low, high = min(xs + [null]), max(xs + [null])
        pad = (high - low) * 0.12 or 1.0
        ax.set_xlim(low - pad, high + pad)
    ax.set_ylim(-0.3 if second else 0.4, 2.85)
    ax.set_yticks([y_dots, y_mean], ["seeds", "mean"], fontsize=7)
    ax.tick_params(axis="x", labelsize=7)
    ax.set_xlabel(label, fontsize=8)
    ax.grid(True, axis="x", alpha=0.25)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    return fig


@_sharing_math_parses
def time_against_length(series: dict[tuple[str, str], dict[int, float]], panels: list[str], title: str,
                        names: dict[tuple[str, str], str] | None = None, paper: dict[tuple[str, str], dict[int, float]] | None = None):
    """Time against sequence length, log-log, one panel per phase (``panels``, e.g. training and
    inference). ``series``: (encoder, phase) -> {length: seconds}; ``paper``: the same for the
    paper's numbers, drawn as open markers on dashed lines. None without series."""
    if not series:
        return None
    names = names or {}
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 3.8), squeeze=False)
    handles: dict[str, object] = {}
    for ax, phase in zip(axes[0], panels):
        for (encoder, p), points in sorted(series.items()):
            if p != phase:
                continue
            lengths = sorted(points)
            (line,) = ax.plot(lengths, [points[n] for n in lengths], color=palette.colour(encoder), marker="o", markersize=4, linewidth=1.5)
            handles.setdefault(names.get((encoder, ""), encoder), line)
        for (encoder, p), points in sorted((paper or {}).items()):
            if p != phase:
                continue
            lengths = sorted(points)
            (line,) = ax.plot(lengths, [points[n] for n in lengths], color=palette.colour(encoder), marker="o", markerfacecolor="white",
                              markersize=4, linewidth=1, linestyle="--")
            handles.setdefault(f"{names.get((encoder, ''), encoder)}, paper (its GPU)", line)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(phase, fontsize=9)
        ax.set_xlabel("sequence length", fontsize=8)
        ax.set_ylabel("seconds per IMDb epoch", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, which="both", alpha=0.25)
    fig.legend(list(handles.values()), list(handles), loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=7, frameon=False)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig
