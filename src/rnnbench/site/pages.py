"""The report's pages, each from plain data: the claims (``ClaimView``), the tables' evidence
rows, the cost rows, your runs. Each function returns a page's HTML; ``rnnbench.site.build``
writes them and the figures they show.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from rnnbench.results.gates import ABOUT_PAPER, IN_OUR_SETTING
from rnnbench.results.palette import colour
from rnnbench.site.claims_adapter import ClaimView, device_label
from rnnbench.site.html import esc, num, p_text, page, slug, verdict_badge, verdict_rank

QUESTION = "Is encoder X really better than a (stacked) BiLSTM on task Y, and at what cost?"
VERDICT_HELP = [
    ("reproduced", "our interval of the paired difference excludes 0 in the paper's direction"),
    ("smaller than claimed", "it excludes the paper's own difference, but not 0"),
    ("contradicted", "it excludes 0 the other way"),
    ("inconclusive", "it contains 0: our runs cannot tell (the card says what would decide it)"),
    ("withheld", "the statistics decide it, but a row's runs are not to be trusted yet (the card says why)"),
    ("pipeline check", "the table trained on a stand-in for the paper's training data: it checks our pipeline, not the paper"),
    ("not evidence", "a row of the claim does not beat the test split's majority-class score"),
    ("not tested", "the mechanism the paper credits is absent from (or not measured in) our runs"),
    ("depends on an unspecified choice", "the paper leaves open a choice its claim may rest on, and the verdicts in the "
     "cells consistent with its text differ (the card lists each)"),
    ("depends on the setting", "the table was run at several rungs of the regime ladder, from today's setting toward the "
     "paper's, and two rungs decide the claim in opposite directions (the card lists each)"),
    ("not run", "no runs of one of the two rows under the protocol yet"),
    ("data missing", "the dataset is not where RNNBENCH_DATA points"),
]


@dataclass
class TableHours:
    table: str
    title: str
    cpu: float  # CPU-thread hours of training, every run of the protocol
    gpu: float  # GPU hours
    superseded_cpu: float  # runs later dropped from the table (their rows kept apart)
    runs: int


def claim_href(view: ClaimView, root: str = "") -> str:
    return f"{root}claims/{view.key}.html"


def table_href(table: str, root: str = "") -> str:
    return f"{root}tables/{table}.html"


def _counts_bar(counts: Counter, total: int, link: str = "") -> str:
    """A horizontal bar split by verdict, with the counts written under it."""
    if not total:
        return '<p class="muted">no claims of this kind</p>'
    parts = "".join(f'<span class="seg v-{slug(v)}" style="width:{100 * counts[v] / total:.2f}%" title="{esc(v)}: {counts[v]}"></span>'
                    for v in sorted(counts, key=verdict_rank) if counts[v])
    legend = ", ".join(f'{verdict_badge(v)} {counts[v]}' for v in sorted(counts, key=verdict_rank) if counts[v])
    bar = f'<div class="bar">{parts}</div>'
    return (f'<a class="barlink" href="{link}">{bar}</a>' if link else bar) + f'<p class="counts">{legend}</p>'


def home(views: list[ClaimView], hours: list[TableHours], runs: int, commit: str,
         comparisons: list[tuple[str, str]] = (), comparisons_dir: str = "comparisons") -> str:
    """``comparisons``: (href, title) of each of your comparisons (``rnnbench compare``) the site shows."""
    main = [v for v in views if not v.device]
    device = [v for v in views if v.device]
    counts = Counter(v.verdict for v in main)
    papers = sorted({v.paper for v in main})
    cards = []
    for paper in papers:
        mine = [v for v in main if v.paper == paper]
        tables = sorted({v.table for v in mine}, key=lambda t: (len(t), t))
        cells = []
        for kind, label in (("accuracy", "Accuracy claims"), ("cost", "Cost claims (time, parameters)")):
            these = [v for v in mine if v.headline_kind == kind]
            cells.append(f'<h4>{label}: {len(these)}</h4>'
                         + _counts_bar(Counter(v.verdict for v in these), len(these), f"ledger.html#paper={esc(paper)}&amp;kind={kind}"))
        table_links = " ".join(f'<a href="{table_href(t)}">Table {esc(t.rsplit("_table", 1)[-1])}</a>' for t in tables)
        cards.append(f'<section class="card paper"><h3>{esc(paper)}</h3>{"".join(cells)}<p class="small">Tables: {table_links}</p></section>')
    cpu = sum(h.cpu for h in hours)
    gpu = sum(h.gpu for h in hours)
    superseded = sum(h.superseded_cpu for h in hours)
    top = sorted(hours, key=lambda h: -(h.cpu + h.gpu))[:6]
    budget_rows = "".join(f'<tr><td><a href="{table_href(h.table)}">{esc(h.title)}</a></td><td class="right">{h.cpu:.2f}</td>'
                          f'<td class="right">{h.gpu:.2f}</td><td class="right">{h.runs}</td></tr>' for h in top)
    device_line = ""
    if device:
        dc = Counter(v.verdict for v in device)
        device_line = (f'<p>Decided again on evidence from another device ({", ".join(sorted({device_label(v.device) for v in device}))}): '
                       f'{len(device)} verdicts, ' + ", ".join(f"{verdict_badge(v)} {dc[v]}" for v in sorted(dc, key=verdict_rank)) + ".</p>")
    present = {v.verdict for v in views}
    help_items = "".join(f"<li>{verdict_badge(v)} {esc(text)}</li>" for v, text in VERDICT_HELP if v in present)
    scoped = [v for v in main if v.kind == "accuracy" and v.scope in (ABOUT_PAPER, IN_OUR_SETTING)]
    scope_line = "".join(
        f'<p><strong>Accuracy verdicts {esc(scope)}</strong> ({len(these)}): '
        + (", ".join(f"{verdict_badge(k)} {c}" for k, c in sorted(Counter(v.verdict for v in these).items(), key=lambda kc: verdict_rank(kc[0])))
           if these else "none") + "</p>"
        for scope, these in ((s, [v for v in scoped if v.scope == s]) for s in (ABOUT_PAPER, IN_OUR_SETTING)))
    scope_line += ('<p class="small">A verdict is about the paper only where the table\'s reference row (the paper\'s own '
                   'baseline) is within its margin of the paper\'s number; otherwise it is about our setting '
                   '(the gates: <a href="ledger.html">the ledger</a> says which one each verdict passed, and '
                   'docs/verdicts.md, "The gates", in the repository, how).</p>')
    body = f"""
