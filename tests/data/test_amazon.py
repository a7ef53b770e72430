"""AmazonReader on the FDU-MTL files: encodings, the NEL byte, the held-out dev split, and the real data."""
from __future__ import annotations

from pathlib import Path

import pytest

from rnnbench.data.amazon import DOMAINS, AmazonReader
from rnnbench.errors import ConfigError, DataFormatError, DatasetMissingError

# UTF-8, with U+0085 (bytes C2 85) inside a review and a no-break space inside a token.
BOOKS_TRAIN = (
    "1\ti loved this book , truly\u0085 a gem .\n"
    "0\tdull and  long .\n"  # a double space is no empty token
    "1\tna\u00efve but 100\u00a0% fun\n"
    "0\tskip it\n"
    "1\tgreat read\n"
).encode("utf-8")
BOOKS_TEST = b"0\tnot worth it\n1\ta classic\n"
# Latin-1, as MR.task.*: a raw 0x85 byte (which str.splitlines() would split on) and 0xE9.
MR_TRAIN = b"1\tit's a caf\xe9 of a film \x85 charming . \n0\tflat\x85 and dull . \n1\twarm\n"
MR_TEST = b"0\tboring . \n"


def write_domain(root: Path, domain: str, train: bytes, test: bytes) -> Path:
    folder = root / "amazon_fdu_mtl"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{domain}.task.train").write_bytes(train)
    (folder / f"{domain}.task.test").write_bytes(test)
    return root


def test_utf8_records(tmp_path):
    splits = AmazonReader("books", dev_size=2).load(write_domain(tmp_path, "books", BOOKS_TRAIN, BOOKS_TEST))
    assert sorted(splits["train"] + splits["dev"], key=lambda r: r["id"]) == [
        {"id": "books-train-0", "tokens": ["i", "loved", "this", "book", ",", "truly\u0085", "a", "gem", "."], "label": 1},
        {"id": "books-train-1", "tokens": ["dull", "and", "long", "."], "label": 0},
        {"id": "books-train-2", "tokens": ["na\u00efve", "but", "100\u00a0%", "fun"], "label": 1},
        {"id": "books-train-3", "tokens": ["skip", "it"], "label": 0},
        {"id": "books-train-4", "tokens": ["great", "read"], "label": 1},
    ]
    assert len(splits["dev"]) == 2
    assert splits["test"] == [
        {"id": "books-test-0", "tokens": ["not", "worth", "it"], "label": 0},
        {"id": "books-test-1", "tokens": ["a", "classic"], "label": 1},
    ]


def test_latin1_file_with_nel_byte(tmp_path):
    splits = AmazonReader("MR", dev_size=1).load(write_domain(tmp_path, "MR", MR_TRAIN, MR_TEST))
    assert sorted(splits["train"] + splits["dev"], key=lambda r: r["id"]) == [
        {"id": "MR-train-0", "tokens": ["it's", "a", "caf\u00e9", "of", "a", "film", "\u0085", "charming", "."], "label": 1},
        {"id": "MR-train-1", "tokens": ["flat\u0085", "and", "dull", "."], "label": 0},
        {"id": "MR-train-2", "tokens": ["warm"], "label": 1},
    ]
    assert splits["test"] == [{"id": "MR-test-0", "tokens": ["boring", "."], "label": 0}]


def test_dev_split_is_deterministic_and_disjoint(tmp_path):
    root = write_domain(tmp_path, "books", BOOKS_TRAIN, BOOKS_TEST)
    first = AmazonReader("books", dev_size=2).load(root)
    assert first == AmazonReader("books", dev_size=2).load(root)
    dev_ids = {r["id"] for r in first["dev"]}
    assert not dev_ids & {r["id"] for r in first["train"]}
    other_seeds = [{r["id"] for r in AmazonReader("books", dev_size=2, dev_seed=s).load(root)["dev"]} for s in range(5)]
    assert any(ids != dev_ids for ids in other_seeds)


@pytest.mark.parametrize("line, problem", [(b"1 no tab here", "no tab"), (b"2\tneutral ?", "is not 0 or 1")])
def test_malformed_line_names_file_and_line(tmp_path, line, problem):
    root = write_domain(tmp_path, "books", BOOKS_TRAIN + b"\n" + line + b"\n", BOOKS_TEST)
    with pytest.raises(DataFormatError) as info:
        AmazonReader("books", dev_size=2).load(root)
    assert "books.task.train:7" in str(info.value) and problem in str(info.value)


def test_missing_files_are_named(tmp_path):
    with pytest.raises(DatasetMissingError) as info:
        AmazonReader("baby").load(tmp_path)
    message = str(info.value)
    assert "amazon_fdu_mtl/baby.task.train" in message and "amazon_fdu_mtl/baby.task.test" in message
    assert "'amazon_baby'" in message and "no hub copy" in message


def test_dev_larger_than_train_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="books.task.train: dev size 200 but only 5 training examples"):
        AmazonReader("books", dev_size=200).load(write_domain(tmp_path, "books", BOOKS_TRAIN, BOOKS_TEST))


def test_unknown_domain_lists_the_known_ones():
    with pytest.raises(ConfigError, match="known: apparel, baby, books"):
        AmazonReader("kitchen")


TRAIN_FILE_SIZES = {"baby": 1500, "camera_photo": 1597, "electronics": 1598, "magazines": 1570, "software": 1515}


@pytest.mark.parametrize("domain", DOMAINS)
def test_real_data_counts(real_data, domain):
    splits = AmazonReader(domain).load(real_data)
    train_size = TRAIN_FILE_SIZES.get(domain, 1600) - 200
    assert {s: len(r) for s, r in splits.items()} == {"train": train_size, "dev": 200, "test": 400}
    if domain == "MR":  # Latin-1 with 0x85 bytes: a wrong line split would change the counts above
        assert any("\u0085" in t for r in splits["train"] + splits["dev"] for t in r["tokens"])
