"""The task model: embedding -> head (which calls the encoder) -> loss.

``TaskModel.embed`` is the one embedding layer every head goes through: the word vectors,
with the character-level word encoder's vector of each word beside them when the run has one
(``embedding.char``), then ``embedding.dropout``. Heads call ``embed(ids)``; the characters of a
batch's text field are found by the field (``embed`` is given the batch's own ``ids`` tensor),
and any other ids (a generator's previous words) are spelled from the vocabulary.
"""
from __future__ import annotations

import inspect

import torch
from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf
from torch import nn

from rnnbench.data.vocab import CHARS_SUFFIX
from rnnbench.encoders.base import Encoder
from rnnbench.encoders.build import build_encoder
from rnnbench.config import embeddings_frozen
from rnnbench.errors import ConfigError
from rnnbench.heads.base import Head, HeadOutput
from rnnbench.nn.char_encoder import CharEncoder, char_output_size


class TaskModel(nn.Module):
    def __init__(self, embedding: nn.Embedding, encoder: Encoder, head: Head, embedding_dropout: float = 0.0,
                 char_encoder: CharEncoder | None = None, word_chars: torch.Tensor | None = None):
        super().__init__()
        self.embedding = embedding
        self.embedding_dropout = nn.Dropout(embedding_dropout)
        self.encoder = encoder
        self.head = head
        self.char_encoder = char_encoder  # None: no character features (no key in the state dict)
        if char_encoder is not None:
            if word_chars is None:
                raise ValueError("a character encoder needs each vocabulary word's character ids (word_chars)")
            # [V, L]: each vocabulary word spelled, for ids that are not a batch's text field. Rebuilt
            # from the vocabulary with the model, so not saved with the weights.
            self.register_buffer("word_chars", word_chars, persistent=False)
        self._batch_chars: list[tuple[torch.Tensor, torch.Tensor]] = []

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embedding(ids)
        if self.char_encoder is not None:
            x = torch.cat([x, self.char_encoder(self._chars_of(ids)).to(x.dtype)], dim=-1)
        return self.embedding_dropout(x)

    def _chars_of(self, ids: torch.Tensor) -> torch.Tensor:
        """[*ids.shape, L] character ids of ``ids``: the batch's own (cased, and known for words
        outside the vocabulary) when ``ids`` is one of the batch's text fields, else each word's
        spelling in the vocabulary."""
        for field_ids, chars in self._batch_chars:
            if field_ids is ids:
                T = ids.shape[-1]
                if chars.shape[-2] < T:  # the field padded after collation: padding has no characters
                    chars = torch.nn.functional.pad(chars, (0, 0, 0, T - chars.shape[-2]))
                return chars[..., :T, :]
        return self.word_chars[ids]

    def forward(self, batch: dict, regularisers: bool = True) -> tuple[HeadOutput, torch.Tensor]:
        """Head output and the total training loss: the task loss, plus the encoder's aux loss
        (its regulariser; left out with ``regularisers=False``), plus in training its policy
        loss (FHE's REINFORCE), a function of the head's combined encoder output and gold
        log-likelihood only (docs/architecture.md, "The training step")."""
        if self.char_encoder is None:
            out = self.head(batch, self.embed, self.encoder)
        else:
            self._batch_chars = [(batch[key[: -len(CHARS_SUFFIX)]], value) for key, value in batch.items()
                                 if key.endswith(CHARS_SUFFIX) and isinstance(batch.get(key[: -len(CHARS_SUFFIX)]), torch.Tensor)]
            try:
                out = self.head(batch, self.embed, self.encoder)
            finally:
                self._batch_chars = []
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


def _char_options(cfg: DictConfig) -> dict | None:
    """``embedding.char`` as a dict, or None when the run encodes no characters."""
    char = cfg.embedding.get("char")
    if char is None or str(char.get("kind", "none")) == "none":
        return None
    options = OmegaConf.to_container(char, resolve=True, enum_to_str=True)
    options.pop("max_word_length", None)  # the vocabulary's (data.vocab.CharVocab)
    return options


def embedding_width(cfg: DictConfig) -> int:
    """What ``TaskModel.embed`` gives each token: the word vector's width plus the character
    encoder's (``embedding.char``; 0 without one). Heads are built with this width."""
    char = _char_options(cfg)
    return int(cfg.embedding.dim) + (char_output_size(**char) if char else 0)


def _encoder_for_head(cfg: DictConfig, head_cls: type, head_opts: dict):
    """The encoder, reading what the head feeds it (the embeddings, or the head's features of them)."""
    try:
        return build_encoder(cfg.encoder, head_cls.encoder_input_size(embedding_width(cfg), **head_opts))
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
    embedding.weight.requires_grad = not embeddings_frozen(cfg)

    head_cls, head_opts = _head_class_and_options(cfg, data.vocab)
    encoder = _encoder_for_head(cfg, head_cls, head_opts)
    if head_cls.requires_causal_encoder and not encoder.causal:
        raise ConfigError(
            f"task {cfg.task.name!r} needs a causal encoder (each position may read only earlier ones), "
            f"but encoder {cfg.encoder.name!r} reads both directions; use a forward-only one "
            f"(for example lstm1, lstm2, fhe, or mzu_* with encoder.bidirectional=false)"
        )
    try:
        head = head_cls(embedding_width(cfg), encoder.output_size, num_classes, **head_opts)
    except TypeError as exc:
        raise ConfigError(f"task.head ({head_cls.__name__}): {exc}") from None
    char_encoder, word_chars = _char_encoder(cfg, data.vocab)
    return TaskModel(embedding, encoder, head, cfg.embedding.dropout, char_encoder, word_chars)


def _char_encoder(cfg: DictConfig, vocab) -> tuple[CharEncoder | None, torch.Tensor | None]:
    """The character encoder (built after the head and encoder, so their initial weights are drawn
    as without it) and every vocabulary word's character ids [V, L]."""
    options = _char_options(cfg)
    if options is None:
        return None, None
    chars = getattr(vocab, "chars", None)
    if chars is None:
        raise ConfigError(f"embedding.char.kind={options['kind']}: the vocabulary has no characters "
                          "(prepare the data with the same embedding.char settings)")
    spelled = [chars.encode_word(word) for word in vocab.itos]
    L = max([1] + [len(w) for w in spelled])
    word_chars = torch.tensor([list(w) + [0] * (L - len(w)) for w in spelled], dtype=torch.long)
    try:
        return CharEncoder(len(chars), **options), word_chars
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"embedding.char: {exc}") from None
