/* The gated linear scan on the CPU (see cpu.py): one pass over time per direction,
 * forward and a hand-written backward, over one (batch range, channel range) tile per call.
 *
 * One body, instantiated once per storage type of f, x, o, h and the gradients: this file
 * includes itself (the #else part) with SCALAR the storage type and LD/ST converting to
 * and from ACC, the type of the state and the arithmetic (float for float32 and bfloat16
 * storage, double for float64, which is there so gradcheck can check the backward). The
 * channel loop is innermost and contiguous so the compiler vectorises it, and the
 * flag-specialised row functions are forced inline so each flag combination compiles
 * branch-free.
 */
#ifndef SCALAR
#include "prelude.h"
INLINE float sigmoid_f(float a) { return 1.0f / (1.0f + exp_f32(-a)); }
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

#define SUFFIX f32
#define SCALAR float
#define ACC float
#define LD ld_f32
#define ST st_f32
#define SIGMOID sigmoid_f
#include __FILE__
#undef SUFFIX
#undef SCALAR
#undef ACC
#undef LD
#undef ST
#undef SIGMOID

#define SUFFIX bf16
#define SCALAR uint16_t
#define ACC float
#define LD ld_bf16
#define ST st_bf16
#define SIGMOID sigmoid_f
#include __FILE__
#undef SUFFIX
#undef SCALAR
#undef ACC
#undef LD
#undef ST
#undef SIGMOID

#define SUFFIX f64
#define SCALAR double
#define ACC double
#define LD ld_f64
#define ST st_f64
#define SIGMOID sigmoid_d
#include __FILE__
#undef SUFFIX
#undef SCALAR
#undef ACC
#undef LD
#undef ST
#undef SIGMOID

#else /* the body, once per storage type */
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
#endif
