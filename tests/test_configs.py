"""Every config composes, and every task trains a few batches with every encoder (trainer=smoke).

One smoke test per (task, encoder) pair, marked slow; each task's data is prepared once
per process and shared by its encoders (its pairs form one xdist group, so they run on
one worker). Tasks reading the data folder (files, a hub copy's fallback or GloVe) use
RNNBENCH_DATA, are marked realdata, and skip, saying so, only when it is absent.
Datasets that are not in the development data folder at all (SearchQA, text8,
NarrativeQA's questions, MS MARCO's passages: see docs/tasks.md)
run on tiny files in their original format under tests/fixtures/data.
A task whose head needs a causal encoder (language models) must refuse every
bidirectional encoder with a ConfigError.
"""
from __future__ import annotations

import functools
import math
import sys
from pathlib import Path

import pytest
import yaml
from hydra.errors import ConfigCompositionException
from hydra.utils import get_class
from omegaconf import OmegaConf, open_dict

from rnnbench.compose import CONF_DIR, compose_config, initialize_hydra, sweeper_params
from rnnbench.data.prepare import build_reader, prepare
from rnnbench.encoders.build import known_encoders
from rnnbench.errors import ConfigError
from rnnbench.run import train
from rnnbench.results.tables import paper_table
from rnnbench.training.loop import fit

TASKS = sorted(p.stem for p in (CONF_DIR / "task").glob("*.yaml"))
ENCODERS = known_encoders()
FIXTURE_DATA = Path(__file__).resolve().parent / "fixtures" / "data"
# Tasks smoke-run on their fixture even though the real files are here: tokenising the whole
# corpus would take minutes of every CI run; their reader tests check every real file.
FIXTURE_TASKS = {"race": "tests/data/test_race.py parses and checks all 27,933 real RACE files",
                 "imdb": "tests/data/test_imdb.py reads all 50,000 real reviews (untokenised) and tokenises the fixtures"}
FIXTURE_OVERRIDES = {"imdb": ["task.reader.dev_size=4"]}  # the fixture's 16 training reviews cannot give 2,500 to dev
EXPERIMENTS = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))
# Tasks on the user's own files name no file by default: the smoke runs give them their fixture's.
OWN_DATA = {
    "text_classification": ["task.reader.path=own/classification.csv"],
    "text_pair_classification": ["task.reader.path=own/pairs.jsonl"],
}
# Hugging Face datasets: the same fixtures saved with save_to_disk (tests/data/test_hf_dataset.py), per run.
HF_TASKS = {"hf_dataset": False, "hf_dataset_pair": True}  # task: a pair task
# The generic tasks use the classifier and pair heads that trec and scitail smoke-run with every
# encoder kind: one encoder each checks their wiring (reader, config, head) at a fraction of the time.
ONE_ENCODER = {*OWN_DATA, *HF_TASKS}


@pytest.mark.parametrize("task", TASKS)
def test_every_task_composes(task):
    """(Every encoder config composes in tests/encoders/test_contract.py; every pair in the smoke runs.)"""
    cfg = compose_config([f"task={task}"])
    assert cfg.task.name and cfg.task.select_metric in cfg.task.metrics


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_experiments_compose(experiment):
    cfg = compose_config([f"experiment={experiment}"])
    assert experiment.startswith(cfg.table.name)  # rcrn_table8_wikiqa fills part of rcrn_table8
    params = sweeper_params([f"experiment={experiment}"])
    # The sweep runs the protocol's seeds and known encoders.
    assert [int(s) for s in params["seed"].split(",")] == [int(s) for s in cfg.table.protocol.seeds]
    assert set(params["encoder"].split(",")) <= set(ENCODERS)
    if not cfg.table.caption:  # a paper's table: its numbers are in the registry
        assert paper_table(cfg.table.name)["rows"]


@pytest.mark.parametrize("overrides", [[], ["experiment=rcrn_table5"], ["experiment=mzu_table6_restaurant_a_token", "encoder=mzu_cap"],
                                       ["experiment=rcrn_table1_apparel", "encoder=rcrn", "seed=3", "trainer.lr=0.002"],
                                       ["experiment=rcrn_table5", "encoder=bilstm", "paths.results_dir=/tmp/out",
                                        "paths.runs_dir=${paths.results_dir}/runs", "seed=2"]])
