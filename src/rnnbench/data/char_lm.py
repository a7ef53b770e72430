"""Character-level language modelling corpora: Penn Treebank characters and text8.

Both become one character stream per split, cut into records for truncated
backpropagation through time (TBPTT).

Penn Treebank, character level (Mikolov et al. 2012; the MZU paper's "PTB"):
``ptb/char/ptb.char.{train,valid,test}.txt``. One sentence per line, every
character separated by a single space, ``_`` between words, unknown words spelt
``< u n k >``; lines begin and end with a space and the file ends with a lone
space after its last newline. The stream is each line's characters followed by
``"\\n"`` (the end-of-sentence symbol), so the vocabulary is the 49 characters
plus ``"\\n"``: 50 symbols, 5,017,482 / 393,042 / 442,423 characters (the
paper's "5.0M, 390K and 440K"). Whitespace-only lines (only the file's final
lone space) are skipped. A token that is not one character (a word-level
``ptb.train.txt`` given by mistake) is a DataFormatError naming file and line.

text8 (Mahoney 2006): ``text8/text8``, or the official ``text8/text8.zip``
holding it: 100,000,000 characters of Wikipedia, only ``a-z`` and space, no
newline. The standard split (Mikolov et al. 2012; the MZU paper) is the first
90M characters for training, the next 5M for validation, the last 5M for test.
We cut at 90% and 95% of the file's length, which is exactly that split for the
real file and keeps the same proportions for a shorter one (test fixtures, or a
prefix taken to fit a small machine). Any other character is a DataFormatError
(one trailing newline, which the official file lacks, is dropped).

Records (our design; the contract has no recurrent state passed between batches):
    {"id": "<split>-<k>",
     "chars":   list[str]  input characters x[s-c : e]      (a text field)
     "targets": list[str]  next characters  x[s-c+1 : e+1]  (a text field, aligned with chars)
     "scored_from": int    c, the number of leading positions that are not scored}
for the k-th segment [s, e) = [k*bptt, min((k+1)*bptt, N-1)) of input positions of
a split's stream x of N characters, with c = min(context, s) characters of the
preceding text before it. Position i of a record predicts ``targets[i]`` from
``chars[:i+1]``; only positions i >= scored_from count. Over a split every
character except the first (which has no history) is scored exactly once: N - 1
targets, the unit of bits per character.

What TBPTT means here. The MZU paper (like most character LMs) carries the
recurrent state from one 150-character segment to the next, and back-propagates
through the last 150 steps only. Our batches are independent records, so each
record's encoder starts from a zero state; the ``context`` characters before the
segment are read (and back-propagated through) but not scored, so the state has
warmed up when scoring begins. This is an approximation of carried state: a
dependency longer than context + position cannot be used, and every segment
costs (context + bptt) / bptt of the paper's computation.

Options:
    bptt     150 (paper): scored characters per record (the TBPTT length).
    context  50 (our choice): unscored characters before each segment. Why 50: a cold start
             costs most on the first few characters and the gain flattens quickly. Measured on
             PTB valid with a one-layer LSTM (hidden 256) after 700 batches of 64 (valid BPC
             about 2.16): context 0 / 10 / 20 / 50 / 150 / 1000 gave 2.1922 / 2.1588 / 2.1586 /
             2.1585 / 2.1585 / 2.1585, 1000 standing in for a carried state. A better-trained
             model uses longer history, so the gap from 50 to a carried state will be larger
             than this (not measured: a well-trained model does not fit this 2-core machine);
             50 costs 1.33x the computation of no warm-up, 150 costs 2x. Set 150 or more
             when matching the paper's carried state matters more than time.
"""
from __future__ import annotations

import zipfile
from pathlib import Path

from rnnbench.data.base import Reader, Records, Splits, parse_lines
from rnnbench.errors import ConfigError, DataFormatError

EOS = "\n"  # PTB end-of-sentence symbol in the character stream

PTB_DIR = "ptb/char"
PTB_FILES = {"train": "ptb.char.train.txt", "dev": "ptb.char.valid.txt", "test": "ptb.char.test.txt"}

TEXT8_FILE = "text8/text8"
TEXT8_ZIP = "text8/text8.zip"
TEXT8_ALPHABET = frozenset("abcdefghijklmnopqrstuvwxyz ")
TEXT8_SPLIT = (0.90, 0.95)  # train ends at 90%, valid at 95% of the characters (90M / 5M / 5M of 100M)


def segment_records(stream: str | list[str], split: str, bptt: int, context: int) -> Records:
    """TBPTT records of one split's character stream (see the module docstring)."""
    stream = list(stream)
    inputs = len(stream) - 1  # the last character is only a target
    records = []
    for k, start in enumerate(range(0, max(inputs, 0), bptt)):
        end = min(start + bptt, inputs)
        first = max(0, start - context)
        records.append({
            "id": f"{split}-{k}",
            "chars": stream[first:end],
            "targets": stream[first + 1 : end + 1],
            "scored_from": start - first,
        })
    return records


