"""Run identity: what changes a result changes the run's folder, and nothing else does."""
from __future__ import annotations

from rnnbench.compose import compose_config
from rnnbench.encoders.lstm import LSTMEncoder
from rnnbench.results import identity
from rnnbench.results.identity import component_versions, data_fingerprint, run_identity

TREC_LINES = ["DESC:manner How did serfdom develop in and then leave Russia ?", "NUM:date When was Ozzy Osbourne born ?"] * 20


def _trec_data(root, extra_line=""):
    (root / "trec").mkdir(parents=True, exist_ok=True)
    (root / "trec" / "train_5500.label").write_text("\n".join(TREC_LINES + ([extra_line] if extra_line else [])) + "\n", encoding="latin-1")
    (root / "trec" / "TREC_10.label").write_text("\n".join(TREC_LINES[:4]) + "\n", encoding="latin-1")


def _cfg(tmp_path, *extra):
    return compose_config(["task=trec", "embedding=random", f"paths.data_dir={tmp_path / 'data'}", f"paths.cache_dir={tmp_path / 'cache'}", *extra])


def test_the_thread_count_is_part_of_the_identity(tmp_path):
    _trec_data(tmp_path / "data")
    assert run_identity(_cfg(tmp_path)) != run_identity(_cfg(tmp_path, "trainer.num_threads=2"))
    assert run_identity(_cfg(tmp_path)) != run_identity(_cfg(tmp_path, "trainer.num_threads=null"))  # torch's default
    assert run_identity(_cfg(tmp_path)) == run_identity(_cfg(tmp_path, "trainer.num_threads=1"))  # the default
    # what only changes where output goes or how progress shows is not
    assert run_identity(_cfg(tmp_path)) == run_identity(_cfg(tmp_path, "trainer.progress=false", "trainer.checkpoint_every=7"))


def test_the_content_of_the_data_read_is_part_of_the_identity(tmp_path):
    _trec_data(tmp_path / "data")
    full = run_identity(_cfg(tmp_path))
    _trec_data(tmp_path / "data", extra_line="HUM:ind Who wrote Hamlet ?")  # same names, other content
    assert run_identity(_cfg(tmp_path)) != full
    fingerprint = data_fingerprint(_cfg(tmp_path))
    assert set(fingerprint) == {"trec/train_5500.label", "trec/TREC_10.label"} and all(len(v) == 64 for v in fingerprint.values())


def test_absent_files_are_fingerprinted_as_missing_and_the_hub_copy_read_instead_is_named(tmp_path):
    fingerprint = data_fingerprint(_cfg(tmp_path))
    assert fingerprint.pop("hub") == "CogComp/trec" and set(fingerprint.values()) == {"missing"}


def test_a_component_version_bump_moves_the_run(tmp_path, monkeypatch):
    _trec_data(tmp_path / "data")
    before = run_identity(_cfg(tmp_path))
    assert component_versions(_cfg(tmp_path))["encoder"] == f"rnnbench.encoders.lstm.LSTMEncoder:{LSTMEncoder.version}"
    monkeypatch.setattr(LSTMEncoder, "version", LSTMEncoder.version + 1)
    assert run_identity(_cfg(tmp_path)) != before


def test_an_option_at_its_neutral_default_leaves_the_identity_unchanged(tmp_path, monkeypatch):
    _trec_data(tmp_path / "data")
    plain = identity.identity_config(_cfg(tmp_path))
    assert "kernel_impl" not in plain["trainer"]  # registered in NEUTRAL_DEFAULTS at "auto"
    assert run_identity(_cfg(tmp_path, "trainer.kernel_impl=reference")) != run_identity(_cfg(tmp_path))


def test_the_identity_of_a_fixed_run_is_pinned():
    """If this fails, every finished run was orphaned by the change. Either the change alters
    results (then bump the component's version, and update this hash), or it added an option
    (then register it in NEUTRAL_DEFAULTS at the value that keeps results identical)."""
    cfg = compose_config(["task=picking", "encoder=bilstm", "embedding=random", "seed=1"])
    assert run_identity(cfg)[:12] == PINNED
    # Until 2026-11-28 the default thread count was torch's (null): runs made with it keep their
    # folder under trainer.num_threads=null. Every table's experiment sets 1 and kept its identity.
    assert run_identity(compose_config(["task=picking", "encoder=bilstm", "embedding=random", "seed=1",
                                        "trainer.num_threads=null"]))[:12] == PINNED_TORCH_THREADS


