"""SSTReader: the PTB tree parser, both layouts (trees/ folder and official zip), and the real data."""
from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest

from rnnbench.data.sst import SSTReader, Tree, parse_tree
from rnnbench.errors import ConfigError, DataFormatError, DatasetMissingError

TREES = {
    "train.txt": (
        "(3 (2 (2 The) (2 film)) (3 (3 (2 is) (4 good)) (2 .)))\n"
        "(1 (2 -LRB-) (1 (1 bad) (2 -RRB-)))\n"  # escaped brackets
        "(2 (2 co-writer\\/director) (2 8\u00a01\\/2))\n"  # \/ escape; a no-break space inside one leaf
        "(4 (3 good) (4 (2 and) (4 great)))\n"
    ),
    "dev.txt": "(0 (0 awful) (2 .))\n(2 (2 It) (2 exists))\n",
    "test.txt": "(3 (3 good) (2 fun))\n",
}


def write_trees(root: Path, trees: dict[str, str] = TREES) -> Path:
    folder = root / "sst" / "trees"
    folder.mkdir(parents=True)
    for name, text in trees.items():
        (folder / name).write_text(text, encoding="utf-8")
    return root


def write_zip(root: Path, trees: dict[str, str] = TREES) -> Path:
    (root / "sst").mkdir(parents=True)
    with zipfile.ZipFile(root / "sst" / "trainDevTestTrees_PTB.zip", "w") as archive:
        for name, text in trees.items():
            archive.writestr(f"trees/{name}", text)
    return root


def test_parse_tree_nested_labels():
    tree = parse_tree("(3 (2 (2 The) (2 film)) (4 good))")
    the_film = Tree(2, (Tree(2, (), ("The",)), Tree(2, (), ("film",))), ("The", "film"))
    assert tree == Tree(3, (the_film, Tree(4, (), ("good",))), ("The", "film", "good"))
    assert [node.label for node in tree.subtrees()] == [3, 2, 2, 2, 4]


@pytest.mark.parametrize(
    "text, problem",
    [
        ("(2 (2 a) (2 b)", "ends early"),
        ("(2 (2 a) (2 b))) ", "after the end"),
        ("(7 a)", "not one of 0-4"),
        ("(2 a b)", "expected ')'"),
        ("(2 )", "empty node"),
        ("2 a", "expected '('"),
    ],
)
def test_parse_tree_errors(text, problem):
    with pytest.raises(ValueError, match=re.escape(problem)):
        parse_tree(text)


def test_sst5_sentence_records(tmp_path):
    splits = SSTReader().load(write_trees(tmp_path))
    assert splits["train"] == [
        {"id": "train-0", "tokens": ["The", "film", "is", "good", "."], "label": 3},
        {"id": "train-1", "tokens": ["(", "bad", ")"], "label": 1},
        {"id": "train-2", "tokens": ["co-writer/director", "8\u00a01/2"], "label": 2},
        {"id": "train-3", "tokens": ["good", "and", "great"], "label": 4},
    ]
    assert splits["dev"] == [
        {"id": "dev-0", "tokens": ["awful", "."], "label": 0},
        {"id": "dev-1", "tokens": ["It", "exists"], "label": 2},
    ]
    assert splits["test"] == [{"id": "test-0", "tokens": ["good", "fun"], "label": 3}]


def test_sst2_drops_neutral_and_merges_classes(tmp_path):
    reader = SSTReader(classes=2)
    splits = reader.load(write_trees(tmp_path))
    assert reader.label_names == ["negative", "positive"]
    assert [(r["id"], r["label"]) for r in splits["train"]] == [("train-0", 1), ("train-1", 0), ("train-3", 1)]
    assert [(r["id"], r["label"]) for r in splits["dev"]] == [("dev-0", 0)]


