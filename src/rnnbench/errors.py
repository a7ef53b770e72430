"""User-facing errors: each carries one clear sentence, printed without a stack trace."""
from __future__ import annotations

from pathlib import Path


class RnnbenchError(Exception):
    """A user mistake or a missing input; train.py prints str(error) and exits with status 2."""

    exit_code = 2


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


class TrainingDiverged(RnnbenchError):
    """The training loss became NaN or infinite: the run cannot give a meaningful result."""


class EmbeddingError(RnnbenchError):
    """An embedding file of the wrong width, an empty one, or one covering too little of the vocabulary."""


class DamagedFileError(RnnbenchError):
    """A checkpoint, record or data file that cannot be read (truncated, empty, not what its name says)."""

    def __init__(self, path: str | Path, problem: str):
        super().__init__(f"{path}: {problem}")
        self.path, self.problem = str(path), problem


class DiskFullError(RnnbenchError):
    """No space left while writing a file; the partial file was removed."""


class OutputNotWritable(RnnbenchError):
    """The runs folder (paths.runs_dir) cannot be created or written."""


class SmokeRunRefused(RnnbenchError):
    """A table asked for a run whose test score covers only part of the test split."""


class RunInterrupted(RnnbenchError):
    """Ctrl-C or SIGTERM: train.py prints the message (how to resume) and exits with status 130."""

    exit_code = 130
