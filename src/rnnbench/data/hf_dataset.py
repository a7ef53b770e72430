"""Classification of a Hugging Face ``datasets`` dataset: by name (and config) from the local
cache, or a dataset saved with ``save_to_disk``.

``HFDatasetReader`` (task ``hf_dataset``) gives records ``{"id", "tokens", "label"}``, or with
two ``text_fields`` (a pair task: entailment, paraphrase) ``{"id", <first>, <second>, "label"}``,
the text fields named after the dataset's columns.

- ``name`` (and ``config``, ``revision``): ``datasets.load_dataset(name, config)``, read from the
  cache (``cache_dir``, else ``HF_DATASETS_CACHE``, else ``~/.cache/huggingface/datasets``).
  Offline (``HF_DATASETS_OFFLINE=1``, the tests' setting) an absent dataset is one error line
  naming the cache and the command that fills it on a machine with internet access.
- ``path``: a dataset saved with ``Dataset.save_to_disk`` / ``DatasetDict.save_to_disk``.

``splits`` maps our train/dev/test to the dataset's split names (default: train, validation,
test); a split the dataset lacks is carved from train with ``split_seed`` (``test_fraction``
then ``dev_fraction``), as the file readers do. Labels: a ``ClassLabel`` column gives its class
names, any other column its values as text, sorted; a dev or test label absent from train is an
error naming it and its row. Ids are ``<split>:<row>``. Texts are tokenised with ``tokenizer``
(``treebank`` or ``whitespace``).
"""
from __future__ import annotations

import os
from pathlib import Path

from rnnbench.data.base import Reader, Records, Splits, hold_out
from rnnbench.data.tokenize import treebank_tokenize
from rnnbench.errors import ConfigError

OURS = ("train", "dev", "test")
DEFAULT_SPLITS = {"train": "train", "dev": "validation", "test": "test"}
TOKENIZERS = ("treebank", "whitespace")


def default_cache() -> str:
    """Where ``datasets`` keeps its cache when ``cache_dir`` is not given."""
    home = os.environ.get("HF_HOME", str(Path("~/.cache/huggingface").expanduser()))
    return os.environ.get("HF_DATASETS_CACHE", str(Path(home) / "datasets"))


