"""An encoder's dropout choice under the comparison protocol (``table.protocol.dropout_grid``;
``rnnbench.campaign.protocol`` makes it, after the learning rate, at the chosen rate), and the
evidence columns it is stored in.

A table whose protocol chooses dropout stores the choice of each row's encoder as two columns, and
states it from them (``DropoutChoice.from_columns``, then ``statement``):

- ``dropout_grid``: the p's tried besides the config's own dropout (``;``-joined, each float as the
  CSV writes floats); empty while the choice waits for its selection runs;
- ``dropout_chosen``: the p chosen, empty where the config's own dropout won (or no choice yet).

Each run's own p is the row's ``dropout`` (empty: the config's own).
"""
from __future__ import annotations

from dataclasses import dataclass, field

COLUMNS = ["dropout_grid", "dropout_chosen"]


@dataclass(frozen=True)
class DropoutChoice:
    """An encoder's dropout choice at its chosen rate: ``p`` (None: the config's own setting won)."""

    p: float | None
    grid: tuple[float, ...]
    dev_by_p: dict = field(default_factory=dict, compare=False)  # {p or None: the selection seeds' dev scores}

    def statement(self) -> str:
        """What the table says of the choice, one clause."""
        tried = ", ".join(f"{p:g}" for p in self.grid)
        chosen = "the config's own" if self.p is None else f"{self.p:g}"
        return f"dropout {chosen}, chosen on dev among the config's own and {{{tried}}} at the chosen rate"

    def columns(self) -> dict:
        """The evidence columns of the choice (``COLUMNS``)."""
        return {"dropout_grid": ";".join(repr(float(p)) for p in self.grid), "dropout_chosen": "" if self.p is None else self.p}

    @classmethod
    def from_columns(cls, row) -> DropoutChoice | None:
        """The choice a row's columns store (as written or as read back), or None where they hold none."""
        grid = row.get("dropout_grid")
        if grid is None or grid == "":
            return None
        chosen = row.get("dropout_chosen")
        return cls(None if chosen is None or chosen == "" else float(chosen), tuple(float(p) for p in str(grid).split(";")))


def no_columns() -> dict:
    """The columns of a row whose encoder has no dropout choice (yet)."""
    return dict.fromkeys(COLUMNS, "")
