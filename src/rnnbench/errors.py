"""User-facing errors: each carries one clear sentence, printed without a stack trace."""
from __future__ import annotations

from pathlib import Path


class RnnbenchError(Exception):
    """A user mistake or a missing input; train.py prints str(error) and exits with status 2."""


class ConfigError(RnnbenchError):
    pass


class RunInProgress(RnnbenchError):
    """Another process holds the run's lock (a parallel sweep got there first)."""


class DataFormatError(RnnbenchError):
    """A malformed line in a data file: names the file and the 1-based line number."""

    def __init__(self, path: str | Path, line: int | None, problem: str):
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {problem}")
        self.path, self.line, self.problem = str(path), line, problem


class DatasetMissingError(RnnbenchError):
    """Neither the original files nor a hub copy could be found."""

    def __init__(self, dataset: str, expected: list[str], searched: str | Path, source: str, hub_note: str = ""):
        files = ", ".join(expected)
        msg = (
            f"dataset {dataset!r} not found: expected {files} under {searched} "
            f"(set RNNBENCH_DATA or paths.data_dir); get it from {source}"
        )
        if hub_note:
            msg += f"; {hub_note}"
        super().__init__(msg)
