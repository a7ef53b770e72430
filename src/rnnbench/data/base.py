"""The reader interface and the shared hub fallback.

A reader turns a dataset's original distribution files into splits of plain
records (dicts). Classification records are
    {"id": str, "tokens": list[str], "label": int}
Any field holding a list of strings is a text field: the vocabulary and the
batcher numericalise it and give it a mask. Readers know nothing of models.
"""
from __future__ import annotations

import gzip
import random
import zipfile
import zlib
from pathlib import Path
from typing import Callable

from rnnbench.data.tokenize import treebank_tokenize
from rnnbench.errors import ConfigError, DataFormatError, DatasetMissingError

# What reading a damaged compressed file raises (a truncated download, an HTML error page saved under the name)
DAMAGED_ARCHIVE_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error, zipfile.BadZipFile)

Records = list[dict]
Splits = dict[str, Records]


class Reader:
    """Base class: subclasses set ``name`` and implement ``read_files``.

    ``label_names`` lists the classes for classification readers (index = label id).
    ``files`` are the paths (relative to the data directory) that must exist;
    ``source`` says where a user can obtain them.
    """

    name: str = "dataset"
    files: tuple[str, ...] = ()
    source: str = ""
    hub_id: str | None = None
    label_names: list[str] = []
    raw_fields: tuple[str, ...] = ()  # lists of strings that are not text to encode (reference answers)
    inputs: tuple[str, ...] = ()  # fields besides the texts that the model reads (picking's question); predict asks for them
    version: int = 1  # bump when a change alters the records read (part of the run identity)

    def options(self) -> dict:
        """Options that change the records (part of the cache key)."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    def read_files(self, root: Path) -> Splits:  # pragma: no cover - abstract
        raise NotImplementedError

    def read_hub(self) -> Splits:  # pragma: no cover - overridden where a hub copy exists
        raise NotImplementedError

    def input_paths(self, root: Path) -> list[Path]:
        return [root / f for f in self.files]

    def tokenize(self, text: str) -> list[str]:
        """Raw text as this reader's records hold it (``rnnbench predict`` on new text): the
        Treebank tokens every word-level reader here gives, or the corpus' own tokens are."""
        return treebank_tokenize(text)

    def read_labels(self, root: Path) -> Splits | None:
        """The splits' records with their ids and labels only, for checks that read no tokens (the
        majority-class baseline), where that is much cheaper than ``read_files`` (no tokenising of a
        large corpus); None where it is not, or the files are absent: then read the records."""
        return None

    def missing_inputs(self, root: Path) -> list[Path]:
        return [p for p in self.input_paths(root) if not p.exists()]

    def check_available(self, data_dir: str | Path) -> None:
        """Raise the missing-dataset error now when the files are absent and no hub copy will be
        tried, before any slow work (importing ``datasets``, cache locks, a download)."""
        root = Path(data_dir)
        missing = self.missing_inputs(root)
        note = hub_note(self, root) if missing else ""
        if note:
            raise missing_dataset_error(self, root, missing, note)

    def load(self, data_dir: str | Path) -> Splits:
        """Read from the original files, else from the hub, else raise a clear error."""
        root = Path(data_dir)
        missing = self.missing_inputs(root)
        if not missing:
            try:
                return self.read_files(root)
            except DAMAGED_ARCHIVE_ERRORS as exc:
                raise damaged_input_error(self.input_paths(root), exc, self.source) from None
        note = hub_note(self, root)
        if not note:
            try:
                return self.read_hub()
            except Exception as exc:  # noqa: BLE001 - any hub failure means "not available"
                note = f"the hub copy {self.hub_id!r} failed too ({type(exc).__name__})"
        raise missing_dataset_error(self, root, missing, note)


def missing_dataset_error(reader: Reader, root: Path, missing: list[Path], note: str) -> DatasetMissingError:
    expected = []
    for path in missing:
        try:
            expected.append(str(path.relative_to(root)))
        except ValueError:
            expected.append(str(path))
    searched = root if root.is_dir() else f"{root}, which does not exist"
    return DatasetMissingError(reader.name, expected, searched, reader.source, note)


DEFAULT_DATA_DIR = Path("data")  # config.PathsConf's data_dir when RNNBENCH_DATA is unset


def hub_note(reader: Reader, root: Path) -> str:
    """Why the hub copy will not be tried ('' when it will). Checked before any download: a
    data folder that does not exist, named by RNNBENCH_DATA or paths.data_dir, is a wrong
    path, not a request to download (a fresh clone's absent ``data/`` is); offline
    (hub.offline_reason) a download would only retry for half a minute."""
    from rnnbench.data import hub

    if not reader.hub_id:
        return "no hub copy is known"
    if not root.is_dir() and root != DEFAULT_DATA_DIR:
        return (f"hub copy {reader.hub_id!r} not tried (RNNBENCH_DATA or paths.data_dir names a folder that does not exist: "
                "check the path, or create the folder to read the hub copy)")
    reason = hub.offline_reason()
    return f"hub copy {reader.hub_id!r} not tried ({reason})" if reason else ""


