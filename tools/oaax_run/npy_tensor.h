// Conversion between .npy arrays (npy.h) and OAAX tensor data for oaax-run,
// for the types whose .npy form differs from the tensor's or that numpy
// lacks: float16, bfloat16, the 8-bit floats and the 4-bit types.
//
// An input array feeds a model input of OAAX type T when
//   - its dtype is T (float16 '<f2'; the ml_dtypes name for the others), or
//   - it is what np.save writes for an ml_dtypes array of T: '<V2' for
//     bfloat16, '<V1' for the 8-bit and 4-bit types, '<f1' for float8_e5m2
//     (the bytes are taken as T's codes), or
//   - `cast` is set (oaax-run --cast-inputs), T is one of the types above and
//     the array is float32 or float64: the values are rounded to T as ONNX
//     Cast rounds (float16 / bfloat16 / 8-bit floats: nearest even; the 8-bit
//     floats and FLOAT4E2M1 saturate; int4 / uint4 truncate toward zero and
//     wrap; float8_e8m0fnu rounds up), float64 through float32 for float16
//     and bfloat16.
// Any other pairing is an error that names the input, the file, both dtypes
// and how to save the array (or --cast-inputs).
//
// Layouts: a 4-bit .npy element takes a byte (ml_dtypes: the code in the low
// nibble, high nibble 0); a 4-bit OAAX tensor packs two per byte
// (interface.h). Every other type has the same bytes in both.
//
// Output side: TensorToArrayData gives the .npy bytes of a tensor (4-bit
// unpacked), TensorToFloat32 its values as float32 (oaax-run
// --float32-outputs), exact for every type here (FLOAT8E8M0 0x00, 2^-127, is
// a float32 subnormal).
#ifndef OAAXVK_TOOLS_OAAX_RUN_NPY_TENSOR_H_
#define OAAXVK_TOOLS_OAAX_RUN_NPY_TENSOR_H_

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "npy.h"
#include "oaax_vulkan/lowbit_types.h"
#include "oaax_vulkan/status.h"
#include "oaax_vulkan/tensors_util.h"

namespace oaaxvk::npy {

// IEEE binary16 bits of a float32, rounded to nearest even (Inf and NaN kept,
// overflow to Inf).
inline uint16_t FloatToHalf(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return static_cast<uint16_t>(sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to Inf
  if (ax < 0x38800000u) {
    // Below 2^-14: a subnormal half, a multiple of 2^-24. The scaling is
    // exact, and nearbyint rounds half to even; 1024 is the smallest normal.
    float a;
    memcpy(&a, &ax, 4);
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0f)));
  }
  // Normal: rebias the exponent (127 -> 15) and round 23 mantissa bits to
  // 10; a carry out of the mantissa correctly bumps the exponent.
  uint32_t r = ax - (112u << 23);
  r += 0xfffu + ((r >> 13) & 1u);
  return static_cast<uint16_t>(sign | (r >> 13));
}

inline float HalfToFloat(uint16_t h) {
  const uint32_t e = (h >> 10) & 31u, m = h & 1023u;
  float v;
  if (e == 0)
    v = std::ldexp(static_cast<float>(m), -24);
  else if (e == 31)
    v = m ? std::nanf("") : INFINITY;
  else
    v = std::ldexp(static_cast<float>(m + 1024u), static_cast<int>(e) - 25);
  return (h & 0x8000u) ? -v : v;
}

// bfloat16 bits of a float32, rounded to nearest even (NaN stays a quiet NaN).
inline uint16_t FloatToBfloat16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

