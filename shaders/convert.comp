#version 450
#extension GL_GOOGLE_include_directive : require
// Data-type conversion at the graph boundary and for Cast. Elements are read
// from X in the storage format SRC (ONNX TensorProto.DataType code), converted
// to the semantic type SEM (float -> integer truncates toward zero, with NaN
// and out-of-range values as ONNX Runtime on x86-64 gives them: see
// f32_to_i64 and convert(); integers wrap to SEM's width (two's complement);
// != 0 for bool), and written to Y in the storage format DST. Device compute
// formats are 1 (float32) and 6 (int32, also bool as 0/1); 8-bit and 16-bit
// formats are packed little-endian into 32-bit words, int64 as two words (low
// word read; written sign-extended from an int32 source, all 64 bits from a
// float source), float64 as two words converted with integer operations (no
// shaderFloat64). float16 (10) and bfloat16 (16) are packed two per word; they
// convert to and from float32 with integer operations: exact widening, and
// narrowing with round-to-nearest-even, overflow to Inf, subnormals and NaN
// kept (IEEE 754; packHalf2x16's rounding is implementation-defined, so it is
// not used). A float16/bfloat16 SEM rounds the value to that precision even
// when DST is float32 (Cast to float16 inside the graph). uint32 (12) is one
// word, uint64 (13) two words like int64 (the runtime checks host values fit
// int32). The low-bit types (17-24, lowbit.glsl) are packed four (8-bit) or
// eight (4-bit, element 8w+k in bits 4k..4k+3 of word w) per word; their
// compute format is float32 (int32 for INT4 / UINT4), and a low-bit SEM
// rounds as Cast does with MODE (lowbit.glsl: saturate, E8M0 rounding).
// One invocation per output unit: a 32-bit word for 4/8/16-bit DST (8, 4 or
// 2 elements), else one element.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer Y_ { uint y[]; };
layout(constant_id = 0) const uint N = 1;    // elements
layout(constant_id = 1) const uint SRC = 1;  // storage dtype of X
layout(constant_id = 2) const uint DST = 1;  // storage dtype of Y
layout(constant_id = 3) const uint SEM = 1;  // semantic target dtype
layout(constant_id = 4) const uint MODE = 0;  // low-bit rounding (lowbit.glsl)
#include "common.glsl"
#include "float_order.glsl"
#include "lowbit.glsl"

bool is_float_dt(uint t) { return t == 1u || t == 11u || t == 10u || t == 16u || lowbit_is_float(t); }

// float16 bits -> float32 bits, exactly (subnormals normalized).
uint f16_to_f32(uint h) {
  uint s = (h & 0x8000u) << 16;
  uint e = (h >> 10) & 0x1fu;
  uint m = h & 0x3ffu;
  if (e == 31u) return s | 0x7f800000u | (m << 13);
  if (e != 0u) return s | ((e + 112u) << 23) | (m << 13);
  if (m == 0u) return s;
  int ex = 113;
  while ((m & 0x400u) == 0u) { m <<= 1; ex -= 1; }
  return s | (uint(ex) << 23) | ((m & 0x3ffu) << 13);
}
// float32 bits -> float16 bits, round to nearest even.
uint f32_to_f16(uint b) {
  uint s = (b >> 16) & 0x8000u;
  uint e = (b >> 23) & 0xffu;
  uint m = b & 0x7fffffu;
  if (e == 255u) return s | 0x7c00u | (m != 0u ? (0x200u | (m >> 13)) : 0u);
  int ue = int(e) - 112;
  if (ue >= 31) return s | 0x7c00u;
  uint mant = m, shift = 13u;
  if (ue <= 0) {
    if (ue < -10) return s;
    mant = m | 0x800000u;
    shift = uint(14 - ue);
  }
  uint r = mant >> shift;
  uint rem = mant & ((1u << shift) - 1u);
  uint halfway = 1u << (shift - 1u);
  if (rem > halfway || (rem == halfway && (r & 1u) == 1u)) r += 1u;  // a carry moves into the exponent / Inf
  return s | (ue <= 0 ? r : ((uint(ue) << 10) + r));
}
// float32 bits -> bfloat16 bits, round to nearest even (NaN stays quiet NaN).
uint f32_to_bf16(uint b) {
  if ((b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu) != 0u) return (b >> 16) | 0x40u;
  return (b + 0x7fffu + ((b >> 16) & 1u)) >> 16;
}

