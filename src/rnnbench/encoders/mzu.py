"""MZU: Multi-Zone Unit RNN (Meng et al., AAAI 2020), as a (bi)directional encoder.

Each step's gate and candidate come from multi-zone functions (zone generation,
composition, aggregation) and a deep transition chain. The modules below hold the
weights (``MZUTransition``: the first cell and the transition cells, each of two
``MFunction``s); the recurrence is the tensor-level op ``kernels.mzu_transition``, which
also holds the equations (its reference loop is the specification). The zone
disagreement regulariser (eq. 18-19) is returned as aux_loss.

Options (conf/encoder/mzu_sat.yaml, mzu_gcn.yaml, mzu_cap.yaml):
  hidden_size          200. State size per direction; output is 2*hidden_size when bidirectional.
  composition          sat (self-attention) | gcn (graph convolution) | cap (capsule routing).
  num_zones            4 (paper). Zones of size hidden_size / num_zones.
  transition_depth     1 (paper). Transition cells with zero input after the first cell, per step.
  num_capsules         2 (paper). Output capsules J of cap; ignored otherwise.
  routing_iterations   3 (paper). Dynamic-routing iterations of cap.
  dropout              0.0. Inverted dropout on the candidate activation h~ (eq. 2), where the paper
                       puts it ("we apply dropout to the candidate activation": 0.5 PTB, 0.3 text8;
                       ABSA: not stated), in the first cell and in every transition cell; a fresh
                       mask per step and cell (our choice, the paper does not say). Off in eval.
  disagreement_weight  1.0 (paper's lambda). The loss is -lambda * sum of D_zone = +lambda * the
                       mean zone cosine (self-pairs included, eq. 18), summed over M-functions,
                       cells, directions and real tokens: minimising it pushes zones apart.
                       0 returns no aux_loss.
  disagreement_normalizer
                       What the summed cosines are divided by before lambda weighs them (our
                       choice: eq. 19 adds lambda * sum_s sum_m D_zone to a language model's
                       likelihood and says no more). With C the sum of -D_zone over every
                       M-function evaluated at every real token of the call (K = 2 M-functions x
                       (transition_depth + 1) cells x scans of them per token: 8 for the paper's
                       bidirectional depth-1 model), n the call's real tokens and B its sequences:
                         token       (default, every run before the other values) lambda * C / n:
                                     per token, the K cosines summed; beside a per-token loss
                                     it has the ratio of eq. 19 in a language model.
                         token_mean  lambda * C / (n * K): per token, the mean of its K cosines
                                     (the ``zone_cosine`` statistic times lambda), so lambda weighs
                                     one cosine, whatever the depth and the directions.
                         sequence    lambda * C / B: eq. 19 literally per sentence (summed over
                                     its tokens and M-functions), averaged over the batch's
                                     sentences as the heads average their per-sentence
                                     cross-entropy (the training step adds aux_loss to the head's
                                     mean task loss: training/model.py). Long sentences weigh
                                     more; on TREC it outweighs the cross-entropy tens of times and
                                     stalls training for epochs.
  bidirectional        true: forward and backward scans concatenated (each sequence's backward
                       scan starts at its own last token); false: forward only, causal.
  ffn_size             null = hidden_size. Filter size of the zone FFN (our default; paper: 1000
                       at hidden 800 on PTB, 3072 at 1536 on text8).
  gcn_activation       relu (default) | sigmoid. The sigma of eq. 9 (our choice: the paper
                       follows Kipf and Welling, whose sigma is ReLU; its eq. 3 uses sigma for sigmoid).
  share_transition     false (default) | true: transition cells reuse the first cell's weights
                       (the paper on Penn Treebank).
  layer_norm           gate (default) | candidate. Where the layer norm sits (the paper says only
                       that it applies one): on M_g before the gate's sigmoid, or on M_h before
                       the candidate's tanh (the only placement before the option; see below).

Statistics (``EncoderOutput.stats``, averaged into each epoch's history and the record's
``test_stats``; a table reads them as ``stats:<name>`` columns):
  zone_cosine       C / (n * K): the mean of -D_zone over every M-function at every real token.
  candidate_cosine  how alike the candidate activations h~_t = tanh(M_h(x_t, h_{t-1})) (eq. 2,
                    the first cell's, before dropout) of one sequence's tokens are. For each
                    sequence with two or more real tokens, the mean of cos(h~_i, h~_j) over the
                    ordered pairs of its distinct real tokens i != j, averaged over the scans
                    (forward and backward); then the mean over those sequences of the call. 1 is
                    the same direction at every token, 0 orthogonal candidates. A call whose
                    sequences all have one token does not report it. The run's value is the mean
                    over a split's batches weighed by their examples (every statistic's rule), so
                    over the test split it is the mean over its sequences when each has two tokens
                    or more. Computed in eval calls while ``eval_statistics`` is on (the training
                    loop's dev passes and one untimed pass over the test split after the timed
                    one: training/loop.py), from the scan's states in one batched M_h evaluation
                    after the scan, without gradients or random numbers: it changes no output and
                    no recorded time.

Fixed by the paper or by necessity, not options: zone generation has no bias (eq. 4); GCN
degrees are sums of absolute edge weights, since cosines can be negative.

Our choice, not the paper's (it says only that it applies layer normalisation): layer norm on
M_g's output before the gate's sigmoid, where the first author's public code for DTMT, the
deep-transition RNN that MZU extends, puts it. Runs before the ``layer_norm`` option had it on
M_h before the tanh (``layer_norm: candidate``, which reproduces them): with capsule composition
that placement rescales a small, nearly input-independent M_h to unit variance and makes the
start chaotic, and capMZU failed the sanity gate's memorisation check (docs/encoders.md,
"capMZU, the layer norm's place and the memorisation check").

Initialisation (ours; the paper gives none): every weight matrix Glorot/Xavier uniform,
U(+-sqrt(6 / (fan_in + fan_out))), each zone's and each capsule's matrix with its own
fans (the common default of the paper's time); biases 0, layer norm (1, 0). Version 1
drew U(+-1/sqrt(fan_in)), a third of the variance per matrix; through the five matrices of
an M-function (zones, composition, FFN in and out, aggregation) its output varied across
tokens by 0.005 at init, and the gate sat at 0.500 +- 0.002. Measured on SemEval
restaurants (mzu_cap, hidden 200, GloVe 50d, first cell of the forward scan over 64 dev
sentences, Adam 3e-4, batch 32), version 1 -> 2: M_h's spread across tokens at init
0.005 -> 0.038 (sat, gcn: 0.005 -> 0.08); the gate's, at init 0.0012 -> 0.0094, after 100
steps 0.0023 -> 0.0085 (lambda 0) and 0.0019 -> 0.0117 (lambda 1). He/Kaiming uniform gave
the gate more (0.028) but the candidate less. What no draw changes: under lambda = 1 the
candidate becomes nearly the same vector at every token either way (mean cosine to the
token mean 0.955-0.994 after 100 steps), because the disagreement term is met most cheaply on
the state's part of the zones (W^h h more than doubles in 100 steps, W^x x stays) while the
state becomes nearly constant; with lambda = 0 that cosine stays at 0.91 (dt_gru: 0.88).
All numbers and how they were taken: docs/encoders.md, "MZU's initialisation";
tests/encoders/test_mzu_init.py checks input-dependence at init and after 50 Adam steps.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from rnnbench.encoders.base import Encoder, EncoderOutput, lengths_of, reverse_padded
from rnnbench.kernels.mzu_transition import (
    COMPOSITIONS,
    GCN_ACTIVATIONS,
    IMPLS,
    LAYER_NORMS,
    M_NAMES,
    CellWeights,
    MZUOptions,
    MZUOutput,
    candidate_dropout,
    m_function,
    mzu_transition,
)
from rnnbench.kernels.mzu_transition.reference import layer_norm as cell_layer_norm

NORMALIZERS = ("token", "token_mean", "sequence")  # token: every run before the others (module docstring)
__all__ = [
    "IMPLS", "MFunction", "MZU", "MZUCell", "MZUTransition", "candidate_cosine", "disagreement_loss",
    "mean_pairwise_cosine", "mzu_recurrence",
]


def _weight(*shape: int) -> nn.Parameter:
    """Glorot/Xavier uniform, U(+-sqrt(6 / (fan_in + fan_out))), for a matrix [fan_in, fan_out]
    or a stack of them on leading axes (zones, capsules), each stacked matrix with its own
    fans. Drawn from torch's global generator at construction, in the order the modules
    build their weights (see the module docstring for why not +-1/sqrt(fan_in))."""
    fan_in, fan_out = shape[-2], shape[-1]
    bound = math.sqrt(6.0 / (fan_in + fan_out))
    return nn.Parameter(torch.empty(*shape).uniform_(-bound, bound))


class MFunction(nn.Module):
    """One multi-zone transformation M(x, h): zone generation, composition, aggregation."""

    def __init__(self, input_size, hidden_size, num_zones, composition, ffn_size, num_capsules, routing_iterations, gcn_activation):
        super().__init__()
        self.input_size, self.num_zones = input_size, num_zones
        self.composition, self.routing_iterations, self.gcn_activation = composition, routing_iterations, gcn_activation
        d_z = hidden_size // num_zones
        outputs = num_capsules if composition == "cap" else num_zones
        d_o = hidden_size // outputs
        self.zone_weight = _weight(num_zones, input_size + hidden_size, d_z)
        if composition == "sat":
            self.query, self.key, self.value = (_weight(d_z, d_z) for _ in range(3))
        elif composition == "gcn":
            self.graph = _weight(d_z, d_z)
        else:
            self.capsule = _weight(num_capsules, d_z, d_o)
        self.ffn_in = _weight(d_o, ffn_size)
        self.ffn_in_bias = nn.Parameter(torch.zeros(ffn_size))
        self.ffn_out = _weight(ffn_size, d_o)
        self.ffn_out_bias = nn.Parameter(torch.zeros(d_o))
        self.aggregate = _weight(outputs * d_o, hidden_size)
        self.aggregate_bias = nn.Parameter(torch.zeros(hidden_size))

    def weights(self) -> dict[str, torch.Tensor]:
        """{name: tensor} as the op reads them (``M_NAMES``)."""
        return {name: getattr(self, name) for name in M_NAMES[self.composition]}


class MZUCell(nn.Module):
    """One MZU (or transition) cell: eqs. 1-3 with layer norm and dropout on the candidate."""

    def __init__(self, input_size, hidden_size, **m_options):
        super().__init__()
        self.input_size = input_size
        self.m_h = MFunction(input_size, hidden_size, **m_options)
        self.m_g = MFunction(input_size, hidden_size, **m_options)
        self.layer_norm = nn.LayerNorm(hidden_size)

    def weights(self) -> CellWeights:
        return CellWeights(self.m_h.weights(), self.m_g.weights(), self.layer_norm.weight, self.layer_norm.bias)


class MZUTransition(nn.Module):
    """The weights of one MZU scan: the first cell and ``transition_depth`` transition cells.

    ``share_transition``: the transition cells reuse the first cell's M-functions
    with a zero input (the paper does this on Penn Treebank); otherwise each has its own.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        composition: str = "sat",
        num_zones: int = 4,
        transition_depth: int = 1,
        ffn_size: int | None = None,
        num_capsules: int = 2,
        routing_iterations: int = 3,
        gcn_activation: str = "relu",
        share_transition: bool = False,
        dropout: float = 0.0,
        layer_norm: str = "gate",
    ):
        super().__init__()
        if layer_norm not in LAYER_NORMS:
            raise ValueError(f"MZU layer_norm must be one of {', '.join(LAYER_NORMS)}; got {layer_norm!r}")
        if composition not in COMPOSITIONS:
            raise ValueError(f"MZU composition must be one of {', '.join(COMPOSITIONS)}; got {composition!r}")
        if gcn_activation not in GCN_ACTIVATIONS:
            raise ValueError(f"MZU gcn_activation must be one of {', '.join(GCN_ACTIVATIONS)}; got {gcn_activation!r}")
        if hidden_size % num_zones:
            raise ValueError(f"MZU hidden_size ({hidden_size}) must be a multiple of num_zones ({num_zones})")
        if composition == "cap" and hidden_size % num_capsules:
            raise ValueError(f"MZU hidden_size ({hidden_size}) must be a multiple of num_capsules ({num_capsules})")
        if transition_depth < 0 or routing_iterations < 1 or not 0.0 <= dropout < 1.0:
            raise ValueError("MZU needs transition_depth >= 0, routing_iterations >= 1 and 0 <= dropout < 1")
        self.input_size, self.hidden_size, self.num_zones = input_size, hidden_size, num_zones
        self.dropout = dropout
        m_options = dict(
            num_zones=num_zones,
            composition=composition,
            ffn_size=ffn_size or hidden_size,
            num_capsules=num_capsules,
            routing_iterations=routing_iterations,
            gcn_activation=gcn_activation,
        )
        first = MZUCell(input_size, hidden_size, **m_options)
        self.cells = nn.ModuleList(
            [first] + [first if share_transition else MZUCell(0, hidden_size, **m_options) for _ in range(transition_depth)]
        )

        self.options = MZUOptions(composition, routing_iterations, gcn_activation, self.cells[0].layer_norm.eps, layer_norm)

    @property
    def m_functions_per_step(self) -> int:
        return 2 * len(self.cells)

    def weights(self) -> list[CellWeights]:
        """Each cell's weights for the op; a shared transition cell is the first's object."""
        own: dict[int, CellWeights] = {}
        for cell in self.cells:
            if id(cell) not in own:
                own[id(cell)] = cell.weights()
        return [own[id(cell)] for cell in self.cells]

    def candidate_dropout(self, x) -> torch.Tensor | None:
        """Inverted-dropout multipliers for every step and cell, [T, depth + 1, B, d_h]; None in eval."""
        p = self.dropout if self.training else 0.0
        return candidate_dropout(x, len(self.cells), self.hidden_size, p)


