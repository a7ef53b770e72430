"""The sanity gate (rnnbench.campaign.sanity_gate): rows, the verdict cache keyed by config
identity, results/sanity.md, the gate in front of a campaign's runs (rnnbench.campaign.runner) and scripts/sanity.py."""
from __future__ import annotations

import json

import pytest

from rnnbench.training import sanity
from rnnbench.campaign import runner
from rnnbench.campaign.jobs import job_config
from rnnbench.compose import compose_config
from rnnbench.campaign import sanity_gate as gate
from rnnbench.campaign.protocol import Job
from tests.helpers import load_script

SMALL = ["encoder.hidden_size=8", "task.reader.train_size=200", "task.reader.dev_size=8", "task.reader.test_size=8"]


def _failing_verdict(*_, **__) -> sanity.Verdict:
    checks = [sanity.Check("initial_loss", 1.1, True, "1.1 (prior ln 3 = 1.1)"),
              sanity.Check("memorisation", 0.3, False, "30% after 300 steps")]
    return sanity.Verdict(checks, 1e-3, "adam", 64, "examples")


@pytest.fixture
def gate_on(monkeypatch, tmp_path):
    monkeypatch.delenv(gate.GATE_ENV, raising=False)
    return [f"paths.runs_dir={tmp_path / 'runs'}", f"paths.results_dir={tmp_path / 'results'}", f"paths.cache_dir={tmp_path / 'cache'}"]


def test_a_rows_config_is_make_tables_job_at_the_first_seed_and_the_experiments_rate():
    row = gate.Row("lstm_odyssey_table1", "lstm_odyssey_table1_pool", "2l_lstm")
    cfg = gate.row_config(row)
    job = job_config("lstm_odyssey_table1_pool", Job("2l_lstm", 1, float(cfg.trainer.lr), "select"), [])
    assert gate.row_key(cfg) == gate.row_key(job)
    assert gate.row_key(gate.row_config(gate.Row("", "lstm_odyssey_table1_resv2", "2l_lstm"))) != gate.row_key(cfg)
    # the seed and the rate, set as values, give the config the command line's overrides give; an override of either wins
    lr = float(compose_config(["experiment=lstm_odyssey_table1_pool"]).trainer.lr)
    command_line = compose_config(["experiment=lstm_odyssey_table1_pool", "encoder=2l_lstm", "seed=1", f"trainer.lr={lr!r}"])
    assert gate.row_key(command_line) == gate.row_key(cfg)
    overridden = gate.row_config(row, ["seed=4", "trainer.lr=0.5"])
    assert (overridden.seed, overridden.trainer.lr) == (4, 0.5)
    assert gate.row_config(row, ["table.protocol.seeds=[7,8]"]).seed == 7  # the protocol's first seed, not the default


def test_the_rows_of_a_table_are_its_experiments_sweeps():
    rows = gate.table_rows("mzu_table6")
    assert {"mzu_table6_restaurant", "mzu_table6_laptop"} <= {r.experiment for r in rows}
    assert {r.encoder for r in rows if r.experiment == "mzu_table6_laptop"} == {"bilstm", "bigru", "dt_gru", "mzu_cap"}
    assert gate.by_priority(["dcu_table1", gate.DEFAULT_TABLE, "rcrn_table1", "rcrn_table5", "lstm_odyssey_table1"]) == \
        ["lstm_odyssey_table1", "rcrn_table5", "rcrn_table1", "dcu_table1", gate.DEFAULT_TABLE]
    assert "rcrn_table1" in gate.committed_tables("results") and "rcrn_table10" not in gate.committed_tables("results")


