"""SNLIReader on the official jsonl: the "-" gold label, bracket escapes in the parses, the partial train file, errors, real data."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from rnnbench.data.snli import LABELS, SNLIReader, parse_leaves
from rnnbench.errors import ConfigError, DataFormatError, DatasetMissingError


def pair(pair_id: str, gold: str, s1: str, s1_binary: str, s2: str, s2_binary: str) -> str:
    """One line in the official schema (keys in the files' order; the full parses are not read)."""
    return json.dumps({
        "annotator_labels": [gold if gold != "-" else "neutral"] * 5, "captionID": pair_id.split("r")[0], "gold_label": gold,
        "pairID": pair_id, "sentence1": s1, "sentence1_binary_parse": s1_binary, "sentence1_parse": f"(ROOT {s1_binary})",
        "sentence2": s2, "sentence2_binary_parse": s2_binary, "sentence2_parse": f"(ROOT {s2_binary})",
    })


PREMISE = "A man (in a red hat) plays."
PREMISE_PARSE = "( ( A man ) ( ( -LRB- ( in ( a ( red hat ) ) ) -RRB- ) ( plays . ) ) )"
TRAIN = [
    pair("1.jpg#0r1e", "entailment", PREMISE, PREMISE_PARSE, "A man plays.", "( ( A man ) ( plays . ) )"),
    pair("1.jpg#0r1n", "neutral", PREMISE, PREMISE_PARSE, "A man isn't sad.", "( ( A man ) ( ( is ( n't sad ) ) . ) )"),
    pair("1.jpg#0r1c", "-", PREMISE, PREMISE_PARSE, "Nobody plays.", "( Nobody ( plays . ) )"),  # no gold label
    pair("1.jpg#0r2c", "contradiction", PREMISE, PREMISE_PARSE, "A café is empty.", "( ( A café ) ( ( is empty ) . ) )"),
]
DEV = [pair("2.jpg#1r1c", "contradiction", "Two dogs run.", "( ( Two dogs ) ( run . ) )", "Cats sleep.", "( Cats ( sleep . ) )")]
TEST = [pair("3.jpg#1r1e", "entailment", "Kids swim.", "( Kids ( swim . ) )", "Kids are wet.", "( Kids ( ( are wet ) . ) )")]


def write_snli(root: Path, train: list[str] = TRAIN, dev: list[str] = DEV, test: list[str] = TEST, train_name: str = "snli_1.0_train.jsonl") -> Path:
    folder = root / "snli"
    folder.mkdir(parents=True, exist_ok=True)
    for name, lines in ((train_name, train), ("snli_1.0_dev.jsonl", dev), ("snli_1.0_test.jsonl", test)):
        (folder / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return root


def test_records_drop_no_gold_and_unescape_brackets(tmp_path):
    splits = SNLIReader().load(write_snli(tmp_path))
    assert SNLIReader.label_names == ["entailment", "neutral", "contradiction"]
    premise = ["A", "man", "(", "in", "a", "red", "hat", ")", "plays", "."]
    assert splits["train"] == [
        {"id": "1.jpg#0r1e", "premise": premise, "hypothesis": ["A", "man", "plays", "."], "label": 0},
        {"id": "1.jpg#0r1n", "premise": premise, "hypothesis": ["A", "man", "is", "n't", "sad", "."], "label": 1},
        {"id": "1.jpg#0r2c", "premise": premise, "hypothesis": ["A", "café", "is", "empty", "."], "label": 2},
    ]
    assert splits["dev"] == [{"id": "2.jpg#1r1c", "premise": ["Two", "dogs", "run", "."], "hypothesis": ["Cats", "sleep", "."], "label": 2}]
    assert [r["label"] for r in splits["test"]] == [LABELS.index("entailment")]


def test_text_tokens_option(tmp_path):
    splits = SNLIReader(tokens="text").load(write_snli(tmp_path))
    # The Treebank tokenizer also splits "isn't" and the brackets, as the parses do.
    assert splits["train"][1]["hypothesis"] == ["A", "man", "is", "n't", "sad", "."]
    assert splits["train"][0]["premise"] == ["A", "man", "(", "in", "a", "red", "hat", ")", "plays", "."]
    with pytest.raises(ConfigError, match="tokens"):
        SNLIReader(tokens="words")


def test_parse_leaves_keeps_no_break_space_inside_a_token():
    assert parse_leaves("( ( 8\u00a01/2 -LSB-x-RSB- ) ( -LCB- y -RCB- ) )") == ["8\u00a01/2", "-LSB-x-RSB-", "{", "y", "}"]


def test_partial_train_file_option(tmp_path):
    root = write_snli(tmp_path, train_name="snli_1.0_train.first1024.jsonl")
    with pytest.raises(DatasetMissingError) as info:
        SNLIReader().load(root)  # the default is the official, complete file
    assert "snli/snli_1.0_train.jsonl" in str(info.value) and "stanford" in str(info.value)
    splits = SNLIReader(train_file="snli/snli_1.0_train.first1024.jsonl").load(root)
    assert len(splits["train"]) == 3


def test_crlf_and_blank_lines_are_tolerated(tmp_path):
    root = write_snli(tmp_path)
    path = root / "snli" / "snli_1.0_dev.jsonl"
    path.write_bytes(b"\n" + (DEV[0] + "\r\n").encode())
    assert len(SNLIReader().load(root)["dev"]) == 1


@pytest.mark.parametrize(
    "line, problem",
    [
        ("{not json", "not a JSON object"),
        ("[1, 2]", "not a JSON object"),
        (pair("9r1e", "entails", "A b.", "( A b. )", "C.", "C."), "gold label 'entails'"),
        (json.dumps({"gold_label": "neutral", "pairID": "9r1n", "sentence1_binary_parse": "( A b )"}), "sentence2_binary_parse"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, line, problem):
    root = write_snli(tmp_path, test=[*TEST, line])
    with pytest.raises(DataFormatError) as info:
        SNLIReader().load(root)
    assert "snli_1.0_test.jsonl:2" in str(info.value) and problem in str(info.value)


def test_real_data_counts(real_data):
    splits = SNLIReader(train_file="snli/snli_1.0_train.first1024.jsonl").load(real_data)
    assert [len(splits[s]) for s in ("train", "dev", "test")] == [1022, 9842, 9824]

    def counts(records):
        return dict(Counter(LABELS[r["label"]] for r in records))

    assert counts(splits["dev"]) == {"entailment": 3329, "neutral": 3235, "contradiction": 3278}
    assert counts(splits["test"]) == {"entailment": 3368, "neutral": 3219, "contradiction": 3237}
    assert splits["train"][0]["id"] == "3416050480.jpg#4r1n"  # the official train file's first pair
    assert len({r["id"] for r in splits["dev"]}) == 9842
    # The parses escape brackets; none survives as -LRB- in the tokens.
    assert not any("-LRB-" in r["premise"] + r["hypothesis"] for r in splits["test"])
    assert any("(" in r["premise"] for r in splits["test"])
