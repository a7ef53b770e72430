"""Where a table's dropout p goes, the same rule for every encoder (``table.protocol.dropout_grid``
and the regime ladder's rung 2): the embedding layer's output and the head; for an encoder of
several layers with its own ``dropout``, that in place of the embedding's (the LSTM family drops
each layer's input, the word vectors included, which would otherwise be dropped twice)."""
from __future__ import annotations

from omegaconf import OmegaConf


def setting(cfg, key: str, value) -> str:
    """``key=value`` where the composed config has the key, else ``+key=value`` (the ranker's head
    lists no dropout: Hydra adds it)."""
    parent, _, leaf = key.rpartition(".")
    node = OmegaConf.select(cfg, parent) if parent else cfg
    return f"{key}={value}" if node is not None and leaf in node else f"+{key}={value}"


def dropout_overrides(cfg, p: float) -> list[str]:
    """The overrides that set dropout ``p`` on the composed config ``cfg`` (see the module docstring)."""
    layered = "dropout" in cfg.encoder and int(cfg.encoder.get("num_layers") or 1) > 1
    inputs = setting(cfg, "encoder.dropout", p) if layered else setting(cfg, "embedding.dropout", p)
    return [inputs, setting(cfg, "task.head.dropout", p)]
