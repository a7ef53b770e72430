"""Text metrics against hand-computed values, the reference packages, and METEOR 1.5 through Java."""
from __future__ import annotations

import gzip
import math
from pathlib import Path

import pytest

from rnnbench.metrics import coco, registry, text, wordnet

needs_java = pytest.mark.skipif(not coco.java_available(), reason="java not on PATH: coco-caption's PTBTokenizer and METEOR 1.5 need it")


def recs(*answer_lists, passage=None):
    return [{"id": str(i), "answers": list(a), **({"passage": passage} if passage else {})} for i, a in enumerate(answer_lists)]


def test_registered_by_name():
    names = registry()
    for name in ("bleu_1", "bleu_4", "meteor", "rouge_l", "meteor_nltk", "sacrebleu_bleu", "rouge_score_l", "searchqa_em", "searchqa_f1"):
        assert names[name] is text.METRICS[name]


def test_prediction_text_reads_strings_spans_and_text_dicts():
    record = {"passage": "the cat sat on the mat".split(), "answers": ["x"]}
    assert text.prediction_text("a b", record) == "a b"
    assert text.prediction_text({"start": 1, "end": 2}, record) == "cat sat"
    assert text.prediction_text({"start": -1, "end": -1}, record) == ""
    assert text.prediction_text({"text": "y"}, record) == "y"
    with pytest.raises(TypeError):
        text.prediction_text(3, record)


@needs_java
def test_ptb_tokenization_is_coco_captions():
    """Lower-cased PTB tokens, coco's punctuation list dropped (bracket tokens survive, as in coco)."""
    out = coco.ptb_tokenize(["Hello, World!", "It's Mark's (old) house -- really?", "", "the quick brown fox"])
    assert out == ["hello world", "it 's mark 's -lrb- old -rrb- house really", "", "the quick brown fox"]


@needs_java
def test_bleu_by_hand():
    """Corpus BLEU: clipped n-gram counts summed over answers, closest reference length.

    1: "the quick brown fox jumps" vs "the quick brown fox leaps": n-grams 4/5, 3/4, 2/3, 1/2; lengths 5, 5.
    2: "a dog" vs {"a dog barks", "the dog"}: 1-grams 2/2, 2-grams 1/1, no 3- or 4-grams; closest length 2.
    Totals 6/7, 4/5, 2/3, 1/2; hypothesis and reference lengths 7 and 7 (no brevity penalty)."""
    records = recs(["the quick brown fox leaps"], ["a dog barks", "the dog"])
    predictions = ["The quick brown fox jumps.", {"text": "a dog"}]
    assert text.bleu_1(predictions, records) == pytest.approx(6 / 7, abs=1e-6)
    assert text.bleu_4(predictions, records) == pytest.approx((6 / 7 * 4 / 5 * 2 / 3 * 1 / 2) ** 0.25, abs=1e-6)


@needs_java
def test_bleu_brevity_penalty_by_hand():
    """"the cat" vs "the cat sat on the mat": precision 1, BP = exp(1 - 6/2)."""
    assert text.bleu_1(["the cat"], recs(["the cat sat on the mat"])) == pytest.approx(math.exp(1 - 6 / 2), abs=1e-6)


@needs_java
def test_rouge_l_by_hand():
    """LCS("the cat was found under the bed", "the cat was under the bed") = 6; with "a cat hid": 1.
    P = max(6/7, 1/7), R = max(6/6, 1/3); F = (1 + 1.2^2) P R / (R + 1.2^2 P)."""
    p, r = 6 / 7, 1.0
    expected = (1 + 1.44) * p * r / (r + 1.44 * p)
    records = recs(["the cat was under the bed", "a cat hid"], passage="the cat was found under the bed".split())
    assert text.rouge_l([{"start": 0, "end": 6}], records) == pytest.approx(expected, abs=1e-9)
    # Averaged over answers: a second, disjoint answer scores 0.
    two = records + recs(["nothing in common"])
    assert text.rouge_l(["the cat was found under the bed", "zebra"], two) == pytest.approx(expected / 2, abs=1e-9)


def test_rouge_score_l_by_hand_and_against_the_package():
    from rouge_score import rouge_scorer

    records = recs(["the cat was under the bed", "a cat hid"])
    hyp = "The cat was found under the bed."
    assert text.rouge_score_l([hyp], records) == pytest.approx(2 * (6 / 7) * 1 / (6 / 7 + 1))  # F1, best reference
    direct = rouge_scorer.RougeScorer(["rougeL"]).score_multi(records[0]["answers"], hyp)["rougeL"].fmeasure
    assert text.rouge_score_l([hyp], records) == pytest.approx(direct)


def test_sacrebleu_against_the_package_with_uneven_references():
    import sacrebleu

    records = recs(["the quick brown fox leaps"], ["a dog barks", "the dog"])
    hyps = ["the quick brown fox jumps", "a dog"]
    direct = sacrebleu.corpus_bleu(hyps, [["the quick brown fox leaps", "a dog barks"], [None, "the dog"]]).score / 100
    assert text.sacrebleu_bleu(hyps, records) == pytest.approx(direct)
    assert text.sacrebleu_bleu(hyps, records) == pytest.approx((6 / 7 * 4 / 5 * 2 / 3 * 1 / 2) ** 0.25, abs=1e-6)


