"""What a claim's verdict can speak about: the paper's method, or only our setting.

The statistics (``verdicts``) say how sure a difference between two of our rows is. Whether that
difference says anything about the paper's claim depends on the setting the rows were run in.
Four gates read the committed evidence and the registry (``paper_numbers/<table>.yaml``); each
accuracy claim with runs passes through them in this order:

1. **pipeline check** (``training_data_stand_in``): the table trained on a stand-in for the
   paper's training data (SNLI's first 1,022 pairs, SciTail's dev file, TrecQA's TRAIN). Its
   claims test our pipeline, never the paper: **pipeline check (training data: ...)**.
2. **floor** (``results/floors.csv``, ``rnnbench floors``): a row of the claim whose test scores
   do not beat the test split's majority-class score (of the scored subset, for a subset
   column): the lower end of the one-sided 95% interval of its mean over seeds does not clear
   it. Such a row is at the floor: **not evidence (row at the majority rate)**.
3. **mechanism** (``mechanism``): where the paper credits a mechanism (FHE's sparse gates, the
   MZU candidate's token dependence), the registry names the statistic our runs record
   (``stats:<statistic>`` rows of the evidence) and the range in which the mechanism is present.
   A claim on a row whose mean statistic lies outside it, or was not measured, reads
   **not tested (mechanism absent: statistic = value)**.
4. **parity** (``reference``): the paper's own baseline row(s) of the table, ours against the
   paper's number in the claim's column (or the columns the registry names, e.g. FHE Table 4's
   training length). Within the margin (default: the larger of 2 points and twice the paper's
   printed std) the verdict is **about the paper**; otherwise it is still computed and shown,
   labelled **in our setting (reference row −X.X from the paper)**. A table that names no
   reference row cannot show parity: its verdicts are in our setting.

Cost claims (time, parameters) pass through none of them: they are measured on the hardware and
code they name, whatever the accuracy setting. The gates are applied after the statistics:
``verdicts.decide`` keeps the statistical verdict in ``decision.statistical`` and shows it beside
the gated one.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

from rnnbench.results.patience import DID_NOT_TRAIN, NEEDS_RERUN

PIPELINE_CHECK, NOT_EVIDENCE, NOT_TESTED = "pipeline check", "not evidence", "not tested"
GATED = (PIPELINE_CHECK, NOT_EVIDENCE, NOT_TESTED)
ABOUT_PAPER, IN_OUR_SETTING = "about the paper", "in our setting"
DEFAULT_MARGIN = 2.0  # points (table units): the smallest parity margin
STD_FACTOR = 2.0  # the margin grows to twice the paper's printed std where that is larger
FLOOR_CONFIDENCE = 0.95  # a row beats the majority rate when its one-sided interval over seeds clears it


@dataclass(frozen=True)
class Gate:
    """A verdict the gates give in place of the statistics' (``kind`` in ``GATED``)."""

    kind: str
    why: str

    def label(self) -> str:
        return f"{self.kind} ({self.why})"


@dataclass(frozen=True)
class Scope:
    """Whether a verdict speaks about the paper or about our setting, and why."""

    kind: str  # ABOUT_PAPER or IN_OUR_SETTING
    why: str
    gap: float | None = None  # ours − the paper's on the reference row(s), table units
    margin: float | None = None

    def label(self) -> str:
        return f"{self.kind} ({self.why})"


def split_row(name: str) -> tuple[str, str]:
    encoder, _, variant = name.partition("/")
    return encoder, variant


def _trained(row: dict) -> bool:
    return row.get("status") not in (DID_NOT_TRAIN, NEEDS_RERUN)


def _mean(rows: list[dict], encoder: str, variant: str, datasets: set[str], metric: str | None = None) -> float | None:
    values = [float(r["test"]) for r in rows
              if r["encoder"] == encoder and (r.get("variant") or "") == variant and r["dataset"] in datasets
              and r.get("reported") == "yes" and _trained(r) and (metric is None or r.get("metric") == metric)]
    return statistics.fmean(values) if values else None


def compared_rows(claim: dict, compared: tuple[str, str] | None) -> list[str]:
    return list(compared or (claim["better"], claim["worse"]))


def claim_datasets(rows: list[dict], claim: dict, compared: list[str]) -> set[str]:
    """The columns a claim's rows were compared in: its own, or for a macro average the columns of
    ``macro_block``."""
    column = claim["column"]
    if any(r["dataset"] == column for r in rows):
        return {column}
    return macro_block(rows, compared)