PINNED = "67d41ad5cbc4"
PINNED_TORCH_THREADS = "ab304b8b847c"


def _table5_seed1(encoder: str, extra: list[str]):
    """RCRN Table 5's seed-1 run of ``encoder`` at the task's own rate (1e-3, one of the table's
    learning-rate selection runs; the rows report the rate each encoder chose), as make_table
    composes it."""
    import csv

    from rnnbench.campaign.jobs import job_config
    from rnnbench.campaign.protocol import Job
    from tests.helpers import REPO

    task_lr = float(compose_config(["task=trec", f"encoder={encoder}"]).trainer.lr)
    lr = next(float(r["lr"]) for r in csv.DictReader(open(REPO / "results" / "rcrn_table5.csv"))
              if r["encoder"] == encoder and r["seed"] == "1" and not r["variant"] and float(r["lr"]) == task_lr)
    return job_config("rcrn_table5", Job(encoder, 1, lr, "select"), extra)


def test_the_one_run_command_is_the_tables_seed_1_run(tmp_path):
    """`python train.py encoder=bilstm task=trec seed=1` trains exactly RCRN Table 5's seed-1 run at the
    task's rate: the same resolved config (one thread by default, as the table's) and so the same
    identity and numbers."""
    _trec_data(tmp_path / "data")
    paths = [f"paths.data_dir={tmp_path / 'data'}", f"paths.cache_dir={tmp_path / 'cache'}"]
    for encoder in ("bilstm", "3l_bilstm", "rcrn"):
        one = compose_config([f"encoder={encoder}", "task=trec", "seed=1", *paths])
        table = _table5_seed1(encoder, paths)
        assert one.trainer.num_threads == table.trainer.num_threads == 1
        assert identity.identity_config(one) == identity.identity_config(table), encoder
        assert run_identity(one) == run_identity(table)
        # at torch's default thread count (null) it is another run, with other numbers
        assert run_identity(compose_config([f"encoder={encoder}", "task=trec", "seed=1", "trainer.num_threads=null", *paths])) != run_identity(one)


def test_the_one_run_command_finds_the_committed_table_run(real_data):
    """On the real data, the one-run command's folder is the one RCRN Table 5's evidence names
    for seed 1 at the task's rate (s1-9b3fb52fd25e for bilstm): the committed run, its numbers included."""
    from rnnbench.results.identity import run_dir

    paths = [f"paths.data_dir={real_data}"]
    for encoder in ("bilstm", "3l_bilstm", "rcrn"):
        one = compose_config([f"encoder={encoder}", "task=trec", "seed=1", *paths])
        assert run_dir(one).name == run_dir(_table5_seed1(encoder, paths)).name
    assert run_dir(compose_config(["encoder=bilstm", "task=trec", "seed=1", *paths])).name == "s1-9b3fb52fd25e"


def test_a_multi_process_run_has_its_own_identity(tmp_path, monkeypatch):
    _trec_data(tmp_path / "data")
    one = run_identity(_cfg(tmp_path))
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert run_identity(_cfg(tmp_path)) == one
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert run_identity(_cfg(tmp_path)) != one


def test_a_fix_versioned_by_options_moves_only_the_runs_with_those_options(tmp_path):
    """Embed average pooling and Res-V2 were fixed (one dropout mask; the clean lateral input):
    runs with those options get the next component version, every other run keeps its own."""
    _trec_data(tmp_path / "data")
    plain = component_versions(_cfg(tmp_path))
    pooled = component_versions(_cfg(tmp_path, "task.head.embed_avg_pool=true"))
    v2 = component_versions(_cfg(tmp_path, "encoder.residual=v2", "encoder.bidirectional=false"))
    assert plain["encoder"].endswith(f":{LSTMEncoder.version}") and plain["head"].endswith(":1")
    assert pooled["head"].endswith(":2") and pooled["encoder"] == plain["encoder"]
    assert v2["encoder"].endswith(f":{LSTMEncoder.version + 1}") and v2["head"] == plain["head"]
