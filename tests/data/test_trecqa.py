"""TrecQAReader: castorini and jacana layouts, clean and raw, TRAIN-ALL and TRAIN.

The fixtures are complete trees in the original formats, TRAIN-ALL's answer
files included (absent from the development data folder): that is what proves
the reader handles the full distribution.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from rnnbench.data.trecqa import CASTORINI, JACANA, TrecQAReader, keep_mixed
from rnnbench.errors import ConfigError, DataFormatError, DatasetMissingError

# (qid, question, [(answer, label), ...]) per split; the same questions feed both layouts.
# Raw dev: 1.4 mixed, 1.5 no correct candidate, 2.1 all correct, 2.2 mixed -> clean dev: 1.4, 2.2.
SPLITS = {
    "train-all": [
        ("1", "Who is the author of the book , `` The Iron Lady '' ?", [
            ("The Iron Lady ; A Biography of Margaret Thatcher by Hugo Young", 1),
            ("In this same revisionist mold , Hugo Young has performed a dissection .", 1),
            ("AT&T sold the rights in 1989 .", 0),
        ]),
        ("2", "What is the capital of France ?", [("Paris is the capital of France .", 1), ("Lyon is a city .", 0)]),
        ("3", "When was R&D founded ?", [("It was founded in 1950 .", 1)]),
    ],
    "train": [
        ("1", "Who is the author of the book , `` The Iron Lady '' ?", [
            ("The Iron Lady ; A Biography of Margaret Thatcher by Hugo Young", 1),
            ("AT&T sold the rights in 1989 .", 0),
        ]),
        ("4", "How tall is the tower ?", [("The tower is 300 m tall .", 0)]),
    ],
    "dev": [
        ("1.4", "What ethnic group / race are Crip members ?", [("Most Crips are black .", 1), ("Gangs have a system .", 0)]),
        ("1.5", "What is Crips ' gang color ?", [("The gang was founded in 1969 .", 0)]),
        ("2.1", "Where is the Eiffel tower ?", [("The tower is in Paris .", 1), ("The Eiffel tower stands in Paris .", 1)]),
        ("2.2", "Who built it ?", [("Gustave Eiffel built it .", 1), ("It is made of iron .", 0), ("Visitors <3 it .", 0)]),
    ],
    "test": [
        ("32.1", "What is a meerkat ?", [("A meerkat is a mongoose .", 1), ("It lives in Africa .", 0)]),
        ("32.2", "Where do meerkats live ?", [("They live in deserts .", 1)]),
    ],
}


def castorini_files(questions, lower=True) -> dict[str, str]:
    a, b, ids, sim, boundary, numrels = [], [], [], [], [0], []
    for qid, question, candidates in questions:
        for answer, label in candidates:
            a.append(question.lower() if lower else question)
            b.append(answer.lower() if lower else answer)
            ids.append(qid)
            sim.append(str(label))
        boundary.append(boundary[-1] + len(candidates))
        numrels.append(str(sum(label for _, label in candidates)))
    join = lambda lines: "".join(f"{line}\n" for line in lines)  # noqa: E731
    return {"a.toks": join(a), "b.toks": join(b), "id.txt": join(ids), "sim.txt": join(sim),
            "boundary.txt": join(map(str, boundary)), "numrels.txt": join(numrels)}


def jacana_xml(questions, empty_ids=()) -> str:
    """Yao et al.'s pseudo-XML: tokens, POS, dependency labels, heads, NER (+ answer words and
    positions in positive blocks), tab-separated, HTML characters unescaped."""
    def block(tag, text, positive=False):
        tokens = text.split()
        lines = ["\t".join(tokens), "\t".join("NN" for _ in tokens), "\t".join("NMOD" for _ in tokens),
                 "\t".join(str(i) for i in range(len(tokens))), "\t".join("-" for _ in tokens)]
        if positive:
            lines += [tokens[0], "1"]
        return [f"<{tag}>", *lines, f"</{tag}>"]

    out = []
    for qid, question, candidates in questions:
        out += [f"<QApairs id='{qid}'>", *block("question", question)]
        for answer, label in candidates:
            out += block("positive" if label else "negative", answer, positive=bool(label))
        out.append("</QApairs>")
    for qid in empty_ids:  # real files hold QApairs with a question and no candidate
        out += [f"<QApairs id='{qid}'>", *block("question", "What is unknown ?"), "</QApairs>"]
    return "".join(f"{line}\n" for line in out)


def mixed(questions):
    return [q for q in questions if {label for _, label in q[2]} == {0, 1}]


def write_castorini(root: Path) -> Path:
    folders = {"train-all": SPLITS["train-all"], "train": SPLITS["train"],
               "raw-dev": SPLITS["dev"], "raw-test": SPLITS["test"],
               "clean-dev": mixed(SPLITS["dev"]), "clean-test": mixed(SPLITS["test"])}
    for folder, questions in folders.items():
        (root / CASTORINI / folder).mkdir(parents=True)
        for name, text in castorini_files(questions).items():
            (root / CASTORINI / folder / name).write_text(text)
    return root


def write_jacana(root: Path) -> Path:
    (root / JACANA).mkdir(parents=True)
    for split, name in (("train-all", "train-all.xml"), ("train", "train.xml"), ("dev", "dev.xml"), ("test", "test.xml")):
        (root / JACANA / name).write_text(jacana_xml(SPLITS[split], empty_ids=["15.3"] if split == "dev" else ()))
    return root


# One castorini split folder written out by hand, as the real files look (lower-cased tokens).
HAND_A = "who is the author of the book , `` the iron lady '' ?\n" * 2 + "what is the capital of france ?\n"
HAND_B = "the iron lady ; a biography of margaret thatcher by hugo young\nat&t sold the rights in 1989 .\nparis is the capital of france .\n"
HAND_ID = "1\n1\n2\n"
HAND_SIM = "1\n0\n1\n"


def qids(records):
    return list(dict.fromkeys(r["qid"] for r in records))


def test_castorini_train_all_clean_default(tmp_path):
    splits = TrecQAReader().load(write_castorini(tmp_path))
    assert qids(splits["train"]) == ["1", "2", "3"] and len(splits["train"]) == 6
    assert splits["train"][0] == {
        "id": "1:0", "qid": "1",
        "question": "who is the author of the book , `` the iron lady '' ?".split(),
        "answer": "the iron lady ; a biography of margaret thatcher by hugo young".split(),
        "label": 1,
    }
    assert [r["id"] for r in splits["train"]] == ["1:0", "1:1", "1:2", "2:0", "2:1", "3:0"]
    assert qids(splits["dev"]) == ["1.4", "2.2"] and qids(splits["test"]) == ["32.1"]
    assert [r["id"] for r in splits["dev"]] == ["1.4:0", "1.4:1", "2.2:0", "2.2:1", "2.2:2"]


def test_castorini_raw_and_train_options(tmp_path):
    root = write_castorini(tmp_path)
    raw = TrecQAReader(version="raw", train_split="train").load(root)
    assert qids(raw["dev"]) == ["1.4", "1.5", "2.1", "2.2"] and qids(raw["test"]) == ["32.1", "32.2"]
    assert qids(raw["train"]) == ["1", "4"] and [r["label"] for r in raw["train"]] == [1, 0, 0]  # never filtered
    assert keep_mixed(raw["dev"]) == TrecQAReader(train_split="train").load(root)["dev"]


def test_castorini_hand_written_folder(tmp_path):
    folder = tmp_path / CASTORINI / "train"
    write_castorini(tmp_path)
    for name, text in (("a.toks", HAND_A), ("b.toks", HAND_B), ("id.txt", HAND_ID), ("sim.txt", HAND_SIM)):
        (folder / name).write_text(text)
    train = TrecQAReader(train_split="train").load(tmp_path)["train"]
    assert [(r["id"], r["label"], r["answer"][0]) for r in train] == [("1:0", 1, "the"), ("1:1", 0, "at&t"), ("2:0", 1, "paris")]


def test_jacana_layout_matches_castorini(tmp_path):
    """The same questions in both layouts: equal records once lower-cased (castorini's files are);
    clean = the questions with both labels; a QApairs without candidates gives no record."""
    write_castorini(tmp_path)
    write_jacana(tmp_path)
    for version in ("clean", "raw"):
        for train_split in ("train-all", "train"):
            castorini = TrecQAReader(version=version, train_split=train_split).load(tmp_path)
            jacana = TrecQAReader(version=version, train_split=train_split, layout="jacana").load(tmp_path)
            assert lowered(jacana) == castorini, (version, train_split)
    jacana = TrecQAReader(layout="jacana").load(tmp_path)
    assert jacana["train"][2]["answer"] == ["AT&T", "sold", "the", "rights", "in", "1989", "."]  # cased, unescaped
    assert jacana["dev"][-1]["answer"] == ["Visitors", "<3", "it", "."]
    assert "15.3" not in qids(TrecQAReader(layout="jacana", version="raw").load(tmp_path)["dev"])


def lowered(splits):
    low = lambda ts: [t.lower() for t in ts]  # noqa: E731
    return {s: [{**r, "question": low(r["question"]), "answer": low(r["answer"])} for r in rs] for s, rs in splits.items()}


def test_missing_train_all_says_how_to_use_train(tmp_path):
    root = write_castorini(tmp_path)
    (root / CASTORINI / "train-all" / "b.toks").unlink()
    with pytest.raises(DatasetMissingError) as err:
        TrecQAReader().load(root)
    assert "train-all/b.toks" in str(err.value) and "train_split=train" in str(err.value)
    assert len(TrecQAReader(train_split="train").load(root)["train"]) == 3


def test_unknown_options_are_refused():
    with pytest.raises(ConfigError, match="version"):
        TrecQAReader(version="cleaned")
    with pytest.raises(ConfigError, match="train_split"):
        TrecQAReader(train_split="train_all")
    with pytest.raises(ConfigError, match="layout"):
        TrecQAReader(layout="xml")


@pytest.mark.parametrize(
    "name, text, where, line, problem",
    [
        ("sim.txt", "1\n2\n1\n", "sim.txt", 2, "label must be 0 or 1"),
        ("sim.txt", "1\n0\n", "sim.txt", 3, "missing line: a.toks has 3 lines"),
        ("b.toks", HAND_B.replace("at&t sold the rights in 1989 .", " "), "b.toks", 2, "empty candidate"),
        ("a.toks", HAND_A + "extra question ?\n", "b.toks", 4, "missing line: a.toks has 4 lines"),
        ("id.txt", "1\n1 2\n2\n", "id.txt", 2, "one question id"),
    ],
)
def test_castorini_malformed_lines(tmp_path, name, text, where, line, problem):
    write_castorini(tmp_path)
    folder = tmp_path / CASTORINI / "train"
    for n, t in (("a.toks", HAND_A), ("b.toks", HAND_B), ("id.txt", HAND_ID), ("sim.txt", HAND_SIM)):
        (folder / n).write_text(t)
    (folder / name).write_text(text)
    with pytest.raises(DataFormatError) as err:
        TrecQAReader(train_split="train").load(tmp_path)
    assert err.value.path == str(folder / where) and err.value.line == line and problem in err.value.problem


QUESTION = ["<question>", "What is it ?", "WP VBZ PRP .", "</question>"]
NEGATIVE = ["<negative>", "It is a cat .", "PRP VBZ DT NN .", "</negative>"]


@pytest.mark.parametrize(
    "lines, line, problem",
    [
        (["<QApairs id='1'>", *NEGATIVE, *QUESTION, "</QApairs>"], 2, "before the <question>"),
        ([*QUESTION], 1, "outside a <QApairs>"),
        (["<QApairs id='1'>", *QUESTION, "<positive>", "A cat .", "<negative>"], 8, "missing </positive>"),
        (["<QApairs id='1'>", *QUESTION, "<QApairs id='2'>"], 6, "missing </QApairs>"),
        (["<QApairs id='1'>", *QUESTION, "</QApairs>", "</QApairs>"], 7, "without an opening"),
        (["<QApairs id='1'>", "<question>", "", "x", "</question>"], 3, "empty token line"),
        (["<QApairs id='1'>", "<question>", "</question>"], 3, "without a token line"),
        (["<QApairs id='1'>", *QUESTION, *QUESTION, "</QApairs>"], 6, "a second <question>"),
        (["stray text"], 1, "unexpected line"),
        (["<QApairs id='1'>", *QUESTION, "<positive>", "A cat ."], None, "ends inside"),
    ],
)
def test_jacana_malformed(tmp_path, lines, line, problem):
    write_jacana(tmp_path)
    (tmp_path / JACANA / "test.xml").write_text("".join(f"{x}\n" for x in lines))
    with pytest.raises(DataFormatError) as err:
        TrecQAReader(layout="jacana").load(tmp_path)
    assert err.value.path.endswith("test.xml") and err.value.line == line and problem in err.value.problem


def test_real_data_counts(real_data):
    """MANIFEST section 5: TRAIN 4,718 pairs; clean dev 65 questions / 1,117 pairs, clean test
    68 / 1,442; raw dev 1,148 pairs, raw test 1,517. TRAIN-ALL's answers are absent here."""
    clean = TrecQAReader(train_split="train").load(real_data)
    raw = TrecQAReader(version="raw", train_split="train").load(real_data)
    assert (len(clean["train"]), len(qids(clean["train"])), sum(r["label"] for r in clean["train"])) == (4718, 93, 348)
    assert [(len(clean[s]), len(qids(clean[s]))) for s in ("dev", "test")] == [(1117, 65), (1442, 68)]
    assert [(len(raw[s]), len(qids(raw[s]))) for s in ("dev", "test")] == [(1148, 81), (1517, 95)]
    assert all(keep_mixed(raw[s]) == clean[s] for s in ("dev", "test"))  # clean = Rao et al.'s filter of raw
    # Yao et al.'s XML (cased; dev 82 and test 100 QApairs, some without candidates) gives the same pairs.
    for version, castorini in (("clean", clean), ("raw", raw)):
        assert lowered(TrecQAReader(version=version, train_split="train", layout="jacana").load(real_data)) == castorini
    for splits in (clean, raw):
        for records in splits.values():
            assert len({r["id"] for r in records}) == len(records)
