"""The natural unit of a dataset's test items, read off their ids: the cluster that the claims'
statistics (``stats.two_level_estimate``) treat as one draw from the test set.

Items that share a unit are not independent evidence: the aspect terms of one restaurant review
sentence share its words, the questions on one RACE passage share its text, SNLI's three
hypotheses of one premise share it. A table's registry file names its unit (``item_unit``);
each unit here is a pattern over the item ids its reader writes, whose ``unit`` group is the
cluster:

- ``item`` (the default): every item its own unit. Right where items share nothing (TREC, SST,
  the synthetic tasks, the Amazon reviews). Also the fallback where
  the unit exists but the ids do not say it: SciTail's ids are positions (``test-<n>``; its
  premises recur, but under no id), IMDb's are reviews (``test/neg/<id>_<rating>``; the film,
  which up to 30 reviews share, is not in them).
- ``question``: the ranking tables' items, which are questions already (a question's average
  precision or reciprocal rank is one item, over all its candidate answers: RCRN Table 8).
- ``sentence``: SemEval-2014 aspect terms, ``<split>-<sentence id>-<k>`` (MZU Table 6).
- ``passage``: RACE questions, ``<split>/<level>/<file>#<k>`` (DCU Table 1).
- ``premise``: SNLI pairs, ``<caption id>r<n><label letter>``, the caption being the premise
  (RCRN Table 6).
"""
from __future__ import annotations

import re

UNITS: dict[str, tuple[re.Pattern, str]] = {
    "sentence": (re.compile(r"^(?P<unit>.+)-\d+$"), "<split>-<sentence id>-<k> (SemEval aspect terms)"),
    "passage": (re.compile(r"^(?P<unit>.+)#\d+$"), "<split>/<level>/<file>#<k> (RACE questions)"),
    "premise": (re.compile(r"^(?P<unit>.+#\d+)r\d+[a-z]$"), "<caption id>r<n><label> (SNLI pair ids)"),
}
ITEM, QUESTION = "item", "question"  # each item its own cluster (a ranking table's items are questions)


def known_units() -> list[str]:
    return [ITEM, QUESTION, *UNITS]


def cluster_labels(unit: str, ids: list[str]) -> list[str]:
    """Each item's cluster under ``unit``; an id the unit's pattern does not fit is an error
    (a registry naming the wrong unit, or a reader whose ids changed)."""
    if unit in (ITEM, QUESTION):
        return list(ids)
    if unit not in UNITS:
        raise ValueError(f"item_unit {unit!r} is not one of {', '.join(known_units())}")
    pattern, shape = UNITS[unit]
    labels = []
    for item in ids:
        match = pattern.match(item)
        if match is None:
            raise ValueError(f"item id {item!r} does not name its {unit}: expected {shape}")
        labels.append(match.group("unit"))
    return labels
