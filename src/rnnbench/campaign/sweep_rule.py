"""A mechanism sweep's declaration and its rule (``rnnbench sweep``; the runs: ``campaign.sweep``).

``load(name)`` reads ``campaign/sweeps/NAME.yaml``: one experiment and encoder, a grid of overrides
(every combination a cell), the screen and confirm seeds, and the rule. ``judge`` applies the rule
to one cell's rows; ``stages`` says which runs the rule asks for next and which cell it chooses.
Both read only the sweep's evidence rows (table units), so the page renders from the CSV alone.
"""
from __future__ import annotations

import itertools
import statistics
from dataclasses import dataclass
from pathlib import Path

import yaml

from rnnbench.errors import RnnbenchError

DECLARATIONS = Path(__file__).resolve().parent / "sweeps"
SCREEN, CONFIRM = "screen", "confirm"
NOT_COUNTED = ("smoke", "failed")  # a run scored on part of its test split, or one that did not finish


@dataclass(frozen=True)
class Sweep:
    name: str
    title: str
    declared: str
    table: str
    experiment: str
    encoder: str
    column: str
    cells: tuple[tuple[str, ...], ...]  # each cell's overrides, in the grid's order
    screen_seeds: tuple[int, ...]
    confirm_seeds: tuple[int, ...]
    thresholded: str  # the encoder statistic as evaluated
    above: float  # the range of the thresholded statistic, % of tokens: (above, at_most]
    at_most: float
    sampled: str  # the statistic whose value + epsilon is the sampled share
    within_factor: float
    reference: str  # the table's row whose dev accuracy the cells must stay near: encoder[/variant]
    within: float  # points

    def cell_name(self, cell: tuple[str, ...]) -> str:
        """The cell in few words: its grid keys' last parts and values, e.g. "sparsity_weight=0.2 sparsity_target=0.05"."""
        varied = [key for key, values in self.grid_keys() if len(values) > 1]
        return " ".join(o.split("=", 1)[0].rsplit(".", 1)[-1] + "=" + o.split("=", 1)[1] for o in cell if o.split("=", 1)[0] in varied)

    def grid_keys(self) -> list[tuple[str, list[str]]]:
        keys: dict[str, list[str]] = {}
        for cell in self.cells:
            for override in cell:
                key, value = override.split("=", 1)
                keys.setdefault(key, [])
                if value not in keys[key]:
                    keys[key].append(value)
        return list(keys.items())


def names() -> list[str]:
    return sorted(p.stem for p in DECLARATIONS.glob("*.yaml"))


def load(name: str, folder: Path = DECLARATIONS) -> Sweep:
    """The declared sweep ``name``; an unknown name or a declaration missing a key is one line."""
    path = folder / f"{name}.yaml"
    if not path.exists():
        raise RnnbenchError(f"{name}: no such sweep; declared sweeps: {', '.join(names()) or 'none'} ({folder})")
    spec = yaml.safe_load(path.read_text()) or {}
    try:
        grid = spec["grid"]
        cells = tuple(tuple(f"{key}={_text(value)}" for key, value in zip(grid, values))
                      for values in itertools.product(*grid.values()))
        mechanism, accuracy = spec["mechanism"], spec["accuracy"]
        return Sweep(name, str(spec["title"]), str(spec["declared"]), str(spec["table"]), str(spec["experiment"]),
                     str(spec["encoder"]), str(spec["column"]), cells, tuple(spec["screen_seeds"]), tuple(spec["confirm_seeds"]),
                     str(mechanism["thresholded"]), float(mechanism["above"]), float(mechanism["at_most"]),
                     str(mechanism["sampled"]), float(mechanism["within_factor"]), str(accuracy["reference"]), float(accuracy["within"]))
    except (KeyError, TypeError, AttributeError) as exc:
        raise RnnbenchError(f"{path}: the declaration lacks {exc} (see campaign/sweeps/fhe_table4_sparsity.yaml)") from None


