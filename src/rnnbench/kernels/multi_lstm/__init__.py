"""Several LSTMs that read the same input, run as one op (RCRN's three BiLSTMs).

RCRN's two controllers and its listener base are three one-layer BiLSTMs over the
same x. Run one after the other (three packed nn.LSTM calls), they pay three input
projections and 6T small recurrent matrix multiplies, each step a chain of small
autograd ops. Here all D directional LSTMs share:

- the input projections of all steps at once: x is gathered once per reading
  direction (as is, and reversed within each length), and each direction's projection
  is one matrix multiply over all T*B (step, sequence) rows (one x @ [W_1; ...; W_D]
  is the same arithmetic but leaves its output interleaved, a copy away from the
  per-direction layout the steps read);
- one matrix multiply per step for all recurrent terms (a bmm over directions: the
  block-diagonal recurrent weight without its zero blocks);
- one pointwise cell update per step for all directions (gates, c, h in one pass);
- a hand-written backward: a reverse loop of one pointwise step and one bmm; the
  weight gradients are large matrix multiplies over chunks of steps (autograd would
  do small per-step weight-gradient products).

Padding: sequences are sorted by length and each backward direction reads its
sequence reversed within its own length, so at step t the real tokens are exactly
the first n_t rows. Only those rows are computed: padding is never read and the
state never passes over it. The same recurrence, with an optional lateral residual
added to h_t, is the fast path of ``residual_lstm`` (and, over the open positions, of ``fhe_upper``).

Implementations (names and fallback: ``rnnbench.kernels.dispatch``): ``reference``
(``reference.py``), the specification; the others run the recurrence of
``fused.py`` with the pointwise cell as torch operations (``torch``,
``fused.TorchCell``), compiled C (``cpu``: ``cpu.py``, ``cpu.c``) or Triton
kernels (``triton``: ``triton.py``). The C and Triton cells are imported only when
asked for, so this package needs nothing but torch.
"""
from __future__ import annotations

from rnnbench.kernels import dispatch
from rnnbench.kernels.multi_lstm.fused import TorchCell, recurrence
from rnnbench.kernels.multi_lstm.reference import reference

IMPLS = ("reference", "torch", "cpu", "triton")

__all__ = ["IMPLS", "cell_for", "multi_lstm", "recurrence", "reference", "TorchCell"]


def multi_lstm(x, mask, w_ih, w_hh, bias, bidirectional=True, impl: str | None = None):
    """Same arguments and result as ``reference``; ``impl``: see ``dispatch``."""
    dispatch.check_shapes(
        "multi_lstm", x=(x, "B T I"), mask=(mask, "B T"), w_ih=(w_ih, "D 4H I"), w_hh=(w_hh, "D 4H H"), bias=(bias, "D 4H")
    )
    impl = dispatch.resolve("multi_lstm", IMPLS, x, impl)
    if impl == "reference":
        return reference(x, mask, w_ih, w_hh, bias, bidirectional)
    return recurrence(x, mask, w_ih, w_hh, bias, bidirectional, cell=cell_for(impl))


def cell_for(impl: str):
    """The pointwise cell of a fast implementation ("torch", "cpu" or "triton"), as
    ``dispatch.resolve`` chose it."""
    if impl == "torch":
        return TorchCell
    if impl == "cpu":
        from rnnbench.kernels.multi_lstm.cpu import CCell

        return CCell
    if impl == "triton":
        from rnnbench.kernels.multi_lstm.triton import TritonCell

        return TritonCell
    raise dispatch.KernelError(f"multi_lstm: no LSTM cell for impl {impl!r} (known: torch, cpu, triton)")
