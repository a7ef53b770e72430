"""Your own data: CSV, TSV and JSON-lines files written by the tests, read by the
text_classification and text_pair_classification readers."""
from __future__ import annotations

import json
import logging

import pytest

from rnnbench.data.prepare import load_splits
from rnnbench.data.text_classification import TextClassificationReader, TextPairClassificationReader
from rnnbench.data.text_files import read_rows
from rnnbench.errors import ConfigError, DataFormatError


def _write_csv(path, rows, header="text,label"):
    path.write_text(header + "\n" + "".join(f"{row}\n" for row in rows), encoding="utf-8")
    return path


def _examples(n, labels=("pos", "neg")):
    return [f"example number {i} is fine,{labels[i % len(labels)]}" for i in range(n)]


def test_csv_with_dev_and_test_files(tmp_path):
    _write_csv(tmp_path / "train.csv", ['"Hello, world!",pos', "bad movie,neg", "good one,pos"])
    _write_csv(tmp_path / "dev.csv", ["fine,neg"])
    _write_csv(tmp_path / "test.csv", ['"a ""quoted"" word",pos'])
    reader = TextClassificationReader(train="train.csv", dev="dev.csv", test="test.csv")
    splits = reader.load(tmp_path)
    assert reader.label_names == ["neg", "pos"]
    assert splits["train"][0] == {"id": "train.csv:2", "tokens": ["Hello", ",", "world", "!"], "label": 1}
    assert splits["dev"] == [{"id": "dev.csv:2", "tokens": ["fine"], "label": 0}]
    assert splits["test"][0]["tokens"] == ["a", "``", "quoted", "''", "word"]


def test_tsv_and_jsonl_and_whitespace_tokenizer(tmp_path):
    (tmp_path / "a.tsv").write_text("sentence\tgold\nit's \"fine\"\tyes\nno way\tno\n")
    reader = TextClassificationReader(path=str(tmp_path / "a.tsv"), dev=str(tmp_path / "a.tsv"), test=str(tmp_path / "a.tsv"),
                                      text_field="sentence", label_field="gold", tokenizer="whitespace")
    splits = reader.load(tmp_path / "elsewhere")  # absolute paths: the data directory is not used
    assert splits["train"][0]["tokens"] == ["it's", '"fine"'] and reader.label_names == ["no", "yes"]
    lines = [json.dumps({"text": "one two", "label": 3}), "", json.dumps({"text": "three", "label": 1, "extra": [1]})]
    (tmp_path / "b.jsonl").write_text("\n".join(lines) + "\n")
    assert [line for line, _ in read_rows(tmp_path / "b.jsonl")] == [1, 3]
    reader = TextClassificationReader(path="b.jsonl", dev="b.jsonl", test="b.jsonl")
    assert [r["label"] for r in reader.load(tmp_path)["train"]] == [1, 0] and reader.label_names == ["1", "3"]


def test_format_option_overrides_the_extension(tmp_path):
    (tmp_path / "data.txt").write_text("text\tlabel\nhi\tx\n")
    with pytest.raises(ConfigError, match=r"task.reader.format=csv\|tsv\|jsonl"):
        TextClassificationReader(path="data.txt")
    rows = list(read_rows(tmp_path / "data.txt", "tsv"))
    assert rows == [(2, {"text": "hi", "label": "x"})]


def test_relative_path_under_the_current_directory(tmp_path, monkeypatch):
    _write_csv(tmp_path / "mine.csv", _examples(20))
    monkeypatch.chdir(tmp_path)
    reader = TextClassificationReader(path="mine.csv")
    assert len(reader.load(tmp_path / "no_data_dir")["train"]) == 16


def test_missing_file_names_the_paths_tried(tmp_path):
    reader = TextClassificationReader(path="absent.csv")
    with pytest.raises(ConfigError, match=r"task.reader.path: file 'absent.csv' not found \(tried .*absent.csv and .*absent.csv\)"):
        reader.load(tmp_path)
    with pytest.raises(ConfigError, match="needs your training file: task.reader.path=FILE"):
        TextClassificationReader()


def test_dev_and_test_carved_with_a_fixed_seed(tmp_path, caplog):
    _write_csv(tmp_path / "mine.csv", _examples(100))
    with caplog.at_level(logging.INFO, logger="rnnbench.data.text_classification"):
        first = TextClassificationReader(path="mine.csv").load(tmp_path)
    assert "dev and test carved from mine.csv" in caplog.text
    assert [len(first[s]) for s in ("train", "dev", "test")] == [80, 10, 10]
    again = TextClassificationReader(path="mine.csv").load(tmp_path)
    assert first == again
    ids = [r["id"] for split in first.values() for r in split]
    assert len(set(ids)) == 100
    other = TextClassificationReader(path="mine.csv", split_seed=14).load(tmp_path)
    assert {r["id"] for r in other["dev"]} != {r["id"] for r in first["dev"]}
    only_dev = TextClassificationReader(path="mine.csv", test="mine.csv").load(tmp_path)
    assert [len(only_dev[s]) for s in ("train", "dev", "test")] == [90, 10, 100]


