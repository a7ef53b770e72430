"""The majority-class floors (rnnbench.results.floors, `rnnbench floors`, results/floors.csv): each
table column's score of always predicting the most common label of the items it scores."""
from __future__ import annotations

import random
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from rnnbench import metrics
from rnnbench.commands import main
from rnnbench.campaign import floors as computed
from rnnbench.results import floors
from rnnbench.results.floors import Floor

REPO = Path(__file__).resolve().parents[2]
TASK = OmegaConf.create({"metrics": ["accuracy", "map"], "metric_subsets": {"hard": {"hard": True}}})


def _records(labels: list[int], hard: list[bool]) -> list[dict]:
    return [{"id": str(i), "label": label, "hard": h} for i, (label, h) in enumerate(zip(labels, hard))]


# ---------------------------------------------------------------------------------------------
# On records


def test_a_subset_column_has_its_floor_on_its_items_with_its_own_majority_class():
    # Whole split: 5 of 9 are class 0. Hard subset (4 items): 3 of 4 are class 2, not the split's majority.
    records = _records([0, 0, 0, 0, 0, 2, 2, 2, 1], [False, False, False, False, True, True, True, True, False])
    got = {f.dataset: f for f in floors.columns_floors("t", {"All": "accuracy", "Hard": "accuracy_hard"}, {"test": records},
                                                       TASK, 100.0, ["neg", "neu", "pos"], ["test"])}
    assert got["All"] == Floor("t", "All", "test", round(500 / 9, 4), 9, "neg")
    assert got["Hard"] == Floor("t", "Hard", "test", 75.0, 4, "pos")


def test_the_floor_is_what_the_evaluator_scores_for_that_constant_prediction():
    rng = random.Random(3)
    records = _records([rng.randrange(4) for _ in range(200)], [rng.random() < 0.3 for _ in range(200)])
    for column, metric in {"All": "accuracy", "Hard": "accuracy_hard"}.items():
        floor = floors.column_floor("t", column, metric, "dev", records, TASK, 100.0, ["a", "b", "c", "d"])
        constant = ["abcd".index(floor.label)] * len(records)
        scored = metrics.score(["accuracy"], constant, records, dict(TASK.metric_subsets))
        assert floor.majority == pytest.approx(scored[metric] * 100, abs=1e-4)
        assert floor.items == (len(records) if metric == "accuracy" else sum(r["hard"] for r in records))


def test_columns_without_a_majority_baseline_or_items_have_no_floor():
    records = _records([0, 1, 1], [False, False, False])
    columns = {"MAP": "map", "Openness": "stats:gate_openness", "Hard": "accuracy_hard", "Unknown": "accuracy_easy"}
    assert floors.columns_floors("t", columns, {"dev": records, "test": records}, TASK, 100.0, ["a", "b"]) == []


def test_a_tie_goes_to_the_lowest_label_whatever_the_order():
    assert floors.majority_label(_records([2, 1, 2, 1], [False] * 4)) == 1
    assert floors.majority_label(_records([1, 2, 2, 1], [False] * 4)) == 1


# ---------------------------------------------------------------------------------------------
# The file


def test_the_csv_round_trips_and_is_sorted_whatever_the_order_given():
    given = [Floor("mzu_table6", "Laptop-HDS/accuracy_mean", "test", 45.3704, 108, "neutral"),
             Floor("a_table", "X", "test", 10.0, 3, "9"), Floor("a_table", "X", "dev", 33.3333, 3, "a, b")]
    text = floors.format_floors(given)
    assert text == floors.format_floors(reversed(given))
    assert text.splitlines()[0] == "table,dataset,split,majority,items,label"
    assert text.splitlines()[1:3] == ["a_table,X,dev,33.3333,3,\"a, b\"", "a_table,X,test,10.0000,3,9"]
    assert floors.parse_floors(text.splitlines()) == {f.key(): f for f in given}


