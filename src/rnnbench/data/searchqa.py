"""SearchQA (Dunn et al., 2017) from its original JSON files (nyu-dl/dl4ir-searchQA).

The release (the repository's Google Drive link, "files used in the training,
testing and validation") holds ``data_json/{train,val,test}.zip``, each a folder
of one JSON file per question, as the crawler in qacrawler/ writes them:

    {"category": ..., "air_date": ..., "question": str, "value": ..., "answer": str,
     "round": ..., "show_number": ..., "id": int,
     "search_results": [{"title": str, "url": str, "snippet": str | null,
                         "related_links": [str] | null}, ...]}

Put them under ``searchqa/data_json/`` of the data folder, either as the three
zips or unpacked (``searchqa/data_json/train/*.json``, ``val/``, ``test/``); a
folder wins over a zip of the same split. ``val`` is our dev split.

Records (one per question, ``id`` = the file name without ``.json``):
    passage   the Treebank tokens of the snippets, concatenated in rank order
              (the first ``max_snippets``; null snippets skipped), cut to
              ``max_passage_tokens`` if set
    question  the question's tokens
    answers   [the answer string] (the reference of searchqa_em / searchqa_f1)
and, by ``setting``:
- ``span``: ``span_start``, ``span_end``: the first case-insensitive occurrence
  of the answer's tokens in the passage (inclusive indices), or (-1, -1) when
  the (cut) passage does not contain it. Such questions are dropped from train
  when ``drop_unmatched_train`` and kept in dev and test (scored, and out of
  the span head's loss).
- ``generative``: ``answer_tokens`` (the answer's tokens).

Protocol notes: the dl4ir-searchQA README says training ignored questions with
40 or fewer snippets and snippets from the 51st on; ``min_snippets`` (default 0:
the released split files are, as far as we know, already the filtered set) and
``max_snippets`` (default 50) apply those rules to every split. The J! Archive
answers escape quotes with a backslash ("McDonald\\'s"); we drop the backslash.
Span targets from the first occurrence, the concatenation order and the absence
of a separator between snippets are our choices (the DCU paper gives only its
maximum sequence length, 200 tokens, set in conf/task/searchqa.yaml).
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Iterator

from rnnbench.data.base import Reader, Splits
from rnnbench.data.span_search import first_occurrence
from rnnbench.data.tokenize import treebank_tokenize
from rnnbench.errors import ConfigError, DataFormatError

ROOT = "searchqa/data_json"
SPLITS = {"train": "train", "dev": "val", "test": "test"}
SETTINGS = ("span", "generative")


def unescape(text: str) -> str:
    """J! Archive's backslash-escaped quotes (``McDonald\\'s``) as plain quotes."""
    return text.replace("\\'", "'").replace('\\"', '"')


class SearchQAReader(Reader):
    """Options: ``setting`` (span | generative), ``max_passage_tokens`` (None = all),
    ``min_snippets``, ``max_snippets``, ``drop_unmatched_train``."""

    name = "searchqa"
    source = "https://github.com/nyu-dl/dl4ir-searchQA (its Google Drive link: data_json/{train,val,test}.zip)"
    hub_id = "kyunghyuncho/search_qa"  # hosts the release's own zips: data/train_test_val/{train,val,test}.zip
    # Reference strings for the metrics, not model input. data.prepare does not read this attribute yet: until
    # it does, `answers` counts as a text field (the vocabulary holds each whole answer string; batches carry
    # its ids, which no head reads).
    raw_fields = ("answers",)

    def __init__(self, setting: str = "span", max_passage_tokens: int | None = None, min_snippets: int = 0,
                 max_snippets: int | None = 50, drop_unmatched_train: bool = True):
        if setting not in SETTINGS:
            raise ConfigError(f"task.reader.setting must be one of {', '.join(SETTINGS)}; got {setting!r}")
        self.setting = setting
        self.max_passage_tokens = max_passage_tokens
        self.min_snippets = min_snippets
        self.max_snippets = max_snippets
        self.drop_unmatched_train = drop_unmatched_train

    @property
    def files(self) -> tuple[str, ...]:  # what load() checks; input_paths picks folder or zip per split
        return tuple(f"{ROOT}/{name}" for name in SPLITS.values())

    def _split_path(self, root: Path, name: str) -> Path:
        folder = root / ROOT / name
        return folder if folder.is_dir() or not (root / ROOT / f"{name}.zip").exists() else root / ROOT / f"{name}.zip"

    def input_paths(self, root: Path) -> list[Path]:
        return [self._split_path(root, name) for name in SPLITS.values()]

    def _documents(self, path: Path) -> Iterator[tuple[str, str, bytes]]:
        """(id, where, JSON bytes) of every question file of a split folder or zip, by file name."""
        if path.is_dir():
            for file in sorted(path.glob("*.json")):
                yield file.stem, str(file), file.read_bytes()
            return
        with zipfile.ZipFile(path) as z:
            names = sorted(n for n in z.namelist() if n.endswith(".json") and "__MACOSX" not in n)
            for name in names:
                yield Path(name).stem, f"{path}:{name}", z.read(name)

    def _record(self, rid: str, where: str, raw: bytes) -> dict | None:
        try:
            doc = json.loads(raw.decode("utf-8"))
            question, answer, results = doc["question"], doc["answer"], doc["search_results"]
            if not isinstance(results, list):
                raise ValueError("search_results is not a list")
            snippets = [r.get("snippet") for r in results]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise DataFormatError(where, None, f"not a SearchQA question file ({exc})") from None
        if len(snippets) < self.min_snippets:
            return None
        passage = [t for s in snippets[: self.max_snippets] if s for t in treebank_tokenize(s)]
        if self.max_passage_tokens:
            passage = passage[: self.max_passage_tokens]
        answer = unescape(answer).strip()
        record = {"id": rid, "passage": passage, "question": treebank_tokenize(question), "answers": [answer]}
        if self.setting == "generative":
            record["answer_tokens"] = treebank_tokenize(answer)
        else:
            record["span_start"], record["span_end"] = first_occurrence(passage, treebank_tokenize(answer))
        return record

    def read_files(self, root: Path) -> Splits:
        return self.read_paths({name: self._split_path(root, name) for name in SPLITS.values()})

    def read_hub(self) -> Splits:
        """The release's zips as kyunghyuncho/search_qa hosts them (its loading script, which
        ``datasets`` no longer runs, reads the same files), read as the files are: the same records."""
        from rnnbench.data.hub import hub_file

        return self.read_paths({name: hub_file(self.hub_id, f"data/train_test_val/{name}.zip") for name in SPLITS.values()})

    def read_paths(self, paths: dict[str, Path]) -> Splits:
        """Records of the split folders or zips ``paths`` ({"train": ..., "val": ..., "test": ...})."""
        splits: Splits = {}
        for split, name in SPLITS.items():
            records = []
            for rid, where, raw in self._documents(paths[name]):
                record = self._record(rid, where, raw)
                if record is None:
                    continue
                if split == "train" and self.drop_unmatched_train and record.get("span_start", 0) < 0:
                    continue
                records.append(record)
            splits[split] = records
        return splits
