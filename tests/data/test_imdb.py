"""ImdbReader: the aclImdb folder layout, the packed JSON-lines layout, and the real data."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rnnbench.data.imdb import ImdbReader
from rnnbench.errors import ConfigError, DataFormatError, DatasetMissingError

# (split, label, file stem, text) in the packed files' order: pos then neg, each by numeric id
# (2_9 before 10_8: the folder reader must sort numerically, not as strings).
REVIEWS = [
    ("train", "pos", "0_7", "Magnifique \u2014 tr\u00e8s bien"),
    ("train", "pos", "2_9", "A fine film<br />I loved it!"),
    ("train", "pos", "10_8", "Not bad at all"),
    ("train", "neg", "0_3", "Dull, dull, dull! Don't watch it"),
    ("train", "neg", "1_1", "Twice as long as it should be<br /><br />2/10"),
    ("test", "pos", "0_10", "A fine film<br />I loved it!"),
    ("test", "neg", "0_2", "Not bad at all"),
]
TOKENS = {
    "Not bad at all": ["Not", "bad", "at", "all"],
    "A fine film<br />I loved it!": ["A", "fine", "film", "I", "loved", "it", "!"],
    "Magnifique \u2014 tr\u00e8s bien": ["Magnifique", "\u2014", "tr\u00e8s", "bien"],
    "Twice as long as it should be<br /><br />2/10": ["Twice", "as", "long", "as", "it", "should", "be", "2/10"],
    "Dull, dull, dull! Don't watch it": ["Dull", ",", "dull", ",", "dull", "!", "Do", "n't", "watch", "it"],
}
TRAIN_ORDER = [f"{split}/{label}/{stem}" for split, label, stem, _ in REVIEWS if split == "train"]


def write_folder(root: Path) -> Path:
    for split, label, stem, text in REVIEWS:
        folder = root / "imdb" / "aclImdb" / split / label
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{stem}.txt").write_text(text, encoding="utf-8")
    return root


def packed_line(split: str, label: str, stem: str, text: str) -> str:
    rating = int(stem.split("_")[1])
    return json.dumps({"id": stem, "label": label, "rating": rating, "orig_path": f"aclImdb/{split}/{label}/{stem}.txt",
                       "text": text})


def write_packed(root: Path, lines: dict[str, list[str]] | None = None) -> Path:
    if lines is None:
        lines = {split: [packed_line(*r) for r in REVIEWS if r[0] == split] for split in ("train", "test")}
    (root / "imdb").mkdir(parents=True, exist_ok=True)
    for split, split_lines in lines.items():
        (root / "imdb" / f"imdb_{split}.jsonl.gz").write_bytes(gzip.compress("\n".join(split_lines).encode() + b"\n"))
    return root


def expected(review_id: str) -> dict:
    split, label, stem = review_id.split("/")
    text = next(r[3] for r in REVIEWS if r[:3] == (split, label, stem))
    return {"id": review_id, "tokens": TOKENS[text], "label": {"neg": 0, "pos": 1}[label]}


def test_folder_layout_records(tmp_path):
    splits = ImdbReader(dev_size=2).load(write_folder(tmp_path))
    assert len(splits["train"]) == 3 and len(splits["dev"]) == 2
    # Held out at random, but each keeps the reader's order.
    assert sorted(splits["train"] + splits["dev"], key=lambda r: TRAIN_ORDER.index(r["id"])) == [
        expected(i) for i in TRAIN_ORDER
    ]
    assert [r["id"] for r in splits["train"]] == [i for i in TRAIN_ORDER if i in {r["id"] for r in splits["train"]}]
    assert splits["test"] == [expected("test/pos/0_10"), expected("test/neg/0_2")]


def test_packed_layout_gives_the_same_splits(tmp_path):
    from_folder = ImdbReader(dev_size=2).load(write_folder(tmp_path / "folder"))
    assert ImdbReader(dev_size=2).load(write_packed(tmp_path / "packed")) == from_folder


def test_packed_files_are_preferred(tmp_path):
    root = write_folder(tmp_path)
    train = [packed_line("train", "pos", "5_8", "Not bad at all")] * 3
    write_packed(root, {"train": train, "test": [packed_line("test", "neg", "0_2", "Not bad at all")]})
    splits = ImdbReader(dev_size=1).load(root)
    assert {r["id"] for split in splits.values() for r in split} == {"train/pos/5_8", "test/neg/0_2"}


@pytest.mark.parametrize("write", [write_folder, write_packed])
def test_labels_read_without_tokenising_are_the_records_ids_and_labels(tmp_path, write):
    root = write(tmp_path)
    splits = ImdbReader(dev_size=2).load(root)
    assert ImdbReader(dev_size=2).read_labels(root) == {
        split: [{"id": r["id"], "label": r["label"]} for r in records] for split, records in splits.items()}


def test_labels_of_absent_files_are_left_to_the_records_reader(tmp_path):
    assert ImdbReader().read_labels(tmp_path) is None  # load() then names the files or tries the hub copy


def test_dev_split_is_deterministic(tmp_path):
    root = write_folder(tmp_path)
    dev = [r["id"] for r in ImdbReader(dev_size=2).load(root)["dev"]]
    assert dev == [r["id"] for r in ImdbReader(dev_size=2).load(root)["dev"]]
    assert any([r["id"] for r in ImdbReader(dev_size=2, dev_seed=s).load(root)["dev"]] != dev for s in range(5))


def test_max_tokens_truncates(tmp_path):
    splits = ImdbReader(dev_size=0, max_tokens=3).load(write_folder(tmp_path))
    assert max(len(r["tokens"]) for split in splits.values() for r in split) == 3
    assert splits["test"][0]["tokens"] == ["A", "fine", "film"]


def test_dev_larger_than_train_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="dev size 6 but only 5 training examples"):
        ImdbReader(dev_size=6).load(write_folder(tmp_path))


@pytest.mark.parametrize(
    "bad", ["{not json", json.dumps({"id": "3_1", "label": "unsup", "text": "x"}), json.dumps({"id": "3_1", "label": "neg"})]
)
def test_malformed_packed_line_names_file_and_line(tmp_path, bad):
    root = write_packed(tmp_path, {"train": [packed_line("train", "pos", "0_9", "Good"), bad], "test": []})
    with pytest.raises(DataFormatError, match=r"imdb_train\.jsonl\.gz:2: not a review record"):
        ImdbReader(dev_size=1).load(root)


def test_malformed_file_name_is_named(tmp_path):
    root = write_folder(tmp_path)
    (root / "imdb" / "aclImdb" / "test" / "neg" / "review.txt").write_text("Bad", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"test/neg/review\.txt: file name is not <id>_<rating>\.txt"):
        ImdbReader(dev_size=1).load(root)


def test_missing_files_are_named(tmp_path):
    with pytest.raises(DatasetMissingError) as info:
        ImdbReader().load(tmp_path)
    message = str(info.value)
    assert "imdb/aclImdb/train/pos" in message and "imdb/aclImdb/test/neg" in message
    assert "aclImdb_v1.tar.gz" in message and "HF_HUB_OFFLINE" in message
    write_packed(tmp_path, {"train": [packed_line("train", "pos", "0_9", "Good")]})
    with pytest.raises(DatasetMissingError, match="imdb/imdb_test.jsonl.gz"):
        ImdbReader().load(tmp_path)


@pytest.fixture(scope="module")
def real_raw(real_data):
    """The real splits before tokenisation: tokenising all 50,000 reviews takes minutes on a busy
    machine, and the tokeniser is covered by the fixtures above."""
    return ImdbReader().read_raw(real_data)


def test_real_data_counts(real_raw):
    assert {split: len(raw) for split, raw in real_raw.items()} == {"train": 22500, "dev": 2500, "test": 25000}
    assert sum(label for _, label, _ in real_raw["test"]) == 12500
    assert sum(label for split in ("train", "dev") for _, label, _ in real_raw[split]) == 12500
    ids = [review_id for raw in real_raw.values() for review_id, _, _ in raw]
    assert len(set(ids)) == 50000


def test_real_data_known_reviews(real_raw):
    reviews = {review_id: (label, text) for raw in real_raw.values() for review_id, label, text in raw}
    label, text = reviews["train/pos/0_9"]
    assert label == 1 and text.startswith("Bromwell High is a cartoon comedy. It ran at the same time as")
    label, text = reviews["test/pos/0_10"]
    assert label == 1 and text.startswith("I went and saw this movie last night after being coaxed to by a few friends")
