"""Gated linear scan: the recurrence of the RCRN listener and the DCU cell.

    c_t = f_t * c_{t-1} + (1 - f_t) * x_t
    h_t = o_t * c_t          (h_t = c_t when no output gate is given)

with f, o either gate values in [0, 1] or, with ``logits=True``, pre-sigmoid
values (the sigmoid is then applied inside the op, so a fused kernel can do it
in registers). Positions where ``mask`` is False are neither read nor written:
the state carries over them and their output is 0. ``reverse=True`` runs each
sequence from its own last token backwards.

``reference`` is the specification; ``gated_scan`` dispatches by device
(``impl=`` forces one implementation):

- ``"cpu"``: one pass over time in compiled C per direction (forward, and a
  hand-written backward), batch rows split across threads. A per-step torch
  loop pays a dozen op dispatches per time step for a few thousand flops each;
  the scan itself is memory-bound, so a single fused pass is what CPUs can do.
  The C source below is built once by the system C compiler (``$CC``, default
  ``cc``) into ``$RNNBENCH_CACHE/kernels`` (default ``.cache/rnnbench``) and
  loaded through ctypes, which needs no torch headers (builds in about a
  second) and releases the GIL so the threads run in parallel.
- ``"triton"``: ``_gated_scan_triton``, for CUDA tensors (and for CPU tensors
  under ``TRITON_INTERPRET=1``, which is how the tests run it).

Both keep the state in float32 for float32 and bfloat16 inputs (the CPU path
keeps float64 inputs in float64, so gradcheck can test its backward) and share
one autograd function: the forward saves the state before each step, the
backward runs the scan's adjoint (itself a gated scan in the opposite
direction).
"""
from __future__ import annotations

import ctypes
import functools
import os
import warnings
from concurrent.futures import ThreadPoolExecutor

import torch

from rnnbench.kernels import _c_build

IMPLS = ("reference", "cpu", "triton")


