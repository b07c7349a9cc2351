// OINF container: validating zero-copy reader, deterministic writer, and the
// lossless UTF-8 name scheme.
//
// Format: ../shared/seeds/001_d2024b1ad1ad415d.txt ("OINF Binary Format"),
// read as docs/oinf-format.md fixes it (packing, padding, blob placement).
// API guide: docs/oinf-library.md.
//
// Threading: a File is immutable after Open/FromMemory and may be read from
// any number of threads. A Writer is single-threaded.
#ifndef OAAX_VULKAN_OINF_H_
#define OAAX_VULKAN_OINF_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "oaax_vulkan/status.h"

namespace oaaxvk::oinf {

// Value type tags (spec "ValueType Tags"). Tensors use 1–12 only.
enum class ValueType : uint32_t {
  kI8 = 1, kI16 = 2, kI32 = 3, kI64 = 4,
  kU8 = 5, kU16 = 6, kU32 = 7, kU64 = 8,
  kF16 = 9, kF32 = 10, kF64 = 11, kBool = 12,
  kBitset = 13, kString = 14, kNdArray = 15,
};

// Bytes per element for tags 1–12 (BOOL = 1); 0 for BITSET/STRING/NDARRAY
// and for unknown tags.
size_t ElementSize(ValueType type);
// True for tags 1–12: the types a tensor or NDARRAY element may have.
bool IsElementType(uint32_t tag);
// Short name as printed by oinf-inspect: "i8" … "f64", "bool", "bitset",
// "str", "ndarray"; "?" for unknown tags.
const char* ValueTypeName(ValueType type);
// Parses a short name ("f32", "u8", "bool", …) into a tensor element type.
StatusOr<ValueType> ParseElementType(std::string_view name);

// True when `s` is non-empty and every byte is in [A-Za-z0-9._-]
// (spec "Strings"). This is what names, keys and STRING values must satisfy.
bool IsValidString(std::string_view s);

// Borrowed, non-owning view of bytes inside a File (or inside caller memory
// given to FromMemory). Valid as long as the File (and that memory) lives.
struct ByteView {
  const uint8_t* data = nullptr;
  uint64_t size = 0;  // bytes
};

struct SizeVar {
  std::string_view name;  // points into the file
  uint64_t value = 0;
};

// NDARRAY metadata payload, decoded. `data` is row-major, little-endian,
// numel × ElementSize(element_type) bytes (no trailing padding).
struct NdArrayView {
  ValueType element_type = ValueType::kU8;
  std::vector<uint64_t> dims;
  uint64_t numel = 1;
  ByteView data;
};

// BITSET metadata payload, decoded. Bit i is (bytes[i/8] >> (i%8)) & 1.
struct BitsetView {
  uint32_t bit_count = 0;
  ByteView bytes;  // ceil(bit_count / 8) bytes
  bool Get(uint32_t i) const { return (bytes.data[i / 8] >> (i % 8)) & 1u; }
};

// One metadata entry. Exactly one of the typed members is meaningful,
// selected by `type`; the reader has validated it already.
struct Metadata {
  std::string_view key;
  ValueType type = ValueType::kU8;
  uint64_t offset = 0;  // absolute byte offset of the payload
  ByteView payload;     // whole payload, value_nbytes bytes
  // Decoded forms (valid for the matching `type` only):
  std::string_view string_value;  // kString
  BitsetView bitset;              // kBitset
  NdArrayView ndarray;            // kNdArray
  // Scalar access for types 1–12; payload.size == ElementSize(type).
  // Returns false if `type` is not the scalar type asked for.
  template <typename T>
  bool GetScalar(T* out) const;
};

// One tensor-index entry.
struct Tensor {
  std::string_view name;
  ValueType dtype = ValueType::kF32;
  std::vector<uint64_t> dims;  // empty for rank 0
  uint64_t numel = 1;          // product of dims (1 for rank 0)
  bool has_data = false;       // HAS_DATA flag; false = uninitialized
  uint64_t offset = 0;         // absolute byte offset of the data (0 if none)
  ByteView data;               // numel × ElementSize(dtype) bytes, zero-copy
};

// Limits that bound what a hostile file can make the reader do.
struct ReaderOptions {
  uint32_t max_rank = 64;              // tensor / NDARRAY ndim
  uint32_t max_entries = 1u << 20;     // per table
  uint64_t max_file_size = 1ull << 40; // bytes
};

// A validated OINF file. All views (names, data) point into the mapped or
// borrowed bytes and stay valid for the File's lifetime (moves keep them).
class File {
 public:
  // Maps `path` read-only (mmap) and validates it completely. Fails with
  // kNotFound / kInvalidArgument for I/O problems (message names the path
  // and errno text) and kDataLoss for format violations (message names the
  // structure, field and absolute byte offset).
  static StatusOr<File> Open(const std::string& path, const ReaderOptions& options = {});
  // Validates `size` bytes at `data` (borrowed: the caller keeps them alive
  // and unchanged for the File's lifetime). Same errors as Open.
  static StatusOr<File> FromMemory(const void* data, size_t size, const ReaderOptions& options = {});

