"""The options of every head class, typed: what a task's ``task.head`` (``conf/task/*.yaml``,
an experiment, an override) may set.

One dataclass per class, its fields the constructor's keyword arguments (``embedding_dim``,
``encoder_output_size``, ``num_classes`` and ``vocab`` are the model builder's) with the
constructor's defaults; a choice is a ``StrEnum`` of its values. ``rnnbench.options.check``
compares a composed ``task.head`` node with them when the config is composed and validated,
without changing it. The option meanings are in each head's module docstring;
``tests/test_component_schemas.py`` holds these dataclasses equal to the constructors' signatures.

No torch here: composing a config imports this module.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import List, Optional

from omegaconf import MISSING

from rnnbench.options import options_of


class Pooling(StrEnum):  # rnnbench.nn.util.POOLERS
    max = "max"
    mean = "mean"
    min = "min"


class Readout(StrEnum):
    pool = "pool"
    final = "final"


class Attention(StrEnum):
    bilinear = "bilinear"
    trilinear = "trilinear"


class Compare(StrEnum):
    submult_nn = "submult_nn"
    mult = "mult"
    bidaf = "bidaf"


class Pointer(StrEnum):
    bilstm = "bilstm"
    encoder = "encoder"


@dataclass
class HeadOptions:
    _target_: str = MISSING  # the Head class


@options_of("head")
@dataclass
class ClassifierHeadOptions(HeadOptions):
    _target_: str = "rnnbench.heads.classifier.ClassifierHead"
    pooling: List[Pooling] = field(default_factory=lambda: [Pooling.max, Pooling.mean, Pooling.min])
    hidden: int = 200  # 0: no dense layer
    dropout: float = 0.0
    embed_avg_pool: bool = False
    embed_avg_hidden: int = 300
    text_field: str = "tokens"
    readout: Readout = Readout.pool


@options_of("head")
@dataclass
class PairClassifierHeadOptions(HeadOptions):
    _target_: str = "rnnbench.heads.pair_classifier.PairClassifierHead"
    highway_dim: int = 300
    input_highway_layers: int = 2
    pooling: List[Pooling] = field(default_factory=lambda: [Pooling.max, Pooling.mean])
    compare_highway_layers: int = 2
    compare_dim: Optional[int] = 300  # null: the comparison vector's full width
    dropout: float = 0.0
    gate_bias: float = -1.0
    fields: List[str] = field(default_factory=lambda: ["premise", "hypothesis"])


@options_of("head")
@dataclass
class AspectHeadOptions(HeadOptions):
    _target_: str = "rnnbench.heads.aspect.AspectHead"
    question_dim: int = 0  # 0: no context for conditional encoders
    dropout: float = 0.0
    text_field: str = "tokens"
    aspect_field: str = "aspect"


@options_of("head")
@dataclass
class PickingHeadOptions(HeadOptions):
    _target_: str = "rnnbench.heads.picking.PickingHead"
    question_dim: int = 32
    attention_dim: int = 64
    concat_question: bool = True
    max_question: int = 10000
    one_hot_input: bool = False
    dropout: float = 0.0


@options_of("head")
@dataclass
class RankerHeadOptions(HeadOptions):
    _target_: str = "rnnbench.heads.ranker.RankerHead"
    attentive_pooling: bool = False
    margin: float = 0.1
    negatives: int = 6
    fill_from_pool: bool = True
    question_dim: int = 0
    dropout: float = 0.0


@options_of("head")
@dataclass
class SpanHeadOptions(HeadOptions):
    _target_: str = "rnnbench.heads.span.SpanHead"
    projection_dim: Optional[int] = 300  # null: the embedding width
    exact_match_feature: bool = True
    highway: bool = True
    dropout: float = 0.2
    encode_question: bool = True
    attention: Attention = Attention.bilinear
    attention_dim: Optional[int] = None
    compare: Compare = Compare.submult_nn
    compare_dim: Optional[int] = None
    query_to_context: bool = True
    pointer: Pointer = Pointer.bilstm
    pointer_hidden: Optional[int] = None
    pointer_reads_input: bool = False
    max_span_length: int = 20
    question_dim: int = 0


@options_of("head")
@dataclass
class MultipleChoiceHeadOptions(HeadOptions):
    _target_: str = "rnnbench.heads.mcq.MultipleChoiceHead"
    projection_dim: Optional[int] = 250  # null: the embedding width
    exact_match: bool = True
    highway: bool = True
    attention_dim: int = 250
    hidden: int = 250
    overlap: bool = True
    dropout: float = 0.0
    encode_query: bool = True
    question_dim: int = 0


@options_of("head")
@dataclass
class LanguageModelHeadOptions(HeadOptions):
    _target_: str = "rnnbench.heads.lm.LanguageModelHead"
    dropout: float = 0.0
    projection: Optional[int] = None  # null: the softmax reads the encoder states


@options_of("head")
@dataclass
class PointerGeneratorHeadOptions(HeadOptions):
    _target_: str = "rnnbench.heads.pointer_generator.PointerGeneratorHead"
    shortlist_size: int = 10000
    hidden_size: int = 300
    question_dim: int = 300
    attention_dim: int = 300
    concat_question: bool = True
    pointer: bool = True
    copy_smoothing: float = 0.01
    max_answer_length: int = 100
    max_target_length: Optional[int] = None  # null: whole answers
    dropout: float = 0.0
    passage_field: str = "passage"
    question_field: str = "question"
    answer_field: str = "answer_tokens"
