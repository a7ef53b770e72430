"""A comparison defined in memory (rnnbench.campaign.comparison): the experiment composes as a config
file would, its table reads as a registry file would, and the campaign plans it as any table."""
from __future__ import annotations

from pathlib import Path

import pytest

from rnnbench.campaign import comparison
from rnnbench.compose import compose_config
from rnnbench.errors import ConfigError
from rnnbench.campaign.definitions import sweep_of
from rnnbench.results.tables import paper_table

OWN = ["task=text_classification", "task.reader.path=tests/fixtures/data/own/classification.csv"]


def test_the_definition_composes_as_an_experiment_and_reads_as_a_table(tmp_path):
    spec, base = comparison.build("rcrn,bilstm", "bilstm", "3", "1e-3,3e-3", None, tmp_path / "out", OWN)
    comparison.define(spec, base)
    assert spec.name == "text_classification_classification" and spec.experiment == f"compare_{spec.name}"
    cfg = compose_config([f"experiment={spec.experiment}", *spec.extra()])
    assert cfg.table.name == spec.name and cfg.task.name == "text_classification"
    assert list(cfg.table.protocol.seeds) == [1, 2, 3] and list(cfg.table.protocol.lr_grid) == [1e-3, 3e-3]
    assert cfg.table.column == "classification" and cfg.table.metric == "accuracy" and cfg.table.scale == 100
    assert Path(cfg.paths.results_dir) == (tmp_path / "out").absolute()
    assert sweep_of(spec.experiment, spec.extra()) == ["rcrn", "bilstm"]
    table = paper_table(spec.name)
    assert table["ours_only"] and table["comparison"]["baseline"] == "bilstm"
    assert [(c["better"], c["worse"], c["column"]) for c in table["claims"]] == [("rcrn", "bilstm", "classification")]


def test_by_default_the_first_encoder_is_the_baseline_of_five_seeds_and_a_grid_around_the_tasks_rate():
    spec, base = comparison.build("bilstm,rcrn,3l_bilstm", overrides=OWN)
    assert spec.baseline == "bilstm" and spec.seeds == (1, 2, 3, 4, 5)
    lr = float(base.trainer.lr)
    assert spec.lr_grid == (lr, 2 * lr, lr / 2)
    assert spec.out == comparison.OUT / spec.name


def test_the_name_comes_from_the_task_and_its_data():
    assert comparison.default_name(compose_config(["task=text_classification", "task.reader.path=/data/My Reviews.v2.csv"]).task) \
        == "text_classification_my_reviews_v2"
    assert comparison.default_name(compose_config(["task=hf_dataset", "task.reader.name=glue", "task.reader.config=sst2"]).task) \
        == "hf_dataset_glue_sst2"
    assert comparison.default_name(compose_config(["task=trec"]).task) == "trec"


@pytest.mark.parametrize("override", ["encoder.hidden_size=32", "task.head.hidden=50", "+trainer.weight_decay=0",
                                      "table.protocol.select_seeds=3"])
def test_keys_below_the_ones_it_sets_stay_free(override):
    comparison.check_overrides([override])


@pytest.mark.parametrize("override, option", [("encoder=rcrn", "--encoders"), ("seed=3", "--seeds"), ("trainer.lr=0.1", "--lr-grid"),
                                               ("paths.results_dir=x", "--out"), ("experiment=rcrn_table5", "none"),
                                               ("task", "not an override")])
def test_keys_it_sets_itself_are_refused_naming_the_option(override, option):
    with pytest.raises(ConfigError, match=option):
        comparison.check_overrides([override])


def test_a_path_is_passed_to_hydra_unchanged():
    assert comparison.quoted("/tmp/out-1/x.y") == "/tmp/out-1/x.y"
    assert comparison.quoted("/tmp/my results,2") == "'/tmp/my results,2'"
    cfg = compose_config([f"paths.results_dir={comparison.quoted('/tmp/my results,2')}"])
    assert cfg.paths.results_dir == "/tmp/my results,2"
