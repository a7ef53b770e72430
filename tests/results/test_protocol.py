"""The comparison protocol: the runs a table needs and the learning rate chosen on dev."""
from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from rnnbench.results import protocol


def _protocol(**kw):
    return OmegaConf.create({"seeds": [1, 2, 3, 4, 5], "lr_grid": [1e-3, 4e-4, 3e-4], "select_seeds": 2, **kw})


def test_grid_on_the_selection_seeds_then_the_rest_at_the_chosen_rate():
    p = _protocol()
    select = protocol.selection_jobs("rcrn", p, 1e-3)
    assert [(j.seed, j.lr) for j in select] == [(1, 1e-3), (2, 1e-3), (1, 4e-4), (2, 4e-4), (1, 3e-4), (2, 3e-4)]
    assert {j.phase for j in select} == {"select"}
    final = protocol.final_jobs("rcrn", p, 4e-4)
    assert [(j.seed, j.lr, j.phase) for j in final] == [(3, 4e-4, "final"), (4, 4e-4, "final"), (5, 4e-4, "final")]


def test_an_empty_grid_is_the_configs_rate():
    p = _protocol(lr_grid=[])
    assert [j.lr for j in protocol.selection_jobs("bilstm", p, 2e-3)] == [2e-3, 2e-3]


def test_choose_lr_on_mean_dev_with_ties_to_the_first_listed():
    assert protocol.choose_lr({1e-3: [0.80, 0.90], 4e-4: [0.86, 0.86], 3e-4: [0.70, 0.99]}) == 4e-4
    assert protocol.choose_lr({1e-3: [0.5], 4e-4: [0.5]}) == 1e-3
    assert protocol.choose_lr({1e-3: [2.1], 4e-4: [1.9]}, lower_is_better=True) == 4e-4  # bits per character
    with pytest.raises(ValueError):
        protocol.choose_lr({1e-3: [0.5], 4e-4: []})


def test_the_budget_rule_names_grid_seeds_cap_and_patience():
    text = protocol.describe(_protocol(), 1e-3, 50, 4, 1)
    assert "{0.001, 0.0004, 0.0003}" in text and "seeds 1, 2" in text and "seeds 3, 4, 5" in text
    assert "at most 50 epochs" in text and "patience 4" in text and "1 CPU thread" in text


def test_a_borrowed_rate_runs_no_selection_and_every_seed_at_that_rate():
    p = _protocol(seeds=[1, 2, 3], lr_from="rcrn_table1_apparel")
    assert protocol.borrowed(p) == "rcrn_table1_apparel" and protocol.borrowed(_protocol()) is None
    assert protocol.selection_jobs("rcrn", p, 1e-3) == []
    assert [(j.seed, j.lr, j.phase) for j in protocol.final_jobs("rcrn", p, 4e-4)] == [(1, 4e-4, "final"), (2, 4e-4, "final"), (3, 4e-4, "final")]
    text = protocol.describe(p, 1e-3, 50, 4, 1)
    assert "as chosen on rcrn_table1_apparel" in text and "seeds 1, 2, 3 at that rate" in text and "{0.001" not in text


def test_only_rate_when_the_grid_leaves_nothing_to_choose():
    assert protocol.only_rate(_protocol(lr_grid=[]), 2e-3) == 2e-3
    assert protocol.only_rate(_protocol(lr_grid=[5e-4]), 2e-3) == 5e-4
    assert protocol.only_rate(_protocol(), 1e-3) is None  # three rates: chosen on dev
    assert protocol.only_rate(_protocol(lr_grid=[], lr_from="rcrn_table1_apparel"), 1e-3) is None  # another's choice
