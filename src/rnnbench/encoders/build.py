"""Build an encoder from its config group entry (conf/encoder/<name>.yaml)."""
from __future__ import annotations

from pathlib import Path

from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from rnnbench.conf_dir import conf_dir
from rnnbench.encoders.base import Encoder
from rnnbench.errors import ConfigError

ENCODER_CONF_DIR = conf_dir() / "encoder"


def known_encoders(conf_dir: Path = ENCODER_CONF_DIR) -> list[str]:
    return sorted(p.stem for p in conf_dir.glob("*.yaml"))


def build_encoder(cfg: DictConfig, input_size: int) -> Encoder:
    """Instantiate ``cfg`` (minus its ``name``) with the given input size."""
    kwargs = OmegaConf.to_container(cfg, resolve=True)
    name = kwargs.pop("name", "?")
    try:
        encoder = instantiate(kwargs, input_size=input_size)
    except Exception as exc:  # Hydra wraps the constructor's TypeError
        cause = exc.__cause__ or exc
        if isinstance(cause, TypeError) and "argument" in str(cause):
            raise ConfigError(f"encoder {name!r}: {cause}") from None
        raise
    if not isinstance(encoder, Encoder):
        raise ConfigError(f"encoder {name!r}: {kwargs.get('_target_')} is not an rnnbench Encoder")
    return encoder


PROBE_INPUT = 8  # the input width of the encoder built by ``check_options``: any width a head may give


def check_options(cfg: DictConfig) -> None:
    """Build the encoder once on a small input, before any data is read or prepared, so that an
    option the constructor refuses is one ConfigError line at once, naming the encoder and what
    the constructor said, not a Hydra traceback after minutes of data preparation. The typed
    options (``rnnbench.encoders.options``) have already refused unknown keys, wrong types and
    values outside a choice; what is left is the constructor's own: ranges and combinations
    (``encoder.residual=v2`` with ``encoder.cell=gru``, MZU's ``hidden_size`` a multiple of
    ``num_zones``, a negative size)."""
    try:
        build_encoder(cfg, PROBE_INPUT)
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - the constructor's own check (ValueError, ...), wrapped by Hydra
        cause = exc.__cause__ or exc
        raise ConfigError(f"encoder {cfg.get('name', '?')!r}: {cause}") from None
