"""A question-conditioned span task for span heads, generated from a seed (no files).

The passages and questions of ``pointer_copy`` (segments ``k<j> w w w``; the
question is one of the passage's keys), with the answer marked as a span: the
``segment_length`` words after the asked key. Ours, in the spirit of the FHE
paper's synthetic tasks: it checks on real signal, on a CPU in minutes, that a
span model learns to find what the question points at (the exact-match feature
finds the key; the pointer must learn that the answer starts right after it and
how long it is).

Records: ``{"id", "passage", "question", "answers", "span_start", "span_end"}``
(the fields of the NarrativeQA and SearchQA readers' span setting).
"""
from __future__ import annotations

from pathlib import Path

from rnnbench.data.base import Splits
from rnnbench.data.pointer_copy import PointerCopyReader


class SpanCopyReader(PointerCopyReader):
    """Options as ``PointerCopyReader`` (segments, segment length, words, keys, split sizes, seed)."""

    name = "span_copy"
    # Reference strings for the metrics, not model input. data.prepare does not read this attribute yet: until
    # it does, `answers` counts as a text field (the vocabulary holds each whole answer string; batches carry
    # its ids, which no head reads).
    raw_fields = ("answers",)

    def load(self, data_dir: str | Path | None = None) -> Splits:
        splits = super().load(data_dir)
        out: Splits = {}
        for split, records in splits.items():
            out[split] = []
            for r in records:
                start = r["passage"].index(r["question"][0]) + 1  # keys are distinct within a passage
                out[split].append({"id": r["id"], "passage": r["passage"], "question": r["question"], "answers": r["answers"],
                                   "span_start": start, "span_end": start + self.segment_length - 1})
        return out