// float64 (hi, lo words) -> float32 bits, round to nearest even; float64
// values below the float32 normal range flush to signed zero.
uint f64_to_f32(uint lo, uint hi) {
  uint s = hi & 0x80000000u;
  int e = int((hi >> 20) & 0x7ffu);
  uint mhi = hi & 0xfffffu;
  if (e == 2047) return (mhi | lo) != 0u ? 0x7fc00000u : (s | 0x7f800000u);
  int fe = e - 1023 + 127;
  if (e == 0 || fe <= 0) return s;
  if (fe >= 255) return s | 0x7f800000u;
  uint m = (mhi << 3) | (lo >> 29);
  uint rem = lo & 0x1fffffffu;
  uint r = s | (uint(fe) << 23) | m;
  if (rem > 0x10000000u || (rem == 0x10000000u && (m & 1u) == 1u)) r += 1u;  // may carry into inf
  return r;
}
// float32 bits -> float64 (lo, hi) exactly.
uvec2 f32_to_f64(uint b) {
  uint s = b & 0x80000000u;
  int e = int((b >> 23) & 0xffu);
  uint m = b & 0x7fffffu;
  if (e == 255) return uvec2(m << 29, s | 0x7ff00000u | (m >> 3));
  if (e == 0) {
    if (m == 0u) return uvec2(0u, s);
    e = 1;
    while ((m & 0x800000u) == 0u) { m <<= 1; e -= 1; }
    m &= 0x7fffffu;
  }
  uint E = uint(e - 127 + 1023);
  return uvec2(m << 29, s | (E << 20) | (m >> 3));
}

// float -> 64-bit integer (lo, hi words) as ONNX Runtime's CPU Cast gives it
// on x86-64: truncation toward zero; NaN and values outside [-2^63, 2^63)
// give INT64_MIN (the conversion instruction's "integer indefinite"), except
// that a uint64 target takes [2^63, 2^64) exactly and larger values as 0.
// Exact: at or above 2^24 a float32 is an integer, and scaling by 2^-32,
// floor, and the subtraction of the high part are exact (Vulkan rounds
// multiplication and subtraction correctly).
uvec2 f32_to_i64(float f, bool u64) {
  if (isnan(f)) return uvec2(0u, 0x80000000u);
  float t = trunc(f);
  if (u64 && t >= 9223372036854775808.0) {
    if (t >= 18446744073709551616.0) return uvec2(0u);
    return uvec2(0u, uint(t * (1.0 / 4294967296.0)));  // a multiple of 2^40: the low word is 0
  }
  if (!(t >= -9223372036854775808.0 && t < 9223372036854775808.0)) return uvec2(0u, 0x80000000u);
  float a = abs(t);
  float hf = floor(a * (1.0 / 4294967296.0));
  uint hi = uint(hf), lo = uint(a - hf * 4294967296.0);
  if (t < 0.0) {  // two's complement of (hi, lo)
    lo = ~lo + 1u;
    hi = ~hi + (lo == 0u ? 1u : 0u);
  }
  return uvec2(lo, hi);
}

// Reads element i: as float (isf) or int.
void load(uint i, out bool isf, out float f, out int v) {
  isf = false; f = 0.0; v = 0;
  if (SRC == 1u) { isf = true; f = uintBitsToFloat(x[i]); }
  else if (SRC == 11u) { isf = true; f = uintBitsToFloat(f64_to_f32(x[2u * i], x[2u * i + 1u])); }
  else if (SRC == 10u) { isf = true; f = uintBitsToFloat(f16_to_f32((x[i >> 1] >> (16u * (i & 1u))) & 0xffffu)); }
  else if (SRC == 16u) { isf = true; f = uintBitsToFloat(((x[i >> 1] >> (16u * (i & 1u))) & 0xffffu) << 16); }
  else if (SRC == 6u || SRC == 12u) v = int(x[i]);
  else if (SRC == 7u || SRC == 13u) v = int(x[2u * i]);
  else if (SRC == 2u || SRC == 9u) v = int((x[i >> 2] >> (8u * (i & 3u))) & 0xffu);
  else if (SRC == 3u) v = bitfieldExtract(int(x[i >> 2]), int(8u * (i & 3u)), 8);
  else if (SRC == 4u) v = int((x[i >> 1] >> (16u * (i & 1u))) & 0xffffu);
  else if (SRC == 5u) v = bitfieldExtract(int(x[i >> 1]), int(16u * (i & 1u)), 16);
  else if (lowbit_is(SRC)) {
    uint code = lowbit_is_packed4(SRC) ? (x[i >> 3] >> (4u * (i & 7u))) & 0xfu : (x[i >> 2] >> (8u * (i & 3u))) & 0xffu;
    uint b = lowbit_to_f32(SRC, code);
    if (lowbit_is_float(SRC)) { isf = true; f = uintBitsToFloat(b); }
    else v = int(b);
  }
}