def mzu_recurrence(x, mask, transition: MZUTransition, impl: str | None = None) -> MZUOutput:
    """One forward-in-time scan of ``transition``'s weights (the kernel op on its tensors),
    with fresh candidate-dropout masks in training."""
    drop = transition.candidate_dropout(x)
    return mzu_transition(x, mask, transition.weights(), transition.options, drop, impl=impl)


def disagreement_loss(cosine: torch.Tensor, mask: torch.Tensor, per_token: int, weight: float, normalizer: str) -> torch.Tensor:
    """The weighted zone-disagreement term of one call (module docstring, ``disagreement_normalizer``).

    cosine: C, the sum of -D_zone over every M-function at every real token (a scalar); mask
    [B, T]; per_token: K, the M-functions evaluated per token. token: weight * C / n; token_mean:
    weight * C / (n * K); sequence: weight * C / B (n real tokens, B sequences)."""
    if normalizer not in NORMALIZERS:
        raise ValueError(f"encoder.disagreement_normalizer must be one of {', '.join(NORMALIZERS)}; got {normalizer!r}")
    tokens = mask.sum().clamp(min=1)
    if normalizer == "token":
        per = tokens
    elif normalizer == "token_mean":
        per = tokens * per_token
    else:
        per = mask.shape[0]
    return weight * cosine / per


