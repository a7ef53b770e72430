"""``make test`` runs ``--dist loadgroup``: the tests of one ``xdist_group`` (a task's smoke runs, the
report's browser tests) run on one worker, which prepares their data or builds their site once. If the
grouping silently stops working (pytest 9 with pytest-xdist 3.8 does: pyproject.toml pins pytest), the
suite still passes but does that work once per worker. This runs a tiny suite the way the Makefile does
and checks where its grouped tests ran."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

# The tiny suite's tests do nothing: only which worker runs each of them is checked.
GROUPED = '''
import pytest

pytestmark = pytest.mark.xdist_group("one")


@pytest.mark.parametrize("i", range(6))
def test_grouped(i):
    pass
'''

UNGROUPED = '''
import pytest


@pytest.mark.parametrize("i", range(6))
def test_free(i):
    pass
'''


@pytest.mark.slow
def test_a_groups_tests_run_on_one_worker_under_loadgroup(tmp_path):
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    (tmp_path / "test_free.py").write_text(UNGROUPED)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup", "-v",
                           "-o", "addopts=", str(tmp_path)], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    workers = {m.group(1) for m in re.finditer(r"\[(gw\d+)\].*test_grouped\.py::test_grouped", done.stdout)}
    ran = len(re.findall(r"PASSED .*test_grouped\.py::test_grouped", done.stdout))
    assert ran == 6, done.stdout[-2000:]
    assert len(workers) == 1, f"the group's tests ran on {sorted(workers)}: --dist loadgroup does not group (pytest/pytest-xdist versions)"
