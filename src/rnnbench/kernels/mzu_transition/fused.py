"""The MZU scan as one autograd node with a hand-written backward: ``mzu_transition``'s
"torch" implementation (``TorchOps``, below) and, with its small pieces compiled in C
(``cpu.COps``), its "cpu" implementation.

Why: the per-step work of an MZU cell is a dozen small matrix multiplies and three
dozen small pointwise ops. Under autograd each of them also records a node, and
the backward replays them one by one with its own small ops (views, expands,
zero-filled slice gradients); the ``hoisted`` loop, which leaves the per-step
graph to autograd, was only 1.2x the reference. Here:

- the forward runs the loop with no graph, keeping only what the backward reads
  (each cell's input state, zones, composition internals, FFN activations, layer
  norm statistics, candidate and gate);
- M_h and M_g are batched on a leading axis F = 2 in every op, and the zones of
  all N zones of a cell in one matrix;
- the backward is the loop's adjoint, written out: per step and cell, four matrix
  multiplies back through aggregation, FFN and zone generation, the composition's
  own backward (self-attention, graph convolution or dynamic routing, below) and a
  few pointwise ops;
- the x-part of zone generation is one matrix multiply over all steps forward
  (as ``hoisted``), and its weight and input gradients one each after the loop.
  The weight gradients of the per-step matrices are accumulated per step with
  in-place ``baddbmm_`` (gathering all steps for one large product each would copy
  every saved activation once more, to save about 5% of the step at these sizes);
- the small pieces between the matrix multiplies (zone norms and cosine, the N x N
  attention, layer norm, candidate, gate and state update, forward and backward) are
  one call each: compiled C on the CPU (``cpu.COps``, "cpu"), torch operations
  (``TorchOps``, below, "torch") on other devices or without a C compiler. As torch operations
  they were about half of the step on this project's CPU: a dozen op dispatches each,
  and ``bmm`` over 4 x 4 attention matrices costs one BLAS call per sequence.
  Composition internals of gcn and cap stay torch operations (measured on sat, the
  configuration of the benchmark).

Numbers follow the reference's equations with float32 state for float32 and
bfloat16 inputs (float64 for float64, so gradcheck can test the backward).

Not bit-identical to the reference: the state update is ``lerp`` (s + g (c - s)),
the zone cosine is ||sum_i u_i||^2 / N^2 (as ``hoisted``), and sums are ordered
differently (tests: equal to the reference to float64 rounding; in float32 as close
to the float64 result as the float32 reference is). F.normalize's clamp of a zone's
norm at 1e-12 is kept forward; the backward is that of z / |z| with the clamped norm,
which differs from autograd's only for a zone of norm below 1e-12.
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import torch
from torch.autograd.function import once_differentiable

from rnnbench.kernels.mzu_transition.reference import M_NAMES, hidden_size, input_size

_NORM_EPS = 1e-12  # F.normalize's
_SQUASH_EPS = 1e-9  # reference.squash's

def _stack(cell, options, dtype) -> SimpleNamespace:
    """One cell's weights for the loop, M_h and M_g stacked on a leading axis F = 2.

    zone_x [d_in, F*N*d_z], zone_h [d_h, F*N*d_z] (columns ordered f, n, d); sat: qkv
    [F, d_z, 3 d_z]; gcn: graph [F, d_z, d_z]; cap: capsule [F, d_z, J*d_o] (columns j, e);
    w1 [F, d_o, ffn], b1 [F, 1, ffn], w2 [F, ffn, d_o], b2 [F, 1, d_o], wa [F, J*d_o, d_h],
    ba [F, 1, d_h]; gamma, beta [d_h] (layer norm), ln_row (the M-function it normalises: 1 M_g, 0 M_h).
    """
    m_h, m_g = cell.m_h, cell.m_g
    d_in = input_size(cell)

    def both(name):
        return torch.stack([m_h[name], m_g[name]]).detach().to(dtype)

    zones = both("zone_weight")  # [F, N, d_in + d_h, d_z]
    F, N, _, d_z = zones.shape
    zones = zones.permute(2, 0, 1, 3).reshape(-1, F * N * d_z)
    p = SimpleNamespace(
        composition=options.composition, iterations=options.routing_iterations, activation=options.gcn_activation,
        F=F, N=N, d_z=d_z, d_in=d_in,
        zone_x=zones[:d_in].contiguous(), zone_h=zones[d_in:].contiguous(),
        w1=both("ffn_in"), b1=both("ffn_in_bias").unsqueeze(1), w2=both("ffn_out"), b2=both("ffn_out_bias").unsqueeze(1),
        wa=both("aggregate"), ba=both("aggregate_bias").unsqueeze(1),
        gamma=cell.ln_weight.detach().to(dtype), beta=cell.ln_bias.detach().to(dtype),
        ln_eps=options.layer_norm_eps, ln_row=options.ln_row,
    )
    p.d_o, p.H = p.w1.shape[1], p.wa.shape[2]
    p.J = p.wa.shape[1] // p.d_o
    if p.composition == "sat":
        p.qkv = torch.cat([both("query"), both("key"), both("value")], dim=-1)
    elif p.composition == "gcn":
        p.graph = both("graph")
    else:
        p.capsule = both("capsule").permute(0, 2, 1, 3).reshape(F, d_z, -1)
    # transposed copies for the backward's products (a transposed view runs slower in bmm)
    for name in ("zone_h", "w1", "w2", "wa", "qkv", "graph", "capsule"):
        if hasattr(p, name):
            setattr(p, f"{name}_t", getattr(p, name).transpose(-1, -2).contiguous())
    return p


def _zero_grads(p: SimpleNamespace) -> SimpleNamespace:
    names = ["zone_x", "zone_h", "w1", "b1", "w2", "b2", "wa", "ba", "gamma", "beta"]
    names.append({"sat": "qkv", "gcn": "graph", "cap": "capsule"}[p.composition])
    return SimpleNamespace(**{name: torch.zeros_like(getattr(p, name)) for name in names})


# ---------------------------------------------------------------- compositions, forward and backward
# forward(z [F, B, N, d_z], u (unit zones), p) -> (o [F, B*J, d_o], saved);
# backward(do, z, u, saved, p, grads) -> (dz, du or None), adding to the weight gradients.


def _sat_forward(z, u, p, ops):
    F, B, N, d = z.shape
    qkv = torch.bmm(z.view(F, B * N, d), p.qkv)
    o, a = ops.attention(qkv, N, d, 1 / math.sqrt(d))
    return o.view(F, B * N, d), (qkv, a)


def _sat_backward(do, z, u, saved, p, grads, ops):
    qkv, a = saved
    F, B, N, d = z.shape
    dqkv = ops.attention_backward(do, qkv, a, 1 / math.sqrt(d))
    grads.qkv.baddbmm_(z.view(F, B * N, d).transpose(1, 2), dqkv)
    return torch.bmm(dqkv, p.qkv_t).view(F, B, N, d), None


def _gcn_forward(z, u, p, ops):
    F, B, N, d = z.shape
    zz, uu = z.view(F * B, N, d), u.view(F * B, N, d)
    adjacency = torch.bmm(uu, uu.transpose(1, 2))
    adjacency.diagonal(dim1=-2, dim2=-1).add_(1)
    deg = adjacency.abs().sum(dim=-1).rsqrt_()  # D^-1/2, [F*B, N]
    normalised = adjacency * deg.unsqueeze(-1) * deg.unsqueeze(-2)
    mixed = torch.bmm(normalised, zz).view(F, B * N, d)
    y = torch.bmm(mixed, p.graph)
    y = torch.relu_(y) if p.activation == "relu" else torch.sigmoid_(y)
    return y, (adjacency, deg, normalised, mixed, y)


def _gcn_backward(dy, z, u, saved, p, grads, ops):
    adjacency, deg, normalised, mixed, y = saved
    F, B, N, d = z.shape
    dy = torch.ops.aten.threshold_backward(dy, y, 0) if p.activation == "relu" else dy * y * (1 - y)
    grads.graph.baddbmm_(mixed.transpose(1, 2), dy)
    dmixed = torch.bmm(dy, p.graph_t).view(F * B, N, d)
    zz, uu = z.view(F * B, N, d), u.view(F * B, N, d)
    dz = torch.bmm(normalised.transpose(1, 2), dmixed)
    dnorm = torch.bmm(dmixed, zz.transpose(1, 2))  # [F*B, N, N]
    # normalised_ij = s_i A_ij s_j with s = deg^-1/2 = (sum_j |A_ij|)^-1/2
    t = dnorm * normalised
    ds = (t.sum(dim=-1) + t.sum(dim=-2)) / deg
    dsum = ds * deg.pow(3) * -0.5
    dadj = dnorm * deg.unsqueeze(-1) * deg.unsqueeze(-2) + dsum.unsqueeze(-1) * adjacency.sign()
    du = torch.bmm(dadj + dadj.transpose(1, 2), uu)  # A = U U^T + I
    return dz.view(F, B, N, d), du.view(F, B, N, d)


def _cap_forward(z, u, p, ops):
    F, B, N, d = z.shape
    J, d_o = p.J, p.d_o
    # z^_{j|i} as [F, B, J, N, d_o]
    predictions = torch.bmm(z.view(F, B * N, d), p.capsule).view(F, B, N, J, d_o).transpose(2, 3).contiguous()
    logits = torch.zeros(F, B, J, N, dtype=z.dtype, device=z.device)
    saved = []
    for it in range(p.iterations):
        c = torch.softmax(logits, dim=2)
        s = (c.unsqueeze(-1) * predictions).sum(dim=-2)  # [F, B, J, d_o]
        sq = s.pow(2).sum(dim=-1, keepdim=True)
        r = sq / ((1 + sq) * torch.sqrt(sq + _SQUASH_EPS))
        o = s * r
        saved.append((c, s, sq, r, o))
        if it < p.iterations - 1:
            logits = logits + (predictions * o.unsqueeze(-2)).sum(dim=-1)
    return o.view(F, B * J, d_o), (predictions, saved)


def _cap_backward(do, z, u, saved, p, grads, ops):
    predictions, iterations = saved
    F, B, N, d = z.shape
    g_out = do.view(F, B, p.J, p.d_o)
    dpred = torch.zeros_like(predictions)
    dlogits = None  # dL/d(logits of the next iteration), then of this one
    for it in reversed(range(p.iterations)):
        c, s, sq, r, o = iterations[it]
        g_o = g_out if it == p.iterations - 1 else (dlogits.unsqueeze(-1) * predictions).sum(dim=-2)
        if dlogits is not None:
            dpred += dlogits.unsqueeze(-1) * o.unsqueeze(-2)
        # squash: o = r(|s|^2) s
        root = torch.sqrt(sq + _SQUASH_EPS)
        dr = 1 / ((1 + sq) * root) - r / (1 + sq) - r / (2 * (sq + _SQUASH_EPS))
        ds = r * g_o + s * ((s * g_o).sum(dim=-1, keepdim=True) * dr * 2)
        dc = (ds.unsqueeze(-2) * predictions).sum(dim=-1)  # [F, B, J, N]
        dpred += c.unsqueeze(-1) * ds.unsqueeze(-2)
        dl = torch._softmax_backward_data(dc, c, 2, c.dtype)
        dlogits = dl if dlogits is None else dlogits + dl
    dpred = dpred.transpose(2, 3).reshape(F, B * N, -1)
    grads.capsule.baddbmm_(z.view(F, B * N, d).transpose(1, 2), dpred)
    return torch.bmm(dpred, p.capsule_t).view(F, B, N, d), None


_COMPOSE = {"sat": (_sat_forward, _sat_backward), "gcn": (_gcn_forward, _gcn_backward), "cap": (_cap_forward, _cap_backward)}


# ---------------------------------------------------------------- the small pieces


class TorchOps:
    """The small per-step pieces as torch operations (any device). ``cpu.COps`` is
    the same interface compiled in C, the default for CPU tensors."""

    @staticmethod
    def zones(zb, F, N, d):
        """zb [B, F*N*d] -> z, u = z / max(|z|, 1e-12) [F, B, N, d], |z| [F, B, N, 1],
        total = sum_n u [F, B, d], cosine [B] = sum_f |total|^2 / N^2."""
        B = zb.shape[0]
        z = zb.view(B, F, N, d).transpose(0, 1).contiguous()
        norm = torch.linalg.vector_norm(z, dim=-1, keepdim=True).clamp_min_(_NORM_EPS)
        u = z / norm
        total = u.sum(dim=-2)  # ||sum_i u_i||^2 = sum_ij cos(z_i, z_j)
        return z, u, norm, total, total.pow(2).sum(dim=(0, 2)).div_(N * N)

    @staticmethod
    def zones_backward(dz, du, dcos, u, norm, total):
        """dL/dzb [B, F*N*d] from dz (or None), du (or None) and dcos [B] (or None)."""
        F, B, N, d = u.shape
        if dcos is not None:  # d |total|^2 / N^2 / du_i = 2 total / N^2 for every zone i
            dt = (total * (dcos.view(1, B, 1) * (2 / (N * N)))).unsqueeze(-2)
            du = dt if du is None else du + dt
        if du is not None:  # u = z / |z|
            dn = (du - u * (u * du).sum(dim=-1, keepdim=True)) / norm
            dz = dn if dz is None else dz + dn
        return dz.transpose(0, 1).reshape(B, F * N * d)

    @staticmethod
    def attention(qkv, N, d, scale):
        """qkv [F, B*N, 3d] -> (softmax(scale q k^T) v [F*B*N, d], the weights [F*B, N, N])."""
        qkv = qkv.view(-1, N, 3 * d)
        q, k, v = qkv[..., :d], qkv[..., d : 2 * d], qkv[..., 2 * d :]
        a = torch.softmax(torch.bmm(q, k.transpose(1, 2)).mul_(scale), dim=-1)
        return torch.bmm(a, v), a

    @staticmethod
    def attention_backward(do, qkv, a, scale):
        shape, N, d = qkv.shape, a.shape[-1], do.shape[-1]
        qkv, do = qkv.view(-1, N, 3 * d), do.reshape(-1, N, d)
        q, k, v = qkv[..., :d], qkv[..., d : 2 * d], qkv[..., 2 * d :]
        ds = torch._softmax_backward_data(torch.bmm(do, v.transpose(1, 2)), a, -1, a.dtype).mul_(scale)
        return torch.cat([torch.bmm(ds, k), torch.bmm(ds.transpose(1, 2), q), torch.bmm(a.transpose(1, 2), do)], dim=-1).view(shape)

    @staticmethod
    def gate(m, s, drop, gamma, beta, eps, ln_row):
        """m [2, B, H] (M_h, M_g) -> s + g (tanh(M_h') drop - s), g = sigmoid(M_g'), where the row
        ``ln_row`` (1: M_g, 0: M_h) passes through the layer norm first; and what the backward reads."""
        normed, mean, rstd = torch.native_layer_norm(m[ln_row], [m.shape[-1]], gamma, beta, eps)
        pre = (m[0], normed) if ln_row else (normed, m[1])
        candidate = torch.tanh(pre[0])
        g = torch.sigmoid(pre[1])
        return torch.lerp(s, candidate if drop is None else candidate * drop, g), (m, mean, rstd, candidate, g)

    @staticmethod
    def gate_backward(dnew, s, drop, gamma, beta, saved, grads, ln_row):
        """dL/d(new state) -> (dL/ds, dL/dm [2, B, H]); adds the layer norm's weight gradients to grads."""
        m, mean, rstd, candidate, g = saved
        dropped = candidate if drop is None else candidate * drop
        d_dropped = dnew * g
        dm = torch.empty_like(m)
        torch.mul(dnew * (dropped - s), g * (1 - g), out=dm[1])  # through the sigmoid
        d_cand = d_dropped if drop is None else d_dropped * drop
        torch.mul(d_cand, 1 - candidate * candidate, out=dm[0])  # through the tanh
        dnormed, dgamma, dbeta = torch.ops.aten.native_layer_norm_backward(
            dm[ln_row], m[ln_row], [m.shape[-1]], mean, rstd, gamma, beta, [True, True, True]
        )
        dm[ln_row] = dnormed
        grads.gamma += dgamma
        grads.beta += dbeta
        return dnew - d_dropped, dm


# ---------------------------------------------------------------- one cell


def _cell_forward(p, s, xz, drop, ops):
    """One cell on state s [B, d_h]; xz [B, F*N*d_z] (the x-part of the zones) or None.

    Returns (new state, zone cosine [B] summed over M_h and M_g, what the backward reads)."""
    B = s.shape[0]
    F, N, d, J, d_o = p.F, p.N, p.d_z, p.J, p.d_o
    zb = s @ p.zone_h if xz is None else torch.addmm(xz, s, p.zone_h)
    z, u, norm, total, cosine = ops.zones(zb, F, N, d)
    o, comp = _COMPOSE[p.composition][0](z, u, p, ops)
    hidden = torch.baddbmm(p.b1, o, p.w1).relu_()  # [F, B*J, ffn]
    f = torch.baddbmm(p.b2, hidden, p.w2)  # [F, B*J, d_o]
    m = torch.baddbmm(p.ba, f.view(F, B, J * d_o), p.wa)  # [F, B, d_h]
    new, gate = ops.gate(m, s, drop, p.gamma, p.beta, p.ln_eps, p.ln_row)
    return new, cosine, (s, z, u, norm, total, comp, o, hidden, f, gate)


def _cell_backward(p, saved, ds_new, dcos, drop, grads, ops):
    """Adjoint of _cell_forward: ds_new = dL/d(new state), dcos [B] or None = dL/d(cosine).

    Adds to ``grads``; returns (dL/ds, dL/d(zones) [B, F*N*d_z], for the x-part)."""
    s, z, u, norm, total, comp, o, hidden, f, gate = saved
    F, B = z.shape[:2]
    J, d_o = p.J, p.d_o
    ds, dm = ops.gate_backward(ds_new, s, drop, p.gamma, p.beta, gate, grads, p.ln_row)
    grads.wa.baddbmm_(f.view(F, B, J * d_o).transpose(1, 2), dm)
    grads.ba += dm.sum(dim=1, keepdim=True)
    df = torch.bmm(dm, p.wa_t).view(F, B * J, d_o)
    grads.w2.baddbmm_(hidden.transpose(1, 2), df)
    grads.b2 += df.sum(dim=1, keepdim=True)
    dhidden = torch.ops.aten.threshold_backward(torch.bmm(df, p.w2_t), hidden, 0)
    grads.w1.baddbmm_(o.transpose(1, 2), dhidden)
    grads.b1 += dhidden.sum(dim=1, keepdim=True)
    dz, du = _COMPOSE[p.composition][1](torch.bmm(dhidden, p.w1_t), z, u, comp, p, grads, ops)
    dzb = ops.zones_backward(dz, du, dcos, u, norm, total)
    grads.zone_h.addmm_(s.t(), dzb)
    ds.addmm_(dzb, p.zone_h_t)
    return ds, dzb


# ---------------------------------------------------------------- the scan


class FusedScan(torch.autograd.Function):
    """forward(cells, options, ops, slots, x [B, T, d_x], mask [B, T], drop [T, L+1, B, d_h] or
    None, *params) -> (states [B, T, d_h], zone_cosine [B, T]); slots and params from ``_param_slots``."""

    @staticmethod
    def forward(ctx, cells, options, ops, slots, x, mask, drop, *params):
        B, T, _ = x.shape
        compute = torch.float64 if x.dtype == torch.float64 else torch.float32
        H = hidden_size(cells)
        stacks = {}
        for cell in cells:
            if id(cell) not in stacks:
                stacks[id(cell)] = _stack(cell, options, compute)
        chain = [stacks[id(cell)] for cell in cells]
        first = chain[0]
        xc = x.to(compute)
        xz = (xc.reshape(B * T, -1) @ first.zone_x).view(B, T, -1)  # x-part of the first cell's zones
        dropc = None if drop is None else drop.to(compute)
        keep = mask.to(device=x.device, dtype=torch.bool)
        full = keep.all(dim=0).tolist()  # steps where every row is real: no masking needed
        keep_f = keep.t().unsqueeze(-1)  # [T, B, 1]
        states = torch.empty(B, T, H, dtype=compute, device=x.device)
        cosines = torch.empty(B, T, dtype=compute, device=x.device)
        h = x.new_zeros(B, H, dtype=compute)
        saved = []
        for t in range(T):
            s, cos_t, step = h, None, []
            for depth, p in enumerate(chain):
                s, cos, keep_for_backward = _cell_forward(p, s, xz[:, t] if depth == 0 else None,
                                                          None if dropc is None else dropc[t, depth], ops)
                cos_t = cos if cos_t is None else cos_t + cos
                step.append(keep_for_backward)
            saved.append(step)
            if full[t]:
                h = s
                states[:, t] = s
                cosines[:, t] = cos_t
            else:
                h = torch.where(keep_f[t], s, h)
                states[:, t] = torch.where(keep_f[t], s, 0)
                cosines[:, t] = torch.where(keep_f[t, :, 0], cos_t, 0)
        ctx.cells, ctx.chain, ctx.stacks, ctx.saved = cells, chain, stacks, saved
        ctx.full, ctx.x_dtype, ctx.params, ctx.ops = full, x.dtype, params, ops
        ctx.slots = slots
        ctx.save_for_backward(xc, keep_f, dropc)
        return states.to(x.dtype), cosines.to(x.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, d_states, d_cosines):
        xc, keep_f, dropc = ctx.saved_tensors
        chain, full, saved = ctx.chain, ctx.full, ctx.saved
        T = len(saved)
        compute = chain[0].zone_h.dtype
        d_states = d_states.to(compute)
        d_cosines = d_cosines.to(compute).t().contiguous()  # [T, B]: each step's row contiguous
        B = d_states.shape[0]
        grads = {key: _zero_grads(p) for key, p in ctx.stacks.items()}
        chain_grads = [grads[id(cell)] for cell in ctx.cells]
        dxz = torch.empty(B, T, chain[0].zone_h.shape[1], dtype=compute, device=d_states.device)
        dh = torch.zeros_like(d_states[:, 0])
        for t in reversed(range(T)):
            if full[t]:
                ds, dcos, dh_skip = d_states[:, t] + dh, d_cosines[t], None
            else:
                ds = torch.where(keep_f[t], d_states[:, t] + dh, 0)
                dcos = torch.where(keep_f[t, :, 0], d_cosines[t], 0)
                dh_skip = torch.where(keep_f[t], 0, dh)
            for depth in reversed(range(len(chain))):
                drop = None if dropc is None else dropc[t, depth]
                ds, dzb = _cell_backward(chain[depth], saved[t][depth], ds, dcos, drop, chain_grads[depth], ctx.ops)
            dxz[:, t] = dzb
            dh = ds if dh_skip is None else ds + dh_skip
        first = chain[0]
        dxz = dxz.view(B * T, -1)
        dx = None
        if ctx.needs_input_grad[4]:
            dx = (dxz @ first.zone_x.t()).view(B, T, -1).to(ctx.x_dtype)
        if first.d_in:
            grads[id(ctx.cells[0])].zone_x.addmm_(xc.reshape(B * T, -1).t(), dxz)
        param_grads = _grads_to_params(ctx.slots, ctx.stacks, grads)
        return (None, None, None, None, dx, None, None, *(param_grads.get(id(param)) for param in ctx.params))


def _param_slots(cells, options) -> list[tuple]:
    """Where each weight's gradient comes from: (cell key, M-function index or None, name,
    tensor), each distinct cell once (a shared transition cell's gradients are in the first's)."""
    slots, seen = [], set()
    for cell in cells:
        if id(cell) in seen:
            continue
        seen.add(id(cell))
        for f, m in enumerate((cell.m_h, cell.m_g)):
            slots += [(id(cell), f, name, m[name]) for name in M_NAMES[options.composition]]
        slots += [(id(cell), None, "gamma", cell.ln_weight), (id(cell), None, "beta", cell.ln_bias)]
    return slots


def _grads_to_params(slots, stacks, grads) -> dict[int, torch.Tensor]:
    """Stacked gradients back onto the parameters (id -> gradient, in the parameter's dtype)."""
    per_cell = {}
    for key, p in stacks.items():
        g = grads[key]
        F, N, d = p.F, p.N, p.d_z
        zones = torch.cat([g.zone_x, g.zone_h]).view(-1, F, N, d).permute(1, 2, 0, 3)  # [F, N, d_in + d_h, d_z]
        per_name = {"zone_weight": zones, "ffn_in": g.w1, "ffn_in_bias": g.b1.squeeze(1), "ffn_out": g.w2,
                    "ffn_out_bias": g.b2.squeeze(1), "aggregate": g.wa, "aggregate_bias": g.ba.squeeze(1),
                    "gamma": g.gamma, "beta": g.beta}
        if p.composition == "sat":
            per_name.update(zip(("query", "key", "value"), g.qkv.split(d, dim=-1)))
        elif p.composition == "gcn":
            per_name["graph"] = g.graph
        else:
            per_name["capsule"] = g.capsule.view(F, d, p.J, p.d_o).transpose(1, 2)
        per_cell[key] = per_name
    out = {}
    for key, f, name, param in slots:
        grad = per_cell[key][name]
        out[id(param)] = (grad if f is None else grad[f]).to(param.dtype)
    return out


def ops_for(device: torch.device, compiled: bool = True):
    """The small pieces: compiled C for CPU tensors (``compiled``, the "cpu" implementation;
    the dispatcher has checked for a C compiler), else torch operations ("torch")."""
    if compiled and device.type == "cpu":
        from rnnbench.kernels.mzu_transition.cpu import COps

        return COps
    return TorchOps


def fused(x, mask, cells, options, drop=None, compiled: bool = True):
    """Same result as ``reference``: (states, zone_cosine); see the module docstring."""
    slots = _param_slots(cells, options)
    return FusedScan.apply(cells, options, ops_for(x.device, compiled), slots, x, mask, drop, *(slot[3] for slot in slots))
