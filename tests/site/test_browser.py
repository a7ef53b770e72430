"""The report in a real browser: Debian's headless Chromium (``make browser`` installs it) over
the built site. Every page loads with no console error and no failed load, every image draws,
the ledger's filter narrows its rows, a claim card shows its plot, two runs compare; screenshots
of the home page and of a claim card are written to RNNBENCH_ARTIFACTS (default
.cache/report-artifacts).

Without Chromium the test fails, saying why; only outside CI, with RNNBENCH_ALLOW_NO_BROWSER=1,
is it skipped instead (and says so)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.site.browser import Browser, find_chromium

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("report")]
REPO = Path(__file__).resolve().parents[2]
CLAIM = "rcrn_table5--rcrn-beats-bilstm"


def artifacts() -> Path:
    folder = Path(os.environ.get("RNNBENCH_ARTIFACTS") or REPO / ".cache" / "report-artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def browser():
    executable = find_chromium()
    if executable is None:
        if os.environ.get("RNNBENCH_ALLOW_NO_BROWSER") == "1" and not os.environ.get("CI"):
            pytest.skip("no headless Chromium here; RNNBENCH_ALLOW_NO_BROWSER=1 lets this run skip the report's browser test")
        pytest.fail("no headless Chromium (chromium-headless-shell or chromium) was found: `make browser` installs Debian's "
                    "chromium-headless-shell with apt-get as root, and it is not installed here, so the report cannot be "
                    "tested in a browser", pytrace=False)
    opened = Browser(executable)
    yield opened
    opened.close()


def test_every_page_loads_without_an_error_and_every_image_draws(built_site, browser):
    problems = []
    for page in sorted(built_site.rglob("*.html")):
        errors = browser.load(page.as_uri())
        broken = browser.evaluate("Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)")
        problems += [f"{page.relative_to(built_site)}: {e}" for e in errors]
        problems += [f"{page.relative_to(built_site)}: image not drawn: {src}" for src in broken]
    assert not problems, "\n".join(problems[:20])


def test_the_ledger_filter_narrows_the_rows(built_site, browser):
    assert browser.load((built_site / "ledger.html").as_uri()) == []
    visible = "Array.from(document.querySelectorAll('#ledger tbody tr')).filter(r => r.offsetParent !== null)"
    everything = browser.evaluate(f"{visible}.length")
    shown = browser.evaluate("""(() => {
        const select = document.querySelector('#ledger-filters select[name=verdict]');
        select.value = 'contradicted';
        select.dispatchEvent(new Event('change', {bubbles: true}));
        return true; })()""")
    assert shown
    verdicts = browser.evaluate(f"{visible}.map(r => r.dataset.verdict)")
    assert 0 < len(verdicts) < everything
    assert set(verdicts) == {"contradicted"}
    assert browser.evaluate("document.getElementById('ledger-count').textContent") == f"showing {len(verdicts)} of {everything} claims"


def test_the_home_page_links_open_the_ledger_filtered(built_site, browser):
    assert browser.load((built_site / "index.html").as_uri()) == []  # from another page: a fragment alone loads nothing
    assert browser.load((built_site / "ledger.html").as_uri() + "#paper=RCRN&kind=cost") == []
    rows = browser.evaluate("Array.from(document.querySelectorAll('#ledger tbody tr')).filter(r => r.offsetParent !== null)"
                            ".map(r => [r.dataset.paper, r.dataset.kind])")
    assert rows and {tuple(r) for r in rows} <= {("RCRN", "cost")}


def test_a_claim_card_shows_its_plot_and_the_screenshots_are_written(built_site, browser):
    assert browser.load((built_site / "index.html").as_uri()) == []
    home = browser.screenshot(artifacts() / "report-home.png")
    assert browser.load((built_site / "claims" / f"{CLAIM}.html").as_uri()) == []
    width = browser.evaluate("(() => { const i = document.querySelector('figure.claim-plot img'); return i && i.complete ? i.naturalWidth : 0; })()")
    assert width > 200
    card = browser.screenshot(artifacts() / "report-claim-card.png")
    assert home.stat().st_size > 10_000 and card.stat().st_size > 10_000
    print(f"screenshots: {home} {card}")


def test_two_runs_compare(built_site, browser):
    assert browser.load((built_site / "runs.html").as_uri()) == []
    assert browser.evaluate("document.getElementById('compare-button').disabled") is True
    browser.evaluate("document.querySelectorAll('input.pick').forEach(b => { b.checked = true; b.dispatchEvent(new Event('change')); })")
    browser.evaluate("document.getElementById('compare-button').click()")
    assert browser.evaluate("document.getElementById('comparison').hidden") is False
    assert browser.evaluate("document.querySelectorAll('#compare-curves polyline').length") == 2
    differing = browser.evaluate("Array.from(document.querySelectorAll('#compare-config tbody tr td:first-child')).map(td => td.textContent)")
    assert "trainer.lr" in differing and "encoder.name" in differing
    assert browser.errors() == []
