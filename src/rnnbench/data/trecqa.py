"""TrecQA answer sentence selection (Wang et al. 2007) in the Rao et al. (2016) setting.

Splits: TRAIN-ALL (1,229 questions, 53,417 pairs, automatically judged) or
TRAIN (the 94 manually judged questions, 4,718 pairs); DEV and TEST in two
versions:
- ``clean`` (default; Rao et al. 2016, the RCRN paper's setting): only the
  questions that have both a correct and an incorrect candidate
  (dev 65 questions / 1,117 pairs, test 68 / 1,442);
- ``raw``: every question that has candidates (dev 81 / 1,148, test 95 / 1,517).
  Its questions without a correct candidate stay in the records; the ranking
  metrics leave them out (``rnnbench.metrics.ranking``).
Training data is the same in both versions and is never filtered.

Two layouts of the same data are read (``layout``):
- ``castorini`` (default): ``trecqa/castorini_format/<split>/{a.toks,b.toks,id.txt,sim.txt}``
  (split folders ``train-all``, ``train``, ``clean-dev``, ``clean-test``, ``raw-dev``,
  ``raw-test``): line i of each file is pair i (question tokens, candidate tokens,
  question id, 0/1 label), lower-cased and tokenised. ``boundary.txt`` and
  ``numrels.txt`` are derived from these and not read (in the raw folders they
  even lack their last entry).
- ``jacana``: Yao et al.'s (2013) pseudo-XML ``trecqa/jacana_xml/{train-all,train,dev,test}.xml``
  (the raw version, cased): ``<QApairs id='..'>`` holding one ``<question>`` then
  ``<positive>``/``<negative>`` blocks; a block's first line is its tab-separated
  tokens (POS tags, dependencies and entity tags follow and are ignored). HTML
  characters are not escaped, so it is read line by line, never with an XML parser;
  a QApairs with no candidate gives no record. ``clean`` keeps the questions with
  both labels, which gives exactly the castorini ``clean-*`` pairs (tested).

One record per pair: ``{"id": "<qid>:<n>", "qid", "question", "answer", "label"}``,
n counting the question's candidates from 0 in file order.

TRAIN-ALL's answer file (``train-all/b.toks``, ``train-all.xml``) is larger than
most copies carry; ``train_split="train"`` trains on TRAIN instead.
"""
from __future__ import annotations

import re
from pathlib import Path

from rnnbench.data.base import Reader, Records, Splits, read_lines
from rnnbench.errors import ConfigError, DataFormatError

CASTORINI = "trecqa/castorini_format"
JACANA = "trecqa/jacana_xml"
CASTORINI_FILES = ("a.toks", "b.toks", "id.txt", "sim.txt")
TRAIN_SPLITS = ("train-all", "train")
VERSIONS = ("clean", "raw")
LAYOUTS = ("castorini", "jacana")
LABELS = {"0": 0, "1": 1}

_QAPAIRS = re.compile(r"<QApairs id='([^']*)'>")
_BLOCKS = {"question", "positive", "negative"}


def keep_mixed(records: Records) -> Records:
    """Rao et al.'s clean filter: the questions with at least one correct and one incorrect candidate."""
    labels: dict[str, set[int]] = {}
    for r in records:
        labels.setdefault(r["qid"], set()).add(r["label"])
    return [r for r in records if labels[r["qid"]] == {0, 1}]


def _number_candidates(pairs: list[tuple[str, list[str], list[str], int]]) -> Records:
    """(qid, question, answer, label) tuples -> records with ids ``<qid>:<n>``."""
    seen: dict[str, int] = {}
    records = []
    for qid, question, answer, label in pairs:
        n = seen.get(qid, 0)
        seen[qid] = n + 1
        records.append({"id": f"{qid}:{n}", "qid": qid, "question": question, "answer": answer, "label": label})
    return records


def read_castorini(folder: Path) -> Records:
    """Records of one castorini split folder; the four files must have one line per pair."""
    columns = {name: read_lines(folder / name) for name in CASTORINI_FILES}
    n = max(len(lines) for lines in columns.values())
    for name, lines in columns.items():
        if len(lines) < n:
            longest = max(columns, key=lambda k: len(columns[k]))
            raise DataFormatError(folder / name, len(lines) + 1, f"missing line: {longest} has {n} lines, this file {len(lines)}")
    pairs = []
    for i in range(n):
        question, answer = columns["a.toks"][i].split(), columns["b.toks"][i].split()
        qid, label = columns["id.txt"][i].strip(), columns["sim.txt"][i].strip()
        for name, bad, problem in (
            ("a.toks", not question, "empty question"),
            ("b.toks", not answer, "empty candidate sentence"),
            ("id.txt", not qid or len(qid.split()) != 1, f"expected one question id, found {qid!r}"),
            ("sim.txt", label not in LABELS, f"label must be 0 or 1, found {label!r}"),
        ):
            if bad:
                raise DataFormatError(folder / name, i + 1, problem)
        pairs.append((qid, question, answer, LABELS[label]))
    return _number_candidates(pairs)


