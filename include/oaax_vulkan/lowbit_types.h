// Values of the low-bit tensor element types (interface.h: the 8-bit floats
// FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT8E8M0 and
// the 4-bit UINT4, INT4, FLOAT4E2M1), shared by the toolchain (constants,
// constant folding), the hosts and the tests. The device does the same
// conversions in shaders/lowbit.glsl.
//
// A "code" is one element's bits: a byte for the 8-bit types, the low nibble
// for the 4-bit ones (UnpackNibble reads element i of packed 4-bit data).
// Header-only C++ inline functions, noexcept, no allocation.
//
// Rounding from a real value follows ONNX Cast (opset 19 to 24): round to
// nearest even; with `saturate` a value beyond the largest finite magnitude
// (Inf included) becomes that magnitude, without it the type's overflow
// value (E4M3FN, E4M3FNUZ, E5M2FNUZ: NaN; E5M2: Inf); FNUZ types have no -0
// (it becomes +0) and one NaN (0x80); FLOAT4E2M1 has neither Inf nor NaN and
// always saturates (NaN gives 0x8, as the ONNX reference). FLOAT8E8M0 is an
// unsigned power of two: the float32 exponent, rounded by `e8m0_round`.
// UINT4 / INT4 from a real value truncate toward zero and wrap to 4 bits
// (NaN and Inf give 0), as the ONNX reference (ml_dtypes) does.
#ifndef OAAX_VULKAN_LOWBIT_TYPES_H_
#define OAAX_VULKAN_LOWBIT_TYPES_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace oaaxvk::lowbit {

// The ONNX TensorProto.DataType codes (equal to interface.h's values).
enum Code : uint32_t {
  kE4M3FN = 17, kE4M3FNUZ = 18, kE5M2 = 19, kE5M2FNUZ = 20, kUint4 = 21, kInt4 = 22, kE2M1 = 23, kE8M0 = 24,
};

// Rounding of a float32 to FLOAT8E8M0 (Cast-24 `round_mode`).
enum class E8M0Round { kUp = 0, kDown = 1, kNearest = 2 };

inline bool IsLowBit(uint32_t t) noexcept { return t >= kE4M3FN && t <= kE8M0; }
inline bool IsLowBitFloat(uint32_t t) noexcept { return IsLowBit(t) && t != kUint4 && t != kInt4; }
inline bool IsPacked4(uint32_t t) noexcept { return t == kUint4 || t == kInt4 || t == kE2M1; }
// The ONNX name of low-bit type code t (17..24, e.g. "FLOAT8E4M3FN",
// "UINT4"); nullptr for any other code. A static string, not owned.
inline const char* LowBitTypeName(uint32_t t) noexcept {
  static const char* const kNames[] = {"FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
                                       "UINT4",        "INT4",           "FLOAT4E2M1", "FLOAT8E8M0"};
  return IsLowBit(t) ? kNames[t - kE4M3FN] : nullptr;
}

// Element i of packed 4-bit data (element 2k in the low nibble of byte k).
inline uint8_t UnpackNibble(const uint8_t* packed, uint64_t i) noexcept {
  return static_cast<uint8_t>((packed[i / 2] >> (4 * (i & 1u))) & 0xfu);
}

// The layout of a minifloat type: exponent and mantissa bits, bias, the
// largest finite value, and whether it is an FNUZ type (0x80 the only NaN).
struct MiniFloat {
  int mbits;
  int bias;
  int ebits;
  double max;
  bool fnuz;
};

inline bool MiniFloatOf(uint32_t t, MiniFloat* f) noexcept {
  switch (t) {
    case kE4M3FN: *f = {3, 7, 4, 448.0, false}; return true;
    case kE4M3FNUZ: *f = {3, 8, 4, 240.0, true}; return true;
    case kE5M2: *f = {2, 15, 5, 57344.0, false}; return true;
    case kE5M2FNUZ: *f = {2, 16, 5, 57344.0, true}; return true;
    case kE2M1: *f = {1, 1, 2, 6.0, false}; return true;
    default: return false;
  }
}

// The value of a code (exact in double, and in float32 except E8M0 0x00,
// which is 2^-127, a float32 subnormal).
inline double ToDouble(uint32_t t, uint32_t code) noexcept {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (t == kUint4) return code & 0xfu;
  if (t == kInt4) return static_cast<double>(static_cast<int>(code & 0xfu) - ((code & 0x8u) ? 16 : 0));
  if (t == kE8M0) return (code & 0xffu) == 0xffu ? nan : std::ldexp(1.0, static_cast<int>(code & 0xffu) - 127);
  MiniFloat f{};
  if (!MiniFloatOf(t, &f)) return nan;
  const int bits = 1 + f.ebits + f.mbits;
  code &= (1u << bits) - 1u;
  const uint32_t sign_bit = 1u << (bits - 1);
  if (f.fnuz && code == sign_bit) return nan;
  const double sign = (code & sign_bit) ? -1.0 : 1.0;
  const uint32_t e = (code >> f.mbits) & ((1u << f.ebits) - 1u);
  const uint32_t m = code & ((1u << f.mbits) - 1u);
  if (t == kE4M3FN && e == 15u && m == 7u) return nan;
  if (t == kE5M2 && e == 31u) return m != 0u ? nan : sign * std::numeric_limits<double>::infinity();
  if (e == 0u) return sign * std::ldexp(static_cast<double>(m), 1 - f.bias - f.mbits);
  return sign * std::ldexp(static_cast<double>(m + (1u << f.mbits)), static_cast<int>(e) - f.bias - f.mbits);
}

