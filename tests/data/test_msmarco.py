"""MSMarcoReader on fixtures in the original formats (v1.1 lines, v2.1 columns), and the real reference answers."""
from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from rnnbench.data.msmarco import MSMarcoReader, scored_answers
from rnnbench.errors import ConfigError, DataFormatError, DatasetMissingError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "data"


def fixture_lines(split: str) -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / "msmarco" / f"{split}_v1.1.json").read_text().splitlines()]


def by_id(splits: dict) -> dict[str, dict]:
    return {r["id"]: r for split in ("train", "dev") for r in splits[split]}


def test_v11_records_all_passages_and_unanswered_queries_dropped():
    splits = MSMarcoReader().load(FIXTURES)
    # 28 training queries, one unanswered; 6 dev queries, one unanswered. Our test split is the official dev.
    assert len(splits["train"]) + len(splits["dev"]) == 27 and len(splits["dev"]) == 1
    assert [r["id"] for r in splits["test"]] == ["2001", "2002", "2003", "2004", "2005"]
    records = by_id(splits)
    assert "1026" not in records
    egg = records["1001"]
    assert egg["question"] == "how long does it take to boil an egg".split()
    assert egg["passage"] == (
        "Place the eggs in boiling water and cook them for 9 to 12 minutes for hard boiled eggs . "
        "Soft boiled eggs need about 6 minutes in simmering water . "
        "Eggs are a good source of protein and vitamin D ."
    ).split()
    assert egg["answers"] == ["9 to 12 minutes for a hard boiled egg."]
    assert egg["answer_tokens"] == "9 to 12 minutes for a hard boiled egg .".split()
    assert egg["query_type"] == "numeric"
    passport = records["1017"]
    assert passport["answers"] == ["$130 plus a $35 fee", "It costs $165 in total."]
    assert passport["answer_tokens"] == ["$", "130", "plus", "a", "$", "35", "fee"]  # the first answer


def test_selected_passages_or_all_when_none_is_selected():
    records = by_id(MSMarcoReader(passages="selected").load(FIXTURES))
    assert records["1001"]["passage"] == "Place the eggs in boiling water and cook them for 9 to 12 minutes for hard boiled eggs .".split()
    # Query 1027 has no selected passage: every passage is kept.
    assert records["1027"]["passage"] == "Spiders have eight legs and two body parts . Insects have six legs .".split()


def test_dev_split_is_held_out_with_its_seed():
    a, b = MSMarcoReader().load(FIXTURES), MSMarcoReader().load(FIXTURES)
    assert a == b
    c = MSMarcoReader(dev_fraction=0.25, dev_seed=1).load(FIXTURES)
    assert len(c["dev"]) == 7 and len(c["train"]) == 20
    assert {r["id"] for r in c["dev"]}.isdisjoint(r["id"] for r in c["train"])


def test_gzipped_files_as_downloaded(tmp_path):
    (tmp_path / "msmarco").mkdir()
    for split in ("train", "dev"):
        data = (FIXTURES / "msmarco" / f"{split}_v1.1.json").read_bytes()
        (tmp_path / "msmarco" / f"{split}_v1.1.json.gz").write_bytes(gzip.compress(data))
    assert MSMarcoReader().load(tmp_path) == MSMarcoReader().load(FIXTURES)


def to_columns(lines: list[dict]) -> dict:
    """The v2.1 layout of the same examples: one column per field, rows keyed "0", "1", ..."""
    columns: dict = {}
    for i, obj in enumerate(lines):
        obj = {**obj, "answers": obj["answers"] or ["No Answer Present."], "wellFormedAnswers": "[]"}
        for key, value in obj.items():
            columns.setdefault(key, {})[str(i)] = value
    return columns


def test_v21_columns_give_the_same_records(tmp_path):
    (tmp_path / "msmarco").mkdir()
    for split in ("train", "dev"):
        (tmp_path / "msmarco" / f"{split}_v2.1.json").write_text(json.dumps(to_columns(fixture_lines(split))))
    assert MSMarcoReader(version="v2.1").load(tmp_path) == MSMarcoReader().load(FIXTURES)


