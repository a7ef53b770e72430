"""The reproduction campaign's configs: task defaults on complete data with named partial
variants, a one-line error when the complete data is missing, the table experiments' protocol and
footnotes, the LSTM baseline rows and the make targets. (tests/test_configs.py composes every task and
experiment and smoke-runs every task with every encoder, the new ones included.)"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from rnnbench.campaign.definitions import experiments_of
from rnnbench.compose import CONF_DIR, compose_config, sweeper_params
from rnnbench.data.prepare import build_reader
from rnnbench.errors import DatasetMissingError
from rnnbench.results.identity import identity_config
from rnnbench.results.tables import paper_table

REPO = CONF_DIR.parent
FIXTURE_DATA = REPO / "tests" / "fixtures" / "data"
EXPERIMENTS = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))


def _experiment(name: str):
    return compose_config([f"experiment={name}"])


def _sweep(name: str) -> dict[str, str]:
    return sweeper_params([f"experiment={name}"])


def _flatten(node, prefix=()) -> dict:
    if isinstance(node, dict):
        return {k: v for key, value in node.items() for k, v in _flatten(value, (*prefix, key)).items()}
    return {prefix: node}


# task -> (the complete-data reader settings, its partial variant's, the files the partial copy lacks)
FULL_AND_PARTIAL = {
    "snli": ({"train_file": "snli/snli_1.0_train.jsonl"}, {"train_file": "snli/snli_1.0_train.first1024.jsonl"},
             ["snli/snli_1.0_train.jsonl"]),
    "scitail": ({"format": "tsv", "train_from_dev": None}, {"format": "qnn", "train_from_dev": 0.8, "dev_split_by": "hypothesis"},
                [f"scitail/SciTailV1.1/tsv_format/scitail_1.0_{s}.tsv" for s in ("train", "dev", "test")]),
    "trecqa": ({"train_split": "train-all"}, {"train_split": "train"}, ["trecqa/castorini_format/train-all/b.toks"]),
}


@pytest.mark.parametrize("task", sorted(FULL_AND_PARTIAL))
def test_defaults_are_the_complete_data_and_the_partial_variant_differs_only_in_its_data(task):
    full_settings, partial_settings, _ = FULL_AND_PARTIAL[task]
    full, partial = compose_config([f"task={task}"]), compose_config([f"task={task}_partial"])
    assert {k: full.task.reader[k] for k in full_settings} == full_settings
    assert {k: partial.task.reader[k] for k in partial_settings} == partial_settings
    assert partial.task.name == task  # the same task: its runs are filed and tabled as the task's
    a, b = _flatten(identity_config(full)), _flatten(identity_config(partial))
    assert {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)} == {("task", "reader", k) for k in partial_settings}


def _partial_copy(task: str, root: Path) -> Path:
    """The fixture files less those the partial copies lack."""
    _, _, lacking = FULL_AND_PARTIAL[task]
    shutil.copytree(FIXTURE_DATA / task, root / task)
    for name in lacking:
        (root / name).unlink()
    return root


@pytest.mark.parametrize("task", sorted(FULL_AND_PARTIAL))
def test_missing_complete_data_is_one_line_naming_the_files_and_where_to_get_them(task, tmp_path):
    root = _partial_copy(task, tmp_path)
    _, _, lacking = FULL_AND_PARTIAL[task]
    reader = build_reader(compose_config([f"task={task}"]).task.reader)
    with pytest.raises(DatasetMissingError) as err:
        reader.load(root)
    message = str(err.value)
    assert "\n" not in message and all(name in message for name in lacking) and str(root) in message
    assert {"snli": "nlp.stanford.edu/projects/snli", "scitail": "allenai.org/data/scitail",
            "trecqa": "train_split=train"}[task] in message  # where to get it (TrecQA: and how to do without)


def test_the_complete_data_defaults_read_their_fixture_files():
    for task in FULL_AND_PARTIAL:
        splits = build_reader(compose_config([f"task={task}"]).task.reader).load(FIXTURE_DATA)
        assert all(splits[s] for s in ("train", "dev", "test")), task


@pytest.mark.parametrize("experiment, task, named", [
    ("rcrn_table6", "snli_partial", "snli_partial"),
    ("rcrn_table7", "scitail_partial", "scitail_partial"),
    ("rcrn_table8_trecqa", "trecqa_partial", "trecqa_partial"),
    ("rcrn_table8_trecqa_ap", "trecqa_partial", "trecqa_partial"),
])
def test_tables_here_use_the_partial_variants_and_say_so(experiment, task, named):
    cfg, variant = _experiment(experiment), compose_config([f"task={task}"])
    assert cfg.task.reader == variant.task.reader
    assert named in cfg.table.data_note


@pytest.mark.parametrize("experiment", ["rcrn_table2", "rcrn_table3", "lstm_odyssey_table1_baseline"])
def test_sst_tables_say_they_train_on_sentences_and_how_to_train_on_phrases(experiment):
    cfg = _experiment(experiment)
    assert cfg.task.reader.phrases is False
    assert "sentences only" in cfg.table.data_note and "task.reader.phrases=true" in cfg.table.data_note


CAMPAIGN = [e for e in EXPERIMENTS if re.match(r"(rcrn_table[1234678]|lstm_odyssey_table[12])", e)]


@pytest.mark.parametrize("experiment", CAMPAIGN)
def test_campaign_experiments_fix_threads_and_state_their_protocol(experiment):
    cfg = _experiment(experiment)
    protocol = cfg.table.protocol
    assert cfg.trainer.num_threads == 1
    if experiment.startswith("rcrn_table1_"):  # Apparel at the same rung chooses each encoder's rate for every domain; 3 seeds a domain
        assert len(protocol.seeds) >= 3
        apparel = "rcrn_table1_apparel" + ("_rung1" if experiment.endswith("_rung1") else "")
        assert protocol.lr_from == (None if experiment == apparel else apparel)
    else:
        assert len(protocol.seeds) >= 5 and not protocol.lr_from
    assert protocol.lr_grid or protocol.lr_from
    assert _sweep(experiment)["seed"] == ",".join(map(str, protocol.seeds))
    if cfg.trainer.optimizer == "adam" and experiment.startswith("rcrn") and not protocol.lr_from:
        # the paper's grid first (a tie goes to the first rate), then any rate added when a choice fell on its edge;
        # or its first rate alone (IMDb budget)
        grid = list(protocol.lr_grid)
        assert grid[:3] == [1.0e-3, 4.0e-4, 3.0e-4] or grid == [1.0e-3]
    if experiment == "rcrn_table2":
        assert len(protocol.seeds) >= 10
    if experiment == "rcrn_table3":
        assert len(protocol.seeds) >= 15


@pytest.mark.parametrize("task", ["sst5", "sst2", "imdb", "snli", "scitail", "trecqa", "wikiqa", "amazon_MR"])
def test_tasks_train_to_convergence_by_default(task):
    trainer = compose_config([f"task={task}"]).trainer
    assert (trainer.epochs, trainer.patience) == (50, 4)


def test_amazon_experiments_fill_every_domain_column_once_at_each_rung():
    registry = set(paper_table("rcrn_table1")["rows"][0]["values"]) - {"Macro Avg"}
    for rung in paper_table("rcrn_table1")["settings"]["rungs"]:
        variant = f"rung{rung}" if rung else None
        columns = [_experiment(e).table.column for e in EXPERIMENTS
                   if e.startswith("rcrn_table1_") and _experiment(e).table.variant == variant]
        assert sorted(columns) == sorted(registry), rung


LADDER_TABLES = ["mzu_table6", "rcrn_table1", "rcrn_table2", "rcrn_table3", "rcrn_table4", "rcrn_table5", "rcrn_table8"]


@pytest.mark.parametrize("table", LADDER_TABLES)
def test_every_complete_data_table_says_which_rung_it_is_run_at_and_the_gap_it_leaves(table):
    """The registry's ``settings`` (the page's "Settings" line), or, where its claims are decided over
    an open choice instead (MZU Table 6), a ``setting_note`` on the experiments of its rung."""
    registry = paper_table(table)
    assert "regime_ladder" in registry
    if not registry.get("open_choices"):
        assert registry["settings"]["chosen"] in registry["settings"]["rungs"] and "gap" in registry["settings"]["why"]
        return
    at_a_rung = [cfg for cfg in map(_experiment, experiments_of(table)) if (cfg.table.variant or "").startswith("rung")]
    assert at_a_rung
    for cfg in at_a_rung:
        assert cfg.table.setting_note.startswith(f"Rung {cfg.table.variant[4:]} (") and "rest of the gap" in cfg.table.setting_note


def test_the_complete_data_tables_are_those_that_climb_the_ladder():
    registries = sorted(p.stem for p in (REPO / "src" / "rnnbench" / "results" / "paper_numbers").glob("*.yaml"))
    assert [t for t in registries if "regime_ladder" in paper_table(t)] == LADDER_TABLES


def _rows_filled(table: str) -> dict[tuple[str, str | None], str]:
    filled = {}
    for e in EXPERIMENTS:
        if e == table or e.startswith(f"{table}_"):
            cfg = _experiment(e)
            for encoder in _sweep(e)["encoder"].split(","):
                assert (encoder, cfg.table.variant) not in filled, (e, filled.get((encoder, cfg.table.variant)))
                filled[(encoder, cfg.table.variant)] = e
    return filled


@pytest.mark.parametrize("table", ["lstm_odyssey_table1", "lstm_odyssey_table2"])
def test_every_lstm_baseline_row_is_filled_by_one_experiment(table):
    filled = _rows_filled(table)
    for row in paper_table(table)["rows"]:
        if row.get("encoder"):
            assert (row["encoder"], row.get("variant")) in filled, row["model"]


def test_lstm_baseline_table1_has_a_row_per_trick_each_adding_one_change():
    """Compounding, as the paper's Figure 4: each row is the row it builds on plus one trick."""
    def job(e):
        return compose_config([f"experiment={e}", f"encoder={_sweep(e)['encoder']}"])

    base = job("lstm_odyssey_table1_baseline")
    assert (base.encoder.num_layers, base.encoder.hidden_size, base.encoder.forget_bias, base.encoder.dropout) == (2, 170, 0.0, 0.0)
    assert (base.task.head.readout, base.task.head.hidden, base.trainer.optimizer, base.trainer.lr) == ("final", 0, "adam", 1.0e-4)
    steps = {  # experiment: (the row it builds on, {key: value} it changes)
        "fb": ("baseline", {("encoder", "forget_bias"): 1.0}),
        "dropout": ("fb", {("encoder", "dropout"): 0.5, ("task", "head", "dropout"): 0.5}),
        "mc_mean": ("dropout", {("trainer", "mc_dropout_samples"): 60, ("trainer", "mc_dropout_combine"): "mean"}),
        "mc_vote": ("dropout", {("trainer", "mc_dropout_samples"): 60}),
        "pool": ("mc_vote", {("task", "head", "embed_avg_pool"): True}),
        "resv1": ("pool", {("encoder", "residual"): "v1"}),
        "resv2": ("pool", {("encoder", "residual"): "v2"}),
        "large": ("dropout", {("encoder", "hidden_size"): 800}),
    }
    for name, (parent, change) in steps.items():
        a, b = _flatten(identity_config(job(f"lstm_odyssey_table1_{parent}"))), _flatten(identity_config(job(f"lstm_odyssey_table1_{name}")))
        diff = {k: b.get(k) for k in a.keys() | b.keys() if a.get(k) != b.get(k)}
        assert diff == change, name
    bi = job("lstm_odyssey_table1_bi")
    assert bi.encoder.name == "2l_bilstm" and bi.encoder.shared_weights and bi.encoder.bidirectional


