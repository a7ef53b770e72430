"""The report's Markdown converter on what results/*.md hold: pipe tables, lists, code, links."""
from __future__ import annotations

from rnnbench.site.markdown import inline, to_html


def test_a_pipe_table_becomes_an_html_table_with_its_alignment():
    text = "| model | TREC |\n|---|---:|\n| `rcrn` | 95.2 ± 0.4 (5) |\n"
    out = to_html(text)
    assert '<th class="right">TREC</th>' in out
    assert "<td><code>rcrn</code></td>" in out and '<td class="right">95.2 ± 0.4 (5)</td>' in out


def test_links_go_through_the_mapping_and_unservable_ones_become_text():
    mapping = {"rcrn_table5.csv": "../results/rcrn_table5.csv"}
    out = inline("[evidence](rcrn_table5.csv) and [the guide](../docs/comparing.md)", mapping.get)
    assert out == '<a href="../results/rcrn_table5.csv">evidence</a> and the guide'


def test_code_spans_are_left_alone_and_html_is_escaped():
    assert inline("`a*b*c` is **bold** <x>") == "<code>a*b*c</code> is <strong>bold</strong> &lt;x&gt;"
    assert inline("3l_bilstm* and rcrn*") == "3l_bilstm* and rcrn*"  # footnote stars are not italics


def test_headings_lists_and_wrapped_list_items():
    out = to_html("# Title\n\n## Part\n\n- one\n  continued\n- two\n\nA paragraph\nover two lines.", skip_title=True)
    assert "Title" not in out
    assert "<h3>Part</h3>" in out
    assert "<ul><li>one continued</li><li>two</li></ul>" in out
    assert "<p>A paragraph over two lines.</p>" in out
