"""Training spans for free-form answers: the passage span with the best ROUGE-L.

NarrativeQA's answers are written by people, not marked in the text; the DCU
paper trains its span model on "the RougeL score to find the best approximate
answer relative to the human written answer". ``best_rouge_span`` finds, over
every span of at most ``max_length`` words, the one maximising coco-caption's
ROUGE-L against the answers (the metric the task is scored on):

    P = max_k LCS(span, a_k) / |span|,  R = max_k LCS(span, a_k) / |a_k|,
    F = (1 + beta^2) P R / (R + beta^2 P),  beta = 1.2

on lower-cased tokens with coco-caption's punctuation tokens removed (what the
metric compares), so spans start and end on words. Ties go to the shorter span,
then the earlier one. A passage sharing no word with any answer has no span:
(-1, -1, 0.0).

Efficiently: only starts on a word that occurs in some answer can win (dropping
a first word that matches nothing keeps the LCS and shortens the span, which
raises F), and for all those starts at once (numpy vectors) the LCS DP row of
passage[i : i + k] against the answer is extended one token per step k: the
search costs O(max_length * |answer|) vector operations over the candidate starts.
"""
from __future__ import annotations

import numpy as np

# coco-caption's punctuation tokens (pycocoevalcap's PTBTokenizer list), lower-cased as compared there.
PUNCTUATION_TOKENS = frozenset(["''", "'", "``", "`", "-lrb-", "-rrb-", "-lcb-", "-rcb-", ".", "?", "!", ",", ":", "-", "--", "...", ";"])
BETA = 1.2


def words(tokens: list[str]) -> tuple[list[str], list[int]]:
    """Lower-cased tokens without punctuation, and the index of each in ``tokens``."""
    kept = [(t.lower(), i) for i, t in enumerate(tokens) if t.lower() not in PUNCTUATION_TOKENS]
    return [w for w, _ in kept], [i for _, i in kept]


def lcs_table(passage: np.ndarray, answer: np.ndarray, max_length: int, starts: np.ndarray | None = None) -> np.ndarray:
    """[max_length, len(starts)]: entry [k, s] = LCS(passage[starts[s] : starts[s] + k + 1], answer).

    Token ids; positions past the end never match (-1). ``starts`` defaults to every position."""
    m = len(answer)
    starts = np.arange(len(passage)) if starts is None else starts
    n = len(starts)
    padded = np.concatenate([passage, np.full(max_length, -1, dtype=passage.dtype)])
    row = np.zeros((n, m + 1), dtype=np.int32)  # LCS(passage[i : i + k], answer[:j]) for the current k
    out = np.zeros((max_length, n), dtype=np.int32)
    for k in range(max_length):
        token = padded[starts + k]  # the token each start adds at this step
        new = np.zeros_like(row)
        for j in range(1, m + 1):
            match = token == answer[j - 1]
            new[:, j] = np.where(match, row[:, j - 1] + 1, np.maximum(row[:, j], new[:, j - 1]))
        row = new
        out[k] = row[:, m]
    return out


def best_rouge_span(passage: list[str], answers: list[list[str]], max_length: int, beta: float = BETA) -> tuple[int, int, float]:
    """(start, end, ROUGE-L) of the best span of ``passage`` (token indices, end inclusive)."""
    p_words, index = words(passage)
    a_words = [w for w in (words(a)[0] for a in answers) if w]
    if not p_words or not a_words:
        return -1, -1, 0.0
    vocab: dict[str, int] = {}
    ids = lambda ws: np.array([vocab.setdefault(w, len(vocab)) for w in ws], dtype=np.int64)  # noqa: E731
    p_ids = ids(p_words)
    a_ids = [ids(a) for a in a_words]
    starts = np.nonzero(np.isin(p_ids, np.concatenate(a_ids)))[0]
    if not len(starts):
        return -1, -1, 0.0
    n, L = len(starts), min(max_length, len(p_words))
    lengths = np.arange(1, L + 1, dtype=np.float64)[:, None]  # span length of row k
    precision = np.zeros((L, n))
    recall = np.zeros((L, n))
    for a in a_ids:
        lcs = lcs_table(p_ids, a, L, starts).astype(np.float64)
        precision = np.maximum(precision, lcs / lengths)
        recall = np.maximum(recall, lcs / len(a))
    denom = recall + beta**2 * precision
    f = np.where(denom > 0, (1 + beta**2) * precision * recall / np.where(denom > 0, denom, 1.0), 0.0)
    valid = (starts[None, :] + np.arange(L)[:, None]) < len(p_words)  # the span must end inside the passage
    f = np.where(valid, f, -1.0)
    k, s = np.unravel_index(int(np.argmax(f)), f.shape)  # row-major: shortest length first, then earliest start
    best = float(f[k, s])
    if best <= 0.0:
        return -1, -1, 0.0
    i = int(starts[s])
    return index[i], index[i + k], best


def first_occurrence(passage: list[str], answer: list[str]) -> tuple[int, int]:
    """(start, end) of the first case-insensitive occurrence of ``answer`` in ``passage``, else (-1, -1)."""
    if not answer:
        return -1, -1
    p = [t.lower() for t in passage]
    a = [t.lower() for t in answer]
    m = len(a)
    first = a[0]
    for i, t in enumerate(p[: len(p) - m + 1]):
        if t == first and p[i : i + m] == a:
            return i, i + m - 1
    return -1, -1
