// Low-bit element types (ONNX codes 17-24) <-> float32, with integer and
// exactly rounded float operations (multiplications by powers of two built
// from their bits, roundEven), so that every device gives the ONNX results:
// the rules of include/oaax_vulkan/lowbit_types.h, which the toolchain uses
// for constants. A "code" is one element's bits (8 or 4).
//   17 FLOAT8E4M3FN   bias 7,  3 mantissa bits, max 448,   NaN S.1111.111, no Inf
//   18 FLOAT8E4M3FNUZ bias 8,  3 mantissa bits, max 240,   NaN 0x80 only, no -0
//   19 FLOAT8E5M2     bias 15, 2 mantissa bits, max 57344, IEEE-like Inf / NaN
//   20 FLOAT8E5M2FNUZ bias 16, 2 mantissa bits, max 57344, NaN 0x80 only, no -0
//   21 UINT4, 22 INT4 (two's complement)
//   23 FLOAT4E2M1     bias 1,  1 mantissa bit,  max 6,     no Inf / NaN
//   24 FLOAT8E8M0     2^(code - 127), 0xFF NaN
// Float -> minifloat rounds to nearest even; `sat` clamps values beyond the
// largest finite magnitude (and Inf) to it, else they become NaN (Inf for
// E5M2); FLOAT4E2M1 always saturates and maps NaN to 0x8.
// Rounding mode bits (`mode`): bit 0 saturate, bits 1-2 E8M0 rounding
// (0 up, 1 down, 2 nearest, as the ONNX reference to_float8e8m0).

bool lowbit_is(uint t) { return t >= 17u && t <= 24u; }
bool lowbit_is_float(uint t) { return lowbit_is(t) && t != 21u && t != 22u; }
bool lowbit_is_packed4(uint t) { return t == 21u || t == 22u || t == 23u; }

// 2^k as a float32 for k in [-126, 127], exactly (from its bits).
float lowbit_pow2(int k) { return uintBitsToFloat(uint(k + 127) << 23); }

// Mantissa bits, bias and largest finite value of the minifloat types.
void lowbit_layout(uint t, out int mb, out int bias, out float maxv) {
  mb = 3; bias = 7; maxv = 448.0;
  if (t == 18u) { bias = 8; maxv = 240.0; }
  else if (t == 19u) { mb = 2; bias = 15; maxv = 57344.0; }
  else if (t == 20u) { mb = 2; bias = 16; maxv = 57344.0; }
  else if (t == 23u) { mb = 1; bias = 1; maxv = 6.0; }
}

// Code of type t -> float32 bits (INT4 / UINT4: the integer's bits as int).
uint lowbit_to_f32(uint t, uint code) {
  if (t == 21u) return code & 0xfu;
  if (t == 22u) return uint(bitfieldExtract(int(code), 0, 4));
  if (t == 24u) {
    code &= 0xffu;
    if (code == 0xffu) return 0x7fc00000u;
    return code == 0u ? 0x00400000u : (code << 23);  // 2^-127 is a float32 subnormal
  }
  int mb, bias; float maxv;
  lowbit_layout(t, mb, bias, maxv);
  uint bits = t == 23u ? 4u : 8u;
  code &= (1u << bits) - 1u;
  uint sbit = 1u << (bits - 1u);
  uint mag = code & (sbit - 1u);
  uint s = (code & sbit) != 0u ? 0x80000000u : 0u;
  if ((t == 18u || t == 20u) && code == 0x80u) return 0x7fc00000u;
  if (t == 17u && mag == 0x7fu) return s | 0x7fc00000u;
  if (t == 19u && mag >= 0x7cu) return mag == 0x7cu ? (s | 0x7f800000u) : (s | 0x7fc00000u);
  uint field = mag >> uint(mb);
  uint m = mag & ((1u << uint(mb)) - 1u);
  float v = field == 0u ? float(m) * lowbit_pow2(1 - bias - mb)
                        : float(m + (1u << uint(mb))) * lowbit_pow2(int(field) - bias - mb);
  return s | floatBitsToUint(v);
}

// float32 bits -> FLOAT8E8M0 code.
uint lowbit_f32_to_e8m0(uint b, uint mode) {
  uint e = (b >> 23) & 0xffu;
  if (e == 0xffu) return 0xffu;
  // 2^-127, code 0, is a float32 subnormal: exact, so no rounding moves it.
  if ((b & 0x7fffffffu) == 0x00400000u) return 0u;
  uint rm = (mode >> 1) & 3u;
  bool up = false;
  if (rm == 0u) up = (b & 0x7fffffu) != 0u;
  else if (rm == 2u) up = (b & 0x400000u) != 0u && ((b & 0x200000u) != 0u || (b & 0x1fffffu) != 0u || e > 0u);
  if (up && !((mode & 1u) != 0u && e == 0xfeu)) e += 1u;
  return e;
}

// float32 bits -> code of minifloat type t (17-20, 23).
uint lowbit_f32_to_minifloat(uint t, uint b, uint mode) {
  int mb, bias; float maxv;
  lowbit_layout(t, mb, bias, maxv);
  bool fnuz = t == 18u || t == 20u;
  uint sbit = t == 23u ? 0x8u : 0x80u;
  uint nan_code = t == 17u ? 0x7fu : (t == 19u ? 0x7eu : (t == 23u ? 0x8u : 0x80u));
  bool sat = (mode & 1u) != 0u || t == 23u;
  uint s = (b & 0x80000000u) != 0u ? sbit : 0u;
  uint zero = fnuz ? 0u : s;
  uint ab = b & 0x7fffffffu;
  if (ab > 0x7f800000u) return nan_code;
  int emin = 1 - bias;
  // Magnitude code of the largest finite value, for saturation.
  uint maxcode = (uint(mb) == 3u ? (t == 17u ? 0x7eu : 0x7fu) : (t == 23u ? 0x7u : (t == 19u ? 0x7bu : 0x7fu)));
  if (ab == 0x7f800000u) return sat ? (s | maxcode) : (t == 19u ? (s | 0x7cu) : nan_code);
  float a = uintBitsToFloat(ab);
  int e = max(int(ab >> 23) - 127, emin);
  // a / 2^(e - mb) and back, exactly: multiplications by powers of two.
  float r = roundEven(a * lowbit_pow2(mb - e));
  if (r == 0.0) return zero;
  float v = r * lowbit_pow2(e - mb);
  if (v > maxv) return sat ? (s | maxcode) : (t == 19u ? (s | 0x7cu) : nan_code);
  // Field and mantissa together: (e - emin) << mb plus r, whose carry (r =
  // 2^(mb+1)) moves into the exponent field.
  return s | ((uint(e - emin) << uint(mb)) + uint(r));
}

// float32 bits -> code of type t (INT4 / UINT4: of the int32 value `b`).
uint lowbit_from_f32(uint t, uint b, uint mode) {
  if (t == 21u || t == 22u) return b & 0xfu;
  if (t == 24u) return lowbit_f32_to_e8m0(b, mode);
  return lowbit_f32_to_minifloat(t, b, mode);
}