def macro_block(rows: list[dict], names: list[str]) -> set[str]:
    """The columns a macro average of the named rows is over: of those with reported runs of every
    row, the largest complete block of columns by the seeds all rows share there (the most column-seed
    cells; on a tie, the most columns). So a column whose runs are under way (one seed of five) waits
    outside the average until its seeds catch up, instead of cutting every other column's seeds to
    its one; where every column has the same seeds, that is all of them."""
    per_row = []
    for name in names:
        encoder, variant = split_row(name)
        seeds: dict[str, set] = {}
        for r in rows:
            if (r["encoder"] == encoder and (r.get("variant") or "") == variant and r.get("reported") == "yes"
                    and not str(r.get("metric", "")).startswith("stats:")):
                seeds.setdefault(r["dataset"], set()).add(r["seed"])
        per_row.append(seeds)
    if not per_row:
        return set()
    shared = {d: set.intersection(*(seeds[d] for seeds in per_row)) for d in set.intersection(*(set(s) for s in per_row))}
    best, chosen = (-1, -1), set(shared)
    for block in {frozenset(s) for s in shared.values()}:
        covered = {d for d, s in shared.items() if s >= block}
        if (score := (len(covered) * len(block), len(covered))) > best:
            best, chosen = score, covered
    return chosen


# ---------------------------------------------------------------------------------------------
# 1. Training data that stands in for the paper's


def pipeline_check(registry: dict, datasets: set[str]) -> Gate | None:
    """``training_data_stand_in``: column -> what the runs trained on ("*": every column)."""
    declared = registry.get("training_data_stand_in") or {}
    whys = sorted({declared[c] for c in datasets if c in declared} | ({declared["*"]} if "*" in declared else set()))
    return Gate(PIPELINE_CHECK, f"training data: {'; '.join(whys)}") if whys else None


# ---------------------------------------------------------------------------------------------
# 2. The majority-class floor


def _seed_means(rows: list[dict], encoder: str, variant: str, columns: list[str]) -> list[float] | None:
    """Per seed, the row's test score averaged over ``columns`` (seeds with a score in every one)."""
    per_seed: dict[int, dict[str, float]] = {}
    for r in rows:
        if (r["encoder"] == encoder and (r.get("variant") or "") == variant and r["dataset"] in columns
                and r.get("reported") == "yes" and _trained(r)):
            per_seed.setdefault(int(r["seed"]), {})[r["dataset"]] = float(r["test"])
    means = [statistics.fmean(v.values()) for v in per_seed.values() if len(v) == len(columns)]
    return means or None


def lower_bound(means: list[float], confidence: float = FLOOR_CONFIDENCE) -> float:
    """The lower end of the one-sided ``confidence`` t interval of the mean over seeds (one seed:
    its score)."""
    from scipy import stats

    mean = statistics.fmean(means)
    if len(means) < 2:
        return mean
    return mean - float(stats.t.ppf(confidence, len(means) - 1)) * statistics.stdev(means) / len(means) ** 0.5


def beats_floor(means: list[float], floor: float, confidence: float = FLOOR_CONFIDENCE) -> bool:
    """Whether a row's seeds show it above ``floor``: the lower end of the one-sided interval of its
    mean over seeds clears it. A mean a hair above the majority rate (MZU Table 6 laptops: 52.29
    against 52.14, seeds' std 1.8) does not, nor one whose seeds straddle it."""
    return lower_bound(means, confidence) > floor


def floor_gate(table: str, rows: list[dict], compared: list[str], datasets: set[str], floors: dict) -> Gate | None:
    """A compared row that does not beat the test split's majority-class score in the claim's
    column (``beats_floor``; for a macro average: its mean over the columns against the mean of
    their floors). ``floors``: (table, dataset, split) -> ``floors.Floor``."""
    columns = sorted(datasets)
    majorities = [floors.get((table, c, "test")) for c in columns]
    if not columns or any(f is None for f in majorities):
        return None
    floor = statistics.fmean(f.majority for f in majorities)
    at_floor = []
    for name in compared:
        encoder, variant = split_row(name)
        means = _seed_means(rows, encoder, variant, columns)
        if means is None or beats_floor(means, floor):
            continue
        where = columns[0] if len(columns) == 1 else f"the mean over {len(columns)} columns"
        at_floor.append(f"{name} {statistics.fmean(means):.2f} on {where} (one-sided 95% lower bound {lower_bound(means):.2f} "
                        f"over {len(means)} seed(s)) against the test majority {floor:.2f}")
    return Gate(NOT_EVIDENCE, "row at the majority rate: " + "; ".join(at_floor)) if at_floor else None


