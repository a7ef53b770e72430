"""A small Markdown-to-HTML converter for the files under ``results/`` (the tables, the campaign
ledger, the diagnostics): headings, paragraphs, lists, pipe tables, fenced code, and inline
code, bold, italics and links. Nothing more is needed, and no dependency is taken for it.

Links go through ``link(target) -> href | None``: the report maps ``rcrn_table5.md`` to its
page and ``rcrn_table5.csv`` to its copy; a target it cannot serve (None) is shown as plain
text, so the site never has a broken link.
"""
from __future__ import annotations

import html
import re
from collections.abc import Callable

INLINE_CODE = re.compile(r"`([^`]+)`")
LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
BOLD = re.compile(r"\*\*(.+?)\*\*")
ITALIC = re.compile(r"(?<![\w*])\*(?!\s)([^*]+?)(?<!\s)\*(?![\w*])")


def inline(text: str, link: Callable[[str], str | None] = lambda t: t) -> str:
    """One line of Markdown as HTML: code spans first (nothing inside them is Markdown)."""
    parts = INLINE_CODE.split(text)
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(f"<code>{html.escape(part, quote=False)}</code>")
            continue
        escaped = html.escape(part, quote=False)

        def anchor(m: re.Match) -> str:
            label, target = m.group(1), html.unescape(m.group(2))
            href = link(target)
            return label if href is None else f'<a href="{html.escape(href)}">{label}</a>'

        escaped = LINK.sub(anchor, escaped)
        escaped = BOLD.sub(r"<strong>\1</strong>", escaped)
        escaped = ITALIC.sub(r"<em>\1</em>", escaped)
        out.append(escaped)
    return "".join(out)


def _cells(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", line)]


def _alignments(line: str) -> list[str]:
    out = []
    for cell in _cells(line):
        right, left = cell.endswith(":"), cell.startswith(":")
        out.append("right" if right and not left else "center" if right and left else "")
    return out


def _is_separator(line: str) -> bool:
    return bool(re.fullmatch(r"\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*", line))


def to_html(text: str, link: Callable[[str], str | None] = lambda t: t, skip_title: bool = False) -> str:
    """The whole document as HTML. ``skip_title``: leave out a first-level heading (the page
    shows its own)."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            out.append("<p>" + inline(" ".join(paragraph), link) + "</p>")
            paragraph.clear()

    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            flush()
            i += 1
            continue
        if stripped.startswith("```"):
            flush()
            block = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                block.append(lines[i])
                i += 1
            out.append("<pre><code>" + html.escape("\n".join(block), quote=False) + "</code></pre>")
            i += 1
            continue
        heading = re.match(r"(#{1,6})\s+(.*)", stripped)
        if heading:
            flush()
            level = len(heading.group(1))
            if not (skip_title and level == 1):
                out.append(f"<h{min(level + 1, 6)}>{inline(heading.group(2), link)}</h{min(level + 1, 6)}>")
            i += 1
            continue
        if stripped.startswith("|") and i + 1 < len(lines) and _is_separator(lines[i + 1]):
            flush()
            head, align = _cells(stripped), _alignments(lines[i + 1])
            i += 2
            body = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                body.append(_cells(lines[i]))
                i += 1

            def cell(tag: str, value: str, k: int) -> str:
                style = f' class="{align[k]}"' if k < len(align) and align[k] else ""
                return f"<{tag}{style}>{inline(value, link)}</{tag}>"

            rows = ["<tr>" + "".join(cell("td", v, k) for k, v in enumerate(r)) + "</tr>" for r in body]
            out.append('<div class="scroll"><table class="md"><thead><tr>' + "".join(cell("th", h, k) for k, h in enumerate(head))
                       + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table></div>")
            continue
        if re.match(r"[-*]\s+", stripped):
            flush()
            items: list[str] = []
            while i < len(lines) and lines[i].strip():
                current = lines[i].strip()
                if re.match(r"[-*]\s+", current):
                    items.append(re.sub(r"^[-*]\s+", "", current))
                elif items:  # a wrapped line of the item above
                    items[-1] += " " + current
                else:
                    break
                i += 1
            out.append("<ul>" + "".join(f"<li>{inline(item, link)}</li>" for item in items) + "</ul>")
            continue
        paragraph.append(stripped)
        i += 1
    flush()
    return "\n".join(out)
