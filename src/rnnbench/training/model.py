"""The task model: embedding -> head (which calls the encoder) -> loss."""
from __future__ import annotations

import inspect

import torch
from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf
from torch import nn

from rnnbench.encoders.base import Encoder
from rnnbench.encoders.build import build_encoder
from rnnbench.errors import ConfigError
from rnnbench.heads.base import Head, HeadOutput


class TaskModel(nn.Module):
    def __init__(self, embedding: nn.Embedding, encoder: Encoder, head: Head, embedding_dropout: float = 0.0):
        super().__init__()
        self.embedding = embedding
        self.embedding_dropout = nn.Dropout(embedding_dropout)
        self.encoder = encoder
        self.head = head

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        return self.embedding_dropout(self.embedding(ids))

    def forward(self, batch: dict, regularisers: bool = True) -> tuple[HeadOutput, torch.Tensor]:
        """Head output and the total training loss: the task loss, plus the encoder's aux loss
        (its regulariser; left out with ``regularisers=False``), plus in training its policy
        loss (FHE's REINFORCE), a function of the head's combined encoder output and gold
        log-likelihood only (docs/architecture.md, "The training step")."""
        out = self.head(batch, self.embed, self.encoder)
        enc = out.encoder_output
        loss = out.loss
        if enc.aux_loss is not None and regularisers:
            loss = loss + enc.aux_loss
        if self.training:
            policy = self.encoder.policy_loss(enc, out.log_likelihood.detach())
            if policy is not None:
                loss = loss + policy
        return out, loss


def _head_class_and_options(cfg: DictConfig, vocab) -> tuple[type, dict]:
    head_opts = OmegaConf.to_container(cfg.task.head, resolve=True)
    head_cls = get_class(head_opts.pop("_target_"))
    if "vocab" in inspect.signature(head_cls.__init__).parameters:
        head_opts["vocab"] = vocab
    return head_cls, head_opts


def _encoder_for_head(cfg: DictConfig, head_cls: type, head_opts: dict):
    """The encoder, reading what the head feeds it (the embeddings, or the head's features of them)."""
    try:
        return build_encoder(cfg.encoder, head_cls.encoder_input_size(cfg.embedding.dim, **head_opts))
    except TypeError as exc:
        raise ConfigError(f"task.head ({head_cls.__name__}): {exc}") from None


def encoder_parameters(cfg: DictConfig) -> int:
    """The encoder's parameter count under ``cfg``, without data or training: what a run of it
    records as ``encoder_parameters`` (the count depends on neither the seed nor the vocabulary)."""
    head_cls, head_opts = _head_class_and_options(cfg, vocab=None)
    with torch.random.fork_rng(devices=[]):  # building draws initial weights: leave the caller's stream alone
        return _encoder_for_head(cfg, head_cls, head_opts).num_parameters()


def build_model(cfg: DictConfig, data) -> TaskModel:
    """The task model for ``data`` (a TaskData: vocabulary, label names, pre-trained vectors)."""
    vocab_size, num_classes, vectors = len(data.vocab), len(data.label_names), data.vectors
    dim = cfg.embedding.dim
    embedding = nn.Embedding(vocab_size, dim, padding_idx=0)
    if vectors is not None:
        if vectors.shape != (vocab_size, dim):
            raise ConfigError(f"embedding matrix is {tuple(vectors.shape)}, expected {(vocab_size, dim)} (embedding.dim)")
        embedding.weight.data.copy_(vectors)
    freeze = cfg.embedding.freeze if cfg.embedding.freeze is not None else cfg.task.get("freeze_embeddings", False)
    embedding.weight.requires_grad = not freeze

    head_cls, head_opts = _head_class_and_options(cfg, data.vocab)
    encoder = _encoder_for_head(cfg, head_cls, head_opts)
    if head_cls.requires_causal_encoder and not encoder.causal:
        raise ConfigError(
            f"task {cfg.task.name!r} needs a causal encoder (each position may read only earlier ones), "
            f"but encoder {cfg.encoder.name!r} reads both directions; use a forward-only one "
            f"(for example lstm1, lstm2, fhe, or mzu_* with encoder.bidirectional=false)"
        )
    try:
        head = head_cls(dim, encoder.output_size, num_classes, **head_opts)
    except TypeError as exc:
        raise ConfigError(f"task.head ({head_cls.__name__}): {exc}") from None
    return TaskModel(embedding, encoder, head, cfg.embedding.dropout)