# ---------------------------------------------------------------------------------------------
# 3. The mechanism the paper credits


def _in_range(value: float, present: dict) -> bool:
    return (present.get("min") is None or value >= float(present["min"])) and (present.get("max") is None or value <= float(present["max"]))


def _range_text(present: dict) -> str:
    low, high = present.get("min"), present.get("max")
    return f"{low:g} to {high:g}" if low is not None and high is not None else f"≥ {low:g}" if low is not None else f"≤ {high:g}"


def mechanism_gate(registry: dict, rows: list[dict], compared: list[str]) -> Gate | None:
    """Each ``mechanism`` entry names a row (``encoder`` or ``encoder/variant``), the statistic
    its runs record (``stats:<statistic>`` evidence rows) and the range where the mechanism is
    present. A compared row that the entry names (an entry without a variant names every variant
    of its encoder) with its mean statistic outside the range, or not measured, is not tested."""
    absent = []
    for entry in registry.get("mechanism") or []:
        encoder, variant = split_row(entry["row"])
        for name in compared:
            row_encoder, row_variant = split_row(name)
            if row_encoder != encoder or (variant and row_variant != variant):
                continue
            metric = f"stats:{entry['statistic']}"
            values = [float(r["test"]) for r in rows if r["encoder"] == row_encoder and (r.get("variant") or "") == row_variant
                      and r.get("metric") == metric and r.get("reported") == "yes" and _trained(r)]
            if not values:
                absent.append(f"{name}: {entry['statistic']} not measured in its runs")
                continue
            value = statistics.fmean(values)
            if not _in_range(value, entry["present"]):
                absent.append(f"{name}: {entry['statistic']} = {value:.3g} (present: {_range_text(entry['present'])})")
    return Gate(NOT_TESTED, "mechanism absent: " + "; ".join(absent)) if absent else None


# ---------------------------------------------------------------------------------------------
# 4. Parity of the reference row


def _std_column(column: str) -> str | None:
    return column[: -len("_mean")] + "_std" if column.endswith("_mean") else None


def margin_of(reference: dict, paper_row: dict, column: str) -> float:
    """The declared margin, else the larger of 2 points and twice the paper's printed std."""
    if reference.get("margin") is not None:
        return float(reference["margin"])
    std_column = _std_column(column)
    std = (paper_row.get("values") or {}).get(std_column) if std_column else None
    return max(DEFAULT_MARGIN, STD_FACTOR * float(std)) if std is not None else DEFAULT_MARGIN


def _paper_row(registry: dict, name: str) -> dict | None:
    encoder, variant = split_row(name)
    for row in registry["rows"]:
        if row.get("encoder") == encoder and (row.get("variant") or "") == variant:
            return row
    return None


def _ours_for(rows: list[dict], name: str, compared: list[str], cell: dict[str, str] | None = None) -> str | None:
    """Our row standing for the paper's reference row ``name``: in an open choice's cell, the
    cell's row where the reference row is one the cell replaces (``cell``: the claim's own row ->
    the cell's, MZU Table 6's ``dt_gru`` -> ``dt_gru/fn3``); else the reference row itself where it
    has reported runs, else the variant the claim's rows were compared on (DCU Table 1's and FHE
    Table 4's CPU-sized "small"), else the registry's stand-in rows are left to the caller."""
    encoder, variant = split_row(name)
    has = lambda e, v: any(r["encoder"] == e and (r.get("variant") or "") == v and r.get("reported") == "yes" for r in rows)  # noqa: E731
    if cell and name in cell and has(*split_row(cell[name])):
        return cell[name]
    if has(encoder, variant):
        return name
    for other in compared:
        _, other_variant = split_row(other)
        if other_variant and has(encoder, other_variant):
            return f"{encoder}/{other_variant}"
    return None


