"""The settings a table is run in: a claim decided at every rung of the regime ladder that has runs.

Our reference rows sit below the papers' in today's setting (frozen 50-d vectors, no dropout, no
character input). The regime ladder (``rnnbench ladder``, results/regime_ladder.md)
climbs toward the paper's setting one rung at a time; a table re-run at a higher rung keeps its
rung-0 runs as evidence of another setting, not superseded ones. The registry declares it:

    settings:
      rungs: [0, 3]      # the rungs the table is run at; rung 0 is the rows as the claims name them
      chosen: 3          # the rung whose reference row came closest to the paper's: the claims' headline
      why: "..."         # why that rung (the ladder's numbers)

At rung r a claim's rows are the same rows with the rung's variant (``row_at``: ``bilstm`` ->
``bilstm/rung3``, ``bilstm/ap`` -> ``bilstm/ap_rung3``): the experiments of rung r set
``table.variant`` so. Each rung with runs is one hypothesis of the paper's family (Holm), gated as
any claim (the parity gate reads that rung's reference row). The claim's verdict
(``choices.combine``, with ``directions_differ`` and ``take_headline``):

- only rung 0 has runs: rung 0's verdict, exactly as without the declaration;
- two rungs decide the claim in opposite directions (one reproduced or smaller than claimed, one
  contradicted): **depends on the setting**, with each rung's verdict;
- otherwise: the chosen rung's verdict where it has runs (else the highest rung with runs), with
  each rung's verdict beside and whether the direction holds at every rung that decided it.
"""
from __future__ import annotations

from dataclasses import fields

DEPENDS_ON_SETTING = "depends on the setting"
SETTING = "setting"  # a Choice's rule (results/choices.py): rungs of the ladder, not a choice the paper leaves open
_HOLDS, _AGAINST = ("reproduced", "smaller than claimed"), ("contradicted",)
_NO_RUNS = ("not run", "data missing")


def variant_at(variant: str, rung: int) -> str:
    """The variant of a row's experiment at ``rung`` (rung 0: the variant itself)."""
    if not rung:
        return variant
    return f"{variant}_rung{rung}" if variant else f"rung{rung}"


def row_at(row: str, rung: int) -> str:
    """A registry row (``encoder`` or ``encoder/variant``) at ``rung``."""
    encoder, _, variant = row.partition("/")
    at = variant_at(variant, rung)
    return f"{encoder}/{at}" if at else encoder


def declared(registry: dict) -> dict | None:
    return registry.get("settings")


def rungs(registry: dict) -> list[int]:
    entry = declared(registry) or {}
    return [int(r) for r in entry.get("rungs", [0])]


def note(entry: dict) -> str:
    """The table page's line on its settings: the rungs it is run at and why the chosen one. A
    table may declare rung 0 alone: the ladder found no rung nearer the paper's worth its cost."""
    higher = ", ".join(f"{r} (variant `{variant_at('', r)}`)" for r in entry["rungs"] if r)
    if not higher:
        return ("Settings: this table is run at rung 0 of the regime ladder (today's setting) alone, the rung chosen "
                f"(results/regime_ladder.md): {entry['why']}.")
    return (f"Settings: this table is run at rung 0 of the regime ladder (today's setting) and at rung {higher} "
            f"(results/regime_ladder.md); its claims are read at rung {entry['chosen']} once both rows of a claim "
            f"have runs there, rung 0 beside (docs/verdicts.md, \"Settings\"): {entry['why']}.")


def check_registry(registry: dict, where: str) -> None:
    """The table's ``settings``, checked: one line naming the file and what is wrong."""
    entry = declared(registry)
    if entry is None:
        return
    if not isinstance(entry, dict) or {"rungs", "chosen", "why"} - set(entry):
        raise ValueError(f"{where}: settings is a mapping of rungs (a list with 0), chosen (one of them) and why")
    listed = entry["rungs"]
    if not isinstance(listed, list) or not all(isinstance(r, int) and 0 <= r <= 4 for r in listed) or 0 not in listed:
        raise ValueError(f"{where}: settings.rungs lists the ladder's rungs (0-4) the table is run at, 0 among them; got {listed!r}")
    if len(set(listed)) != len(listed):
        raise ValueError(f"{where}: settings.rungs lists a rung twice: {listed!r}")
    if entry["chosen"] not in listed:
        raise ValueError(f"{where}: settings.chosen ({entry['chosen']!r}) is not one of settings.rungs {listed!r}")
    if registry.get("open_choices"):
        raise ValueError(f"{where}: a table declares settings or open_choices, not both (a claim is decided over one of them)")


def direction(verdict: str) -> int:
    """+1 where a verdict decides the claim's direction, -1 against it, 0 where it decides none."""
    return 1 if verdict in _HOLDS else -1 if verdict in _AGAINST else 0


def text(result) -> str:
    """"setting: rung 0 inconclusive; rung 3 reproduced"."""
    return "setting: " + "; ".join(f"{value} {cell.verdict}" for value, cell in result.choice.cells)


def directions_differ(choice) -> bool:
    """Whether two rungs with runs decide the claim in opposite directions."""
    ran = [cell for _, cell in choice.cells if cell.verdict not in _NO_RUNS]
    return {direction(cell.verdict) for cell in ran} - {0} == {1, -1}


def take_headline(result) -> None:
    """The claim's numbers and verdict from its chosen rung (else the highest rung with runs), each
    rung's verdict beside (``text``); set on ``result`` in place."""
    choice = result.choice
    ran = [(value, cell) for value, cell in choice.cells if cell.verdict not in _NO_RUNS]
    chosen = f"rung {choice.chosen}"
    value, headline = next(((v, c) for v, c in ran if v == chosen), ran[-1] if ran else choice.cells[0])
    for f in fields(headline):
        if f.name not in ("claim", "table", "paper", "choice"):
            setattr(result, f.name, getattr(headline, f.name))
    said = f"the numbers of {value}" + ("" if value == chosen else f" ({chosen}, the chosen setting, has no runs)")
    if len(ran) > 1 and {direction(cell.verdict) for _, cell in ran} - {0}:
        said += "; the direction holds at every rung that decides it"
    result.note = "; ".join(n for n in (said, headline.note) if n)
