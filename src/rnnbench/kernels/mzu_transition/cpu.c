/* The MZU scan's small per-step pieces on the CPU (see cpu.py): zone norms and the zone
 * cosine, N x N self-attention per (M-function, sequence), and the candidate, gate and
 * state update with layer norm; each forward and backward one pass over its rows.
 *
 * One body, instantiated once per type: this file includes itself (the #else part) with
 * SCALAR float (exp_f32, vectorisable, about 2 ulp) and double (libm, for gradcheck).
 * Built with -fassociative-math (see cpu.py), so exp_f32 rounds with rintf (prelude.h).
 */
#ifndef SCALAR
#define EXP_RINT_ROUNDING
#include "prelude.h"
INLINE double exp_f64(double a) { return exp(a); }
INLINE float sqrt_f32(float a) { return sqrtf(a); }
INLINE double sqrt_f64(double a) { return sqrt(a); }

#define SUFFIX f32
#define SCALAR float
#define EXP exp_f32
#define SQRT sqrt_f32
#include __FILE__
#undef SUFFIX
#undef SCALAR
#undef EXP
#undef SQRT

#define SUFFIX f64
#define SCALAR double
#define EXP exp_f64
#define SQRT sqrt_f64
#include __FILE__
#undef SUFFIX
#undef SCALAR
#undef EXP
#undef SQRT

#else /* the body, once per type */
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

/* tanh(v) as 1 - 2 / (1 + e^2v) loses the digits of a small |v| to the cancellation (absolute error
   ~1 ulp of 1). A raw M_h (no layer norm before the tanh) is mostly below 0.1, so under |v| < 0.25
   the odd Taylor series to v^11 (truncation below 1e-10) keeps the relative error at float's;
   double (the gradcheck type) takes libm's tanh. */
INLINE SCALAR NAME(tanh_raw)(SCALAR v) {
    if (sizeof(SCALAR) == sizeof(double)) return (SCALAR)tanh((double)v);
    SCALAR v2 = v * v;
    SCALAR series = v * (1 + v2 * ((SCALAR)(-1.0 / 3) + v2 * ((SCALAR)(2.0 / 15) + v2 * ((SCALAR)(-17.0 / 315)
                    + v2 * ((SCALAR)(62.0 / 2835) + v2 * (SCALAR)(-1382.0 / 155925))))));
    SCALAR far = 1 - 2 / (1 + EXP(2 * v));
    return v2 < (SCALAR)0.0625 ? series : far;
}

/* ln_gate: the layer norm (statistics mu, r) is on m_g before the sigmoid (1) or on m_h before
   the tanh (0). Passed as a literal by the callers, so each placement compiles to its own loop. */
INLINE void NAME(gate_row)(int64_t H, const SCALAR *restrict mh, const SCALAR *restrict mg,
                           const SCALAR *restrict gamma, const SCALAR *restrict beta, SCALAR mu, SCALAR r,
                           const SCALAR *restrict sr, const SCALAR *restrict dr, SCALAR *restrict o,
                           SCALAR *restrict c, SCALAR *restrict g, int has_drop, int ln_gate) {
    for (int64_t k = 0; k < H; k++) {
        SCALAR yh = ln_gate ? mh[k] : (mh[k] - mu) * r * gamma[k] + beta[k];
        SCALAR yg = ln_gate ? (mg[k] - mu) * r * gamma[k] + beta[k] : mg[k];
        SCALAR cv = ln_gate ? NAME(tanh_raw)(yh) : 1 - 2 / (1 + EXP(2 * yh));
        SCALAR gv = 1 / (1 + EXP(-yg));
        SCALAR dropped = has_drop ? cv * dr[k] : cv;
        c[k] = cv;
        g[k] = gv;
        o[k] = sr[k] + gv * (dropped - sr[k]);
    }
}

/* Candidate and gate: m [2, B, H] (M_h, M_g outputs), s [B, H] the state, drop [B, H] or NULL.
   ln_gate 1: cand = tanh(m_h), g = sigmoid(LN(m_g)); 0: cand = tanh(LN(m_h)), g = sigmoid(m_g);
   new = s + g (cand * drop - s); keeps the layer norm's mean, rstd [B]. */