def read_lines(path: Path, encoding: str = "utf-8") -> list[str]:
    """Lines of a text file split on '\\n' only (some corpora hold U+0085, which
    str.splitlines() would also split on); a trailing empty line is dropped."""
    raw = path.read_bytes()
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DataFormatError(path, line, f"byte {raw[exc.start]:#04x} is not valid {encoding}: is this the original file? "
                                          "(re-download it, or convert it to UTF-8)") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def parse_lines(path: Path, parse: Callable[[str], dict], encoding: str = "utf-8") -> Records:
    """Apply ``parse`` to each non-empty line; a ValueError becomes a DataFormatError naming file and line."""
    records = []
    for number, line in enumerate(read_lines(path, encoding), start=1):
        if not line.strip():
            continue
        try:
            records.append(parse(line))
        except (ValueError, KeyError, IndexError) as exc:
            raise DataFormatError(path, number, str(exc) or type(exc).__name__) from None
    return records


def hold_out(train: list, test: list, dev_size: int, seed: int, where: str) -> dict[str, list]:
    """Split ``dev_size`` random items (fixed ``seed``) off train as the dev set; order is kept."""
    if dev_size > len(train):
        raise ConfigError(f"{where}: dev size {dev_size} but only {len(train)} training examples were found")
    held = set(random.Random(seed).sample(range(len(train)), dev_size))
    return {
        "train": [r for i, r in enumerate(train) if i not in held],
        "dev": [r for i, r in enumerate(train) if i in held],
        "test": test,
    }


def hold_out_groups(train: list, test: list, dev_fraction: float, seed: int, group_of, where: str) -> dict[str, list]:
    """Split whole groups (``group_of(record)``, e.g. a pair's hypothesis) off train as the dev set,
    drawn in a random order (fixed ``seed``) until dev holds at least ``dev_fraction`` of the
    records; order is kept. No group is on both sides, so a dev score cannot reward memorising
    a group seen in training."""
    groups: dict[object, list[int]] = {}
    for i, record in enumerate(train):
        groups.setdefault(group_of(record), []).append(i)
    if len(groups) < 2:
        raise ConfigError(f"{where}: a split by group needs at least two groups; found {len(groups)}")
    order = sorted(groups, key=repr)
    random.Random(seed).shuffle(order)
    held: set[int] = set()
    for key in order:
        if len(held) >= dev_fraction * len(train):
            break
        held.update(groups[key])
    return {
        "train": [r for i, r in enumerate(train) if i not in held],
        "dev": [r for i, r in enumerate(train) if i in held],
        "test": test,
    }


def describe_damage(path: Path) -> str | None:
    """Why a .gz or .zip file cannot be read (None if it reads to the end)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(512)
    except OSError:
        return None
    if path.suffix in (".gz", ".zip") and not head:
        return "is empty"
    looks_html = head.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html", b"<?xml", b"<head", b"<body"))
    if path.suffix == ".gz":
        if head[:2] != b"\x1f\x8b":
            return "is not gzip data (it looks like an HTML page saved under this name)" if looks_html else "is not gzip data"
        try:
            with gzip.open(path, "rb") as handle:
                while handle.read(1 << 24):
                    pass
        except (EOFError, gzip.BadGzipFile, zlib.error, OSError) as exc:
            return f"is truncated or corrupt ({exc})"
    elif path.suffix == ".zip":
        if not zipfile.is_zipfile(path):
            return "is not a zip archive (it looks like an HTML page saved under this name)" if looks_html else "is not a zip archive (truncated?)"
        try:
            with zipfile.ZipFile(path) as archive:
                bad = archive.testzip()
        except (zipfile.BadZipFile, EOFError, zlib.error, OSError) as exc:
            return f"is truncated or corrupt ({exc})"
        if bad:
            return f"is corrupt (member {bad} fails its checksum)"
    return None


def damaged_input_error(paths: list[Path], exc: BaseException, source: str = "") -> DataFormatError:
    """One line naming the damaged input file (found by checking each) and what to do."""
    files = [p for p in paths if p.is_file()] + [q for p in paths if p.is_dir() for q in sorted(p.rglob("*")) if q.suffix in (".gz", ".zip")]
    again = f"download it again{f' from {source}' if source else ''}"
    for path in files:
        problem = describe_damage(path)
        if problem:
            return DataFormatError(path, None, f"{problem}: {again}")
    names = ", ".join(str(p) for p in paths)
    return DataFormatError(names, None, f"a compressed input is damaged ({type(exc).__name__}: {exc}): {again}")
