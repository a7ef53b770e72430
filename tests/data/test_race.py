"""RaceReader: the original RACE layout, the packed JSON-lines layout, bad files, and the real data."""
from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

from rnnbench.data.race import RaceReader, check_passage
from rnnbench.data.tokenize import treebank_tokenize
from rnnbench.errors import DataFormatError, DatasetMissingError

# (split, level, file name, JSON object) in the reader's order: high then middle, each by
# numeric file id (2.txt before 10.txt: the folder reader must sort numerically).
PASSAGES = [
    ("train", "high", "2.txt", {
        "article": "Tom didn't go to school. He stayed home, because it rained!",
        "questions": ["Why did Tom stay home?", "Tom _ ."],
        "options": [["It rained.", "He was ill.", "It snowed.", "No school."],
                    ["went to school", "stayed home", "was late", "ran away"]],
        "answers": ["A", "B"], "id": "high2.txt"}),
    ("train", "high", "10.txt", {
        "article": "The \"big\" cat sat on the mat.",
        "questions": ["Where did the cat sit?"],
        "options": [["On the mat.", "Under it.", "In a box.", "Nowhere."]],
        "answers": ["D"], "id": "high10.txt"}),
    ("train", "middle", "1.txt", {
        "article": "Birds can fly. Fish can swim.",
        "questions": ["What can fish do?"],
        "options": [["fly", "swim", "run", "sing"]],
        "answers": ["B"], "id": "middle1.txt"}),
    ("dev", "middle", "3.txt", {
        "article": "It is cold in winter.",
        "questions": ["When is it cold?"],
        "options": [["winter", "summer", "spring", "autumn"]],
        "answers": ["A"], "id": "middle3.txt"}),
    ("test", "high", "7.txt", {
        "article": "Water boils at 100 degrees.",
        "questions": ["Water boils at _ degrees."],
        "options": [["50", "90", "100", "120"]],
        "answers": ["C"], "id": "high7.txt"}),
]


def write_original(root: Path, passages=PASSAGES) -> Path:
    for split in ("train", "dev", "test"):
        for level in ("high", "middle"):
            (root / "race" / "RACE" / split / level).mkdir(parents=True, exist_ok=True)
    for split, level, name, obj in passages:
        (root / "race" / "RACE" / split / level / name).write_text(json.dumps(obj), encoding="utf-8")
    return root