<section class="hero">
<h1>{esc(QUESTION)}</h1>
<p class="lead">rnnbench re-runs the encoders of five papers (RCRN, the LSTM baseline paper, DCU, FHE, MZU) under one
comparison protocol: the same seeds for every row (paired), the learning rate chosen on dev, the same budget for every
encoder. Each claim a paper draws from its tables is tested on the paired differences of our runs.</p>
</section>
<section class="headline">
<h2>What was found</h2>
<p class="big"><strong>{len(main)} claims</strong>: {", ".join(f"{verdict_badge(v)} <strong>{counts[v]}</strong>" for v in sorted(counts, key=verdict_rank))}.</p>
{_counts_bar(counts, len(main), "ledger.html")}
{scope_line}
{device_line}
<div class="cards">{"".join(cards)}</div>
<details><summary>How to read a verdict</summary><ul>{help_items}</ul>
<p class="small">Every claim card shows the per-seed differences its verdict rests on, the interval, and what would decide it.</p></details>
</section>
<section>
<h2>Budget spent</h2>
<p><strong>{cpu:.1f} CPU-thread hours</strong> of training in the committed evidence{f" and <strong>{gpu:.2f} GPU hours</strong>" if gpu else ""}
(every run of the protocol, learning-rate selection runs included){f"; {superseded:.1f} more in runs later superseded" if superseded else ""}.
The largest:</p>
<table class="data"><thead><tr><th>table</th><th class="right">CPU h</th><th class="right">GPU h</th><th class="right">runs</th></tr></thead>
<tbody>{budget_rows}</tbody></table>
<p>Every table's hours, and time against sequence length: <a href="cost.html">Cost</a>. What was planned, spent and lost:
<a href="docs/campaign.html">the campaign ledger</a>.</p>
</section>
<section>
<h2>Your runs</h2>
<p>{f'{runs} run(s) under <code>runs/</code>: <a href="runs.html">compare them</a>.' if runs else 'No runs yet under <code>runs/</code>: <code>make run</code> trains one; <a href="runs.html">Your runs</a> lists them once there.'}</p>
</section>
{_comparisons_section(comparisons, comparisons_dir)}
<p class="small muted">{f"Evidence at commit <code>{esc(commit)}</code>." if commit else ""}</p>
"""
    return page("Home", body, "", "index.html", QUESTION)


def _comparisons_section(comparisons: list[tuple[str, str]], folder: str) -> str:
    """Home's "Your comparisons": a link to each, or one line saying how to make the first."""
    if not comparisons:
        return (f'<section id="your-comparisons"><h2>Your comparisons</h2><p>No comparisons yet under <code>{esc(folder)}/</code>: '
                '<code>rnnbench compare --encoders bilstm,rcrn task=text_classification task.reader.path=mine.csv</code> '
                'compares encoders on your own data under the tables\' protocol (docs/compare.md in the repository), and '
                'the report shows it once there.</p></section>')
    links = "".join(f'<li><a href="{esc(href)}">{esc(title)}</a></li>' for href, title in comparisons)
    return (f'<section id="your-comparisons"><h2>Your comparisons</h2><p>{len(comparisons)} comparison(s) of encoders on your own '
            f'data under <code>{esc(folder)}/</code> (<a href="comparisons/index.html">all of them</a>):</p><ul>{links}</ul></section>')


