"""Hub copies, with the hub offline: tiny files in each hub copy's layout (tests/fixtures/hub,
written by its make_fixtures.py) convert to the records the file reader gives for the same
content in the original format; each read_hub asks for the right repository, configuration
and revision."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from datasets import load_dataset

from rnnbench.data import hub as hub_module
from rnnbench.data.char_lm import Text8Reader
from rnnbench.data.imdb import ImdbReader
from rnnbench.data.msmarco import MSMarcoReader
from rnnbench.data.narrativeqa import NarrativeQAReader
from rnnbench.data.searchqa import SearchQAReader
from rnnbench.data.sst import SSTReader
from rnnbench.data.trec import TrecReader
from rnnbench.errors import DataFormatError, DatasetMissingError

HUB = Path(__file__).resolve().parents[1] / "fixtures" / "hub"
DATA = Path(__file__).resolve().parents[1] / "fixtures" / "data"

# The folders of each hub copy's splits (repository layout), as load_dataset("parquet") reads them.
LAYOUT = {
    ("afmck/text8", None, None): ("text8/data", {"train": "train-*", "validation": "validation-*", "test": "test-*"}),
    ("microsoft/ms_marco", "v1.1", None): ("msmarco/v1.1", {"train": "train-*", "validation": "validation-*"}),
    ("deepmind/narrativeqa", None, None): ("narrativeqa/data", {"train": "train-*", "validation": "validation-*", "test": "test-*"}),
    ("CogComp/trec", None, hub_module.PARQUET_EXPORT): ("trec/default", {"train": "train/*", "test": "test/*"}),
    ("stanfordnlp/sst", "ptb", hub_module.PARQUET_EXPORT): ("sst/ptb", {"train": "train/*", "validation": "validation/*", "test": "test/*"}),
    ("stanfordnlp/imdb", "plain_text", None): ("imdb/plain_text", {"train": "train-*", "test": "test-*"}),
}


def local(folder: str, patterns: dict[str, str], streaming: bool = False):
    return load_dataset("parquet", data_files={s: str(HUB / folder / p) for s, p in patterns.items()}, streaming=streaming)


@pytest.fixture
def offline_hub(monkeypatch):
    """read_hub with load_hub/hub_file answering from the fixtures; records what was asked for."""
    asked = []

    def fake_load_hub(hub_id, config=None, revision=None, streaming=False):
        asked.append((hub_id, config, revision, streaming))
        folder, patterns = LAYOUT[(hub_id, config, revision)]
        return local(folder, patterns, streaming)

    def fake_hub_file(hub_id, filename, revision=None):
        asked.append((hub_id, filename, revision))
        assert hub_id == "kyunghyuncho/search_qa"
        return HUB / "searchqa" / filename

    monkeypatch.setattr(hub_module, "load_hub", fake_load_hub)
    monkeypatch.setattr(hub_module, "hub_file", fake_hub_file)
    return asked


@pytest.mark.parametrize("setting", ["span", "generative"])
def test_narrativeqa_hub_rows_give_the_file_records(setting, offline_hub):
    reader = NarrativeQAReader(setting=setting, max_passage_tokens=40)
    from_files = reader.read_files(DATA)
    assert reader.read_hub() == from_files and sum(map(len, from_files.values())) > 0
    assert offline_hub == [("deepmind/narrativeqa", None, None, True)]  # streamed: rows carry whole stories
    # The same conversion on a fully loaded copy.
    assert reader.records_from_hub(local(*LAYOUT[("deepmind/narrativeqa", None, None)])) == from_files


def test_searchqa_hub_zips_give_the_file_records(offline_hub):
    for setting in ("span", "generative"):
        reader = SearchQAReader(setting=setting)
        from_files = reader.read_files(DATA)
        assert reader.read_hub() == from_files and len(from_files["train"]) > 0
    assert [a[1] for a in offline_hub[:3]] == [f"data/train_test_val/{n}.zip" for n in ("train", "val", "test")]


def test_msmarco_hub_rows_give_the_file_records(offline_hub):
    for passages in ("all", "selected"):
        reader = MSMarcoReader(version="v1.1", passages=passages, dev_fraction=0.3)
        from_files = reader.read_files(DATA)
        assert reader.read_hub() == from_files and len(from_files["test"]) > 0
    assert offline_hub[0] == ("microsoft/ms_marco", "v1.1", None, False)


def test_text8_hub_rows_give_the_file_records(offline_hub):
    reader = Text8Reader(bptt=30, context=10)
    assert reader.read_hub() == reader.read_files(DATA)
    assert offline_hub == [("afmck/text8", None, None, False)]


def test_trec_hub_export_gives_the_file_records_but_for_the_replaced_byte(offline_hub):
    for fine in (False, True):
        reader = TrecReader(fine=fine, dev_fraction=0.2)
        from_files, from_hub = reader.read_files(HUB / "trec" / "original"), reader.read_hub()
        differing = [(a, b) for split in from_files for a, b in zip(from_files[split], from_hub[split]) if a != b]
        # The hub's loader turned the byte 0xF0 into a space: that question has one token more.
        assert [(a["tokens"][6], b["tokens"][6:8]) for a, b in differing] == [("lighthouse\xf0tower", ["lighthouse", "tower"])]
        assert [len(v) for v in from_hub.values()] == [len(v) for v in from_files.values()]
    assert offline_hub[0] == ("CogComp/trec", None, "refs/convert/parquet", False)


@pytest.mark.parametrize("classes,phrases", [(5, False), (2, False), (5, True)])
def test_sst_hub_export_gives_the_file_records(classes, phrases, offline_hub):
    reader = SSTReader(classes=classes, phrases=phrases)
    from_files = reader.read_files(HUB / "sst" / "original")
    assert reader.read_hub() == from_files and len(from_files["test"]) > 0
    assert offline_hub == [("stanfordnlp/sst", "ptb", "refs/convert/parquet", False)]


def test_imdb_hub_gives_the_same_reviews_in_its_own_order(offline_hub):
    reader = ImdbReader(dev_size=1)
    from_files, from_hub = reader.read_files(HUB / "imdb" / "original"), reader.read_hub()

    def reviews(splits):
        return Counter((tuple(r["tokens"]), r["label"]) for records in splits.values() for r in records)

    assert reviews(from_hub) == reviews(from_files) and len(from_hub["dev"]) == 1
    assert [r["id"] for r in from_hub["test"]] == ["test-0", "test-1"]  # no review ids on the hub
    assert offline_hub == [("stanfordnlp/imdb", "plain_text", None, False)]


def test_msmarco_hub_row_that_is_not_an_example_names_the_split(tmp_path):
    bad = {"train": [{"query": "q", "query_id": 1, "answers": ["a"], "passages": {"passage_text": []}}], "validation": []}
    with pytest.raises(DataFormatError, match=r"microsoft/ms_marco:v1.1:train.*row 0"):
        MSMarcoReader().records_from_hub(bad)


def test_text8_hub_copy_with_a_foreign_character_is_refused():
    hub = {"train": [{"text": " anarchism originated as a term"}], "validation": [{"text": " of abuse"}], "test": [{"text": " Fin"}]}
    with pytest.raises(DataFormatError, match="'F'"):
        Text8Reader().records_from_hub(hub)


def test_missing_files_offline_say_the_hub_copy_was_not_tried(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for reader in (NarrativeQAReader(), SearchQAReader(), MSMarcoReader(), Text8Reader()):
        with pytest.raises(DatasetMissingError, match=f"hub copy '{reader.hub_id}' not tried"):
            reader.load(tmp_path)
