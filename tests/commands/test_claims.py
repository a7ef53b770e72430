"""rnnbench claims (scripts/claims.py wraps it), the ledger's command line: help writes nothing, an absent data folder is said."""
from __future__ import annotations

import re

import pytest

from rnnbench.commands import claims


def test_help_prints_usage_and_writes_no_ledger(tmp_path, capsys):
    script = claims
    with pytest.raises(SystemExit) as stop:
        script.main(["--help", "--results", str(tmp_path)])
    assert stop.value.code == 0
    assert "claims ledger" in capsys.readouterr().out
    assert not (tmp_path / "claims.md").exists()


def test_an_absent_data_folder_is_said_before_tables_read_data_missing(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RNNBENCH_DATA", str(tmp_path / "nowhere"))
    script = claims
    assert script.main(["--results", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert f"data folder {tmp_path / 'nowhere'} not found" in err and "RNNBENCH_DATA" in err
    ledger = (tmp_path / "claims.md").read_text()
    counts = re.search(r"\*\*\d+ claims[.:] (.*)\.\*\*", ledger).group(1)  # no evidence, no data: none reproduced, some missing
    assert "reproduced" not in counts and re.search(r"data missing [1-9]", counts)
