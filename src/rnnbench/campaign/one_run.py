"""One run of the regime ladder or a mechanism sweep trained now, its outcome said in one line."""
from __future__ import annotations

import sys

from rnnbench.errors import RnnbenchError, RunInProgress


def train_and_say(cfg, what: str, overrides: tuple[str, ...] | list[str], folder) -> tuple[dict | None, int]:
    """(the run's record, 0); (None, 0) where another process holds its folder (skipped: that
    process trains it); (None, 1) where it failed, the reason on stderr."""
    from rnnbench.run import train  # the trainer, which --plan and --no-run never load

    print(f"{what}: training ({' '.join(overrides)}) in {folder}", flush=True)
    try:
        return train(cfg), 0
    except RunInProgress as exc:
        print(f"{what}: skipped: {exc}", flush=True)
        return None, 0
    except RnnbenchError as exc:
        print(f"{what}: error: {exc}", file=sys.stderr, flush=True)
        return None, 1
