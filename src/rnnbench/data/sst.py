"""Stanford Sentiment Treebank (Socher et al. 2013) from its PTB-format trees.

Every node of ``(3 (2 It) (4 (2 's) (3 good)))`` carries a 0-4 sentiment label;
the tokens of a (sub)tree are its leaves. The trees are read from
``sst/trees/{train,dev,test}.txt`` or, when that folder is absent, straight out
of the official ``trainDevTestTrees_PTB.zip``.

SST-2 (``classes=2``) drops neutral (2) examples and maps 0,1 -> 0 and 3,4 -> 1.
``phrases=True`` trains on every distinct labelled phrase of the train trees
(the phrase-level setting of Kim 2014); dev and test stay at
sentence level. A phrase occurring in several trees is kept once: the treebank
gives each distinct phrase one label, so repeats are exact copies that would only
over-weight frequent phrases.
"""
from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Iterator, NamedTuple

from rnnbench.data.base import Reader, Records, Splits, read_lines
from rnnbench.errors import ConfigError, DataFormatError

TREES_DIR = "sst/trees"
ZIP_FILE = "sst/trainDevTestTrees_PTB.zip"
SPLIT_FILES = {"train": "train.txt", "dev": "dev.txt", "test": "test.txt"}

# Split on ASCII blanks only: one leaf holds a no-break space ("8\xa01\/2").
_TOKEN = re.compile(r"\(|\)|[^ \t\r\n()]+")
_LABELS = {"0": 0, "1": 1, "2": 2, "3": 3, "4": 4}
_BRACKETS = {"-LRB-": "(", "-RRB-": ")"}


class Tree(NamedTuple):
    label: int
    children: tuple["Tree", ...]  # empty for a leaf
    words: tuple[str, ...]  # the leaves, kept at every node: phrase-level training needs them all

    def subtrees(self) -> Iterator["Tree"]:
        """This tree and all its descendants, in pre-order."""
        yield self
        for child in self.children:
            yield from child.subtrees()


def unescape(word: str) -> str:
    """PTB escapes back to text: -LRB-/-RRB- to brackets, \\/ and \\* to / and *."""
    return _BRACKETS.get(word) or word.replace("\\/", "/").replace("\\*", "*")


def parse_tree(text: str) -> Tree:
    """One PTB tree with a 0-4 label on every node; ValueError says what is wrong."""
    tokens: list[str | None] = [*_TOKEN.findall(text), None]  # None marks the end of the line
    tree, end = _parse_node(tokens, 0)
    if tokens[end] is not None:
        raise ValueError(f"unexpected {tokens[end]!r} after the end of the tree (token {end + 1})")
    return tree


def _unexpected(tokens: list[str | None], i: int, expected: str) -> str:
    if tokens[i] is None:
        return f"the tree ends early: expected {expected}"
    return f"expected {expected} at token {i + 1}, found {tokens[i]!r}"


def _parse_node(tokens: list[str | None], i: int) -> tuple[Tree, int]:
    """Parse ``( LABEL WORD )`` or ``( LABEL node+ )`` starting at token i; return it and the next index.

    Each step looks at most one token past one already known to be real, so the
    single None at the end of ``tokens`` is enough to stop at the end of the line.
    """
    if tokens[i] != "(":
        raise ValueError(_unexpected(tokens, i, "'('"))
    label = _LABELS.get(tokens[i + 1])
    if label is None:
        if tokens[i + 1] is None:
            raise ValueError(_unexpected(tokens, i + 1, "a label"))
        raise ValueError(f"node label {tokens[i + 1]!r} at token {i + 2} is not one of 0-4")
    head = tokens[i + 2]
    if head is None:
        raise ValueError(_unexpected(tokens, i + 2, "a word or a subtree"))
    if head not in ("(", ")"):
        if tokens[i + 3] != ")":
            raise ValueError(_unexpected(tokens, i + 3, f"')' after the word {head!r}"))
        return Tree(label, (), (unescape(head),)), i + 4
    i += 2
    children = []
    while tokens[i] == "(":
        child, i = _parse_node(tokens, i)
        children.append(child)
    if tokens[i] != ")":
        raise ValueError(_unexpected(tokens, i, "')'"))
    if not children:
        raise ValueError(f"empty node at token {i + 1}")
    return Tree(label, tuple(children), sum((child.words for child in children), ())), i + 1