def test_a_failing_row_is_refused_naming_the_check_and_its_value_and_decided_once(gate_on, monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(sanity, "check_model", lambda *a, **k: calls.append(1) or _failing_verdict())
    checker = gate.Gate()
    overrides = [*gate_on, *SMALL]
    assert not checker.allows("synthetic_span_copy", "bilstm", overrides)
    out = capsys.readouterr().out
    assert "refused: synthetic_span_copy: bilstm fails the sanity gate (memorisation: 30% after 300 steps)" in out
    assert not checker.allows("synthetic_span_copy", "bilstm", overrides) and len(calls) == 1
    # A new process reads the cached verdict: nothing is checked again.
    assert not gate.Gate().allows("synthetic_span_copy", "bilstm", overrides) and len(calls) == 1
    assert gate.Gate(skip=True).allows("synthetic_span_copy", "bilstm", overrides)


def test_the_gate_is_off_under_its_environment_switch(monkeypatch):
    monkeypatch.setenv(gate.GATE_ENV, "off")
    monkeypatch.setattr(sanity, "check_model", lambda *a, **k: pytest.fail("the gate checked a row while off"))
    assert gate.Gate().allows("synthetic_span_copy", "bilstm", [])


def test_make_table_starts_no_run_of_a_failing_row_unless_told_and_the_table_says_so(gate_on, monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(sanity, "check_model", _failing_verdict)
    trained = []
    monkeypatch.setattr(runner, "train", lambda cfg: trained.append(cfg) or {"dev": {}, "test": {}})
    from rnnbench.results import evidence

    committed = evidence.CommittedEvidence(tmp_path / "none.csv", tmp_path / "none.items.csv.xz")
    job, extra = Job("bilstm", 1, 3e-3, "final"), [*gate_on, *SMALL]
    assert runner.ensure("synthetic_span_copy", job, extra, False, committed) is None and not trained
    assert "memorisation: 30% after 300 steps" in capsys.readouterr().out

    monkeypatch.setattr(runner.SANITY, "skip", True)
    runner.ensure("synthetic_span_copy", job, extra, False, committed)
    assert len(trained) == 1
    base = compose_config(["experiment=synthetic_span_copy", *extra])
    capsys.readouterr()
    notes = runner.SANITY.notes([("synthetic_span_copy", base, ["bilstm"])], extra)
    assert any("synthetic_span_copy: bilstm were started on" in n and "--skip-sanity" in n for n in notes)
    # the verdict is cached, not in results/sanity.md, which the note cites: the assembly says how to write it there
    assert ("the sanity verdict of synthetic_span_copy: bilstm is cached in the run folders only: "
            "`rnnbench sanity synthetic_span_copy --no-run` writes it into results/sanity.md") in capsys.readouterr().out
    assert any("fails the sanity gate (memorisation: 30% after 300 steps" in n and "no run of it was started" in n for n in notes)
    ran = [{"encoder": "bilstm", "variant": "", "dataset": next(iter(gate._columns(base)))}]
    notes = runner.SANITY.notes([("synthetic_span_copy", base, ["bilstm"])], extra, ran)
    assert any("fails the sanity gate" in n and "made with --skip-sanity or before the gate" in n for n in notes)
    # the note follows from the verdict on record, not from whether this process has the gate on
    monkeypatch.setenv(gate.GATE_ENV, "off")
    assert any("fails the sanity gate" in n for n in runner.SANITY.notes([("synthetic_span_copy", base, ["bilstm"])], extra))


def _entry(row: gate.Row, status: str, verdict: sanity.Verdict | None = None, key: str = "0123456789abcdef" * 4) -> dict:
    return {"key": key, "row": {"table": row.table, "experiment": row.experiment, "encoder": row.encoder, "task": "trec"},
            "status": status, "verdict": verdict.to_dict() if verdict else None,
            "failures": verdict.failures() if verdict else [], "message": "" if verdict else "dataset 'trec' not found", "cpu_seconds": 60}


def test_the_markdown_lists_every_row_and_its_verdicts_read_back(tmp_path):
    failing = gate.Row("rcrn_table5", "rcrn_table5", "rcrn")
    missing = gate.Row("rcrn_table5", "rcrn_table5", "bilstm")
    unchecked = gate.Row("rcrn_table5", "rcrn_table5", "3l_bilstm")
    md = gate.render([(failing, _entry(failing, gate.FAIL, _failing_verdict())),
                      (missing, _entry(missing, gate.DATA_MISSING, key="fedcba9876543210" * 4)), (unchecked, None)],
                     "Not checked: rcrn_table5 · rcrn_table5: 3l_bilstm.")
    assert "## rcrn_table5" in md and "**30% after 300 steps** ✗" in md and "| data missing | dataset 'trec' not found" in md
    assert "| not checked |" in md and "Rows: 1 data missing, 1 fail, 1 not checked; 2 CPU minutes" in md
    path = tmp_path / gate.MARKDOWN
    path.write_text(md)
    read = gate.committed_lines(path)
    assert read["0123456789abcdef"]["status"] == gate.FAIL
    assert read["0123456789abcdef"]["failures"] == ["memorisation: 30% after 300 steps"]
    assert read["fedcba9876543210"]["status"] == gate.DATA_MISSING
    # A committed line is kept as it is when the markdown is written again without the cache.
    again = gate.render([(failing, read["0123456789abcdef"]), (missing, read["fedcba9876543210"]), (unchecked, None)])
    assert read["0123456789abcdef"]["line"] in again


def test_a_committed_verdict_decides_without_checking(gate_on, monkeypatch, tmp_path):
    overrides = [*gate_on, *SMALL]
    row = gate.Row("synthetic_span_copy", "synthetic_span_copy", "bilstm")
    key = gate.row_key(gate.row_config(row, overrides))
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / gate.MARKDOWN).write_text(gate.render([(row, _entry(row, gate.FAIL, _failing_verdict(), key))]))
    monkeypatch.setattr(sanity, "check_model", lambda *a, **k: pytest.fail("a committed verdict was checked again"))
    assert not gate.Gate().allows("synthetic_span_copy", "bilstm", overrides)


@pytest.mark.slow  # checks a row for real (data, model, 300 steps at most), twice preparing data
def test_the_script_checks_a_row_caches_it_and_reports_absent_data(gate_on, tmp_path, capsys):
    main = load_script("sanity").main
    args = ["default", "--only", "lstm1", *[a for o in [*gate_on, *SMALL] for a in ("--set", o)]]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "[1/1] default task · default: lstm1 (picking): checking" in out and "CPU min" in out
    md = (tmp_path / "results" / gate.MARKDOWN).read_text()
    assert "## default task" in md and "| `lstm1` | picking |" in md and "| pass |" in md
    (cached,) = (tmp_path / "runs" / "sanity").glob("*.json")
    assert json.loads(cached.read_text())["status"] == gate.PASS

    assert main(args) == 0
    assert "lstm1 (picking): pass (cached)" in capsys.readouterr().out
    assert main([*args, "--plan"]) == 0 and "pass (cached)" in capsys.readouterr().out

    empty = tmp_path / "no_data"
    empty.mkdir()
    assert main(["rcrn_table5", "--only", "bilstm", *[a for o in [*gate_on, f"paths.data_dir={empty}"] for a in ("--set", o)]]) == 0
    md = (tmp_path / "results" / gate.MARKDOWN).read_text()
    assert "## rcrn_table5" in md and "| data missing |" in md
    assert "| `lstm1` | picking |" in md  # the table not asked for keeps its rows


def _v4_entry(memorised: bool = True, status: str | None = None) -> dict:
    checks = [sanity.Check("gradients", 0.0, True, "all 10 tensors", {"excused": {}}),
              sanity.Check("memorisation", 0.97 if memorised else 0.5, memorised, "97% at step 125" if memorised else "50% after 300 steps",
                           {"steps": 125 if memorised else 300, "regulariser_left_out": False})]
    verdict = sanity.Verdict(checks, 1e-3, "adam", 64, "examples")
    return {"key": "old", "status": status or (gate.PASS if verdict.passed else gate.FAIL), "verdict": verdict.to_dict(),
            "failures": verdict.failures()}


@pytest.mark.parametrize("memorised", [True, False])
def test_a_previous_version_verdict_carries_over_unchanged_only_without_a_regulariser(memorised):
    entry = _v4_entry(memorised)
    carried = sanity.carried_over(entry, regulariser=False)
    assert carried["status"] == entry["status"] and carried["failures"] == entry["failures"]
    assert sanity.Verdict.from_dict(carried["verdict"]).passed == memorised
    assert carried["verdict"]["checks"][-1]["detail"]["regulariser"] == "none"
    assert sanity.carried_over(entry, regulariser=True) is None  # memorisation changed: checked again


def test_an_entry_without_a_verdict_does_not_carry_over():
    assert sanity.carried_over({"key": "old", "status": gate.DATA_MISSING, "verdict": None}, regulariser=False) is None


# (encoder, overrides, whether its training loss has a regulariser): MZU's lambda and FHE's penalty at 0 or
# in the REINFORCE reward (part of the policy loss the check always trained on) leave none.
REGULARISED = [("bilstm", [], False), ("fhe", [], True), ("fhe", ["encoder.sparsity_weight=0"], False),
               ("fhe", ["encoder.sparsity_penalty=reward"], False), ("mzu_gcn", [], True),
               ("mzu_gcn", ["encoder.disagreement_weight=0"], False)]


@pytest.mark.parametrize("encoder, overrides, regularised", REGULARISED)
def test_a_cached_previous_verdict_is_kept_for_a_row_without_a_regulariser_and_dropped_for_one_with(
        gate_on, encoder, overrides, regularised):
    cfg = gate.row_config(gate.Row(gate.DEFAULT_TABLE, None, encoder), [*gate_on, "encoder.hidden_size=8", *overrides])
    assert sanity.regulariser_in_use(cfg) == regularised
    key, old_key = gate.row_key(cfg), gate.row_key(cfg, sanity.PREVIOUS)
    assert key != old_key and gate.read_cached(cfg, key) is None
    gate.cache_file(cfg, old_key).parent.mkdir(parents=True)
    gate.cache_file(cfg, old_key).write_text(json.dumps({"key": old_key, "status": gate.DATA_MISSING, "verdict": None}))
    assert gate.read_cached(cfg, key) is None
    gate.cache_file(cfg, old_key).write_text(json.dumps({**_v4_entry(), "key": old_key}))
    entry = gate.read_cached(cfg, key)
    if regularised:
        assert entry is None and not gate.cache_file(cfg, key).exists()
    else:
        assert entry["status"] == gate.PASS and entry["key"] == key and entry["carried_from"] == old_key
        assert json.loads(gate.cache_file(cfg, key).read_text()) == entry


def test_a_committed_previous_verdict_is_kept_without_the_cache_only_for_a_row_without_a_regulariser(gate_on, monkeypatch, tmp_path):
    """A fresh clone has no cache: the committed results/sanity.md's version-4 lines decide the rows
    whose memorisation the change leaves as it was; the others are checked again."""
    overrides = [*gate_on, *SMALL]
    rows = {enc: gate.Row("synthetic_span_copy", "synthetic_span_copy", enc) for enc in ("bilstm", "fhe")}
    cfgs = {enc: gate.row_config(row, overrides) for enc, row in rows.items()}
    old = {enc: gate.row_key(cfg, sanity.PREVIOUS) for enc, cfg in cfgs.items()}
    (tmp_path / "results").mkdir()
    path = tmp_path / "results" / gate.MARKDOWN
    path.write_text(gate.render([(rows[enc], _entry(rows[enc], gate.FAIL, _failing_verdict(), old[enc])) for enc in rows]))
    committed = gate.committed_lines(path)
    kept = gate.committed_entry(cfgs["bilstm"], gate.row_key(cfgs["bilstm"]), committed)
    assert kept["status"] == gate.FAIL and kept["carried_from"] == old["bilstm"][:16]
    assert kept["line"].endswith(f"`{gate.row_key(cfgs['bilstm'])[:16]}` |") and old["bilstm"][:16] not in kept["line"]
    assert gate.committed_entry(cfgs["fhe"], gate.row_key(cfgs["fhe"]), committed) is None
    checked = []
    monkeypatch.setattr(sanity, "check_model", lambda cfg, *a, **k: checked.append(cfg.encoder.name) or _passing_verdict())
    assert not gate.Gate().allows("synthetic_span_copy", "bilstm", overrides) and checked == []
    assert gate.Gate().allows("synthetic_span_copy", "fhe", overrides) and checked == ["fhe"]
    # a row not checked again shows its previous memorisation and key, from which no verdict is read
    line = gate.not_checked_line(rows["fhe"], gate.previous_line(cfgs["fhe"], committed))
    assert gate.NOT_CHECKED_AGAIN in line and "30% after 300 steps" in line and line.endswith(f"`{old['fhe'][:16]}` |")
    path.write_text(gate.render([(rows["fhe"], {"line": line})]))
    again = gate.committed_lines(path)
    assert again[old["fhe"][:16]]["status"] == gate.NOT_CHECKED
    assert gate.not_checked_line(rows["fhe"], gate.previous_line(cfgs["fhe"], again)) == line
    assert gate.NOT_CHECKED_AGAIN in path.read_text().split("## ")[0]  # the header says what such a row shows


def test_a_table_names_a_row_not_checked_with_its_regulariser_that_failed_without_it(gate_on, tmp_path):
    """MZU Table 1's PTB-size rows: version 4 refused two of them (checked without the regulariser);
    version 5 has not checked them with it. The table still says so, naming the failed check."""
    overrides = [*gate_on, *SMALL]
    row = gate.Row("synthetic_span_copy", "synthetic_span_copy", "fhe")
    cfg = gate.row_config(row, overrides)
    (tmp_path / "results").mkdir()
    path = tmp_path / "results" / gate.MARKDOWN
    previous = _entry(row, gate.FAIL, _failing_verdict(), gate.row_key(cfg, sanity.PREVIOUS))
    path.write_text(gate.render([(row, previous)]))
    line = gate.not_checked_line(row, gate.previous_line(cfg, gate.committed_lines(path)))
    path.write_text(gate.render([(row, {"line": line})]))
    base = compose_config(["experiment=synthetic_span_copy", *overrides])
    (note,) = gate.Gate().notes([("synthetic_span_copy", base, ["fhe"])], overrides)
    assert note.startswith("synthetic_span_copy: fhe is not checked with its regulariser yet and failed the sanity gate without it")
    assert "30% after 300 steps" in note and note.endswith("the gate checks it before its first run.")
    path.write_text(gate.render([(row, {"line": line.replace("**30% after 300 steps** ✗", "100% at step 25")
                                                       .replace(line.split("|")[-3], " - ")})]))
    assert gate.Gate().notes([("synthetic_span_copy", base, ["fhe"])], overrides) == []  # it passed without it: nothing to say


def _passing_verdict() -> sanity.Verdict:
    return sanity.Verdict([sanity.Check("memorisation", 1.0, True, "100% at step 25")], 1e-3, "adam", 64, "examples")


def _regulariser_verdict(*_, **__) -> sanity.Verdict:
    shown = f"50% after 300 steps, without the regulariser 98% at step 100: {sanity.PREVENTS_FITTING}"
    detail = {"regulariser": "in the loss", "regulariser_prevents_fitting": True,
              "without_regulariser": {"accuracy": 0.98, "passed": True, "steps": 100, "shown": "98% at step 100"}}
    return sanity.Verdict([sanity.Check("memorisation", 0.5, False, shown, detail)], 1e-3, "adam", 64, "examples")


def test_a_row_that_memorises_only_without_its_regulariser_is_flagged_and_refused(gate_on, monkeypatch, capsys, tmp_path):
    row = gate.Row("synthetic_span_copy", "synthetic_span_copy", "fhe")
    md = gate.render([(row, _entry(row, gate.FAIL, _regulariser_verdict()))])
    header, table = md.split("## ", 1)
    assert f"{gate.REGULARISER_MARK} marks a row that memorises only without its encoder's regulariser" in header
    assert f"({1} fail {gate.REGULARISER_MARK})" in header
    (line,) = [line for line in table.splitlines() if "`fhe`" in line]
    assert gate.REGULARISER_MARK in line and "| **fail** |" in line
    path = tmp_path / gate.MARKDOWN
    path.write_text(md)
    (read,) = gate.committed_lines(path).values()
    assert read["status"] == gate.FAIL and sanity.PREVENTS_FITTING in "; ".join(read["failures"])
    monkeypatch.setattr(sanity, "check_model", _regulariser_verdict)
    assert not gate.Gate().allows("synthetic_span_copy", "fhe", [*gate_on, *SMALL])
    out = capsys.readouterr().out
    assert f"fails the sanity gate (memorisation: 50% after 300 steps, without the regulariser 98% at step 100: " \
           f"{sanity.PREVENTS_FITTING}): it memorises without its regulariser, not with it" in out


def test_the_previous_versions_constants_differ_from_the_current_ones_only_in_the_version():
    """Else version 4's cache keys (and the committed markdown's) would not be found, and its verdicts not carried over."""
    current = sanity.thresholds()
    assert current.keys() == sanity.PREVIOUS.keys()
    assert {k for k in current if current[k] != sanity.PREVIOUS[k]} == {"version"}


def test_the_replay_script_logs_each_memorisation_step_and_writes_no_verdict(gate_on, tmp_path, capsys):
    main = load_script("replay_memorisation").main
    assert main(["default", "lstm1", "--steps", "3", *[a for o in [*gate_on, *SMALL] for a in ("--set", o)]]) == 0
    out = capsys.readouterr().out
    steps = [line for line in out.splitlines() if line.startswith("step ")]
    assert [line.split(":")[0] for line in steps] == ["step 1", "step 2", "step 3"]
    assert all("gradient norm" in line for line in steps)
    assert "memorisation: " in out and "after 3 steps" in out
    assert not (tmp_path / "runs" / "sanity").exists() and not (tmp_path / "results" / gate.MARKDOWN).exists()


def test_the_replay_script_names_an_unknown_row_in_one_line(gate_on, capsys):
    main = load_script("replay_memorisation").main
    assert main(["default", "no_such_encoder", *[a for o in gate_on for a in ("--set", o)]]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "encoder/no_such_encoder" in err
