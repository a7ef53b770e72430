"""The MZU scan's small per-step pieces compiled in C: the CPU ops of ``_mzu_fused``.

Between its matrix multiplies an MZU cell step is made of many tiny operations: zone
norms and the zone cosine, N x N self-attention per (M-function, sequence), layer
norm, tanh, sigmoid and the gated state update. As torch operations each costs an op
dispatch (5-10 us) for a few thousand flops, and the N x N attention products as
``bmm`` cost about 100 us each (one small BLAS call per sequence). Here each piece,
forward or backward, is one pass over its rows. Same interface as
``_mzu_fused.TorchOps``; float32 (exp to about 2 ulp, vectorisable) and float64 (libm,
for gradcheck). Built like ``_lstm_cell_cpu`` (same compiler, flags and cache).
"""
from __future__ import annotations

import ctypes
import functools

import torch

from rnnbench.kernels import _c_build

# rintf rounding: this piece is built with -fassociative-math (see _c_build.c_prelude).
_C_PRELUDE = _c_build.c_prelude("exp_f32", rint_rounding=True) + r"""
INLINE double exp_f64(double a) { return exp(a); }
INLINE float sqrt_f32(float a) { return sqrtf(a); }
INLINE double sqrt_f64(double a) { return sqrt(a); }
#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
"""

