"""scripts/embedding_subset.py: a GloVe file cut to some vocabularies gives their embedding matrices bit for
bit, and registered on another machine it keeps the full file's fingerprint (so the runs' identities)."""
from __future__ import annotations

import gzip
import json

import pytest

from rnnbench.results import identity
from tests.helpers import load_script

ROWS = ["Apple 9 9 9", "apple 1 2 3", "cat 4 5 6", "dog 7 8 9", "the 0.5 0.25 0.125"]
ITOS = ["<pad>", "<unk>", "apple", "cat", "the", "zebra"]


@pytest.fixture
def glove(tmp_path):
    path = tmp_path / "full.txt.gz"
    with gzip.open(path, "wt", encoding="utf8") as handle:
        handle.write("\n".join(ROWS) + "\n")
    return path


def test_the_subset_keeps_the_needed_rows_in_order_and_gives_the_same_matrix(glove, tmp_path):
    module = load_script("embedding_subset")
    out = tmp_path / "cut.txt.gz"
    assert module.write_subset(glove, out, set(ITOS)) == 4  # dog dropped; both casings of apple kept
    assert [line.split()[0] for line in gzip.open(out, "rt")] == ["Apple", "apple", "cat", "the"]
    for lowercase in (True, False):  # lower-cased: the first row (Apple) wins in both files
        assert module.same_matrix(glove, out, ITOS, 3, lowercase, tmp_path / "cache")


def test_a_subset_missing_a_needed_word_is_caught(glove, tmp_path):
    module = load_script("embedding_subset")
    out = tmp_path / "cut.txt.gz"
    module.write_subset(glove, out, {"apple", "the"})
    assert not module.same_matrix(glove, out, ITOS, 3, True, tmp_path / "cache")


def test_register_gives_the_subset_the_full_files_digest_and_refuses_another_file(glove, tmp_path, capsys):
    module = load_script("embedding_subset")
    out = tmp_path / "cut.txt.gz"
    module.write_subset(glove, out, set(ITOS))
    sidecar = {"full_file": str(glove), "full_sha256": module.sha256(glove), "subset_sha256": module.sha256(out),
               "rows": 4, "experiments": ["toy"], "overrides": []}
    out.with_name(out.name + ".json").write_text(json.dumps(sidecar))
    cache_dir = tmp_path / "cache"
    assert module.register(out, cache_dir) == 0
    cache = json.loads((cache_dir / "fingerprints.json").read_text())
    assert identity._file_digest(out, cache) == module.sha256(glove) != module.sha256(out)

    with gzip.open(out, "at", encoding="utf8") as handle:  # the file changed after build: refused
        handle.write("zebra 1 1 1\n")
    assert module.register(out, tmp_path / "other") == 1
    assert "is not the subset" in capsys.readouterr().err


@pytest.mark.slow
def test_build_on_a_real_experiment_checks_the_matrix_and_writes_the_sidecar(real_data, tmp_path):
    module = load_script("embedding_subset")
    out = tmp_path / "glove.txt.gz"
    assert module.build(out, ["rcrn_table1_mr"], [f"paths.data_dir={real_data}"], say=lambda *_: None) == 0
    sidecar = json.loads(out.with_name(out.name + ".json").read_text())
    assert sidecar["experiments"] == ["rcrn_table1_mr"] and 1000 < sidecar["rows"] < 400_000
    assert sidecar["full_sha256"] == module.sha256(real_data / "glove" / "glove.6B.50d.txt.gz")
