"""TREC question classification (Li & Roth 2002) from the original UIUC files.

Lines read ``COARSE:fine question tokens ...``; the questions are already
tokenised. ``train_5500.label`` holds one byte that is not UTF-8 (0xF0 in
"sister?city", line 66), so both files are read as Latin-1, which keeps every
byte. The label sets are the fixed Li & Roth taxonomy (sorted), not whatever a
split happens to contain: label ids must not depend on the data, because
cached records are reused without re-reading the files.
"""
from __future__ import annotations

from pathlib import Path

from rnnbench.data.base import Reader, Splits, hold_out, parse_lines

COARSE_LABELS = ["ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM"]
# All 50 fine classes of the taxonomy; every one occurs in train_5500.label (42 of them in the test set).
FINE_LABELS = [
    "ABBR:abb", "ABBR:exp",
    "DESC:def", "DESC:desc", "DESC:manner", "DESC:reason",
    "ENTY:animal", "ENTY:body", "ENTY:color", "ENTY:cremat", "ENTY:currency", "ENTY:dismed", "ENTY:event",
    "ENTY:food", "ENTY:instru", "ENTY:lang", "ENTY:letter", "ENTY:other", "ENTY:plant", "ENTY:product",
    "ENTY:religion", "ENTY:sport", "ENTY:substance", "ENTY:symbol", "ENTY:techmeth", "ENTY:termeq", "ENTY:veh",
    "ENTY:word",
    "HUM:desc", "HUM:gr", "HUM:ind", "HUM:title",
    "LOC:city", "LOC:country", "LOC:mount", "LOC:other", "LOC:state",
    "NUM:code", "NUM:count", "NUM:date", "NUM:dist", "NUM:money", "NUM:ord", "NUM:other", "NUM:perc",
    "NUM:period", "NUM:speed", "NUM:temp", "NUM:volsize", "NUM:weight",
]

TRAIN_FILE = "trec/train_5500.label"
TEST_FILE = "trec/TREC_10.label"


class TrecReader(Reader):
    """6 coarse classes, or the 50 fine ones (``fine=True``, label string ``COARSE:fine``).

    TREC has no dev set: ``dev_fraction`` of train is held out at random with
    ``dev_seed``, so every run and every encoder sees the same split.
    """

    name = "trec"
    files = (TRAIN_FILE, TEST_FILE)
    source = "https://cogcomp.seas.upenn.edu/Data/QA/QC/ (train_5500.label, TREC_10.label)"
    hub_id = "CogComp/trec"

    def __init__(self, fine: bool = False, dev_fraction: float = 0.1, dev_seed: int = 13):
        self.fine = fine
        self.dev_fraction = dev_fraction
        self.dev_seed = dev_seed

    @property
    def label_names(self) -> list[str]:
        return FINE_LABELS if self.fine else COARSE_LABELS

    def _label_id(self, fine_label: str) -> int:
        """Id of a ``COARSE:fine`` label string under the chosen granularity."""
        if fine_label not in FINE_LABELS:
            raise ValueError(f"unknown label {fine_label!r} (expected COARSE:fine, e.g. DESC:manner)")
        return self.label_names.index(fine_label if self.fine else fine_label.split(":")[0])

    def _read(self, path: Path, split: str) -> list[dict]:
        def parse(line: str) -> dict:
            label, _, question = line.partition(" ")
            tokens = question.split()
            if not tokens:
                raise ValueError("no question after the label")
            return {"tokens": tokens, "label": self._label_id(label)}

        return [{"id": f"{split}-{i}", **record} for i, record in enumerate(parse_lines(path, parse, encoding="latin-1"))]

    def _split_dev(self, train: list[dict], test: list[dict]) -> Splits:
        return hold_out(train, test, round(len(train) * self.dev_fraction), self.dev_seed, "TREC train")

    def read_files(self, root: Path) -> Splits:
        return self._split_dev(self._read(root / TRAIN_FILE, "train"), self._read(root / TEST_FILE, "test"))

    def read_hub(self) -> Splits:
        """The hub's parquet export of CogComp/trec (a script dataset, which ``datasets`` no longer runs)."""
        from rnnbench.data.hub import PARQUET_EXPORT, load_hub

        return self.records_from_hub(load_hub(self.hub_id, revision=PARQUET_EXPORT))

    def records_from_hub(self, hub) -> Splits:
        """Records from the hub copy's ``train``/``test`` splits: the same questions in file
        order, ``text`` and ``fine_label`` (a ClassLabel named ``COARSE:fine``). One
        difference: the hub's loader replaced the one byte that is not UTF-8 (0xF0, train
        line 66, "sister?city") by a space, so that question has one token more there."""
        splits = {}
        for split in ("train", "test"):
            names = hub[split].features["fine_label"].names
            splits[split] = [
                {"id": f"{split}-{i}", "tokens": row["text"].split(), "label": self._label_id(names[row["fine_label"]])}
                for i, row in enumerate(hub[split])
            ]
        return self._split_dev(splits["train"], splits["test"])
