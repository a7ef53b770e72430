"""The LSTM cell's pointwise step compiled in C: the CPU cell of ``multi_lstm``'s recurrence.

Per time step the recurrence is one matrix multiply plus the pointwise cell: four
activations, c, tanh(c) and h forward; seven products backward. As torch operations
(``multi_lstm.TorchCell``) that is about 9 (forward) and 16 (backward) op dispatches,
each a memory pass over a few tens of thousands of values, together about as long as
the step's matrix multiply on a CPU; here each direction of the step is one pass. The source is built once by the system C compiler (``$CC``,
default ``cc``) into ``$RNNBENCH_CACHE/kernels`` (default ``.cache/rnnbench``) and
loaded through ctypes (no torch headers, builds in about a second).

float32 uses a vectorisable exp (about 2 ulp); float64 (there for gradcheck) uses libm.
"""
from __future__ import annotations

import ctypes
import functools

import torch

from rnnbench.kernels import _c_build

_C_PRELUDE = _c_build.c_prelude("exp_f32") + r"""
INLINE double exp_f64(double a) { return exp(a); }
#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
"""

# a: [D, n, 4H] gates (i, f, g, o); every other tensor [D, n, H]; each given as
# (pointer, direction stride, row stride) with unit stride along the last dimension.
_C_BODY = r"""
#define NAME(x) CAT(x, SUFFIX)
#define AT(p, d, r) ((p) + (d) * p##_sd + (r) * p##_sr)

INLINE SCALAR NAME(sigmoid)(SCALAR v) { return 1 / (1 + EXP(-v)); }
INLINE SCALAR NAME(tanh_)(SCALAR v) { return 1 - 2 / (1 + EXP(2 * v)); }

INLINE void NAME(fwd_row)(int64_t H, SCALAR *restrict ai, SCALAR *restrict af, SCALAR *restrict ag,
                          SCALAR *restrict ao, const SCALAR *restrict rec, const SCALAR *restrict cp,
                          SCALAR *restrict c, SCALAR *restrict tc, SCALAR *restrict h, const SCALAR *restrict r,
                          int has_prev, int has_r) {
    for (int64_t j = 0; j < H; j++) {
        SCALAR zi = ai[j] + rec[j], zf = af[j] + rec[H + j], zg = ag[j] + rec[2 * H + j], zo = ao[j] + rec[3 * H + j];
        SCALAR i = NAME(sigmoid)(zi), f = NAME(sigmoid)(zf);
        SCALAR g = NAME(tanh_)(zg), o = NAME(sigmoid)(zo);
        SCALAR cv = i * g;
        if (has_prev) cv += f * cp[j];
        SCALAR tv = NAME(tanh_)(cv);
        SCALAR hv = o * tv;
        if (has_r) hv += r[j];
        ai[j] = i; af[j] = f; ag[j] = g; ao[j] = o;
        c[j] = cv; tc[j] = tv; h[j] = hv;
    }
}

/* a: input pre-activations in (plus rec, the recurrent term and bias), gate activations
   out; cp (c_{t-1}) is NULL at t = 0 and r (the residual) may be NULL. */
void NAME(cell_forward)(int64_t D, int64_t n, int64_t H,
                        SCALAR *a, int64_t a_sd, int64_t a_sr,
                        const SCALAR *rec, int64_t rec_sd, int64_t rec_sr,
                        const SCALAR *cp, int64_t cp_sd, int64_t cp_sr,
                        SCALAR *c, int64_t c_sd, int64_t c_sr,
                        SCALAR *tc, int64_t tc_sd, int64_t tc_sr,
                        SCALAR *h, int64_t h_sd, int64_t h_sr,
                        const SCALAR *r, int64_t r_sd, int64_t r_sr) {
    for (int64_t d = 0; d < D; d++) {
        for (int64_t row = 0; row < n; row++) {
            SCALAR *ar = AT(a, d, row);
            const SCALAR *recr = AT(rec, d, row), *cpr = cp ? AT(cp, d, row) : 0;
            const SCALAR *rr = r ? AT(r, d, row) : 0;
            SCALAR *cr = AT(c, d, row), *tr = AT(tc, d, row), *hr = AT(h, d, row);
            switch ((cp != 0) * 2 + (r != 0)) {
#define ROW(x, y) NAME(fwd_row)(H, ar, ar + H, ar + 2 * H, ar + 3 * H, recr, cpr, cr, tr, hr, rr, x, y); break
            case 0: ROW(0, 0);
            case 1: ROW(0, 1);
            case 2: ROW(1, 0);
            default: ROW(1, 1);
#undef ROW
            }
        }
    }
}

INLINE void NAME(bwd_row)(int64_t H, const SCALAR *restrict ai, const SCALAR *restrict af,
                          const SCALAR *restrict ag, const SCALAR *restrict ao, SCALAR *restrict di,
                          SCALAR *restrict df, SCALAR *restrict dg, SCALAR *restrict dout, const SCALAR *restrict cp, const SCALAR *restrict tc,
                          const SCALAR *restrict dho, const SCALAR *restrict dhr, SCALAR *restrict dc,
                          SCALAR *restrict dr, int has_cp, int has_rec, int has_dr) {
    for (int64_t j = 0; j < H; j++) {
        SCALAR i = ai[j], f = af[j], g = ag[j], o = ao[j], tv = tc[j];
        SCALAR dh = dho[j];
        if (has_rec) dh += dhr[j];
        if (has_dr) dr[j] = dh;
        SCALAR dcv = dc[j] + dh * o * (1 - tv * tv);
        di[j] = dcv * g * i * (1 - i);
        df[j] = has_cp ? dcv * cp[j] * f * (1 - f) : 0;
        dg[j] = dcv * i * (1 - g * g);
        dout[j] = dh * tv * o * (1 - o);
        dc[j] = dcv * f;
    }
}

/* a: gate activations; da gets the pre-activation gradients. dh = dh_out + dh_rec (dh_rec
   on rows < m only); dc: dL/dc_t from step t+1 in, dL/dc_{t-1} out; dr gets dh. */
void NAME(cell_backward)(int64_t D, int64_t n, int64_t H,
                         const SCALAR *a, int64_t a_sd, int64_t a_sr,
                         SCALAR *da, int64_t da_sd, int64_t da_sr,
                         const SCALAR *cp, int64_t cp_sd, int64_t cp_sr,
                         const SCALAR *tc, int64_t tc_sd, int64_t tc_sr,
                         const SCALAR *dho, int64_t dho_sd, int64_t dho_sr,
                         const SCALAR *dhr, int64_t dhr_sd, int64_t dhr_sr, int64_t m,
                         SCALAR *dc, int64_t dc_sd, int64_t dc_sr,
                         SCALAR *dr, int64_t dr_sd, int64_t dr_sr) {
    for (int64_t d = 0; d < D; d++) {
        for (int64_t row = 0; row < n; row++) {
            const SCALAR *ar = AT(a, d, row);
            SCALAR *dar = AT(da, d, row), *dcr = AT(dc, d, row), *drr = dr ? AT(dr, d, row) : 0;
            const SCALAR *cpr = cp ? AT(cp, d, row) : 0, *tr = AT(tc, d, row), *dor = AT(dho, d, row);
            const SCALAR *rec = dhr && row < m ? AT(dhr, d, row) : 0;
            switch ((cp != 0) * 4 + (rec != 0) * 2 + (dr != 0)) {
#define ROW(x, y, z) NAME(bwd_row)(H, ar, ar + H, ar + 2 * H, ar + 3 * H, dar, dar + H, dar + 2 * H, dar + 3 * H, cpr, tr, dor, rec, dcr, drr, x, y, z); break
            case 0: ROW(0, 0, 0);
            case 1: ROW(0, 0, 1);
            case 2: ROW(0, 1, 0);
            case 3: ROW(0, 1, 1);
            case 4: ROW(1, 0, 0);
            case 5: ROW(1, 0, 1);
            case 6: ROW(1, 1, 0);
            default: ROW(1, 1, 1);
#undef ROW
            }
        }
    }
}
#undef AT
#undef NAME
"""