def test_a_kept_composition_is_what_hydra_composes_without_its_node(overrides):
    """compose_config keeps one composition with Hydra's node (for its sweep) and gives it without the
    node: the same config, flags included, as Hydra's own compose without it."""
    from hydra import compose

    kept = compose_config(overrides)
    initialize_hydra()
    fresh = compose(config_name="config", overrides=overrides)
    assert OmegaConf.to_yaml(kept) == OmegaConf.to_yaml(fresh)
    assert "hydra" not in kept and kept._get_flag("struct") == fresh._get_flag("struct")
    params = compose(config_name="config", overrides=overrides, return_hydra_config=True).hydra.sweeper.params or {}
    assert sweeper_params(overrides) == {k: str(v) for k, v in params.items()}


def _fresh_compositions(monkeypatch, tmp_path) -> list:
    """No composition kept in this process or on disk; the list of the compositions made after."""
    import rnnbench.compose as compose_module

    monkeypatch.setattr(compose_module, "_COMPOSED", {})
    monkeypatch.setattr(compose_module, "_SWEEPS", {})
    monkeypatch.setenv("RNNBENCH_CACHE", str(tmp_path / "cache"))
    calls = []
    real = compose_module._compose
    monkeypatch.setattr(compose_module, "_compose", lambda *a: calls.append(a) or real(*a))
    return calls


def test_an_experiment_is_composed_once_whatever_folders_its_callers_name(monkeypatch, tmp_path):
    """Folders (``paths.*=``) are applied to a copy of the composition of the other overrides, so
    two callers naming their own folders share one composition, and each gets its own folders."""
    calls = _fresh_compositions(monkeypatch, tmp_path)
    overrides = ["experiment=rcrn_table2", "encoder=rcrn", "seed=4"]
    first = compose_config([*overrides, "paths.results_dir=/tmp/first"])
    second = compose_config([*overrides, "paths.results_dir=/tmp/second", "paths.runs_dir=/tmp/second/runs"])
    assert len(calls) == 1
    assert (first.paths.results_dir, second.paths.results_dir, second.paths.runs_dir) == ("/tmp/first", "/tmp/second", "/tmp/second/runs")
    assert compose_config(overrides).paths.results_dir == compose_config([]).paths.results_dir  # the composition kept its own
    with pytest.raises(ConfigCompositionException, match="paths.nowhere"):  # a folder the schema lacks: Hydra's error, as before
        compose_config([*overrides, "paths.nowhere=/tmp"])


def test_a_composition_kept_on_disk_is_the_one_composed_and_serves_another_process(monkeypatch, tmp_path):
    """A composition is kept on disk (rnnbench.compose_cache) and read by a process that has not composed
    it: the same config, flags and sweep as Hydra's own compose, without composing."""
    import rnnbench.compose as compose_module
    from hydra import compose

    calls = _fresh_compositions(monkeypatch, tmp_path)
    overrides = ["experiment=mzu_table6_laptop_fn3", "encoder=dt_gru"]
    compose_config(overrides)
    assert len(calls) == 1 and len(list((tmp_path / "cache" / "compositions").glob("*/*.pkl"))) == 1
    monkeypatch.setattr(compose_module, "_COMPOSED", {})  # another process: nothing composed in it yet
    monkeypatch.setattr(compose_module, "_SWEEPS", {})
    kept = compose_config(overrides)
    assert len(calls) == 1  # read, not composed
    initialize_hydra()
    fresh = compose(config_name="config", overrides=overrides, return_hydra_config=True)
    assert sweeper_params(overrides) == {k: str(v) for k, v in (fresh.hydra.sweeper.params or {}).items()}
    with open_dict(fresh):
        del fresh["hydra"]
    assert OmegaConf.to_yaml(kept) == OmegaConf.to_yaml(fresh) and kept._get_flag("struct") == fresh._get_flag("struct")