def test_searchqa_em_and_f1_by_hand():
    """EM over one-word answers, token F1 over longer ones (lower-cased, punctuation deleted)."""
    records = recs(["Budapest"], ["McDonald's"], ["Mars"], ["Jim Thorpe"], ["the Appian Way"])
    predictions = ["budapest", "McDonalds", "Jupiter", "Thorpe", "Appian Way road"]
    # One-word answers: budapest (hit), mcdonalds (hit: the apostrophe is deleted), jupiter vs mars (miss).
    assert text.searchqa_em(predictions, records) == pytest.approx(2 / 3)
    # Thorpe vs jim thorpe: P 1, R 1/2 -> 2/3; "appian way road" vs "the appian way": P 2/3, R 2/3 -> 2/3.
    assert text.searchqa_f1(predictions, records) == pytest.approx(2 / 3)
    assert text.searchqa_em([], []) == 0.0 and text.searchqa_f1(["x"], recs(["one"])) == 0.0


def test_answer_em_and_f1_by_hand():
    """Best answer per example, every example counted: EM 1/2; F1 (1 + 2/3) / 2 ("thorpe" vs "jim thorpe")."""
    records = recs(["Gray Heron", "the Gray Heron"], ["Jim Thorpe", "Thorpe J."])
    assert text.answer_em(["the gray heron!", "Thorpe"], records) == pytest.approx(1 / 2)
    assert text.answer_f1(["the gray heron!", "jim"], records) == pytest.approx((1 + 2 / 3) / 2)


def test_metrics_of_no_examples_are_zero():
    for fn in text.METRICS.values():
        assert fn([], []) == 0.0


@needs_java
@pytest.mark.slow  # starts a JVM
def test_meteor_runs_meteor_1_5_in_java():
    """METEOR 1.5 (one JVM for every call of the process): exact answers score near 1, disjoint ones 0,
    a partial answer in between; the run note names the Java implementation."""
    records = recs(["the cat sat on the mat"], ["a lighthouse keeper"], ["he rows out alone"])
    exact = text.meteor(["The cat sat on the mat.", "a lighthouse keeper", "he rows out alone"], records)
    assert 0.9 < exact <= 1.0
    assert text.meteor(["zebra", "xylophone", "quartz"], records) == 0.0
    partial = text.meteor(["the cat sat", "a keeper", "he rows"], records)
    assert 0.0 < partial < exact
    assert "METEOR 1.5 (Java)" in text.implementations()["meteor"]
    assert coco.meteor_scorer() is coco.meteor_scorer()  # one process, reused


def test_without_java_meteor_falls_back_to_nltk_and_says_so(monkeypatch, tmp_path):
    try:
        wordnet.nltk_wordnet()
    except wordnet.WordNetMissing as exc:
        pytest.skip(f"no WordNet for nltk's METEOR here: {exc}")
    monkeypatch.setenv("RNNBENCH_NO_JAVA", "1")
    monkeypatch.setattr(text, "_warned", set())
    records = recs(["the cat sat on the mat"], ["a lighthouse keeper"])
    with pytest.warns(RuntimeWarning, match="Java is not available"):
        score = text.meteor(["The cat sat on the mat.", "a keeper"], records)
    assert 0.0 < score < 1.0
    assert text.implementations()["meteor"].startswith("nltk METEOR")
    assert "Python fallback" in text.implementations()["meteor"]
    assert text.meteor_nltk(["The cat sat on the mat.", "a keeper"], records) == pytest.approx(score)
    # The fallback tokens: lower-cased Treebank tokens with coco's punctuation removed.
    with pytest.warns(RuntimeWarning, match="metric bleu_1: Java is not available"):  # each metric says so once
        assert text.bleu_1(["The cat sat on the mat."], records[:1]) == pytest.approx(1.0, abs=1e-6)
    assert "nltk Treebank" in text.implementations()["bleu_1"]


def test_lexnames_is_wordnet_3_table():
    lines = wordnet.lexnames_text(Path("/nonexistent")).splitlines()
    assert len(lines) == 45
    assert lines[0] == "00\tadj.all\t3" and lines[3] == "03\tnoun.Tops\t1"
    assert lines[29] == "29\tverb.body\t2" and lines[44] == "44\tadj.ppl\t3"


def test_lexnames_from_the_man_page_agrees(tmp_path):
    page = tmp_path / "lexnames.5WN.gz"
    rows = "".join(f"{i:02d}\t{name}\tdescription\n" for i, name in enumerate(wordnet.LEXICOGRAPHER_FILES))
    with gzip.open(page, "wt") as f:
        f.write(".TS\n" + rows + ".TE\n")
    assert wordnet.lexnames_text(page) == wordnet.lexnames_text(Path("/nonexistent"))


def test_corpus_folder_from_debian_layout(tmp_path):
    source = tmp_path / "wordnet"
    source.mkdir()
    for name in wordnet.REQUIRED:
        (source / name).write_text(f"{name}\n")
    target = wordnet.build_corpus(tmp_path / "nltk_data" / "corpora" / "wordnet", source)
    assert (target / "data.noun").read_text() == "data.noun\n" and not (target / "data.noun").is_symlink()
    assert (target / "lexnames").read_text() == wordnet.lexnames_text()
    (source / "index.adv").unlink()
    with pytest.raises(wordnet.WordNetMissing, match="index.adv.*wordnet-base"):
        wordnet.build_corpus(tmp_path / "again", source)