STAND_IN_TABLES = sorted(p.stem for p in (REPO / "src" / "rnnbench" / "results" / "paper_numbers").glob("*.yaml")
                         if "stand_ins" in paper_table(p.stem))


@pytest.mark.parametrize("table", STAND_IN_TABLES)
def test_stand_ins_map_a_paper_row_to_one_of_ours_that_differs_from_its_experiment_only_where_declared(table):
    """A claim on a paper row we cannot run is tested on the row that stands in for it (claims.py): the
    paper row must exist, our row must be filled by an experiment, and the two experiments' runs must
    differ in exactly the keys the registry declares beside its reason (`differs_in`)."""
    registry, filled = paper_table(table), _rows_filled(table)
    declared = registry["stand_ins"]
    assert declared["why"] and declared["differs_in"]
    differs_in = {tuple(key.split(".")) for key in declared["differs_in"]}

    def job(experiment: str, encoder: str):
        return _flatten(identity_config(compose_config([f"experiment={experiment}", f"encoder={encoder}"])))

    for paper_row, ours in declared["rows"].items():
        paper_encoder, _, paper_variant = paper_row.partition("/")
        our_encoder, _, our_variant = ours.partition("/")
        assert paper_encoder == our_encoder, paper_row
        assert any(r.get("encoder") == paper_encoder and (r.get("variant") or "") == paper_variant for r in registry["rows"]), paper_row
        a, b = job(filled[(paper_encoder, paper_variant or None)], paper_encoder), job(filled[(our_encoder, our_variant)], our_encoder)
        assert {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)} == differs_in, paper_row


