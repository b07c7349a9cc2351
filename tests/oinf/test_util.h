// Helpers for OINF tests: building small files and reading fields.
#ifndef OAAX_VULKAN_TESTS_OINF_TEST_UTIL_H_
#define OAAX_VULKAN_TESTS_OINF_TEST_UTIL_H_

#include <cstring>
#include <vector>

#include "oaax_vulkan/oinf.h"

namespace oaaxvk::oinf::testing {

template <typename T>
std::vector<uint8_t> Bytes(const std::vector<T>& values) {
  std::vector<uint8_t> out(values.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

inline uint64_t ReadU64(const std::vector<uint8_t>& b, size_t at) {
  uint64_t v;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}
inline void WriteU64(std::vector<uint8_t>* b, size_t at, uint64_t v) { std::memcpy(b->data() + at, &v, 8); }
inline void WriteU32(std::vector<uint8_t>* b, size_t at, uint32_t v) { std::memcpy(b->data() + at, &v, 4); }

// A file with one of everything: 2 sizevars, 5 metadata kinds, 4 tensors.
inline std::vector<uint8_t> BuildSample() {
  Writer w;
  w.AddSizeVar("D", 3);
  w.AddSizeVar("B", 5);
  w.AddMetadata("mode", MetadataValue::String("clamp_up"));
  w.AddMetadata("scale", MetadataValue::Scalar<float>(0.5f));
  w.AddMetadata("flag", MetadataValue::Bool(true));
  w.AddMetadata("mask", MetadataValue::Bitset({true, false, true, true, false, false, false, false, true, true, false}));
  w.AddMetadata("shape", MetadataValue::NdArray(ValueType::kI64, {3}, Bytes<int64_t>({1, -2, 3})));
  w.AddTensor("W.0", ValueType::kF32, {3}, Bytes<float>({1.5f, -2.0f, 3.25f}));
  w.AddTensor("x", ValueType::kF32, {}, Bytes<float>({10.35f}));
  w.AddUninitializedTensor("y", ValueType::kI16, {});
  w.AddTensor("k", ValueType::kU8, {2, 3}, Bytes<uint8_t>({1, 2, 3, 4, 5, 6}));
  auto bytes = w.Serialize();
  return bytes.ok() ? *bytes : std::vector<uint8_t>{};
}

}  // namespace oaaxvk::oinf::testing

#endif  // OAAX_VULKAN_TESTS_OINF_TEST_UTIL_H_