_C_TYPES = {torch.float32: ("f32", "float", "exp_f32"), torch.float64: ("f64", "double", "exp_f64")}
DTYPES = tuple(_C_TYPES)

# The value-preserving part of -ffast-math (lets gcc vectorise the loops without
# reordering arithmetic). Then the first of these the compiler takes: this CPU's
# instructions (the build is keyed by the CPU) at their full vector width (gcc keeps
# AVX-512 code to 256-bit vectors unless asked; the forward cell ran 1.1-1.6x faster
# at 512 on this project's Xeon), or without the width, or neither.


@functools.cache
def compiler() -> str | None:
    """The C compiler the CPU cell is built with, or None where there is none."""
    return _c_build.compiler()


def _source() -> str:
    parts = [_C_PRELUDE]
    for suffix, scalar, exp in _C_TYPES.values():
        parts.append(f"#define SUFFIX {suffix}\n#define SCALAR {scalar}\n#define EXP {exp}\n{_C_BODY}")
        parts.append("#undef SUFFIX\n#undef SCALAR\n#undef EXP\n")
    return "".join(parts)


@functools.cache
def _library() -> ctypes.CDLL:
    """Build (once per source, flags, compiler and CPU) and load the C cell."""
    lib = _c_build.build("lstm_cell", _source())
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    strided = [ptr, i64, i64]
    for suffix, _, _ in _C_TYPES.values():
        getattr(lib, f"cell_forward_{suffix}").argtypes = [i64] * 3 + strided * 7
        getattr(lib, f"cell_backward_{suffix}").argtypes = [i64] * 3 + strided * 6 + [i64] + strided * 2
    return lib


def _strided(t: torch.Tensor | None) -> list:
    """(pointer, direction stride, row stride) of a [D, n, X] view with unit last stride."""
    if t is None:
        return [None, 0, 0]
    return [t.data_ptr(), t.stride(0), t.stride(1)]


class CCell:
    """The compiled cell, with the interface of ``multi_lstm.TorchCell``."""

    @staticmethod
    def forward(a, rec, c_prev, c, tanh_c, h, r):
        D, n, H = c.shape
        fn = getattr(_library(), f"cell_forward_{_C_TYPES[a.dtype][0]}")
        fn(D, n, H, *_strided(a), *_strided(rec), *_strided(c_prev), *_strided(c), *_strided(tanh_c), *_strided(h), *_strided(r))

    @staticmethod
    def backward(a, da, c_prev, tanh_c, dh_out, dh_rec, dc, dr):
        D, n, H = dh_out.shape
        fn = getattr(_library(), f"cell_backward_{_C_TYPES[a.dtype][0]}")
        m = 0 if dh_rec is None else dh_rec.shape[1]
        fn(D, n, H, *_strided(a), *_strided(da), *_strided(c_prev), *_strided(tanh_c), *_strided(dh_out), *_strided(dh_rec), m,
           *_strided(dc), *_strided(dr))
