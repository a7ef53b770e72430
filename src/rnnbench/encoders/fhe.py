"""Focused Hierarchical Encoder (FHE, Ke et al., ICML 2018).

A lower LSTM reads every token; a stochastic boundary gate, conditioned on the
context (question), decides at each token whether the upper LSTM takes a step
(kernels.fhe_upper); elsewhere the upper state is copied. Heads attend over the
upper states at open gates only (EncoderOutput.mask).

    lower:  h_t = LSTM([x_t; c], h_{t-1})                 (eq. 1; c the context)
    gate:   z_t = [q * h_t; q; h_t],  q = W_q c + b_q
            p_t = sigmoid(w^T LeakyReLU(W z_t + b) + b')
            b_t ~ Bernoulli(min(p_t + epsilon, 1)) in training, b_t = 1[p_t > threshold] in eval
    upper:  LSTM over h_t, stepping only where b_t = 1

The paper's equations were lost in its text; these choices are ours (docs/architecture.md
says where each encoder's reconstruction is recorded):
- q is a learned projection of the context to the hidden size, because z_t
  multiplies q with h_t elementwise and the context (e.g. the picking head's
  32-dim question embedding) has its own size. ``context_size`` fixes that size at
  construction; ``context_size: 0`` makes the gate unconditional (z_t = h_t) and
  the context is then ignored. ``context_in_input: false`` drops c from the lower
  input (eq. 1), e.g. when the head already appends the question to every token.
- The upper LSTM reads the lower states h_t, so fully open gates give the paper's
  LSTM2 baseline (its footnote 1). Both LSTMs start their forget bias at
  ``forget_bias`` (1.0, as the lstm1/lstm2 baselines).
- Exploration: the gates are sampled from min(p_t + epsilon, 1) and REINFORCE uses
  that same distribution's log-probabilities.
- In eval, a sequence whose gates are all shut opens its last real token (in the
  upper layer too), so attention has one real summary state to look at.
- Sparsity penalty, two forms (``sparsity_penalty``):
  ``reward`` (the paper's, eq. 10; use it for rows that stand for the paper's model):
  ``lambda * max(0, mean_t b_t - gamma)`` per sequence, on the sampled gates b_t over its
  real tokens, subtracted from that sequence's REINFORCE reward. It reaches the gate
  through the policy gradient only. ``loss`` (ours, the default, kept so earlier runs stay
  valid): ``aux_loss = lambda * mean_batch max(0, mean_t p_t - gamma)``, a differentiable
  surrogate on the probabilities instead of the samples: the exact gradient instead of a
  REINFORCE estimate, and a reward that is the pure task log-likelihood; like the
  paper's penalty it only pushes gates shut once the openness exceeds gamma.
  The paper's lambda and gamma were lost with its equations (``sparsity_weight`` 0.1 and
  ``sparsity_target`` 0.1 are ours).
- Table 3's schedule (``penalty_from_dev_accuracy``, default null = the penalty applies
  from the start, the paper's "FHE-fixed"): the paper first lets the gates open almost
  freely, then enforces the penalty once a desired dev accuracy is reached (FHE80,
  FHE90, ...). Here the penalty is off (lambda = 0: the paper's "small value" was lost;
  ours) until ``on_dev_score`` sees a dev score >= the threshold, then on for the rest of
  training (``set_penalty_active``); lambda and gamma are then FHE-fixed's, so the schedule
  is the only difference between the two. ``on_dev_score`` returns True at the switch, so
  the loop chooses the best epoch among the penalised ones only. The switch is a buffer,
  saved with the weights, so a resumed run keeps it and the record's ``penalty_active``
  stat says whether the tested epoch was penalised.
- ``dropout`` (0.0; the paper states none): inverted dropout on each LSTM's input in
  training, the lower LSTM's ([x_t; c]) and the upper LSTM's (the lower states h_t; ours,
  as the LSTM family drops each stacked layer's input). The gate reads h_t undropped, so
  dropout changes what the layers read, not where the gates open. Not listed in fhe.yaml
  (a registered default of 0.0 for ``encoder.dropout`` would move the LSTM and MZU runs
  that list it): ``+encoder.dropout=0.2``.
- The gate is the policy: REINFORCE and the sparsity penalty train only its own
  parameters (the gate MLP and the context projection). Its inputs h_t and c are
  detached, so the lower LSTM and the head's question embedding learn from the
  task log-likelihood alone (the reconstruction's "task log-likelihood for everything
  but the gate"), undisturbed by the high-variance policy gradient. Picking
  task, hidden 64, one seed: dev accuracy 0.60 instead of 0.36 after one epoch,
  0.85 instead of 0.83 after four.
- REINFORCE (``policy_loss``, a function of the output): the forward returns the
  summed log-probability of the sampled gates (``EncoderOutput.policy_log_prob``, [B])
  and, in the ``reward`` form, the per-sequence penalty (``policy_penalty``). Reward =
  log-likelihood of the gold answer minus the penalty; baseline = a running mean of the
  reward (ours: the paper's baseline was lost with its equations; started at the first
  batch's mean, updated after use, in training only); loss = -((reward - baseline) *
  log_prob).mean(). A head that calls the encoder several times per example sums the
  calls' log-probabilities and averages their penalties (``encoders.base.combine_outputs``).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from rnnbench.encoders.base import Encoder, EncoderOutput, lengths_of, zero_padding
from rnnbench.encoders.lstm import set_forget_bias
from rnnbench.errors import ConfigError
from rnnbench.kernels.fhe_upper import fhe_upper

_TINY = 1e-6  # keeps the sampling probability off 0 and 1, so its log stays finite


class FHE(Encoder):
    """Focused hierarchical encoder; the module docstring lists equations and choices.

    output_size = hidden_size (the upper states).
    """

    has_regulariser = True  # the sparsity penalty in its ``loss`` form

    def __init__(
        self,
        input_size: int,
        hidden_size: int = 256,
        context_size: int = 0,
        context_in_input: bool = True,
        gate_hidden: int = 64,
        epsilon: float = 0.01,
        threshold: float = 0.5,
        sparsity_weight: float = 0.0,
        sparsity_target: float = 0.0,
        baseline_momentum: float = 0.9,
        forget_bias: float = 1.0,
        sparsity_penalty: str = "loss",
        penalty_from_dev_accuracy: float | None = None,
        dropout: float = 0.0,
    ):
        super().__init__(input_size, hidden_size)
        self.dropout = nn.Dropout(dropout)
        self.causal = True  # both LSTMs run forward; the gate reads h_t and the context only
        if context_size < 0:
            raise ValueError(f"encoder.context_size must be >= 0, got {context_size}")
        if not 0.0 <= baseline_momentum < 1.0:
            raise ValueError(f"encoder.baseline_momentum must be in [0, 1), got {baseline_momentum}")
        if sparsity_penalty not in ("reward", "loss"):
            raise ConfigError(
                f"encoder.sparsity_penalty must be 'reward' (the paper's: subtracted from the REINFORCE reward) "
                f"or 'loss' (a differentiable term on the gate probabilities), got {sparsity_penalty!r}"
            )
        if penalty_from_dev_accuracy is not None and not 0.0 <= penalty_from_dev_accuracy <= 1.0:
            raise ConfigError(
                f"encoder.penalty_from_dev_accuracy must be a dev accuracy in [0, 1] (or null: the penalty "
                f"from the start), got {penalty_from_dev_accuracy}"
            )
        self.sparsity_penalty = sparsity_penalty
        self.penalty_from_dev_accuracy = penalty_from_dev_accuracy
        self.context_size = context_size
        self.context_in_input = context_in_input and context_size > 0
        self.epsilon = epsilon
        self.threshold = threshold
        self.sparsity_weight = sparsity_weight
        self.sparsity_target = sparsity_target
        self.baseline_momentum = baseline_momentum

        lower_input = input_size + (context_size if self.context_in_input else 0)
        self.lower = nn.LSTM(lower_input, hidden_size, batch_first=True)
        self.context_proj = nn.Linear(context_size, hidden_size) if context_size > 0 else None
        gate_input = 3 * hidden_size if context_size > 0 else hidden_size
        self.gate = nn.Sequential(nn.Linear(gate_input, gate_hidden), nn.LeakyReLU(), nn.Linear(gate_hidden, 1))
        # Holds the upper weights in nn.LSTM's layout; kernels.fhe_upper runs them.
        self.upper = nn.LSTM(hidden_size, hidden_size, batch_first=True)
        for lstm in (self.lower, self.upper):
            set_forget_bias(lstm, forget_bias)

        self.register_buffer("baseline", torch.zeros(()))
        self.register_buffer("baseline_started", torch.zeros((), dtype=torch.bool))
        if penalty_from_dev_accuracy is not None:  # only then: other runs' state dicts keep their keys
            self.register_buffer("penalty_active", torch.zeros((), dtype=torch.bool))

    # -- the sparsity penalty's switch (Table 3's schedule) ---------------------------------
    def penalty_is_active(self) -> bool:
        return self.penalty_from_dev_accuracy is None or bool(self.penalty_active)

    def set_penalty_active(self, active: bool) -> None:
        """Switch the sparsity penalty on (or off); only with ``penalty_from_dev_accuracy`` set,
        since without it the penalty is always on."""
        if self.penalty_from_dev_accuracy is None:
            raise ConfigError("FHE.set_penalty_active needs encoder.penalty_from_dev_accuracy (without it the penalty is always on)")
        self.penalty_active.fill_(bool(active))

    def on_dev_score(self, score: float) -> bool:
        """Table 3's schedule: the penalty goes on, for good, at the first dev score >= the threshold
        (True then: the objective changed, the loop restarts its choice of the best epoch)."""
        if self.penalty_from_dev_accuracy is None or self.penalty_is_active() or score < self.penalty_from_dev_accuracy:
            return False
        self.set_penalty_active(True)
        return True

    def _check_context(self, context: torch.Tensor | None) -> None:
        if context is None:
            raise ValueError(
                f"FHE was built with context_size={self.context_size} but got no context; "
                "use a head that passes one, or set encoder.context_size=0 for unconditional gates"
            )
        if context.shape[-1] != self.context_size:
            raise ValueError(
                f"FHE was built with context_size={self.context_size} but got a context of size "
                f"{context.shape[-1]}; set encoder.context_size to the head's context size"
            )

    def _gate_input(self, h: torch.Tensor, context: torch.Tensor | None) -> torch.Tensor:
        """z_t from detached inputs: only the gate's own parameters learn from the policy losses."""
        h = h.detach()
        if self.context_proj is None:
            return h
        q = self.context_proj(context.detach()).unsqueeze(1).expand_as(h)
        return torch.cat([q * h, q, h], dim=-1)

    @staticmethod
    def _open_last_if_shut(b: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        lengths = lengths_of(mask)
        shut = ~b.any(dim=1) & (lengths > 0)
        last = F.one_hot((lengths - 1).clamp(min=0), b.shape[1]).bool()
        return b | (last & shut.unsqueeze(1))

    def forward(self, x, mask, context=None) -> EncoderOutput:
        mask = mask.bool()
        if self.context_size > 0:
            self._check_context(context)
        else:
            context = None
        lower_in = x
        if self.context_in_input:
            lower_in = torch.cat([x, context.unsqueeze(1).expand(-1, x.shape[1], -1).to(x.dtype)], dim=-1)
        # Forward in time only, so padding after a sequence's end never reaches its real tokens.
        h, _ = self.lower(self.dropout(lower_in))
        h = zero_padding(h, mask)
        p = torch.sigmoid(self.gate(self._gate_input(h, context)).squeeze(-1))

        log_prob = None
        if self.training:
            pi = (p + self.epsilon).clamp(_TINY, 1 - _TINY)
            b = torch.bernoulli(pi.detach()).bool() & mask
            log_pi = torch.where(b, pi.log(), torch.log1p(-pi))
            log_prob = torch.where(mask, log_pi, torch.zeros_like(log_pi)).sum(dim=1)
        else:
            b = self._open_last_if_shut((p > self.threshold) & mask, mask)

        states = fhe_upper(
            self.dropout(h), b, mask, self.upper.weight_ih_l0, self.upper.weight_hh_l0, self.upper.bias_ih_l0, self.upper.bias_hh_l0,
            impl=self.kernel_impl,
        )

        real = mask.to(p.dtype)
        tokens = real.sum().clamp(min=1.0)
        lengths = real.sum(dim=1).clamp(min=1.0)
        aux_loss, penalty = None, None
        if self.sparsity_weight > 0 and self.penalty_is_active():
            if self.sparsity_penalty == "loss":
                seq_openness = (p * real).sum(dim=1) / lengths
                aux_loss = self.sparsity_weight * F.relu(seq_openness - self.sparsity_target).mean()
            elif log_prob is not None:  # "reward": on the sampled gates, for REINFORCE (training only)
                penalty = sparsity_penalty(b, mask, self.sparsity_weight, self.sparsity_target).to(log_prob.dtype)
        stats = {
            "gate_openness": float(b.sum() / tokens),
            "gate_prob": float((p.detach() * real).sum() / tokens),
        }
        if self.penalty_from_dev_accuracy is not None:
            stats["penalty_active"] = float(self.penalty_is_active())
        return EncoderOutput(states=states, aux_loss=aux_loss, stats=stats, mask=b, policy_log_prob=log_prob, policy_penalty=penalty)

    def policy_loss(self, output: EncoderOutput, log_likelihood: torch.Tensor) -> torch.Tensor | None:
        """REINFORCE for the gates sampled in ``output`` (None for an eval output or in eval mode).

        reward = log_likelihood - output.policy_penalty (when given); the baseline is a running
        mean of the reward, started at the first batch's mean and updated after use."""
        log_prob = output.policy_log_prob
        if log_prob is None or not self.training:
            return None
        reward = log_likelihood.detach().to(log_prob.dtype)
        if output.policy_penalty is not None:
            reward = reward - output.policy_penalty.detach()
        if not bool(self.baseline_started):
            self.baseline.fill_(float(reward.mean()))
            self.baseline_started.fill_(True)
        loss = -((reward - self.baseline) * log_prob).mean()
        m = self.baseline_momentum
        self.baseline.mul_(m).add_((1 - m) * reward.mean())
        return loss


def sparsity_penalty(gates: torch.Tensor, mask: torch.Tensor, weight: float, target: float) -> torch.Tensor:
    """The paper's sparsity penalty per sequence (eq. 10): ``weight * max(0, mean_t b_t - target)``,
    the mean over each sequence's real tokens (gates and mask [B, T] bool; returns [B] float)."""
    real = mask.float()
    openness = (gates.float() * real).sum(dim=1) / real.sum(dim=1).clamp(min=1.0)
    return weight * F.relu(openness - target)