_C_BODY = r"""
#define NAME(x) CAT(x, SUFFIX)

/* zb [B, F, N, d] (the zone matrix product's output) -> z, u = z / max(|z|, 1e-12)
   [F, B, N, d], norm [F, B, N], total = sum_n u [F, B, d], cosine [B] = sum_f |total|^2 / N^2. */
void NAME(zones_forward)(int64_t B, int64_t F, int64_t N, int64_t d, const SCALAR *zb, SCALAR *z, SCALAR *u,
                         SCALAR *norm, SCALAR *total, SCALAR *cosine) {
    for (int64_t b = 0; b < B; b++) {
        SCALAR cos = 0;
        for (int64_t f = 0; f < F; f++) {
            SCALAR *restrict tot = total + (f * B + b) * d;
            memset(tot, 0, d * sizeof(SCALAR));
            for (int64_t n = 0; n < N; n++) {
                const SCALAR *restrict src = zb + ((b * F + f) * N + n) * d;
                int64_t row = (f * B + b) * N + n;
                SCALAR *restrict zr = z + row * d, *restrict ur = u + row * d;
                SCALAR sq = 0;
                for (int64_t k = 0; k < d; k++) { zr[k] = src[k]; sq += src[k] * src[k]; }
                SCALAR nv = SQRT(sq);
                if (nv < (SCALAR)1e-12) nv = (SCALAR)1e-12;
                norm[row] = nv;
                for (int64_t k = 0; k < d; k++) { ur[k] = src[k] / nv; tot[k] += ur[k]; }
            }
            for (int64_t k = 0; k < d; k++) cos += tot[k] * tot[k];
        }
        cosine[b] = cos / (SCALAR)(N * N);
    }
}

/* The adjoint: dz (or NULL) plus the backward of u = z / |z| for du (or NULL) and for the
   cosine's dcos [B] (or NULL), written as dzb [B, F, N, d]. */
void NAME(zones_backward)(int64_t B, int64_t F, int64_t N, int64_t d, const SCALAR *dz, const SCALAR *du,
                          const SCALAR *dcos, const SCALAR *u, const SCALAR *norm, const SCALAR *total, SCALAR *dzb) {
    SCALAR g[d];
    for (int64_t b = 0; b < B; b++) {
        SCALAR w = dcos ? dcos[b] * (SCALAR)2 / (SCALAR)(N * N) : 0;
        for (int64_t f = 0; f < F; f++) {
            const SCALAR *restrict tot = total + (f * B + b) * d;
            for (int64_t n = 0; n < N; n++) {
                int64_t row = (f * B + b) * N + n;
                const SCALAR *restrict ur = u + row * d;
                SCALAR *restrict out = dzb + ((b * F + f) * N + n) * d;
                SCALAR dot = 0;
                if (du) for (int64_t k = 0; k < d; k++) g[k] = w * tot[k] + du[row * d + k];
                else for (int64_t k = 0; k < d; k++) g[k] = w * tot[k];
                for (int64_t k = 0; k < d; k++) dot += ur[k] * g[k];
                SCALAR inv = 1 / norm[row];
                if (dz) for (int64_t k = 0; k < d; k++) out[k] = dz[row * d + k] + (g[k] - ur[k] * dot) * inv;
                else for (int64_t k = 0; k < d; k++) out[k] = (g[k] - ur[k] * dot) * inv;
            }
        }
    }
}

/* Self-attention over N zones for each of G (M-function, sequence) pairs:
   qkv [G, N, 3d] (q | k | v), a [G, N, N] = softmax(scale q k^T), o [G, N, d] = a v. */
void NAME(attention_forward)(int64_t G, int64_t N, int64_t d, SCALAR scale, const SCALAR *qkv, SCALAR *a, SCALAR *o) {
    for (int64_t gi = 0; gi < G; gi++) {
        const SCALAR *base = qkv + gi * N * 3 * d;
        for (int64_t i = 0; i < N; i++) {
            const SCALAR *q = base + i * 3 * d;
            SCALAR *ar = a + (gi * N + i) * N, top = -INFINITY, sum = 0;
            for (int64_t j = 0; j < N; j++) {
                const SCALAR *k = base + j * 3 * d + d;
                SCALAR dot = 0;
                for (int64_t c = 0; c < d; c++) dot += q[c] * k[c];
                ar[j] = dot * scale;
                if (ar[j] > top) top = ar[j];
            }
            for (int64_t j = 0; j < N; j++) { ar[j] = EXP(ar[j] - top); sum += ar[j]; }
            for (int64_t j = 0; j < N; j++) ar[j] /= sum;
            SCALAR *restrict orow = o + (gi * N + i) * d;
            memset(orow, 0, d * sizeof(SCALAR));
            for (int64_t j = 0; j < N; j++) {
                const SCALAR *restrict v = base + j * 3 * d + 2 * d;
                for (int64_t c = 0; c < d; c++) orow[c] += ar[j] * v[c];
            }
        }
    }
}

/* The adjoint: do [G, N, d] -> dqkv [G, N, 3d]. */
void NAME(attention_backward)(int64_t G, int64_t N, int64_t d, SCALAR scale, const SCALAR *qkv, const SCALAR *a,
                              const SCALAR *dout, SCALAR *dqkv) {
    SCALAR ds[N * N];
    for (int64_t gi = 0; gi < G; gi++) {
        const SCALAR *base = qkv + gi * N * 3 * d, *ag = a + gi * N * N, *dog = dout + gi * N * d;
        SCALAR *dbase = dqkv + gi * N * 3 * d;
        memset(dbase, 0, N * 3 * d * sizeof(SCALAR));
        for (int64_t i = 0; i < N; i++) {
            const SCALAR *restrict doi = dog + i * d;
            SCALAR mean = 0;
            for (int64_t j = 0; j < N; j++) {
                const SCALAR *restrict v = base + j * 3 * d + 2 * d;
                SCALAR *restrict dv = dbase + j * 3 * d + 2 * d;
                SCALAR aij = ag[i * N + j], da = 0;
                for (int64_t c = 0; c < d; c++) { da += doi[c] * v[c]; dv[c] += aij * doi[c]; }
                ds[i * N + j] = da;
                mean += aij * da;
            }
            for (int64_t j = 0; j < N; j++) ds[i * N + j] = ag[i * N + j] * (ds[i * N + j] - mean) * scale;
        }
        for (int64_t i = 0; i < N; i++) {
            const SCALAR *restrict q = base + i * 3 * d;
            SCALAR *restrict dq = dbase + i * 3 * d;
            for (int64_t j = 0; j < N; j++) {
                const SCALAR *restrict k = base + j * 3 * d + d;
                SCALAR *restrict dk = dbase + j * 3 * d + d;
                SCALAR w = ds[i * N + j];
                for (int64_t c = 0; c < d; c++) { dq[c] += w * k[c]; dk[c] += w * q[c]; }
            }
        }
    }
}

INLINE void NAME(gate_row)(int64_t H, const SCALAR *restrict mh, const SCALAR *restrict mg,
                           const SCALAR *restrict gamma, const SCALAR *restrict beta, SCALAR mu, SCALAR r,
                           const SCALAR *restrict sr, const SCALAR *restrict dr, SCALAR *restrict o,
                           SCALAR *restrict c, SCALAR *restrict g, int has_drop) {
    for (int64_t k = 0; k < H; k++) {
        SCALAR y = (mh[k] - mu) * r * gamma[k] + beta[k];
        SCALAR cv = 1 - 2 / (1 + EXP(2 * y));
        SCALAR gv = 1 / (1 + EXP(-mg[k]));
        SCALAR dropped = has_drop ? cv * dr[k] : cv;
        c[k] = cv;
        g[k] = gv;
        o[k] = sr[k] + gv * (dropped - sr[k]);
    }
}

/* Candidate and gate: m [2, B, H] (M_h, M_g outputs), s [B, H] the state, drop [B, H] or NULL.
   cand = tanh(LN(m_h)), g = sigmoid(m_g), new = s + g (cand * drop - s); keeps mean, rstd [B]. */
void NAME(gate_forward)(int64_t B, int64_t H, const SCALAR *m, const SCALAR *gamma, const SCALAR *beta, double eps,
                        const SCALAR *s, const SCALAR *drop, SCALAR *out, SCALAR *mean, SCALAR *rstd,
                        SCALAR *cand, SCALAR *gate) {
    for (int64_t b = 0; b < B; b++) {
        const SCALAR *restrict mh = m + b * H, *restrict mg = m + (B + b) * H, *restrict sr = s + b * H;
        const SCALAR *restrict dr = drop ? drop + b * H : 0;
        SCALAR *restrict o = out + b * H, *restrict c = cand + b * H, *restrict g = gate + b * H;
        SCALAR mu = 0, var = 0;
        for (int64_t k = 0; k < H; k++) mu += mh[k];
        mu /= (SCALAR)H;
        for (int64_t k = 0; k < H; k++) var += (mh[k] - mu) * (mh[k] - mu);
        SCALAR r = 1 / SQRT(var / (SCALAR)H + (SCALAR)eps);
        mean[b] = mu;
        rstd[b] = r;
        if (dr) NAME(gate_row)(H, mh, mg, gamma, beta, mu, r, sr, dr, o, c, g, 1);
        else NAME(gate_row)(H, mh, mg, gamma, beta, mu, r, sr, dr, o, c, g, 0);
    }
}

INLINE void NAME(gate_back_row)(int64_t H, const SCALAR *restrict dn, const SCALAR *restrict mh,
                                const SCALAR *restrict c, const SCALAR *restrict g, const SCALAR *restrict sr,
                                const SCALAR *restrict dr, const SCALAR *restrict gamma, SCALAR mu, SCALAR r,
                                SCALAR *restrict dsr, SCALAR *restrict dmg, SCALAR *restrict dgamma,
                                SCALAR *restrict dbeta, SCALAR *restrict dxhat, int has_drop) {
    for (int64_t k = 0; k < H; k++) {
        SCALAR dropped = has_drop ? c[k] * dr[k] : c[k];
        SCALAR dd = dn[k] * g[k];
        dsr[k] = dn[k] - dd;
        dmg[k] = dn[k] * (dropped - sr[k]) * g[k] * (1 - g[k]);
        SCALAR dy = (has_drop ? dd * dr[k] : dd) * (1 - c[k] * c[k]);
        dgamma[k] += dy * (mh[k] - mu) * r;
        dbeta[k] += dy;
        dxhat[k] = dy * gamma[k];
    }
}

/* The adjoint: dnew [B, H] -> ds [B, H], dm [2, B, H]; adds to dgamma, dbeta [H]. */
void NAME(gate_backward)(int64_t B, int64_t H, const SCALAR *dnew, const SCALAR *m, const SCALAR *mean,
                         const SCALAR *rstd, const SCALAR *gamma, const SCALAR *cand, const SCALAR *gate,
                         const SCALAR *s, const SCALAR *drop, SCALAR *ds, SCALAR *dm, SCALAR *dgamma, SCALAR *dbeta) {
    SCALAR dxhat[H];
    for (int64_t b = 0; b < B; b++) {
        const SCALAR *restrict dn = dnew + b * H, *restrict mh = m + b * H, *restrict c = cand + b * H;
        const SCALAR *restrict g = gate + b * H, *restrict sr = s + b * H;
        const SCALAR *restrict dr = drop ? drop + b * H : 0;
        SCALAR *restrict dsr = ds + b * H, *restrict dmh = dm + b * H, *restrict dmg = dm + (B + b) * H;
        SCALAR mu = mean[b], r = rstd[b], sum_dx = 0, sum_dxx = 0;
        if (dr) NAME(gate_back_row)(H, dn, mh, c, g, sr, dr, gamma, mu, r, dsr, dmg, dgamma, dbeta, dxhat, 1);
        else NAME(gate_back_row)(H, dn, mh, c, g, sr, dr, gamma, mu, r, dsr, dmg, dgamma, dbeta, dxhat, 0);
        for (int64_t k = 0; k < H; k++) {
            sum_dx += dxhat[k];
            sum_dxx += dxhat[k] * (mh[k] - mu) * r;
        }
        sum_dx /= (SCALAR)H;
        sum_dxx /= (SCALAR)H;
        for (int64_t k = 0; k < H; k++) dmh[k] = r * (dxhat[k] - sum_dx - (mh[k] - mu) * r * sum_dxx);
    }
}
#undef NAME
"""

