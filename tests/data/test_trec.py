"""TrecReader on the original UIUC files: fixtures with the real quirks, and the real data."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from rnnbench.data.trec import COARSE_LABELS, FINE_LABELS, TrecReader
from rnnbench.errors import DataFormatError, DatasetMissingError

# Ten training questions; line 2 holds the Latin-1 byte 0xF0 of the real file's line 66.
TRAIN = (
    b"DESC:manner How did serfdom develop in and then leave Russia ?\n"
    b"LOC:city Which city has the oldest relationship as a sister\xf0city with Los Angeles ?\n"
    b"ENTY:animal What fowl grabs the spotlight after the Chinese Year of the Monkey ?\n"
    b"ABBR:exp What is the full form of .com ?\n"
    b"HUM:ind What contemptible scoundrel stole the cork from my lunch ?\n"
    b"HUM:gr What team did baseball 's St. Louis Browns become ?\n"
    b"DESC:def What are liver enzymes ?\n"
    b"NUM:date When was Ozzy Osbourne born ?\n"
    b"LOC:other Where is the Loop ?\n"
    b"ENTY:cremat What films featured the character Popeye Doyle ?\n"
)
# NUM:temp occurs in test only: a fine label need not be seen in train.
TEST = b"NUM:temp What is the temperature of the sun 's surface ?\nHUM:ind Who was Galileo ?\n"


def write_trec(root: Path, train: bytes = TRAIN, test: bytes = TEST) -> Path:
    (root / "trec").mkdir(parents=True)
    (root / "trec" / "train_5500.label").write_bytes(train)
    (root / "trec" / "TREC_10.label").write_bytes(test)
    return root


def coarse(name: str) -> int:
    return COARSE_LABELS.index(name)


def test_coarse_records_and_latin1_byte(tmp_path):
    splits = TrecReader(dev_fraction=0.2).load(write_trec(tmp_path))
    assert [len(splits[s]) for s in ("train", "dev", "test")] == [8, 2, 2]
    everything = sorted(splits["train"] + splits["dev"], key=lambda r: int(r["id"].split("-")[1]))
    assert everything[:2] == [
        {"id": "train-0", "tokens": "How did serfdom develop in and then leave Russia ?".split(), "label": coarse("DESC")},
        {
            "id": "train-1",
            "tokens": "Which city has the oldest relationship as a sister\u00f0city with Los Angeles ?".split(" "),
            "label": coarse("LOC"),
        },
    ]
    labels = "DESC LOC ENTY ABBR HUM HUM DESC NUM LOC ENTY".split()
    assert [r["label"] for r in everything] == [coarse(c) for c in labels]
    assert splits["test"] == [
        {"id": "test-0", "tokens": "What is the temperature of the sun 's surface ?".split(), "label": coarse("NUM")},
        {"id": "test-1", "tokens": "Who was Galileo ?".split(), "label": coarse("HUM")},
    ]


def test_fine_labels_are_fixed_and_sorted(tmp_path):
    reader = TrecReader(fine=True)
    splits = reader.load(write_trec(tmp_path))
    assert reader.label_names == sorted(reader.label_names) and len(reader.label_names) == 50
    assert TrecReader().label_names == ["ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM"]
    assert [reader.label_names[r["label"]] for r in splits["test"]] == ["NUM:temp", "HUM:ind"]


def test_dev_split_is_deterministic_and_disjoint(tmp_path):
    root = write_trec(tmp_path)
    first, again = TrecReader(dev_fraction=0.3).load(root), TrecReader(dev_fraction=0.3).load(root)
    assert first == again
    dev_ids = {r["id"] for r in first["dev"]}
    assert len(dev_ids) == 3 and not dev_ids & {r["id"] for r in first["train"]}
    other_seeds = [{r["id"] for r in TrecReader(dev_fraction=0.3, dev_seed=s).load(root)["dev"]} for s in range(5)]
    assert any(ids != dev_ids for ids in other_seeds)


@pytest.mark.parametrize(
    "line, problem",
    [(b"What is this ?", "unknown label"), (b"DESC:nonsense What is this ?", "unknown label"), (b"DESC:def", "no question")],
)
def test_malformed_line_names_file_and_line(tmp_path, line, problem):
    root = write_trec(tmp_path, test=b"HUM:ind Who was Galileo ?\n\n" + line + b"\n")
    with pytest.raises(DataFormatError) as info:
        TrecReader().load(root)
    message = str(info.value)
    assert "TREC_10.label:3" in message and problem in message


def test_missing_files_are_named(tmp_path):
    with pytest.raises(DatasetMissingError) as info:
        TrecReader().load(tmp_path)
    message = str(info.value)
    assert "trec/train_5500.label" in message and "trec/TREC_10.label" in message
    assert "cogcomp" in message and "HF_HUB_OFFLINE" in message


def test_real_data_counts(real_data):
    coarse_splits = TrecReader().load(real_data)
    assert [len(coarse_splits[s]) for s in ("train", "dev", "test")] == [4907, 545, 500]

    def counts(records: list[dict]) -> dict[str, int]:
        return dict(Counter(COARSE_LABELS[r["label"]] for r in records))

    train_and_dev = coarse_splits["train"] + coarse_splits["dev"]
    assert counts(train_and_dev) == {"ENTY": 1250, "HUM": 1223, "DESC": 1162, "NUM": 896, "LOC": 835, "ABBR": 86}
    assert counts(coarse_splits["test"]) == {"DESC": 138, "NUM": 113, "ENTY": 94, "LOC": 81, "HUM": 65, "ABBR": 9}
    assert any("sister\u00f0city" in r["tokens"] for r in train_and_dev)  # line 66's Latin-1 byte

    fine = TrecReader(fine=True).load(real_data)
    assert {r["id"] for r in fine["dev"]} == {r["id"] for r in coarse_splits["dev"]}
    assert {r["label"] for r in fine["train"] + fine["dev"]} == set(range(len(FINE_LABELS)))
    assert len({r["label"] for r in fine["test"]}) == 42
