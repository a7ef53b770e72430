"""Hugging Face hub copies of the datasets: where each one lives and how it is fetched.

``Reader.load`` (data/base.py) calls a reader's ``read_hub`` when its original files are
missing, unless ``HF_HUB_OFFLINE``/``HF_DATASETS_OFFLINE`` is set. Each ``read_hub``
fetches with the two functions below and turns the hub's rows into exactly the records
``read_files`` gives for the original files, through a conversion function of its own
that the tests run on small local files in the hub copy's layout (tests/fixtures/hub).

Script-based hub datasets no longer load with ``datasets`` (4.0 removed loading
scripts), so every copy used here is in a data-file format: a parquet repository, the
parquet export the hub made of a script dataset (``revision="refs/convert/parquet"``),
or the original distribution files that a hub repository hosts. docs/tasks.md's "Datasets
and hub copies" table lists them with their differences from the original files.
"""
from __future__ import annotations

from pathlib import Path

PARQUET_EXPORT = "refs/convert/parquet"  # the hub's own parquet conversion of a script dataset


def load_hub(hub_id: str, config: str | None = None, revision: str | None = None, streaming: bool = False):
    """``datasets.load_dataset`` of a hub repository: a DatasetDict (an IterableDatasetDict
    when ``streaming``, which reads the parquet files without an Arrow copy on disk)."""
    from datasets import load_dataset

    return load_dataset(hub_id, config, revision=revision, streaming=streaming)


def hub_file(hub_id: str, filename: str, revision: str | None = None) -> Path:
    """One file of a hub dataset repository, downloaded once into the hub cache."""
    from huggingface_hub import hf_hub_download

    return Path(hf_hub_download(hub_id, filename, repo_type="dataset", revision=revision))
