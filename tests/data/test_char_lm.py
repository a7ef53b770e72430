"""Character-level LM readers (PTB characters, text8): original formats, TBPTT records, real counts."""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from rnnbench.data.char_lm import EOS, PTBCharReader, Text8Reader, read_ptb_char, segment_records, text8_split_points
from rnnbench.errors import ConfigError, DataFormatError, DatasetMissingError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "data"

# Word-level sentences (ours) in the Mikolov PTB style: lower case, <unk>, N for numbers.
SENTENCES = {
    "train": ["the mill closed in N", "a <unk> bought the old building", "prices rose N %", "workers moved north"],
    "valid": ["the town grew", "a new bridge opened in N"],
    "test": ["the river froze"],
}


def ptb_char_text(sentences: list[str]) -> str:
    """The original ptb.char.*.txt layout: words joined by '_', every character spaced,
    lines end with ' \\n', later lines begin with a space, one lone space at the end."""
    lines = [" ".join("_".join(s.split())) for s in sentences]
    return "".join(("" if i == 0 else " ") + line + " \n" for i, line in enumerate(lines)) + " "


def write_ptb(root: Path) -> Path:
    d = root / "ptb" / "char"
    d.mkdir(parents=True)
    for split, sentences in SENTENCES.items():
        (d / f"ptb.char.{split}.txt").write_text(ptb_char_text(sentences))
    return root


def stream_of(sentences: list[str]) -> list[str]:
    return [c for s in sentences for c in "_".join(s.split()) + EOS]


def scored_text(records: list[dict]) -> list[str]:
    """Every scored target of a split, in record order."""
    ordered = sorted(records, key=lambda r: int(r["id"].split("-")[1]))
    return [c for r in ordered for c in r["targets"][r["scored_from"]:]]


def test_ptb_char_stream_is_characters_with_sentence_ends(tmp_path):
    write_ptb(tmp_path)
    path = tmp_path / "ptb/char/ptb.char.train.txt"
    assert path.read_text().startswith("t h e _ m i l l") and path.read_text().endswith(" \n ")
    assert read_ptb_char(path) == stream_of(SENTENCES["train"])
    assert "".join(read_ptb_char(path)).split(EOS)[1] == "a_<unk>_bought_the_old_building"


@pytest.mark.parametrize("bptt,context", [(7, 3), (7, 0), (5, 20), (1000, 50)])
def test_every_character_but_the_first_is_scored_once(tmp_path, bptt, context):
    splits = PTBCharReader(bptt=bptt, context=context).load(write_ptb(tmp_path))
    assert set(splits) == {"train", "dev", "test"}
    for split, file_split in (("train", "train"), ("dev", "valid"), ("test", "test")):
        stream = stream_of(SENTENCES[file_split])
        records = splits[split]
        assert scored_text(records) == stream[1:]
        position = 0  # index in the stream of the first scored target's input
        for k, r in enumerate(records):
            assert r["id"] == f"{split}-{k}"
            first = position - r["scored_from"]
            assert r["scored_from"] == min(context, position)
            assert r["chars"] == stream[first : first + len(r["chars"])]  # the context is the preceding text
            assert r["targets"] == stream[first + 1 : first + 1 + len(r["chars"])]  # next characters, aligned
            scored = len(r["chars"]) - r["scored_from"]
            assert 1 <= scored <= bptt and (scored == bptt or k == len(records) - 1)
            position += scored


def test_segment_records_by_hand():
    records = segment_records("abcdefgh", "dev", bptt=3, context=2)
    assert records == [
        {"id": "dev-0", "chars": list("abc"), "targets": list("bcd"), "scored_from": 0},
        {"id": "dev-1", "chars": list("bcdef"), "targets": list("cdefg"), "scored_from": 2},
        {"id": "dev-2", "chars": list("efg"), "targets": list("fgh"), "scored_from": 2},
    ]
    assert segment_records("a", "dev", bptt=3, context=2) == []


def test_ptb_char_rejects_the_word_level_file_naming_the_line(tmp_path):
    write_ptb(tmp_path)
    (tmp_path / "ptb/char/ptb.char.valid.txt").write_text("t h e _ t o w n \n the town grew \n")
    with pytest.raises(DataFormatError, match=r"ptb\.char\.valid\.txt:2: 'the' is not a single character"):
        PTBCharReader().load(tmp_path)


def test_ptb_char_missing_names_the_files(tmp_path):
    with pytest.raises(DatasetMissingError, match=r"ptb/char/ptb\.char\.train\.txt.*simple-examples"):
        PTBCharReader().load(tmp_path)


def test_options_are_checked():
    with pytest.raises(ConfigError, match="bptt"):
        PTBCharReader(bptt=0)
    with pytest.raises(ConfigError, match="context"):
        Text8Reader(context=-1)


# text8 ----------------------------------------------------------------------------------------------

def test_text8_split_points_are_the_standard_ones():
    assert text8_split_points(100_000_000) == (90_000_000, 95_000_000)
    assert text8_split_points(1000) == (900, 950)


def test_text8_fixture_split_proportionally():
    text = (FIXTURES / "text8" / "text8").read_text()
    assert text.startswith(" ") and "\n" not in text and set(text) <= set("abcdefghijklmnopqrstuvwxyz ")
    splits = Text8Reader(bptt=150, context=50).load(FIXTURES)
    a, b = text8_split_points(len(text))
    assert scored_text(splits["train"]) == list(text[1:a])
    assert scored_text(splits["dev"]) == list(text[a + 1 : b])
    assert scored_text(splits["test"]) == list(text[b + 1 :])
    assert [len(splits[s]) for s in ("train", "dev", "test")] == [len(range(0, a - 1, 150)), 1, 1]
    assert splits["train"][1]["chars"][:50] == list(text[100:150])  # its context: the 50 characters before it


def test_text8_zip_reads_the_same(tmp_path):
    (tmp_path / "text8").mkdir()
    with zipfile.ZipFile(tmp_path / "text8" / "text8.zip", "w") as zf:
        zf.write(FIXTURES / "text8" / "text8", "text8")
    assert Text8Reader().load(tmp_path) == Text8Reader().load(FIXTURES)


def test_text8_rejects_other_characters(tmp_path):
    (tmp_path / "text8").mkdir()
    (tmp_path / "text8" / "text8").write_text(" the mill closed in Eighteen ninety " * 3)
    with pytest.raises(DataFormatError, match=r"text8:1: character 'E' at offset 20 is not a-z or space"):
        Text8Reader().load(tmp_path)


def test_text8_missing_names_the_file_and_source(tmp_path):
    with pytest.raises(DatasetMissingError, match=r"text8/text8 under .*mattmahoney\.net/dc/text8\.zip"):
        Text8Reader().load(tmp_path)


# Real data --------------------------------------------------------------------------------------------

def test_real_ptb_char_counts(real_data):
    splits = PTBCharReader(bptt=150, context=50).load(real_data)
    # Characters (with one end-of-sentence symbol per line) minus the first of each split: the
    # paper's "5.0M, 390K and 440K characters".
    scored = {s: sum(len(r["chars"]) - r["scored_from"] for r in records) for s, records in splits.items()}
    assert scored == {"train": 5_017_481, "dev": 393_041, "test": 442_422}
    assert {s: len(r) for s, r in splits.items()} == {"train": 33_450, "dev": 2_621, "test": 2_950}
    symbols = {c for r in splits["train"] for c in r["chars"]}
    assert len(symbols) == 50 and {EOS, "_", "<", "N"} <= symbols
    assert {c for r in splits["test"] for c in r["targets"]} <= symbols  # nothing unseen in test