def test_a_damaged_composition_on_disk_is_composed_again(monkeypatch, tmp_path):
    import rnnbench.compose as compose_module

    calls = _fresh_compositions(monkeypatch, tmp_path)
    expected = OmegaConf.to_yaml(compose_config(["experiment=rcrn_table5"]))
    (entry,) = (tmp_path / "cache" / "compositions").glob("*/*.pkl")
    entry.write_bytes(entry.read_bytes()[:100])
    monkeypatch.setattr(compose_module, "_COMPOSED", {})
    assert OmegaConf.to_yaml(compose_config(["experiment=rcrn_table5"])) == expected and len(calls) == 2


def test_the_key_of_a_kept_composition_changes_with_any_config_or_source_file(tmp_path):
    from rnnbench.compose_cache import inputs_digest

    conf, package = tmp_path / "conf", tmp_path / "pkg"
    (conf / "encoder").mkdir(parents=True)
    package.mkdir()
    (conf / "config.yaml").write_text("a: 1\n")
    (conf / "encoder" / "bilstm.yaml").write_text("hidden: 100\n")
    (package / "options.py").write_text("X = 1\n")
    before = inputs_digest(conf, package)
    (conf / "encoder" / "bilstm.yaml").write_text("hidden: 101\n")
    after_config = inputs_digest(conf, package)
    (package / "options.py").write_text("X = 2\n")
    after_source = inputs_digest(conf, package)
    (conf / "encoder" / "bilstm.yaml").rename(conf / "encoder" / "gru.yaml")
    assert len({before, after_config, after_source, inputs_digest(conf, package)}) == 4


def test_only_the_most_recent_digests_are_kept_on_disk(monkeypatch, tmp_path):
    import os

    from rnnbench import compose_cache

    monkeypatch.setenv("RNNBENCH_CACHE", str(tmp_path))
    old = [tmp_path / "compositions" / f"digest{i}" for i in range(compose_cache.KEEP + 2)]
    for i, folder in enumerate(old):
        folder.mkdir(parents=True)
        os.utime(folder, (1_000_000 + i, 1_000_000 + i))  # digest0 the oldest
    entry = compose_cache.entry(CONF_DIR, ["experiment=rcrn_table5"], "config")
    compose_cache.store(entry, ("cfg", {}))
    kept = sorted(d.name for d in (tmp_path / "compositions").iterdir())
    assert len(kept) == compose_cache.KEEP and compose_cache.load(entry) == ("cfg", {})
    assert "digest0" not in kept and "digest2" not in kept and f"digest{compose_cache.KEEP + 1}" in kept


def test_an_experiment_defined_in_memory_is_part_of_the_key(monkeypatch, tmp_path):
    """An experiment in Hydra's ConfigStore (``rnnbench compare``'s) is not in the files the key digests:
    its content is in the key, so redefining it is another composition."""
    from hydra.core.config_store import ConfigNode, ConfigStore

    from rnnbench import compose_cache

    monkeypatch.setenv("RNNBENCH_CACHE", str(tmp_path))
    repo = ConfigStore.instance().repo
    defined = lambda value: {**repo, "experiment": {"x.yaml": ConfigNode("x.yaml", OmegaConf.create({"a": value}), "experiment", "_global_", None)}}
    monkeypatch.setattr(ConfigStore.instance(), "repo", defined(1))
    compose_cache.store(compose_cache.entry(CONF_DIR, ["experiment=x"], "config"), ("cfg", {}))
    assert compose_cache.load(compose_cache.entry(CONF_DIR, ["experiment=x"], "config")) == ("cfg", {})
    monkeypatch.setattr(ConfigStore.instance(), "repo", defined(2))
    assert compose_cache.load(compose_cache.entry(CONF_DIR, ["experiment=x"], "config")) is None


@functools.cache
def _own_yaml(group: str, name: str) -> dict:
    return yaml.safe_load((CONF_DIR / group / f"{name}.yaml").read_text())


def _parents(group: str, name: str) -> list[str]:
    """The files of the same group that a config's defaults list builds it on (gru1: lstm1)."""
    return [e for e in _own_yaml(group, name).get("defaults") or [] if isinstance(e, str) and e != "_self_"]


