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


def test_with_start_below_prior_a_chance_dev_score_at_the_priors_loss_does_not_start_the_count():
    """RCRN Table 1 at rung 1, Health, the 3L-BiLSTM's seed 1 (results/diagnostics/slow_start.md): its dev
    accuracy beat the majority class (0.51) by chance at epochs 2, 4 and 5 while its training loss stayed at
    the prior's (ln 2 = 0.693), and patience 4 stopped it at epoch 9. Counting only once the training loss is
    under 0.9 x the prior's, it goes on; it took off at epoch 11 (0.561) in the run without early stopping."""
    dev = [0.51, 0.575, 0.49, 0.585, 0.66, 0.525, 0.49, 0.51, 0.51, 0.55, 0.705]
    loss = [0.6954, 0.7038, 0.6972, 0.6820, 0.668, 0.653, 0.694, 0.680, 0.654, 0.668, 0.561]
    prior = patience.prior_loss([{"label": 0}, {"label": 1}] * 700)
    assert abs(prior - 0.6931) < 1e-4
    assert patience.started(dev[:9], 0.51)  # the dev score alone: started at epoch 2
    assert not patience.started(dev[:10], 0.51, losses=loss[:10], below=0.9 * prior)
    assert patience.started(dev, 0.51, losses=loss, below=0.9 * prior)
    assert not patience.started([0.7], 0.51, losses=[None], below=0.6)  # no training loss: not started
    assert patience.start_bound(0.9, 0.51, [{"label": 0}, {"label": 1}]) == 0.9 * prior
    assert patience.start_bound(None, 0.51, [{"label": 0}]) is None  # the option unset
    assert patience.start_bound(0.9, None, [{"label": 0}]) is None  # no majority baseline: counts from epoch 1
    assert patience.start_bound(0.9, 0.5, [{"text": "x"}]) is None  # no labels
    assert patience.prior_loss([{"label": 3}] * 5) == 0.0