def parse_trees(where: str | Path, lines: list[str]) -> list[Tree]:
    """Trees of a file's lines (one per line); a malformed one is a DataFormatError naming ``where`` and the line."""
    trees = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            trees.append(parse_tree(line))
        except ValueError as exc:
            raise DataFormatError(where, number, str(exc)) from None
    return trees


def read_zip_trees(path: Path) -> dict[str, list[Tree]]:
    """The trees of each split straight out of the official zip (members ``trees/<split>.txt``)."""
    try:
        with zipfile.ZipFile(path) as archive:
            texts = {split: archive.read(f"trees/{name}").decode("utf-8") for split, name in SPLIT_FILES.items()}
    except zipfile.BadZipFile:
        raise DataFormatError(path, None, "not a zip file") from None
    except KeyError as exc:  # a member is missing
        raise DataFormatError(path, None, str(exc.args[0])) from None
    return {split: parse_trees(path / "trees" / SPLIT_FILES[split], text.split("\n")) for split, text in texts.items()}


class SSTReader(Reader):
    """SST-5 or SST-2, sentence level, optionally phrase-level training."""

    name = "sst"
    source = "https://nlp.stanford.edu/sentiment/trainDevTestTrees_PTB.zip (put the zip, or its trees/ folder, in sst/)"
    hub_id = "stanfordnlp/sst"

    def __init__(self, classes: int = 5, phrases: bool = False):
        if classes not in (2, 5):
            raise ConfigError(f"SSTReader: classes must be 5 or 2, not {classes!r}")
        self.classes = classes
        self.phrases = phrases

    @property
    def label_names(self) -> list[str]:
        if self.classes == 2:
            return ["negative", "positive"]
        return ["very negative", "negative", "neutral", "positive", "very positive"]

    def input_paths(self, root: Path) -> list[Path]:
        """The tree files if the trees/ folder exists, else the official zip."""
        if (root / TREES_DIR).is_dir():
            return [root / TREES_DIR / name for name in SPLIT_FILES.values()]
        return [root / ZIP_FILE]

    def _label(self, sentiment: int) -> int | None:
        """Label id under the chosen classes; None for a neutral node in SST-2."""
        if self.classes == 5:
            return sentiment
        return None if sentiment == 2 else int(sentiment > 2)

    def _records(self, split: str, trees: list[Tree]) -> Records:
        records = []
        phrase_level = self.phrases and split == "train"
        seen: set[tuple[str, ...]] = set()
        for i, tree in enumerate(trees):
            for j, node in enumerate(tree.subtrees() if phrase_level else [tree]):
                label = self._label(node.label)
                if label is None or node.words in seen:
                    continue
                if phrase_level:
                    seen.add(node.words)
                node_id = f"{split}-{i}" if j == 0 else f"{split}-{i}-{j}"
                records.append({"id": node_id, "tokens": list(node.words), "label": label})
        return records

    def read_files(self, root: Path) -> Splits:
        if (root / TREES_DIR).is_dir():
            paths = {split: root / TREES_DIR / name for split, name in SPLIT_FILES.items()}
            trees = {split: parse_trees(path, read_lines(path)) for split, path in paths.items()}
        else:
            trees = read_zip_trees(root / ZIP_FILE)
        return {split: self._records(split, split_trees) for split, split_trees in trees.items()}

    def read_hub(self) -> Splits:
        """The ``ptb`` configuration of the hub's parquet export of stanfordnlp/sst (a script
        dataset, which ``datasets`` no longer runs)."""
        from rnnbench.data.hub import PARQUET_EXPORT, load_hub

        return self.records_from_hub(load_hub(self.hub_id, "ptb", revision=PARQUET_EXPORT))

    def records_from_hub(self, hub) -> Splits:
        """Records from the hub copy's splits, which hold the same tree strings (``ptb_tree``)."""
        return {
            split: self._records(split, parse_trees(f"{self.hub_id}:{hub_split}", hub[hub_split]["ptb_tree"]))
            for split, hub_split in (("train", "train"), ("dev", "validation"), ("test", "test"))
        }
