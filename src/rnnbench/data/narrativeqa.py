"""NarrativeQA (Kocisky et al., 2018), summaries setting, from deepmind/narrativeqa's original files.

Files (paths as in the repository, under ``narrativeqa/`` of the data folder):
- ``qaps.csv``: ``document_id,set,question,answer1,answer2,question_tokenized,
  answer1_tokenized,answer2_tokenized`` (one question a row; two human answers);
- ``third_party/wikipedia/summaries.csv``: ``document_id,set,summary,summary_tokenized``
  (a summary may span several lines inside its quotes).
``set`` is train / valid / test; ``documents.csv`` (story metadata) is not needed
for the summaries setting. The ``*_tokenized`` columns are the dataset's own
tokenisation (cased; note quirks such as "Mark s" for "Mark's"), which we use
as the model's tokens.

Records (one per question; ``id`` = ``<document_id>:<n>``, n its rank among the
document's questions in file order):
    passage   the summary's tokens (cut to ``max_passage_tokens`` if set)
    question  the question's tokens
    answers   [answer1, answer2], the raw strings: the references of the text metrics
and, by ``setting``:
- ``span`` (extractive models, the DCU and RCRN papers): ``span_start``,
  ``span_end`` (inclusive token indices into ``passage``), the span of at most
  ``target_max_length`` words with the best ROUGE-L against both answers
  (``data.span_search.best_rouge_span``; the DCU paper's training targets), and
  ``span_rouge`` (its ROUGE-L). A question whose summary shares no word with its
  answers gets (-1, -1): dropped from train when ``drop_unmatched_train``, kept in
  dev and test (scored against the answers like every other; the span head
  leaves it out of the loss).
- ``generative`` (pointer-softmax decoders): ``answer_tokens``, the tokens of
  answer1 (the decoder's target; both answers stay references).

Choices that are ours (the papers do not state them): the span search compares
against both answers at once (coco-caption's multi-reference ROUGE-L, the
metric itself) and caps spans at ``target_max_length`` words (20 by default:
NarrativeQA answers average under 5 words); the passage cut happens before the
span search, so targets always lie inside what the model reads.
"""
from __future__ import annotations

import csv
import sys
from pathlib import Path

from rnnbench.data.base import Reader, Records, Splits
from rnnbench.data.span_search import best_rouge_span
from rnnbench.data.tokenize import treebank_tokenize
from rnnbench.errors import ConfigError, DataFormatError

QAPS = "narrativeqa/qaps.csv"
SUMMARIES = "narrativeqa/third_party/wikipedia/summaries.csv"
SPLITS = {"train": "train", "valid": "dev", "test": "test"}
SETTINGS = ("span", "generative")
QAPS_COLUMNS = ["document_id", "set", "question", "answer1", "answer2", "question_tokenized", "answer1_tokenized", "answer2_tokenized"]
SUMMARY_COLUMNS = ["document_id", "set", "summary", "summary_tokenized"]


def read_csv(path: Path, columns: list[str]) -> list[tuple[int, dict]]:
    """(line number, row) of a csv file with a header holding ``columns`` (quoted fields may hold newlines)."""
    csv.field_size_limit(sys.maxsize)  # summaries are long fields
    rows = []
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in columns if c not in (reader.fieldnames or [])]
        if missing:
            raise DataFormatError(path, 1, f"header lacks column(s) {', '.join(missing)}; expected {','.join(columns)}")
        line = reader.line_num
        for row in reader:
            if None in row or any(row[c] is None for c in columns):  # DictReader: extras under None, gaps None
                got = sum(v is not None for k, v in row.items() if k is not None) + len(row.get(None) or [])
                raise DataFormatError(path, line + 1, f"expected {len(reader.fieldnames)} fields, got {got}")
            rows.append((line + 1, row))
            line = reader.line_num
    return rows


def _tokens(tokenized: str, raw: str) -> list[str]:
    """The dataset's tokens; our Treebank tokens where its tokenised column is blank."""
    return tokenized.split() if tokenized.strip() else treebank_tokenize(raw)


