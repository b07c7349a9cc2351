// Internal constants and little-endian helpers shared by the OINF reader and
// writer (docs/oinf-format.md).
#ifndef OAAX_VULKAN_SRC_OINF_LAYOUT_H_
#define OAAX_VULKAN_SRC_OINF_LAYOUT_H_

#include <cstdint>
#include <cstring>

namespace oaaxvk::oinf {

inline constexpr char kMagic[5] = {'O', 'I', 'N', 'F', '\0'};
inline constexpr uint32_t kVersion = 1;
inline constexpr uint32_t kHeaderSize = 69;    // packed header fields
inline constexpr uint32_t kHeaderPadded = 72;  // = offset_sizevars
inline constexpr uint32_t kHasData = 1;
// Smallest possible table entries (a String is at least 8 bytes).
inline constexpr uint64_t kMinSizeVarEntry = 8 + 8;
inline constexpr uint64_t kMinMetadataEntry = 8 + 24;
inline constexpr uint64_t kMinTensorEntry = 8 + 12 + 16;

// Rounds up to a multiple of 8. Callers keep x below 2^63.
inline constexpr uint64_t Align8(uint64_t x) { return (x + 7) & ~uint64_t{7}; }

inline bool IsValidStringChar(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

// Little-endian loads/stores (the project builds for little-endian hosts only).
inline uint32_t LoadU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t LoadU64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace oaaxvk::oinf

#endif  // OAAX_VULKAN_SRC_OINF_LAYOUT_H_