def write_packed(root: Path, passages=PASSAGES) -> Path:
    (root / "race").mkdir(parents=True, exist_ok=True)
    for split in ("train", "dev", "test"):
        lines = [json.dumps({"orig_path": f"RACE/{s}/{level}/{name}", **obj}) for s, level, name, obj in passages if s == split]
        (root / "race" / f"race_{split}.jsonl.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    return root


def test_original_layout_gives_one_record_per_question_in_file_order(tmp_path):
    splits = RaceReader(workers=1).load(write_original(tmp_path))
    assert [r["id"] for r in splits["train"]] == [
        "train/high/2.txt#0", "train/high/2.txt#1", "train/high/10.txt#0", "train/middle/1.txt#0"]
    first = splits["train"][0]
    assert first == {
        "id": "train/high/2.txt#0", "level": "high",
        "passage": ["Tom", "did", "n't", "go", "to", "school", ".", "He", "stayed", "home", ",", "because", "it", "rained", "!"],
        "question": ["Why", "did", "Tom", "stay", "home", "?"],
        "option_0": ["It", "rained", "."], "option_1": ["He", "was", "ill", "."],
        "option_2": ["It", "snowed", "."], "option_3": ["No", "school", "."],
        "label": 0,
    }
    assert splits["train"][2]["passage"][:4] == ["The", "``", "big", "''"]  # Treebank quotes
    assert [r["label"] for r in splits["train"]] == [0, 1, 3, 1]
    assert [r["level"] for r in splits["train"]] == ["high", "high", "high", "middle"]
    assert [(r["id"], r["label"]) for r in splits["dev"]] == [("dev/middle/3.txt#0", 0)]
    assert [(r["id"], r["label"], r["option_2"]) for r in splits["test"]] == [("test/high/7.txt#0", 2, ["100"])]
    assert RaceReader.label_names == ["A", "B", "C", "D"]


def test_every_text_field_is_the_treebank_tokenisation(tmp_path):
    splits = RaceReader(workers=1).load(write_original(tmp_path))
    by_id = {r["id"]: r for split in splits.values() for r in split}
    for split, level, name, obj in PASSAGES:
        for k, question in enumerate(obj["questions"]):
            r = by_id[f"{split}/{level}/{name}#{k}"]
            assert r["passage"] == treebank_tokenize(obj["article"])
            assert r["question"] == treebank_tokenize(question)
            assert [r[f"option_{i}"] for i in range(4)] == [treebank_tokenize(o) for o in obj["options"][k]]
            assert r["label"] == "ABCD".index(obj["answers"][k])


def test_packed_layout_gives_the_same_records(tmp_path):
    from_folder = RaceReader(workers=1).load(write_original(tmp_path / "original"))
    assert RaceReader(workers=1).load(write_packed(tmp_path / "packed")) == from_folder


def test_packed_files_are_preferred_and_the_original_tree_is_the_fallback(tmp_path):
    root = write_original(tmp_path)
    reader = RaceReader(workers=1)
    assert reader.input_paths(root)[0] == root / "race" / "RACE" / "train" / "high"
    write_packed(root, [p for p in PASSAGES if p[0] != "train" or p[1] == "middle"])
    assert reader.input_paths(root)[0] == root / "race" / "race_train.jsonl.gz"
    assert [r["id"] for r in reader.load(root)["train"]] == ["train/middle/1.txt#0"]


def test_workers_give_the_same_records_and_report_a_bad_file(tmp_path):
    many = [("train", "high", f"{n}.txt", PASSAGES[n % 3][3]) for n in range(1, 81)] + PASSAGES[3:]
    root = write_original(tmp_path, many)
    one = RaceReader(workers=1).load(root)
    assert len(one["train"]) == sum(len(obj["questions"]) for s, _, _, obj in many if s == "train")
    assert RaceReader(workers=2).load(root) == one
    bad = dict(PASSAGES[2][3], answers=["E"])
    (root / "race" / "RACE" / "train" / "high" / "70.txt").write_text(json.dumps(bad))
    with pytest.raises(DataFormatError, match=r"RACE/train/high/70\.txt: question 1 has answer 'E'"):
        RaceReader(workers=2).load(root)


@pytest.mark.parametrize(
    "change, problem",
    [
        ({"options": [["It rained.", "He was ill.", "It snowed."], ["a", "b", "c", "d"]]},
         "question 1 has 3 options; RACE questions have exactly 4"),
        ({"answers": ["A", "e"]}, "question 2 has answer 'e'"),
        ({"answers": ["A"]}, "2 questions, 2 option lists and 1 answers"),
        ({"article": None}, "'article' is not a string"),
    ],
)
def test_a_bad_original_file_is_named(tmp_path, change, problem):
    split, level, name, obj = PASSAGES[0]
    root = write_original(tmp_path, [(split, level, name, {**obj, **change}), *PASSAGES[1:]])
    with pytest.raises(DataFormatError, match="RACE/train/high/2.txt: " + problem):
        RaceReader(workers=1).load(root)


def test_a_bad_packed_line_is_named_with_its_line_number(tmp_path):
    root = write_packed(tmp_path)
    path = root / "race" / "race_train.jsonl.gz"
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    obj = json.loads(lines[1])
    obj["options"][0] = obj["options"][0][:2]
    lines[1] = json.dumps(obj)
    path.write_bytes(gzip.compress("\n".join(lines).encode()))
    with pytest.raises(DataFormatError, match=r"race_train\.jsonl\.gz:2: question 1 has 2 options"):
        RaceReader(workers=1).load(root)
    lines[1] = "{not json"
    path.write_bytes(gzip.compress("\n".join(lines).encode()))
    with pytest.raises(DataFormatError, match=r"race_train\.jsonl\.gz:2: not a packed RACE line"):
        RaceReader(workers=1).load(root)


def test_a_packed_line_from_another_split_or_level_is_refused(tmp_path):
    root = write_packed(tmp_path)
    path = root / "race" / "race_dev.jsonl.gz"
    obj = {"orig_path": "RACE/train/middle/3.txt", **PASSAGES[3][3]}
    path.write_bytes(gzip.compress(json.dumps(obj).encode()))
    with pytest.raises(DataFormatError, match=r"race_dev\.jsonl\.gz:1: orig_path 'RACE/train/middle/3.txt' is not in the dev split"):
        RaceReader(workers=1).load(root)
    obj["orig_path"] = "RACE/dev/college/3.txt"
    path.write_bytes(gzip.compress(json.dumps(obj).encode()))
    with pytest.raises(DataFormatError, match="level folder 'college' is neither 'high' nor 'middle'"):
        RaceReader(workers=1).load(root)


def test_a_file_name_that_is_not_a_number_is_refused(tmp_path):
    root = write_original(tmp_path)
    (root / "race" / "RACE" / "dev" / "high" / "notes.txt").write_text("{}")
    with pytest.raises(DataFormatError, match=r"notes\.txt: file name is not <number>\.txt"):
        RaceReader(workers=1).load(root)


def test_missing_data_names_the_expected_files(tmp_path):
    with pytest.raises(DatasetMissingError, match=r"race/race_train\.jsonl\.gz.*RACE\.tar\.gz"):
        RaceReader().load(tmp_path)
    (tmp_path / "race" / "RACE" / "train" / "high").mkdir(parents=True)
    with pytest.raises(DatasetMissingError, match=r"race/RACE/train/middle"):
        RaceReader().load(tmp_path)


def test_workers_do_not_change_the_cache_key():
    assert RaceReader(workers=1).options() == RaceReader(workers=4).options() == {}


# The official RACE statistics (Lai et al. 2017, Table 1): questions per split and level.
REAL_COUNTS = {
    "train": {"high": 62445, "middle": 25421},
    "dev": {"high": 3451, "middle": 1436},
    "test": {"high": 3498, "middle": 1436},
}
REAL_PASSAGES = {"train": 25137, "dev": 1389, "test": 1407}


def test_real_files_hold_the_official_counts_and_every_file_is_well_formed(real_data):
    """Parses and checks every passage file (no tokenising: that is the slow part)."""
    items = RaceReader().items(real_data)
    for split, split_items in items.items():
        counts: Counter = Counter()
        for _, level, _, _, text in split_items:
            counts[level] += check_passage(json.loads(text), level)
        assert dict(counts) == REAL_COUNTS[split], split
        assert len(split_items) == REAL_PASSAGES[split]


def test_real_records_of_a_few_passages(real_data):
    reader = RaceReader(workers=1)
    items = reader.items(real_data)["dev"]
    sample = items[:3] + items[-3:]  # high first, middle last
    records = reader._records(sample, "dev")
    assert len(records) == sum(len(json.loads(text)["questions"]) for *_, text in sample)
    assert {r["level"] for r in records[:3]} == {"high"} and records[-1]["level"] == "middle"
    for r in records:
        _, level, name, _, text = next(i for i in sample if r["id"].startswith(f"dev/{i[1]}/{i[2]}#"))
        obj = json.loads(text)
        k = int(r["id"].rsplit("#", 1)[1])
        assert r["passage"] == treebank_tokenize(obj["article"]) and r["question"] == treebank_tokenize(obj["questions"][k])
        assert [r[f"option_{i}"] for i in range(4)] == [treebank_tokenize(o) for o in obj["options"][k]]
        assert r["label"] == "ABCD".index(obj["answers"][k])