def _config_yaml(group: str, name: str) -> dict:
    """A config's YAML over the files of its group that its defaults list (scitail_partial:
    scitail; gru1: lstm1: bilstm), read without Hydra so collection stays fast; each smoke run
    checks what is read from it. ``defaults`` keeps the other groups' overrides it names."""
    spec = _own_yaml(group, name)
    merged: dict = {"defaults": []}
    for parent in _parents(group, name):
        merged = OmegaConf.to_container(OmegaConf.merge(merged, _config_yaml(group, parent)))
    merged["defaults"] += [e for e in spec.get("defaults") or [] if isinstance(e, dict)]
    own = {k: v for k, v in spec.items() if k != "defaults"}
    return {**OmegaConf.to_container(OmegaConf.merge(merged, own)), "defaults": merged["defaults"]}


def _task_yaml(task: str) -> dict:
    return _config_yaml("task", task)


def _reads_data_folder(task: str) -> bool:
    """Whether the task reads RNNBENCH_DATA: its files, its hub copy's fallback or a GloVe file."""
    spec = _task_yaml(task)
    reader = get_class(spec["task"]["reader"]["_target_"])
    return bool(reader.files or reader.hub_id or {"override /embedding": "random"} not in spec["defaults"])


def _smoke_encoders() -> list[str]:
    """One encoder config per class, direction and cell (the base config, else the first by name): the smoke runs check
    a task's wiring with each kind of encoder. The other configs of a kind differ in sizes and
    options (layers, MZU composition, where directions meet) that their own unit tests and the
    contract tests check; smoke-running every task with each of them too would add minutes to CI."""
    def depth(name: str) -> int:  # how many encoder files it inherits from: the base config first
        parents = _parents("encoder", name)
        return 1 + depth(parents[0]) if parents else 0

    kinds: dict[tuple, str] = {}
    for name in sorted(ENCODERS, key=lambda e: (depth(e), e)):
        spec = _config_yaml("encoder", name)
        kinds.setdefault((spec["_target_"], spec.get("bidirectional"), spec.get("cell")), name)
    return sorted(kinds.values())


SMOKE_ENCODERS = _smoke_encoders()


def test_every_kind_of_encoder_is_smoke_run():
    assert {"bilstm", "bigru", "gru1", "dt_gru", "dcu", "sim_dcu", "fhe", "rcrn"} <= set(SMOKE_ENCODERS)
    assert "3l_bilstm" not in SMOKE_ENCODERS and sum(e.startswith("mzu_") for e in SMOKE_ENCODERS) == 1
    assert any(_config_yaml("encoder", e).get("bidirectional") is False for e in SMOKE_ENCODERS)  # a causal one for the LMs


def _smoke_pairs():
    for task in TASKS:
        reads = _reads_data_folder(task)
        for encoder in SMOKE_ENCODERS[:1] if task in ONE_ENCODER else SMOKE_ENCODERS:
            # One xdist group per task: its pairs run on one worker, which prepares the data once.
            marks = [pytest.mark.slow, pytest.mark.xdist_group(f"smoke-{task}"), *([pytest.mark.realdata] if reads else [])]
            yield pytest.param(task, encoder, reads, marks=marks, id=f"{task}-{encoder}")


_prepared: dict = {}  # the last task's prepared data: its pairs run one after another


def _prepare_once(task: str, cfg):
    if _prepared.get("task") != task:
        _prepared.clear()
        _prepared.update(task=task, data=prepare(cfg))
    return _prepared["data"]


