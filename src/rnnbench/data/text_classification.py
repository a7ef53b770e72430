"""Classification of your own texts, or of your own pairs of texts, from CSV, TSV or JSON lines.

``TextClassificationReader`` (task ``text_classification``) gives records
``{"id", "tokens", "label"}``; ``TextPairClassificationReader`` (task
``text_pair_classification``: entailment, paraphrase) gives ``{"id", <first>, <second>,
"label"}``, the two text fields named after the file's columns (``text_fields``). File
formats are in rnnbench/data/text_files.py.

Files: ``path`` (or its synonym ``train``) is the training file; ``dev`` and ``test`` are
optional. A path is read as given when absolute, else under the data directory
(RNNBENCH_DATA, ``paths.data_dir``), else under the current directory. A split without a
file is carved from the training file with ``split_seed``: ``test_fraction`` of its
examples for test, then ``dev_fraction`` for dev, each drawn at random, or by whole
groups when ``group_field`` names a column (no group on two sides: a score then cannot
reward recognising a group seen in training).

Labels are the training file's label values, sorted (label id = index); a dev or test
label absent from the training file is an error naming it, its file and line. Ids are
``<file>:<line>``, the path as configured. Texts are tokenised with ``tokenizer``:
``treebank`` (Penn Treebank tokens, as the readers of raw-text corpora here) or
``whitespace``; lower-casing follows the embedding (``embedding.lowercase``).
"""
from __future__ import annotations

import logging
from pathlib import Path

from rnnbench.data.base import Reader, Records, Splits, hold_out, hold_out_groups
from rnnbench.data.text_files import field, file_format, read_rows
from rnnbench.data.tokenize import treebank_tokenize
from rnnbench.errors import ConfigError, DataFormatError

log = logging.getLogger(__name__)

SPLITS = ("train", "dev", "test")
TOKENIZERS = ("treebank", "whitespace")