def _text(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


# ---------------------------------------------------------------------------------------------
# The rule


@dataclass(frozen=True)
class Verdict:
    """One cell on some seeds: means, and whether it passes the rule (``why`` says why not)."""

    seeds: tuple[int, ...]
    dev: float | None
    test: float | None
    thresholded: float | None
    sampled: float | None
    reference: float | None
    in_range: bool
    holds: bool
    why: str

    @property
    def passes(self) -> bool:
        return self.in_range and self.holds


def _mean(rows: list[dict], key: str) -> float | None:
    values = [float(r[key]) for r in rows if r.get(key, "") != ""]
    return statistics.fmean(values) if values else None


def judge(sweep: Sweep, rows: list[dict]) -> Verdict:
    """The rule on one cell's rows (one per seed, table units)."""
    seeds = tuple(sorted(int(r["seed"]) for r in rows))
    dev, test = _mean(rows, "dev"), _mean(rows, "test")
    shut, sampled, reference = _mean(rows, "thresholded"), _mean(rows, "sampled"), _mean(rows, "reference_dev")
    reasons = []
    in_range = shut is not None and sweep.above < shut <= sweep.at_most
    if not in_range:
        reasons.append(f"thresholded openness {_pct(shut)} outside ({sweep.above:g}%, {sweep.at_most:g}%]")
    elif sampled is None or sampled > sweep.within_factor * shut or shut > sweep.within_factor * sampled:
        in_range = False
        reasons.append(f"sampled {_pct(sampled)} not within {sweep.within_factor:g}x of thresholded {_pct(shut)}")
    holds = dev is not None and reference is not None and dev >= reference - sweep.within
    if not holds:
        reasons.append("no reference dev score on these seeds" if reference is None else
                       f"dev {dev:.1f} more than {sweep.within:g} below the reference's {reference:.1f}")
    return Verdict(seeds, dev, test, shut, sampled, reference, in_range, holds, "; ".join(reasons))


def _pct(value: float | None) -> str:
    return "none" if value is None else f"{value:.1f}%"


def by_cell(sweep: Sweep, rows: list[dict]) -> dict[tuple[str, ...], list[dict]]:
    """Each cell's counted rows (not a smoke run, nor one that failed)."""
    found: dict[tuple[str, ...], list[dict]] = {cell: [] for cell in sweep.cells}
    for row in rows:
        cell = tuple(row["overrides"].split())
        if cell in found and row["status"] not in NOT_COUNTED:
            found[cell].append(row)
    return found


def stages(sweep: Sweep, rows: list[dict]) -> tuple[list[tuple[tuple[str, ...], int, str]], tuple[str, ...] | None, str]:
    """(the runs the rule asks for now as (cell, seed, stage), the chosen cell or None, where the
    sweep stands in words). The confirm seeds of a cell are asked for once its screen seeds passed."""
    cells = by_cell(sweep, rows)
    wanted, screened = [], []
    for cell in sweep.cells:
        have = {int(r["seed"]) for r in cells[cell]}
        missing = [s for s in sweep.screen_seeds if s not in have]
        wanted += [(cell, s, SCREEN) for s in missing]
        if not missing:
            screened.append(cell)
    passed = [c for c in screened if judge(sweep, [r for r in cells[c] if int(r["seed"]) in sweep.screen_seeds]).passes]
    confirmed = []
    for cell in passed:
        have = {int(r["seed"]) for r in cells[cell]}
        missing = [s for s in sweep.confirm_seeds if s not in have]
        wanted += [(cell, s, CONFIRM) for s in missing]
        if not missing:
            confirmed.append(cell)
    seeds = set(sweep.screen_seeds) | set(sweep.confirm_seeds)
    standing = [c for c in confirmed if judge(sweep, [r for r in cells[c] if int(r["seed"]) in seeds]).passes]
    if len(screened) < len(sweep.cells):
        return wanted, None, f"screening: {len(screened)} of {len(sweep.cells)} cells run on seed(s) {_seeds(sweep.screen_seeds)}"
    if not passed:
        return wanted, None, "no cell passes the rule on the screen seeds: the mechanism was not found in the declared cells"
    if len(confirmed) < len(passed):
        return wanted, None, f"confirming: {len(confirmed)} of the {len(passed)} cell(s) that passed the screen run on seed(s) {_seeds(sweep.confirm_seeds)}"
    if not standing:
        return wanted, None, "no cell passes the rule on the screen and confirm seeds: the mechanism was not found in the declared cells"
    chosen = max(standing, key=lambda c: (judge(sweep, [r for r in cells[c] if int(r["seed"]) in seeds]).dev, -sweep.cells.index(c)))
    return wanted, chosen, f"chosen: {sweep.cell_name(chosen)} (best mean dev of the {len(standing)} cell(s) that pass on seeds {_seeds(tuple(sorted(seeds)))})"


def _seeds(seeds) -> str:
    return ", ".join(str(s) for s in seeds)
