"""WordNet 3.0 for nltk's METEOR, without nltk's downloader.

nltk's METEOR matches synonyms through ``nltk.corpus.wordnet``, whose data
normally comes from ``nltk.download('wordnet')`` (a connected machine). Where
that is not installed, Debian's packages ``wordnet-base`` and
``wordnet-sense-index`` (``apt-get install wordnet-base wordnet-sense-index``)
ship the same WordNet 3.0 database files in /usr/share/wordnet (data.*, index.*,
*.exc, index.sense, ...), all nltk's reader needs except ``lexnames``: the small
table of the 45 lexicographer file names (number, name, syntactic category),
which Debian documents only in the man page lexnames(5WN). We build an nltk
corpus folder from them: copies of Debian's files (about 36 MB, once; nltk's
path sandbox refuses symlinks that leave the corpus folder) plus a generated
``lexnames`` (from the man page when installed, else from the list below, which
is that page's table). The folder's ``nltk_data`` root is added to
``nltk.data.path``, which nltk's sandbox requires of every corpus it reads.

Where: ``${RNNBENCH_CACHE:-.cache/rnnbench}/nltk_data/corpora/wordnet``; the
database folder is ``$WNSEARCHDIR`` if set (WordNet's own variable), else
/usr/share/wordnet.
"""
from __future__ import annotations

import gzip
import os
import re
import shutil
import warnings
from functools import lru_cache
from pathlib import Path

DEBIAN_WORDNET = Path("/usr/share/wordnet")
LEXNAMES_MAN_PAGE = Path("/usr/share/man/man5/lexnames.5WN.gz")
# WordNet 3.0's lexicographer files, numbered 00..44 in this order (lexnames(5WN)).
LEXICOGRAPHER_FILES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body "
    "noun.cognition noun.communication noun.event noun.feeling noun.food noun.group noun.location "
    "noun.motive noun.object noun.person noun.phenomenon noun.plant noun.possession noun.process "
    "noun.quantity noun.relation noun.shape noun.state noun.substance noun.time verb.body verb.change "
    "verb.cognition verb.communication verb.competition verb.consumption verb.contact verb.creation "
    "verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()
SYNTACTIC_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
# What nltk's WordNetCorpusReader opens (the rest of Debian's folder is linked too, harmlessly).
REQUIRED = [f"{kind}.{pos}" for kind in ("data", "index") for pos in ("noun", "verb", "adj", "adv")] + [
    f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv")
]


class WordNetMissing(RuntimeError):
    """Neither nltk's downloaded WordNet nor Debian's database files were found."""


def lexnames_text(man_page: Path = LEXNAMES_MAN_PAGE) -> str:
    """The ``lexnames`` file: ``NN<TAB>name<TAB>category`` per line, from the man page when it is installed."""
    names = list(LEXICOGRAPHER_FILES)
    if man_page.exists():
        text = gzip.open(man_page, "rt", encoding="utf-8", errors="replace").read()
        rows = re.findall(r"^(\d\d)\t(\S+)", text, flags=re.MULTILINE)
        from_page = [name for _, name in sorted(rows)]
        if len(from_page) == len(names):  # a page we can read: it is the authority
            names = from_page
    return "".join(f"{i:02d}\t{name}\t{SYNTACTIC_CATEGORY[name.split('.')[0]]}\n" for i, name in enumerate(names))


def database_dir() -> Path:
    return Path(os.environ.get("WNSEARCHDIR", DEBIAN_WORDNET))


def build_corpus(target: Path, source: Path | None = None) -> Path:
    """Make ``target`` an nltk WordNet corpus folder from the database in ``source``; return it."""
    source = source or database_dir()
    missing = [name for name in REQUIRED if not (source / name).exists()]
    if missing:
        raise WordNetMissing(
            f"WordNet database files {', '.join(missing)} not found in {source}: install Debian's "
            "wordnet-base and wordnet-sense-index (apt-get install wordnet-base wordnet-sense-index), "
            "set WNSEARCHDIR to a WordNet 3.0 dict folder, or run nltk.download('wordnet') on a connected machine"
        )
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.iterdir()):
        copy = target / path.name
        if path.is_file() and not copy.exists():
            tmp = copy.with_name(copy.name + ".tmp")
            shutil.copyfile(path, tmp)
            tmp.replace(copy)  # complete files only: a parallel run may be copying too
    lexnames = target / "lexnames"
    if not lexnames.exists():  # Debian's case: generate it
        tmp = lexnames.with_name("lexnames.tmp")
        tmp.write_text(lexnames_text())
        tmp.replace(lexnames)
    return target


def cache_root() -> Path:
    return Path(os.environ.get("RNNBENCH_CACHE", ".cache/rnnbench")) / "nltk_data"


@lru_cache(maxsize=1)
def nltk_wordnet():
    """(reader, where it came from): nltk's installed WordNet if any, else one built from Debian's files."""
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    try:
        from nltk.corpus import wordnet

        wordnet.ensure_loaded()
        return wordnet, "nltk data (nltk.download('wordnet'))"
    except LookupError:
        pass
    import nltk

    root = cache_root().resolve()
    folder = build_corpus(root / "corpora" / "wordnet")
    if str(root) not in nltk.data.path:
        nltk.data.path.append(str(root))
    with warnings.catch_warnings():  # "multilingual functions are not available": METEOR needs none
        warnings.simplefilter("ignore", UserWarning)
        reader = WordNetCorpusReader(str(folder), None)
    return reader, f"Debian WordNet 3.0 files in {database_dir()} (lexnames generated)"
