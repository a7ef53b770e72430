"""NarrativeQAReader on files in deepmind/narrativeqa's original layout, and the ROUGE-L span search."""
from __future__ import annotations

import itertools
import random
import shutil
from pathlib import Path

import pytest

from rnnbench.data.narrativeqa import NarrativeQAReader, QAPS, SUMMARIES
from rnnbench.data.span_search import best_rouge_span, words
from rnnbench.errors import ConfigError, DataFormatError, DatasetMissingError

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "data"
DOC = "0a1f3c9e5b7d2468ace013579bdf2468ace01357"


def copy_fixture(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE / "narrativeqa", tmp_path / "narrativeqa")
    return tmp_path


def span_text(record: dict) -> str:
    return " ".join(record["passage"][record["span_start"] : record["span_end"] + 1])


def test_fixture_splits_records_and_targets():
    splits = NarrativeQAReader().load(FIXTURE)
    # 9 train questions, one of them ("What colour is the sky?") shares no word with its summary: dropped.
    assert [len(splits[s]) for s in ("train", "dev", "test")] == [8, 3, 3]
    first = splits["train"][0]
    assert first["id"] == f"{DOC}:0"
    assert first["question"] == "Who is Mara Quill ?".split()
    assert first["answers"] == ["A lighthouse keeper.", "She keeps the lighthouse on Vell."]  # stripped raw strings
    assert first["passage"][:6] == "Mara Quill is a lighthouse keeper".split()
    # The summary's quoted newlines: the tokenised column is one token list.
    assert len(first["passage"]) == 57 and not any("\n" in t for t in first["passage"])
    assert span_text(first) == "a lighthouse keeper" and first["span_rouge"] == pytest.approx(1.0)
    by_question = {" ".join(r["question"]): r for split in splits.values() for r in split}
    assert span_text(by_question["What is the name of the wrecked ship ?"]) == "Gray Heron"
    assert span_text(by_question["Who steals the bird ?"]) == "the mayor s son"  # the dataset's "mayor s"
    # Best ROUGE-L against "She rows out alone" / "By rowing out to the ship alone": "rows out alone"
    # (P 1, R 3/4 against the first) beats the longer spans.
    rows = by_question["How does Mara save the crew ?"]
    assert span_text(rows) == "rows out alone"
    assert rows["span_rouge"] == pytest.approx(2.44 * 1 * 0.75 / (0.75 + 1.44 * 1))
    assert {r["id"].split(":")[1] for r in splits["train"] if r["id"].startswith(DOC)} == {"0", "1", "2", "3"}


def test_unmatched_questions_stay_in_dev_and_test(tmp_path):
    root = copy_fixture(tmp_path)
    qaps = root / QAPS
    qaps.write_text(qaps.read_text().replace(",train,What colour is the sky?", ",valid,What colour is the sky?"))
    splits = NarrativeQAReader().load(root)
    sky = [r for r in splits["dev"] if r["question"][:3] == ["What", "colour", "is"]]
    assert len(sky) == 1 and (sky[0]["span_start"], sky[0]["span_end"], sky[0]["span_rouge"]) == (-1, -1, 0.0)
    kept = NarrativeQAReader(drop_unmatched_train=False).load(FIXTURE)
    assert len(kept["train"]) == 9


def test_generative_setting_and_passage_cut():
    splits = NarrativeQAReader(setting="generative", max_passage_tokens=10).load(FIXTURE)
    r = splits["train"][2]
    assert r["answer_tokens"] == "Mara s sister Ada .".split() and r["answers"] == ["Mara's sister Ada.", "Ada"]
    assert "span_start" not in r and len(r["passage"]) == 10
    assert len(splits["train"]) == 9  # nothing is dropped without span targets
    cut = NarrativeQAReader(max_passage_tokens=10).load(FIXTURE)
    assert all(r["span_end"] < 10 for split in cut.values() for r in split)


def test_bad_options_and_missing_files(tmp_path):
    with pytest.raises(ConfigError, match="setting"):
        NarrativeQAReader(setting="abstractive")
    (tmp_path / "narrativeqa").mkdir()
    (tmp_path / "narrativeqa" / "documents.csv").write_text("document_id,set\n")
    with pytest.raises(DatasetMissingError, match="qaps.csv.*summaries.csv.*deepmind/narrativeqa"):
        NarrativeQAReader().load(tmp_path)


