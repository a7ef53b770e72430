"""One colour per encoder, the same in every figure: the tables' learning curves, the cost
plots, FHE's figures, the claim cards and the report's charts of your runs.

Variants of one encoder in one figure (the LSTM-baseline paper's ten tricks on ``2l_lstm``)
keep the encoder's colour and differ by line style and marker (``styles``).
"""
from __future__ import annotations

import zlib

# Chosen so that encoders compared in one table differ at a glance (colour-blind-safe hues first
# for the encoders most tables compare: bilstm, 3l_bilstm, rcrn).
ENCODER_COLOURS = {
    "bilstm": "#0072B2",
    "3l_bilstm": "#56B4E9",
    "rcrn": "#D55E00",
    "rcrn_gru": "#E69F00",
    "lstm1": "#009E73",
    "lstm2": "#6A3D9A",
    "2l_lstm": "#444444",
    "2l_bilstm": "#1B9E77",
    "fhe": "#CC79A7",
    "dcu": "#8C564B",
    "sim_dcu": "#C49C94",
    "dcu_lstm": "#17BECF",
    "gru1": "#9467BD",
    "bigru": "#B5A6D6",
    "dt_gru": "#7F3C8D",
    "mzu_cap": "#B2182B",
    "mzu_sat": "#F781BF",
    "mzu_gcn": "#A6761D",
    "none": "#999999",
    "sru": "#BCBD22",
}
# Encoders added later, until they are given a colour above: a fixed pick by name (never random).
FALLBACK = ["#393B79", "#637939", "#8C6D31", "#843C39", "#7B4173", "#3182BD", "#E6550D", "#31A354"]
LINESTYLES = ["-", "--", ":", "-."]
MARKERS = ["", "o", "s", "^", "D", "v", "x", "*"]


def colour(encoder: str) -> str:
    """The encoder's colour (hex), stable across figures and runs of the program."""
    if encoder in ENCODER_COLOURS:
        return ENCODER_COLOURS[encoder]
    return FALLBACK[zlib.crc32(encoder.encode()) % len(FALLBACK)]


def styles(keys: list[tuple[str, str]]) -> dict[tuple[str, str], dict]:
    """matplotlib keyword arguments per (encoder, variant): the encoder's colour, and for the
    second and later variants of one encoder (in sorted order) another line style and marker."""
    out: dict[tuple[str, str], dict] = {}
    seen: dict[str, int] = {}
    for encoder, variant in sorted(set(keys)):
        i = seen.get(encoder, 0)
        seen[encoder] = i + 1
        out[(encoder, variant)] = {"color": colour(encoder), "linestyle": LINESTYLES[i % len(LINESTYLES)],
                                   "marker": MARKERS[(i // len(LINESTYLES) + i) % len(MARKERS)] or None}
    return out