def comparison_page(title: str, body_html: str, curves: str | None, evidence_links: list[tuple[str, str]]) -> str:
    """One of your comparisons (``rnnbench compare``): its table, as a paper table's page shows one."""
    root = "../../"
    links = " · ".join(f'<a href="{esc(href)}">{esc(label)}</a>' for label, href in evidence_links)
    figure = (f'<figure><img src="{esc(curves)}" alt="Learning curves of {esc(title)}"><figcaption>Dev score per epoch of each '
              'encoder: the mean over seeds, the band from min to max.</figcaption></figure>') if curves else ""
    body = f"""
<p class="crumbs"><a href="{root}index.html">Home</a> › <a href="../index.html">Your comparisons</a></p>
<h1>{esc(title)}</h1>
{f"<p>Evidence: {links}</p>" if links else ""}
{figure}
<article class="md">{body_html}</article>
"""
    return page(title, body, root, "", f"Your comparison: {title}")


def comparisons_index(entries: list[tuple[str, str, str, list[tuple[str, str]]]]) -> str:
    """``entries``: (name, title, baseline, [(encoder, verdict against the baseline)]) of each comparison."""
    rows = "".join(
        f'<tr><td><a href="{esc(name)}/index.html">{esc(title)}</a></td><td><code>{esc(baseline)}</code></td><td>'
        + "; ".join(f"<code>{esc(encoder)}</code>: {esc(verdict)}" for encoder, verdict in verdicts) + "</td></tr>"
        for name, title, baseline, verdicts in entries)
    body = f"""<p class="crumbs"><a href="../index.html">Home</a></p>
<h1>Your comparisons</h1>
<p>Encoders compared on your own data by <code>rnnbench compare</code>, under the protocol of the paper tables: each
encoder against the baseline, paired by seed, Holm's correction over the pairs.</p>
<table class="data"><thead><tr><th>comparison</th><th>baseline</th><th>each encoder against it</th></tr></thead><tbody>{rows}</tbody></table>"""
    return page("Your comparisons", body, "../", "")


def _fmt_pair(pair, digits: int = 2) -> str:
    return f"{num(pair[0], digits)} / {num(pair[1], digits)}"


