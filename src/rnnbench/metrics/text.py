"""Text-answer metrics: BLEU, METEOR, ROUGE-L (NarrativeQA, MS MARCO) and SearchQA's EM / F1.

Every metric is ``fn(predictions, records) -> float`` in [0, 1]. A prediction is
an answer string, or a span ``{"start": s, "end": e}`` (inclusive token indices
into ``record["passage"]``, what the span head decodes), or a dict holding a
``"text"``; ``prediction_text`` turns any of them into the answer string. The
references are ``record["answers"]`` (a list of strings).

Names and implementations:
- ``bleu_1``, ``bleu_4``, ``meteor``, ``rouge_l``: coco-caption (PyPI
  ``pycocoevalcap``), as the NarrativeQA and MS MARCO papers computed them:
  PTB-tokenised, lower-cased, punctuation dropped (``metrics.coco``); corpus
  BLEU-n with the closest reference length; METEOR 1.5 (Java) over the corpus;
  ROUGE-L with beta = 1.2 (precision and recall each maximised over the
  references), averaged over answers.
  Without Java these fall back, with a warning, to Python: nltk's Treebank
  tokenizer (lower-cased, same punctuation list) for the tokens, and nltk's
  METEOR (a re-implementation: sentence-level, averaged; WordNet synonyms, no
  paraphrase table; ``metrics.wordnet`` builds WordNet from Debian's files), so
  its values are not comparable with METEOR 1.5's. ``implementations()``
  records which one produced each metric in this process (a run note).
- ``meteor_nltk``: always nltk's METEOR (the fallback, by name).
- ``sacrebleu_bleu``: corpus BLEU-4 of sacrebleu (its own 13a tokenisation,
  case-sensitive, its default exponential smoothing), on the raw strings.
- ``rouge_score_l``: Google's ``rouge-score`` ROUGE-L F1 (beta = 1, its own
  tokeniser, no stemming), best reference per answer, averaged.
- ``searchqa_em`` / ``searchqa_f1``: Dunn et al. (2017) score single-word
  answers by accuracy (exact match) and longer answers by F1 (the DCU and FHE
  papers: "unigram exact match and n-gram F1", "F1 for multi-word answers and EM
  for single word answers"). So ``searchqa_em`` is the exact-match rate over
  the examples whose gold answer is one word, ``searchqa_f1`` the mean token
  F1 over those whose answer has two or more words (Dunn et al.'s own text was
  not available to us; this follows those two papers' descriptions of it and
  the paper's table headers "Unigram Acc" / "N-gram F1"). Answers and predictions are
  normalised SQuAD-style minus article removal (ours: Jeopardy! answers such as
  "the Appian Way" keep their article, and removing it would move answers
  between the two subsets): lower-cased, punctuation characters deleted,
  split on white space.
- ``answer_em`` / ``answer_f1``: SQuAD-style exact match and token F1 (same
  normalisation), best over an example's answers, over every example (the
  synthetic span task's accuracy).
"""
from __future__ import annotations

import re
import string
import sys
import warnings
from collections import Counter

from rnnbench.metrics import coco

_IMPLEMENTATIONS: dict[str, str] = {}
_warned: set[str] = set()

COCO_TOKENS = "coco-caption PTBTokenizer (Stanford CoreNLP 3.4.1, Java)"
PY_TOKENS = "nltk Treebank tokenizer (Python fallback for the Java PTBTokenizer)"


def implementations() -> dict[str, str]:
    """Which implementation produced each text metric computed in this process (for run notes)."""
    return dict(_IMPLEMENTATIONS)


def _note(name: str, what: str, fallback: bool = False) -> None:
    _IMPLEMENTATIONS[name] = what
    if fallback and name not in _warned:
        _warned.add(name)
        message = f"metric {name}: Java is not available, so it is computed by {what}; not comparable with the papers' numbers"
        warnings.warn(message, RuntimeWarning, stacklevel=3)
        print(f"warning: {message}", file=sys.stderr)


