"""Where the Hydra configs (``conf/``) are, installed or in a checkout.

A wheel ships them inside the package as ``rnnbench/conf`` (pyproject maps the
repository's ``conf/`` there); an editable install or a plain checkout reads the
repository's own ``conf/`` beside ``src/``. Nothing else finds ``conf/`` by climbing
directories.
"""
from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

from rnnbench.errors import RnnbenchError


class ConfigsMissing(RnnbenchError):
    """The configs are neither in the installed package nor in a checkout."""


@cache
def conf_dir() -> Path:
    packaged = Path(str(resources.files("rnnbench"))) / "conf"  # a (non-editable) install
    if (packaged / "config.yaml").is_file():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / "conf"  # src/rnnbench/ -> the repository's conf/
    if (checkout / "config.yaml").is_file():
        return checkout
    raise ConfigsMissing(f"the rnnbench configs are missing: neither {packaged} nor {checkout} holds config.yaml; reinstall rnnbench")