def test_reading_floors_without_the_file_is_empty_and_a_bad_file_is_one_line(tmp_path):
    assert floors.read_floors(tmp_path) == {}
    (tmp_path / floors.FILE).write_text("table,dataset,split,majority,items,label\nt,X,test,high,3,a\n")
    with pytest.raises(floors.ConfigError, match=r"floors.csv:2: not a floor line"):
        floors.read_floors(tmp_path)


# ---------------------------------------------------------------------------------------------
# From the experiment configs and a reader (tiny SemEval-2014 files: MZU Table 6)


def _sentence(number: int, text: str, terms: list[tuple[str, str]]) -> str:
    aspects = "".join(f'<aspectTerm term="{term}" polarity="{polarity}" from="0" to="1"/>' for term, polarity in terms)
    return f'<sentence id="{number}"><text>{text}</text><aspectTerms>{aspects}</aspectTerms></sentence>'


def _xml(sentences: list[str]) -> str:
    return '<?xml version="1.0" encoding="UTF-8"?>\n<sentences>\n' + "\n".join(sentences) + "\n</sentences>\n"


# Test split: 8 aspect terms, 4 positive (the split's majority, 50%); the hard subset is the 5 terms of
# the two sentences whose terms disagree: 3 negative, its own majority (60%), not the split's.
TEST_SENTENCES = [
    _sentence(1, "The screen is bright .", [("screen", "positive")]),
    _sentence(2, "The keyboard is nice .", [("keyboard", "positive")]),
    _sentence(3, "A fair price .", [("price", "positive")]),
    _sentence(4, "Great screen , poor battery and a loud fan .", [("screen", "positive"), ("battery", "negative"), ("fan", "negative")]),
    _sentence(5, "The lid is fine but the hinge broke .", [("lid", "neutral"), ("hinge", "negative")]),
]
# Train: 10 one-term sentences (no hard subset); 10% of the sentences, one, is held out as dev.
TRAIN_SENTENCES = [_sentence(100 + i, f"Item {i} works .", [("Item", "positive")]) for i in range(10)]


@pytest.fixture
def absa_data(tmp_path) -> Path:
    """A data folder with tiny SemEval-2014 files for both domains (MZU Table 6 has both)."""
    root = tmp_path / "data"
    folder = root / "semeval2014_absa"
    folder.mkdir(parents=True)
    for train, test in (("Laptop_Train_v2.xml", "Laptops_Test_Gold.xml"), ("Restaurants_Train_v2.xml", "Restaurants_Test_Gold.xml")):
        (folder / train).write_text(_xml(TRAIN_SENTENCES))
        (folder / test).write_text(_xml(TEST_SENTENCES))
    return root


@pytest.fixture
def results(tmp_path) -> Path:
    """An evidence folder with MZU Table 6 and RCRN Table 7 committed (their CSV's content is not read)."""
    folder = tmp_path / "results"
    folder.mkdir()
    for table in ("mzu_table6", "rcrn_table7"):
        (folder / f"{table}.csv").write_text("model,dataset\n")
    return folder


def _paths(data: Path) -> list[str]:
    return [f"paths.data_dir={data}", f"paths.cache_dir={data.parent / 'cache'}"]


def test_a_tables_floors_come_from_its_experiment_configs_and_its_readers(absa_data):
    got = {f.key(): f for f in computed.table_floors("mzu_table6", _paths(absa_data))}
    assert got[("mzu_table6", "Laptop-DS/accuracy_mean", "test")] == Floor("mzu_table6", "Laptop-DS/accuracy_mean", "test", 50.0, 8, "positive")
    assert got[("mzu_table6", "Laptop-HDS/accuracy_mean", "test")] == Floor("mzu_table6", "Laptop-HDS/accuracy_mean", "test", 60.0, 5, "negative")
    assert got[("mzu_table6", "Restaurant-HDS/accuracy_mean", "test")].majority == 60.0
    assert got[("mzu_table6", "Laptop-DS/accuracy_mean", "dev")] == Floor("mzu_table6", "Laptop-DS/accuracy_mean", "dev", 100.0, 1, "positive")
    assert ("mzu_table6", "Laptop-HDS/accuracy_mean", "dev") not in got  # no hard sentence in dev: no item, no floor
    assert len(got) == 6


