"""Progress bars that suit where the output goes.

On a terminal: tqdm's bar, redrawn in place. Elsewhere (``make run > log``, a CI log, a
sweep's job log): one plain line per 5% of the work instead of hundreds of
carriage-return redraws.
"""
from __future__ import annotations

import sys

from tqdm import tqdm

LINE_EVERY = 0.05  # share of the total between two lines when the output is not a terminal


class _Lines:
    """A file for tqdm that turns each redraw into one line."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> None:
        text = text.replace("\r", "").strip()
        if text:
            self.stream.write(text + "\n")

    def flush(self) -> None:
        self.stream.flush()


class _LineBar(tqdm):
    """Postfix updates (the running loss) show on the next line instead of writing one each."""

    def set_postfix(self, ordered_dict=None, refresh=False, **kwargs):
        super().set_postfix(ordered_dict, refresh=False, **kwargs)


def progress_bar(iterable=None, total: int | None = None, disable: bool = False, stream=None, **kwargs):
    """``tqdm(iterable, ...)``; when ``stream`` (default stderr) is not a terminal, a line
    per 5% of ``total`` (or every 10 s when the total is unknown)."""
    stream = stream or sys.stderr
    if disable or (hasattr(stream, "isatty") and stream.isatty()):
        return tqdm(iterable, total=total, disable=disable, file=stream, **kwargs)
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    every = max(1, int(total * LINE_EVERY)) if total else None
    options = {"miniters": every, "mininterval": 0, "maxinterval": float("inf")} if every else {"mininterval": 10}
    kwargs = {**kwargs, **options, "dynamic_ncols": False, "ncols": 100}
    return _LineBar(iterable, total=total, file=_Lines(stream), **kwargs)
