"""The fast LSTM recurrence shared by ``multi_lstm``, ``residual_lstm`` and ``fhe_upper``:
input projections of all steps at once, per step one batched recurrent matrix multiply and
one pointwise cell, a hand-written backward (see ``multi_lstm``'s docstring).

The cell is pluggable: ``TorchCell`` (torch operations, below: the "torch"
implementation), ``cpu.CCell`` (compiled C) or ``triton.TritonCell``.
"""
from __future__ import annotations

import torch


def recurrence(x, mask, w_ih, w_hh, bias, bidirectional, cell, residual=None):
    """The fast recurrence; ``residual`` [B, T, D, H] is added to each h_t (Res-V2).

    Runs in float64 for float64 input, else in float32 (the state's precision), and
    returns in x's dtype.
    """
    dtype = x.dtype
    compute = torch.float64 if dtype == torch.float64 else torch.float32
    x, w_ih, w_hh, bias = (t.to(compute) for t in (x, w_ih, w_hh, bias))
    residual = None if residual is None else residual.to(compute)
    layout = _Layout(mask, x.shape[1], 2 if bidirectional else 1)
    return _Recurrence.apply(x, w_ih, w_hh, bias, residual, layout, cell).to(dtype)


class _Layout:
    """Where each (sequence, step) sits in the sorted, time-major buffers of the recurrence.

    Sorted row s is sequence order[s]; ``time[g][t, s]`` is the original position read
    at step t by reading direction g (0: forward, 1: reversed within the length; the
    reversal is its own inverse and keeps padding in place). Direction d reads with
    g = d % groups. ``active[t]`` is n_t, the rows with a real token at step t.
    """

    def __init__(self, mask: torch.Tensor, T: int, groups: int):
        lengths = mask.long().sum(dim=1)
        lengths, self.order = lengths.sort(descending=True, stable=True)
        self.lengths = lengths  # of the sorted rows
        self.position = torch.empty_like(self.order)
        self.position[self.order] = torch.arange(len(self.order), device=self.order.device)
        counts = torch.bincount(lengths, minlength=T + 1)[: T + 1].cpu()
        self.active = (counts.sum() - counts.cumsum(0))[:T].tolist()
        t = torch.arange(T, device=mask.device).unsqueeze(1)
        self.valid = t < lengths  # [T, B]: step t of sorted row s is a real token
        self.time = torch.stack([t.expand(T, len(lengths))] + ([torch.where(self.valid, lengths - 1 - t, t)] if groups == 2 else []))
        self.groups = groups

    def gather_x(self, x: torch.Tensor) -> list[torch.Tensor]:
        """x [B, T, I] -> per reading direction [T, B, I] in sorted, step order, padding zeroed
        (so not even the weight gradients read it)."""
        B, T, I = x.shape
        rows = x.reshape(B * T, I)
        return [
            rows.index_select(0, (self.order * T + time).view(-1)).view(T, B, I).masked_fill_(~self.valid.unsqueeze(-1), 0)
            for time in self.time
        ]

    def scatter_x(self, xs: list[torch.Tensor]) -> torch.Tensor:
        """Inverse of gather_x, summed over the reading directions: -> [B, T, I]."""
        T, B, I = xs[0].shape
        index = (self.time[:, :, self.position] * B + self.position).transpose(1, 2).reshape(len(xs), -1)
        return sum(x_g.view(T * B, I).index_select(0, i) for x_g, i in zip(xs, index)).view(B, T, I)

    def to_internal(self, y: torch.Tensor) -> torch.Tensor:
        """y [B, T, D, H] -> [D, T, B, H], each direction in its own reading order."""
        B, T, D, H = y.shape
        d = torch.arange(D, device=y.device)
        index = (self.order * T + self.time[d % self.groups]) * D + d.view(D, 1, 1)
        return y.reshape(B * T * D, H).index_select(0, index.view(-1)).view(D, T, B, H)

    def to_external(self, y: torch.Tensor) -> torch.Tensor:
        """Inverse of to_internal: [D, T, B, H] -> [B, T, D, H]."""
        D, T, B, H = y.shape
        d = torch.arange(D, device=y.device)
        time = self.time[d % self.groups][:, :, self.position].permute(2, 1, 0)  # [B, T, D]
        index = (d * T + time) * B + self.position.view(B, 1, 1)
        return y.reshape(D * T * B, H).index_select(0, index.reshape(-1)).view(B, T, D, H)


