"""RACE multiple-choice reading comprehension (Lai et al. 2017): one record per question.

Two layouts hold the same passages, read in the same order (high then middle,
each by numeric file id), so both give identical records:
- the original release, unpacked in ``race/``: ``race/RACE/{train,dev,test}/{high,middle}/<n>.txt``,
  each file one JSON object ``{"article", "questions", "options", "answers", "id"}``;
- the packed ``race/race_{train,dev,test}.jsonl.gz``: one line per original file, the
  same object plus ``orig_path`` (``RACE/<split>/<level>/<n>.txt``). Used when present.

Record (every text field tokenised with the Treebank tokenizer, case kept):
    {"id": "<split>/<level>/<n>.txt#<k>", "level": "middle" | "high",
     "passage": [...], "question": [...], "option_0": [...], ..., "option_3": [...],
     "label": 0..3}
``level`` comes from the file's path (RACE-M / RACE-H), so a task can score each
level apart (``task.metric_subsets``). A passage is tokenised once and its token
list shared by its questions. Every RACE question has exactly four options and an
answer letter A-D; a file breaking that is refused with its name (and line, packed).

Tokenising ~28k passages and ~500k questions and options is the slow part of a
first read (the Arrow cache makes later runs instant): ``workers`` processes share
it (default: the CPU count, at most 8; 1 = in this process). ``workers`` does not
change the records, so it is not part of the cache key.
"""
from __future__ import annotations

import gzip
import json
import os
import sys
from pathlib import Path

from tqdm import tqdm

from rnnbench.data.base import Reader, Records, Splits
from rnnbench.data.tokenize import treebank_tokenize
from rnnbench.errors import DataFormatError

SPLITS = ("train", "dev", "test")
LEVELS = ("high", "middle")  # the packed files' order
LETTERS = ["A", "B", "C", "D"]  # label id = index
NUM_OPTIONS = len(LETTERS)
PACKED = {split: f"race/race_{split}.jsonl.gz" for split in SPLITS}
ORIGINAL_DIR = "race/RACE"

# One passage file's content before tokenisation: (split, level, file name, where, JSON text),
# ``where`` = (path, line or None) for error messages.
Item = tuple[str, str, str, tuple[str, int | None], str]


class DataFormatErrorArgs(tuple):
    """(path, line, problem) sent back from a worker (DataFormatError itself does not pickle)."""


class RaceReader(Reader):
    name = "race"
    files = tuple(PACKED.values())
    source = (
        "http://www.cs.cmu.edu/~glai1/data/race/ (RACE.tar.gz: unpack it in race/, giving race/RACE/train/high/1.txt, ...; "
        "or the packed race/race_{train,dev,test}.jsonl.gz)"
    )
    label_names = LETTERS

    def __init__(self, workers: int | None = None):
        self._workers = workers  # speed only: excluded from the cache key (Reader.options)

    # -- where the files are ---------------------------------------------------------
    def _packed(self, root: Path) -> bool:
        return any((root / f).exists() for f in PACKED.values())

    def _original(self, root: Path) -> bool:
        return (root / ORIGINAL_DIR).is_dir()

    def input_paths(self, root: Path) -> list[Path]:
        """The packed files if any is there, else the original level folders if RACE/ is there
        (a missing one is then named), else the packed files (named in the missing-data error)."""
        if not self._packed(root) and self._original(root):
            return [root / ORIGINAL_DIR / split / level for split in SPLITS for level in LEVELS]
        return [root / f for f in PACKED.values()]

    # -- reading -----------------------------------------------------------------------
    def _items_packed(self, root: Path, split: str) -> list[Item]:
        path = root / PACKED[split]
        items = []
        for number, line in enumerate(gzip.decompress(path.read_bytes()).decode("utf-8").split("\n"), start=1):
            if not line.strip():
                continue
            where = (str(path), number)
            try:
                orig = json.loads(line)["orig_path"]
                _, file_split, level, name = orig.split("/")
            except (ValueError, KeyError, TypeError) as exc:
                raise DataFormatError(path, number, f"not a packed RACE line with orig_path RACE/<split>/<level>/<n>.txt ({type(exc).__name__}: {exc})") from None
            if file_split != split:
                raise DataFormatError(path, number, f"orig_path {orig!r} is not in the {split} split")
            items.append((split, level, name, where, line))
        return items

    def _items_original(self, root: Path, split: str) -> list[Item]:
        items = []
        for level in LEVELS:
            folder = root / ORIGINAL_DIR / split / level
            numbered = []
            for path in folder.glob("*.txt"):
                if not path.stem.isdigit():
                    raise DataFormatError(path, None, "file name is not <number>.txt")
                numbered.append((int(path.stem), path))
            for _, path in sorted(numbered):
                items.append((split, level, path.name, (str(path), None), path.read_bytes().decode("utf-8")))
        return items

    def items(self, root: Path) -> dict[str, list[Item]]:
        """Every split's passage files, untokenised and unparsed (cheap: for checks that need no tokens)."""
        read = self._items_packed if self._packed(root) else self._items_original
        return {split: read(root, split) for split in SPLITS}

    def read_files(self, root: Path) -> Splits:
        return {split: self._records(split_items, split) for split, split_items in self.items(root).items()}

    def _records(self, items: list[Item], split: str) -> Records:
        """Parse and tokenise every passage file of a split (in order), in ``workers`` processes."""
        workers = self._workers if self._workers is not None else min(os.cpu_count() or 1, 8)
        bar = tqdm(total=len(items), desc=f"reading RACE {split}", unit="passage", mininterval=1.0)
        records: Records = []
        if workers <= 1 or len(items) < 64:
            results = map(_parse_item, items)
            pool = None
        else:
            import multiprocessing

            pool = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn").Pool(workers)
            results = pool.imap(_parse_item, items, chunksize=32)  # ordered: records keep the file order
        try:
            for result in results:
                if isinstance(result, DataFormatErrorArgs):
                    raise DataFormatError(*result)
                records += result
                bar.update()
        finally:
            bar.close()
            _CACHE.clear()
            if pool is not None:
                pool.terminate()
        return records