# Unlike the LSTM cell, these pieces are mostly sums (norms, dot products over d_z, layer
# norm statistics): letting the compiler reassociate them is what lets it vectorise them
# (a serial float sum waits for each add). Results stay within float rounding of the
# reference's, which sums in its own order too. -fassociative-math alone does not switch
# the process to flush-to-zero (only -ffast-math's startup file does).
_C_EXTRA_FLAGS = ("-fassociative-math",)

_C_TYPES = {torch.float32: ("f32", "float", "exp_f32", "sqrt_f32"), torch.float64: ("f64", "double", "exp_f64", "sqrt_f64")}
DTYPES = tuple(_C_TYPES)


def _source() -> str:
    parts = [_C_PRELUDE]
    for suffix, scalar, exp, sqrt in _C_TYPES.values():
        parts.append(f"#define SUFFIX {suffix}\n#define SCALAR {scalar}\n#define EXP {exp}\n#define SQRT {sqrt}\n{_C_BODY}")
        parts.append("#undef SUFFIX\n#undef SCALAR\n#undef EXP\n#undef SQRT\n")
    return "".join(parts)


@functools.cache
def _library() -> ctypes.CDLL:
    """Build (once per source, flags, compiler and CPU) and load the C pieces."""
    lib = _c_build.build("mzu", _source(), flags=(*_c_build.BASE_FLAGS, *_C_EXTRA_FLAGS), libs=("-lm",))
    i64, ptr, f64 = ctypes.c_int64, ctypes.c_void_p, ctypes.c_double
    for suffix, scalar, _, _ in _C_TYPES.values():
        real = ctypes.c_float if scalar == "float" else ctypes.c_double
        getattr(lib, f"zones_forward_{suffix}").argtypes = [i64] * 4 + [ptr] * 6
        getattr(lib, f"zones_backward_{suffix}").argtypes = [i64] * 4 + [ptr] * 7
        getattr(lib, f"attention_forward_{suffix}").argtypes = [i64] * 3 + [real] + [ptr] * 3
        getattr(lib, f"attention_backward_{suffix}").argtypes = [i64] * 3 + [real] + [ptr] * 4
        getattr(lib, f"gate_forward_{suffix}").argtypes = [i64] * 2 + [ptr] * 3 + [f64] + [ptr] * 7
        getattr(lib, f"gate_backward_{suffix}").argtypes = [i64] * 2 + [ptr] * 13
    return lib


