"""Rows of a user's own data file: CSV, TSV or JSON lines.

``read_rows(path, format)`` gives ``(line, row)`` pairs, ``row`` a dict from field name to
its value as a string, ``line`` the 1-based line the row starts on. The format is the
file's extension (``.csv``; ``.tsv``, ``.tab``; ``.jsonl``, ``.ndjson``, ``.json``) unless
``format`` names it (``csv``, ``tsv``, ``jsonl``; ``auto`` reads the extension).

- CSV: a header row names the columns; fields may be quoted (RFC 4180, a quoted field may
  span lines); a row with more or fewer fields than the header is an error.
- TSV: a header row; fields split on tabs, no quoting (a quote is text).
- JSON lines: one object per line; string, number and boolean values are kept as strings.

Blank lines are skipped; a UTF-8 byte order mark is dropped. Every problem is one
DataFormatError naming the file, the line and what to do.
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Iterator

from rnnbench.errors import ConfigError, DataFormatError

FORMATS = ("auto", "csv", "tsv", "jsonl")
EXTENSIONS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}


def file_format(path: Path, format: str = "auto") -> str:  # noqa: A002 - the option's name
    """The format to read ``path`` in: ``format`` unless it is ``auto``, else the extension's."""
    if format not in FORMATS:
        raise ConfigError(f"task.reader.format must be one of {', '.join(FORMATS)}; got {format!r}")
    if format != "auto":
        return format
    suffix = path.suffix.lower()
    if suffix not in EXTENSIONS:
        raise ConfigError(f"{path}: cannot tell the format from the extension {suffix or '(none)'!r}: "
                          f"name it with task.reader.format=csv|tsv|jsonl (or use a {', '.join(EXTENSIONS)} file)")
    return EXTENSIONS[suffix]


def _text(path: Path) -> str:
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DataFormatError(path, line, f"byte {raw[exc.start]:#04x} is not valid UTF-8: save the file as UTF-8") from None


def _read_delimited(path: Path, delimiter: str) -> Iterator[tuple[int, dict]]:
    kind = "comma" if delimiter == "," else "tab"
    quoting = csv.QUOTE_MINIMAL if delimiter == "," else csv.QUOTE_NONE
    reader = csv.reader(io.StringIO(_text(path), newline=""), delimiter=delimiter, quoting=quoting, strict=True)
    header: list[str] | None = None
    end = 0  # the line the previous row ended on
    while True:
        start = end + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise DataFormatError(path, start, f"not a valid {kind}-separated row ({exc}): check its quotes") from None
        end = reader.line_num
        if not row or (len(row) == 1 and not row[0].strip()):
            continue  # a blank line
        if header is None:
            header = [name.strip() for name in row]
            if len(set(header)) != len(header):
                duplicated = sorted({n for n in header if header.count(n) > 1})
                raise DataFormatError(path, start, f"the header names a column twice ({', '.join(duplicated)}): each column needs its own name")
            continue
        if len(row) != len(header):
            hint = "quote fields that hold a comma" if delimiter == "," else "a text may not hold a tab"
            raise DataFormatError(path, start, f"{len(row)} {kind}-separated fields, but the header names {len(header)} "
                                               f"({', '.join(header)}): {hint}")
        yield start, dict(zip(header, row))
    if header is None:
        raise DataFormatError(path, None, "is empty: a header row naming the columns, then one row an example")


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    for number, line in enumerate(_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise DataFormatError(path, number, f"not a JSON object ({exc}): each line must hold one object") from None
        if not isinstance(obj, dict):
            raise DataFormatError(path, number, f"not a JSON object (a {type(obj).__name__}): each line must hold one object")
        row = {}
        for key, value in obj.items():
            if isinstance(value, bool):
                row[key] = str(value).lower()
            elif isinstance(value, (str, int, float)):
                row[key] = str(value)
            elif value is not None:
                row[key] = value  # a list or object: an error only if a field read names it
        yield number, row


def read_rows(path: Path, format: str = "auto") -> Iterator[tuple[int, dict]]:  # noqa: A002 - the option's name
    """``(line, row)`` of each example in ``path``; see the module docstring."""
    kind = file_format(path, format)
    if kind == "jsonl":
        return _read_jsonl(path)
    return _read_delimited(path, "," if kind == "csv" else "\t")


def field(row: dict, name: str, path: Path, line: int, option: str) -> str:
    """The string value of ``row[name]``; a missing or non-text value names the file, line and
    the option (``task.reader.<option>``) that chose the field."""
    if name not in row or row[name] is None:
        known = ", ".join(k for k in row) or "none"
        raise DataFormatError(path, line, f"no field {name!r} (fields: {known}): name the right one with task.reader.{option}")
    value = row[name]
    if not isinstance(value, str):
        raise DataFormatError(path, line, f"field {name!r} is a {type(value).__name__}, not text")
    return value
