"""SciTailReader: the official tsv / snli / dgem formats and the qnn processed copy, the dev-as-train option, errors, real data."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from rnnbench.data.scitail import FORMAT_FILES, LABELS, SciTailReader
from rnnbench.errors import ConfigError, DataFormatError, DatasetMissingError

# (premise, hypothesis, official tsv label); quotes need no escaping (read without CSV quoting), one non-ASCII letter.
PAIRS = {
    "train": [
        ('Wavelength "λ" is the distance between two crests.', "Wavelength is the distance between two crests.", "entails"),
        ("Humans have 23 pairs of chromosomes.", "Frogs have 23 pairs of chromosomes.", "neutral"),
        ("Lava cools into rock.", "Lava cools and forms igneous rock.", "entails"),
    ],
    "dev": [(f"Fact number {i} about rocks.", f"Rocks have property {i}.", "entails" if i % 3 == 0 else "neutral") for i in range(10)],
    "test": [("Plants make food by photosynthesis.", "Photosynthesis makes food for plants.", "entails")],
}
SNLI_LABEL = {"entails": "entailment", "neutral": "neutral"}
QNN_LABEL = {"entails": "0", "neutral": "1"}


def write_format(root: Path, fmt: str, splits=("train", "dev", "test"), extra: dict | None = None) -> Path:
    for split in splits:
        lines = []
        for premise, hypothesis, label in PAIRS[split]:
            if fmt == "tsv":
                lines.append(f"{premise}\t{hypothesis}\t{label}")
            elif fmt == "dgem":
                lines.append(f"{premise}\t{hypothesis}\t{label}\t$$$ rocks$$$have$$$property<>")
            elif fmt == "qnn":
                lines.append(f"{premise}\t{hypothesis}\t{QNN_LABEL[label]}")
            else:
                lines.append(json.dumps({"annotator_labels": [SNLI_LABEL[label]], "captionID": "", "gold_label": SNLI_LABEL[label], "pairID": "",
                                         "sentence1": premise, "sentence1_binary_parse": "", "sentence1_parse": "",
                                         "sentence2": hypothesis, "sentence2_parse": ""}))
        lines += (extra or {}).get(split, [])
        path = root / FORMAT_FILES[fmt].format(split=split)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return root


@pytest.mark.parametrize("fmt", ["tsv", "snli", "dgem", "qnn"])
def test_every_format_gives_the_same_records(tmp_path, fmt):
    splits = SciTailReader(format=fmt).load(write_format(tmp_path, fmt))
    assert SciTailReader.label_names == ["entails", "neutral"]
    assert [len(splits[s]) for s in ("train", "dev", "test")] == [3, 10, 1]
    assert splits["train"][0] == {
        "id": "train-0",
        "premise": ["Wavelength", "``", "λ", "''", "is", "the", "distance", "between", "two", "crests", "."],
        "hypothesis": ["Wavelength", "is", "the", "distance", "between", "two", "crests", "."],
        "label": 0,
    }
    assert [r["label"] for r in splits["train"]] == [LABELS.index(label) for *_, label in PAIRS["train"]]
    assert [r["label"] for r in splits["dev"]] == [0 if i % 3 == 0 else 1 for i in range(10)]


def test_snli_format_drops_no_gold(tmp_path):
    no_gold = json.dumps({"gold_label": "-", "sentence1": "A.", "sentence2": "B."})
    splits = SciTailReader(format="snli").load(write_format(tmp_path, "snli", extra={"test": [no_gold]}))
    assert len(splits["test"]) == 1


def test_train_from_dev_splits_the_official_dev_set(tmp_path):
    root = write_format(tmp_path, "qnn", splits=("dev", "test"))  # no train file, as on the development machine
    with pytest.raises(DatasetMissingError) as info:
        SciTailReader(format="qnn").load(root)
    assert "scitail/qnn_processed_tsv/scitail_train.tsv" in str(info.value) and "allenai" in str(info.value)
    reader = SciTailReader(format="qnn", train_from_dev=0.8)
    assert reader.files == ("scitail/qnn_processed_tsv/scitail_dev.tsv", "scitail/qnn_processed_tsv/scitail_test.tsv")
    splits = reader.load(root)
    assert [len(splits[s]) for s in ("train", "dev", "test")] == [8, 2, 1]
    train_ids, dev_ids = {r["id"] for r in splits["train"]}, {r["id"] for r in splits["dev"]}
    assert not train_ids & dev_ids and train_ids | dev_ids == {f"dev-{i}" for i in range(10)}
    assert SciTailReader(format="qnn", train_from_dev=0.8).load(root) == splits
    other = [{r["id"] for r in SciTailReader(format="qnn", train_from_dev=0.8, split_seed=s).load(root)["dev"]} for s in range(5)]
    assert any(ids != dev_ids for ids in other)


def _shared_hypotheses(splits) -> set:
    return {tuple(r["hypothesis"]) for r in splits["train"]} & {tuple(r["hypothesis"]) for r in splits["dev"]}


def _write_shared_hypotheses(root: Path) -> Path:
    """A dev file as SciTail's: 60 pairs over 6 hypotheses (each hypothesis beside 10 premises)."""
    lines = [f"Premise {i} about rocks.\tRocks have property {i % 6}.\t{i % 2}" for i in range(60)]
    for split, text in (("dev", lines), ("test", ["A premise.\tA hypothesis.\t0"])):
        path = root / FORMAT_FILES["qnn"].format(split=split)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in text), encoding="utf-8")
    return root