def parity(registry: dict, rows: list[dict], claim: dict, compared: list[str], datasets: set[str]) -> Scope:
    """The claim's scope from the table's reference rows. A reference row's gap is ours − the
    paper's, averaged over the columns compared (the claim's, a macro average's, or the registry's
    ``reference.columns``); every reference row must be within its margin."""
    reference = registry.get("reference")
    if not reference:
        return Scope(IN_OUR_SETTING, "the paper's table has no baseline row of ours to check the setting against")
    names = list(reference["rows"])
    _, claim_variant = split_row(compared[0])
    matching = [n for n in names if split_row(n)[1] == claim_variant]
    names = matching or names  # a table of two settings (RCRN Table 8 with and without attention): the claim's own
    columns = list(reference.get("columns") or sorted(datasets))
    gaps, unknown = [], []
    cell = claim.get("cell_of")  # an open choice's cell (results/choices.py): the claim's own rows -> the cell's
    for name in names:
        paper_row = _paper_row(registry, name)
        ours_name = _ours_for(rows, name, compared, cell)
        if ours_name is None:
            unknown.append(f"no run of {name}")
            continue
        encoder, variant = split_row(ours_name)
        pairs = [((paper_row.get("values") or {}).get(c), _mean(rows, encoder, variant, {c})) for c in columns]
        if not any(p is not None for p, _ in pairs):
            unknown.append(f"the paper prints no number of {name} in {', '.join(columns)}")
            continue
        pairs = [(p, o) for p, o in pairs if p is not None and o is not None]
        if not pairs:
            unknown.append(f"no run of {ours_name} in {', '.join(columns)}")
            continue
        gap = statistics.fmean(o for _, o in pairs) - statistics.fmean(float(p) for p, _ in pairs)
        margin = max(margin_of(reference, paper_row, c) for c in columns)
        gaps.append((name if ours_name == name else f"{name} (ours: {ours_name})", gap, margin))
    if not gaps:
        return Scope(IN_OUR_SETTING, "parity unknown: " + "; ".join(unknown))
    worst = max(gaps, key=lambda g: abs(g[1]) - g[2])
    text = ", ".join(f"{n} {g:+.1f}" for n, g, _ in gaps)
    if unknown:
        return Scope(IN_OUR_SETTING, f"reference row {text} from the paper; parity unknown: {'; '.join(unknown)}", worst[1], worst[2])
    if all(abs(g) <= m for _, g, m in gaps):
        return Scope(ABOUT_PAPER, f"reference row {text} from the paper, within ±{worst[2]:g}", worst[1], worst[2])
    return Scope(IN_OUR_SETTING, f"reference row {text} from the paper; parity within ±{worst[2]:g}", worst[1], worst[2])


# ---------------------------------------------------------------------------------------------


def check_registry(registry: dict, where: str) -> None:
    """The gates' registry entries, checked: one line naming the file and what is wrong."""
    reference = registry.get("reference")
    if reference is not None:
        if not reference.get("rows"):
            raise ValueError(f"{where}: reference names no rows (reference.rows: the paper's own baseline row(s))")
        for name in reference["rows"]:
            if _paper_row(registry, name) is None:
                raise ValueError(f"{where}: reference row {name!r} is not a row's encoder[/variant] in the table")
        if reference.get("margin") is not None and not reference.get("why"):
            raise ValueError(f"{where}: a declared reference.margin needs its reason (reference.why)")
    for entry in registry.get("mechanism") or []:
        missing = {"row", "statistic", "present", "why"} - set(entry)
        if missing:
            raise ValueError(f"{where}: mechanism entry lacks {', '.join(sorted(missing))}")
        if not set(entry["present"]) & {"min", "max"} or set(entry["present"]) - {"min", "max"}:
            raise ValueError(f"{where}: mechanism {entry['statistic']!r}: present is a range (min:, max:)")
    stand_in = registry.get("training_data_stand_in")
    if stand_in is not None and not (isinstance(stand_in, dict) and all(isinstance(v, str) and v for v in stand_in.values())):
        raise ValueError(f"{where}: training_data_stand_in maps a column (or \"*\") to what the runs trained on")


def apply(table: str, registry: dict, rows: list[dict], claim: dict, compared: tuple[str, str] | None,
          floors: dict | None) -> tuple[Gate | None, Scope | None]:
    """The gate (if any) and the scope of an accuracy claim with runs; (None, None) for a cost claim."""
    if claim.get("quantity", "test") != "test":
        return None, None
    names = compared_rows(claim, compared)
    datasets = claim_datasets(rows, claim, names)
    gate = (pipeline_check(registry, datasets) or floor_gate(table, rows, names, datasets, floors or {})
            or mechanism_gate(registry, rows, names))
    return gate, parity(registry, rows, claim, names, datasets)