class HFDatasetReader(Reader):
    """A Hugging Face dataset's rows as classification records; see the module docstring."""

    name = "hf_dataset"
    version = 1
    source = "a Hugging Face dataset in the local cache (task.reader.name) or saved to disk (task.reader.path)"

    def __init__(self, name: str | None = None, config: str | None = None, revision: str | None = None,
                 path: str | None = None, cache_dir: str | None = None, text_fields: list[str] | tuple[str, ...] = ("text",),
                 label_field: str = "label", splits: dict | None = None, dev_fraction: float = 0.1,
                 test_fraction: float = 0.1, split_seed: int = 13, tokenizer: str = "treebank"):
        if (name is None) == (path is None):
            raise ConfigError("task=hf_dataset needs one of task.reader.name=DATASET (from the Hugging Face cache) "
                              "or task.reader.path=DIR (a dataset saved with save_to_disk)")
        text_fields = [str(f) for f in text_fields]
        if len(text_fields) not in (1, 2) or len(set(text_fields)) != len(text_fields) or {"id", "label"} & set(text_fields):
            raise ConfigError(f"task.reader.text_fields must name one text field, or two different ones for a pair task "
                              f"(none called 'id' or 'label'); got {text_fields}")
        if tokenizer not in TOKENIZERS:
            raise ConfigError(f"task.reader.tokenizer must be one of {', '.join(TOKENIZERS)}; got {tokenizer!r}")
        for option, value in (("dev_fraction", dev_fraction), ("test_fraction", test_fraction)):
            if not 0.0 < value < 1.0:
                raise ConfigError(f"task.reader.{option} must be a fraction between 0 and 1; got {value!r}")
        unknown = set(splits or {}) - set(OURS)
        if unknown:
            raise ConfigError(f"task.reader.splits: keys must be among {', '.join(OURS)}; got {sorted(unknown)}")
        self.dataset, self.config, self.revision, self.path = name, config, revision, path
        self.cache_dir = cache_dir
        self.text_fields, self.label_field = text_fields, label_field
        self.splits = {**DEFAULT_SPLITS, **(splits or {})}
        self.dev_fraction, self.test_fraction, self.split_seed = dev_fraction, test_fraction, split_seed
        self.tokenizer = tokenizer
        self._labels: list[str] | None = None

    # -- the dataset -----------------------------------------------------------------------------
    def _fill_command(self) -> str:
        args = ", ".join(repr(a) for a in (self.dataset, self.config) if a is not None)
        return f"python -c \"import datasets; datasets.load_dataset({args})\""

    def _load(self):
        try:
            import datasets
        except ImportError:  # pragma: no cover - a dependency of rnnbench
            raise ConfigError("task=hf_dataset needs the datasets package: pip install datasets") from None
        if self.path is not None:
            path = Path(self.path).expanduser()
            if not path.exists():
                raise ConfigError(f"task.reader.path={self.path}: no dataset saved there (save one with "
                                  "DatasetDict.save_to_disk, or name a cached one with task.reader.name)")
            loaded = datasets.load_from_disk(str(path))
            return loaded if isinstance(loaded, datasets.DatasetDict) else datasets.DatasetDict({"train": loaded})
        cache = self.cache_dir or default_cache()
        try:
            return datasets.load_dataset(self.dataset, self.config, revision=self.revision, cache_dir=self.cache_dir)
        except Exception as exc:  # noqa: BLE001 - datasets raises many kinds for "not cached, no network"
            what = self.dataset + (f" (config {self.config})" if self.config else "")
            raise ConfigError(f"task.reader.name={what}: not in the Hugging Face cache {cache} and not downloadable here "
                              f"({type(exc).__name__}); fill the cache on a machine with internet access: "
                              f"{self._fill_command()}, then copy {cache} here (or set HF_DATASETS_CACHE)") from None

    def check_available(self, data_dir) -> None:
        """Nothing to check before loading: the cache is asked when the records are read."""

    def load(self, data_dir) -> Splits:
        return self.read_files(Path(data_dir))

    # -- records ---------------------------------------------------------------------------------
    def tokenize(self, text: str) -> list[str]:
        return text.split() if self.tokenizer == "whitespace" else treebank_tokenize(text)

    @property
    def label_names(self) -> list[str]:
        if self._labels is None:  # records read from the prepared cache: the training split's label column only
            train = self._train_split(self._load())
            if self.label_field not in train.column_names:
                raise ConfigError(f"{self._describe()} split {self.splits['train']!r}: no field {self.label_field!r} "
                                  f"(fields: {', '.join(train.column_names)}); set task.reader.label_field")
            names = getattr(train.features.get(self.label_field), "names", None)
            self._labels = sorted({str(names[v]) if names is not None and isinstance(v, int) and 0 <= v < len(names) else str(v)
                                   for v in train[self.label_field]})
        return self._labels

    def _train_split(self, loaded):
        name = self.splits["train"]
        if name not in loaded:
            raise ConfigError(f"{self._describe()}: no split {name!r} (its splits: {', '.join(loaded)}); set task.reader.splits.train")
        return loaded[name]

    def _label_of(self, split, row: dict, index: int, where: str) -> str:
        if self.label_field not in row:
            raise ConfigError(f"{where}: no field {self.label_field!r} (fields: {', '.join(row)}); set task.reader.label_field")
        value = row[self.label_field]
        feature = split.features.get(self.label_field)
        names = getattr(feature, "names", None)  # a ClassLabel column: ids with names
        return str(names[value]) if names is not None and isinstance(value, int) and 0 <= value < len(names) else str(value)

    def _rows(self, split, ours: str) -> list[tuple[str, int, dict]]:
        rows = []
        for index, row in enumerate(split):
            where = f"{self._describe()} split {self.splits[ours]!r}, row {index}"
            for f in self.text_fields:
                if not isinstance(row.get(f), str):
                    raise ConfigError(f"{where}: no text field {f!r} (fields: {', '.join(row)}); set task.reader.text_fields")
            rows.append((self._label_of(split, row, index, where), index, row))
        return rows

    def _describe(self) -> str:
        return f"dataset {self.dataset}" + (f" ({self.config})" if self.config else "") if self.path is None else f"dataset at {self.path}"

    def _records(self, rows, ours: str, labels: dict[str, int]) -> Records:
        records = []
        for label, index, row in rows:
            if label not in labels:
                raise ConfigError(f"{self._describe()} split {self.splits[ours]!r}, row {index}: label {label!r} does not occur "
                                  f"in the training split (its labels: {', '.join(labels)})")
            texts = {("tokens" if len(self.text_fields) == 1 else f): self.tokenize(row[f]) for f in self.text_fields}
            records.append({"id": f"{ours}:{index}", **texts, "label": labels[label]})
        return records

    def read_files(self, root: Path) -> Splits:
        loaded = self._load()
        train_rows = self._rows(self._train_split(loaded), "train")
        self._labels = sorted({label for label, *_ in train_rows})
        labels = {label: i for i, label in enumerate(self._labels)}
        out = {"train": self._records(train_rows, "train", labels)}
        for ours in ("dev", "test"):
            name = self.splits[ours]
            out[ours] = self._records(self._rows(loaded[name], ours), ours, labels) if name in loaded else None
        for ours, fraction in (("test", self.test_fraction), ("dev", self.dev_fraction)):
            if out[ours] is None:  # carved from train, as the file readers carve a split no file gives
                size = max(1, round(len(out["train"]) * fraction))
                if size >= len(out["train"]):
                    raise ConfigError(f"{self._describe()}: too few training rows to carve a {ours} split from")
                carved = hold_out(out["train"], [], size, self.split_seed, f"{self._describe()} ({ours} carved from train)")
                out["train"], out[ours] = carved["train"], carved["dev"]
        return out
