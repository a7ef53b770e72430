"""rnnbench: reproduce and compare recurrent sequence encoders across NLP tasks.

``rnnbench.load(run_folder)`` gives a finished run's model, vocabulary and config ready
for inference (``rnnbench.inference``). It is imported on first use, so ``import
rnnbench`` stays cheap (no torch, no Hydra).
"""
from __future__ import annotations

__all__ = ["load"]


def __getattr__(name: str):
    if name == "load":
        from rnnbench.inference import load

        return load
    raise AttributeError(f"module 'rnnbench' has no attribute {name!r}")
