"""An encoder's learning-rate choice under the comparison protocol (``rnnbench.campaign.protocol``
makes it), and the evidence columns it is stored in.

A choice at the grid's edge (its smallest or largest rate) may be under-tuned: the protocol then
adds one rate past that edge (x0.5 below the smallest, x2 above the largest: the spacing of the
paper grids) and chooses again, until the choice is interior or ``limit`` rates were added.

Each row of a table's evidence CSV stores the choice of its encoder as columns (``columns``), and
the table states it from them (``RateChoice.from_columns``, then ``statement``):

- ``lr_grid``: the rates chosen among, the configured grid first, then the rates added past its
  edges in the order they were added (``;``-joined, each float as the CSV writes floats);
- ``lr_extensions``: how many of them were added past an edge;
- ``lr_extension_limit``: how many could be (``table.protocol.max_grid_extensions``);
- ``lr_pending``: the rate past the edge still without its selection runs (the choice is
  provisional until they exist), else empty;
- ``lr_position``: ``interior``, ``edge`` (still at the grid's edge: the limit was hit, or
  extension is off) or ``provisional``; empty where there is no choice (a grid of one rate, or a
  rate of the configured grid still without its selection runs).

The chosen rate itself is the row's ``chosen_lr``. All five are empty for a grid of one rate
(nothing to choose).
"""
from __future__ import annotations

from dataclasses import dataclass, field

# The grid's step past an edge: the paper grids halve and double (LSTM-baseline's {8e-4, ..., 5e-5}).
BELOW, ABOVE = 0.5, 2.0

INTERIOR, EDGE, PROVISIONAL = "interior", "edge", "provisional"
COLUMNS = ["lr_grid", "lr_extensions", "lr_extension_limit", "lr_pending", "lr_position"]


def past_edge(rates: list[float], chosen: float) -> float | None:
    """The next rate past the edge ``chosen`` sits at (x0.5 below the smallest, x2 above the
    largest); None when it is interior, or when a grid of one rate leaves nothing chosen."""
    if len(rates) < 2:
        return None
    if chosen == min(rates):
        return chosen * BELOW
    if chosen == max(rates):
        return chosen * ABOVE
    return None


def _rates(rates) -> str:
    return "{" + ", ".join(f"{x:g}" for x in sorted(rates, reverse=True)) + "}"


def _blank(value) -> bool:
    return value is None or value == ""


@dataclass(frozen=True)
class RateChoice:
    """An encoder's learning-rate choice under the protocol, with the grid it was made on."""

    lr: float | None  # the chosen rate; None while a rate of the configured grid lacks its selection runs
    rates: tuple[float, ...]  # the rates chosen among: the configured grid, then the rates added past its edges
    added: int  # how many of ``rates`` were added past an edge
    limit: int  # table.protocol.max_grid_extensions
    pending: float | None = None  # the rate past the edge still without its selection runs: ``lr`` is provisional
    dev_by_lr: dict = field(default_factory=dict, compare=False)  # {rate: selection seeds' dev scores}

    def at_edge(self) -> bool:
        return self.lr is not None and past_edge(list(self.rates), self.lr) is not None

    def position(self) -> str:
        """``lr_position``: "interior", "edge", "provisional", or "" where nothing was chosen."""
        if self.lr is None or len(self.rates) < 2:
            return ""
        if self.pending is not None:
            return PROVISIONAL
        return EDGE if self.at_edge() else INTERIOR

    def statement(self) -> str:
        """What the table says of the choice: the grid's extension and whether the choice is interior
        ("" for a choice inside the grid as configured, a grid of one rate, or no choice yet)."""
        if self.lr is None or len(self.rates) < 2:
            return ""
        extended = f"grid extended to {_rates(self.rates)}" if self.added else ""
        side = "smallest" if self.lr == min(self.rates) else "largest"
        if self.pending is not None:
            return ((f"{extended}; " if extended else "")
                    + f"the choice is the grid's {side} rate and provisional: the selection runs at {self.pending:g}, "
                    f"one step past that edge, have not run yet")
        if not self.at_edge():
            return f"{extended}; choice interior" if extended else ""
        if not self.limit:
            return f"the choice is the grid's {side} rate, still at the edge: grid extension is off (table.protocol.max_grid_extensions=0)"
        return f"{extended}; limit of {self.limit} extension(s) hit at {self.lr:g}: still at the edge"

    def columns(self) -> dict:
        """The evidence columns of the choice (``COLUMNS``; the chosen rate is the row's ``chosen_lr``)."""
        return {"lr_grid": ";".join(repr(float(x)) for x in self.rates), "lr_extensions": self.added,
                "lr_extension_limit": self.limit, "lr_pending": "" if self.pending is None else self.pending,
                "lr_position": self.position()}

    @classmethod
    def from_columns(cls, row) -> RateChoice | None:
        """The choice a row's columns store (as written or as read back: strings or numbers), or None
        where they hold none: no grid, or one whose extension count or limit is not recorded (a row
        migrated from an older evidence format whose sentence did not give them)."""
        if _blank(row.get("lr_grid")) or _blank(row.get("lr_extensions")) or _blank(row.get("lr_extension_limit")):
            return None
        chosen, pending = row.get("chosen_lr"), row.get("lr_pending")
        return cls(None if _blank(chosen) else float(chosen), tuple(float(x) for x in str(row["lr_grid"]).split(";")),
                   int(row["lr_extensions"]), int(row["lr_extension_limit"]), None if _blank(pending) else float(pending))


def no_columns() -> dict:
    """The choice columns of a row whose grid has one rate (nothing to choose)."""
    return dict.fromkeys(COLUMNS, "")
