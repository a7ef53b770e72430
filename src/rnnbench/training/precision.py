"""Mixed precision (``trainer.precision=32|bf16|fp16``).

``32`` (the default) changes nothing. ``bf16`` and ``fp16`` run the forward pass under
``torch.autocast``: matrix products (embeddings' consumers, the heads' projections,
attention, decoders and output softmaxes) run in the low precision, reductions and losses
in float32 as autocast decides.

**The encoder's recurrence stays in float32.** A recurrent state is accumulated over
hundreds of steps (c_t = f_t * c_{t-1} + ...); with bfloat16's 8-bit mantissa (fp16's
10-bit) the rounding error of every step compounds along the sequence, the gates' products
drift, and the benchmarked encoders would no longer be compared at the precision their
papers used. So the encoder runs with autocast disabled and float32 inputs
(``keep_encoder_float32``); its output states go back into the autocast region, where the
head casts them as it needs. fp16 also needs a GradScaler (small gradients underflow
fp16), and is refused on the CPU, where autocast supports bfloat16.
"""
from __future__ import annotations

import contextlib
import functools

import torch
from torch import nn

from rnnbench.config import PRECISIONS as CHOICES
from rnnbench.errors import ConfigError

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


class Precision:
    """The autocast context of the forward pass and the gradient scaler of a run."""

    def __init__(self, name: str, device: torch.device):
        name = str(name)
        if name not in CHOICES:
            raise ConfigError(f"trainer.precision={name}: must be one of {', '.join(CHOICES)}")
        if name == "fp16" and device.type != "cuda":
            raise ConfigError(f"trainer.precision=fp16 needs CUDA (this run is on {device}): use trainer.precision=bf16 on the CPU")
        self.name, self.device = name, device
        self.enabled = name != "32"
        self.scaler = torch.amp.GradScaler("cuda") if name == "fp16" else None

    def autocast(self):
        if not self.enabled:
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=DTYPES[self.name])

    def backward(self, loss: torch.Tensor) -> None:
        (self.scaler.scale(loss) if self.scaler else loss).backward()

    def step(self, optimizer, params, grad_clip: float) -> None:
        """Clip (on unscaled gradients) and step; the scaler skips a step whose gradients overflowed."""
        if self.scaler:
            self.scaler.unscale_(optimizer)
        if grad_clip:
            torch.nn.utils.clip_grad_norm_(params, grad_clip)
        if self.scaler:
            self.scaler.step(optimizer)
            self.scaler.update()
        else:
            optimizer.step()

    def state_dict(self) -> dict | None:
        return self.scaler.state_dict() if self.scaler else None

    def load_state_dict(self, state: dict | None) -> None:
        if self.scaler and state:
            self.scaler.load_state_dict(state)


def _float32(value):
    return value.float() if isinstance(value, torch.Tensor) and value.is_floating_point() else value


def keep_encoder_float32(encoder: nn.Module, device_type: str) -> None:
    """Run ``encoder``'s forward with autocast off and its floating inputs in float32 (see
    the module docstring). Set on the instance: the state dict and the class are unchanged."""
    if getattr(encoder, "_float32_forward", False):
        return
    forward = encoder.forward

    @functools.wraps(forward)
    def float32_forward(*args, **kwargs):
        with torch.autocast(device_type, enabled=False):
            return forward(*[_float32(a) for a in args], **{k: _float32(v) for k, v in kwargs.items()})

    encoder.forward = float32_forward
    encoder._float32_forward = True