def read_jacana(path: Path) -> Records:
    """Records of one jacana pseudo-XML file (line-based: HTML characters are not escaped)."""
    pairs = []
    qid: str | None = None  # inside <QApairs>
    question: list[str] | None = None
    block: str | None = None  # inside <question>/<positive>/<negative>
    block_line = 0  # content lines read in the current block
    opened_at = 0
    for number, line in enumerate(read_lines(path), start=1):
        tag = line.strip()
        match = _QAPAIRS.fullmatch(tag)
        if block is not None:
            if tag == f"</{block}>":
                if block_line == 0:
                    raise DataFormatError(path, number, f"<{block}> block without a token line")
                block = None
            elif match or tag in {f"<{b}>" for b in _BLOCKS} | {"</QApairs>"}:
                raise DataFormatError(path, number, f"{tag} inside the <{block}> block opened at line {opened_at} (missing </{block}>)")
            else:
                if block_line == 0:
                    tokens = [t for t in line.split("\t") if t]
                    if not tokens:
                        raise DataFormatError(path, number, f"empty token line in <{block}>")
                    if block == "question":
                        question = tokens
                    else:
                        pairs.append((qid, question, tokens, int(block == "positive")))
                block_line += 1
            continue
        if match:
            if qid is not None:
                raise DataFormatError(path, number, f"<QApairs> inside the one opened at line {opened_at} (missing </QApairs>)")
            qid, question, opened_at = match.group(1), None, number
            if not qid:
                raise DataFormatError(path, number, "empty QApairs id")
        elif tag == "</QApairs>":
            if qid is None:
                raise DataFormatError(path, number, "</QApairs> without an opening <QApairs id='...'>")
            qid = None
        elif tag.startswith("<") and tag.endswith(">") and tag[1:-1] in _BLOCKS:
            name = tag[1:-1]
            if qid is None:
                raise DataFormatError(path, number, f"<{name}> outside a <QApairs> element")
            if name == "question" and question is not None:
                raise DataFormatError(path, number, "a second <question> in one QApairs")
            if name != "question" and question is None:
                raise DataFormatError(path, number, f"<{name}> before the <question> of its QApairs")
            block, block_line, opened_at = name, 0, number
        elif tag:
            raise DataFormatError(path, number, f"unexpected line outside a block: {line[:60]!r}")
    if block is not None or qid is not None:
        raise DataFormatError(path, None, f"the file ends inside the element opened at line {opened_at}")
    return _number_candidates(pairs)


class TrecQAReader(Reader):
    """Options (defaults = the paper's setting where it says): ``version`` clean|raw (paper: clean),
    ``train_split`` train-all|train (ours: the paper does not say; TRAIN-ALL is the usual
    choice of the clean setting), ``layout`` castorini|jacana (ours: the file layout read)."""

    name = "trecqa"
    label_names = ["incorrect", "correct"]

    def __init__(self, version: str = "clean", train_split: str = "train-all", layout: str = "castorini"):
        for option, value, known in (("version", version, VERSIONS), ("train_split", train_split, TRAIN_SPLITS), ("layout", layout, LAYOUTS)):
            if value not in known:
                raise ConfigError(f"task.reader.{option} must be one of {', '.join(known)}; got {value!r}")
        self.version = version
        self.train_split = train_split
        self.layout = layout

    @property
    def source(self) -> str:
        where = (
            "castorini's TrecQA copy (folders train-all, train, clean-dev, clean-test, raw-dev, raw-test), "
            "e.g. in the GitHub repository l11x0m7/Question_Answering_Models, cQA/data/TrecQA"
            if self.layout == "castorini"
            else "jacana-qa-naacl2013-data-results.tar.bz2 (Yao et al. 2013), also in the GitHub repository aseveryn/deep-qa"
        )
        if self.train_split == "train-all":
            where += "; copies often lack TRAIN-ALL's answers: task.reader.train_split=train trains on TRAIN instead"
        return where

    def _castorini_folders(self) -> dict[str, str]:
        eval_prefix = "clean" if self.version == "clean" else "raw"
        return {"train": self.train_split, "dev": f"{eval_prefix}-dev", "test": f"{eval_prefix}-test"}

    def _jacana_files(self) -> dict[str, str]:
        return {"train": f"{self.train_split}.xml", "dev": "dev.xml", "test": "test.xml"}

    @property
    def files(self) -> tuple[str, ...]:
        if self.layout == "castorini":
            return tuple(f"{CASTORINI}/{folder}/{name}" for folder in self._castorini_folders().values() for name in CASTORINI_FILES)
        return tuple(f"{JACANA}/{name}" for name in self._jacana_files().values())

    def read_files(self, root: Path) -> Splits:
        if self.layout == "castorini":
            # The clean-* folders are already filtered; raw-* are not.
            return {split: read_castorini(root / CASTORINI / folder) for split, folder in self._castorini_folders().items()}
        splits = {split: read_jacana(root / JACANA / name) for split, name in self._jacana_files().items()}
        if self.version == "clean":
            splits["dev"], splits["test"] = keep_mixed(splits["dev"]), keep_mixed(splits["test"])
        return splits