def available() -> bool:
    return _c_build.compiler() is not None


def _fn(name: str, dtype: torch.dtype):
    return getattr(_library(), f"{name}_{_C_TYPES[dtype][0]}")


def _ptr(t: torch.Tensor | None):
    return None if t is None else t.data_ptr()


class COps:
    """The compiled pieces, with the interface of ``_mzu_fused.TorchOps`` (contiguous tensors)."""

    @staticmethod
    def zones(zb, F, N, d):
        B = zb.shape[0]
        z, u = torch.empty(F, B, N, d, dtype=zb.dtype), torch.empty(F, B, N, d, dtype=zb.dtype)
        norm, total, cosine = torch.empty(F, B, N, 1, dtype=zb.dtype), torch.empty(F, B, d, dtype=zb.dtype), torch.empty(B, dtype=zb.dtype)
        _fn("zones_forward", zb.dtype)(B, F, N, d, zb.data_ptr(), z.data_ptr(), u.data_ptr(), norm.data_ptr(),
                                       total.data_ptr(), cosine.data_ptr())
        return z, u, norm, total, cosine

    @staticmethod
    def zones_backward(dz, du, dcos, u, norm, total):
        F, B, N, d = u.shape
        dzb = torch.empty(B, F * N * d, dtype=u.dtype)
        dz, du = (None if t is None else t.contiguous() for t in (dz, du))
        _fn("zones_backward", u.dtype)(B, F, N, d, _ptr(dz), _ptr(du), _ptr(dcos), u.data_ptr(), norm.data_ptr(),
                                       total.data_ptr(), dzb.data_ptr())
        return dzb

    @staticmethod
    def attention(qkv, N, d, scale):
        G = qkv.shape[0] * qkv.shape[1] // N
        a, o = torch.empty(G, N, N, dtype=qkv.dtype), torch.empty(G * N, d, dtype=qkv.dtype)
        _fn("attention_forward", qkv.dtype)(G, N, d, scale, qkv.data_ptr(), a.data_ptr(), o.data_ptr())
        return o, a

    @staticmethod
    def attention_backward(do, qkv, a, scale):
        G, N, _ = a.shape
        dqkv = torch.empty(qkv.shape, dtype=qkv.dtype)
        _fn("attention_backward", qkv.dtype)(G, N, do.shape[-1], scale, qkv.data_ptr(), a.data_ptr(),
                                             do.contiguous().data_ptr(), dqkv.data_ptr())
        return dqkv

    @staticmethod
    def gate(m, s, drop, gamma, beta, eps):
        _, B, H = m.shape
        new, cand, gate = (torch.empty(B, H, dtype=m.dtype) for _ in range(3))
        mean, rstd = torch.empty(B, dtype=m.dtype), torch.empty(B, dtype=m.dtype)
        _fn("gate_forward", m.dtype)(B, H, m.data_ptr(), gamma.data_ptr(), beta.data_ptr(), eps, s.data_ptr(), _ptr(drop),
                                     new.data_ptr(), mean.data_ptr(), rstd.data_ptr(), cand.data_ptr(), gate.data_ptr())
        return new, (m, mean, rstd, cand, gate)

    @staticmethod
    def gate_backward(dnew, s, drop, gamma, beta, saved, grads):
        m, mean, rstd, cand, gate = saved
        _, B, H = m.shape
        ds, dm = torch.empty(B, H, dtype=m.dtype), torch.empty(2, B, H, dtype=m.dtype)
        _fn("gate_backward", m.dtype)(B, H, dnew.contiguous().data_ptr(), m.data_ptr(), mean.data_ptr(), rstd.data_ptr(),
                                      gamma.data_ptr(), cand.data_ptr(), gate.data_ptr(), s.data_ptr(), _ptr(drop),
                                      ds.data_ptr(), dm.data_ptr(), grads.gamma.data_ptr(), grads.beta.data_ptr())
        return ds, dm