def test_classifier_readout_option_keeps_earlier_identities():
    """readout: pool (the classification tasks' default) is left out of a run's identity."""
    for task in ("sst5", "amazon_MR", "trec"):
        head = identity_config(compose_config([f"task={task}"]))["task"]["head"]
        assert "readout" not in head
    head = identity_config(compose_config(["task=sst5", "task.head.readout=final"]))["task"]["head"]
    assert head["readout"] == "final"


def test_the_makefile_holds_no_table_lists():
    """One definition per table: the experiment configs. The Makefile names no experiment; its table
    targets are generic (make table T=..., make table-SHORT) and `make help` lists the tables from the configs."""
    from rnnbench.campaign.definitions import tables

    text = (REPO / "Makefile").read_text()
    named = {e for e in EXPERIMENTS if re.search(rf"\b{e}\b", text)} - set(tables())  # a table's name as an example is fine
    assert not named, f"the Makefile names experiments: {sorted(named)}"
    dry = subprocess.run(["make", "-n", "--no-print-directory", "table-fhe-2-small", "ARGS=--plan"], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout
    assert "-m rnnbench table fhe-2-small --plan" in dry


def test_every_table_has_experiments_in_a_stated_order_and_its_parts_exist():
    from rnnbench.campaign import definitions

    for table in definitions.tables():
        if table in definitions.benchmarks():
            continue
        members = definitions.experiments_of(table)
        assert members and set(members) <= set(EXPERIMENTS)
        for part in definitions.parts(table):
            assert definitions.to_run(table, part=part)
    assert definitions.experiments_of("rcrn_table1")[:2] == ["rcrn_table1_mr", "rcrn_table1_apparel"]  # the smallest first


@pytest.mark.slow
def test_the_definitions_read_what_hydra_composes():
    """The table, order, part and not_run the campaign reads off the YAML files (fast) are what composing
    each experiment gives; and the seeds of `train.py -m experiment=...`'s plain sweep are the protocol's
    (the sweeper reads them from table.protocol.seeds through the ``sweep`` resolver)."""
    from rnnbench.campaign import definitions

    for e in definitions.all_experiments():
        table = compose_config([f"experiment={e.name}"]).table
        sweep = sweeper_params([f"experiment={e.name}"]).get("seed", "")
        if sweep and table and table.protocol.seeds:
            assert [int(s) for s in sweep.split(",")] == list(table.protocol.seeds), e.name
        got = (e.table, e.order, e.part, e.not_run)
        want = (table.name if table else None, int(table.order) if table else 0, str(table.part or "") if table else "",
                str(table.not_run or "") if table else "")
        assert got == want, e.name


# FHE's CPU-sized experiments and the paper-sized parents they shrink (conf/variant/fhe_small.yaml)
FHE_SMALL = {"fhe_table2_small": "fhe_table2", "fhe_table2_small_fhe": "fhe_table2_fhe",
             "fhe_table4_small": "fhe_table4", "fhe_table4_small_fhe": "fhe_table4_fhe"}


@pytest.mark.parametrize("small, parent", sorted(FHE_SMALL.items()))
@pytest.mark.parametrize("encoder", ["lstm1", "lstm2", "fhe"])
def test_fhe_small_variant_changes_only_size_and_schedule(small, parent, encoder):
    """Each small experiment is its paper-sized parent with the variant's four settings, nothing else:
    the variant is shared, so a change to it moves all four tables' runs together."""
    runs = [identity_config(compose_config([f"experiment={name}", f"encoder={encoder}"])) for name in (small, parent)]
    ours, paper = (_flatten(r) for r in runs)
    changed = {key for key in ours.keys() | paper.keys() if ours.get(key) != paper.get(key)}
    assert changed == {("encoder", "hidden_size"), ("trainer", "lr"), ("trainer", "epochs"), ("trainer", "patience")}
    assert (ours[("encoder", "hidden_size")], ours[("trainer", "lr")]) == (64, 1e-3)
    assert (ours[("trainer", "epochs")], ours[("trainer", "patience")]) == (60, 10)
    table = _experiment(small).table
    assert table.variant == "small" and table.data_note.startswith('Variant "small" (ours, CPU budget): encoder hidden 64')


def test_fhe_lambda1_row_changes_only_the_penalty_weight():
    """The small variant's extra FHE row differs from the small FHE row in lambda alone (and in the
    variant that names it in the table), so its runs stand beside the same LSTM rows."""
    runs = [identity_config(compose_config([f"experiment={name}", "encoder=fhe"]))
            for name in ("fhe_table4_small_fhe_lambda1", "fhe_table4_small_fhe")]
    ours, small = (_flatten(r) for r in runs)
    changed = {key for key in ours.keys() | small.keys() if ours.get(key) != small.get(key)}
    assert changed == {("encoder", "sparsity_weight")}
    assert (ours[("encoder", "sparsity_weight")], small[("encoder", "sparsity_weight")]) == (1.0, 0.1)
    assert ours[("encoder", "sparsity_penalty")] == "reward"
    table = _experiment("fhe_table4_small_fhe_lambda1").table
    assert table.variant == "small_lambda1" and "lambda 1 instead of 0.1" in table.data_note


def test_mzu_table1_small_rows_are_matched_on_parameters_with_the_papers_dropout_and_three_seeds():
    # the small capMZU+DT (hidden 128) and its LSTM baseline used to be 3x apart in parameters
    from rnnbench.encoders.build import build_encoder

    mzu, lstm = _experiment("mzu_table1_small_mzu"), _experiment("mzu_table1_small_lstm")
    width = mzu.embedding.dim
    assert lstm.embedding.dim == width == 256  # the same character embeddings feed both
    n_mzu = build_encoder(mzu.encoder, width).num_parameters()
    n_lstm = build_encoder(lstm.encoder, width).num_parameters()
    assert abs(n_lstm - n_mzu) / n_mzu < 0.01, (n_lstm, n_mzu)
    assert mzu.encoder.dropout == _experiment("mzu_table1").encoder.dropout == 0.5  # the paper's, on PTB
    for name, cfg in (("mzu_table1_small_mzu", mzu), ("mzu_table1_small_lstm", lstm)):
        assert list(cfg.table.protocol.seeds) == [1, 2, 3] and cfg.table.variant == "small"
        assert _sweep(name)["seed"] == "1,2,3"
    # the two rows differ in the encoder and nothing else that trains them
    assert mzu.trainer == lstm.trainer and mzu.task == lstm.task


def test_every_cpu_sized_variant_runs_on_one_thread():
    """A "small" row is sized for this 2-core CPU, where two runs share the cores: the thread count
    must be pinned (it changes results and timings), as MZU Table 1 small's first runs did not.
    One test over every experiment (composing them all at collection would slow every test run)."""
    small = {e: _experiment(e) for e in EXPERIMENTS}
    small = {e: cfg for e, cfg in small.items() if str((cfg.get("table") or {}).get("variant") or "").startswith("small")}
    assert {"mzu_table1_small_lstm", "mzu_table1_small_mzu", "dcu_table1_small"} <= set(small)
    assert [e for e, cfg in small.items() if cfg.trainer.num_threads != 1] == []


@pytest.mark.parametrize("composition", ["sat", "gcn"])
def test_mzu_table1_small_compares_the_three_mzus_in_one_setting(composition):
    """The table's claims compare sat, gcn and cap: their small rows differ in the composition only."""
    cap, other = _experiment("mzu_table1_small_mzu"), _experiment(f"mzu_table1_small_{composition}")
    assert other.encoder.composition == composition and other.encoder.name == f"mzu_{composition}"
    assert other.trainer == cap.trainer and other.task == cap.task and other.embedding == cap.embedding
    assert other.table.protocol == cap.table.protocol and other.table.variant == cap.table.variant == "small"
    assert other.table.name == "mzu_table1" and _sweep(f"mzu_table1_small_{composition}")["seed"] == "1,2,3"
    keys = ("hidden_size", "num_zones", "transition_depth", "dropout", "share_transition", "bidirectional",
            "disagreement_weight", "ffn_size")
    assert {k: other.encoder[k] for k in keys} == {k: cap.encoder[k] for k in keys}


def test_seeds_are_written_once_the_sweep_reads_the_protocols():
    """No experiment lists its sweep's seeds by hand: ``train.py -m experiment=...`` sweeps
    ``table.protocol.seeds``, so overriding them changes both the protocol and the plain sweep."""
    lines = [(path.stem, line.strip()) for path in sorted((CONF_DIR / "experiment").glob("*.yaml"))
             for line in path.read_text().splitlines() if re.match(r"\s+seed:", line)]
    assert lines and all(line.startswith("seed: ${sweep:${table.protocol.seeds}}") for _, line in lines), \
        [name for name, line in lines if not line.startswith("seed: ${sweep:")]
    assert sweeper_params(["experiment=rcrn_table5", "table.protocol.seeds=[7,8]"])["seed"] == "7,8"