def _span_text(i, ratio: bool = False) -> str:
    if i is None:
        return "–"
    if ratio:
        return f"{i.mean:.2f}× [{i.low:.2f}, {i.high:.2f}]"
    return f"{num(i.mean, 2, True)} [{num(i.low, 2, True)}, {num(i.high, 2, True)}]"


def _interval_text(view: ClaimView) -> str:
    return _span_text(view.interval, view.ratio)


def ledger(views: list[ClaimView]) -> str:
    rows = []
    for v in views:
        where = f" ({device_label(v.device)})" if v.device else ""
        rows.append(
            f'<tr data-paper="{esc(v.paper)}" data-table="{esc(v.table)}" data-verdict="{esc(v.verdict)}" data-kind="{esc(v.kind)}" '
            f'data-scope="{esc(v.scope)}">'
            f'<td>{esc(v.paper)}</td>'
            f'<td data-value="{esc(v.table)}"><a href="{table_href(v.table)}">{esc(v.table_title.split(":")[0])}</a>{esc(where)}</td>'
            f'<td><a href="{claim_href(v)}">{esc(v.text)}</a><div class="small muted">{esc(v.better)} vs {esc(v.worse)} · {esc(v.unit)}</div></td>'
            f'<td>{esc(v.kind)}</td>'
            f'<td class="right nowrap">{_fmt_pair(v.paper_numbers, 1)}</td>'
            f'<td class="right nowrap">{_fmt_pair(v.ours)}</td>'
            f'<td class="right nowrap" data-value="{"" if v.interval is None else v.interval.mean}">{_interval_text(v)}</td>'
            f'<td data-value="{verdict_rank(v.verdict)}">{verdict_badge(v.verdict)}</td>'
            f'<td title="{esc(v.scope_note)}">{esc(v.scope) or "–"}</td>'
            f'<td class="right" data-value="{"" if v.p_adjusted is None else v.p_adjusted}">{p_text(v.p_adjusted)}</td>'
            f'<td class="right" data-value="{len(v.seeds)}">{len(v.seeds) or "–"}</td></tr>')

    def options(values: list[str]) -> str:
        return "".join(f'<option value="{esc(x)}">{esc(x)}</option>' for x in values)

    papers = sorted({v.paper for v in views})
    tables = sorted({v.table for v in views})
    verdicts = sorted({v.verdict for v in views}, key=verdict_rank)
    kinds = sorted({v.kind for v in views})
    scopes = sorted({v.scope for v in views if v.scope})
    body = f"""
<h1>Claims ledger</h1>
<p>Every claim the papers draw from their tables, decided on the committed evidence. A click on a claim opens its card:
the paired differences its verdict rests on. Column headings sort; the filters narrow.</p>
<form class="filters" id="ledger-filters" onsubmit="return false">
<label>paper <select name="paper"><option value="">all</option>{options(papers)}</select></label>
<label>table <select name="table"><option value="">all</option>{options(tables)}</select></label>
<label>verdict <select name="verdict"><option value="">all</option>{options(verdicts)}</select></label>
<label>kind <select name="kind"><option value="">all</option>{options(kinds)}</select></label>
<label>about <select name="scope"><option value="">all</option>{options(scopes)}</select></label>
<label>text <input type="search" name="text" placeholder="rcrn, TREC, faster"></label>
<span id="ledger-count" class="muted" aria-live="polite"></span>
</form>
<div class="scroll">
<table class="data sortable" id="ledger">
<thead><tr><th data-sort="text">paper</th><th data-sort="text">table</th><th data-sort="text">claim</th><th data-sort="text">kind</th>
<th data-sort="num" class="right">paper: better / worse</th><th data-sort="num" class="right">ours: better / worse</th>
<th data-sort="num" class="right">ours: effect and interval</th><th data-sort="num">verdict</th><th data-sort="text">about</th>
<th data-sort="num" class="right">adjusted p</th><th data-sort="num" class="right">seeds</th></tr></thead>
<tbody>{"".join(rows)}</tbody>
</table>
</div>
"""
    return page("Claims ledger", body, "", "ledger.html")


