"""The dropout choice stored as evidence columns, and stated from them."""
from __future__ import annotations

import pytest

from rnnbench.results import evidence
from rnnbench.results.dropout_choice import COLUMNS, DropoutChoice, no_columns


@pytest.mark.parametrize("choice", [DropoutChoice(0.5, (0.2, 0.5)), DropoutChoice(None, (0.2, 0.5)), DropoutChoice(0.3, (0.3,))])
def test_a_choice_round_trips_through_its_columns_and_the_csv(choice, tmp_path):
    assert DropoutChoice.from_columns(choice.columns()) == choice
    row = {"model": "m", "encoder": "bilstm", "variant": "", "dataset": "TREC", "metric": "accuracy", "scale": 100.0, "seed": 1,
           "lr": 1e-3, "phase": "select", "reported": "yes", "dev": 0.9, "test": 0.8, "dropout": 0.2, **choice.columns()}
    path = tmp_path / "t.csv"
    evidence.write_csv(path, [row], [*evidence.FIELDS, "dropout", *COLUMNS])
    (read,) = evidence.read_csv(path)
    assert DropoutChoice.from_columns(read) == choice
    assert DropoutChoice.from_columns(read).statement() == choice.statement()


def test_no_choice_states_nothing():
    assert DropoutChoice.from_columns(no_columns()) is None
    assert DropoutChoice.from_columns({}) is None


def test_the_statement_names_the_winner():
    assert DropoutChoice(None, (0.2, 0.5)).statement() == ("dropout the config's own, chosen on dev among the config's own "
                                                           "and {0.2, 0.5} at the chosen rate")
    assert DropoutChoice(0.5, (0.2, 0.5)).statement().startswith("dropout 0.5, chosen on dev")