def _tokens(text: str, cache: dict[str, list[str]]) -> list[str]:
    """Treebank tokens, interned (a worker's result pickles each distinct token once)."""
    tokens = cache.get(text)
    if tokens is None:
        tokens = [sys.intern(t) for t in treebank_tokenize(text)]
        if len(text) < 200:  # questions and options repeat ("What is the best title?"); passages do not
            cache[text] = tokens
    return tokens


_CACHE: dict[str, list[str]] = {}


def _parse_item(item: Item) -> Records | DataFormatErrorArgs:
    split, level, name, (path, line), text = item
    try:
        return passage_records(json.loads(text), split, level, name, _CACHE)
    except (ValueError, KeyError, TypeError) as exc:
        problem = str(exc) if isinstance(exc, ValueError) and not isinstance(exc, json.JSONDecodeError) else f"not a RACE passage object ({type(exc).__name__}: {exc})"
        return DataFormatErrorArgs((path, line, problem))


def check_passage(obj: dict, level: str) -> int:
    """The number of questions of one passage file's JSON object; ValueError (or KeyError,
    TypeError) names what breaks RACE's format."""
    if level not in LEVELS:
        raise ValueError(f"level folder {level!r} is neither 'high' nor 'middle'")
    if not isinstance(obj["article"], str):
        raise ValueError("'article' is not a string")
    questions, options, answers = obj["questions"], obj["options"], obj["answers"]
    if not (len(questions) == len(options) == len(answers)):
        raise ValueError(f"{len(questions)} questions, {len(options)} option lists and {len(answers)} answers: they must match")
    for k, (question, opts, answer) in enumerate(zip(questions, options, answers)):
        if len(opts) != NUM_OPTIONS:
            raise ValueError(f"question {k + 1} has {len(opts)} options; RACE questions have exactly {NUM_OPTIONS} (A-D)")
        if answer not in LETTERS:
            raise ValueError(f"question {k + 1} has answer {answer!r}; expected one of A, B, C, D")
        if not isinstance(question, str) or not all(isinstance(o, str) for o in opts):
            raise ValueError(f"question {k + 1}: the question and its options must be strings")
    return len(questions)


def passage_records(obj: dict, split: str, level: str, name: str, cache: dict | None = None) -> Records:
    """The records of one passage file's JSON object (checked by ``check_passage``)."""
    cache = {} if cache is None else cache
    check_passage(obj, level)
    passage = _tokens(obj["article"], {})
    records = []
    for k, (question, opts, answer) in enumerate(zip(obj["questions"], obj["options"], obj["answers"])):
        record = {"id": f"{split}/{level}/{name}#{k}", "level": level, "passage": passage, "question": _tokens(question, cache)}
        for i, option in enumerate(opts):
            record[f"option_{i}"] = _tokens(option, cache)
        record["label"] = LETTERS.index(answer)
        records.append(record)
    return records
