"""The comparison protocol: the runs a table needs and the learning rate chosen on dev."""
from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from rnnbench.campaign import protocol


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


def _improving_as_the_rate_falls(calls, best=None):
    """A fake run of the selection seeds: dev rises as the rate falls (down to ``best``, then falls)."""
    def dev_scores(lr):
        calls.append(lr)
        score = -abs(lr - best) if best is not None else -lr
        return [score, score]
    return dev_scores


def test_a_choice_at_the_grids_edge_extends_the_grid_until_it_is_interior():
    """MZU Table 6: the grid {2e-3, 1e-3, 5e-4} stopped at the rate mzu_cap chose, dev still rising as
    the rate fell. The grid grows x0.5 past its smallest rate until the choice is interior."""
    calls = []
    choice = protocol.choose_rate(_protocol(lr_grid=[2e-3, 1e-3, 5e-4]), 1e-3, _improving_as_the_rate_falls(calls, best=2.5e-4))
    assert calls == [2e-3, 1e-3, 5e-4, 2.5e-4, 1.25e-4]  # 2.5e-4 is chosen at the new edge: one step more shows it interior
    assert choice.lr == 2.5e-4 and choice.added == 2 and not choice.at_edge() and choice.pending is None
    assert choice.statement() == "grid extended to {0.002, 0.001, 0.0005, 0.00025, 0.000125}; choice interior"
    # above the largest rate: x2
    calls = []
    up = protocol.choose_rate(_protocol(lr_grid=[1e-3, 4e-4, 3e-4]), 1e-3, _improving_as_the_rate_falls(calls, best=2e-3))
    assert calls == [1e-3, 4e-4, 3e-4, 2e-3, 4e-3] and up.lr == 2e-3 and up.statement().endswith("choice interior")


def test_the_grid_stops_growing_at_the_limit_and_says_the_choice_is_still_at_the_edge():
    calls = []
    choice = protocol.choose_rate(_protocol(lr_grid=[2e-3, 1e-3, 5e-4]), 1e-3, _improving_as_the_rate_falls(calls))
    assert calls == [2e-3, 1e-3, 5e-4, 2.5e-4, 1.25e-4, 6.25e-5]  # the default limit: 3 extensions
    assert choice.lr == 6.25e-5 and choice.at_edge() and choice.added == 3
    assert choice.statement() == ("grid extended to {0.002, 0.001, 0.0005, 0.00025, 0.000125, 6.25e-05}; "
                                  "limit of 3 extension(s) hit at 6.25e-05: still at the edge")
    one = protocol.choose_rate(_protocol(lr_grid=[2e-3, 1e-3, 5e-4], max_grid_extensions=1), 1e-3, _improving_as_the_rate_falls([]))
    assert one.lr == 2.5e-4 and one.statement().endswith("limit of 1 extension(s) hit at 0.00025: still at the edge")
    off = protocol.choose_rate(_protocol(lr_grid=[2e-3, 1e-3, 5e-4], max_grid_extensions=0), 1e-3, _improving_as_the_rate_falls([]))
    assert off.lr == 5e-4 and "grid extension is off" in off.statement()
    with pytest.raises(protocol.ConfigError, match="max_grid_extensions=-1: must be at least 0"):
        protocol.choose_rate(_protocol(max_grid_extensions=-1), 1e-3, _improving_as_the_rate_falls([]))


def test_an_interior_choice_and_a_grid_of_one_rate_are_not_extended():
    calls = []
    choice = protocol.choose_rate(_protocol(), 1e-3, _improving_as_the_rate_falls(calls, best=4e-4))
    assert calls == [1e-3, 4e-4, 3e-4] and choice.lr == 4e-4 and choice.statement() == ""
    calls = []
    single = protocol.choose_rate(_protocol(lr_grid=[1e-3]), 1e-3, _improving_as_the_rate_falls(calls))
    assert calls == [1e-3] and single.lr == 1e-3 and single.statement() == ""


def test_missing_selection_runs_leave_no_choice_or_a_provisional_one():
    """A rate of the configured grid without its runs: no choice (as before). A rate past the edge
    without them: the edge choice stands, provisional, and names the rate it waits for."""
    scores = {2e-3: [0.5, 0.5], 1e-3: [0.6, 0.6], 5e-4: [0.7, 0.7]}
    assert protocol.choose_rate(_protocol(lr_grid=[2e-3, 1e-3, 5e-4]), 1e-3, lambda lr: None if lr == 1e-3 else scores[lr]).lr is None
    choice = protocol.choose_rate(_protocol(lr_grid=[2e-3, 1e-3, 5e-4]), 1e-3, scores.get)
    assert (choice.lr, choice.pending) == (5e-4, 2.5e-4)
    assert choice.statement() == ("the choice is the grid's smallest rate and provisional: the selection runs at 0.00025, "
                                  "one step past that edge, have not run yet")
    jobs = protocol.choice_jobs("mzu_cap", _protocol(lr_grid=[2e-3, 1e-3, 5e-4]), 1e-3, choice)
    assert [(j.seed, j.lr) for j in jobs[-2:]] == [(1, 2.5e-4), (2, 2.5e-4)] and len(jobs) == 8


def test_the_budget_rule_states_the_grid_extension_and_the_patience_rule():
    text = protocol.describe(_protocol(), 1e-3, 50, 4, 1, "accuracy", True)
    assert "grid extended one step past the edge the choice sits at (x0.5 below its smallest rate, x2 above its largest)" in text
    assert "until it is interior or 3 rate(s) were added" in text
    assert "patience 4 counted from the first epoch whose dev accuracy beats the dev split's majority-class score" in text
    assert "did not train" in text
    ranking = protocol.describe(_protocol(max_grid_extensions=0), 1e-3, 50, 4, 1, "map", False)
    assert "patience 4 counted from the first epoch (map has no majority-class baseline)" in ranking
    assert "the grid never extended" in ranking
    held = protocol.describe(_protocol(), 1e-3, 50, 4, 1, "accuracy", True, 0.9)
    assert "beats the dev split's majority-class score with a mean training loss under 0.9 x the prior's" in held
    assert "training loss" not in text  # the option unset: the sentence as before