// Converts to SEM; returns float bits for float SEM, else the wrapped integer.
uint convert(bool isf, float f, int v) {
  if (is_float_dt(SEM)) {
    uint b = floatBitsToUint(isf ? f : float(v));
    if (SEM == 10u) return f16_to_f32(f32_to_f16(b));
    if (SEM == 16u) return f32_to_bf16(b) << 16;
    if (lowbit_is(SEM)) return lowbit_to_f32(SEM, lowbit_from_f32(SEM, b, MODE));
    return b;
  }
  // On the bits: a subnormal is true where a driver flushes it in comparisons.
  if (SEM == 9u) return (isf ? !f_is_zero(floatBitsToUint(f)) : v != 0) ? 1u : 0u;
  int t = v;
  if (isf) {
    // As ONNX Runtime on x86-64: 64-bit targets and uint32 convert through
    // int64 (f32_to_i64, low word), narrower ones through int32, where NaN and
    // values outside [-2^31, 2^31) give INT32_MIN; then wrap to SEM's width.
    if (SEM == 7u || SEM == 12u || SEM == 13u) return f32_to_i64(f, SEM == 13u).x;
    float tf = trunc(f);
    t = (tf >= -2147483648.0 && tf < 2147483648.0) ? int(tf) : int(0x80000000u);
  }
  if (SEM == 2u) return uint(t) & 0xffu;
  if (SEM == 3u) return uint(bitfieldExtract(t, 0, 8));
  if (SEM == 4u) return uint(t) & 0xffffu;
  if (SEM == 5u) return uint(bitfieldExtract(t, 0, 16));
  if (SEM == 21u) return uint(t) & 0xfu;
  if (SEM == 22u) return uint(bitfieldExtract(t, 0, 4));
  return uint(t);
}

uint elem(uint i) {
  bool isf; float f; int v;
  load(i, isf, f, v);
  return convert(isf, f, v);
}

void main() {
  uint u = linear_index_256();
  uint epw = lowbit_is_packed4(DST) ? 8u : ((DST == 2u || DST == 3u || DST == 9u || lowbit_is(DST)) ? 4u :
             ((DST == 4u || DST == 5u || DST == 10u || DST == 16u) ? 2u : 1u));
  uint units = (N + epw - 1u) / epw;
  if (u >= units) return;
  if (epw > 1u) {
    uint w = 0u, bits = 32u / epw, mask = epw == 8u ? 0xfu : (epw == 4u ? 0xffu : 0xffffu);
    for (uint k = 0u; k < epw; ++k) {
      uint i = u * epw + k;
      if (i < N) {
        uint e = elem(i);
        if (DST == 10u) e = f32_to_f16(e);
        else if (DST == 16u) e = f32_to_bf16(e);
        else if (lowbit_is(DST)) e = lowbit_from_f32(DST, e, MODE);
        w |= (e & mask) << (bits * k);
      }
    }
    y[u] = w;
    return;
  }
  uint r = elem(u);
  if (DST == 11u) {
    uvec2 d = f32_to_f64(r);
    y[2u * u] = d.x;
    y[2u * u + 1u] = d.y;
  } else if (DST == 7u || DST == 13u) {
    // A float source converts to all 64 bits (a Cast to int64 that is a
    // graph output); an int32 compute value is sign-extended.
    bool isf; float f; int v;
    load(u, isf, f, v);
    uvec2 w = isf && !is_float_dt(SEM) && SEM != 9u ? f32_to_i64(f, SEM == 13u) : uvec2(r, int(r) < 0 ? 0xffffffffu : 0u);
    y[2u * u] = w.x;
    y[2u * u + 1u] = w.y;
  } else {
    y[u] = r;
  }
}
