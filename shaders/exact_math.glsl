// Float arithmetic that gives the IEEE-754 answer on any Vulkan driver.
// Vulkan lets a driver compute x / y as x * (1 / y) (2.5 ULP), fuse a * b + c
// into one fma, leave fma() unfused, and compute sin/cos to an absolute 2^-11
// inside [-pi, pi] only. Its additions, subtractions and multiplications are
// correctly rounded, and `precise` (SPIR-V NoContraction) keeps them from
// being fused or reordered, so the helpers below are built from those alone:
//   div_rn(x, y): the correctly rounded quotient (the residual x - q * y
//     computed exactly with Dekker's product, then one correction step) for
//     |x|, |y|, |x / y| in [2^-100, 2^100]; outside that the driver's quotient.
//     IEEE results for zeros, infinities and NaN (x / 0 = +-inf, 0 / 0 = NaN,
//     inf / inf = NaN) in every range; subnormal operands divided exactly
//     even where the driver flushes them to 0.
//   fmod_exact(x, y): C fmod (sign of x), exact for all finite x and y.
//   trig_reduced (sin, cos or tan): the argument reduced to
//     [-pi/4, pi/4] by multiples of pi/2 (Cody-Waite, pi/2 in four parts,
//     below 2^16; Payne-Hanek beyond), then polynomials: sin and cos within
//     ~2e-7 of the true value for every finite x, tan within ~2e-7 relative
//     to 1 + |tan x|.
// A test build defines FM_EMULATE_GPU_DIV to make the raw division a
// reciprocal that is one ULP off (FM_NO_DIV_CORRECTION: and to skip the
// correction, the kernels as a plain `/` would be), showing that the helpers
// keep the exact answer where a GPU's division does not
// (tests/toolchain/gpu_div_emulation.sh; docs/kernels.md, "Numerics on GPUs").
#ifndef OAAXVK_EXACT_MATH_GLSL
#define OAAXVK_EXACT_MATH_GLSL

#ifdef FM_EMULATE_GPU_DIV
// 1 / y moved by FM_GPU_DIV_ULPS ULP (default 1: away from zero; -1: toward
// zero), then a rounded product: a division as a GPU may compute it. IEEE
// special cases as the true division.
#ifndef FM_GPU_DIV_ULPS
#define FM_GPU_DIV_ULPS 1
#endif
float fm_raw_div(float x, float y) {
  if (y == 0.0 || isinf(y) || isnan(y) || isinf(x) || isnan(x) || x == 0.0) return x / y;
  precise const float inv = uintBitsToFloat(uint(int(floatBitsToUint(1.0 / y)) + (FM_GPU_DIV_ULPS)));
  precise const float q = x * inv;
  return q;
}
#else
float fm_raw_div(float x, float y) { return x / y; }
#endif

// a * b = p + e exactly (Dekker; Veltkamp split into 12-bit halves).
void fm_two_prod(float a, float b, out float p, out float e) {
  precise const float ca = 4097.0 * a, cb = 4097.0 * b;
  precise const float ah = ca - (ca - a), bh = cb - (cb - b);
  precise const float al = a - ah, bl = b - bh;
  precise const float pp = a * b;
  precise const float ee = ((ah * bh - pp) + ah * bl + al * bh) + al * bl;
  p = pp;
  e = ee;
}

bool fm_in_range(float v) { return abs(v) >= 7.8886091e-31 && abs(v) <= 1.2676506e30; }  // 2^-100, 2^100