def test_split_by_hypothesis_keeps_each_hypothesis_on_one_side(tmp_path):
    root = _write_shared_hypotheses(tmp_path)
    by_pair = SciTailReader(format="qnn", train_from_dev=0.8).load(root)
    assert _shared_hypotheses(by_pair)  # the first runs' split: hypotheses on both sides
    splits = SciTailReader(format="qnn", train_from_dev=0.8, dev_split_by="hypothesis").load(root)
    assert not _shared_hypotheses(splits)
    assert len(splits["dev"]) == 20 and len(splits["train"]) == 40  # whole groups of 10 until at least 20% is dev
    assert {r["id"] for r in splits["train"] + splits["dev"]} == {f"dev-{i}" for i in range(60)}
    again = SciTailReader(format="qnn", train_from_dev=0.8, dev_split_by="hypothesis").load(root)
    assert again == splits


def test_bad_options():
    with pytest.raises(ConfigError, match="format"):
        SciTailReader(format="csv")
    with pytest.raises(ConfigError, match="train_from_dev"):
        SciTailReader(train_from_dev=1.5)
    with pytest.raises(ConfigError, match="dev_split_by"):
        SciTailReader(dev_split_by="premise")


@pytest.mark.parametrize(
    "fmt, line, problem",
    [
        ("tsv", "A premise.\tA hypothesis.\tentailment", "label 'entailment'"),
        ("tsv", "A premise.\tA hypothesis.", "2 tab-separated columns"),
        ("dgem", "A premise.\tA hypothesis.\tneutral", "3 tab-separated columns, expected 4"),
        ("qnn", "A premise.\tA hypothesis.\t2", "label '2'"),
        ("qnn", "\tA hypothesis.\t1", "empty premise"),
        ("snli", '{"gold_label": "neutral", "sentence1": "A."}', "sentence2"),
        ("snli", "{broken", "not a JSON object"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, fmt, line, problem):
    root = write_format(tmp_path, fmt, extra={"test": [line]})
    with pytest.raises(DataFormatError) as info:
        SciTailReader(format=fmt).load(root)
    message = str(info.value)
    assert FORMAT_FILES[fmt].format(split="test") + ":2" in message and problem in message


def test_real_data_counts(real_data):
    splits = SciTailReader(format="qnn", train_from_dev=0.8).load(real_data)
    assert [len(splits[s]) for s in ("train", "dev", "test")] == [1043, 261, 2126]
    assert len(_shared_hypotheses(splits)) == 87  # the leak of the split by pair: 87 of the 121 hypotheses on both sides
    grouped = SciTailReader(format="qnn", train_from_dev=0.8, dev_split_by="hypothesis").load(real_data)
    assert not _shared_hypotheses(grouped) and [len(grouped[s]) for s in ("train", "dev")] == [1031, 273]

    def counts(records):
        return dict(Counter(LABELS[r["label"]] for r in records))

    assert counts(splits["train"] + splits["dev"]) == {"entails": 657, "neutral": 647}
    assert counts(splits["test"]) == {"entails": 842, "neutral": 1284}
