"""coco-caption's Java pieces, as the PyPI package ``pycocoevalcap`` ships them.

The NarrativeQA and MS MARCO papers scored answers with the coco-caption code:
every hypothesis and reference is first tokenised by Stanford CoreNLP 3.4.1's
PTBTokenizer (lower-cased, punctuation tokens dropped), then BLEU, METEOR 1.5
and ROUGE-L read the tokens. Both PTBTokenizer and METEOR run in Java.

- ``ptb_tokenize(texts)``: one Java call for all texts, exactly as coco's
  ``PTBTokenizer.tokenize`` runs it (``-preserveLines -lowerCase``, one text a
  line, newlines inside a text become spaces, the same punctuation list
  removed). The tokenizer is context sensitive (whether a line-final period is
  split off depends on the next line), so, like coco, we tokenise references and
  hypotheses as two whole batches, never string by string. Ours adds
  ``-encoding UTF-8`` (coco relies on the platform charset; identical on a UTF-8
  locale) and writes its temporary file to the system temp folder instead of
  the package folder (which may be read-only). Results are memoised on the
  whole batch, so the four text metrics of one evaluation, and the references
  of a dev set scored every epoch, tokenise once.
- ``meteor_scorer()``: pycocoevalcap's ``Meteor`` (METEOR 1.5, ``-l en -norm``),
  started once per process and kept: the JVM loads its paraphrase table for
  about 20 s on a 2-core CPU, which per call would dominate every evaluation.

``java_available()`` says whether a working ``java`` is on PATH;
``RNNBENCH_NO_JAVA=1`` makes it say no (to use or test the Python fallbacks).
"""
from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
import threading
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path

# coco-caption's list (pycocoevalcap/tokenizer/ptbtokenizer.py); compared after lower-casing,
# so "-LRB-" never matches the tokenizer's "-lrb-": coco keeps bracket tokens, and so do we.
PUNCTUATIONS = frozenset(["''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-", ".", "?", "!", ",", ":", "-", "--", "...", ";"])


class JavaMissing(RuntimeError):
    pass


@lru_cache(maxsize=1)
def _java_works() -> bool:
    java = shutil.which("java")
    if not java:
        return False
    try:
        return subprocess.run([java, "-version"], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def java_available() -> bool:
    return os.environ.get("RNNBENCH_NO_JAVA", "") not in ("1", "true", "yes") and _java_works()


def _package_dir() -> Path:
    import pycocoevalcap

    return Path(list(pycocoevalcap.__path__)[0])


def ptb_jar() -> Path:
    return _package_dir() / "tokenizer" / "stanford-corenlp-3.4.1.jar"


_TOKENIZED: OrderedDict[tuple[str, ...], list[str]] = OrderedDict()
_TOKENIZED_KEEP = 8  # batches memoised (a dev set's references and the last few prediction batches)
_lock = threading.Lock()


def strip_punctuation(line: str) -> str:
    return " ".join(w for w in line.rstrip().split(" ") if w not in PUNCTUATIONS)


def ptb_tokenize(texts: list[str]) -> list[str]:
    """coco-caption's tokenisation of ``texts`` (one Java call): space-joined lower-cased tokens."""
    key = tuple(texts)
    with _lock:
        if key in _TOKENIZED:
            _TOKENIZED.move_to_end(key)
            return list(_TOKENIZED[key])
    if not java_available():
        raise JavaMissing("java not found on PATH (or RNNBENCH_NO_JAVA=1): the PTB tokenizer runs in Java")
    if not texts:
        return []
    text = "\n".join(t.replace("\n", " ") for t in texts)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        cmd = ["java", "-cp", str(ptb_jar()), "edu.stanford.nlp.process.PTBTokenizer",
               "-encoding", "UTF-8", "-preserveLines", "-lowerCase", path]
        done = subprocess.run(cmd, capture_output=True, timeout=3600)
    finally:
        os.unlink(path)
    if done.returncode != 0:
        raise RuntimeError(f"PTBTokenizer failed ({done.returncode}): {done.stderr.decode(errors='replace')[-500:]}")
    lines = done.stdout.decode("utf-8").split("\n")
    if len(lines) == len(texts) + 1 and lines[-1] == "":
        lines.pop()
    if len(lines) != len(texts):  # coco would silently misalign; we refuse
        raise RuntimeError(f"PTBTokenizer returned {len(lines)} lines for {len(texts)} texts")
    out = [strip_punctuation(line) for line in lines]
    with _lock:
        _TOKENIZED[key] = out
        while len(_TOKENIZED) > _TOKENIZED_KEEP:
            _TOKENIZED.popitem(last=False)
    return list(out)


_meteor = None


def meteor_scorer():
    """The process-wide METEOR 1.5 scorer (pycocoevalcap's ``Meteor``), started on first use."""
    global _meteor
    if not java_available():
        raise JavaMissing("java not found on PATH (or RNNBENCH_NO_JAVA=1): METEOR 1.5 runs in Java")
    with _lock:
        if _meteor is None or _meteor.meteor_p.poll() is not None:
            from pycocoevalcap.meteor.meteor import Meteor

            _meteor = Meteor()
        return _meteor


def meteor_score(references: list[list[str]], hypotheses: list[str]) -> float:
    """Corpus METEOR 1.5 of tokenised ``hypotheses`` against their ``references`` (coco's call)."""
    clean = lambda s: s.replace("|||", "").replace("\n", " ")  # noqa: E731 - the protocol's field separator
    gts = {i: [clean(r) for r in refs] for i, refs in enumerate(references)}
    res = {i: [clean(h)] for i, h in enumerate(hypotheses)}
    try:
        score, _ = meteor_scorer().compute_score(gts, res)
    except (ValueError, BrokenPipeError):  # the JVM died (e.g. killed): start a new one, once
        close_meteor()
        score, _ = meteor_scorer().compute_score(gts, res)
    return float(score)


def close_meteor() -> None:
    global _meteor
    with _lock:
        scorer, _meteor = _meteor, None
    if scorer is not None:
        try:
            scorer.meteor_p.stdin.close()
            scorer.meteor_p.kill()
            scorer.meteor_p.wait(timeout=10)
        except (OSError, subprocess.SubprocessError):
            pass


atexit.register(close_meteor)