def prediction_text(prediction, record: dict) -> str:
    """The answer string of a prediction: a string, ``{"text": ...}`` or a span ``{"start", "end"}``."""
    if isinstance(prediction, str):
        return prediction
    if isinstance(prediction, dict):
        if "text" in prediction:
            return str(prediction["text"])
        start, end = int(prediction["start"]), int(prediction["end"])
        if start < 0 or end < start:
            return ""
        return " ".join(record["passage"][start : end + 1])
    raise TypeError(f"cannot read an answer from a prediction of type {type(prediction).__name__}")


def _answers(record: dict) -> list[str]:
    answers = [a for a in record["answers"] if isinstance(a, str)]
    if not answers:
        raise ValueError(f"record {record.get('id')!r} has no reference answers")
    return answers


def _py_tokenize(texts: list[str]) -> list[str]:
    from rnnbench.data.tokenize import treebank_tokenize

    return [" ".join(t for t in treebank_tokenize(text.lower().replace("\n", " ")) if t not in coco.PUNCTUATIONS) for text in texts]


def _tokenized(predictions: list, records: list[dict]) -> tuple[list[str], list[list[str]], str]:
    """Tokenised hypotheses and references, as coco-caption feeds its scorers (two batches)."""
    hyps = [prediction_text(p, r) for p, r in zip(predictions, records)]
    refs = [_answers(r) for r in records]
    flat = [a for answers in refs for a in answers]
    if coco.java_available():
        tok_refs, tok_hyps, how = coco.ptb_tokenize(flat), coco.ptb_tokenize(hyps), COCO_TOKENS
    else:
        tok_refs, tok_hyps, how = _py_tokenize(flat), _py_tokenize(hyps), PY_TOKENS
    grouped, i = [], 0
    for answers in refs:
        grouped.append(tok_refs[i : i + len(answers)])
        i += len(answers)
    return tok_hyps, grouped, how


def _coco_bleu(predictions: list, records: list[dict]) -> tuple[list[float], str]:
    from pycocoevalcap.bleu.bleu import Bleu

    hyps, refs, how = _tokenized(predictions, records)
    gts = {i: r for i, r in enumerate(refs)}
    res = {i: [h] for i, h in enumerate(hyps)}
    scores, _ = Bleu(4).compute_score(gts, res, verbose=0)
    return [float(s) for s in scores], how


def bleu_1(predictions: list, records: list[dict]) -> float:
    if not records:
        return 0.0
    scores, how = _coco_bleu(predictions, records)
    _note("bleu_1", f"coco-caption BLEU-1 over {how}", fallback=how == PY_TOKENS)
    return scores[0]


def bleu_4(predictions: list, records: list[dict]) -> float:
    if not records:
        return 0.0
    scores, how = _coco_bleu(predictions, records)
    _note("bleu_4", f"coco-caption BLEU-4 over {how}", fallback=how == PY_TOKENS)
    return scores[3]


def rouge_l(predictions: list, records: list[dict]) -> float:
    if not records:
        return 0.0
    from pycocoevalcap.rouge.rouge import Rouge

    hyps, refs, how = _tokenized(predictions, records)
    score, _ = Rouge().compute_score({i: r for i, r in enumerate(refs)}, {i: [h] for i, h in enumerate(hyps)})
    _note("rouge_l", f"coco-caption ROUGE-L (beta 1.2) over {how}", fallback=how == PY_TOKENS)
    return float(score)


def _nltk_meteor(hyps: list[str], refs: list[list[str]]) -> tuple[float, str]:
    from nltk.translate.meteor_score import meteor_score

    from rnnbench.metrics.wordnet import nltk_wordnet

    wordnet, source = nltk_wordnet()
    scores = [meteor_score([r.split() for r in rs], h.split(), wordnet=wordnet) for h, rs in zip(hyps, refs)]
    return sum(scores) / len(scores), f"nltk METEOR (sentence mean; WordNet from {source})"


def meteor(predictions: list, records: list[dict]) -> float:
    if not records:
        return 0.0
    hyps, refs, how = _tokenized(predictions, records)
    if coco.java_available():
        _note("meteor", f"coco-caption METEOR 1.5 (Java) over {how}")
        return coco.meteor_score(refs, hyps)
    score, what = _nltk_meteor(hyps, refs)
    _note("meteor", f"{what} over {how}", fallback=True)
    return score


