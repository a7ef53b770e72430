"""WikiQA answer sentence selection (Yang et al. 2015) from the official tsv files.

``wikiqa/WikiQA-{train,dev,test}.tsv`` (Microsoft WikiQA Corpus) hold one
(question, candidate sentence) pair per line under the header
``QuestionID Question DocumentID DocumentTitle SentenceID Sentence Label``.
They are read with quoting disabled: a line is split on tabs only, because
sentences contain unbalanced ``"`` that a CSV reader would treat as quotes.
Questions and sentences are raw text, tokenised here with the Treebank tokenizer.

One record per pair: ``{"id": "<QuestionID>:<SentenceID>", "qid", "question",
"answer", "label"}`` (label 1 = the sentence answers the question). A
SentenceID alone is not unique: one Wikipedia summary can serve several questions.

Protocol (the usual answer-selection setting, which the RCRN paper follows):
dev and test keep only the questions with at least one correct candidate
(dev 126, test 243 questions); MAP and MRR are undefined for the others.
``keep_unanswered=True`` keeps them (the metrics leave them out anyway).
Training keeps every pair: a question without a correct candidate yields no
training triple, but its sentences are negatives the ranking head may draw
from the pool (``rnnbench.heads.ranker``).
"""
from __future__ import annotations

from pathlib import Path

from rnnbench.data.base import Reader, Records, Splits, read_lines
from rnnbench.data.tokenize import treebank_tokenize
from rnnbench.errors import DataFormatError

HEADER = ["QuestionID", "Question", "DocumentID", "DocumentTitle", "SentenceID", "Sentence", "Label"]
SPLIT_FILES = {"train": "wikiqa/WikiQA-train.tsv", "dev": "wikiqa/WikiQA-dev.tsv", "test": "wikiqa/WikiQA-test.tsv"}
LABELS = {"0": 0, "1": 1}


def drop_unanswered(records: Records) -> Records:
    """The records of the questions that have at least one correct candidate (order kept)."""
    answered = {r["qid"] for r in records if r["label"] == 1}
    return [r for r in records if r["qid"] in answered]


def read_tsv(path: Path) -> Records:
    """Records of one WikiQA tsv file; a malformed line raises DataFormatError naming file and line."""
    lines = read_lines(path)  # also strips the CR of CRLF copies (some mirrors ship CRLF)
    if not lines or lines[0].split("\t") != HEADER:
        raise DataFormatError(path, 1, f"expected the header {chr(9).join(HEADER)!r}")
    records = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != len(HEADER):
            raise DataFormatError(path, number, f"expected {len(HEADER)} tab-separated fields, found {len(fields)}")
        qid, question, _doc, _title, sentence_id, sentence, label = fields
        if label not in LABELS:
            raise DataFormatError(path, number, f"label must be 0 or 1, found {label!r}")
        if not qid or not sentence_id:
            raise DataFormatError(path, number, "empty QuestionID or SentenceID")
        q_tokens, a_tokens = treebank_tokenize(question), treebank_tokenize(sentence)
        if not q_tokens or not a_tokens:
            raise DataFormatError(path, number, "empty question or sentence")
        records.append({"id": f"{qid}:{sentence_id}", "qid": qid, "question": q_tokens, "answer": a_tokens, "label": LABELS[label]})
    return records


class WikiQAReader(Reader):
    """Options: ``keep_unanswered`` (default False: dev/test drop questions without a correct candidate)."""

    name = "wikiqa"
    files = tuple(SPLIT_FILES.values())
    source = (
        "the Microsoft Research WikiQA Corpus, https://www.microsoft.com/en-us/download/details.aspx?id=52419 "
        "(WikiQACorpus.zip: WikiQA-train.tsv, WikiQA-dev.tsv, WikiQA-test.tsv)"
    )
    label_names = ["incorrect", "correct"]

    def __init__(self, keep_unanswered: bool = False):
        self.keep_unanswered = keep_unanswered

    def read_files(self, root: Path) -> Splits:
        splits = {split: read_tsv(root / rel) for split, rel in SPLIT_FILES.items()}
        if not self.keep_unanswered:
            splits["dev"], splits["test"] = drop_unanswered(splits["dev"]), drop_unanswered(splits["test"])
        return splits