float div_rn_normal(float x, float y) {
  const float q = fm_raw_div(x, y);
#ifdef FM_NO_DIV_CORRECTION
  return q;
#else
  if (!(fm_in_range(x) && fm_in_range(y) && fm_in_range(q))) return q;
  float p, e;
  fm_two_prod(q, y, p, e);
  precise const float r = (x - p) - e;  // x - p is exact: p is within a few ULP of x
  precise const float c = q + r * fm_raw_div(1.0, y);
  return c;
#endif
}
// A subnormal m 2^-149 as the integer m (exact), its exponent in e.
float fm_unsubnormal(float v, out int e) {
  const uint w = floatBitsToUint(v);
  const bool sub = (w & 0x7fffffffu) != 0u && (w & 0x7fffffffu) < 0x00800000u;
  e = sub ? -149 : 0;
  return sub ? uintBitsToFloat(floatBitsToUint(float(w & 0x7fffffu)) | (w & 0x80000000u)) : v;
}
// A driver may flush subnormal operands to 0 (SwiftShader's 1e-40 / 1e-40
// is NaN): they divide as integers, the quotient scaled back by two exact
// powers of 2.
float div_rn(float x, float y) {
  int ex, ey;
  const float xs = fm_unsubnormal(x, ex), ys = fm_unsubnormal(y, ey);
  const float q = div_rn_normal(xs, ys);
  if (ex == ey) return q;
  const int d = ex - ey, d1 = d / 2;
  precise const float r = (q * uintBitsToFloat(uint(127 + d1) << 23u)) * uintBitsToFloat(uint(127 + d - d1) << 23u);
  return r;
}

// C fmod, exact for all finite x and y (the result has the sign of x): the
// significands' remainder by binary long division, one doubling and
// conditional subtraction per exponent step of x above y (at most 254),
// integer arithmetic only, then scaled back by y's exponent (exact: the
// remainder is a multiple of y's unit in the last place).
float fmod_exact(float x, float y) {
  // y's zero test on the bits: a subnormal y is not 0 (a driver may flush it).
  if ((floatBitsToUint(y) & 0x7fffffffu) == 0u || isnan(x) || isnan(y) || isinf(x)) return uintBitsToFloat(0x7fc00000u);
  const uint bx = floatBitsToUint(x) & 0x7fffffffu, by = floatBitsToUint(y) & 0x7fffffffu;
  if (isinf(y) || bx < by) return x;
  const int ex = max(int(bx >> 23u), 1), ey = max(int(by >> 23u), 1);
  const uint mx = (bx & 0x7fffffu) | (bx >= 0x800000u ? 0x800000u : 0u);
  const uint my = (by & 0x7fffffu) | (by >= 0x800000u ? 0x800000u : 0u);
  uint r = mx % my;
  for (int e = ey; e < ex; ++e) {
    r <<= 1u;
    if (r >= my) r -= my;
  }
  const uint sign = floatBitsToUint(x) & 0x80000000u;
  return r == 0u ? uintBitsToFloat(sign) : uintBitsToFloat(floatBitsToUint(ldexp(float(r), ey - 150)) | sign);
}

// 2 / pi in binary, 224 bits after the point, behind one word of zeros (so
// that a window may start before the point).
const uint FM_TWO_OVER_PI[8] = uint[8](0u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u,
                                       0x3c439041u, 0xfe5163abu);
// Payne-Hanek reduction for 2^16 <= |x| < inf: |x| = m 2^(e - 23) with an
// integer m < 2^24, so x * 2 / pi = m * (bits of 2 / pi scaled by 2^(e - 23));
// the bits that make multiples of 4 drop out, and a 96-bit window of 2 / pi
// starting at weight 2 gives the quadrant (two integer bits) and 62 fraction
// bits. The fraction f, taken in [-1/2, 1/2), is converted from two pieces
// (no cancellation), and r = f pi / 2 is within 2 ULP.
float fm_reduce_half_pi_large(float x, out int quadrant) {
  const uint w = floatBitsToUint(x) & 0x7fffffffu;
  const uint m = (w & 0x7fffffu) | 0x800000u;
  const uint g0 = (w >> 23u) - 127u + 7u;  // bit of FM_TWO_OVER_PI at weight 2
  const uint word = g0 >> 5u, sh = g0 & 31u;
  // Words word .. word + 3 shifted left by sh (sh = 0: a 32-bit shift of the
  // next word would be undefined, so it is masked out).
  const uint a0 = FM_TWO_OVER_PI[word], a1 = FM_TWO_OVER_PI[word + 1u], a2 = FM_TWO_OVER_PI[word + 2u],
             a3 = FM_TWO_OVER_PI[word + 3u];
  const uint nsh = (32u - sh) & 31u, keep = sh == 0u ? 0u : 0xffffffffu;
  uint h0, l0, h1, l1, h2, l2, c1, c2;
  umulExtended(m, (a0 << sh) | ((a1 >> nsh) & keep), h0, l0);
  umulExtended(m, (a1 << sh) | ((a2 >> nsh) & keep), h1, l1);
  umulExtended(m, (a2 << sh) | ((a3 >> nsh) & keep), h2, l2);
  const uint r1 = uaddCarry(h2, l1, c1);                 // bits 32..63
  const uint r2 = uaddCarry(h1 + c1, l0, c2);  // bits 64..95 (a carry beyond adds a multiple of 4)
  uint q = r2 >> 30u;
  uint fhi = r2 & 0x3fffffffu, flo = r1;  // fraction: 30 + 32 bits
  bool negf = (fhi & 0x20000000u) != 0u;  // f >= 1/2: take f - 1, quadrant + 1
  if (negf) {
    q += 1u;
    uint borrow;
    flo = usubBorrow(0u, flo, borrow);
    fhi = (0x40000000u - fhi - borrow) & 0x3fffffffu;
  }
  precise const float f = float(fhi) * 9.313225746154785e-10 + float(flo) * 2.168404344971009e-19;  // 2^-30, 2^-62
  precise float r = f * 1.5707963267948966;
  if (negf) r = -r;
  if (x < 0.0) {
    r = -r;
    q = 4u - (q & 3u);
  }
  quadrant = int(q & 3u);
  return r;
}