class NarrativeQAReader(Reader):
    """Options: ``setting`` (span | generative), ``max_passage_tokens`` (None = whole summary),
    ``target_max_length`` (longest span searched), ``drop_unmatched_train``."""

    name = "narrativeqa"
    files = (QAPS, SUMMARIES)
    source = "https://github.com/deepmind/narrativeqa (qaps.csv and third_party/wikipedia/summaries.csv)"
    hub_id = "deepmind/narrativeqa"
    # Reference strings for the metrics, not model input. data.prepare does not read this attribute yet: until
    # it does, `answers` counts as a text field (the vocabulary holds each whole answer string; batches carry
    # its ids, which no head reads).
    raw_fields = ("answers",)

    def __init__(self, setting: str = "span", max_passage_tokens: int | None = None, target_max_length: int = 20,
                 drop_unmatched_train: bool = True):
        if setting not in SETTINGS:
            raise ConfigError(f"task.reader.setting must be one of {', '.join(SETTINGS)}; got {setting!r}")
        if target_max_length < 1:
            raise ConfigError(f"task.reader.target_max_length must be >= 1; got {target_max_length}")
        self.setting = setting
        self.max_passage_tokens = max_passage_tokens
        self.target_max_length = target_max_length
        self.drop_unmatched_train = drop_unmatched_train

    def _summaries(self, path: Path) -> dict[str, list[str]]:
        out = {}
        for line, row in read_csv(path, SUMMARY_COLUMNS):
            doc = row["document_id"].strip()
            if not doc:
                raise DataFormatError(path, line, "empty document_id")
            tokens = _tokens(row["summary_tokenized"], row["summary"])
            out[doc] = tokens[: self.max_passage_tokens] if self.max_passage_tokens else tokens
        return out

    def read_files(self, root: Path) -> Splits:
        summaries = self._summaries(root / SUMMARIES)
        qaps_path = root / QAPS
        splits: Splits = {"train": [], "dev": [], "test": []}
        seen: dict[str, int] = {}
        for line, row in read_csv(qaps_path, QAPS_COLUMNS):
            doc, split = row["document_id"].strip(), row["set"].strip()
            if split not in SPLITS:
                raise DataFormatError(qaps_path, line, f"set is {split!r}; expected one of {', '.join(SPLITS)}")
            if doc not in summaries:
                raise DataFormatError(qaps_path, line, f"document {doc} has no summary in {SUMMARIES}")
            n = seen[doc] = seen.get(doc, -1) + 1
            record = self._record(f"{doc}:{n}", summaries[doc], row)
            if record is not None and (split != "train" or not self.drop_unmatched_train or record.get("span_start", 0) >= 0):
                splits[SPLITS[split]].append(record)
        return splits

    def _record(self, rid: str, passage: list[str], row: dict) -> dict:
        answers = [row["answer1"].strip(), row["answer2"].strip()]
        record = {"id": rid, "passage": passage, "question": _tokens(row["question_tokenized"], row["question"]), "answers": answers}
        if self.setting == "generative":
            record["answer_tokens"] = _tokens(row["answer1_tokenized"], row["answer1"])
            return record
        answer_tokens = [_tokens(row[f"answer{k}_tokenized"], row[f"answer{k}"]) for k in (1, 2)]
        start, end, rouge = best_rouge_span(passage, answer_tokens, self.target_max_length)
        record.update(span_start=start, span_end=end, span_rouge=rouge)
        return record

    def read_hub(self) -> Splits:
        """deepmind/narrativeqa (parquet), streamed: each row also carries its whole story
        (16 GB of Arrow as a local copy), which the summaries setting does not read."""
        from rnnbench.data.hub import load_hub

        return self.records_from_hub(load_hub(self.hub_id, streaming=True))

    def records_from_hub(self, hub) -> Splits:
        """Records from the hub copy's rows: one per question of qaps.csv, in file order
        within each split (``train``/``validation``/``test``), with ``document.id``,
        ``document.summary.{text,tokens}``, ``question.{text,tokens}`` and two ``answers``
        ``{text,tokens}``; the tokens are the csv's ``*_tokenized`` columns split on
        whitespace. The same records as the files: a document's questions all sit in one
        split, so numbering them within a split gives the files' ids."""
        splits: Splits = {"train": [], "dev": [], "test": []}
        for hub_split, split in (("train", "train"), ("validation", "dev"), ("test", "test")):
            seen: dict[str, int] = {}
            summaries: dict[str, list[str]] = {}
            for i, row in enumerate(hub[hub_split]):
                where = f"{self.hub_id}:{hub_split} row {i}"
                try:
                    doc = row["document"]["id"].strip()
                    summary = row["document"]["summary"]
                    answers = row["answers"]
                    if len(answers) != 2:
                        raise ValueError(f"{len(answers)} answers, expected 2")
                    fields = {"question": row["question"]["text"], "question_tokenized": " ".join(row["question"]["tokens"])}
                    for k, answer in enumerate(answers, start=1):
                        fields[f"answer{k}"] = answer["text"]
                        fields[f"answer{k}_tokenized"] = " ".join(answer["tokens"])
                except (KeyError, TypeError, ValueError, AttributeError) as exc:
                    raise DataFormatError(where, None, f"not a NarrativeQA hub row ({type(exc).__name__}: {exc})") from None
                if doc not in summaries:
                    tokens = _tokens(" ".join(summary["tokens"]), summary["text"])
                    summaries[doc] = tokens[: self.max_passage_tokens] if self.max_passage_tokens else tokens
                n = seen[doc] = seen.get(doc, -1) + 1
                record = self._record(f"{doc}:{n}", summaries[doc], fields)
                if split != "train" or not self.drop_unmatched_train or record.get("span_start", 0) >= 0:
                    splits[split].append(record)
        return splits