def test_v21_broken_json_and_bad_rows_are_named(tmp_path):
    (tmp_path / "msmarco").mkdir()
    columns = to_columns(fixture_lines("dev"))
    (tmp_path / "msmarco" / "dev_v2.1.json").write_text(json.dumps(columns))
    (tmp_path / "msmarco" / "train_v2.1.json").write_text('{"query": {"0": "a"},\n "passages": {"0": [}')
    with pytest.raises(DataFormatError, match="train_v2.1.json:2: not valid json"):
        MSMarcoReader(version="v2.1").load(tmp_path)
    columns["passages"]["3"] = "not a list"
    (tmp_path / "msmarco" / "train_v2.1.json").write_text(json.dumps(columns))
    with pytest.raises(DataFormatError, match="row '3': .*'passages' must be a non-empty list"):
        MSMarcoReader(version="v2.1").load(tmp_path)


def write_v11(root: Path, train_lines: list[str]) -> Path:
    (root / "msmarco").mkdir(parents=True)
    (root / "msmarco" / "train_v1.1.json").write_text("".join(line + "\n" for line in train_lines))
    shutil.copy(FIXTURES / "msmarco" / "dev_v1.1.json", root / "msmarco" / "dev_v1.1.json")
    return root


def test_malformed_line_names_file_and_line(tmp_path):
    good = [json.dumps(obj) for obj in fixture_lines("train")[:3]]
    root = write_v11(tmp_path, [good[0], good[1], good[2][:-20]])
    with pytest.raises(DataFormatError) as err:
        MSMarcoReader().load(root)
    assert err.value.line == 3 and err.value.path.endswith("train_v1.1.json")
    assert "train_v1.1.json:3:" in str(err.value)


def test_missing_field_and_wrong_types_are_named(tmp_path):
    obj = fixture_lines("train")[0]
    cases = [
        ({k: v for k, v in obj.items() if k != "passages"}, "missing field 'passages'"),
        ({**obj, "answers": "one string"}, "'answers' must be a list of strings"),
        ({**obj, "passages": [{"url": "x"}]}, "passage 0 has no 'passage_text'"),
    ]
    for i, (bad, message) in enumerate(cases):
        root = write_v11(tmp_path / str(i), [json.dumps(obj), json.dumps(bad)])
        with pytest.raises(DataFormatError, match=message) as err:
            MSMarcoReader().load(root)
        assert err.value.line == 2


def test_options_are_checked_and_missing_files_named(tmp_path):
    with pytest.raises(ConfigError, match="version"):
        MSMarcoReader(version="v3")
    with pytest.raises(ConfigError, match="passages"):
        MSMarcoReader(passages="best")
    with pytest.raises(DatasetMissingError, match="msmarco/train_v1.1.json, msmarco/dev_v1.1.json"):
        MSMarcoReader().load(tmp_path)


def test_scored_answers_follow_the_official_evaluation():
    assert scored_answers(["No Answer Present."]) == []
    assert scored_answers([]) == []
    assert scored_answers([" Yes ", "", "It is."]) == ["Yes", "It is."]


def test_real_v11_dev_references_keep_the_answered_queries(real_data):
    """The one MS MARCO file here: the v1.1 dev reference answers (no passages, no queries).
    The reader keeps exactly the queries that hold a non-blank answer."""
    path = real_data / "msmarco" / "msmarco_v1.1_dev_references.jsonl"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    kept = [obj for obj in lines if scored_answers(obj["answers"])]
    # 10,047 dev queries (MANIFEST 12a), 293 of them with an empty answer list.
    assert (len(lines), len(kept)) == (10047, 9754)
    # Only surrounding white space is removed from the answers kept.
    assert all(scored_answers(obj["answers"]) == [a.strip() for a in obj["answers"]] for obj in kept)