def test_format_errors_name_file_and_line(tmp_path):
    root = copy_fixture(tmp_path)
    qaps = root / QAPS
    lines = qaps.read_text().splitlines(keepends=True)
    qaps.write_text("".join(lines[:3] + [lines[3].replace(",train,", ",training,")] + lines[4:]))
    with pytest.raises(DataFormatError, match=r"qaps.csv:4: set is 'training'"):
        NarrativeQAReader().load(root)
    qaps.write_text("".join(lines[:2] + ["ffff,train,Q?,A,B,Q ?,A,B\n"] + lines[3:]))
    with pytest.raises(DataFormatError, match=r"qaps.csv:3: document ffff has no summary"):
        NarrativeQAReader().load(root)
    qaps.write_text("".join(lines[:5] + ["ffff,train,Q?\n"] + lines[6:]))
    with pytest.raises(DataFormatError, match=r"qaps.csv:6: expected 8 fields, got 3"):
        NarrativeQAReader().load(root)
    (root / SUMMARIES).write_text("document_id,set,summary\n")
    with pytest.raises(DataFormatError, match="summaries.csv:1: header lacks column"):
        NarrativeQAReader().load(root)


def _coco_rouge(candidate: list[str], refs: list[list[str]]) -> float:
    from pycocoevalcap.rouge.rouge import Rouge

    return Rouge().calc_score([" ".join(candidate)], [" ".join(r) for r in refs])


def _brute_force(passage: list[str], answers: list[list[str]], max_length: int) -> float:
    p = words(passage)[0]
    refs = [r for r in (words(a)[0] for a in answers) if r]
    best = 0.0
    if not refs:
        return best
    for i, k in itertools.product(range(len(p)), range(1, max_length + 1)):
        if i + k <= len(p):
            best = max(best, _coco_rouge(p[i : i + k], refs))
    return best


def test_span_search_finds_the_best_coco_rouge_span():
    rng = random.Random(3)
    vocab = "a b c d e f g , .".split()
    for _ in range(60):
        passage = [rng.choice(vocab) for _ in range(rng.randint(1, 14))]
        answers = [[rng.choice(vocab) for _ in range(rng.randint(1, 5))] for _ in range(rng.randint(1, 2))]
        L = rng.randint(1, 6)
        start, end, score = best_rouge_span(passage, answers, L)
        expected = _brute_force(passage, answers, L)
        assert score == pytest.approx(expected, abs=1e-12)
        if expected == 0.0:
            assert (start, end) == (-1, -1)
            continue
        span_words = words(passage[start : end + 1])[0]
        assert 1 <= len(span_words) <= L
        assert passage[start] not in (",", ".") and passage[end] not in (",", ".")  # spans start and end on words
        assert _coco_rouge(span_words, [words(a)[0] for a in answers if words(a)[0]]) == pytest.approx(score)


def test_span_search_prefers_short_then_early():
    # "x" scores the same at positions 1 and 3; the earliest wins. "x y" vs answer "x": the shorter "x" wins.
    assert best_rouge_span("a x b x".split(), [["x"]], 4)[:2] == (1, 1)
    assert best_rouge_span("x y".split(), [["x"]], 2)[:2] == (0, 0)
    assert best_rouge_span("Gray Heron !".split(), [["gray", "heron"]], 5) == (0, 1, pytest.approx(1.0))


def test_real_data(real_data):
    """The development data holds documents.csv only (MANIFEST section 8): a clear error naming the
    missing files. Where the question files are present, every target lies inside its passage."""
    reader = NarrativeQAReader(max_passage_tokens=1100)
    if not all(p.exists() for p in reader.input_paths(real_data)):
        with pytest.raises(DatasetMissingError, match="qaps.csv"):
            reader.load(real_data)
        return
    splits = reader.load(real_data)
    assert all(splits[s] for s in ("train", "dev", "test"))
    for record in itertools.chain(*splits.values()):
        assert -1 <= record["span_start"] <= record["span_end"] < len(record["passage"]) <= 1100