// x - k * pi / 2 for k = round(x * 2 / pi), pi / 2 split into four floats,
// the first three with 8 significant bits, so that k times each is exact for
// |k| < 2^16 and each subtraction is exact or rounds a value below pi / 4
// (Cody-Waite); from |x| = 2^16 on, Payne-Hanek.
float fm_reduce_half_pi(float x, out int quadrant) {
  if (abs(x) >= 65536.0) return fm_reduce_half_pi_large(x, quadrant);
  precise const float k = roundEven(x * 0.63661975);
  precise const float r1 = x - k * 1.5703125;
  precise const float r2 = r1 - k * 4.84466552734375e-4;
  precise const float r3 = r2 - k * -6.407499313354492e-7;
  precise const float r4 = r3 - k * 9.92093629470503e-10;
  quadrant = int(mod(k, 4.0));  // in [0, 3] also for k < 0 or beyond int range
  return r4;
}
// Minimax polynomials on [-pi/4, pi/4] (absolute error below 1e-7).
float fm_sin_poly(float r) {
  precise const float r2 = r * r;
  precise const float s = r + r * r2 * (-1.6666654611e-1 + r2 * (8.3321608736e-3 + r2 * -1.9515295891e-4));
  return s;
}
float fm_cos_poly(float r) {
  precise const float r2 = r * r;
  precise const float c =
      1.0 - 0.5 * r2 + r2 * r2 * (4.166664568298827e-2 + r2 * (-1.388731625493765e-3 + r2 * 2.443315711809948e-5));
  return c;
}
// sin (which = 0), cos (1) or tan (2) of x, one reduction for the three
// (every call site of a helper is a copy in the compiled kernel). sin x and
// tan x round to x below 2^-12 (keeping -0 and subnormals); tan(r + q pi / 2)
// is tan(r) for even q and -1 / tan(r) for odd q.
float trig_reduced(float x, uint which) {
  if (isinf(x) || isnan(x)) return uintBitsToFloat(0x7fc00000u);
  if (which != 1u && abs(x) < 2.44140625e-4) return x;
  int q;
  const float r = fm_reduce_half_pi(x, q);
  const float s = fm_sin_poly(r), c = fm_cos_poly(r);
  if (which == 2u) {
    // Neither is subnormal (no float x lies that close to a multiple of
    // pi / 2), so the operands need no rescaling: div_rn_normal.
    const float t = div_rn_normal((q & 1) == 0 ? s : c, (q & 1) == 0 ? c : s);
    return (q & 1) == 0 ? t : -t;
  }
  if (which == 1u) q += 1;  // cos x = sin(x + pi / 2)
  const float v = (q & 1) == 0 ? s : c;
  return (q & 2) != 0 ? -v : v;
}
#endif
