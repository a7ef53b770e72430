"""Hugging Face hub copies of the datasets: where each one lives and how it is fetched.

``Reader.load`` (data/base.py) calls a reader's ``read_hub`` when its original files are
missing and the hub can be reached: not when ``HF_HUB_OFFLINE``/``HF_DATASETS_OFFLINE``
is set, nor when ``offline_reason`` finds the hub's host (or the HTTPS proxy) not answering
within ``CHECK_SECONDS`` (a missing dataset is then one error line at once, instead of
about 30 s of download retries). Each ``read_hub``
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

import os
import socket
import threading
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

PARQUET_EXPORT = "refs/convert/parquet"  # the hub's own parquet conversion of a script dataset
OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
CHECK_SECONDS = 2.0  # a connection to the hub (or the proxy) slower than this counts as offline


def _is_set(variable: str) -> bool:
    return os.environ.get(variable, "").strip().upper() in ("1", "ON", "YES", "TRUE")


def hub_address() -> tuple[str, int]:
    """(host, port) that a hub download connects to first: the HTTPS proxy if one is set, else
    ``HF_ENDPOINT`` (default https://huggingface.co)."""
    proxy = next((os.environ[v] for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy") if os.environ.get(v)), "")
    url = urlsplit(proxy if "://" in proxy else f"http://{proxy}") if proxy else urlsplit(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    return url.hostname or "huggingface.co", url.port or (443 if url.scheme == "https" else 80)


@lru_cache(maxsize=8)
def answers(host: str, port: int, seconds: float = CHECK_SECONDS) -> bool:
    """Whether a TCP connection to host:port opens within ``seconds`` (name lookup included,
    which ``socket`` alone cannot bound: it runs in a thread). Cached per process: a sweep asks once."""
    opened: list[bool] = []

    def probe() -> None:
        try:
            socket.create_connection((host, port), timeout=seconds).close()
            opened.append(True)
        except OSError:
            opened.append(False)

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(seconds)
    return bool(opened and opened[0])


def offline_reason() -> str:
    """Why no hub download will be tried ('' when it will): an offline variable is set, or the
    hub's host (or the proxy) does not answer within CHECK_SECONDS."""
    if any(_is_set(v) for v in OFFLINE_VARIABLES):
        return "HF_HUB_OFFLINE/HF_DATASETS_OFFLINE set"
    host, port = hub_address()
    if not answers(host, port):
        return f"offline: {host}:{port} did not answer within {CHECK_SECONDS:.0f} s; set HF_HUB_OFFLINE=1 to skip this check"
    return ""


def load_hub(hub_id: str, config: str | None = None, revision: str | None = None, streaming: bool = False):
    """``datasets.load_dataset`` of a hub repository: a DatasetDict (an IterableDatasetDict
    when ``streaming``, which reads the parquet files without an Arrow copy on disk)."""
    from datasets import load_dataset

    return load_dataset(hub_id, config, revision=revision, streaming=streaming)


def hub_file(hub_id: str, filename: str, revision: str | None = None) -> Path:
    """One file of a hub dataset repository, downloaded once into the hub cache."""
    from huggingface_hub import hf_hub_download

    return Path(hf_hub_download(hub_id, filename, repo_type="dataset", revision=revision))
