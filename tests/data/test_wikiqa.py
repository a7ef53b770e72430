"""WikiQAReader on the official tsv layout: fixtures with the real quirks, and the real data."""
from __future__ import annotations

from pathlib import Path

import pytest

from rnnbench.data.wikiqa import HEADER, WikiQAReader, drop_unanswered
from rnnbench.errors import DataFormatError, DatasetMissingError

H = "\t".join(HEADER)


def row(qid, question, sid, sentence, label, doc="D1", title="Title"):
    return "\t".join([qid, question, doc, title, sid, sentence, str(label)])


# Quirks of the real files: unbalanced double quotes in sentences (a CSV reader with quoting
# would swallow the following lines), one SentenceID shared by two questions (same document),
# a question with no correct candidate, a question whose candidates are all correct.
TRAIN = "\n".join([
    H,
    row("Q1", "how are glacier caves formed?", "D1-0", 'A partly submerged glacier cave on Perito Moreno Glacier .', 0),
    row("Q1", "how are glacier caves formed?", "D1-1", 'The ice facade is approximately 60 m high', 0),
    row("Q1", "how are glacier caves formed?", "D1-2", 'A glacier cave is a cave formed within the ice of a glacier .', 1),
    row("Q2", 'what is a "glacier cave", exactly?', "D1-0", 'He said "caves are cold .', 0),
    row("Q2", 'what is a "glacier cave", exactly?', "D1-1", 'Ice caves are common .', 0),
    row("Q3", "who wrote hamlet?", "D2-0", "Hamlet is a tragedy written by William Shakespeare .", 1, doc="D2"),
]) + "\n"
DEV = "\n".join([
    H,
    row("Q4", "when was the eiffel tower built?", "D3-0", "The tower was built in 1889 .", 1, doc="D3"),
    row("Q4", "when was the eiffel tower built?", "D3-1", "It is in Paris .", 0, doc="D3"),
    row("Q5", "what is love?", "D4-0", 'Love is a "song .', 0, doc="D4"),
]) + "\n"
TEST = "\n".join([
    H,
    row("Q6", "who is the president?", "D5-0", "The president is elected .", 0, doc="D5"),
    row("Q6", "who is the president?", "D5-1", "The president lives in a house .", 1, doc="D5"),
]) + "\n"


def write_wikiqa(root: Path, train: str = TRAIN, dev: str = DEV, test: str = TEST, newline: str = "\n") -> Path:
    folder = root / "wikiqa"
    folder.mkdir(parents=True, exist_ok=True)
    for split, text in (("train", train), ("dev", dev), ("test", test)):
        (folder / f"WikiQA-{split}.tsv").write_bytes(text.replace("\n", newline).encode("utf-8"))
    return root


def test_records_quotes_and_shared_sentence_ids(tmp_path):
    splits = WikiQAReader().load(write_wikiqa(tmp_path))
    train = splits["train"]
    assert len(train) == 6  # every training pair, also those of Q2 (no correct candidate)
    assert train[2] == {
        "id": "Q1:D1-2", "qid": "Q1",
        "question": ["how", "are", "glacier", "caves", "formed", "?"],
        "answer": "A glacier cave is a cave formed within the ice of a glacier .".split(),
        "label": 1,
    }
    # Quoting disabled: the quotes are text (Treebank-tokenised), and no line was merged into another.
    assert train[3]["id"] == "Q2:D1-0" and train[3]["question"] == ["what", "is", "a", "``", "glacier", "cave", "''", ",", "exactly", "?"]
    assert train[3]["answer"] == ["He", "said", "``", "caves", "are", "cold", "."]
    assert len({r["id"] for r in train}) == len(train)  # D1-0 serves Q1 and Q2
    assert [r["label"] for r in train] == [0, 0, 1, 0, 0, 1]


def test_dev_and_test_drop_questions_without_a_correct_candidate(tmp_path):
    root = write_wikiqa(tmp_path)
    splits = WikiQAReader().load(root)
    assert [r["id"] for r in splits["dev"]] == ["Q4:D3-0", "Q4:D3-1"]  # Q5 has no correct candidate
    assert [r["id"] for r in splits["test"]] == ["Q6:D5-0", "Q6:D5-1"]
    kept = WikiQAReader(keep_unanswered=True).load(root)
    assert [r["qid"] for r in kept["dev"]] == ["Q4", "Q4", "Q5"]
    assert kept["train"] == splits["train"]


def test_crlf_copies_read_the_same(tmp_path):
    """Some mirrors ship the tsv files with CRLF line endings."""
    lf = WikiQAReader().load(write_wikiqa(tmp_path / "lf"))
    crlf = WikiQAReader().load(write_wikiqa(tmp_path / "crlf", newline="\r\n"))
    assert crlf == lf


@pytest.mark.parametrize(
    "text, line, problem",
    [
        ("QuestionID\tQuestion\n", 1, "header"),
        (H + "\n" + row("Q1", "q?", "D1-0", "s .", 0) + "\nQ1\tq?\tD1\tT\tD1-1\ts .\n", 3, "7 tab-separated fields, found 6"),
        (H + "\n" + row("Q1", "q?", "D1-0", "s .", 2) + "\n", 2, "label must be 0 or 1"),
        (H + "\n" + row("Q1", "q?", "D1-0", "s .", 1) + "\n" + row("Q1", "q?", "D1-1", "  ", 0) + "\n", 3, "empty question or sentence"),
        (H + "\n" + row("", "q?", "D1-0", "s .", 1) + "\n", 2, "empty QuestionID"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path, text, line, problem):
    write_wikiqa(tmp_path, dev=text)
    with pytest.raises(DataFormatError) as err:
        WikiQAReader().load(tmp_path)
    assert err.value.path.endswith("WikiQA-dev.tsv") and err.value.line == line
    assert problem in err.value.problem


def test_missing_files_are_named(tmp_path):
    with pytest.raises(DatasetMissingError) as err:
        WikiQAReader().load(tmp_path)
    assert "wikiqa/WikiQA-train.tsv" in str(err.value) and "WikiQA" in str(err.value)


@pytest.mark.slow
def test_real_data_counts(real_data):
    """MANIFEST: train 20,360 pairs / 2,118 questions (1,040 correct); with at least one correct
    candidate train 873 / dev 126 / test 243 questions; all pairs: dev 2,733 / 296, test 6,165 / 633.
    (One read with keep_unanswered=True: tokenising 29k pairs takes a while; the default's filter
    is ``drop_unanswered``, tested on the fixture above.)"""
    everything = WikiQAReader(keep_unanswered=True).load(real_data)
    train = everything["train"]
    assert (len(train), len({r["qid"] for r in train}), sum(r["label"] for r in train)) == (20360, 2118, 1040)
    assert len({r["qid"] for r in train if r["label"]}) == 873
    assert [(len(everything[s]), len({r["qid"] for r in everything[s]})) for s in ("dev", "test")] == [(2733, 296), (6165, 633)]
    answered = {s: drop_unanswered(everything[s]) for s in ("dev", "test")}
    assert [len({r["qid"] for r in answered[s]}) for s in ("dev", "test")] == [126, 243]
    assert [len(answered[s]) for s in ("dev", "test")] == [1130, 2351]
    for split in everything.values():
        assert len({r["id"] for r in split}) == len(split)
        assert all(r["question"] and r["answer"] for r in split)
