"""MS MARCO question answering (Nguyen et al. 2016) from the original json files.

Two formats, as Microsoft distributes them (each file may also be gzip-compressed, ``.json.gz``):
- v1.1 (``msmarco/{train,dev}_v1.1.json``): one json object per line,
  ``{"query": str, "query_id": int, "query_type": str, "answers": [str, ...],
  "passages": [{"passage_text": str, "is_selected": 0|1, "url": str}, ...]}``;
- v2.1 (``msmarco/{train,dev}_v2.1.json``): one json object of columns, each a
  dict from a row key ("0", "1", ...) to the value of that row (same fields, plus
  ``wellFormedAnswers``); unanswerable queries hold ``["No Answer Present."]``.

Records: ``{"id": query_id, "passage": tokens, "question": tokens, "answers":
[reference strings], "answer_tokens": tokens of the first answer, "query_type": str}``
(Treebank tokens, as every reader here).

Choices (the FHE paper does not state them; it reports BLEU-1 and ROUGE-L on the
validation set and on the hidden test set of the leaderboard):
- ``passages: all`` (default) makes the document the concatenation of every passage
  of the query, in file order: the FHE paper's decoder searches "a long input
  passage" and its Figure 5 attends over several passages, one of them relevant.
  ``selected`` keeps the passages marked ``is_selected`` (all passages when none is).
- The public test files hold no answers, so they cannot be scored here: our test
  split is the official dev set (the paper's "validation" column) and our dev split
  is ``dev_fraction`` of train, held out at random with ``dev_seed``.
- Queries without an answer (v1.1: an empty list; v2.1: "No Answer Present.") are
  dropped from every split, as the official evaluation script drops them from the
  references; blank answer strings are dropped too.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Iterator

from rnnbench.data.base import Reader, Records, Splits, hold_out
from rnnbench.data.tokenize import treebank_tokenize
from rnnbench.errors import ConfigError, DataFormatError

VERSIONS = ("v1.1", "v2.1")
NO_ANSWER = "No Answer Present."
PASSAGE_CHOICES = ("all", "selected")


def _open_text(path: Path) -> Iterator[str]:
    """Lines of a (possibly gzipped) UTF-8 file, without their line ends."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline="\n") as f:
        for line in f:
            yield line.rstrip("\r\n")