// A float32 value as FLOAT8E8M0 (the rules of the ONNX reference's
// to_float8e8m0 on the float32 bits, except that kUp rounds up whenever a
// mantissa bit is set, as the ONNX Cast specification says; the sign is
// ignored, NaN and Inf give 0xFF, `saturate` keeps 2^127 from rounding up
// into NaN, and 2^-127 is code 0 in every mode).
inline uint8_t FloatToE8M0(float x, bool saturate, E8M0Round mode) noexcept {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  uint32_t e = (b >> 23) & 0xffu;
  if (e == 0xffu) return 0xff;
  // 2^-127, code 0, is a float32 subnormal: exact, so no rounding moves it.
  if ((b & 0x7fffffffu) == 0x00400000u) return 0;
  bool up = false;
  if (mode == E8M0Round::kUp) {
    up = (b & 0x7fffffu) != 0u;
  } else if (mode == E8M0Round::kNearest) {
    const bool g = (b & 0x400000u) != 0u, r = (b & 0x200000u) != 0u, s = (b & 0x1fffffu) != 0u;
    up = g && (r || s || e > 0u);
  }
  if (up && !(saturate && e == 0xfeu)) e += 1u;
  return static_cast<uint8_t>(e);
}

// A real value as the code of low-bit type t (rules above). `x` is rounded
// from double once (a double that is a float32 value converts exactly).
inline uint8_t FromDouble(uint32_t t, double x, bool saturate = true,
                          E8M0Round e8m0_round = E8M0Round::kUp) noexcept {
  if (t == kE8M0) return FloatToE8M0(static_cast<float>(x), saturate, e8m0_round);
  if (t == kUint4 || t == kInt4) {
    if (!std::isfinite(x)) return 0;
    const double tr = std::trunc(x);
    // As the device (and ONNX Runtime's float -> int32), a value outside
    // int32 gives INT32_MIN before wrapping, whose low 4 bits are 0.
    const int64_t v = (tr >= -2147483648.0 && tr < 2147483648.0) ? static_cast<int64_t>(tr) : 0;
    return static_cast<uint8_t>(static_cast<uint64_t>(v) & 0xfu);
  }
  MiniFloat f{};
  if (!MiniFloatOf(t, &f)) return 0;
  const int bits = 1 + f.ebits + f.mbits;
  const uint8_t sign_bit = static_cast<uint8_t>(1u << (bits - 1));
  const uint8_t nan_code = t == kE4M3FN ? 0x7f : t == kE5M2 ? 0x7e : t == kE2M1 ? 0x8 : 0x80;
  if (std::isnan(x)) return nan_code;
  const bool neg = std::signbit(x);
  const uint8_t s = neg ? sign_bit : 0;
  const uint8_t zero = f.fnuz ? 0 : s;  // FNUZ: -0 is +0 (0x80 is NaN)
  const double a = std::fabs(x);
  auto overflow = [&]() -> uint8_t {
    if (saturate || t == kE2M1) return static_cast<uint8_t>(FromDouble(t, f.max, true) | (neg ? sign_bit : 0));
    if (t == kE5M2) return static_cast<uint8_t>(s | 0x7c);
    return nan_code;
  };
  if (std::isinf(a)) return overflow();
  if (a == 0) return zero;
  const int emin = 1 - f.bias;
  int k = 0;
  std::frexp(a, &k);  // a = m * 2^k, m in [0.5, 1)
  const int e = k - 1 < emin ? emin : k - 1;
  const double q = std::ldexp(1.0, e - f.mbits);
  const double r = std::nearbyint(a / q);  // round half to even (the default rounding mode)
  const double v = r * q;
  if (v > f.max) return overflow();
  if (v == 0) return zero;
  std::frexp(v, &k);
  const int ev = k - 1;
  uint32_t field, mant;
  if (ev < emin) {
    field = 0;
    mant = static_cast<uint32_t>(v / std::ldexp(1.0, emin - f.mbits));
  } else {
    field = static_cast<uint32_t>(ev + f.bias);
    mant = static_cast<uint32_t>(v / std::ldexp(1.0, ev - f.mbits)) - (1u << f.mbits);
  }
  return static_cast<uint8_t>(s | (field << f.mbits) | mant);
}

}  // namespace oaaxvk::lowbit

#endif  // OAAX_VULKAN_LOWBIT_TYPES_H_
