"""Task metrics, by name.

A metric is ``fn(predictions, records) -> float``: ``predictions`` are what the
head's ``decode`` returned (one per example), ``records`` the raw records of
the same examples (gold labels, answers, question ids, ...). Each module of this
package exports a ``METRICS`` dict; they are gathered here, so adding a metric
means adding it to its module. Thin wrappers over the field's reference
implementations where one exists.

A task lists its metrics (``task.metrics``) and may name subsets of its
examples (``task.metric_subsets: {middle: {level: middle}}``): each metric is
then also computed on each subset, as ``<metric>_<subset>``.
"""
from __future__ import annotations

import importlib
import pkgutil
from typing import Callable

from rnnbench.errors import ConfigError

Metric = Callable[[list, list[dict]], float]


def registry() -> dict[str, Metric]:
    metrics: dict[str, Metric] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        metrics.update(getattr(module, "METRICS", {}))
    return metrics


def _baselines() -> dict[str, Callable[[list[dict]], float]]:
    out: dict = {}
    for info in pkgutil.iter_modules(__path__):
        out.update(getattr(importlib.import_module(f"{__name__}.{info.name}"), "BASELINES", {}))
    return out


def has_majority_baseline(name: str) -> bool:
    return name in _baselines()


def majority_baseline(name: str, records: list[dict]) -> float | None:
    """Metric ``name``'s score of always predicting the most common gold of ``records`` (the
    majority class), or None where that is not defined (ranking, generation, language modelling)."""
    baseline = _baselines().get(name)
    return None if baseline is None else baseline(records)


def implementations() -> dict[str, str]:
    """Which implementation produced each metric computed in this process (e.g. METEOR by
    the Java jar or nltk's fallback), from modules that export ``implementations()``."""
    out: dict[str, str] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        out.update(getattr(module, "implementations", dict)())
    return out


def check_names(names) -> None:
    known = registry()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(f"task.metrics: unknown {unknown}; known: {', '.join(sorted(known))}")


def score(names, predictions: list, records: list[dict], subsets: dict | None = None) -> dict[str, float]:
    """Every named metric over all examples, and over each subset (``<metric>_<subset>``)."""
    known = registry()
    check_names(names)
    scores = {name: known[name](predictions, records) for name in names}
    for subset, where in (subsets or {}).items():
        keep = [i for i, r in enumerate(records) if all(str(r.get(k)) == str(v) for k, v in where.items())]
        for name in names:
            scores[f"{name}_{subset}"] = known[name]([predictions[i] for i in keep], [records[i] for i in keep])
    return scores
