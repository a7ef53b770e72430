/* The C every compiled kernel piece starts with: headers, INLINE and a vectorisable e^a.
 *
 * exp_f32 is Cephes' expf to about 2 ulp. It rounds a * log2(e) to an integer with the
 * (v + 1.5 * 2^23) - 1.5 * 2^23 trick, unless EXP_RINT_ROUNDING is defined before this
 * header: a piece built with -fassociative-math (the MZU's) must use rintf, since that
 * flag folds the trick to v.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#define INLINE static inline __attribute__((always_inline))
#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)

INLINE float exp_f32(float a) {
    a = __builtin_fminf(__builtin_fmaxf(a, -87.0f), 88.0f);
#ifdef EXP_RINT_ROUNDING
    float n = __builtin_rintf(a * 1.44269504088896341f);
#else
    float n = (a * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
#endif
    float r = a - n * 0.693359375f + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}