def claim_card(view: ClaimView, plot: str | None, evidence_links: list[tuple[str, str]]) -> str:
    root = "../"
    where = f" — {device_label(view.device)}" if view.device else ""
    facts = [
        ("Compared", f"{esc(view.better)} {'<' if view.lower_is_better else '>'} {esc(view.worse)} on {esc(view.column)}"
                     + (" (lower is better)" if view.lower_is_better else "")),
        ("Paper: better / worse", _fmt_pair(view.paper_numbers, 1)),
        ("Ours: better / worse", _fmt_pair(view.ours) + f" <span class='muted'>({esc(view.unit)})</span>"),
        ("Ours: better / worse" if view.ratio else "Ours: better − worse",
         _interval_text(view) + (f" <span class='muted'>({esc(view.level)} interval, {len(view.seeds)} paired seeds)</span>" if view.interval else "")),
    ]
    if view.second is not None:
        facts.append(("Cross-check", f"{_span_text(view.second)} <span class='muted'>({esc(view.second_label)})</span>"))
    facts += [
        ("Paired seeds", ", ".join(map(str, view.seeds)) or "–"),
        ("p-value: raw / Holm / BH", f"{p_text(view.p_value)} / {p_text(view.p_adjusted)} / {p_text(view.p_fdr)}"
         + ("" if view.p_value is not None else " <span class='muted'>(no test: no paired interval, or decided on exact counts)</span>")),
        ("Source in the paper", esc(view.cite) or "–"),
    ]
    if view.scope:
        facts.insert(0, ("About", f"<strong>{esc(view.scope)}</strong> <span class='muted'>({esc(view.scope_note)})</span>"))
    fact_rows = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in facts)
    if plot:
        what = "ratio (better / worse)" if view.ratio else "difference (better − worse)"
        caption = (f"Each dot is one paired seed's {what}, labelled with its seed; the diamond and bar are the estimate the "
                   f"verdict is decided on and its {view.level} interval; the solid line is no difference"
                   + ("; the dashed line is the paper's own" if view.claimed_difference is not None else
                      "; the paper's numbers are in other units or not printed, so its difference is not marked")
                   + (f"; the grey bar is the {view.second_label}." if view.second is not None else "."))
        figure = f'<figure class="claim-plot"><img src="{esc(plot)}" alt="Paired differences: {esc(view.better)} − {esc(view.worse)}, {esc(view.unit)}"><figcaption>{caption}</figcaption></figure>'
    elif view.counted:
        figure = '<p class="muted">Decided on exact parameter counts from the rows\' configs: no seeds, nothing to plot.</p>'
    else:
        figure = '<p class="muted">No paired runs of both rows: nothing to plot yet.</p>'
    links = "".join(f'<li><a href="{esc(href)}">{esc(label)}</a></li>' for label, href in evidence_links)
    body = f"""
<p class="crumbs"><a href="{root}ledger.html">Ledger</a> › <a href="{table_href(view.table, root)}">{esc(view.table_title)}</a></p>
<h1>{esc(view.text)}{esc(where)}</h1>
<p class="verdict-line">{verdict_badge(view.verdict)}{f' <span class="note">{esc(view.note)}</span>' if view.note else ""}</p>
{figure}
<div class="two">
<table class="facts">{fact_rows}</table>
<section class="card"><h3>What would decide it</h3><p>{esc(view.would_decide)}</p>
<h3>Evidence</h3><ul>{links}</ul></section>
</div>
"""
    return page(view.text, body, root, "ledger.html", f"{view.paper} claim: {view.text}")