def test_phrases_give_each_distinct_labelled_phrase_once(tmp_path):
    splits = SSTReader(phrases=True).load(write_trees(tmp_path))
    phrases = [(" ".join(r["tokens"]), r["label"]) for r in splits["train"]]
    assert phrases == [
        ("The film is good .", 3), ("The film", 2), ("The", 2), ("film", 2), ("is good .", 3), ("is good", 3),
        ("is", 2), ("good", 4), (".", 2),
        ("( bad )", 1), ("(", 2), ("bad )", 1), ("bad", 1), (")", 2),
        ("co-writer/director 8\u00a01/2", 2), ("co-writer/director", 2), ("8\u00a01/2", 2),
        ("good and great", 4), ("and great", 4), ("and", 2), ("great", 4),
    ]
    assert splits["train"][4]["id"] == "train-0-4"
    assert len(splits["dev"]) == 2 and len(splits["test"]) == 1  # dev and test stay at sentence level
    binary = SSTReader(classes=2, phrases=True).load(tmp_path)["train"]
    assert [(" ".join(r["tokens"]), r["label"]) for r in binary] == [
        ("The film is good .", 1), ("is good .", 1), ("is good", 1), ("good", 1),
        ("( bad )", 0), ("bad )", 0), ("bad", 0), ("good and great", 1), ("and great", 1), ("great", 1),
    ]


def test_zip_gives_the_same_records(tmp_path):
    from_folder = SSTReader(classes=2, phrases=True).load(write_trees(tmp_path / "folder"))
    assert SSTReader(classes=2, phrases=True).load(write_zip(tmp_path / "zip")) == from_folder


def test_malformed_tree_names_file_and_line(tmp_path):
    broken = {**TREES, "dev.txt": "(0 (0 awful) (2 .))\n(2 (2 It) (2 exists)\n"}
    with pytest.raises(DataFormatError, match=r"trees/dev\.txt:2: the tree ends early"):
        SSTReader().load(write_trees(tmp_path / "folder", broken))
    with pytest.raises(DataFormatError, match=r"trainDevTestTrees_PTB\.zip/trees/dev\.txt:2: the tree ends early"):
        SSTReader().load(write_zip(tmp_path / "zip", broken))


def test_broken_zip_is_named(tmp_path):
    write_zip(tmp_path, {name: text for name, text in TREES.items() if name != "dev.txt"})
    with pytest.raises(DataFormatError, match=r"trainDevTestTrees_PTB\.zip: .*'trees/dev\.txt'"):
        SSTReader().load(tmp_path)
    (tmp_path / "sst" / "trainDevTestTrees_PTB.zip").write_bytes(b"not a zip")
    with pytest.raises(DataFormatError, match="not a zip file"):
        SSTReader().load(tmp_path)


def test_missing_files_are_named(tmp_path):
    with pytest.raises(DatasetMissingError) as info:
        SSTReader().load(tmp_path)
    assert "sst/trainDevTestTrees_PTB.zip" in str(info.value) and "nlp.stanford.edu" in str(info.value)
    partial = {name: text for name, text in TREES.items() if name != "test.txt"}
    with pytest.raises(DatasetMissingError, match="sst/trees/test.txt"):
        SSTReader().load(write_trees(tmp_path, partial))


def test_classes_must_be_5_or_2():
    with pytest.raises(ConfigError, match="5 or 2"):
        SSTReader(classes=3)


@pytest.mark.slow  # parses all 11,855 trees twice (files and cache): half a minute
def test_real_data_counts(real_data, tmp_path):
    sizes = {s: len(r) for s, r in SSTReader().load(real_data).items()}
    assert sizes == {"train": 8544, "dev": 1101, "test": 2210}
    binary = SSTReader(classes=2).load(real_data)
    assert {s: len(r) for s, r in binary.items()} == {"train": 6920, "dev": 872, "test": 1821}
    tokens = {t for records in binary.values() for r in records for t in r["tokens"]}
    assert "(" in tokens and not {"-LRB-", "-RRB-"} & tokens and not any("\\/" in t for t in tokens)

    (tmp_path / "sst").mkdir()
    (tmp_path / "sst" / "trainDevTestTrees_PTB.zip").write_bytes((real_data / "sst/trainDevTestTrees_PTB.zip").read_bytes())
    assert SSTReader(classes=2).load(tmp_path) == binary

    assert len(SSTReader(phrases=True).load(real_data)["train"]) == 159274