def _string_list(value, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{what} must be a list of strings, got {type(value).__name__}")
    return value


def scored_answers(answers: list[str]) -> list[str]:
    """The reference answers the official evaluation scores against: none for a query marked
    "No Answer Present." (v2.1) or without answers (v1.1); blank strings are dropped."""
    stripped = [a.strip() for a in answers]
    if NO_ANSWER in stripped:
        return []
    return [a for a in stripped if a]


class MSMarcoReader(Reader):
    """MS MARCO QA; the module docstring gives the formats and our choices.

    Options: ``version`` (v1.1 | v2.1), ``passages`` (all | selected),
    ``dev_fraction`` of train held out as dev (at least one record) with ``dev_seed``.
    """

    raw_fields = ("answers",)  # reference strings for the metrics, not text to encode
    name = "msmarco"
    source = (
        "https://microsoft.github.io/msmarco/ (v1.1: train_v1.1.json.gz and dev_v1.1.json.gz; "
        "v2.1: train_v2.1.json.gz and dev_v2.1.json.gz), placed in <data_dir>/msmarco/"
    )
    hub_id = "microsoft/ms_marco"  # parquet, configurations v1.1 and v2.1 (records_from_hub)

    def __init__(self, version: str = "v1.1", passages: str = "all", dev_fraction: float = 0.025, dev_seed: int = 13):
        if version not in VERSIONS:
            raise ConfigError(f"task.reader.version must be one of {', '.join(VERSIONS)}; got {version!r}")
        if passages not in PASSAGE_CHOICES:
            raise ConfigError(f"task.reader.passages must be one of {', '.join(PASSAGE_CHOICES)}; got {passages!r}")
        if not 0.0 < dev_fraction < 1.0:
            raise ConfigError(f"task.reader.dev_fraction must be between 0 and 1; got {dev_fraction}")
        self.version = version
        self.passages = passages
        self.dev_fraction = dev_fraction
        self.dev_seed = dev_seed

    @property
    def files(self) -> tuple[str, ...]:
        return (f"msmarco/train_{self.version}.json", f"msmarco/dev_{self.version}.json")

    def input_paths(self, root: Path) -> list[Path]:
        """Each file as ``.json`` or, when only that exists, ``.json.gz`` (as downloaded)."""
        out = []
        for f in self.files:
            plain, gz = root / f, root / f"{f}.gz"
            out.append(gz if gz.exists() and not plain.exists() else plain)
        return out

    # ---- one example -----------------------------------------------------------------

    def _record(self, obj) -> dict | None:
        """A record from one example's fields; None for a query without an answer."""
        if not isinstance(obj, dict):
            raise ValueError(f"expected a json object, got {type(obj).__name__}")
        for key in ("query", "query_id", "passages", "answers"):
            if key not in obj:
                raise ValueError(f"missing field {key!r}")
        if not isinstance(obj["query"], str):
            raise ValueError("'query' must be a string")
        if not isinstance(obj["query_id"], int) or isinstance(obj["query_id"], bool):
            raise ValueError("'query_id' must be an integer")
        passages = obj["passages"]
        if not isinstance(passages, list) or not passages:
            raise ValueError("'passages' must be a non-empty list")
        for i, p in enumerate(passages):
            if not isinstance(p, dict) or not isinstance(p.get("passage_text"), str):
                raise ValueError(f"passage {i} has no 'passage_text' string")
        answers = scored_answers(_string_list(obj["answers"], "'answers'"))
        if not answers:
            return None
        chosen = passages
        if self.passages == "selected":
            chosen = [p for p in passages if p.get("is_selected") == 1] or passages
        passage = [tok for p in chosen for tok in treebank_tokenize(p["passage_text"])]
        return {
            "id": str(obj["query_id"]),
            "passage": passage,
            "question": treebank_tokenize(obj["query"]),
            "answers": answers,
            "answer_tokens": treebank_tokenize(answers[0]),
            "query_type": str(obj.get("query_type", "")),
        }

    # ---- files -----------------------------------------------------------------------

    def _read_v11(self, path: Path) -> Records:
        records = []
        for number, line in enumerate(_open_text(path), start=1):
            if not line.strip():
                continue
            try:
                record = self._record(json.loads(line))
            except (ValueError, TypeError) as exc:  # json.JSONDecodeError is a ValueError
                raise DataFormatError(path, number, f"not an MS MARCO v1.1 example: {exc}") from None
            if record is not None:
                records.append(record)
        return records

    def _read_v21(self, path: Path) -> Records:
        opener = gzip.open if path.suffix == ".gz" else open
        try:
            with opener(path, "rt", encoding="utf-8") as f:
                columns = json.load(f)  # one object: v2.1 train needs several GB of memory
        except json.JSONDecodeError as exc:
            raise DataFormatError(path, exc.lineno, f"not valid json: {exc.msg}") from None
        if not isinstance(columns, dict) or not isinstance(columns.get("query"), dict):
            raise DataFormatError(path, None, "not an MS MARCO v2.1 file: expected an object of columns with a 'query' column")
        records = []
        for key in columns["query"]:
            row = {name: col.get(key) for name, col in columns.items() if isinstance(col, dict) and key in col}
            try:
                record = self._record(row)
            except (ValueError, TypeError) as exc:
                raise DataFormatError(path, None, f"row {key!r}: not an MS MARCO v2.1 example: {exc}") from None
            if record is not None:
                records.append(record)
        return records

    def _read(self, path: Path) -> Records:
        records = self._read_v11(path) if self.version == "v1.1" else self._read_v21(path)
        if not records:
            raise DataFormatError(path, None, "no answered queries in this file")
        return records

    def _split(self, train: Records, official_dev: Records) -> Splits:
        dev_size = max(1, round(len(train) * self.dev_fraction))
        return hold_out(train, official_dev, dev_size, self.dev_seed, f"MS MARCO {self.version} train")

    def read_files(self, root: Path) -> Splits:
        train_path, dev_path = self.input_paths(root)
        return self._split(self._read(train_path), self._read(dev_path))

    # ---- the hub copy ------------------------------------------------------------------

    def read_hub(self) -> Splits:
        from rnnbench.data.hub import load_hub

        return self.records_from_hub(load_hub(self.hub_id, self.version))

    def records_from_hub(self, hub) -> Splits:
        """Records from the hub copy's ``train`` and ``validation`` (the official dev set)
        splits: the files' examples in file order, with ``passages`` held as columns
        (``{"is_selected": [...], "passage_text": [...], "url": [...]}``) instead of a list
        of objects; put back as a list, each row gives the record its example gives."""
        out = []
        for hub_split in ("train", "validation"):
            records = []
            for i, row in enumerate(hub[hub_split]):
                try:
                    row = dict(row)
                    passages = row.get("passages")
                    if isinstance(passages, dict):  # the hub's columns of a sequence of structs
                        keys = list(passages)
                        row["passages"] = [dict(zip(keys, values)) for values in zip(*(passages[k] for k in keys))]
                    record = self._record(row)
                except (ValueError, TypeError) as exc:
                    raise DataFormatError(f"{self.hub_id}:{self.version}:{hub_split}", None, f"row {i}: not an MS MARCO example: {exc}") from None
                if record is not None:
                    records.append(record)
            if not records:
                raise DataFormatError(f"{self.hub_id}:{self.version}:{hub_split}", None, "no answered queries in this split")
            out.append(records)
        return self._split(*out)