class CharLMReader(Reader):
    """Shared options of the character-level readers: ``bptt`` and ``context``."""

    def __init__(self, bptt: int = 150, context: int = 50):
        if bptt < 1 or context < 0:
            raise ConfigError(f"task.reader: bptt must be >= 1 and context >= 0; got bptt={bptt}, context={context}")
        self.bptt = bptt
        self.context = context

    def streams(self, root: Path) -> dict[str, list[str]]:  # pragma: no cover - abstract
        raise NotImplementedError

    def read_files(self, root: Path) -> Splits:
        return {split: segment_records(stream, split, self.bptt, self.context) for split, stream in self.streams(root).items()}


class PTBCharReader(CharLMReader):
    """Penn Treebank characters (Mikolov's ``ptb.char.*.txt``); see the module docstring."""

    name = "ptb_char"
    files = tuple(f"{PTB_DIR}/{f}" for f in PTB_FILES.values())
    source = (
        "Mikolov's simple-examples.tgz (http://www.fit.vutbr.cz/~imikolov/rnnlm/simple-examples.tgz, "
        "data/ptb.char.{train,valid,test}.txt), copied to ptb/char/"
    )

    def streams(self, root: Path) -> dict[str, list[str]]:
        return {split: read_ptb_char(root / PTB_DIR / name) for split, name in PTB_FILES.items()}


def read_ptb_char(path: Path) -> list[str]:
    """The characters of a ``ptb.char.*.txt`` file, each line followed by EOS."""

    def parse(line: str) -> dict:
        chars = line.split()
        for c in chars:
            if len(c) != 1:
                raise ValueError(f"{c[:20]!r} is not a single character (is this the word-level file?)")
        return {"chars": chars}

    stream: list[str] = []
    for record in parse_lines(path, parse):
        stream += record["chars"]
        stream.append(EOS)
    return stream


class Text8Reader(CharLMReader):
    """text8 (``text8/text8`` or ``text8/text8.zip``), split 90% / 5% / 5%; see the module docstring."""

    name = "text8"
    files = (TEXT8_FILE,)
    source = "http://mattmahoney.net/dc/text8.zip (unzipped as text8/text8, or the zip itself as text8/text8.zip)"
    hub_id = "afmck/text8"  # parquet: one row of text per split, the file's first 90M, next 5M, last 5M characters

    def input_paths(self, root: Path) -> list[Path]:
        # The plain file if present, else the zip; the plain file's name when neither exists (error message).
        if not (root / TEXT8_FILE).exists() and (root / TEXT8_ZIP).exists():
            return [root / TEXT8_ZIP]
        return [root / TEXT8_FILE]

    def streams(self, root: Path) -> dict[str, list[str]]:
        (path,) = self.input_paths(root)
        return text8_streams(read_text8(path))

    def read_hub(self) -> Splits:
        from rnnbench.data.hub import load_hub

        return self.records_from_hub(load_hub(self.hub_id))

    def records_from_hub(self, hub) -> Splits:
        """Records from the hub copy: its ``train``, ``validation`` and ``test`` rows put back
        together are the file's text, checked and split as the file is: the same records."""
        parts = []
        for split in ("train", "validation", "test"):
            rows = list(hub[split])
            if len(rows) != 1 or not isinstance(rows[0].get("text"), str):
                raise DataFormatError(f"{self.hub_id}:{split}", None, f"expected one row with a 'text' string, got {len(rows)} rows")
            parts.append(rows[0]["text"])
        text = check_text8("".join(parts).encode("ascii", errors="replace"), f"{self.hub_id} (train+validation+test)")
        return {split: segment_records(stream, split, self.bptt, self.context) for split, stream in text8_streams(text).items()}


def text8_streams(text: str) -> dict[str, list[str]]:
    a, b = text8_split_points(len(text))
    return {"train": list(text[:a]), "dev": list(text[a:b]), "test": list(text[b:])}


def text8_split_points(n: int) -> tuple[int, int]:
    """Where train ends and valid ends in a text8 file of ``n`` characters (90M, 95M for the real one)."""
    return round(n * TEXT8_SPLIT[0]), round(n * TEXT8_SPLIT[1])


def read_text8(path: Path) -> str:
    """The text of ``text8`` (plain, or the member ``text8`` of ``text8.zip``), checked to be a-z and space."""
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if Path(n).name == "text8"]
            if not names:
                raise DataFormatError(path, None, f"no member named 'text8' (members: {', '.join(zf.namelist()[:5])})")
            data = zf.read(names[0])
    else:
        data = path.read_bytes()
    return check_text8(data, path)


def check_text8(data: bytes, path) -> str:
    """The text of text8's bytes, checked to be a-z and space (``path`` names the source in errors)."""
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as exc:
        raise DataFormatError(path, 1, f"byte {data[exc.start]:#04x} at offset {exc.start} is not ASCII; text8 holds only a-z and space") from None
    if text.endswith("\n"):  # not in the official file, but an editor or `echo` may have added one
        text = text[:-1]
    bad = set(text) - TEXT8_ALPHABET
    if bad:
        offset = min(text.index(c) for c in bad)
        raise DataFormatError(path, 1, f"character {text[offset]!r} at offset {offset} is not a-z or space (text8 holds only those 27 symbols)")
    if len(text) < 20:
        raise DataFormatError(path, 1, f"only {len(text)} characters: too short to split 90/5/5")
    return text