def table_page(title: str, table: str, body_html: str, views: list[ClaimView], curves: str | None,
               evidence_links: list[tuple[str, str]], status: str = "") -> str:
    root = "../"
    claims = "".join(f'<li>{verdict_badge(v.verdict)} <a href="{claim_href(v, root)}">{esc(v.text)}</a>'
                     f'{f" <span class=muted>({esc(device_label(v.device))})</span>" if v.device else ""}</li>' for v in views)
    links = " · ".join(f'<a href="{esc(href)}">{esc(label)}</a>' for label, href in evidence_links)
    figure = (f'<figure><img src="{esc(curves)}" alt="Learning curves of {esc(title)}"><figcaption>Dev score per epoch of each '
              'reported row: the mean over seeds, the band from min to max.</figcaption></figure>') if curves else ""
    body = f"""
<p class="crumbs"><a href="{root}tables/index.html">Tables</a></p>
<h1>{esc(title)}</h1>
{f'<p class="status">{esc(status)}</p>' if status else ""}
{f"<p>Evidence: {links}</p>" if links else ""}
{f'<section class="card"><h2>The claims</h2><ul class="claims">{claims}</ul></section>' if claims else ""}
{figure}
<article class="md">{body_html}</article>
"""
    return page(title, body, root, "tables/index.html")


def tables_index(entries: list[tuple[str, str, Counter]]) -> str:
    """``entries``: (table, title, verdict counts of its claims)."""
    rows = "".join(f'<tr><td><a href="{t}.html">{esc(title)}</a></td><td>'
                   + ", ".join(f"{verdict_badge(v)} {c[v]}" for v in sorted(c, key=verdict_rank)) + "</td></tr>"
                   for t, title, c in entries)
    body = f"""<h1>Tables</h1>
<p>Each paper table: ours beside the paper's numbers, cost and trust, learning curves, the claims and the setting's
differences from the paper. Our own tables (the synthetic tasks) follow the papers'.</p>
<table class="data"><thead><tr><th>table</th><th>claims</th></tr></thead><tbody>{rows}</tbody></table>"""
    return page("Tables", body, "../", "tables/index.html")


def cost(figures: list[tuple[str, str, str]], parameters: list[tuple[str, str, int]], hours: list[TableHours]) -> str:
    """``figures``: (heading, image, caption); ``parameters``: (encoder, name, count)."""
    figs = "".join(f'<h3>{esc(h)}</h3><figure><img src="{esc(src)}" alt="{esc(h)}"><figcaption>{esc(c)}</figcaption></figure>'
                   for h, src, c in figures)
    prows = "".join(f'<tr><td><span class="swatch" style="background:{colour(e)}"></span><code>{esc(e)}</code></td><td>{esc(n)}</td>'
                    f'<td class="right" data-value="{p}">{p:,}</td></tr>' for e, n, p in parameters)
    most = max((h.cpu + h.gpu for h in hours), default=0) or 1
    hrows = "".join(
        f'<tr><td><a href="tables/{esc(h.table)}.html">{esc(h.title)}</a></td><td class="right" data-value="{h.cpu}">{h.cpu:.2f}</td>'
        f'<td class="right" data-value="{h.gpu}">{h.gpu:.2f}</td><td class="right" data-value="{h.superseded_cpu}">{h.superseded_cpu:.2f}</td>'
        f'<td class="right" data-value="{h.runs}">{h.runs}</td>'
        f'<td class="barcell"><span class="hbar" style="width:{100 * (h.cpu + h.gpu) / most:.1f}%"></span></td></tr>' for h in hours)
    body = f"""<h1>Cost</h1>
<h2>Time against sequence length</h2>
<p>RCRN Table 10's setting for every encoder: the IMDb classifier at hidden size 200, batch 32; seconds per IMDb epoch
(782 batches) estimated from the median step over rounds. Details and the paper's own numbers:
<a href="tables/rcrn_table10.html">RCRN Table 10</a>; the kernels' benchmarks: <a href="docs/benchmarks.html">benchmarks</a>.</p>
{figs or '<p class="muted">No cost benchmark in results/ (python scripts/bench_cost.py writes one).</p>'}
<h2>Parameters</h2>
<p>Encoder parameters in that setting (the model's embedding and head excluded).</p>
<table class="data sortable"><thead><tr><th data-sort="text">encoder</th><th data-sort="text">as the papers name it</th><th data-sort="num" class="right">parameters</th></tr></thead><tbody>{prows}</tbody></table>
<h2>CPU hours per table</h2>
<p>Training time of every run of each table's protocol, learning-rate selection runs included: CPU-thread hours
(seconds per epoch × epochs × threads) and, for runs trained on a GPU, GPU hours; runs later superseded apart.
Wall time is longer (evaluation, data preparation, a shared machine). Planned, estimated and lost work:
<a href="docs/campaign.html">the campaign ledger</a>.</p>
<table class="data sortable"><thead><tr><th data-sort="text">table</th><th data-sort="num" class="right">CPU h</th><th data-sort="num" class="right">GPU h</th>
<th data-sort="num" class="right">superseded CPU h</th><th data-sort="num" class="right">runs</th><th></th></tr></thead><tbody>{hrows}</tbody>
<tfoot><tr><th>all tables</th><td class="right">{sum(h.cpu for h in hours):.2f}</td><td class="right">{sum(h.gpu for h in hours):.2f}</td>
<td class="right">{sum(h.superseded_cpu for h in hours):.2f}</td><td class="right">{sum(h.runs for h in hours)}</td><td></td></tr></tfoot></table>
"""
    return page("Cost", body, "", "cost.html")


