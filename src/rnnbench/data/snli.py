"""SNLI 1.0 (Bowman et al. 2015) from the official jsonl files.

Each line of ``snli/snli_1.0_{train,dev,test}.jsonl`` is one premise/hypothesis
pair: ``gold_label``, ``sentence1``, ``sentence2``, their parses
(``sentence{1,2}_binary_parse``, ``sentence{1,2}_parse``), ``pairID``,
``captionID`` and ``annotator_labels``. Records are

    {"id": pairID, "premise": [tokens], "hypothesis": [tokens], "label": int}

with the labels in the fixed order entailment, neutral, contradiction.

Pairs whose gold label is ``-`` (no majority among the annotators: 785 train,
158 dev, 176 test pairs) are dropped, as everyone does: 550,152 / 9,842 / 9,824
pairs remain.

Options:
  tokens      "parse" (default, ours): the leaves of ``sentence{1,2}_binary_parse``,
              i.e. the corpus' own Stanford tokenisation, with the PTB bracket escapes
              (-LRB-, -RRB-, ...) turned back into brackets. "text": ``sentence1`` and
              ``sentence2`` tokenised with rnnbench's Treebank tokenizer.
  train_file  path of the training file under the data directory; default the
              official ``snli/snli_1.0_train.jsonl``. Only the first 1,024 lines of it
              exist on the development machine (``snli/snli_1.0_train.first1024.jsonl``):
              the snli task config points here, and the experiment's table note says so.

The files are streamed line by line (the full train file is about 470 MB) and
split on '\\n' only.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterator

from rnnbench.data.base import Reader, Records, Splits
from rnnbench.errors import ConfigError, DataFormatError

LABELS = ["entailment", "neutral", "contradiction"]
NO_GOLD = "-"
TRAIN_FILE = "snli/snli_1.0_train.jsonl"
DEV_FILE = "snli/snli_1.0_dev.jsonl"
TEST_FILE = "snli/snli_1.0_test.jsonl"

# Stanford PTB escapes in the parse strings (brackets would break the tree syntax).
_PTB_ESCAPES = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}"}
TOKEN_SOURCES = ("parse", "text")
# ASCII blanks only: str.split() would also split a token at a no-break space.
_BLANKS = re.compile(r"[ \t\r\n]+")


def parse_leaves(binary_parse: str) -> list[str]:
    """Tokens of a binary parse "( ( Two women ) ( ... ) )": every piece that is not a
    bracket (a bracket inside the text is escaped as -LRB-/-RRB-, unescaped here)."""
    pieces = _BLANKS.split(binary_parse.replace("(", " ( ").replace(")", " ) "))
    return [_PTB_ESCAPES.get(piece, piece) for piece in pieces if piece and piece not in ("(", ")")]


def iter_json_lines(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) of each non-empty line; streams the file, splits on '\\n' only.
    A line that is not a JSON object is a DataFormatError naming the file and line."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            line = raw.rstrip(b"\r\n")
            if not line.strip():
                continue
            try:
                obj = json.loads(line.decode("utf-8"))
            except UnicodeDecodeError as exc:
                raise DataFormatError(path, number, f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
            except ValueError as exc:
                raise DataFormatError(path, number, f"not a JSON object ({exc})") from None
            if not isinstance(obj, dict):
                raise DataFormatError(path, number, f"not a JSON object (a {type(obj).__name__})")
            yield number, obj


def _field(obj: dict, key: str) -> str:
    if key not in obj:
        raise ValueError(f"missing field {key!r}")
    value = obj[key]
    if not isinstance(value, str):
        raise ValueError(f"field {key!r} is not a string")
    return value


class SNLIReader(Reader):
    """SNLI 1.0 jsonl; see the module docstring for the options."""

    name = "snli"
    source = "https://nlp.stanford.edu/projects/snli/snli_1.0.zip (put its snli_1.0_{train,dev,test}.jsonl in snli/)"
    label_names = LABELS

    def __init__(self, tokens: str = "parse", train_file: str = TRAIN_FILE):
        if tokens not in TOKEN_SOURCES:
            raise ConfigError(f"task.reader.tokens must be one of {', '.join(TOKEN_SOURCES)}; got {tokens!r}")
        self.tokens = tokens
        self.train_file = train_file

    @property
    def files(self) -> tuple[str, ...]:
        return (self.train_file, DEV_FILE, TEST_FILE)

    def _tokens(self, obj: dict, which: str) -> list[str]:
        if self.tokens == "parse":
            return parse_leaves(_field(obj, f"{which}_binary_parse"))
        from rnnbench.data.tokenize import treebank_tokenize

        return treebank_tokenize(_field(obj, which))

    def read_file(self, path: Path) -> Records:
        """The pairs of one jsonl file that have a gold label."""
        records = []
        for number, obj in iter_json_lines(path):
            try:
                gold = _field(obj, "gold_label")
                if gold == NO_GOLD:
                    continue
                if gold not in LABELS:
                    raise ValueError(f"gold label {gold!r} is not one of {', '.join(LABELS)} or '-'")
                records.append({
                    "id": _field(obj, "pairID"),
                    "premise": self._tokens(obj, "sentence1"),
                    "hypothesis": self._tokens(obj, "sentence2"),
                    "label": LABELS.index(gold),
                })
            except ValueError as exc:
                raise DataFormatError(path, number, str(exc)) from None
        return records

    def read_files(self, root: Path) -> Splits:
        train, dev, test = (root / f for f in self.files)
        return {"train": self.read_file(train), "dev": self.read_file(dev), "test": self.read_file(test)}
