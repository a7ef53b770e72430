"""The learning-rate choice as evidence columns: what a table stores of each encoder's choice, and
the sentence it prints from them, the same as from the choice itself."""
from __future__ import annotations

import pytest

from rnnbench.results.rate_choice import COLUMNS, RateChoice, no_columns

CHOICES = {
    "interior, grid as configured": RateChoice(1e-3, (2e-3, 1e-3, 5e-4), 0, 3),
    "interior after an extension": RateChoice(5e-4, (2e-3, 1e-3, 5e-4, 2.5e-4), 1, 3),
    "provisional at the configured edge": RateChoice(2e-3, (2e-3, 1e-3, 5e-4), 0, 3, pending=4e-3),
    "provisional after an extension": RateChoice(2.5e-4, (2e-3, 1e-3, 5e-4, 2.5e-4), 1, 3, pending=1.25e-4),
    "edge at the limit": RateChoice(1.25e-4, (1e-3, 5e-4, 2.5e-4, 1.25e-4), 2, 2),
    "extension off": RateChoice(1e-3, (1e-3, 3e-4), 0, 0),
    "no choice yet": RateChoice(None, (1e-3, 3e-4), 0, 3),
}


@pytest.mark.parametrize("name", CHOICES)
def test_a_choice_read_back_from_its_columns_is_the_same_choice_and_says_the_same(name):
    choice = CHOICES[name]
    row = {"chosen_lr": "" if choice.lr is None else choice.lr, **choice.columns()}
    assert set(choice.columns()) == set(COLUMNS)
    back = RateChoice.from_columns(row)
    assert back == choice and back.statement() == choice.statement()
    as_read = {k: v if isinstance(v, str) else repr(v) for k, v in row.items()}  # the CSV's text, untyped
    assert RateChoice.from_columns(as_read).statement() == choice.statement()


def test_the_columns_say_where_the_choice_sits():
    assert [CHOICES[n].columns()["lr_position"] for n in CHOICES] == [
        "interior", "interior", "provisional", "provisional", "edge", "edge", ""]
    columns = CHOICES["interior after an extension"].columns()
    assert columns["lr_grid"] == "0.002;0.001;0.0005;0.00025"  # the configured grid, then the rate added
    assert (columns["lr_extensions"], columns["lr_extension_limit"], columns["lr_pending"]) == (1, 3, "")
    assert CHOICES["provisional at the configured edge"].columns()["lr_pending"] == 4e-3


def test_the_sentences_are_those_a_table_prints():
    assert CHOICES["interior, grid as configured"].statement() == ""
    assert CHOICES["interior after an extension"].statement() == "grid extended to {0.002, 0.001, 0.0005, 0.00025}; choice interior"
    assert CHOICES["provisional at the configured edge"].statement() == (
        "the choice is the grid's largest rate and provisional: the selection runs at 0.004, one step past that edge, have not run yet")
    assert CHOICES["edge at the limit"].statement().endswith("limit of 2 extension(s) hit at 0.000125: still at the edge")
    assert CHOICES["extension off"].statement().endswith("grid extension is off (table.protocol.max_grid_extensions=0)")


def test_a_table_that_chose_nothing_stores_no_choice():
    """A grid of one rate (FHE's tables): the columns are empty and no choice is read back."""
    assert set(no_columns().values()) == {""}
    assert RateChoice.from_columns({"chosen_lr": 1e-3, **no_columns()}) is None
    assert RateChoice.from_columns({"chosen_lr": 1e-3}) is None  # a row without the columns