def meteor_nltk(predictions: list, records: list[dict]) -> float:
    if not records:
        return 0.0
    hyps, refs, how = _tokenized(predictions, records)
    score, what = _nltk_meteor(hyps, refs)
    _note("meteor_nltk", f"{what} over {how}")
    return score


def sacrebleu_bleu(predictions: list, records: list[dict]) -> float:
    if not records:
        return 0.0
    import sacrebleu

    hyps = [prediction_text(p, r) for p, r in zip(predictions, records)]
    refs = [_answers(r) for r in records]
    width = max(len(r) for r in refs)
    # sacrebleu takes reference streams; None pads examples with fewer references.
    streams = [[r[k] if k < len(r) else None for r in refs] for k in range(width)]
    _note("sacrebleu_bleu", f"sacrebleu {sacrebleu.__version__} corpus BLEU-4 (13a tokenisation)")
    return float(sacrebleu.corpus_bleu(hyps, streams).score) / 100.0


def rouge_score_l(predictions: list, records: list[dict]) -> float:
    if not records:
        return 0.0
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"])
    total = 0.0
    for p, r in zip(predictions, records):
        total += scorer.score_multi(_answers(r), prediction_text(p, r))["rougeL"].fmeasure
    _note("rouge_score_l", "Google rouge-score ROUGE-L F1 (beta 1), best reference")
    return total / len(records)


_PUNCT = re.compile(f"[{re.escape(string.punctuation)}]")


def normalize_answer(text: str) -> list[str]:
    """SearchQA answer normalisation: lower-case, punctuation characters removed, white-space tokens."""
    return _PUNCT.sub("", text.lower()).split()


def token_f1(prediction: list[str], gold: list[str]) -> float:
    common = sum((Counter(prediction) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(prediction), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def _searchqa_pairs(predictions: list, records: list[dict], unigram: bool):
    for p, r in zip(predictions, records):
        golds = [normalize_answer(a) for a in _answers(r)]
        gold = golds[0]  # SearchQA has one answer per question
        if (len(gold) == 1) == unigram and gold:
            yield normalize_answer(prediction_text(p, r)), gold


def searchqa_em(predictions: list, records: list[dict]) -> float:
    """Exact match over the examples whose answer is a single word (0.0 when there are none)."""
    pairs = list(_searchqa_pairs(predictions, records, unigram=True))
    return sum(p == g for p, g in pairs) / len(pairs) if pairs else 0.0


def searchqa_f1(predictions: list, records: list[dict]) -> float:
    """Mean token F1 over the examples whose answer has two or more words (0.0 when there are none)."""
    pairs = list(_searchqa_pairs(predictions, records, unigram=False))
    return sum(token_f1(p, g) for p, g in pairs) / len(pairs) if pairs else 0.0


def answer_em(predictions: list, records: list[dict]) -> float:
    """Exact match with any answer (normalised), over all examples."""
    if not records:
        return 0.0
    hits = [any(normalize_answer(prediction_text(p, r)) == normalize_answer(a) for a in _answers(r)) for p, r in zip(predictions, records)]
    return sum(hits) / len(records)


def answer_f1(predictions: list, records: list[dict]) -> float:
    """Token F1 with the best answer (normalised), averaged over all examples."""
    if not records:
        return 0.0
    scores = [max(token_f1(normalize_answer(prediction_text(p, r)), normalize_answer(a)) for a in _answers(r)) for p, r in zip(predictions, records)]
    return sum(scores) / len(records)


METRICS = {
    "bleu_1": bleu_1,
    "bleu_4": bleu_4,
    "meteor": meteor,
    "rouge_l": rouge_l,
    "meteor_nltk": meteor_nltk,
    "sacrebleu_bleu": sacrebleu_bleu,
    "rouge_score_l": rouge_score_l,
    "searchqa_em": searchqa_em,
    "searchqa_f1": searchqa_f1,
    "answer_em": answer_em,
    "answer_f1": answer_f1,
}