void NAME(gate_forward)(int64_t B, int64_t H, int64_t ln_gate, const SCALAR *m, const SCALAR *gamma, const SCALAR *beta,
                        double eps, const SCALAR *s, const SCALAR *drop, SCALAR *out, SCALAR *mean, SCALAR *rstd,
                        SCALAR *cand, SCALAR *gate) {
    for (int64_t b = 0; b < B; b++) {
        const SCALAR *restrict mh = m + b * H, *restrict mg = m + (B + b) * H, *restrict sr = s + b * H;
        const SCALAR *restrict ml = ln_gate ? mg : mh;
        const SCALAR *restrict dr = drop ? drop + b * H : 0;
        SCALAR *restrict o = out + b * H, *restrict c = cand + b * H, *restrict g = gate + b * H;
        SCALAR mu = 0, var = 0;
        for (int64_t k = 0; k < H; k++) mu += ml[k];
        mu /= (SCALAR)H;
        for (int64_t k = 0; k < H; k++) var += (ml[k] - mu) * (ml[k] - mu);
        SCALAR r = 1 / SQRT(var / (SCALAR)H + (SCALAR)eps);
        mean[b] = mu;
        rstd[b] = r;
        if (ln_gate) {
            if (dr) NAME(gate_row)(H, mh, mg, gamma, beta, mu, r, sr, dr, o, c, g, 1, 1);
            else NAME(gate_row)(H, mh, mg, gamma, beta, mu, r, sr, dr, o, c, g, 0, 1);
        } else {
            if (dr) NAME(gate_row)(H, mh, mg, gamma, beta, mu, r, sr, dr, o, c, g, 1, 0);
            else NAME(gate_row)(H, mh, mg, gamma, beta, mu, r, sr, dr, o, c, g, 0, 0);
        }
    }
}

/* One row of the adjoint: dsr = dL/ds; dplain = dL/d(the m row without layer norm); dxhat =
   dL/d(normalised row) * gamma, for the layer norm's backward; adds to dgamma, dbeta. */
INLINE void NAME(gate_back_row)(int64_t H, const SCALAR *restrict dn, const SCALAR *restrict ml,
                                const SCALAR *restrict c, const SCALAR *restrict g, const SCALAR *restrict sr,
                                const SCALAR *restrict dr, const SCALAR *restrict gamma, SCALAR mu, SCALAR r,
                                SCALAR *restrict dsr, SCALAR *restrict dplain, SCALAR *restrict dgamma,
                                SCALAR *restrict dbeta, SCALAR *restrict dxhat, int has_drop, int ln_gate) {
    for (int64_t k = 0; k < H; k++) {
        SCALAR dropped = has_drop ? c[k] * dr[k] : c[k];
        SCALAR dd = dn[k] * g[k];
        dsr[k] = dn[k] - dd;
        SCALAR dyg = dn[k] * (dropped - sr[k]) * g[k] * (1 - g[k]);  /* through the sigmoid */
        SCALAR dyh = (has_drop ? dd * dr[k] : dd) * (1 - c[k] * c[k]);  /* through the tanh */
        SCALAR dy = ln_gate ? dyg : dyh;
        dplain[k] = ln_gate ? dyh : dyg;
        dgamma[k] += dy * (ml[k] - mu) * r;
        dbeta[k] += dy;
        dxhat[k] = dy * gamma[k];
    }
}

/* The adjoint: dnew [B, H] -> ds [B, H], dm [2, B, H]; adds to dgamma, dbeta [H]. */
void NAME(gate_backward)(int64_t B, int64_t H, int64_t ln_gate, const SCALAR *dnew, const SCALAR *m, const SCALAR *mean,
                         const SCALAR *rstd, const SCALAR *gamma, const SCALAR *cand, const SCALAR *gate,
                         const SCALAR *s, const SCALAR *drop, SCALAR *ds, SCALAR *dm, SCALAR *dgamma, SCALAR *dbeta) {
    SCALAR dxhat[H];
    for (int64_t b = 0; b < B; b++) {
        const SCALAR *restrict dn = dnew + b * H, *restrict c = cand + b * H;
        const SCALAR *restrict ml = m + ((ln_gate ? B : 0) + b) * H;
        const SCALAR *restrict g = gate + b * H, *restrict sr = s + b * H;
        const SCALAR *restrict dr = drop ? drop + b * H : 0;
        SCALAR *restrict dsr = ds + b * H;
        SCALAR *restrict dml = dm + ((ln_gate ? B : 0) + b) * H, *restrict dplain = dm + ((ln_gate ? 0 : B) + b) * H;
        SCALAR mu = mean[b], r = rstd[b], sum_dx = 0, sum_dxx = 0;
        if (ln_gate) {
            if (dr) NAME(gate_back_row)(H, dn, ml, c, g, sr, dr, gamma, mu, r, dsr, dplain, dgamma, dbeta, dxhat, 1, 1);
            else NAME(gate_back_row)(H, dn, ml, c, g, sr, dr, gamma, mu, r, dsr, dplain, dgamma, dbeta, dxhat, 0, 1);
        } else {
            if (dr) NAME(gate_back_row)(H, dn, ml, c, g, sr, dr, gamma, mu, r, dsr, dplain, dgamma, dbeta, dxhat, 1, 0);
            else NAME(gate_back_row)(H, dn, ml, c, g, sr, dr, gamma, mu, r, dsr, dplain, dgamma, dbeta, dxhat, 0, 0);
        }
        for (int64_t k = 0; k < H; k++) {
            sum_dx += dxhat[k];
            sum_dxx += dxhat[k] * (ml[k] - mu) * r;
        }
        sum_dx /= (SCALAR)H;
        sum_dxx /= (SCALAR)H;
        for (int64_t k = 0; k < H; k++) dml[k] = r * (dxhat[k] - sum_dx - (ml[k] - mu) * r * sum_dxx);
    }
}
#undef NAME
#endif
