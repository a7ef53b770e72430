"""The rnnbench command: every verb's --help, train/evaluate as train.py/evaluate.py do them,
predict on raw text (the task's tokenizer, probabilities, one-line errors), runs and runs
compare, list, and the table/claims/sanity verbs wired to the package's commands."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from filelock import FileLock

from rnnbench.commands import VERBS, main
from rnnbench.commands import claims as claims_verb, listing, predict as predict_verb, runs as runs_verb
from rnnbench.commands import sanity as sanity_verb, table as table_verb
from rnnbench.errors import ConfigError
from rnnbench.inference import LoadedRun, PredictInputError, load
from rnnbench.results.records import RECORD
from rnnbench.run import train
from tests.helpers import REPO, smoke_config

pytestmark = pytest.mark.usefixtures("one_thread")

# Tiny picking runs: scored on the whole test split (TINY), and a smoke run (test scored on part of it).
SMALL = ["task=picking", "task.reader.train_size=200", "task.reader.dev_size=40", "task.reader.test_size=70", "encoder.hidden_size=16"]
TINY = [*SMALL, "trainer.max_eval_batches=null", "trainer.eval_batch_size=16"]

# TREC in its original format (COARSE:fine question tokens), written here: a word-level task to predict on.
TREC_QUESTIONS = {
    "HUM:ind": ["Who wrote {} ?", "Who invented the {} ?", "Who painted {} ?"],
    "LOC:other": ["Where is {} ?", "Where can I find {} ?", "In which country is {} ?"],
    "NUM:count": ["How many {} are there ?", "How many {} does a cat have ?", "How many {} live in Paris ?"],
    "DESC:def": ["What does {} mean ?", "What is the definition of {} ?", "What is a {} ?"],
    "ENTY:other": ["What {} is used for cooking ?", "Which {} do birds eat ?", "What kind of {} grows here ?"],
    "ABBR:exp": ["What does {} stand for ?", "What is {} short for ?", "What is the full form of {} ?"],
}
WORDS = ["Hamlet", "the telephone", "Mona Lisa", "Everest", "rice", "bridges", "legs", "NATO", "seeds", "trees"]


def _quiet(*_):
    pass


@pytest.fixture(scope="module")
def picking_runs(tmp_path_factory):
    """(runs folder, a finished run's folder, a smoke run's folder): tiny picking runs."""
    tmp = tmp_path_factory.mktemp("cli")
    full = train(smoke_config(tmp, *TINY), say=_quiet)
    smoke = train(smoke_config(tmp, *SMALL), say=_quiet)
    assert not full["smoke"] and smoke["smoke"]
    return tmp / "runs", Path(full["run_dir"]), Path(smoke["run_dir"])


def write_trec(folder: Path) -> Path:
    (folder / "trec").mkdir(parents=True, exist_ok=True)
    lines = [f"{label} {template.format(word)}" for label, templates in TREC_QUESTIONS.items() for template in templates for word in WORDS]
    (folder / "trec" / "train_5500.label").write_text("\n".join(lines[::2]) + "\n")
    (folder / "trec" / "TREC_10.label").write_text("\n".join(lines[1::2]) + "\n")
    return folder


@pytest.fixture(scope="module")
def trec_run(tmp_path_factory):
    """A tiny finished TREC run (random embeddings) on questions written above."""
    tmp = tmp_path_factory.mktemp("cli_trec")
    data = write_trec(tmp / "data")
    cfg = smoke_config(tmp, "task=trec", "embedding=random", "encoder.hidden_size=16", f"paths.data_dir={data}",
                       "trainer.max_eval_batches=null", f"paths.cache_dir={tmp / 'cache'}")
    return Path(train(cfg, say=_quiet)["run_dir"])


def run_main(argv, capsys) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


# --- help and entry points -----------------------------------------------------------------

def test_top_level_help_lists_every_verb(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert all(verb in out for verb in VERBS)


@pytest.mark.parametrize("verb", [v for v in VERBS if v not in ("train", "sanity")])
def test_every_verb_has_its_own_help(verb, capsys):
    with pytest.raises(SystemExit) as stop:
        main([verb, "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert f"rnnbench {verb}" in out and len(out.splitlines()) > 5  # a description with examples, not just usage


def test_train_help_is_ours_not_hydras(capsys):
    code, out, _ = run_main(["train", "--help"], capsys)
    assert code == 0 and "usage: rnnbench train" in out and "trainer=smoke" in out and "--cfg job" in out


def test_the_console_script_is_declared_and_python_dash_m_runs():
    import importlib
    import tomllib

    target = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]["rnnbench"]
    module, _, function = target.partition(":")
    assert getattr(importlib.import_module(module), function) is main
    assert "rnnbench.commands" in tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    out = subprocess.run([sys.executable, "-m", "rnnbench", "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "predict" in out.stdout


def test_help_needs_no_torch():
    """`rnnbench --help` and a verb's help start fast: nothing imports torch."""
    probe = "import sys; from rnnbench.commands import build_parser; build_parser(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr


# --- train and evaluate: what train.py and evaluate.py do -----------------------------------

@pytest.mark.slow  # two training processes
def test_rnnbench_train_is_train_py(tmp_path):
    args = ["trainer=smoke", *SMALL, f"paths.runs_dir={tmp_path}"]
    first = subprocess.run([sys.executable, "-m", "rnnbench", "train", *args], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr[-2000:]
    assert first.stdout.strip().splitlines()[-1].startswith("smoke run: test scored on")
    again = subprocess.run([sys.executable, str(REPO / "train.py"), *args], cwd=REPO, capture_output=True, text=True, timeout=600)
    (folder,) = list(tmp_path.glob("picking/bilstm/s1-*"))
    assert again.returncode == 0 and f"already done: {folder}" in again.stdout  # the same run: the same identity
    bad = subprocess.run([sys.executable, "-m", "rnnbench", "train", "trainer.epochz=3"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "epochz" in bad.stderr


def test_evaluate_verb_reproduces_the_recorded_test_scores(picking_runs, capsys):
    _, full, _ = picking_runs
    record = json.loads((full / RECORD).read_text())
    code, out, _ = run_main(["evaluate", str(full)], capsys)
    assert code == 0 and f"accuracy {record['test']['accuracy']:.4f}" in out and "recorded by the run" in out
    code, out, _ = run_main(["evaluate", str(full), "--split", "dev"], capsys)
    assert code == 0 and "\ndev: accuracy" in out
    code, out, _ = run_main(["evaluate", str(full), "--split", "test", "trainer.eval_batch_size=8"], capsys)  # overrides after options
    assert code == 0 and "eval_batch_size=8" in out and f"accuracy {record['test']['accuracy']:.4f}" in out


def test_evaluate_verb_bad_input_is_one_line(picking_runs, capsys, tmp_path):
    _, full, _ = picking_runs
    code, _, err = run_main(["evaluate", str(full), "--split", "validation"], capsys)
    assert code == 2 and err.count("\n") == 1 and "validation" in err
    code, _, err = run_main(["evaluate", str(tmp_path / "nothing")], capsys)
    assert code == 2 and err.count("\n") == 1 and "no such folder" in err


# --- predict: raw text -----------------------------------------------------------------------

def test_predict_tokenizes_a_string_into_words_not_characters(trec_run):
    loaded = load(trec_run)
    seen = []
    encode = loaded.vocab.encode
    loaded.vocab.encode = lambda tokens: seen.append(list(tokens)) or encode(tokens)
    label = loaded.predict("Who wrote Hamlet?")
    assert seen == [["Who", "wrote", "Hamlet", "?"]]  # the Treebank tokens TREC's files hold
    assert label in loaded.label_names
    # a dict's text field given as a string is tokenised too, and a list of inputs gives a list
    assert loaded.predict([{"tokens": "Who wrote Hamlet?"}, "Where is Everest?"]) == [label, loaded.predict("Where is Everest?")]
    assert loaded.predict({"tokens": ["Who", "wrote", "Hamlet", "?"]}) == label


def test_predict_probabilities_sum_to_one_and_name_every_label(trec_run):
    loaded = load(trec_run)
    result = loaded.predict("How many legs does a cat have?", probabilities=True)
    assert set(result["probabilities"]) == set(loaded.label_names)
    assert sum(result["probabilities"].values()) == pytest.approx(1.0, abs=1e-5)
    assert result["label"] == max(result["probabilities"], key=result["probabilities"].get) == loaded.predict("How many legs does a cat have?")


def test_predict_refuses_empty_input_and_unknown_labels(trec_run):
    loaded = load(trec_run)
    for empty in ("", "   ", {"tokens": []}):
        with pytest.raises(PredictInputError, match="empty"):
            loaded.predict(empty)
    with pytest.raises(PredictInputError, match="lack the text field 'tokens'"):
        loaded.predict({"question": "Who?"})
    # a gold label given as its name (it does not change the prediction); an unknown one is one line
    assert loaded.predict({"tokens": "Who wrote Hamlet?", "label": "HUM"}) == loaded.predict("Who wrote Hamlet?")
    with pytest.raises(PredictInputError, match="'PERSON' is not one of task trec's labels"):
        loaded.predict({"tokens": "Who wrote Hamlet?", "label": "PERSON"})


def test_predict_verb_prints_the_label_probabilities_and_unknown_words(trec_run, capsys):
    code, out, _ = run_main(["predict", str(trec_run), "Who wrote Zanzibarology?", "--top", "0"], capsys)
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("tokens: Who wrote Zanzibarology ?") and "Zanzibarology" in lines[0].split("vocabulary")[-1]
    assert lines[1].startswith("prediction: ")
    probabilities = [float(line.split()[-1]) for line in lines[2:]]
    assert len(probabilities) == 6 and sum(probabilities) == pytest.approx(1.0, abs=1e-3)
    code, out, _ = run_main(["predict", str(trec_run), "Who wrote Hamlet?", "--json"], capsys)
    answer = json.loads(out)
    assert answer["tokens"] == {"tokens": ["Who", "wrote", "Hamlet", "?"]} and sum(answer["probabilities"].values()) == pytest.approx(1.0)


@pytest.mark.parametrize("argv,message", [
    (["", ], "field 'tokens' is empty"),
    (["Who?", "--hypothesis", "A man."], "--hypothesis: task trec has no field 'hypothesis' (its fields: tokens)"),
    (["Who?", "--field", "aspect=battery"], "--field aspect: task trec has no field 'aspect'"),
    (["Who?", "Where?"], "2 texts given, but task trec reads 1 (tokens)"),
    (["Who?", "--option", "A", "--option", "B"], "--option: task trec is not multiple-choice"),
    ([], "give the text to predict"),
])
def test_predict_verb_bad_input_is_one_line(trec_run, capsys, argv, message):
    code, _, err = run_main(["predict", str(trec_run), *argv], capsys)
    assert code == 2 and err.count("\n") == 1 and message in err


def test_predict_verb_on_the_picking_task_takes_its_question(picking_runs, capsys):
    _, full, _ = picking_runs
    code, out, _ = run_main(["predict", str(full), "3 1 4 1 5 9 2 6", "--field", "question=5", "--json"], capsys)
    answer = json.loads(out)
    assert code == 0 and answer["tokens"] == {"tokens": list("31415926")} and answer["prediction"] in [str(d) for d in range(10)]
    code, out, _ = run_main(["predict", str(full), "--field", "question=5", "31415926", "--json"], capsys)  # the text after an option
    assert code == 0 and json.loads(out)["prediction"] == answer["prediction"]
    code, _, err = run_main(["predict", str(full), "3 1 4"], capsys)
    assert code == 2 and "also needs 'question'" in err


def test_pair_and_multiple_choice_texts_fill_the_task_fields():
    pair = ["premise", "hypothesis"]
    assert predict_verb.input_of("snli", pair, (), ["A man sleeps.", "A person rests."]) == {"premise": "A man sleeps.", "hypothesis": "A person rests."}
    assert predict_verb.input_of("snli", pair, (), ["A man sleeps."], hypothesis="Nobody.") == {"premise": "A man sleeps.", "hypothesis": "Nobody."}
    with pytest.raises(ConfigError, match="give the hypothesis too .*--hypothesis"):
        predict_verb.input_of("snli", pair, (), ["A man sleeps."])
    race = ["passage", "question", "option_0", "option_1", "option_2", "option_3"]
    record = predict_verb.input_of("race", race, (), ["The passage.", "Why?"], options=["a", "b", "c", "d"])
    assert record == {"passage": "The passage.", "question": "Why?", "option_0": "a", "option_1": "b", "option_2": "c", "option_3": "d"}
    with pytest.raises(ConfigError, match="chooses among 4 options; got 2"):
        predict_verb.input_of("race", race, (), ["The passage.", "Why?"], options=["a", "b"])
    absa = predict_verb.input_of("absa_laptop", ["tokens", "aspect"], (), ["The battery is great."], named=["aspect=battery"])
    assert absa == {"tokens": "The battery is great.", "aspect": "battery"}


def test_predict_refuses_a_head_that_needs_the_gold_answer():
    from rnnbench.heads.span import SpanHead

    assert SpanHead.predicts_from_text is False
    model = SimpleNamespace(head=SimpleNamespace(predicts_from_text=False))
    loaded = LoadedRun(model, None, SimpleNamespace(task=SimpleNamespace(name="narrativeqa_span")), [], ["passage", "question"],
                       "cpu", Path("."), "bundle")
    with pytest.raises(PredictInputError, match="narrativeqa_span's head .* rnnbench evaluate"):
        loaded.predict({"passage": "a b", "question": "c"})


# --- runs and runs compare --------------------------------------------------------------------

def test_runs_lists_status_smoke_and_overrides(picking_runs, capsys, tmp_path):
    runs_dir, full, smoke = picking_runs
    code, out, _ = run_main(["runs", "--runs-dir", str(runs_dir)], capsys)
    rows = {line.split()[-1]: line for line in out.splitlines() if line.startswith("picking")}
    assert code == 0 and set(rows) == {full.name, smoke.name}
    assert " smoke " in rows[smoke.name] and " smoke " not in rows[full.name]
    assert "trainer=smoke" in rows[smoke.name] and "trainer.max_eval_batches=null" in rows[full.name]
    assert "encoder.hidden_size=16" in rows[full.name] and "done" in rows[full.name]
    record = json.loads((full / RECORD).read_text())
    assert f"{record['test']['accuracy']:.4f}" in rows[full.name] and f"{record['dev']['accuracy']:.4f}" in rows[full.name]


def test_runs_tells_interrupted_in_progress_and_missing_folders(picking_runs, capsys, tmp_path):
    runs_dir, full, _ = picking_runs
    other = tmp_path / "runs"
    started = other / "trec" / "rcrn" / "s2-aaaaaaaaaaaa"
    interrupted = other / "trec" / "rcrn" / "s3-bbbbbbbbbbbb"
    busy = other / "trec" / "rcrn" / "s4-cccccccccccc"
    for folder in (started, interrupted, busy):
        folder.mkdir(parents=True)
    (interrupted / "last.pt").write_bytes(b"")
    gone = {"identity": "dddddddddddd" + "0" * 52, "run_dir": str(other / "trec" / "bilstm" / "s5-dddddddddddd"),
            "task": "trec", "encoder": "bilstm", "seed": 5, "test": {"accuracy": 0.5}, "dev": {"accuracy": 0.25}}
    (other / "records.jsonl").write_text(json.dumps(gone) + "\n")
    with FileLock(str(busy / ".lock")):
        code, out, _ = run_main(["runs", "--runs-dir", str(other), "--task", "trec"], capsys)
    status = {line.split()[-1]: line for line in out.splitlines() if line.startswith("trec")}
    assert code == 0 and "started" in status[started.name] and "interrupted" in status[interrupted.name]
    assert "in progress" in status[busy.name] and "folder missing" in status["s5-dddddddddddd"]
    (other / "trec" / "rcrn" / "s6-abababababab").mkdir()
    code, _, err = run_main(["runs", "compare", "a", "bbbb", "--runs-dir", str(other)], capsys)
    assert code == 2 and err.count("\n") == 1 and "2 runs have an identity starting so" in err
    code, _, err = run_main(["runs", "compare", "aaaa", "bbbb", "--runs-dir", str(other)], capsys)
    assert code == 2 and err.count("\n") == 1 and "started, no record with a config to compare" in err


def test_runs_compare_puts_metrics_side_by_side_and_names_the_keys_that_differ(picking_runs, capsys):
    runs_dir, full, smoke = picking_runs
    prefix_a, prefix_b = full.name.split("-")[1][:8], smoke.name.split("-")[1][:8]
    code, out, _ = run_main(["runs", "compare", prefix_a, prefix_b, "--runs-dir", str(runs_dir)], capsys)
    assert code == 0
    a, b = (json.loads((p / RECORD).read_text()) for p in (full, smoke))
    (row,) = [line for line in out.splitlines() if line.startswith("test accuracy")]
    assert row.split()[2:] == [f"{a['test']['accuracy']:.4f}", f"{b['test']['accuracy']:.4f}"]
    differ = out.split("config keys that differ")[1]
    assert "trainer.max_eval_batches" in differ and "null" in differ and "seed" not in differ
    code, out, _ = run_main(["runs", "compare", str(full), str(full)], capsys)  # folders work too
    assert code == 0 and "config: the same" in out


def test_runs_compare_bad_input_is_one_line(picking_runs, capsys):
    runs_dir, *_ = picking_runs
    code, _, err = run_main(["runs", "compare", "zzzz", "yyyy", "--runs-dir", str(runs_dir)], capsys)
    assert code == 2 and err.count("\n") == 1 and "no run folder and no run" in err
    code, _, err = run_main(["runs", "compare", str(runs_dir), "yyyy", "--runs-dir", str(runs_dir)], capsys)
    assert code == 2 and err.count("\n") == 1 and "not a run folder" in err


# --- list --------------------------------------------------------------------------------------

def test_list_names_every_config_with_a_description(capsys, tmp_path):
    for kind, folder in (("encoders", "encoder"), ("tasks", "task")):
        code, out, _ = run_main(["list", kind, "--data-dir", str(tmp_path)], capsys)
        names = [line.split()[0] for line in out.splitlines()[:-2]]
        assert code == 0 and names == sorted(p.stem for p in (REPO / "conf" / folder).glob("*.yaml"))
    assert listing.description(REPO / "conf" / "task" / "trec.yaml") == "TREC question classification (Li & Roth 2002), 6 coarse classes; RCRN paper Table 5."
    assert listing.description(REPO / "conf" / "encoder" / "mzu_cap.yaml").startswith("capMZU (Meng et al. AAAI 2020): multi-zone")


def test_list_tasks_says_whether_the_data_is_here(capsys, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    rows = {name: data for name, data, _ in listing.rows("tasks", empty)}
    assert rows["picking"] == "generated" and rows["trec"] == "missing (hub: CogComp/trec)" and rows["wikiqa"] == "missing"
    assert {name: data for name, data, _ in listing.rows("tasks", write_trec(tmp_path / "data"))}["trec"] == "here"


def test_list_experiments_reads_the_task_and_table_hydra_composes():
    from rnnbench.compose import compose_config

    for experiment in ("rcrn_table5", "rcrn_table6", "rcrn_table1_baby", "mzu_table6_laptop"):
        cfg = compose_config([f"experiment={experiment}"])
        assert listing.experiment_table(experiment) == cfg.table.name
        assert listing.merged("task", listing.experiment_task(experiment))["task"]["name"] == cfg.task.name


def test_list_tables_groups_experiments_by_their_table_name(capsys, tmp_path):
    tables = listing.tables()
    assert {"rcrn_table8_wikiqa", "rcrn_table8_wikiqa_ap", "rcrn_table8_trecqa", "rcrn_table8_trecqa_ap"} <= set(tables["rcrn_table8"])
    assert len(tables["rcrn_table1"]) == 32 and tables["rcrn_table5"] == ["rcrn_table5", "rcrn_table5_rung3"]  # 16 domains at rungs 0 and 1; today's setting, then its rung-3 twin
    code, out, _ = run_main(["list", "tables", "--data-dir", str(tmp_path)], capsys)
    (line,) = [line for line in out.splitlines() if line.startswith("rcrn_table5 ")]
    assert code == 0 and "missing" in line and "RCRN Table 5: Accuracy on TREC question classification" in line


# --- table, claims and sanity ------------------------------------------------------------------

@pytest.fixture
def recorded(monkeypatch):
    """The claims and sanity commands, recording the arguments they get."""
    calls = []
    monkeypatch.setattr(claims_verb, "main", lambda argv=None: calls.append(["claims", argv]) or 0)
    monkeypatch.setattr(sanity_verb, "main", lambda argv=None: calls.append(["sanity", argv]) or 0)
    return calls


def test_table_verb_is_the_campaign_librarys_make_table(capsys, monkeypatch):
    from rnnbench.campaign import make

    calls = []
    monkeypatch.setattr(make, "make_table", lambda name, **kwargs: calls.append((name, kwargs)) or 0)
    code, out, _ = run_main(["table", "mzu_table6", "--no-run", "--set", "paths.runs_dir=/tmp/r"], capsys)
    assert code == 0 and calls[-1] == ("mzu_table6", {"only": None, "mode": "no-run", "until": None,
                                                      "overrides": ["paths.runs_dir=/tmp/r"], "skip_sanity": False, "part": None,
                                                      "replace_committed": False})
    code, _, _ = run_main(["table", "mzu_table6", "--no-run", "--replace-committed"], capsys)
    assert code == 0 and calls[-1][1]["replace_committed"] is True  # a run folder with other numbers replaces committed rows
    assert "mzu_table6_restaurant, mzu_table6_laptop" in out  # every experiment it runs, in the table's order
    code, _, _ = run_main(["table", "odyssey-1", "--plan", "--only", "lstm_odyssey_table1_large"], capsys)
    assert code == 0 and calls[-1][0] == "lstm_odyssey_table1" and calls[-1][1]["mode"] == "plan"
    assert calls[-1][1]["only"] == ["lstm_odyssey_table1_large"]
    code, _, _ = run_main(["table", "mzu_table6", "--plan", "--only", "mzu_table6_restaurant,mzu_table6_laptop"], capsys)
    assert code == 0 and calls[-1][1]["only"] == ["mzu_table6_restaurant", "mzu_table6_laptop"]  # as Hydra spells a list
    code, out, _ = run_main(["table", "fhe-2-small"], capsys)  # a part of a table, by the Makefile's short form
    assert code == 0 and calls[-1][0] == "fhe_table2" and calls[-1][1]["part"] == "small"
    assert "running fhe_table2_small, fhe_table2_small_fhe" in out


def test_table_verb_bad_input_is_one_line(capsys, monkeypatch, tmp_path):
    code, _, err = run_main(["table", "rcrn_table99"], capsys)
    assert code == 2 and err.count("\n") == 1 and "no table 'rcrn_table99'" in err
    code, _, err = run_main(["table", "rcrn_table5", "--only", "rcrn_table6"], capsys)
    assert code == 2 and err.count("\n") == 1 and "not an experiment of rcrn_table5" in err
    code, _, err = run_main(["table", "rcrn_table1_baby"], capsys)
    assert code == 2 and err.count("\n") == 1 and "is an experiment, not a table" in err
    monkeypatch.setattr(table_verb, "checkout_scripts", lambda: tmp_path / "nowhere")
    for mode in ("--no-run", "--plan"):  # a benchmark's committed timings are not measured again, nor its script needed
        code, out, _ = run_main(["table", "rcrn_table10", mode], capsys)
        assert code == 0 and f"{mode} leaves results/rcrn_table10.* as committed" in out
    code, _, err = run_main(["table", "rcrn_table10"], capsys)  # a benchmark: a script of the checkout
    assert code == 2 and err.count("\n") == 1 and "an installed package has no scripts/" in err


def test_claims_and_sanity_verbs_are_package_commands(recorded, capsys):
    assert run_main(["claims", "--results", "elsewhere"], capsys)[0] == 0
    assert run_main(["sanity", "rcrn_table5", "--plan"], capsys)[0] == 0
    assert recorded == [["claims", ["--results", "elsewhere"]], ["sanity", ["rcrn_table5", "--plan"]]]


def test_sanity_verb_help_is_the_gates_own(capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(["sanity", "--help"], capsys)
    assert stop.value.code == 0 and "--budget-minutes" in capsys.readouterr().out