  File(File&&) noexcept;
  File& operator=(File&&) noexcept;
  ~File();

  uint64_t file_size() const;
  const std::vector<SizeVar>& sizevars() const;
  const std::vector<Metadata>& metadata() const;
  const std::vector<Tensor>& tensors() const;

  // Lookups by exact OINF name; nullptr when absent.
  const SizeVar* FindSizeVar(std::string_view name) const;
  const Metadata* FindMetadata(std::string_view key) const;
  const Tensor* FindTensor(std::string_view name) const;

  // The original UTF-8 name of a tensor or other entry stored under
  // `oinf_name` (see MakeOinfName / kUtf8NamePrefix): the decoded
  // "utf8name.<oinf_name>" metadata when present, else `oinf_name` itself.
  // Fails with kDataLoss when that metadata exists but is not a rank-1 U8
  // NDARRAY holding well-formed UTF-8.
  StatusOr<std::string> OriginalName(std::string_view oinf_name) const;

  struct Impl;  // opaque; defined in src/oinf/reader.cpp

 private:
  explicit File(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A metadata value to be written.
class MetadataValue {
 public:
  // Scalars of types 1–11 (the C++ type selects the tag:
  // int8_t→I8 … uint64_t→U64, float→F32, double→F64).
  template <typename T>
  static MetadataValue Scalar(T value);
  static MetadataValue F16Bits(uint16_t bits);
  static MetadataValue Bool(bool value);
  // Must satisfy IsValidString (checked when serializing).
  static MetadataValue String(std::string value);
  static MetadataValue Bitset(const std::vector<bool>& bits);
  // `data` holds numel × ElementSize(element_type) bytes, row-major.
  static MetadataValue NdArray(ValueType element_type, std::vector<uint64_t> dims,
                               std::vector<uint8_t> data);

  // `value` with its scalar tag replaced by `type` of the same byte size
  // (e.g. a uint16_t payload re-tagged as F16 or I16). Mismatched sizes are
  // refused at Serialize.
  static MetadataValue Retagged(MetadataValue value, ValueType type);

  ValueType type() const { return type_; }
  // The payload as stored in the file (without trailing blob padding).
  const std::vector<uint8_t>& payload() const { return payload_; }

 private:
  friend class Writer;
  ValueType type_ = ValueType::kU8;
  std::vector<uint8_t> payload_;
  std::string string_check_;          // for kString: validated at Serialize
  std::vector<uint64_t> nd_dims_;     // for kNdArray: validated at Serialize
  uint64_t nd_data_bytes_ = 0;        // for kNdArray: unpadded data length
};

// Builds an OINF file. Entries are sorted by name at serialization so the
// output depends only on the content (deterministic). Serialize refuses what
// File::FromMemory would refuse (bad names, duplicates, size mismatches,
// bad element types, ranks above max_rank), naming the entry.
class Writer {
 public:
  void AddSizeVar(std::string name, uint64_t value);
  void AddMetadata(std::string key, MetadataValue value);
  // Tensor with data: `data` must hold numel × ElementSize(dtype) bytes
  // (row-major, little-endian; BOOL one byte per element, 0 or 1).
  void AddTensor(std::string name, ValueType dtype, std::vector<uint64_t> dims,
                 std::vector<uint8_t> data);
  // Same, copying from a borrowed span.
  void AddTensor(std::string name, ValueType dtype, std::vector<uint64_t> dims,
                 const void* data, size_t nbytes);
  // Tensor without data (HAS_DATA = 0).
  void AddUninitializedTensor(std::string name, ValueType dtype, std::vector<uint64_t> dims);

  // Lossless UTF-8 names: stores the tensor under MakeOinfName(utf8_name)
  // and, when that differs from `utf8_name`, adds metadata
  // "utf8name.<oinf name>" = U8 NDARRAY of the raw bytes. Returns the OINF
  // name used. Fails (kInvalidArgument) if `utf8_name` is not valid UTF-8.
  StatusOr<std::string> AddTensorWithUtf8Name(std::string_view utf8_name, ValueType dtype,
                                              std::vector<uint64_t> dims,
                                              std::vector<uint8_t> data);
  // Records the original name of any entry whose OINF name is `oinf_name`
  // (adds the "utf8name.<oinf_name>" metadata unless the names are equal).
  Status AddUtf8Name(std::string_view oinf_name, std::string_view utf8_name);

  // The complete file image.
  StatusOr<std::vector<uint8_t>> Serialize(uint32_t max_rank = 64) const;
  // Serializes and writes to `path` (replaces an existing file).
  Status WriteFile(const std::string& path) const;

 private:
  struct TensorEntry {
    std::string name;
    ValueType dtype;
    std::vector<uint64_t> dims;
    bool has_data;
    std::vector<uint8_t> data;
  };
  std::vector<std::pair<std::string, uint64_t>> sizevars_;
  std::vector<std::pair<std::string, MetadataValue>> metadata_;
  std::vector<TensorEntry> tensors_;
};

// ---- UTF-8 name scheme (docs/oinf-library.md, "Arbitrary UTF-8 names") ----

// Metadata key prefix for original names: "utf8name.<oinf name>".
inline constexpr std::string_view kUtf8NamePrefix = "utf8name.";

// True when `s` is well-formed UTF-8 (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF).
bool IsValidUtf8(std::string_view s);

// Maps any name to one in the OINF charset, deterministically:
// a name that already satisfies IsValidString is returned unchanged;
// otherwise every byte outside [A-Za-z0-9._-] becomes '_' and
// "-" + 16 lower-case hex digits of the FNV-1a 64-bit hash of the original
// bytes is appended, so distinct originals stay distinct in practice.
// The empty name maps to "_-<hash>".
std::string MakeOinfName(std::string_view name);

// Renders the human-readable view of a validated file (the format is given
// in docs/oinf-format.md, "Human-readable view"); identical to
// tools/python/verify_oinf.py's output.
std::string RenderText(const File& file);

// Choices of RenderText beyond the shared view (the default options give it).
struct RenderOptions {
  // Rank-1 u8 metadata arrays holding valid UTF-8 without control characters
  // print as a quoted string (`ndarray<u8>[5] = "input"`, '"', '\\', tab and
  // newline escaped) instead of their bytes: for files whose format stores
  // text that way (an oaax-vulkan bundle's names).
  bool text_arrays = false;
};
std::string RenderText(const File& file, const RenderOptions& options);

// ---- little helpers shared by tools and tests ----

// IEEE half → float (exact).
float HalfToFloat(uint16_t bits);

}  // namespace oaaxvk::oinf

#include "oaax_vulkan/oinf_inl.h"

#endif  // OAAX_VULKAN_OINF_H_
