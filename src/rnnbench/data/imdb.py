"""IMDb Large Movie Review Dataset (Maas et al. 2011): 25k train, 25k test reviews.

Two layouts hold the same reviews: the packed ``imdb/imdb_{train,test}.jsonl.gz``
(one JSON record per original file: id, label, rating, orig_path, text), used
when present, and the unpacked official ``imdb/aclImdb/{train,test}/{pos,neg}/<id>_<rating>.txt``.
Both are put in the same order (pos then neg, each by numeric id) so the dev
split is identical whichever is read.

The raw text is tokenised with the Treebank tokenizer (``<br />`` becomes a
space); case is kept, the vocabulary decides about lower-casing. IMDb has no dev
set: ``dev_size`` reviews are held out of train with ``dev_seed``, as in the
LSTM baseline paper. ``max_tokens`` keeps only the first tokens of long reviews.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

from tqdm import tqdm

from rnnbench.data.base import Reader, Records, Splits, hold_out
from rnnbench.data.tokenize import treebank_tokenize
from rnnbench.errors import DataFormatError

PACKED_FILES = {"train": "imdb/imdb_train.jsonl.gz", "test": "imdb/imdb_test.jsonl.gz"}
ACL_DIR = "imdb/aclImdb"
LABELS = ["neg", "pos"]  # label id = index: neg 0, pos 1 (as on the hub)
FOLDER_ORDER = ("pos", "neg")  # the packed files' order

Raw = list[tuple[str, int, str]]  # (id, label, text) before tokenisation


class ImdbReader(Reader):
    name = "imdb"
    source = (
        "https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz "
        "(unpack it in imdb/, or use the packed imdb/imdb_{train,test}.jsonl.gz)"
    )
    hub_id = "stanfordnlp/imdb"
    label_names = LABELS

    def __init__(self, dev_size: int = 2500, dev_seed: int = 13, max_tokens: int | None = None):
        self.dev_size = dev_size
        self.dev_seed = dev_seed
        self.max_tokens = max_tokens

    def _packed(self, root: Path) -> bool:
        return any((root / f).exists() for f in PACKED_FILES.values())

    def input_paths(self, root: Path) -> list[Path]:
        """The packed files if either is there, else the aclImdb label folders."""
        if self._packed(root):
            return [root / f for f in PACKED_FILES.values()]
        return [root / ACL_DIR / split / label for split in PACKED_FILES for label in FOLDER_ORDER]

    def _read_packed(self, path: Path, split: str) -> Raw:
        raw = []
        for number, line in enumerate(gzip.decompress(path.read_bytes()).decode("utf-8").split("\n"), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                label = LABELS.index(record["label"])
                raw.append((f"{split}/{record['label']}/{record['id']}", label, record["text"]))
            except (ValueError, KeyError, TypeError) as exc:
                raise DataFormatError(path, number, f"not a review record ({type(exc).__name__}: {exc})") from None
        return raw

    def _read_folder(self, root: Path, split: str) -> Raw:
        raw = []
        for name in FOLDER_ORDER:
            paths = []
            for path in (root / ACL_DIR / split / name).glob("*.txt"):
                review_id, _, rating = path.stem.partition("_")
                if not (review_id.isdigit() and rating.isdigit()):
                    raise DataFormatError(path, None, "file name is not <id>_<rating>.txt")
                paths.append((int(review_id), path))
            for _, path in sorted(paths):
                raw.append((f"{split}/{name}/{path.stem}", LABELS.index(name), path.read_bytes().decode("utf-8")))
        return raw

    def _tokenise(self, raw: Raw, split: str) -> Records:
        records = []
        for review_id, label, text in tqdm(raw, desc=f"tokenising IMDb {split}", unit="review"):
            tokens = treebank_tokenize(text)
            if self.max_tokens is not None:
                tokens = tokens[: self.max_tokens]
            records.append({"id": review_id, "tokens": tokens, "label": label})
        return records

    def _hold_out(self, train: Raw, test: Raw) -> dict[str, Raw]:
        return hold_out(train, test, self.dev_size, self.dev_seed, "IMDb train")

    def read_raw(self, root: Path) -> dict[str, Raw]:
        """The splits as (id, label, text) before tokenisation: cheap, for checks that need no tokens."""
        if self._packed(root):
            raw = {split: self._read_packed(root / f, split) for split, f in PACKED_FILES.items()}
        else:
            raw = {split: self._read_folder(root, split) for split in PACKED_FILES}
        return self._hold_out(raw["train"], raw["test"])

    def read_files(self, root: Path) -> Splits:
        return {split: self._tokenise(raw, split) for split, raw in self.read_raw(root).items()}

    def read_labels(self, root: Path) -> Splits | None:
        """Ids and labels without tokenising 50,000 reviews (minutes): the files read, not the hub copy."""
        if self.missing_inputs(root):
            return None
        return {split: [{"id": review_id, "label": label} for review_id, label, _ in raw]
                for split, raw in self.read_raw(root).items()}

    def read_hub(self) -> Splits:
        """stanfordnlp/imdb (parquet, configuration ``plain_text``)."""
        from rnnbench.data.hub import load_hub

        return self.records_from_hub(load_hub(self.hub_id, "plain_text"))

    def records_from_hub(self, hub) -> Splits:
        """The hub copy has text and label (0 neg, 1 pos) but no review ids, so its
        order, and hence its dev split, differs from the files'; ids are ``<split>-<row>``."""
        raw = {
            split: [(f"{split}-{i}", row["label"], row["text"]) for i, row in enumerate(hub[split])]
            for split in ("train", "test")
        }
        return {split: self._tokenise(r, split) for split, r in self._hold_out(raw["train"], raw["test"]).items()}
