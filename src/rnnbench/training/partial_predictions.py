"""A long prediction pass saved as it goes, so that an interrupted one resumes where it stopped.

The test pass of a Monte Carlo dropout run predicts every test example once per sample: the
LSTM baseline paper's 60 samples over IMDb's 25,000 test reviews take hours on one CPU
thread, longer than a worker may be left to run once training ends. Without this, Ctrl-C or a
stopped worker during that pass threw all of it away.

``PredictionProgress`` is handed to ``evaluate.predict``: after each batch it saves (at most
every ``save_every_s`` seconds, and at once when Ctrl-C or SIGTERM was received) the
predictions so far, the sums behind the loss and the encoder statistics, the batches done and
the RNG state, atomically, to ``test.partial.pt`` in the run folder. A stop request then
raises RunInterrupted. The next pass with the same key resumes after the last saved batch with
that RNG state, so it ends with exactly the predictions of an uninterrupted pass (the MC
dropout draws continue where they stopped; a test compares the two). The file is deleted when
the pass completes; a file whose key differs (other weights or settings) is ignored.
"""
from __future__ import annotations

import time
from pathlib import Path

from rnnbench.errors import DamagedFileError, RunInterrupted
from rnnbench.training import checkpoint

PARTIAL_TEST = "test.partial.pt"
SAVE_EVERY_S = 60.0  # a kill without warning (SIGKILL, power) loses at most this much of the pass


class PredictionProgress:
    def __init__(self, path: Path, key: str, save_every_s: float | None = None, say=print,
                 stop_requested=checkpoint.stop_requested):
        self.path, self.key, self.say = Path(path), key, say
        self.save_every_s = SAVE_EVERY_S if save_every_s is None else save_every_s
        self.stop_requested = stop_requested  # Ctrl-C or SIGTERM received (checkpoint.deferred_interrupts)
        self.earlier_seconds = 0.0  # predicting time of the passes this one resumes
        self._started = self._saved_at = time.monotonic()

    def resume(self) -> dict | None:
        """The saved progress of this pass (None: start from the first batch). Restores the RNG state."""
        try:
            saved = checkpoint.load(self.path, "cpu")
        except DamagedFileError as exc:  # costs the time it saved, never a result
            self.say(f"warning: {exc}; predicting from the first batch")
            return None
        if saved is None:
            return None
        if saved.get("key") != self.key:
            self.say(f"warning: {self.path} is from another pass (other weights or settings); predicting from the first batch")
            return None
        checkpoint.set_rng_state(saved["rng"])
        self.earlier_seconds = float(saved["seconds"])
        self.say(f"resuming the {saved['what']} at batch {saved['done'] + 1} of {saved['batches']}")
        return saved

    def after_batch(self, done: int, batches: int, predictions: dict, total_loss: float, count: int, stats: dict,
                    what: str = "test pass") -> None:
        """Called after each batch: save if due (or a stop was requested), then stop if requested."""
        stopping = self.stop_requested()
        if done < batches and (stopping or time.monotonic() - self._saved_at >= self.save_every_s):
            checkpoint.save(self.path, key=self.key, what=what, done=done, batches=batches, predictions=predictions,
                            total_loss=total_loss, count=count, stats=stats, rng=checkpoint.rng_state(),
                            seconds=self.earlier_seconds + time.monotonic() - self._started)
            self._saved_at = time.monotonic()
        if stopping and done < batches:
            raise RunInterrupted(f"interrupted in the {what} at batch {done} of {batches}; progress saved: "
                                 f"run the same command to resume ({self.path.parent})")

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)
