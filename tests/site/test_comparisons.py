"""Your comparisons in the report: each folder rnnbench compare wrote is a page (its table, its
comparison against the baseline, its evidence files beside it), listed on a page of their own and
linked from the home page; with none, the home page says how to make one and no page is written."""
from __future__ import annotations

import re

import pytest

from rnnbench.site import comparisons, pages
from tests.site.conftest import COMPARISON, write_comparison


def test_a_comparison_is_a_page_with_its_verdicts_and_files(tmp_path):
    found = comparisons.find(write_comparison(tmp_path / "comparisons"))
    assert [(c.name, c.baseline, c.verdicts) for c in found] == [(COMPARISON, "bilstm", [("rcrn", "rcrn better than bilstm")])]
    comparisons.write(found, tmp_path / "site")
    folder = tmp_path / "site" / "comparisons" / COMPARISON
    page = (folder / "index.html").read_text()
    assert "Against <code>bilstm</code>" in page and "<strong>rcrn better than bilstm</strong>" in page
    for href in re.findall(r'(?:href|src)="([^"#:]+)"', page):  # its own files are beside it; the site's pages two levels up
        assert href.startswith("../") or (folder / href).is_file(), href
    listing = (tmp_path / "site" / "comparisons" / "index.html").read_text()
    assert f'href="{COMPARISON}/index.html"' in listing and "rcrn</code>: rcrn better than bilstm" in listing


def test_without_comparisons_no_page_is_written_and_home_says_how_to_make_one(tmp_path):
    assert comparisons.find(tmp_path / "absent") == [] and comparisons.find(None) == []
    comparisons.write([], tmp_path / "site")
    assert not (tmp_path / "site" / "comparisons").exists()
    home = pages.home([], [], 0, "")
    assert "No comparisons yet under <code>comparisons/</code>" in home and "rnnbench compare --encoders" in home
    assert 'href="comparisons/' not in home


@pytest.mark.slow
@pytest.mark.xdist_group("report")
def test_the_home_page_links_each_comparison(built_site):
    home = (built_site / "index.html").read_text()
    assert f'href="comparisons/{COMPARISON}/index.html"' in home and 'href="comparisons/index.html"' in home
    assert (built_site / "comparisons" / COMPARISON / "index.html").is_file()
    assert (built_site / "comparisons" / COMPARISON / f"{COMPARISON}.csv").is_file()