def test_writing_is_deterministic_and_keeps_the_other_tables_lines(absa_data, results):
    kept = Floor("rcrn_table7", "SciTail", "test", 60.3951, 2126, "neutral")
    gone = Floor("rcrn_table99", "X", "test", 1.0, 1, "a")  # a table without committed evidence
    (results / floors.FILE).write_text(floors.format_floors([kept, gone]))
    said: list[str] = []
    computed.write_floors(results, ["mzu_table6"], _paths(absa_data), say=said.append)
    first = (results / floors.FILE).read_bytes()
    computed.write_floors(results, ["mzu_table6"], _paths(absa_data), say=said.append)
    assert (results / floors.FILE).read_bytes() == first
    written = floors.read_floors(results)
    assert written[kept.key()] == kept and gone.key() not in written
    assert written[("mzu_table6", "Laptop-HDS/accuracy_mean", "test")].label == "negative"
    assert said[0].startswith("mzu_table6: 6 floors; test: Laptop-DS/accuracy_mean 50.0 (positive, 8 items)")


def test_a_table_whose_data_is_absent_is_one_line_and_keeps_its_lines(tmp_path, results):
    kept = Floor("mzu_table6", "Laptop-DS/accuracy_mean", "test", 52.1407, 654, "positive")
    (results / floors.FILE).write_text(floors.format_floors([kept]))
    said: list[str] = []
    computed.write_floors(results, ["mzu_table6"], _paths(tmp_path / "empty"), say=said.append)
    assert len(said) == 1 and said[0].startswith("mzu_table6: skipped, its data is missing (dataset 'semeval14_")
    assert floors.read_floors(results) == {kept.key(): kept}


def test_a_table_without_committed_evidence_is_refused(results):
    with pytest.raises(floors.ConfigError, match=r"no committed evidence for dcu_table2"):
        computed.write_floors(results, ["dcu_table2"])


def test_the_floors_verb_writes_the_file_and_says_one_line_per_table(absa_data, results, capsys):
    args = ["floors", "mzu-6", "--results", str(results), *[a for p in _paths(absa_data) for a in ("--set", p)]]
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("mzu_table6: 6 floors") and out[1] == f"wrote {results / floors.FILE}: 6 floors"
    assert ("mzu_table6", "Restaurant-DS/accuracy_mean", "test") in floors.read_floors(results)


def test_the_floors_verb_bad_input_is_one_line(tmp_path, capsys):
    assert main(["floors", "--results", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: evidence folder") and "does not exist" in err
    assert main(["floors", "no_such_table", "--results", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("error: no table 'no_such_table'")


# ---------------------------------------------------------------------------------------------
# The committed file


def test_the_committed_floors_are_what_the_data_gives(real_data):
    """results/floors.csv for RCRN Table 7 (SciTail) and MZU Table 6 (DS and the hard subsets), recomputed."""
    committed = floors.read_floors(REPO / "results")
    load = computed.split_loader()
    for table in ("rcrn_table7", "mzu_table6"):
        found = {f.key(): f for f in computed.table_floors(table, [f"paths.data_dir={real_data}"], load)}
        assert found and {k: f for k, f in committed.items() if k[0] == table} == found, table
    assert committed[("rcrn_table7", "SciTail", "test")].majority == pytest.approx(60.4, abs=0.05)
    assert committed[("rcrn_table7", "SciTail", "test")].label == "neutral"
    assert committed[("mzu_table6", "Laptop-DS/accuracy_mean", "test")].majority == pytest.approx(52.1, abs=0.05)
    assert committed[("mzu_table6", "Laptop-HDS/accuracy_mean", "test")].majority == pytest.approx(45.4, abs=0.05)
