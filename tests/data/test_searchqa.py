"""SearchQAReader on dl4ir-searchQA's per-question JSON files (folders and zips)."""
from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from rnnbench.data.searchqa import ROOT, SearchQAReader
from rnnbench.errors import ConfigError, DataFormatError, DatasetMissingError

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "data"


def answer_span(record: dict) -> list[str]:
    return record["passage"][record["span_start"] : record["span_end"] + 1]


def test_fixture_records_and_first_occurrence_targets():
    splits = SearchQAReader().load(FIXTURE)
    # 7 train questions; "the Pacific" occurs in none of its snippets: dropped from train.
    assert [len(splits[s]) for s in ("train", "dev", "test")] == [6, 3, 3]
    first = splits["train"][0]
    assert first["id"] == "000000-4680_jeopardy_worldcapitals_200"
    assert first["question"] == "This city on the Danube is the capital of Hungary".split()
    assert first["answers"] == ["Budapest"]
    # The null second snippet is skipped; the others are concatenated in rank order.
    assert first["passage"][:9] == "Budapest is the capital and most populous city of".split()
    assert first["passage"][11:15] == ["The", "Danube", "flows", "through"]
    assert (first["span_start"], first["span_end"]) == (0, 0)  # the first of the two occurrences
    by_answer = {r["answers"][0]: r for split in splits.values() for r in split}
    # Backslash-escaped quote in J! Archive answers: "McDonald\\'s" -> "McDonald's", two Treebank tokens.
    assert answer_span(by_answer["McDonald's"]) == ["McDonald", "'s"]
    assert answer_span(by_answer["the Appian Way"]) == ["The", "Appian", "Way"]  # case-insensitive
    assert answer_span(by_answer["Vincent van Gogh"]) == ["Vincent", "van", "Gogh"]
    assert answer_span(by_answer["Copernicus"]) == ["Copernicus"]


def test_zips_read_like_folders(tmp_path):
    data = tmp_path / ROOT
    data.mkdir(parents=True)
    for name in ("train", "val", "test"):
        with zipfile.ZipFile(data / f"{name}.zip", "w") as z:
            for f in sorted((FIXTURE / ROOT / name).glob("*.json")):
                z.write(f, f"{name}/{f.name}")
            z.writestr(f"__MACOSX/{name}/._junk.json", b"\x00\x05")  # macOS resource forks are skipped
    reader = SearchQAReader()
    assert [p.name for p in reader.input_paths(tmp_path)] == ["train.zip", "val.zip", "test.zip"]
    assert reader.load(tmp_path) == reader.load(FIXTURE)


def test_passage_cut_unmatched_and_settings(tmp_path):
    cut = SearchQAReader(max_passage_tokens=12, drop_unmatched_train=False).load(FIXTURE)
    assert all(len(r["passage"]) <= 12 for split in cut.values() for r in split)
    by_answer = {r["answers"][0]: r for split in cut.values() for r in split}
    # "Herman Melville" is at tokens 8-9 (kept); "the Pacific" is nowhere: (-1, -1) but kept as asked.
    assert answer_span(by_answer["Herman Melville"]) == ["Herman", "Melville"]
    assert (by_answer["the Pacific"]["span_start"], by_answer["the Pacific"]["span_end"]) == (-1, -1)
    assert len(cut["train"]) == 7
    gen = SearchQAReader(setting="generative").load(FIXTURE)
    assert len(gen["train"]) == 7 and "span_start" not in gen["train"][0]
    assert {r["answers"][0]: r["answer_tokens"] for r in gen["train"]}["McDonald's"] == ["McDonald", "'s"]
    assert len(SearchQAReader(min_snippets=4).load(FIXTURE)["train"]) == 1  # only Budapest has 4 results
    assert all(len(r["passage"]) < 20 for r in SearchQAReader(max_snippets=1).load(FIXTURE)["test"])
    with pytest.raises(ConfigError, match="setting"):
        SearchQAReader(setting="ranking")


def test_bad_file_and_missing_splits(tmp_path):
    shutil.copytree(FIXTURE / "searchqa", tmp_path / "searchqa")
    bad = tmp_path / ROOT / "val" / "000099-bad.json"
    bad.write_text(json.dumps({"question": "q", "answer": "a"}))
    with pytest.raises(DataFormatError, match=r"000099-bad.json: not a SearchQA question file \('search_results'\)"):
        SearchQAReader().load(tmp_path)
    shutil.rmtree(tmp_path / ROOT / "test")
    with pytest.raises(DatasetMissingError, match=r"searchqa/data_json/test .*dl4ir-searchQA"):
        SearchQAReader().load(tmp_path)


def test_real_data_folder_has_no_searchqa(real_data):
    """SearchQA is absent from the development data (MANIFEST section 12b): the reader says where to get it.
    Where it is present, every target lies inside its passage."""
    reader = SearchQAReader(max_passage_tokens=200)
    if not all(p.exists() for p in reader.input_paths(real_data)):
        with pytest.raises(DatasetMissingError, match="searchqa/data_json/train"):
            reader.load(real_data)
        return
    for split in reader.load(real_data).values():
        assert split and all(-1 <= r["span_start"] <= r["span_end"] < len(r["passage"]) for r in split)