def mean_pairwise_cosine(vectors: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per sequence, the mean cosine over the ordered pairs (i, j), i != j, of its real positions.

    vectors [B, T, d], mask [B, T] bool. Returns (mean cosine [B], defined [B]: the sequence has
    two real positions or more; 0 where not). With u_i the unit vectors and S their sum over the
    sequence, the sum over i != j of u_i . u_j is |S|^2 - sum_i |u_i|^2 (a zero vector counts as
    cosine 0 with every other)."""
    unit = F.normalize(vectors.float(), dim=-1) * mask.unsqueeze(-1)
    n = mask.sum(dim=1).to(unit.dtype)
    pairs = unit.sum(dim=1).pow(2).sum(dim=-1) - unit.pow(2).sum(dim=(1, 2))
    defined = n >= 2
    return torch.where(defined, pairs / (n * (n - 1)).clamp(min=1.0), torch.zeros_like(pairs)), defined


@torch.no_grad()
def candidate_cosine(x, mask, states, transition: MZUTransition) -> tuple[torch.Tensor, torch.Tensor]:
    """``mean_pairwise_cosine`` of one scan's candidate activations h~_t = tanh(M_h(x_t, h_{t-1}))
    (eq. 2: the first cell's, with the layer norm when it sits on M_h, without dropout).

    x [B, T, d_x] and states [B, T, d_h] in the scan's own order (the backward scan's reversed),
    states being the scan's output: h_{t-1} is the state before t (zero at t = 0; padding only
    follows a sequence's real positions, so a real position never reads it). All tokens in one
    batched M_h evaluation; no gradient, no random numbers."""
    cell = transition.weights()[0]
    dtype = cell.ln_weight.dtype
    B, T, H = states.shape
    h_prev = torch.cat([states.new_zeros(B, 1, H), states[:, :-1]], dim=1)
    m_h, _ = m_function(x.to(dtype).reshape(B * T, -1), h_prev.to(dtype).reshape(B * T, H), cell.m_h, transition.options)
    if transition.options.layer_norm == "candidate":
        m_h = cell_layer_norm(m_h, cell, transition.options)
    return mean_pairwise_cosine(torch.tanh(m_h).reshape(B, T, H), mask)



class MZU(Encoder):
    """Multi-zone unit encoder; see the module docstring for options."""

    # 2: weights drawn Glorot/Xavier uniform, no longer +-1/sqrt(fan_in) (module docstring,
    # "Initialisation"); runs of version 1 are never mixed with new ones.
    version = 2
    has_regulariser = True  # the zone disagreement term (eqs. 18-19)
    # True: eval calls add the ``candidate_cosine`` statistic (module docstring). The training loop
    # sets it for its dev passes and one untimed pass over the test split (training/loop.py,
    # ``eval_statistics``); off elsewhere, so no timed call pays for it. It changes no output: not an
    # option, not part of a run's identity.
    eval_statistics = False

    def __init__(
        self,
        input_size: int,
        hidden_size: int = 200,
        composition: str = "sat",
        num_zones: int = 4,
        transition_depth: int = 1,
        num_capsules: int = 2,
        routing_iterations: int = 3,
        dropout: float = 0.0,
        disagreement_weight: float = 1.0,
        disagreement_normalizer: str = "token",
        bidirectional: bool = True,
        ffn_size: int | None = None,
        gcn_activation: str = "relu",
        share_transition: bool = False,
        layer_norm: str = "gate",
    ):
        super().__init__(input_size, hidden_size * (2 if bidirectional else 1))
        if disagreement_normalizer not in NORMALIZERS:
            raise ValueError(
                f"encoder.disagreement_normalizer must be one of {', '.join(NORMALIZERS)}; got {disagreement_normalizer!r}"
            )
        self.causal = not bidirectional
        self.disagreement_weight = disagreement_weight
        self.disagreement_normalizer = disagreement_normalizer
        options = dict(
            composition=composition,
            num_zones=num_zones,
            transition_depth=transition_depth,
            ffn_size=ffn_size,
            num_capsules=num_capsules,
            routing_iterations=routing_iterations,
            gcn_activation=gcn_activation,
            share_transition=share_transition,
            dropout=dropout,
            layer_norm=layer_norm,
        )
        self.forward_scan = MZUTransition(input_size, hidden_size, **options)
        self.backward_scan = MZUTransition(input_size, hidden_size, **options) if bidirectional else None

    def forward(self, x, mask, context=None) -> EncoderOutput:
        collect = self.eval_statistics and not self.training
        fwd = mzu_recurrence(x, mask, self.forward_scan, self.kernel_impl)
        states, cosine = fwd.states, fwd.zone_cosine.sum()
        scans = 1
        if collect:
            candidate, defined = candidate_cosine(x, mask, fwd.states, self.forward_scan)
        if self.backward_scan is not None:
            lengths = lengths_of(mask)
            backward_x = reverse_padded(x, lengths)
            bwd = mzu_recurrence(backward_x, mask, self.backward_scan, self.kernel_impl)
            states = torch.cat([states, reverse_padded(bwd.states, lengths)], dim=-1)
            cosine, scans = cosine + bwd.zone_cosine.sum(), 2
            if collect:
                candidate = candidate + candidate_cosine(backward_x, mask, bwd.states, self.backward_scan)[0]
        tokens = mask.sum().clamp(min=1)
        per_token = scans * self.forward_scan.m_functions_per_step
        evaluations = tokens * per_token
        stats = {"zone_cosine": float(cosine.detach() / evaluations)}
        if collect and bool(defined.any()):
            stats["candidate_cosine"] = float(candidate[defined].mean() / scans)
        aux_loss = None
        if self.disagreement_weight != 0.0:
            aux_loss = disagreement_loss(cosine, mask, per_token, self.disagreement_weight, self.disagreement_normalizer)
        return EncoderOutput(states=states, aux_loss=aux_loss, stats=stats)
