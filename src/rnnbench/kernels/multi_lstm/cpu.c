/* The LSTM cell's pointwise step on the CPU (see cpu.py): gates, c, tanh(c) and h (plus
 * the optional lateral residual) forward, the four gate gradients and dL/dc_{t-1} backward,
 * one pass per call over the step's rows of every direction.
 *
 * a: [D, n, 4H] gates (i, f, g, o); every other tensor [D, n, H]; each given as
 * (pointer, direction stride, row stride) with unit stride along the last dimension.
 * One body, instantiated once per type: this file includes itself (the #else part) with
 * SCALAR float (exp_f32, vectorisable, about 2 ulp) and double (libm's exp, for gradcheck).
 */
#ifndef SCALAR
#include "prelude.h"
INLINE double exp_f64(double a) { return exp(a); }

#define SUFFIX f32
#define SCALAR float
#define EXP exp_f32
#include __FILE__
#undef SUFFIX
#undef SCALAR
#undef EXP

#define SUFFIX f64
#define SCALAR double
#define EXP exp_f64
#include __FILE__
#undef SUFFIX
#undef SCALAR
#undef EXP

#else /* the body, once per type */
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
#endif