class _OwnFilesReader(Reader):
    """What both readers share: the files, the splits, the labels and the tokenizer."""

    source = "your own files (task.reader.path, or .train/.dev/.test)"

    def __init__(self, path: str | None = None, train: str | None = None, dev: str | None = None, test: str | None = None,
                 format: str = "auto", label_field: str = "label", group_field: str | None = None,  # noqa: A002
                 dev_fraction: float = 0.1, test_fraction: float = 0.1, split_seed: int = 13, tokenizer: str = "treebank"):
        if path is not None and train is not None and path != train:
            raise ConfigError(f"task.reader.path and task.reader.train both name a training file ({path!r}, {train!r}): give one")
        train = train if train is not None else path
        if train is None:
            raise ConfigError(f"task={self.name} needs your training file: task.reader.path=FILE (CSV, TSV or JSON lines; "
                              "dev and test files optional: task.reader.dev=, task.reader.test=)")
        if tokenizer not in TOKENIZERS:
            raise ConfigError(f"task.reader.tokenizer must be one of {', '.join(TOKENIZERS)}; got {tokenizer!r}")
        for option, value in (("dev_fraction", dev_fraction), ("test_fraction", test_fraction)):
            if not 0.0 < value < 1.0:
                raise ConfigError(f"task.reader.{option} must be a fraction between 0 and 1; got {value!r}")
        self.train, self.dev, self.test = str(train), dev and str(dev), test and str(test)
        self.format = format
        self.label_field = label_field
        self.group_field = group_field
        self.dev_fraction = dev_fraction
        self.test_fraction = test_fraction
        self.split_seed = split_seed
        self.tokenizer = tokenizer
        for name in self._given():
            file_format(Path(name), format)  # an unknown extension fails now, not after a wait
        self._labels: list[str] | None = None
        self._root = Path(".")

    # -- files ---------------------------------------------------------------------------------
    def _given(self) -> list[str]:
        return [p for p in (self.train, self.dev, self.test) if p]

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(self._given())

    @staticmethod
    def _candidates(name: str, root: Path) -> list[Path]:
        path = Path(name).expanduser()
        return [path] if path.is_absolute() else [root / path, Path.cwd() / path]

    def _resolve(self, name: str, root: Path) -> Path:
        candidates = self._candidates(name, root)
        return next((p for p in candidates if p.is_file()), candidates[0])

    def input_paths(self, root: Path) -> list[Path]:
        return [self._resolve(name, Path(root)) for name in self._given()]

    def check_available(self, data_dir: str | Path) -> None:
        root = self._root = Path(data_dir)  # where label_names reads the training file when the records come from the cache
        for name, split in zip((self.train, self.dev, self.test), SPLITS):
            if name and not self._resolve(name, root).is_file():
                tried = " and ".join(str(p) for p in dict.fromkeys(self._candidates(name, root)))
                option = "path" if split == "train" else split
                raise ConfigError(f"task.reader.{option}: file {name!r} not found (tried {tried}): give an absolute path, "
                                  "one under the data directory (RNNBENCH_DATA) or one under the current directory")

    def load(self, data_dir: str | Path) -> Splits:
        self.check_available(data_dir)
        return self.read_files(Path(data_dir))

    # -- records -------------------------------------------------------------------------------
    def tokenize(self, text: str) -> list[str]:
        return text.split() if self.tokenizer == "whitespace" else treebank_tokenize(text)

    def _texts(self, row: dict, path: Path, line: int) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def _rows(self, name: str, root: Path) -> list[tuple[str, Path, int, dict]]:
        """(label, path, line, row) of each example in the file ``name``."""
        path = self._resolve(name, root)
        rows = []
        for line, row in read_rows(path, self.format):
            label = field(row, self.label_field, path, line, "label_field").strip()
            if not label:
                raise DataFormatError(path, line, f"empty label (field {self.label_field!r}): every example needs one")
            rows.append((label, path, line, row))
        return rows

    @property
    def label_names(self) -> list[str]:
        """The training file's labels, sorted; read from it when the records came from the cache."""
        if self._labels is None:
            self._labels = self._train_labels(self._rows(self.train, self._root))
        return self._labels

    @staticmethod
    def _train_labels(rows) -> list[str]:
        return sorted({label for label, *_ in rows})

    def _records(self, name: str, root: Path, labels: dict[str, int]) -> Records:
        records = []
        for label, path, line, row in self._rows(name, root):
            if label not in labels:
                raise DataFormatError(path, line, f"label {label!r} does not occur in the training file {self.train} "
                                                  f"(its labels: {', '.join(labels)}): fix the label, or add examples of it to the training file")
            records.append({"id": f"{name}:{line}", **self._texts(row, path, line), "label": labels[label]})
        return records

    def read_files(self, root: Path) -> Splits:
        root = self._root = Path(root)
        train_rows = self._rows(self.train, root)
        self._labels = self._train_labels(train_rows)
        labels = {name: i for i, name in enumerate(self._labels)}
        train = self._records(self.train, root, labels)
        splits = {split: self._records(name, root, labels) if name else None for split, name in (("dev", self.dev), ("test", self.test))}
        group_of = None
        if self.group_field:
            path = self._resolve(self.train, root)
            groups = {f"{self.train}:{line}": field(row, self.group_field, path, line, "group_field") for _, _, line, row in train_rows}
            group_of = lambda record: groups[record["id"]]  # noqa: E731
        total = len(train)
        if splits["test"] is None:
            carved = self._carve(train, self.test_fraction, group_of, "test")
            train, splits["test"] = carved["train"], carved["dev"]
        if splits["dev"] is None:
            fraction = min(self.dev_fraction * total / max(len(train), 1), 0.99)  # of the whole training file
            carved = self._carve(train, fraction, group_of, "dev")
            train, splits["dev"] = carved["train"], carved["dev"]
        if self.carved():
            by = f"by {self.group_field!r}" if self.group_field else "at random"
            log.info("%s: %s carved from %s (%s, task.reader.split_seed=%d): %d train, %d dev, %d test", self.name,
                     " and ".join(self.carved()), self.train, by, self.split_seed, len(train), len(splits["dev"]), len(splits["test"]))
        return {"train": train, "dev": splits["dev"], "test": splits["test"]}

    def _carve(self, train: Records, fraction: float, group_of, split: str) -> Splits:
        where = f"{self.train} (carving the {split} split: task.reader.{split}_fraction)"
        if group_of is not None:
            return hold_out_groups(train, [], fraction, self.split_seed, group_of, where)
        size = max(1, round(len(train) * fraction))
        if size >= len(train):
            raise ConfigError(f"{where}: {len(train)} examples are too few to carve a {split} split from; give task.reader.{split}=FILE")
        return hold_out(train, [], size, self.split_seed, where)

    def carved(self) -> list[str]:
        """The splits carved from the training file (for a run's data note)."""
        return [split for split, name in (("dev", self.dev), ("test", self.test)) if not name]


class TextClassificationReader(_OwnFilesReader):
    """One text an example (``text_field``) and its label (``label_field``)."""

    name = "text_classification"
    version = 1

    def __init__(self, text_field: str = "text", **options):
        self.text_field = text_field
        super().__init__(**options)

    def _texts(self, row: dict, path: Path, line: int) -> dict:
        return {"tokens": self.tokenize(field(row, self.text_field, path, line, "text_field"))}


class TextPairClassificationReader(_OwnFilesReader):
    """Two texts an example (``text_fields``, first and second: premise and hypothesis,
    two questions) and their label; the records' text fields are the columns' names."""

    name = "text_pair_classification"
    version = 1

    def __init__(self, text_fields: list[str] | tuple[str, ...] = ("sentence1", "sentence2"), **options):
        text_fields = [str(f) for f in text_fields]
        if len(text_fields) != 2 or text_fields[0] == text_fields[1]:
            raise ConfigError(f"task.reader.text_fields must name two different fields (e.g. [premise,hypothesis]); got {text_fields}")
        if {"id", "label"} & set(text_fields):
            raise ConfigError(f"task.reader.text_fields: a text field may not be called 'id' or 'label'; got {text_fields}")
        self.text_fields = text_fields
        super().__init__(**options)

    def _texts(self, row: dict, path: Path, line: int) -> dict:
        return {name: self.tokenize(field(row, name, path, line, "text_fields")) for name in self.text_fields}
