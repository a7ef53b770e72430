"""The 16-domain review sentiment data of Liu, Qiu & Huang (2017), "FDU-MTL".

One reader per domain: ``amazon_fdu_mtl/<domain>.task.{train,test}``, lines
``label \\t text`` with the text already lower-cased and tokenised (split on
spaces only: str.split() would also break tokens at U+0085 and U+00A0, which
the files contain). Lines are split on '\\n' only, as the files hold 0x85 bytes.
``MR.task.*`` and ``dvd.task.train`` are not UTF-8: each file is decoded as
UTF-8, else as Latin-1. The train files hold train plus the paper's 200-review
dev split, which is not marked: ``dev_size`` reviews are held out at random with
``dev_seed``.
"""
from __future__ import annotations

from pathlib import Path

from rnnbench.data.base import Reader, Records, Splits, hold_out, parse_lines
from rnnbench.errors import ConfigError

DOMAINS = (
    "apparel", "baby", "books", "camera_photo", "dvd", "electronics", "health_personal_care", "imdb",
    "kitchen_housewares", "magazines", "MR", "music", "software", "sports_outdoors", "toys_games", "video",
)


def file_encoding(path: Path) -> str:
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return "latin-1"
    return "utf-8"


def parse_review(line: str) -> dict:
    label, tab, text = line.partition("\t")
    if not tab:
        raise ValueError("no tab between the label and the text")
    if label not in ("0", "1"):
        raise ValueError(f"label {label!r} is not 0 or 1")
    return {"tokens": [token for token in text.split(" ") if token], "label": int(label)}


class AmazonReader(Reader):
    source = "https://github.com/ccsasuke/man/tree/master/data/fdu-mtl (FDU-MTL, Liu et al. 2017)"
    label_names = ["negative", "positive"]

    def __init__(self, domain: str, dev_size: int = 200, dev_seed: int = 13):
        if domain not in DOMAINS:
            raise ConfigError(f"unknown Amazon FDU-MTL domain {domain!r}; known: {', '.join(DOMAINS)}")
        self.domain = domain
        self.dev_size = dev_size
        self.dev_seed = dev_seed

    @property
    def name(self) -> str:
        return f"amazon_{self.domain}"

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(f"amazon_fdu_mtl/{self.domain}.task.{split}" for split in ("train", "test"))

    def _read(self, path: Path, split: str) -> Records:
        records = parse_lines(path, parse_review, encoding=file_encoding(path))
        return [{"id": f"{self.domain}-{split}-{i}", **record} for i, record in enumerate(records)]

    def read_files(self, root: Path) -> Splits:
        train_path, test_path = (root / f for f in self.files)
        train = self._read(train_path, "train")
        return hold_out(train, self._read(test_path, "test"), self.dev_size, self.dev_seed, str(train_path))