def reference(
    f: torch.Tensor,
    x: torch.Tensor,
    mask: torch.Tensor,
    o: torch.Tensor | None = None,
    c0: torch.Tensor | None = None,
    reverse: bool = False,
    logits: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Plain per-step loop. f, x, o: [B, T, D]; mask: [B, T]; c0: [B, D].

    Returns (h [B, T, D] in x's dtype, c_last [B, D] float32: the state after
    each sequence's last real token).
    """
    B, T, D = x.shape
    c = torch.zeros(B, D, dtype=torch.float32, device=x.device) if c0 is None else c0.float()
    outputs = [None] * T
    steps = range(T - 1, -1, -1) if reverse else range(T)
    for t in steps:
        f_t = f[:, t].float()
        o_t = None if o is None else o[:, t].float()
        if logits:
            f_t = torch.sigmoid(f_t)
            o_t = None if o_t is None else torch.sigmoid(o_t)
        c_new = f_t * c + (1 - f_t) * x[:, t].float()
        keep = mask[:, t].unsqueeze(-1)
        c = torch.where(keep, c_new, c)
        h_t = c_new if o_t is None else o_t * c_new
        outputs[t] = torch.where(keep, h_t, torch.zeros_like(h_t)).to(x.dtype)
    return torch.stack(outputs, dim=1), c


def gated_scan(f, x, mask, o=None, c0=None, reverse=False, logits=False, impl: str | None = None):
    """Run the scan with the implementation for x's device (or ``impl``).

    Same arguments and results as ``reference``. The default is "triton" on CUDA
    and "cpu" elsewhere ("reference", with a warning, where no C compiler exists).
    """
    if impl is None:
        impl = "triton" if x.is_cuda else ("cpu" if _c_compiler() else _no_compiler_fallback())
    if impl == "reference":
        return reference(f, x, mask, o=o, c0=c0, reverse=reverse, logits=logits)
    if impl == "cpu":
        if any(t is not None and t.device.type != "cpu" for t in (f, x, o, c0)):
            raise ValueError(f"gated_scan impl='cpu' needs CPU tensors, got {x.device}")
        backend = _CpuBackend
    elif impl == "triton":
        backend = _triton_backend()
    else:
        raise ValueError(f"gated_scan: unknown impl {impl!r} (known: {', '.join(IMPLS)})")
    _check_shapes(f, x, mask, o, c0)
    save = torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (f, x, o, c0))
    return _Scan.apply(backend, f, x, o, c0, mask, reverse, logits, save)


def _check_shapes(f, x, mask, o, c0) -> None:
    """The kernels index raw memory by x's shape: a mismatch must stop here, not read out of bounds."""
    B, T, D = x.shape if x.dim() == 3 else (None, None, None)
    if (
        B is None or f.shape != x.shape or (o is not None and o.shape != x.shape)
        or mask.shape != (B, T) or (c0 is not None and c0.shape != (B, D))
    ):
        named = dict(f=f, x=x, mask=mask, o=o, c0=c0)
        shapes = {name: None if t is None else tuple(t.shape) for name, t in named.items()}
        raise ValueError(f"gated_scan expects f, x, o of shape [B, T, D], mask [B, T] and c0 [B, D]; got {shapes}")


def _triton_backend():
    """The Triton module, imported on first use so the package works without Triton."""
    try:
        from rnnbench.kernels import _gated_scan_triton
    except ModuleNotFoundError as error:
        if error.name != "triton":
            raise
        raise RuntimeError("gated_scan impl='triton' needs Triton: pip install 'rnnbench[kernels]'") from error
    return _gated_scan_triton


class _Scan(torch.autograd.Function):
    """Autograd glue shared by the fast implementations.

    A backend provides ``forward(f, x, o, c0, mask, reverse, logits, save) ->
    (h, c_last, c_prev)``, where c_prev [B, T, D] is the state before each real
    step (None unless ``save``), and ``backward(f, x, o, mask, c_prev, dh,
    dc_last, reverse, logits) -> (df, dx, do, dc0)``. Inputs may be strided in
    batch and time; the last dimension must be contiguous.
    """

    @staticmethod
    def forward(ctx, backend, f, x, o, c0, mask, reverse, logits, save):
        f, x, o = (_last_dim_contiguous(t) for t in (f, x, o))
        mask = mask.to(device=x.device, dtype=torch.bool)
        h, c_last, c_prev = backend.forward(f, x, o, c0, mask, reverse, logits, save)
        ctx.backend, ctx.reverse, ctx.logits = backend, reverse, logits
        ctx.c0_dtype = None if c0 is None else c0.dtype
        ctx.save_for_backward(f, x, o, mask, c_prev)
        return h, c_last

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dh, dc_last):
        f, x, o, mask, c_prev = ctx.saved_tensors
        df, dx, do, dc0 = ctx.backend.backward(
            f, x, o, mask, c_prev, _last_dim_contiguous(dh), dc_last.contiguous(), ctx.reverse, ctx.logits
        )
        dc0 = None if ctx.c0_dtype is None else dc0.to(ctx.c0_dtype)
        do = None if o is None else do.to(o.dtype)
        return None, df.to(f.dtype), dx.to(x.dtype), do, dc0, None, None, None, None


def _last_dim_contiguous(t: torch.Tensor | None) -> torch.Tensor | None:
    """Kernels take batch and time strides (so channel slices need no copy) but unit channel stride."""
    return t if t is None or t.stride(-1) == 1 else t.contiguous()


# ---------------------------------------------------------------- the CPU fast path

# One C body, instantiated once per storage type of f, x, o, h and the gradients
# (SCALAR, with LD/ST converting to and from ACC, the type of the state and the
# arithmetic: float for float32 and bfloat16 storage, double for float64, which
# is there so gradcheck can check the hand-written backward).
# Work is one (batch range, channel range) tile per call; the channel loop is
# innermost and contiguous so the compiler vectorises it, and the flag-specialised
# row functions are forced inline so each flag combination compiles branch-free.
_C_PRELUDE = _c_build.c_prelude("exp_approx") + r"""
INLINE float sigmoid_f(float a) { return 1.0f / (1.0f + exp_approx(-a)); }
INLINE double sigmoid_d(double a) { return 1.0 / (1.0 + exp(-a)); }

INLINE float ld_f32(float v) { return v; }
INLINE float st_f32(float v) { return v; }
INLINE double ld_f64(double v) { return v; }
INLINE double st_f64(double v) { return v; }
INLINE float ld_bf16(uint16_t v) {
    uint32_t u = (uint32_t)v << 16;
    float r;
    memcpy(&r, &u, sizeof r);
    return r;
}
/* Round to nearest even, as torch's float -> bfloat16 cast (NaN stays NaN). */
INLINE uint16_t st_bf16(float v) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
"""

_C_BODY = r"""
#define NAME(n) CAT(n, SUFFIX)

INLINE void NAME(fwd_row)(int64_t n, const SCALAR *restrict f, const SCALAR *restrict x,
                          const SCALAR *restrict o, SCALAR *restrict h, ACC *restrict cp,
                          ACC *restrict c, int logits, int has_o, int save) {
    for (int64_t d = 0; d < n; d++) {
        ACC fg = LD(f[d]);
        if (logits) fg = SIGMOID(fg);
        ACC prev = c[d];
        if (save) cp[d] = prev;
        ACC cn = fg * prev + (1 - fg) * LD(x[d]);
        c[d] = cn;
        ACC hv = cn;
        if (has_o) {
            ACC og = LD(o[d]);
            if (logits) og = SIGMOID(og);
            hv = og * cn;
        }
        h[d] = ST(hv);
    }
}

/* h and c_prev are contiguous [B, T, D]; c holds c0 on entry and c_last on exit. */
void NAME(gs_forward)(int64_t T, int64_t D, int64_t b0, int64_t b1, int64_t d0, int64_t d1,
                      const SCALAR *f, int64_t fsb, int64_t fst, const SCALAR *x, int64_t xsb, int64_t xst,
                      const SCALAR *o, int64_t osb, int64_t ost, const uint8_t *mask, int64_t msb, int64_t mst,
                      SCALAR *h, ACC *c_prev, ACC *c, int reverse, int logits) {
    int has_o = o != 0, save = c_prev != 0;
    int64_t n = d1 - d0;
    for (int64_t b = b0; b < b1; b++) {
        ACC *cb = c + b * D + d0;
        for (int64_t i = 0; i < T; i++) {
            int64_t t = reverse ? T - 1 - i : i;
            SCALAR *hr = h + (b * T + t) * D + d0;
            if (!mask[b * msb + t * mst]) {
                memset(hr, 0, n * sizeof(SCALAR));
                continue;
            }
            const SCALAR *fr = f + b * fsb + t * fst + d0, *xr = x + b * xsb + t * xst + d0;
            const SCALAR *orow = has_o ? o + b * osb + t * ost + d0 : 0;
            ACC *cpr = save ? c_prev + (b * T + t) * D + d0 : 0;
            switch (logits * 4 + has_o * 2 + save) {
            case 0: NAME(fwd_row)(n, fr, xr, orow, hr, cpr, cb, 0, 0, 0); break;
            case 1: NAME(fwd_row)(n, fr, xr, orow, hr, cpr, cb, 0, 0, 1); break;
            case 2: NAME(fwd_row)(n, fr, xr, orow, hr, cpr, cb, 0, 1, 0); break;
            case 3: NAME(fwd_row)(n, fr, xr, orow, hr, cpr, cb, 0, 1, 1); break;
            case 4: NAME(fwd_row)(n, fr, xr, orow, hr, cpr, cb, 1, 0, 0); break;
            case 5: NAME(fwd_row)(n, fr, xr, orow, hr, cpr, cb, 1, 0, 1); break;
            case 6: NAME(fwd_row)(n, fr, xr, orow, hr, cpr, cb, 1, 1, 0); break;
            default: NAME(fwd_row)(n, fr, xr, orow, hr, cpr, cb, 1, 1, 1); break;
            }
        }
    }
}

INLINE void NAME(bwd_row)(int64_t n, const SCALAR *restrict f, const SCALAR *restrict x,
                          const SCALAR *restrict o, const SCALAR *restrict dh, const ACC *restrict cp,
                          SCALAR *restrict df, SCALAR *restrict dx, SCALAR *restrict dout,
                          ACC *restrict g, int logits, int has_o) {
    for (int64_t d = 0; d < n; d++) {
        ACC fg = LD(f[d]);
        if (logits) fg = SIGMOID(fg);
        ACC xv = LD(x[d]), prev = cp[d];
        ACC cn = fg * prev + (1 - fg) * xv;
        ACC gh = LD(dh[d]);
        ACC gc = g[d];
        if (has_o) {
            ACC og = LD(o[d]);
            if (logits) og = SIGMOID(og);
            ACC gdo = gh * cn;
            if (logits) gdo *= og * (1 - og);
            dout[d] = ST(gdo);
            gc += gh * og;
        } else {
            gc += gh;
        }
        dx[d] = ST(gc * (1 - fg));
        ACC gdf = gc * (prev - xv);
        if (logits) gdf *= fg * (1 - fg);
        df[d] = ST(gdf);
        g[d] = gc * fg;
    }
}

/* df, dx, dout are contiguous [B, T, D]; g holds dc_last on entry and dc0 on exit. */
void NAME(gs_backward)(int64_t T, int64_t D, int64_t b0, int64_t b1, int64_t d0, int64_t d1,
                       const SCALAR *f, int64_t fsb, int64_t fst, const SCALAR *x, int64_t xsb, int64_t xst,
                       const SCALAR *o, int64_t osb, int64_t ost, const uint8_t *mask, int64_t msb, int64_t mst,
                       const SCALAR *dh, int64_t hsb, int64_t hst, const ACC *c_prev,
                       SCALAR *df, SCALAR *dx, SCALAR *dout, ACC *g, int reverse, int logits) {
    int has_o = o != 0;
    int64_t n = d1 - d0;
    for (int64_t b = b0; b < b1; b++) {
        ACC *gb = g + b * D + d0;
        for (int64_t i = 0; i < T; i++) {
            int64_t t = reverse ? i : T - 1 - i;
            int64_t out = (b * T + t) * D + d0;
            SCALAR *dor = has_o ? dout + out : 0;
            if (!mask[b * msb + t * mst]) {
                memset(df + out, 0, n * sizeof(SCALAR));
                memset(dx + out, 0, n * sizeof(SCALAR));
                if (has_o) memset(dor, 0, n * sizeof(SCALAR));
                continue;
            }
            const SCALAR *fr = f + b * fsb + t * fst + d0, *xr = x + b * xsb + t * xst + d0;
            const SCALAR *orow = has_o ? o + b * osb + t * ost + d0 : 0;
            const SCALAR *dhr = dh + b * hsb + t * hst + d0;
            const ACC *cpr = c_prev + out;
            switch (logits * 2 + has_o) {
            case 0: NAME(bwd_row)(n, fr, xr, orow, dhr, cpr, df + out, dx + out, dor, gb, 0, 0); break;
            case 1: NAME(bwd_row)(n, fr, xr, orow, dhr, cpr, df + out, dx + out, dor, gb, 0, 1); break;
            case 2: NAME(bwd_row)(n, fr, xr, orow, dhr, cpr, df + out, dx + out, dor, gb, 1, 0); break;
            default: NAME(bwd_row)(n, fr, xr, orow, dhr, cpr, df + out, dx + out, dor, gb, 1, 1); break;
            }
        }
    }
}
#undef NAME
"""

# storage dtype -> (suffix, SCALAR, ACC, state dtype)
_C_TYPES = {
    torch.float32: ("f32", "float", "float", torch.float32),
    torch.bfloat16: ("bf16", "uint16_t", "float", torch.float32),
    torch.float64: ("f64", "double", "double", torch.float64),
}


def _c_source() -> str:
    parts = [_C_PRELUDE]
    for suffix, scalar, acc, _ in _C_TYPES.values():
        sigmoid = "sigmoid_d" if acc == "double" else "sigmoid_f"
        macros = dict(SUFFIX=suffix, SCALAR=scalar, ACC=acc, LD=f"ld_{suffix}", ST=f"st_{suffix}", SIGMOID=sigmoid)
        parts += [f"#define {k} {v}\n" for k, v in macros.items()]
        parts.append(_C_BODY)
        parts += [f"#undef {k}\n" for k in macros]
    return "".join(parts)


# The value-preserving part of -ffast-math: it lets gcc vectorise the compare,
# select and min/max of the loops (with trapping math one form of the exp clamp
# ran 10x slower), but never reorders arithmetic, so results follow the
# reference's order. Full -ffast-math would also, with gcc < 13, switch the
# whole process to flush-to-zero. -march=native where the compiler has it: the
# build is keyed by the CPU, so it may use this machine's vector width.


@functools.cache
def _c_compiler() -> str | None:
    return _c_build.compiler()


@functools.cache
def _no_compiler_fallback() -> str:
    warnings.warn(
        "gated_scan: no C compiler found (set CC), so the CPU fast path is unavailable; "
        "using the per-step reference loop",
        stacklevel=3,
    )
    return "reference"


@functools.cache
def _cpu_library() -> ctypes.CDLL:
    """Build (once per source, flags, compiler and CPU) and load the C scan."""
    if _c_compiler() is None:
        raise RuntimeError("gated_scan impl='cpu' needs a C compiler: install one or set CC, or use impl='reference'")
    lib = _c_build.build("gated_scan", _c_source(), targets=(["-march=native"], []))
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    strided = [ptr, i64, i64]
    for suffix, *_ in _C_TYPES.values():
        flags = [ctypes.c_int, ctypes.c_int]
        getattr(lib, f"gs_forward_{suffix}").argtypes = [i64] * 6 + strided * 4 + [ptr] * 3 + flags
        getattr(lib, f"gs_backward_{suffix}").argtypes = [i64] * 6 + strided * 5 + [ptr] * 5 + flags
    return lib


@functools.cache
def _pool(threads: int, pid: int) -> ThreadPoolExecutor:
    """Worker threads for the C calls; per process, as a forked child inherits no threads."""
    return ThreadPoolExecutor(threads, thread_name_prefix="gated_scan")


def _tiles(B: int, D: int) -> list[tuple[int, int, int, int]]:
    """(b0, b1, d0, d1) tiles, one per thread of torch's count: batch rows, or channel
    ranges when the batch is smaller. A scan with fewer than 4096 channel-rows per
    thread stays on the calling thread, where handing it off would cost more."""
    threads = max(1, min(torch.get_num_threads(), B * D // 4096))
    if B >= threads:
        edges = [B * i // threads for i in range(threads + 1)]
        return [(edges[i], edges[i + 1], 0, D) for i in range(threads) if edges[i] < edges[i + 1]]
    edges = [(D * i // threads) // 16 * 16 for i in range(threads)] + [D]
    return [(0, B, edges[i], edges[i + 1]) for i in range(threads) if edges[i] < edges[i + 1]]


def _run_tiles(fn, T: int, B: int, D: int, *args) -> None:
    """fn(T, D, b0, b1, d0, d1, *args) over the tiles, in parallel (ctypes releases the GIL)."""
    tiles = _tiles(B, D)
    if len(tiles) == 1:
        fn(T, D, *tiles[0], *args)
        return
    list(_pool(len(tiles), os.getpid()).map(lambda tile: fn(T, D, *tile, *args), tiles))


def _strided(t: torch.Tensor | None) -> list:
    return [None, 0, 0] if t is None else [t.data_ptr(), t.stride(0), t.stride(1)]


def _storage(*tensors: torch.Tensor | None) -> tuple[torch.dtype, list]:
    """The C kernels read f, x, o and dh in one storage type: bfloat16 only if all
    are, float64 if any is, float32 otherwise (callers pass one dtype, so the
    conversion is a no-op in practice)."""
    dtypes = {t.dtype for t in tensors if t is not None}
    if dtypes == {torch.bfloat16}:
        dtype = torch.bfloat16
    else:
        dtype = torch.float64 if torch.float64 in dtypes else torch.float32
    return dtype, [None if t is None else t.to(dtype) for t in tensors]


class _CpuBackend:
    """The compiled C scan behind ``_Scan`` (see the module docstring)."""

    @staticmethod
    def forward(f, x, o, c0, mask, reverse, logits, save):
        B, T, D = x.shape
        out_dtype = x.dtype
        dtype, (f, x, o) = _storage(f, x, o)
        suffix, _, _, state = _C_TYPES[dtype]
        h = torch.empty(B, T, D, dtype=dtype)
        c = torch.zeros(B, D, dtype=state) if c0 is None else c0.to(state).contiguous().clone()
        c_prev = torch.empty(B, T, D, dtype=state) if save else None
        _run_tiles(
            getattr(_cpu_library(), f"gs_forward_{suffix}"), T, B, D,
            *_strided(f), *_strided(x), *_strided(o), *_strided(mask.view(torch.uint8)),
            h.data_ptr(), None if c_prev is None else c_prev.data_ptr(), c.data_ptr(), int(reverse), int(logits),
        )
        return h.to(out_dtype), c, c_prev

    @staticmethod
    def backward(f, x, o, mask, c_prev, dh, dc_last, reverse, logits):
        B, T, D = x.shape
        dtype, (f, x, o, dh) = _storage(f, x, o, dh)
        suffix, _, _, state = _C_TYPES[dtype]
        df, dx = torch.empty(B, T, D, dtype=dtype), torch.empty(B, T, D, dtype=dtype)
        do = None if o is None else torch.empty(B, T, D, dtype=dtype)
        g = dc_last.to(state).contiguous().clone()
        _run_tiles(
            getattr(_cpu_library(), f"gs_backward_{suffix}"), T, B, D,
            *_strided(f), *_strided(x), *_strided(o), *_strided(mask.view(torch.uint8)),
            *_strided(dh), c_prev.data_ptr(), df.data_ptr(), dx.data_ptr(), None if do is None else do.data_ptr(),
            g.data_ptr(), int(reverse), int(logits),
        )
        return df, dx, do, g