def runs_page(runs: list[dict], runs_dir: str, colours: dict[str, str]) -> str:
    if not runs:
        body = f"""<h1>Your runs</h1>
<p class="empty" id="no-runs">No runs yet under <code>{esc(runs_dir)}</code>. Train one (<code>make run</code>, or
<code>rnnbench train encoder=rcrn</code>), then build the report again: your runs are listed here, and any two or more
can be compared (metrics, learning curves overlaid, the config keys that differ).</p>"""
        return page("Your runs", body, "", "runs.html")
    rows = []
    for i, r in enumerate(runs):
        rows.append(
            f'<tr data-run="{i}"><td><input type="checkbox" class="pick" value="{i}" aria-label="compare run {esc(r["id"])}"></td>'
            f'<td>{esc(r["task"])}</td><td><span class="swatch" style="background:{colour(r["encoder"])}"></span>{esc(r["encoder"])}</td>'
            f'<td class="right" data-value="{esc(r["seed"])}">{esc(r["seed"])}</td>'
            f'<td class="overrides"><code>{esc(r["overrides"])}</code></td>'
            f'<td class="right" data-value="{"" if r["dev"] is None else r["dev"]}">{num(r["dev"], 4)}</td>'
            f'<td class="right" data-value="{"" if r["test"] is None else r["test"]}">{num(r["test"], 4)}</td>'
            f'<td>{esc(r["select_metric"] or "")}</td>'
            f'<td>{esc(r["status"])}{" (smoke)" if r["smoke"] else ""}</td><td><code class="small">{esc(r["folder"])}</code></td></tr>')
    data = json.dumps({"runs": runs, "colours": colours}, sort_keys=True).replace("</", "<\\/")
    body = f"""<h1>Your runs</h1>
<p>The runs under <code>{esc(runs_dir)}</code> ({len(runs)}): dev and test on the task's selection metric; overrides are
the config keys set apart from what the run's experiment (or task) and encoder compose to. Tick two or more to compare them.</p>
<p><button type="button" id="compare-button" disabled>Compare the ticked runs</button> <span id="pick-count" class="muted"></span></p>
<div class="scroll">
<table class="data sortable" id="runs">
<thead><tr><th></th><th data-sort="text">task</th><th data-sort="text">encoder</th><th data-sort="num" class="right">seed</th><th data-sort="text">overrides</th>
<th data-sort="num" class="right">dev</th><th data-sort="num" class="right">test</th><th data-sort="text">metric</th><th data-sort="text">status</th><th data-sort="text">folder</th></tr></thead>
<tbody>{"".join(rows)}</tbody></table>
</div>
<section id="comparison" hidden>
<h2>Comparison</h2>
<h3>Metrics</h3><div class="scroll" id="compare-metrics"></div>
<h3>Learning curves</h3><div id="compare-curves"></div>
<h3>Config keys that differ</h3><div class="scroll" id="compare-config"></div>
</section>
<script id="runs-data" type="application/json">{data}</script>
"""
    return page("Your runs", body, "", "runs.html")


def doc_page(title: str, body_html: str) -> str:
    return page(title, f'<article class="md">{body_html}</article>', "../", "")