@pytest.mark.parametrize("task, encoder, reads_data", list(_smoke_pairs()))
def test_smoke_run(task, encoder, reads_data, tmp_path, request, monkeypatch):
    """Every task trains a few batches with every kind of encoder (``SMOKE_ENCODERS``; one test
    per pair: a failing encoder hides no other); a causal head refuses a bidirectional encoder."""
    # embedding.min_coverage=0: the fixtures' stand-in GloVe file (36 words) covers 9-25% of their vocabularies
    overrides = [f"task={task}", f"encoder={encoder}", "trainer=smoke", f"paths.runs_dir={tmp_path}", "embedding.min_coverage=0",
                 *OWN_DATA.get(task, [])]
    if task in HF_TASKS:
        from tests.data.test_hf_dataset import saved_dataset

        overrides.append(f"task.reader.path={saved_dataset(tmp_path, pair=HF_TASKS[task])}")
    if reads_data:
        monkeypatch.setenv("RNNBENCH_DATA", str(request.getfixturevalue("real_data")))  # skips if absent
    cfg = compose_config(overrides)  # paths.data_dir reads RNNBENCH_DATA
    reader = build_reader(cfg.task.reader)
    assert reads_data == bool(reader.files or reader.hub_id or cfg.embedding.path), f"{task}: _reads_data_folder is wrong"
    if task in FIXTURE_TASKS or (reader.files and any(not p.exists() for p in reader.input_paths(Path(cfg.paths.data_dir)))):
        # a dataset absent from the development data, or too slow to tokenise whole: its fixture in the original format
        monkeypatch.setenv("RNNBENCH_DATA", str(FIXTURE_DATA))
        cfg = compose_config([*overrides, *FIXTURE_OVERRIDES.get(task, [])])
        assert all(p.exists() for p in reader.input_paths(FIXTURE_DATA)), f"{task}: neither real nor fixture files"
    if "hidden_size" in cfg.encoder:  # small encoders: this checks wiring, not learning
        cfg.encoder.hidden_size = 16
    data = _prepare_once(task, cfg)
    run_dir = Path(tmp_path) / encoder
    run_dir.mkdir()
    if _needs_causal(cfg) and not _is_causal(cfg):
        with pytest.raises(ConfigError, match="causal"):
            fit(cfg, run_dir, say=lambda _: None, data=data)
        return
    if encoder == "none" and not _has_weights(cfg, data):
        with pytest.raises(ConfigError, match="nothing to train"):  # no encoder, frozen embeddings, a head without weights (rankers)
            fit(cfg, run_dir, say=lambda _: None, data=data)
        return
    record = fit(cfg, run_dir, say=lambda _: None, data=data)
    metric = cfg.task.select_metric
    assert math.isfinite(record["test"][metric]), (task, encoder)
    if cfg.task.get("select_mode", "max") == "max":
        assert 0.0 <= record["test"][metric] <= 1.0, (task, encoder)
    assert (run_dir / "predictions.jsonl").read_text().count("\n") > 0


def test_the_language_models_have_a_causal_encoder():
    """A causal head refuses every bidirectional encoder, and the smoke runs count that refusal
    as a pass: without a causal encoder no language-model task would train at all."""
    heads = {t: _task_yaml(t)["task"]["head"]["_target_"] for t in TASKS}
    assert {t for t, head in heads.items() if get_class(head).requires_causal_encoder} >= {"ptb_char", "text8"}
    assert any(_is_causal(compose_config([f"encoder={e}"])) for e in ENCODERS)


def _has_weights(cfg, data) -> bool:
    from rnnbench.training.model import build_model

    return any(p.requires_grad for p in build_model(cfg, data).parameters())


def _needs_causal(cfg) -> bool:
    return get_class(cfg.task.head._target_).requires_causal_encoder


def _is_causal(cfg) -> bool:
    from rnnbench.encoders.build import build_encoder

    return build_encoder(cfg.encoder, 8).causal


def test_default_job_runs_end_to_end(tmp_path):
    """`python train.py` defaults (picking task, BiLSTM), shortened: a record and a done marker."""
    cfg = compose_config(["trainer=smoke", f"paths.runs_dir={tmp_path}"])
    assert cfg.task.name == "picking" and cfg.encoder.name == "bilstm"
    record = train(cfg, say=lambda _: None)
    run_dir = Path(record["run_dir"])
    assert (run_dir / "done").exists() and (run_dir / "record.json").exists()
    for key in ("identity", "git_commit", "seed", "encoder_parameters", "dev", "test", "seconds_per_epoch", "tokens_per_second", "peak_memory_mb", "hardware", "config"):
        assert key in record
    # this run's own peak where the platform resets the count (Linux, CUDA), else the process's
    assert record["peak_memory_scope"] == ("run" if sys.platform.startswith("linux") else "process")
