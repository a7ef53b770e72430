"""The options of every encoder class, typed: what ``conf/encoder/*.yaml`` and overrides may set.

One dataclass per class, its fields the constructor's keyword arguments (``input_size`` is
the builder's) with the constructor's defaults; a choice is a ``StrEnum`` of its values.
``rnnbench.options.check`` compares a composed ``encoder`` node with them when the config is
composed and validated, without changing it (a default here never enters a run's config).
The constructors keep their own checks (ranges, combinations of options), which
``rnnbench.encoders.build.check_options`` runs before any data is read. The option
meanings are in each encoder's module docstring; ``tests/test_component_schemas.py`` holds
these dataclasses equal to the constructors' signatures.

No torch here: composing a config imports this module.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import List, Optional

from omegaconf import MISSING

from rnnbench.options import options_of

PAPER_RANGES = [1, 2, 4, 10, 25]  # DCU's block sizes (encoders.dcu.PAPER_RANGES)


class Cell(StrEnum):
    lstm = "lstm"
    gru = "gru"


class Residual(StrEnum):
    none = "none"
    v1 = "v1"  # each layer's input added to its output
    v2 = "v2"  # the lateral residual inside the recurrence (LSTM cell only)


class DirectionsMeet(StrEnum):
    every_layer = "every_layer"
    top = "top"


class ListenerDirection(StrEnum):
    forward = "forward"
    bidirectional = "bidirectional"


class SparsityPenalty(StrEnum):
    loss = "loss"
    reward = "reward"


class Composition(StrEnum):
    sat = "sat"
    gcn = "gcn"
    cap = "cap"


class DisagreementNormalizer(StrEnum):
    token = "token"
    token_mean = "token_mean"
    sequence = "sequence"


class GcnActivation(StrEnum):
    relu = "relu"
    sigmoid = "sigmoid"


class LayerNorm(StrEnum):
    gate = "gate"
    candidate = "candidate"


@dataclass
class EncoderOptions:
    """Keys every encoder config has besides its class's options."""

    _target_: str = MISSING  # the Encoder class
    name: str = MISSING  # the config's name (conf/encoder/<name>.yaml), part of the run folder's path


@options_of("encoder")
@dataclass
class LSTMEncoderOptions(EncoderOptions):
    _target_: str = "rnnbench.encoders.lstm.LSTMEncoder"
    hidden_size: int = 200
    num_layers: int = 1
    bidirectional: bool = True
    cell: Cell = Cell.lstm
    forget_bias: Optional[float] = 1.0  # null: torch's initialisation
    dropout: float = 0.0
    shared_weights: bool = False
    residual: Residual = Residual.none
    directions_meet: DirectionsMeet = DirectionsMeet.every_layer


@options_of("encoder")
@dataclass
class RCRNOptions(EncoderOptions):
    _target_: str = "rnnbench.encoders.rcrn.RCRN"
    hidden_size: int = 200
    cell: Cell = Cell.lstm
    listener_direction: ListenerDirection = ListenerDirection.forward
    forget_bias: Optional[float] = 1.0
    fused: bool = True
    dropout: float = 0.0


@options_of("encoder")
@dataclass
class SimDCUOptions(EncoderOptions):
    _target_: str = "rnnbench.encoders.dcu.SimDCU"
    hidden_size: int = 200
    ranges: List[int] = field(default_factory=lambda: list(PAPER_RANGES))
    dropout: float = 0.0


@options_of("encoder")
@dataclass
class DCUOptions(EncoderOptions):
    _target_: str = "rnnbench.encoders.dcu.DCU"
    hidden_size: int = 200
    ranges: List[int] = field(default_factory=lambda: list(PAPER_RANGES))
    output_gate_sigmoid: bool = False
    bidirectional: bool = False
    dropout: float = 0.0


@options_of("encoder")
@dataclass
class DCULSTMOptions(EncoderOptions):
    _target_: str = "rnnbench.encoders.dcu.DCULSTM"
    hidden_size: int = 200
    ranges: List[int] = field(default_factory=lambda: list(PAPER_RANGES))
    output_gate_sigmoid: bool = False
    dcu_bidirectional: bool = False
    forget_bias: Optional[float] = 1.0
    dropout: float = 0.0


@options_of("encoder")
@dataclass
class DeepTransitionGRUOptions(EncoderOptions):
    _target_: str = "rnnbench.encoders.dt_gru.DeepTransitionGRU"
    hidden_size: int = 200
    transition_depth: int = 1
    bidirectional: bool = True
    gate_layer_norm: bool = False
    candidate_dropout: float = 0.0


@options_of("encoder")
@dataclass
class FHEOptions(EncoderOptions):
    _target_: str = "rnnbench.encoders.fhe.FHE"
    hidden_size: int = 256
    context_size: int = 0  # 0: unconditional gates
    context_in_input: bool = True
    gate_hidden: int = 64
    epsilon: float = 0.01
    threshold: float = 0.5
    sparsity_weight: float = 0.0
    sparsity_target: float = 0.0
    baseline_momentum: float = 0.9
    forget_bias: float = 1.0
    sparsity_penalty: SparsityPenalty = SparsityPenalty.loss
    penalty_from_dev_accuracy: Optional[float] = None  # null: the penalty from the start
    dropout: float = 0.0


@options_of("encoder")
@dataclass
class MZUOptions(EncoderOptions):
    _target_: str = "rnnbench.encoders.mzu.MZU"
    hidden_size: int = 200
    composition: Composition = Composition.sat
    num_zones: int = 4
    transition_depth: int = 1
    num_capsules: int = 2
    routing_iterations: int = 3
    dropout: float = 0.0
    disagreement_weight: float = 1.0
    disagreement_normalizer: DisagreementNormalizer = DisagreementNormalizer.token
    bidirectional: bool = True
    ffn_size: Optional[int] = None  # null: hidden_size
    gcn_activation: GcnActivation = GcnActivation.relu
    share_transition: bool = False
    layer_norm: LayerNorm = LayerNorm.gate


@options_of("encoder")
@dataclass
class NoEncoderOptions(EncoderOptions):
    _target_: str = "rnnbench.encoders.no_encoder.NoEncoder"
    hidden_size: Optional[int] = None  # accepted and not used (the output is the input)
