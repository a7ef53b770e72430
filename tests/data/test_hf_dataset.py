"""task=hf_dataset and hf_dataset_pair: a Hugging Face dataset's rows as classification records,
from a dataset saved to disk (written by the tests from the own-data fixtures) or by name from the
cache, whose absence offline is one line naming the cache and the command that fills it."""
from __future__ import annotations

from pathlib import Path

import pytest

from rnnbench.data.hf_dataset import HFDatasetReader
from rnnbench.errors import ConfigError

OWN = Path(__file__).resolve().parents[1] / "fixtures" / "data" / "own"


def saved_dataset(where: Path, pair: bool = False, splits=("train", "validation", "test"), class_label: bool = False) -> Path:
    """The own-data fixture (40 examples) saved with ``save_to_disk`` as a DatasetDict of ``splits``."""
    import datasets

    source = OWN / ("pairs.jsonl" if pair else "classification.csv")
    table = datasets.Dataset.from_json(str(source)) if pair else datasets.Dataset.from_csv(str(source))
    if class_label:
        table = table.class_encode_column("label")
    n = len(table)
    bounds = {"train": (0, n - 12), "validation": (n - 12, n - 6), "test": (n - 6, n)}
    parts = datasets.DatasetDict({s: table.select(range(*bounds[s])) for s in splits})
    out = where / ("hf_pairs" if pair else "hf_texts")
    parts.save_to_disk(str(out))
    return out


def test_a_saved_dataset_gives_tokenised_records_with_ids_and_sorted_labels(tmp_path):
    reader = HFDatasetReader(path=str(saved_dataset(tmp_path)))
    splits = reader.read_files(tmp_path)
    assert [len(splits[s]) for s in ("train", "dev", "test")] == [28, 6, 6]
    first = splits["train"][0]
    assert first["id"] == "train:0" and first["tokens"] == ["An", "island", "is", "on", "the", "map", "."]
    assert reader.label_names == sorted(reader.label_names) and reader.label_names[first["label"]] == "geography"


def test_a_classlabel_column_gives_its_class_names(tmp_path):
    reader = HFDatasetReader(path=str(saved_dataset(tmp_path, class_label=True)))
    splits = reader.read_files(tmp_path)
    assert reader.label_names[splits["train"][0]["label"]] == "geography"


def test_label_names_without_reading_the_records_match_those_the_records_use(tmp_path, monkeypatch):
    """Records read from the prepared cache leave the reader unread: its label names come from the
    training split's label column, not from tokenising every split again."""
    for class_label in (False, True):
        path = str(saved_dataset(tmp_path / str(class_label), class_label=class_label))
        read = HFDatasetReader(path=path)
        read.read_files(tmp_path)
        fresh = HFDatasetReader(path=path)
        monkeypatch.setattr(fresh, "tokenize", lambda text: pytest.fail("label_names tokenised the records"))
        assert fresh.label_names == read.label_names


def test_a_pair_dataset_keeps_its_columns_as_text_fields(tmp_path):
    reader = HFDatasetReader(path=str(saved_dataset(tmp_path, pair=True)), text_fields=["sentence1", "sentence2"])
    record = reader.read_files(tmp_path)["train"][0]
    assert set(record) == {"id", "sentence1", "sentence2", "label"} and record["sentence1"][:2] == ["The", "book"]


def test_a_missing_split_is_carved_from_train_with_the_fixed_seed(tmp_path):
    path = str(saved_dataset(tmp_path, splits=("train", "test")))
    first = HFDatasetReader(path=path).read_files(tmp_path)
    again = HFDatasetReader(path=path).read_files(tmp_path)
    assert len(first["dev"]) == 3 and first["dev"] == again["dev"] and len(first["train"]) == 25
    assert not {r["id"] for r in first["dev"]} & {r["id"] for r in first["train"]}


def test_a_label_unseen_in_training_is_one_error_naming_its_row(tmp_path):
    import datasets

    train = datasets.Dataset.from_dict({"text": ["a b", "c d"], "label": ["x", "y"]})
    test = datasets.Dataset.from_dict({"text": ["e f"], "label": ["z"]})
    datasets.DatasetDict({"train": train, "validation": train, "test": test}).save_to_disk(str(tmp_path / "d"))
    with pytest.raises(ConfigError, match=r"split 'test', row 0: label 'z' does not occur in the training split"):
        HFDatasetReader(path=str(tmp_path / "d")).read_files(tmp_path)


def test_a_missing_text_field_names_the_fields_there_are(tmp_path):
    with pytest.raises(ConfigError, match=r"no text field 'review' \(fields: text, label\); set task.reader.text_fields"):
        HFDatasetReader(path=str(saved_dataset(tmp_path)), text_fields=["review"]).read_files(tmp_path)


def test_an_absent_dataset_offline_names_the_cache_and_the_command_that_fills_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    reader = HFDatasetReader(name="no_such_dataset_here", config="small", cache_dir=str(tmp_path / "cache"))
    with pytest.raises(ConfigError) as err:
        reader.read_files(tmp_path)
    message = str(err.value)
    assert "\n" not in message and str(tmp_path / "cache") in message
    assert "datasets.load_dataset('no_such_dataset_here', 'small')" in message


@pytest.mark.parametrize("options, match", [
    ({}, "needs one of task.reader.name"),
    ({"name": "a", "path": "b"}, "needs one of task.reader.name"),
    ({"name": "a", "text_fields": ["x", "x"]}, "text_fields must name one text field"),
    ({"name": "a", "splits": {"valid": "validation"}}, "task.reader.splits: keys"),
    ({"name": "a", "tokenizer": "bpe"}, "task.reader.tokenizer"),
])
def test_bad_options_are_one_line(options, match):
    with pytest.raises(ConfigError, match=match):
        HFDatasetReader(**options)
