"""Tokenisation for corpora that ship raw text (nltk's Treebank tokenizer: no downloads)."""
from __future__ import annotations

import re
from functools import lru_cache

_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)
# The Treebank tokenizer splits off only a text-final period, so split into rough
# sentences first (after . ! ? followed by space); Punkt would need downloaded data.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@lru_cache(maxsize=1)
def _treebank():
    from nltk.tokenize import TreebankWordTokenizer

    return TreebankWordTokenizer()


def treebank_tokenize(text: str) -> list[str]:
    """Penn Treebank tokens of raw text; HTML line breaks (IMDb's <br />) become spaces."""
    tokenizer = _treebank()
    return [tok for sentence in _SENTENCE_END.split(_BR.sub(" ", text)) for tok in tokenizer.tokenize(sentence)]
