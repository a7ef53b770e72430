"""The report does each piece of work once: the ledger decides each claim once and the site reuses
those results, each registry file is parsed once, each table's experiments are looked up once,
each table's per-item scores are read once and grouped (not scanned per claim), and the figures'
math labels are parsed once, drawing the same bytes. Counted, never timed."""
from __future__ import annotations

import collections
from pathlib import Path

import pytest
import yaml

from rnnbench.results import claims as claims_mod
from rnnbench.results import decisions, evidence, figures, tables
from rnnbench.results.tables import REGISTRY, paper_table
from rnnbench.site import claims_adapter
from tests.results.test_ledger import _accuracy_rows, _timing_rows


def _items(rows: list[dict], n: int = 12) -> list[dict]:
    """Per-item scores (0 or 1) of each run of ``rows``, the same items in every run."""
    return [{"model": r["model"], "variant": r["variant"], "dataset": r["dataset"], "seed": r["seed"], "item": f"q{i:02d}",
             "score": float((i * 7 + r["seed"] * 3 + len(r["model"])) % 10 < 5)} for r in rows for i in range(n)]


@pytest.fixture()
def results(tmp_path) -> Path:
    """Evidence of two tables: RCRN Table 2 with per-item scores, Table 10 on the CPU and the GPU."""
    rows = _accuracy_rows()
    evidence.write_csv(tmp_path / "rcrn_table2.csv", rows)
    evidence.write_items(tmp_path / "rcrn_table2.items.csv.xz", _items(rows))
    evidence.write_csv(tmp_path / "rcrn_table10.csv", _timing_rows("cpu", "Test CPU", {"bilstm": 100.0, "rcrn": 180.0, "3l_bilstm": 200.0}))
    evidence.write_csv(tmp_path / "rcrn_table10_cuda.csv", _timing_rows("cuda", "Test GPU", {"bilstm": 5.0, "rcrn": 8.0, "3l_bilstm": 10.0}))
    return tmp_path


def test_the_site_decides_each_claim_once_parses_each_registry_file_once_and_looks_up_experiments_once(results, monkeypatch):
    calls: collections.Counter = collections.Counter()

    def counted(name, function, key=lambda *a, **k: None):
        def wrapper(*args, **kwargs):
            calls[(name, key(*args, **kwargs))] += 1
            return function(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(decisions, "decided", counted("decided", decisions.decided))
    # One key per claim and body of evidence (a table's own rows, or another device's; none: a size counted from the configs).
    monkeypatch.setattr(claims_mod, "evaluate", counted("evaluate", claims_mod.evaluate,
                                                        lambda table, claim, rows, *a, **k: (table, claim["id"], id(rows) if rows else None)))
    monkeypatch.setattr(claims_adapter, "experiments_of", counted("experiments_of", claims_adapter.experiments_of, lambda table: table))
    monkeypatch.setattr(evidence, "read_item_scores", counted("read_item_scores", evidence.read_item_scores, lambda path: path.name))

    def scanned(path):
        raise AssertionError(f"{path.name} read as one dict per item: the ledger reads it grouped (read_item_scores)")
    monkeypatch.setattr(evidence, "read_items", scanned)
    parses: collections.Counter = collections.Counter()

    class Yaml:  # the registry module's yaml, counting what it parses
        def __getattr__(self, name):
            return getattr(yaml, name)

        def safe_load(self, text):
            parses[text] += 1
            return yaml.safe_load(text)
    monkeypatch.setattr(tables, "yaml", Yaml())
    tables._parsed.cache_clear()

    views = claims_adapter.claim_views(results)

    assert calls[("decided", None)] == 1  # the site's claims are the ledger's results, decided together once
    evaluated = {key: n for (name, key), n in calls.items() if name == "evaluate"}
    assert evaluated and max(evaluated.values()) == 1 and len(evaluated) <= len(views)
    read = {key: n for (name, key), n in calls.items() if name == "read_item_scores"}
    assert read["rcrn_table2.items.csv.xz"] == 1 and max(read.values()) == 1  # each table's file once (absent ones: none)
    looked_up = {key: n for (name, key), n in calls.items() if name == "experiments_of"}
    assert looked_up and max(looked_up.values()) == 1  # once per table, not once per claim
    assert len({v.table for v in views}) < len(views)  # (tables with several claims: the count above means something)
    again = {text.splitlines()[0]: n for text, n in parses.items() if n > 1}
    assert parses and not again and len(parses) <= len(list(REGISTRY.glob("*.yaml"))), again  # each file parsed once


def test_a_registry_read_from_the_cache_cannot_be_changed_by_its_caller():
    first = paper_table("rcrn_table5")
    first["rows"].clear()
    first["claims"][0]["better"] = "changed"
    again = paper_table("rcrn_table5")
    assert again["rows"] and again["claims"][0]["better"] != "changed"


def test_grouped_item_scores_hold_what_read_items_reads(tmp_path):
    rows = _accuracy_rows()
    items = _items(rows)
    path = tmp_path / "t.items.csv.xz"
    evidence.write_items(path, list(reversed(items)))
    grouped, listed = evidence.read_item_scores(path), evidence.ItemScores(evidence.read_items(path))
    assert grouped._rows == listed._rows and grouped.of("SST-5", "rcrn", "")[1]
    assert not evidence.read_item_scores(tmp_path / "absent.items.csv.xz") and grouped.of("SST-5", "nope", "") == {}
    # A claim decided on the list and on the grouped scores alike.
    claim = next(c for c in claims_mod.load_claims("rcrn_table2") if c["column"] == "SST-5" and c.get("quantity", "test") == "test")
    on_list = claims_mod.evaluate("rcrn_table2", claim, rows, evidence.read_items(path))
    on_groups = claims_mod.evaluate("rcrn_table2", claim, rows, grouped)
    assert on_list.estimate is not None and on_list.estimate == on_groups.estimate and on_list.verdict == on_groups.verdict


def _ratio_plot(path: Path) -> bytes:
    fig = figures.paired_differences([0.8, 0.9, 0.85], [1, 2, 3], (0.85, 0.75, 0.95), "ratio", 0.5, ratio=True)
    figures.save(fig, path)
    return path.read_bytes()


def test_log_axis_labels_are_parsed_once_for_many_figures_and_drawn_the_same(tmp_path, monkeypatch):
    # The installed matplotlib must offer the hook the report's speed rests on; a matplotlib that
    # changed it draws the same figures without sharing, and this test then says so by failing.
    assert figures._PARSE is not None, "matplotlib's MathTextParser._parse_cached changed: log-axis labels are parsed per figure again"
    figures._shared_parse.cache_clear()
    first = _ratio_plot(tmp_path / "a.svg")
    parsed = figures._shared_parse.cache_info().misses
    assert parsed > 0  # the log axis's labels are math text
    assert _ratio_plot(tmp_path / "b.svg") == first
    assert figures._shared_parse.cache_info().misses == parsed  # the second figure parsed nothing
    monkeypatch.setattr(figures, "_PARSE", None)  # matplotlib's own caching only
    assert _ratio_plot(tmp_path / "c.svg") == first


@pytest.mark.parametrize("draw", ["save", "learning_curves", "paired_differences", "time_against_length"])
def test_every_figure_function_shares_the_math_label_parses(draw):
    """Each function that lays out or writes a figure runs under the shared parses (a decorator moved
    onto a helper by an edit left the claim plots, some 120 a report, parsing their labels again)."""
    assert getattr(getattr(figures, draw), "__wrapped__", None) is not None
    assert not hasattr(figures._stagger, "__wrapped__")  # a pure helper: no figure, nothing to share
