// Value-type tables, the string charset and the UTF-8 name scheme.
#include <cmath>
#include <cstring>

#include "oaax_vulkan/oinf.h"
#include "oinf/layout.h"

namespace oaaxvk::oinf {

namespace {
struct TypeInfo {
  ValueType type;
  const char* name;
  size_t size;
};
constexpr TypeInfo kTypes[] = {
    {ValueType::kI8, "i8", 1},      {ValueType::kI16, "i16", 2},    {ValueType::kI32, "i32", 4},
    {ValueType::kI64, "i64", 8},    {ValueType::kU8, "u8", 1},      {ValueType::kU16, "u16", 2},
    {ValueType::kU32, "u32", 4},    {ValueType::kU64, "u64", 8},    {ValueType::kF16, "f16", 2},
    {ValueType::kF32, "f32", 4},    {ValueType::kF64, "f64", 8},    {ValueType::kBool, "bool", 1},
    {ValueType::kBitset, "bitset", 0}, {ValueType::kString, "str", 0}, {ValueType::kNdArray, "ndarray", 0},
};
}  // namespace

bool IsElementType(uint32_t tag) { return tag >= 1 && tag <= 12; }

size_t ElementSize(ValueType type) {
  const uint32_t tag = static_cast<uint32_t>(type);
  return (tag >= 1 && tag <= 15) ? kTypes[tag - 1].size : 0;
}

const char* ValueTypeName(ValueType type) {
  const uint32_t tag = static_cast<uint32_t>(type);
  return (tag >= 1 && tag <= 15) ? kTypes[tag - 1].name : "?";
}

StatusOr<ValueType> ParseElementType(std::string_view name) {
  for (const TypeInfo& t : kTypes) {
    if (t.size != 0 && name == t.name) return t.type;
  }
  return InvalidArgument("unknown element type '" + std::string(name) +
                         "' (expected one of i8 i16 i32 i64 u8 u16 u32 u64 f16 f32 f64 bool)");
}

bool IsValidString(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsValidStringChar(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

bool IsValidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    size_t len;
    uint32_t cp;
    if (c < 0x80) { ++i; continue; }
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
    else return false;
    if (n - i < len) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    static constexpr uint32_t kMinForLen[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMinForLen[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

std::string MakeOinfName(std::string_view name) {
  if (IsValidString(name)) return std::string(name);
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a 64
  std::string out;
  out.reserve(name.size() + 17);
  for (char c : name) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    out.push_back(IsValidStringChar(static_cast<unsigned char>(c)) ? c : '_');
  }
  if (out.empty()) out = "_";
  out += StrFormat("-%016llx", static_cast<unsigned long long>(hash));
  return out;
}

float HalfToFloat(uint16_t bits) {
  const uint32_t sign = (bits >> 15) & 1u;
  const uint32_t exp = (bits >> 10) & 0x1Fu;
  const uint32_t mant = bits & 0x3FFu;
  float v;
  if (exp == 0) {
    v = std::ldexp(static_cast<float>(mant), -24);  // zero / subnormal
  } else if (exp == 31) {
    v = mant ? NAN : INFINITY;
  } else {
    v = std::ldexp(static_cast<float>(mant | 0x400u), static_cast<int>(exp) - 25);
  }
  return sign ? -v : v;
}

}  // namespace oaaxvk::oinf
