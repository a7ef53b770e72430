"""The patience rule: early stopping counts from the first epoch that beats the majority-class baseline."""
from __future__ import annotations

from omegaconf import OmegaConf

from rnnbench.metrics import has_majority_baseline, majority_baseline
from rnnbench.results import patience

MAJORITY = 0.5


def test_patience_starts_counting_at_the_first_epoch_that_beats_the_majority_class_score():
    """RCRN Table 4's deep stacks: epochs at chance, then the run takes off. Stuck at the majority
    score for three epochs, then rising: patience 2 counts from epoch 4, so the run reaches its rise
    and stops two epochs after its best (the rule before stopped it at epoch 3, at chance)."""
    curve = [MAJORITY, MAJORITY, MAJORITY, 0.70, 0.80, 0.79, 0.78, 0.77, 0.90]
    run = patience.replay(curve, MAJORITY, patience=2, epoch_cap=20)
    assert (run.epochs_run, run.best_epoch, run.status) == (7, 5, patience.TRAINED)
    # No baseline (a ranking or generation metric): patience counts from epoch 1, as before.
    assert patience.replay(curve, None, patience=2, epoch_cap=20).epochs_run == 3


def test_a_run_that_never_beats_the_majority_class_score_did_not_train():
    """Predicting the majority class ties the baseline: it never beats it. The run goes on to its cap."""
    curve = [0.3, MAJORITY, 0.4, MAJORITY] + [0.45] * 10
    run = patience.replay(curve, MAJORITY, patience=2, epoch_cap=8)
    assert (run.epochs_run, run.status) == (8, patience.DID_NOT_TRAIN)
    assert run.best_epoch == 2  # the best dev epoch is still the one tested
    # lower is better (bits per character): beating means going below
    assert patience.replay([2.0, 1.9, 1.8], 1.95, patience=1, epoch_cap=3, lower_is_better=True).status == patience.TRAINED
    assert not patience.beats(2.0, 1.95, lower_is_better=True) and patience.beats(1.9, 1.95, lower_is_better=True)


def test_a_run_made_before_the_rule_is_judged_from_its_dev_curve():
    """Only a run that never beat the baseline and was stopped early is changed by the rule."""
    assert patience.outcome([0.4, 0.6, 0.55], MAJORITY, epochs_run=3, epoch_cap=50) == patience.TRAINED
    assert patience.outcome([0.4, 0.5, 0.45], MAJORITY, epochs_run=3, epoch_cap=50) == patience.NEEDS_RERUN
    assert patience.outcome([0.4, 0.5, 0.45], MAJORITY, epochs_run=3, epoch_cap=3) == patience.DID_NOT_TRAIN
    assert patience.outcome([0.4, 0.5, 0.45], None, epochs_run=3, epoch_cap=50) == patience.TRAINED


def test_the_baseline_is_the_dev_splits_most_common_label_for_accuracy_only():
    dev = [{"label": 0}, {"label": 1}, {"label": 1}, {"label": 2}]
    assert majority_baseline("accuracy", dev) == 0.5
    assert majority_baseline("map", dev) is None and not has_majority_baseline("map")  # ranking: not defined
    accuracy = OmegaConf.create({"select_metric": "accuracy", "metrics": ["accuracy"]})
    bpc = OmegaConf.create({"select_metric": "bpc", "select_mode": "min", "metrics": ["bpc"]})
    rouge = OmegaConf.create({"select_metric": "rouge_l", "metrics": ["rouge_l"]})
    assert patience.task_baseline(accuracy, dev) == 0.5 and patience.applies(accuracy)
    assert patience.task_baseline(bpc, dev) is None and not patience.applies(bpc)
    assert patience.task_baseline(rouge, dev) is None and not patience.applies(rouge)
