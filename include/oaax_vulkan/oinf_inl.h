// Template definitions for oinf.h. Not a public entry point: include oinf.h.
#ifndef OAAX_VULKAN_OINF_INL_H_
#define OAAX_VULKAN_OINF_INL_H_

#include <cstring>
#include <type_traits>

namespace oaaxvk::oinf {

// Maps a C++ arithmetic type to its OINF tag (F16 has no C++ type here).
template <typename T> struct TypeTag;
template <> struct TypeTag<int8_t> { static constexpr ValueType value = ValueType::kI8; };
template <> struct TypeTag<int16_t> { static constexpr ValueType value = ValueType::kI16; };
template <> struct TypeTag<int32_t> { static constexpr ValueType value = ValueType::kI32; };
template <> struct TypeTag<int64_t> { static constexpr ValueType value = ValueType::kI64; };
template <> struct TypeTag<uint8_t> { static constexpr ValueType value = ValueType::kU8; };
template <> struct TypeTag<uint16_t> { static constexpr ValueType value = ValueType::kU16; };
template <> struct TypeTag<uint32_t> { static constexpr ValueType value = ValueType::kU32; };
template <> struct TypeTag<uint64_t> { static constexpr ValueType value = ValueType::kU64; };
template <> struct TypeTag<float> { static constexpr ValueType value = ValueType::kF32; };
template <> struct TypeTag<double> { static constexpr ValueType value = ValueType::kF64; };

// The project targets little-endian hosts only (checked in CMake), so raw
// memcpy is the little-endian encoding.
template <typename T>
MetadataValue MetadataValue::Scalar(T value) {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, "use Bool()");
  MetadataValue v;
  v.type_ = TypeTag<T>::value;
  v.payload_.resize(sizeof(T));
  std::memcpy(v.payload_.data(), &value, sizeof(T));
  return v;
}

template <typename T>
bool Metadata::GetScalar(T* out) const {
  if (type != TypeTag<T>::value || payload.size != sizeof(T)) return false;
  std::memcpy(out, payload.data, sizeof(T));
  return true;
}

}  // namespace oaaxvk::oinf

#endif  // OAAX_VULKAN_OINF_INL_H_