inline float Bfloat16ToFloat(uint16_t b) {
  const uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

// The types --cast-inputs and --float32-outputs convert: float16, bfloat16
// and the low-bit types.
inline bool IsConvertible(tensor_data_type t) {
  return t == DATA_TYPE_FLOAT16 || t == DATA_TYPE_BFLOAT16 || lowbit::IsLowBit(t);
}

// The code of element i of OAAX tensor data of type t (a byte, a nibble for
// the 4-bit types, the 16 bits for float16 / bfloat16).
inline uint32_t CodeAt(tensor_data_type t, const uint8_t* data, uint64_t i) {
  if (lowbit::IsPacked4(t)) return lowbit::UnpackNibble(data, i);
  if (t == DATA_TYPE_FLOAT16 || t == DATA_TYPE_BFLOAT16) return data[2 * i] | (static_cast<uint32_t>(data[2 * i + 1]) << 8);
  return data[i];
}

// A real value as type t's code (the rules at the top).
inline uint32_t CodeOf(tensor_data_type t, double v) {
  if (t == DATA_TYPE_FLOAT16) return FloatToHalf(static_cast<float>(v));
  if (t == DATA_TYPE_BFLOAT16) return FloatToBfloat16(static_cast<float>(v));
  return lowbit::FromDouble(t, v);
}

// OAAX tensor data of `numel` elements of type t (IsConvertible) holding the
// given codes, in OAAX layout (4-bit packed).
template <typename CodeFn>
std::vector<uint8_t> TensorFromCodes(tensor_data_type t, uint64_t numel, CodeFn code) {
  std::vector<uint8_t> out(TensorByteSize(t, numel), 0);
  for (uint64_t i = 0; i < numel; ++i) {
    const uint32_t c = code(i);
    if (lowbit::IsPacked4(t)) {
      out[i / 2] = static_cast<uint8_t>(out[i / 2] | ((c & 0xfu) << (4 * (i & 1u))));
    } else if (t == DATA_TYPE_FLOAT16 || t == DATA_TYPE_BFLOAT16) {
      out[2 * i] = static_cast<uint8_t>(c);
      out[2 * i + 1] = static_cast<uint8_t>(c >> 8);
    } else {
      out[i] = static_cast<uint8_t>(c);
    }
  }
  return out;
}

// The values of OAAX tensor data of type t (IsConvertible) as float32.
inline std::vector<float> TensorToFloat32(tensor_data_type t, const uint8_t* data, uint64_t numel) {
  std::vector<float> out(numel);
  for (uint64_t i = 0; i < numel; ++i) {
    const uint32_t c = CodeAt(t, data, i);
    out[i] = t == DATA_TYPE_FLOAT16    ? HalfToFloat(static_cast<uint16_t>(c))
             : t == DATA_TYPE_BFLOAT16 ? Bfloat16ToFloat(static_cast<uint16_t>(c))
                                       : static_cast<float>(lowbit::ToDouble(t, c));
  }
  return out;
}

// The .npy data of OAAX tensor data of type t: the same bytes, except one
// byte per element for the 4-bit types.
inline std::vector<uint8_t> TensorToArrayData(tensor_data_type t, const uint8_t* data, uint64_t numel) {
  if (!lowbit::IsPacked4(t)) return std::vector<uint8_t>(data, data + TensorByteSize(t, numel));
  std::vector<uint8_t> out(numel);
  for (uint64_t i = 0; i < numel; ++i) out[i] = lowbit::UnpackNibble(data, i);
  return out;
}

// How to save an array as `want` with numpy (for error messages).
inline std::string HowToSave(const DType& want) {
  if (IsMlDtype(want))
    return std::string("np.save(path, a.astype(ml_dtypes.") + want.name + "))";
  return std::string("np.save(path, a.astype(np.") + want.name + "))";
}

// The OAAX tensor data for model input `input` (type `want`) from array `a`
// read from `source`, by the rules at the top.
inline Status ArrayToTensorData(const Array& a, tensor_data_type want, bool cast, const std::string& input,
                                const std::string& source, std::vector<uint8_t>* out) {
  const uint64_t numel = a.numel();
  const DType* w = FindDType(want);
  if (!w) return InvalidArgument("input '" + input + "': the model's type " + std::to_string(want) +
                                 " has no .npy form");
  const bool same = a.dtype->type == want;
  // np.save's form of an ml_dtypes array: the opaque void of the element
  // size, or '<f1' (float8_e5m2, matched by type above).
  const bool opaque = a.dtype->type == kOpaque && IsMlDtype(*w) && a.dtype->size == w->size;
  if (same || opaque) {
    if (!lowbit::IsPacked4(want)) {
      *out = a.data;
      return Status::Ok();
    }
    for (uint64_t i = 0; i < numel; ++i) {
      if (a.data[i] & 0xf0u) {
        char byte[8];
        snprintf(byte, sizeof byte, "0x%02x", a.data[i]);
        return InvalidArgument("input '" + input + "': " + source + " element " + std::to_string(i) + " is " + byte +
                               ", not a valid " + w->name + " code (a 4-bit code in the low nibble, as ml_dtypes stores it)");
      }
    }
    *out = TensorFromCodes(want, numel, [&](uint64_t i) { return a.data[i]; });
    return Status::Ok();
  }
  const bool real = a.dtype->type == DATA_TYPE_FLOAT || a.dtype->type == DATA_TYPE_DOUBLE;
  if (cast && real && IsConvertible(want)) {
    *out = TensorFromCodes(want, numel, [&](uint64_t i) {
      double v;
      if (a.dtype->type == DATA_TYPE_FLOAT) {
        float f;
        memcpy(&f, a.data.data() + 4 * i, 4);
        v = f;
      } else {
        memcpy(&v, a.data.data() + 8 * i, 8);
        if (want == DATA_TYPE_FLOAT16 || want == DATA_TYPE_BFLOAT16) v = static_cast<float>(v);
      }
      return CodeOf(want, v);
    });
    return Status::Ok();
  }
  std::string msg = "input '" + input + "': " + source + " has dtype " + a.dtype->name;
  if (a.dtype->type == kOpaque)
    msg += " (untyped " + std::to_string(a.dtype->size) + "-byte elements, as np.save writes an ml_dtypes array)";
  msg += std::string(", the model expects ") + w->name + ": save the array as " + w->name + " (" + HowToSave(*w) + ")";
  if (IsConvertible(want)) {
    msg += cast ? "; --cast-inputs converts only float32 and float64 arrays"
                : " or, from float32 or float64 values, pass --cast-inputs to round them to " + std::string(w->name);
  }
  return InvalidArgument(msg);
}

}  // namespace oaaxvk::npy

#endif  // OAAXVK_TOOLS_OAAX_RUN_NPY_TENSOR_H_