def persistent_applies(cell, x) -> bool:
    """Whether the step loops run as one launch each (``persistent``: Triton's cell on float32, when enabled).
    Imports Triton only when the cell is Triton's."""
    if not getattr(cell, "has_persistent_loops", False):
        return False
    from rnnbench.kernels.multi_lstm import persistent

    return persistent.applies(x)


_CHUNK_ROWS = 512  # (step, sequence) rows per weight-gradient matrix multiply in the backward


class _Recurrence(torch.autograd.Function):
    """Input projection, step loop and output layout in one autograd node (see the module docstring).

    Internal buffers are [D, T, B, ...]: direction, step, sorted row, each direction in
    its reading order.
    """

    @staticmethod
    def forward(ctx, x, w_ih, w_hh, bias, residual, layout, cell):
        B, T, I = x.shape
        D, H4, H = w_hh.shape
        xs = layout.gather_x(x)
        acts = x.new_empty(D, T, B, H4)
        for d in range(D):
            torch.mm(xs[d % layout.groups].view(T * B, I), w_ih[d].t(), out=acts[d].view(T * B, H4))
        r = None if residual is None else layout.to_internal(residual)
        c, tanh_c, h = x.new_empty(D, T, B, H), x.new_empty(D, T, B, H), x.new_empty(D, T, B, H)
        whole = persistent_applies(cell, x)
        if whole:  # the step loop in one launch (persistent.py)
            from rnnbench.kernels.multi_lstm import persistent

            persistent.forward(acts, w_hh, bias, layout.lengths, c, tanh_c, h, r)
        rec = x.new_empty(0 if whole else D * B * H4)
        w_hh_t = w_hh.transpose(1, 2).contiguous()  # a transposed view would be copied by every step's bmm
        bias = bias.unsqueeze(1)
        for t, n in enumerate([] if whole else layout.active):
            h[:, t, n:] = 0  # padding
            if n == 0:
                continue
            # the bias goes with the step's recurrent term (on the big projection it would cost a pass)
            if t == 0:
                step_rec = bias.expand(D, n, H4)
            else:
                step_rec = torch.baddbmm(bias, h[:, t - 1, :n], w_hh_t, out=rec[: D * n * H4].view(D, n, H4))
            cell.forward(acts[:, t, :n], step_rec, None if t == 0 else c[:, t - 1, :n], c[:, t, :n], tanh_c[:, t, :n],
                         h[:, t, :n], None if r is None else r[:, t, :n])
        ctx.save_for_backward(w_ih, w_hh, acts, c, tanh_c, h)
        ctx.layout, ctx.cell, ctx.has_residual, ctx.whole = layout, cell, residual is not None, whole
        ctx.xs = xs if ctx.needs_input_grad[1] else None  # the inputs as the projection read them
        return layout.to_external(h)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_out):
        w_ih, w_hh, acts, c, tanh_c, h = ctx.saved_tensors
        layout, cell, xs = ctx.layout, ctx.cell, ctx.xs
        D, T, B, H4 = acts.shape
        H, I, G = H4 // 4, w_ih.shape[-1], layout.groups
        need_x, need_w_ih, need_w_hh, need_bias, need_r = ctx.needs_input_grad[:5]
        dh_out = layout.to_internal(grad_out)
        dr = torch.zeros_like(dh_out) if ctx.has_residual and need_r else None
        dxs = [acts.new_empty(T, B, I) for _ in range(G)] if need_x else None
        d_w_ih = acts.new_empty(D, H4, I) if need_w_ih else None
        d_w_hh = (acts.new_zeros if T == 1 else acts.new_empty)(D, H4, H) if need_w_hh else None
        d_bias = acts.new_zeros(D, H4) if need_bias else None
        # Gate gradients of STEPS consecutive steps at a time, then their share of the
        # weight and input gradients: large matrix multiplies on a buffer still in cache
        # (the first share of each gradient overwrites, beta = 0: no zero-filling).
        if ctx.whole:  # every step's gate gradients in one launch, then the weight gradients at once
            from rnnbench.kernels.multi_lstm import persistent

            steps, da = T, persistent.backward(acts, w_hh, layout.lengths, c, tanh_c, dh_out, dr)
        else:
            steps = min(T, max(1, _CHUNK_ROWS // B))
            da = acts.new_empty(D, steps, B, H4)
        dc = acts.new_zeros(D, B, H)
        dh_rec = None
        for t0 in reversed(range(0, T, steps)):
            t1 = min(t0 + steps, T)
            beta = int(t1 < T)
            for t in [] if ctx.whole else range(t1 - 1, t0 - 1, -1):
                n, j = layout.active[t], t - t0
                da[:, j, n:] = 0  # padding: no gradient
                if n:
                    cell.backward(acts[:, t, :n], da[:, j, :n], None if t == 0 else c[:, t - 1, :n], tanh_c[:, t, :n],
                                  dh_out[:, t, :n], dh_rec, dc[:, :n], None if dr is None else dr[:, t, :n])
                dh_rec = torch.bmm(da[:, j, :n], w_hh) if n and t > 0 else None
            rows = da[:, : t1 - t0].reshape(D, -1, H4)
            for d in range(D):
                if need_w_ih:
                    d_w_ih[d].addmm_(rows[d].t(), xs[d % G][t0:t1].view(-1, I), beta=beta)
                if need_x:
                    dxs[d % G][t0:t1].view(-1, I).addmm_(rows[d], w_ih[d], beta=int(d >= G))
            if need_w_hh and t1 > 1:
                s0 = max(t0, 1)  # h_{-1} = 0
                prev = h[:, s0 - 1 : t1 - 1].reshape(D, -1, H)
                d_w_hh.baddbmm_(da[:, s0 - t0 : t1 - t0].reshape(D, -1, H4).transpose(1, 2), prev, beta=beta)
            if need_bias:
                d_bias += rows.sum(1)
        d_x = layout.scatter_x(dxs) if need_x else None
        d_r = None if dr is None else layout.to_external(dr)
        return d_x, d_w_ih, d_w_hh, d_bias, d_r, None, None


class TorchCell:
    """The pointwise LSTM cell as torch operations, in place on the step's buffers: the
    "torch" implementation, any device (``cpu.CCell`` and ``triton.TritonCell`` do the
    same in one pass)."""

    @staticmethod
    def forward(a, rec, c_prev, c, tanh_c, h, r):
        """a [D, n, 4H]: input pre-activations, plus rec (the recurrent term and the bias),
        replaced by the gate activations; writes c, tanh(c) and h (+ r, the residual).
        c_prev is None at t = 0."""
        H = c.shape[-1]
        a.add_(rec)
        a[..., : 2 * H].sigmoid_()
        a[..., 2 * H : 3 * H].tanh_()
        a[..., 3 * H :].sigmoid_()
        i, f, g, o = a.split(H, dim=-1)
        torch.mul(i, g, out=c)
        if c_prev is not None:
            c.addcmul_(f, c_prev)
        torch.tanh(c, out=tanh_c)
        torch.mul(o, tanh_c, out=h)
        if r is not None:
            h.add_(r)

    @staticmethod
    def backward(a, da, c_prev, tanh_c, dh_out, dh_rec, dc, dr):
        """a: gate activations; da gets the pre-activation gradients. dL/dh_t is dh_out plus
        dh_rec (from step t+1, on its first rows: n_{t+1} <= n_t); dr (if given) gets it.
        dc: dL/dc_t from step t+1, replaced by dL/dc_{t-1}."""
        H = dh_out.shape[-1]
        dh = dh_out.clone()
        if dh_rec is not None:
            dh[:, : dh_rec.shape[1]] += dh_rec
        if dr is not None:
            dr.copy_(dh)
        i, f, g, o = a.split(H, dim=-1)
        dc.addcmul_(dh * o, 1 - tanh_c * tanh_c)
        d_act = a - a * a  # s(1-s) for the sigmoid gates ...
        torch.mul(g, g, out=d_act[..., 2 * H : 3 * H]).neg_().add_(1)  # ... 1 - g^2 for the tanh one
        torch.mul(dc, g, out=da[..., :H])
        if c_prev is None:
            da[..., H : 2 * H] = 0
        else:
            torch.mul(dc, c_prev, out=da[..., H : 2 * H])
        torch.mul(dc, i, out=da[..., 2 * H : 3 * H])
        torch.mul(dh, tanh_c, out=da[..., 3 * H :])
        dc.mul_(f)
        da.mul_(d_act)
