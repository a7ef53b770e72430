"""The encoder contract: every encoder maps embedded tokens to per-token states.

Heads only ever see this interface, so any head works with any encoder
(AllenNLP's Seq2SeqEncoder idea). ``docs/architecture.md`` ("The encoder contract")
describes it with the heads and the training step around it.

One call: ``encoder(x [B, T, input_size], mask [B, T] bool, context [B, C] | None)``
returns an ``EncoderOutput``. Everything an encoder has to say about the call is in
that output: nothing is kept on the encoder between a forward call and the loss built
from it, so any number of calls may be made (and thrown away) before a loss.

A head that calls the encoder several times per batch (a passage and a question, a
pair of sentences, a question and its candidate answers) combines the calls with
``combine_outputs``, the one rule every head uses; see its docstring.

The training step (``rnnbench.training.model.TaskModel``) adds to the head's task
loss the combined ``aux_loss`` and, in training, ``encoder.policy_loss(output,
log_likelihood)``: the learning signal of an encoder with discrete decisions (FHE's
gates, by REINFORCE), computed from the combined output and the head's per-example
log-likelihood of the gold answer.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn

from rnnbench.kernels.dispatch import Preferred


@dataclass
class EncoderOutput:
    """What every encoder returns: all it has to say about one call.

    states:          [B, T, output_size], exactly zero at padded positions.
    aux_loss:        an already-weighted, differentiable extra loss term, a scalar (MZU zone
                     disagreement, FHE's sparsity penalty in its ``loss`` form), or None.
    stats:           scalars for logging, e.g. FHE gate openness.
    mask:            optional [B, T] bool mask of the positions downstream attention may
                     look at (FHE exposes its open gates here); None means the input mask.
    policy_log_prob: [B] or None: the log-probability, summed over the call's real tokens,
                     of the discrete decisions the encoder sampled in training (FHE's
                     gates); None in eval and for encoders without decisions.
    policy_penalty:  [B] or None: a per-example cost of those decisions, subtracted from
                     the REINFORCE reward (FHE's sparsity penalty in its ``reward`` form).
    inputs:          [B, T, input_size] or None: the word vectors as the encoder's first
                     layer read them, after its input dropout (one mask). A head that also
                     reads the word vectors (embed average pooling) reads these, so both
                     paths see the same dropped-out vectors; None: the encoder reads its
                     input unchanged.
    """

    states: torch.Tensor
    aux_loss: torch.Tensor | None = None
    stats: dict[str, float] = field(default_factory=dict)
    mask: torch.Tensor | None = None
    policy_log_prob: torch.Tensor | None = None
    policy_penalty: torch.Tensor | None = None
    inputs: torch.Tensor | None = None


def combine_outputs(outputs: list[EncoderOutput], primary: int = 0) -> EncoderOutput:
    """One EncoderOutput for a head that called the encoder several times in one batch.

    The rule, the same in every head:
    - ``states``, ``mask`` and ``inputs`` are those of ``outputs[primary]`` (the call the head calls
      its main sequence: the passage; nothing downstream of the head reads them);
    - ``aux_loss`` is the mean of the calls' terms (over the calls that returned one).
      Each term is already an average over its call's tokens or sequences, so a
      regulariser weighs the same whether a head makes one call or five;
    - ``stats`` are averaged over the calls that report them (logging only);
    - ``policy_log_prob`` is summed per example: the calls' decisions together are one
      action of the policy, whose log-probability is the sum of theirs. Every call must
      then be aligned with the batch's examples (the same B, example i at row i);
    - ``policy_penalty`` is averaged per example over the calls that give one, like
      ``aux_loss`` (a penalty weighs the same whatever the number of calls).
    """
    if not outputs:
        raise ValueError("combine_outputs needs at least one EncoderOutput")
    aux = [o.aux_loss for o in outputs if o.aux_loss is not None]
    stats: dict[str, float] = {}
    counts: dict[str, int] = {}
    for o in outputs:
        for k, v in o.stats.items():
            stats[k] = stats.get(k, 0.0) + float(v)
            counts[k] = counts.get(k, 0) + 1
    log_probs = [o.policy_log_prob for o in outputs if o.policy_log_prob is not None]
    penalties = [o.policy_penalty for o in outputs if o.policy_penalty is not None]
    for name, values in (("policy_log_prob", log_probs), ("policy_penalty", penalties)):
        shapes = {tuple(v.shape) for v in values}
        if len(shapes) > 1:
            raise ValueError(
                f"combine_outputs: {name} of shapes {sorted(shapes)}; every call of a head must be aligned "
                "with the batch's examples (one row per example) for its decisions to be combined"
            )
    first = outputs[primary]
    return EncoderOutput(
        states=first.states,
        aux_loss=torch.stack(aux).mean() if aux else None,
        stats={k: v / counts[k] for k, v in stats.items()},
        mask=first.mask,
        inputs=first.inputs,
        policy_log_prob=torch.stack(log_probs).sum(0) if log_probs else None,
        policy_penalty=torch.stack(penalties).mean(0) if penalties else None,
    )


class Encoder(nn.Module):
    """Base class of all encoders.

    Subclasses set ``input_size`` and ``output_size`` and implement ``forward``.
    ``causal`` is True when position t's state depends only on positions <= t
    (needed by language models).
    """

    causal: bool = False
    # Whether the encoder can return an ``aux_loss`` (a regulariser: MZU's zone disagreement,
    # FHE's differentiable sparsity penalty); the sanity check's memorisation leaves it out.
    has_regulariser: bool = False
    # Bump when a change alters what this encoder computes (part of the run identity:
    # finished runs of the old version are then re-run, never mixed with new ones).
    version: int = 1
    # The implementation every kernel op of this encoder runs (``impl=`` of rnnbench.kernels);
    # None: the process-wide default. Set by ``use_kernels``: not an option, not in the state dict.
    kernel_impl: str | None = None

    def __init__(self, input_size: int, output_size: int):
        super().__init__()
        self.input_size = input_size
        self.output_size = output_size

    def use_kernels(self, name: str) -> None:
        """Run the kernel implementation ``name`` (a ``trainer.kernel_impl`` value) in this encoder
        and in the encoders it holds (DCU-LSTM's DCU), falling back as ``kernels.dispatch`` says."""
        preferred = Preferred(str(name))
        for module in self.modules():
            if isinstance(module, Encoder):
                module.kernel_impl = preferred

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor, context: torch.Tensor | None = None
    ) -> EncoderOutput:  # pragma: no cover - abstract
        raise NotImplementedError

    def policy_loss(self, output: EncoderOutput, log_likelihood: torch.Tensor) -> torch.Tensor | None:
        """The learning signal of the encoder's discrete decisions, from one (combined) output.

        Called by the task model in training with the output the head returned (all the
        encoder calls of the batch, combined by ``combine_outputs``) and the head's
        per-example log-likelihood of the correct answer ([B], detached). A function of
        its arguments and of the encoder's own training statistics (FHE's reward
        baseline, a buffer saved with the weights), never of earlier forward calls.
        Encoders without discrete decisions return None.
        """
        return None

    def on_dev_score(self, score: float) -> bool:
        """Hook the training loop calls after each dev evaluation with the selection metric's
        value. Returns True when the encoder changed its training objective at this call, so
        that the loop selects its best epoch only among the epochs trained under the new one.
        Does nothing by default (returns False); FHE's Table 3 schedule
        (``penalty_from_dev_accuracy``) switches its sparsity penalty on here."""
        return False

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad)


def lengths_of(mask: torch.Tensor) -> torch.Tensor:
    """Per-sequence lengths of a [B, T] boolean mask (padding at the end)."""
    return mask.long().sum(dim=1)


def reverse_padded(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Reverse each sequence of x [B, T, ...] within its own length.

    Padded positions stay in place, so running a forward recurrence over the
    result and reversing back gives a backward pass that starts at each
    sequence's own last token (what padding invariance needs).
    """
    B, T = x.shape[:2]
    t = torch.arange(T, device=x.device).unsqueeze(0).expand(B, T)
    lengths = lengths.to(x.device).unsqueeze(1)
    idx = torch.where(t < lengths, lengths - 1 - t, t)
    idx = idx.view(B, T, *([1] * (x.dim() - 2))).expand_as(x)
    return x.gather(1, idx)


def zero_padding(states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Zero the padded positions of [B, T, D] states."""
    return states * mask.unsqueeze(-1).to(states.dtype)
