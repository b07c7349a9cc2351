#include "oinf_mutator.h"

#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "oaax_vulkan/oinf.h"

namespace oaaxvk::fuzz {

namespace {

using Rng = std::mt19937_64;
using oinf::ValueType;

size_t Pick(Rng* rng, size_t n) { return n == 0 ? 0 : static_cast<size_t>((*rng)() % n); }

uint64_t SpecialValue(Rng* rng, uint64_t current) {
  static const uint64_t kValues[] = {0,
                                     1,
                                     2,
                                     3,
                                     15,
                                     16,
                                     17,
                                     255,
                                     65535,
                                     65536,
                                     (uint64_t{1} << 31) - 1,
                                     uint64_t{1} << 31,
                                     (uint64_t{1} << 32) - 1,
                                     uint64_t{1} << 32,
                                     uint64_t{1} << 40,
                                     uint64_t{1} << 62,
                                     (uint64_t{1} << 63) - 1,
                                     uint64_t{1} << 63,
                                     std::numeric_limits<uint64_t>::max() - 15,
                                     std::numeric_limits<uint64_t>::max()};
  switch ((*rng)() % 4) {
    case 0: return current + 1;
    case 1: return current - 1;
    case 2: return current * 2 + Pick(rng, 3);
    default: return kValues[Pick(rng, sizeof(kValues) / sizeof(kValues[0]))];
  }
}

// Stores `v` in an element of `size` bytes (little-endian, truncated).
void StoreElement(uint8_t* p, size_t size, uint64_t v) {
  for (size_t i = 0; i < size; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t LoadElement(const uint8_t* p, size_t size) {
  uint64_t v = 0;
  for (size_t i = 0; i < size && i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

bool IsIntegerType(ValueType t) {
  return t == ValueType::kI8 || t == ValueType::kI16 || t == ValueType::kI32 || t == ValueType::kI64 ||
         t == ValueType::kU8 || t == ValueType::kU16 || t == ValueType::kU32 || t == ValueType::kU64;
}

// One metadata entry as the writer takes it, after an optional mutation.
struct Entry {
  std::string key;
  ValueType type;
  std::vector<uint8_t> payload;   // scalars: the element; NDARRAY: the data
  std::vector<uint64_t> dims;     // NDARRAY
  ValueType element_type = ValueType::kU8;
  std::string text;               // STRING
  std::vector<bool> bits;         // BITSET
};

oinf::MetadataValue ToValue(const Entry& e) {
  switch (e.type) {
    case ValueType::kString: return oinf::MetadataValue::String(e.text);
    case ValueType::kBitset: return oinf::MetadataValue::Bitset(e.bits);
    case ValueType::kNdArray: return oinf::MetadataValue::NdArray(e.element_type, e.dims, e.payload);
    case ValueType::kBool: return oinf::MetadataValue::Bool(!e.payload.empty() && e.payload[0] != 0);
    default: break;
  }
  const uint64_t v = LoadElement(e.payload.data(), e.payload.size());
  switch (e.payload.size()) {
    case 1: return oinf::MetadataValue::Retagged(oinf::MetadataValue::Scalar<uint8_t>(static_cast<uint8_t>(v)), e.type);
    case 2:
      return oinf::MetadataValue::Retagged(oinf::MetadataValue::Scalar<uint16_t>(static_cast<uint16_t>(v)), e.type);
    case 4:
      return oinf::MetadataValue::Retagged(oinf::MetadataValue::Scalar<uint32_t>(static_cast<uint32_t>(v)), e.type);
    default: return oinf::MetadataValue::Retagged(oinf::MetadataValue::Scalar<uint64_t>(v), e.type);
  }
}

void MutateEntry(Entry* e, Rng* rng) {
  if (e->type == ValueType::kString) {
    static const char* kWords[] = {"dynamic_shapes", "parameter_buffer", "value_symbols", "texel_bindings",
                                   "data_dependent_outputs", "device_variants", "bound_inputs", "s", "ssv", "v",
                                   "f32", "i64", "x", "0", "a.b"};
    e->text = kWords[Pick(rng, sizeof(kWords) / sizeof(kWords[0]))];
    return;
  }
  if (e->type == ValueType::kBitset) {
    if (e->bits.empty() || (*rng)() % 3 == 0) e->bits.push_back(true);
    else e->bits[Pick(rng, e->bits.size())] = !e->bits[Pick(rng, e->bits.size())];
    return;
  }
  if (e->type == ValueType::kNdArray) {
    const size_t es = oinf::ElementSize(e->element_type);
    const size_t numel = es ? e->payload.size() / es : 0;
    if (numel > 0 && (*rng)() % 4 != 0 && IsIntegerType(e->element_type)) {
      uint8_t* p = e->payload.data() + Pick(rng, numel) * es;
      StoreElement(p, es, SpecialValue(rng, LoadElement(p, es)));
    } else if (!e->dims.empty() && (*rng)() % 2) {
      // One fewer or one more row along the first axis.
      uint64_t row = 1;
      for (size_t i = 1; i < e->dims.size(); ++i) row *= e->dims[i];
      if (e->dims[0] > 0 && (*rng)() % 2) {
        e->dims[0] -= 1;
        e->payload.resize(e->payload.size() - row * es);
      } else if (row * es < (1u << 16)) {
        e->dims[0] += 1;
        e->payload.resize(e->payload.size() + row * es, 0);
      }
    } else if (numel > 0) {
      e->payload[Pick(rng, e->payload.size())] ^= static_cast<uint8_t>(1u << Pick(rng, 8));
    }
    return;
  }
  if (e->type == ValueType::kBool) {
    if (!e->payload.empty()) e->payload[0] ^= 1u;
    return;
  }
  if (!e->payload.empty())
    StoreElement(e->payload.data(), e->payload.size(),
                 SpecialValue(rng, LoadElement(e->payload.data(), e->payload.size())));
}

}  // namespace

bool MutateOinfBytes(const uint8_t* data, size_t size, uint64_t seed, std::vector<uint8_t>* out) {
  StatusOr<oinf::File> file = oinf::File::FromMemory(data, size);
  if (!file.ok()) return false;
  Rng rng(seed);
  std::vector<Entry> entries;
  for (const oinf::Metadata& m : file->metadata()) {
    Entry e;
    e.key = std::string(m.key);
    e.type = m.type;
    if (m.type == ValueType::kString) {
      e.text = std::string(m.string_value);
    } else if (m.type == ValueType::kBitset) {
      for (uint32_t i = 0; i < m.bitset.bit_count; ++i) e.bits.push_back(m.bitset.Get(i));
    } else if (m.type == ValueType::kNdArray) {
      e.element_type = m.ndarray.element_type;
      e.dims = m.ndarray.dims;
      e.payload.assign(m.ndarray.data.data, m.ndarray.data.data + m.ndarray.data.size);
    } else {
      e.payload.assign(m.payload.data, m.payload.data + m.payload.size);
    }
    entries.push_back(std::move(e));
  }
  struct TensorCopy {
    std::string name;
    ValueType dtype;
    std::vector<uint64_t> dims;
    bool has_data;
    std::vector<uint8_t> data;
  };
  std::vector<TensorCopy> tensors;
  for (const oinf::Tensor& t : file->tensors()) {
    TensorCopy c{std::string(t.name), t.dtype, t.dims, t.has_data, {}};
    if (t.has_data) c.data.assign(t.data.data, t.data.data + t.data.size);
    tensors.push_back(std::move(c));
  }
  const size_t count = 1 + Pick(&rng, 3);
  for (size_t k = 0; k < count; ++k) {
    const uint64_t what = rng() % 10;
    if (what < 7 && !entries.empty()) {
      MutateEntry(&entries[Pick(&rng, entries.size())], &rng);
    } else if (what == 7 && !entries.empty()) {
      entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(Pick(&rng, entries.size())));
    } else if (what == 8 && !tensors.empty()) {
      // A tensor with fewer (or no) elements than the tables expect.
      TensorCopy& t = tensors[Pick(&rng, tensors.size())];
      const size_t es = oinf::ElementSize(t.dtype);
      if (t.has_data && es > 0) {
        const uint64_t n = t.data.size() / es;
        const uint64_t keep = n == 0 ? 0 : Pick(&rng, n);
        t.dims = {keep};
        t.data.resize(keep * es);
      }
    } else if (!tensors.empty()) {
      TensorCopy& t = tensors[Pick(&rng, tensors.size())];
      if (!t.data.empty()) t.data[Pick(&rng, t.data.size())] ^= static_cast<uint8_t>(1u << Pick(&rng, 8));
    }
  }
  oinf::Writer w;
  for (const oinf::SizeVar& s : file->sizevars()) w.AddSizeVar(std::string(s.name), s.value);
  for (const Entry& e : entries) w.AddMetadata(e.key, ToValue(e));
  for (TensorCopy& t : tensors) {
    if (t.has_data) w.AddTensor(t.name, t.dtype, t.dims, std::move(t.data));
    else w.AddUninitializedTensor(t.name, t.dtype, t.dims);
  }
  StatusOr<std::vector<uint8_t>> bytes = w.Serialize();
  if (!bytes.ok()) return false;
  *out = std::move(bytes).value();
  return true;
}

}  // namespace oaaxvk::fuzz
