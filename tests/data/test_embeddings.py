"""GloVe files in every distributed form, aligned to a vocabulary and cached."""
from __future__ import annotations

import gzip
import zipfile

import pytest
import torch

from rnnbench.data.embeddings import load_vectors
from rnnbench.errors import DataFormatError, RnnbenchError

LINES = "the 0.1 0.2 0.3\ncat 1 2 3\nThe 9 9 9\nnew york 4 5 6\n"


def _write(tmp_path, kind: str):
    if kind == "txt":
        path = tmp_path / "g.txt"
        path.write_text(LINES)
    elif kind == "gz":
        path = tmp_path / "g.txt.gz"
        with gzip.open(path, "wt") as h:
            h.write(LINES)
    else:
        path = tmp_path / "glove.zip"
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("glove.txt", LINES)
    return path


@pytest.mark.parametrize("kind", ["txt", "gz", "zip"])
def test_reads_every_form_and_aligns(tmp_path, kind):
    path = _write(tmp_path, kind)
    itos = ["<pad>", "<unk>", "the", "cat", "dog", "new york"]
    vectors, found = load_vectors(path, itos, 3, lowercase=True, cache_dir=tmp_path / "cache")
    assert found == 3
    assert torch.equal(vectors[0], torch.zeros(3))
    torch.testing.assert_close(vectors[2], torch.tensor([0.1, 0.2, 0.3]))  # first casing wins
    torch.testing.assert_close(vectors[3], torch.tensor([1.0, 2.0, 3.0]))
    torch.testing.assert_close(vectors[5], torch.tensor([4.0, 5.0, 6.0]))  # a word with a space (840B has these)
    assert vectors[4].abs().max() < 1.0 and vectors[4].abs().sum() > 0  # missing: small random
    again, _ = load_vectors(path, itos, 3, lowercase=True, cache_dir=tmp_path / "cache")  # from the cache
    assert torch.equal(vectors, again)


def test_malformed_line_names_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("the 0.1 0.2 0.3\ncat 1 x 3\n")
    with pytest.raises(DataFormatError, match=r"bad\.txt:2"):
        load_vectors(path, ["<pad>", "<unk>", "cat"], 3, True, tmp_path / "cache")
    short = tmp_path / "short.txt"
    short.write_text("the 0.1 0.2\n")
    with pytest.raises(DataFormatError, match=r"short\.txt:1"):
        load_vectors(short, ["<pad>", "<unk>"], 3, True, tmp_path / "cache")


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(RnnbenchError, match="not found"):
        load_vectors(tmp_path / "none.txt.gz", ["<pad>"], 3, True, tmp_path)


def test_real_glove_6b_50d(real_data, repo_root):
    path = real_data / "glove" / "glove.6B.50d.txt.gz"
    # The project's default cache: the parsed file is shared with the smoke runs.
    vectors, found = load_vectors(path, ["<pad>", "<unk>", "the", "question", "zzzqqqxxx"], 50, True, repo_root / ".cache" / "rnnbench")
    assert found == 2 and vectors.shape == (5, 50)
    assert abs(vectors[2, 0].item() - 0.418) < 1e-6  # the first value of "the" in glove.6B.50d
