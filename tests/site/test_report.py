"""The report's site, built from the committed evidence: every page's links and images resolve
inside the site, every claim has a card and a ledger row, runs are listed, bad --out refused."""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from rnnbench.results import claims as claims_mod
from rnnbench.results.tables import REGISTRY
from rnnbench.site import pages
from rnnbench.site.build import MARKER, ReportError, build

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("report")]
REPO = Path(__file__).resolve().parents[2]


class Targets(HTMLParser):
    """Every href and src of a page."""

    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value is not None:
                self.found.append((tag, value))


def local_targets(page: Path) -> list[tuple[str, str]]:
    parser = Targets()
    parser.feed(page.read_text())
    return [(tag, v) for tag, v in parser.found if not v.startswith(("http://", "https://", "mailto:", "data:", "#"))]


def test_every_local_link_and_image_of_every_page_exists(built_site):
    broken = []
    pages_seen = sorted(built_site.rglob("*.html"))
    assert len(pages_seen) > 50
    for page in pages_seen:
        for tag, target in local_targets(page):
            path = unquote(urlsplit(target).path)
            if not (page.parent / path).resolve().is_file():
                broken.append(f"{page.relative_to(built_site)}: <{tag}> {target}")
    assert not broken, "\n".join(broken[:20])


def test_every_claim_of_the_registry_has_a_ledger_row_and_a_card(built_site):
    claims = sum(len(claims_mod.load_claims(p.stem)) for p in sorted(REGISTRY.glob("*.yaml")))
    ledger = (built_site / "ledger.html").read_text()
    rows = re.findall(r'<tr data-paper="[^"]*" data-table="([^"]*)"', ledger)
    device_rows = len(re.findall(r"on the GPU\)</td>", ledger))
    assert len(rows) - device_rows == claims
    cards = list((built_site / "claims").glob("*.html"))
    assert len(cards) == len(rows)


def test_a_decided_claim_card_shows_its_paired_differences(built_site):
    card = (built_site / "claims" / "rcrn_table5--rcrn-beats-bilstm.html").read_text()
    assert '<img src="rcrn_table5--rcrn-beats-bilstm.svg"' in card
    svg = (built_site / "claims" / "rcrn_table5--rcrn-beats-bilstm.svg").read_text()
    # the rows the claim is read on (rung 3 of the table's settings), by the paper's row names, not the registry's keys
    assert "RCRN (rung3 variant, ours) − BiLSTM (rung3 variant, ours)" in svg and "rcrn/rung3" not in svg
    assert "What would decide it" in card and "../results/rcrn_table5.csv" in card


def test_home_gives_the_headline_per_paper_with_accuracy_and_cost_apart(built_site):
    home = (built_site / "index.html").read_text()
    for paper in ("RCRN", "DCU", "FHE", "MZU"):
        assert f"<h3>{paper}</h3>" in home
    assert "Accuracy claims" in home and "Cost claims" in home
    assert re.search(r"<strong>[\d.]+ CPU-thread hours</strong>", home)


def test_the_runs_page_lists_the_runs_and_carries_their_curves(built_site):
    page = (built_site / "runs.html").read_text()
    data = json.loads(re.search(r'<script id="runs-data" type="application/json">(.*?)</script>', page, re.S).group(1))
    assert sorted(r["encoder"] for r in data["runs"]) == ["bilstm", "rcrn"]
    rcrn = next(r for r in data["runs"] if r["encoder"] == "rcrn")
    assert rcrn["curves"]["accuracy"] == [0.35, 0.50, 0.66, 0.70]
    assert rcrn["test"] == 0.68 and rcrn["config"]["trainer.lr"] == "0.002"


def test_the_runs_page_says_so_when_there_are_no_runs():
    page = pages.runs_page([], "runs", {})
    assert "No runs yet" in page and 'id="runs-data"' not in page


def test_out_is_refused_when_it_is_a_folder_the_report_did_not_write(tmp_path):
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "keep.txt").write_text("mine")
    with pytest.raises(ReportError, match="did not write"):
        build(REPO / "results", tmp_path / "runs", mine, say=lambda *_: None)
    assert (mine / "keep.txt").read_text() == "mine"


def test_the_site_is_marked_as_the_reports_own(built_site):
    assert (built_site / MARKER).exists()


def test_every_verdict_kind_has_its_place_colour_and_help_on_the_site():
    from rnnbench.results import verdicts
    from rnnbench.site import html

    helped = {kind for kind, _ in pages.VERDICT_HELP}
    for kind in verdicts.KINDS:
        assert kind in html.VERDICT_ORDER and kind in html.VERDICT_COLOURS and kind in helped, kind
    assert "depends on an unspecified choice" in html.verdict_badge(verdicts.DEPENDS)