def test_carved_by_group_keeps_each_group_on_one_side(tmp_path):
    rows = [f"text {i},{'ab'[i % 2]},author{i % 12}" for i in range(120)]
    _write_csv(tmp_path / "mine.csv", rows, header="text,label,author")
    splits = TextClassificationReader(path="mine.csv", group_field="author").load(tmp_path)
    author = {f"mine.csv:{i + 2}": f"author{i % 12}" for i in range(120)}
    sides = [{author[r["id"]] for r in splits[s]} for s in ("train", "dev", "test")]
    assert all(sides) and not (sides[0] & sides[1] or sides[0] & sides[2] or sides[1] & sides[2])
    assert splits == TextClassificationReader(path="mine.csv", group_field="author").load(tmp_path)


def test_malformed_csv_row_names_file_and_line(tmp_path):
    _write_csv(tmp_path / "mine.csv", ["fine,pos", "one,two,three", "ok,neg"])
    with pytest.raises(DataFormatError, match=r"mine.csv:3: 3 comma-separated fields, but the header names 2 \(text, label\)"):
        TextClassificationReader(path="mine.csv").load(tmp_path)
    _write_csv(tmp_path / "quote.csv", ["fine,pos", '"unclosed,pos'])
    with pytest.raises(DataFormatError, match=r"quote.csv:3: not a valid comma-separated row"):
        TextClassificationReader(path="quote.csv").load(tmp_path)


def test_bad_json_line_names_file_and_line(tmp_path):
    (tmp_path / "mine.jsonl").write_text('{"text": "a", "label": "x"}\n{"text": "b", label: y}\n')
    with pytest.raises(DataFormatError, match=r"mine.jsonl:2: not a JSON object"):
        TextClassificationReader(path="mine.jsonl").load(tmp_path)
    (tmp_path / "list.jsonl").write_text('["a", "x"]\n')
    with pytest.raises(DataFormatError, match=r"list.jsonl:1: not a JSON object \(a list\)"):
        TextClassificationReader(path="list.jsonl").load(tmp_path)


def test_missing_field_says_which_option_names_it(tmp_path):
    _write_csv(tmp_path / "mine.csv", ["hi,pos"], header="sentence,label")
    with pytest.raises(DataFormatError, match=r"mine.csv:2: no field 'text' \(fields: sentence, label\): name the right one with task.reader.text_field"):
        TextClassificationReader(path="mine.csv").load(tmp_path)
    (tmp_path / "mine.jsonl").write_text('{"text": "a", "label": "x"}\n{"text": "b"}\n')
    with pytest.raises(DataFormatError, match=r"mine.jsonl:2: no field 'label' .*task.reader.label_field"):
        TextClassificationReader(path="mine.jsonl").load(tmp_path)


def test_label_unseen_in_training_is_one_error(tmp_path):
    _write_csv(tmp_path / "train.csv", ["a,pos", "b,neg"])
    _write_csv(tmp_path / "test.csv", ["c,pos", "d,neutral"])
    with pytest.raises(DataFormatError, match=r"test.csv:3: label 'neutral' does not occur in the training file train.csv \(its labels: neg, pos\)"):
        TextClassificationReader(path="train.csv", dev="train.csv", test="test.csv").load(tmp_path)


def test_pair_file(tmp_path):
    lines = [json.dumps({"premise": f"a man sleeps {i}", "hypothesis": "someone rests", "label": ["entailment", "neutral"][i % 2]})
             for i in range(30)]
    (tmp_path / "pairs.jsonl").write_text("\n".join(lines) + "\n")
    reader = TextPairClassificationReader(path="pairs.jsonl", text_fields=["premise", "hypothesis"])
    splits = reader.load(tmp_path)
    assert [len(splits[s]) for s in ("train", "dev", "test")] == [24, 3, 3]
    record = next(r for r in splits["train"] if r["id"] == "pairs.jsonl:1")
    assert record == {"id": "pairs.jsonl:1", "premise": ["a", "man", "sleeps", "0"], "hypothesis": ["someone", "rests"], "label": 0}
    with pytest.raises(DataFormatError, match=r"pairs.jsonl:1: no field 'sentence1'.*task.reader.text_fields"):
        TextPairClassificationReader(path="pairs.jsonl").load(tmp_path)
    with pytest.raises(ConfigError, match="two different fields"):
        TextPairClassificationReader(path="pairs.jsonl", text_fields=["premise"])


def test_labels_after_a_cache_hit(tmp_path):
    """The records come from the cache without reading the files; the labels are still the training file's."""
    _write_csv(tmp_path / "mine.csv", _examples(20, labels=("b", "c", "a")))
    first = load_splits(TextClassificationReader(path="mine.csv"), tmp_path, tmp_path / "cache")
    reader = TextClassificationReader(path="mine.csv")
    assert load_splits(reader, tmp_path, tmp_path / "cache") == first
    assert reader.label_names == ["a", "b", "c"]
