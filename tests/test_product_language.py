"""Tracked files speak to researchers using the framework, not about how it was built.

No tracked file may mention a working "session", "this machine" or a "lent" machine: where
history is needed (results/campaign.md, diagnostics, config comments) it is given as dates
and commits, and "this machine" is said as what it means (the data folder a table was made
with, the local machine, 2 CPU cores). ALLOWED lists the few uses of a word with another,
legitimate meaning (third-party API names); prefer rewording to adding to it.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FORBIDDEN = re.compile(
    r"\bsessions?\b|\bthis\s+machine\b|\blent\b"
    r"|\bborrowed\s+(?:an?\s+)?(?:gpu|h100|h200|machine|device)"  # the protocol's borrowed learning rate (lr_from) stays
    r"|\bgpu[-\s]+time\b|\bseen\s+once\b"
    r"|\bissues?\s+#?\d+|\(#\d+\)",  # an issue number: the tracker is not part of the product
    re.IGNORECASE)  # a phrase may wrap a line
# (path glob, the exact text around the word): API names, not development history.
ALLOWED = [
    ("tests/conftest.py", 'scope="session"'),  # pytest's fixture scope
    ("tests/site/conftest.py", 'scope="session"'),
    ("tests/*.py", "start_new_session=True"),  # subprocess.Popen's argument
    ("tests/**/*.py", "start_new_session=True"),
    ("tests/test_product_language.py", None),  # this rule's own text
]
BINARY_SUFFIXES = {".gz", ".png", ".pt", ".zip", ".jar", ".pdf"}


def _tracked_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the rule is about tracked files")
    return [REPO / name for name in out.decode().split("\0") if name]


def _allowed(path: str, line: str) -> bool:
    for pattern, text in ALLOWED:
        if Path(path).match(pattern) and (text is None or text in line):
            return True
    return False


def violations(files: list[Path], root: Path = REPO) -> list[str]:
    found = []
    for file in files:
        if file.suffix in BINARY_SUFFIXES or not file.is_file():
            continue
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        rel = file.relative_to(root).as_posix()
        lines = text.splitlines()
        for match in FORBIDDEN.finditer(text):
            number = text.count("\n", 0, match.start()) + 1
            line = lines[number - 1]
            if not _allowed(rel, line):
                found.append(f"{rel}:{number}: {line.strip()[:120]}")
    return found


def test_no_development_history_in_tracked_files():
    found = violations(_tracked_files())
    assert not found, "development history in tracked files (use dates and commits):\n" + "\n".join(found)


def test_the_rule_catches_each_word(tmp_path):
    bad = tmp_path / "notes.md"
    bad.write_text("done in session 4\nmeasured on this machine\nan H100 lent for 15 minutes\nthe file is not on this\nmachine\n", encoding="utf-8")
    good = tmp_path / "fine.md"
    good.write_text("done on 2026-11-25 (7bdf287); silent, excellent, possession, sessionless\n", encoding="utf-8")
    assert len(violations([bad, good], root=tmp_path)) == 4


def test_the_rule_catches_tracker_numbers_and_device_stories(tmp_path):
    bad = tmp_path / "history.md"
    bad.write_text("fixed in issue 37\nsee (#12)\non a borrowed H100\n15 minutes of GPU time\nseen once in CI\n", encoding="utf-8")
    good = tmp_path / "fine.md"
    good.write_text("the rate borrowed from Apparel (lr_from); 0.21 GPU h; issues of the day; seen twice\n", encoding="utf-8")
    assert len(violations([bad, good], root=tmp_path)) == 5


def test_api_names_are_allowed_only_where_listed():
    assert _allowed("tests/conftest.py", '@pytest.fixture(scope="session")')
    assert _allowed("tests/training/test_resume.py", "    proc = Popen(cmd, start_new_session=True)")
    assert not _allowed("src/rnnbench/run.py", "    proc = Popen(cmd, start_new_session=True)")
    assert not _allowed("tests/conftest.py", "# measured in session 3")
