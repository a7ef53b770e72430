"""A GloVe file cut to the words some experiments need, for a machine the full file cannot reach
(some GPU machines take at most 64 MiB with the checkout; GloVe 6B 50d is 65 MiB gzipped).

    python scripts/embedding_subset.py build SUBSET.txt.gz rcrn_table4 lstm_odyssey_table2_baseline
    python scripts/embedding_subset.py register SUBSET.txt.gz       # there, once the file sits at embedding.path

`build` keeps, in the file's order, every row whose word is in one of the experiments' vocabularies
(as is or lower-cased), then checks that each experiment's embedding matrix from the subset equals
the one from the full file bit for bit. Only then does it write the sidecar SUBSET.txt.gz.json: the full
file's path and sha256, the subset's sha256, the experiments checked. Exit status 1 if a check fails.

`register` (on the other machine, at the path the runs will read) records in the fingerprint cache
(paths.cache_dir, RNNBENCH_CACHE) that this file has the full file's sha256, so a run reading it has the
identity of the same run on the full file: what it computes is the same (checked by `build`), and the
runs of both machines fill one table. It refuses a file whose sha256 is not the sidecar's. Use it only
for the experiments `build` checked (the sidecar names them).
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
from pathlib import Path
from typing import Iterable

import torch

from rnnbench.compose import compose_config
from rnnbench.data.embeddings import load_vectors
from rnnbench.data.prepare import prepare
from rnnbench.results.identity import file_sha256 as sha256, record_file_digest


def _error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


def write_subset(source: Path, out: Path, words: set[str]) -> int:
    """Copy the rows of ``source`` whose word, as is or lower-cased, is in ``words``; returns the rows kept.
    The order is kept: load_vectors takes the first row matching a word, so the same row wins."""
    out.parent.mkdir(parents=True, exist_ok=True)
    kept = 0
    opener = gzip.open if source.suffix == ".gz" else open
    with opener(source, "rt", encoding="utf8") as rows, gzip.open(out, "wt", encoding="utf8") as subset:
        for line in rows:
            word = line.split(" ", 1)[0]
            if word in words or word.lower() in words:
                subset.write(line)
                kept += 1
    return kept


def same_matrix(source: Path, subset: Path, itos: list[str], dim: int, lowercase: bool, cache_dir: str | Path) -> bool:
    """Whether the subset gives the vocabulary the full file's embedding matrix, bit for bit
    (the full file parsed through the runs' cache, the subset in a scratch one)."""
    full, found_full = load_vectors(source, itos, dim, lowercase, cache_dir)
    with tempfile.TemporaryDirectory() as scratch:
        cut, found_cut = load_vectors(subset, itos, dim, lowercase, scratch)
    return found_full == found_cut and torch.equal(full, cut)


def build(out: Path, experiments: Iterable[str], overrides: list[str], say=print) -> int:
    vocabularies, source, cache_dir = [], None, None
    for experiment in experiments:
        cfg = compose_config([f"experiment={experiment}", *overrides])
        if cfg.embedding.kind != "glove":
            _error(f"{experiment} uses embedding={cfg.embedding.kind}, not a GloVe file")
            return 2
        path = Path(str(cfg.embedding.path))
        if source is not None and path != source:
            _error(f"{experiment} reads {path}, the others {source}: one subset per embedding file")
            return 2
        source, cache_dir = path, str(cfg.paths.cache_dir)
        data = prepare(cfg)
        vocabularies.append((experiment, data.vocab.itos, int(cfg.embedding.dim), bool(cfg.embedding.lowercase)))
        say(f"{experiment}: {len(data.vocab.itos)} words in its vocabulary")
    words = set().union(*(set(itos) for _, itos, _, _ in vocabularies))
    kept = write_subset(source, out, words)
    say(f"wrote {out}: {kept} of the rows of {source} ({out.stat().st_size / 2**20:.1f} MiB)")
    for experiment, itos, dim, lowercase in vocabularies:
        if not same_matrix(source, out, itos, dim, lowercase, cache_dir):
            _error(f"{experiment}: the subset's embedding matrix differs from the full file's; no sidecar written")
            return 1
        say(f"{experiment}: embedding matrix identical to the full file's")
    sidecar = {"full_file": str(source), "full_sha256": sha256(source), "subset_sha256": sha256(out),
               "rows": kept, "experiments": [name for name, *_ in vocabularies], "overrides": overrides}
    Path(f"{out}.json").write_text(json.dumps(sidecar, indent=1) + "\n")
    say(f"wrote {out}.json")
    return 0


def register(path: Path, cache_dir: Path, say=print) -> int:
    sidecar_path = Path(f"{path}.json")
    if not sidecar_path.exists():
        _error(f"{sidecar_path} not found: `build` writes it beside the subset (copy both)")
        return 2
    sidecar = json.loads(sidecar_path.read_text())
    if sha256(path) != sidecar["subset_sha256"]:
        _error(f"{path} is not the subset {sidecar_path} describes (sha256 differs); build it again")
        return 1
    record_file_digest(path, sidecar["full_sha256"], cache_dir)
    say(f"{path} now stands for {sidecar['full_file']} (sha256 {sidecar['full_sha256'][:12]}) in {cache_dir}; "
        f"checked for {', '.join(sidecar['experiments'])}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    make = verbs.add_parser("build", help="write the subset and check it against the full file")
    make.add_argument("out", type=Path)
    make.add_argument("experiments", nargs="+")
    make.add_argument("--set", dest="overrides", action="append", default=[], help="an extra Hydra override")
    mark = verbs.add_parser("register", help="record the subset under the full file's sha256 in the fingerprint cache")
    mark.add_argument("path", type=Path)
    mark.add_argument("--cache-dir", type=Path, default=None, help="default: the config's paths.cache_dir")
    args = parser.parse_args(argv)
    if args.verb == "build":
        return build(args.out, args.experiments, args.overrides)
    if not args.path.exists():
        _error(f"{args.path} not found")
        return 2
    cache_dir = args.cache_dir or Path(str(compose_config([]).paths.cache_dir))
    return register(args.path, cache_dir)


if __name__ == "__main__":
    sys.exit(main())
