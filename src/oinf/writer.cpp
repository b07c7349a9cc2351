// Deterministic OINF writer (layout: docs/oinf-format.md).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

#include "oaax_vulkan/oinf.h"
#include "oinf/layout.h"

namespace oaaxvk::oinf {

namespace {

using U64 = unsigned long long;

void PutU32(std::vector<uint8_t>* out, uint32_t v) {
  uint8_t b[4];
  std::memcpy(b, &v, 4);
  out->insert(out->end(), b, b + 4);
}
void PutU64(std::vector<uint8_t>* out, uint64_t v) {
  uint8_t b[8];
  std::memcpy(b, &v, 8);
  out->insert(out->end(), b, b + 8);
}
void PadTo8(std::vector<uint8_t>* out, size_t from) {
  const size_t len = out->size() - from;
  out->resize(from + Align8(len), 0);
}
void PutString(std::vector<uint8_t>* out, std::string_view s) {
  const size_t start = out->size();
  PutU32(out, static_cast<uint32_t>(s.size()));
  out->insert(out->end(), s.begin(), s.end());
  PadTo8(out, start);
}

Status CheckName(const std::string& name, const char* what) {
  if (!IsValidString(name)) {
    return InvalidArgument(StrFormat("%s '%s' is empty or has a character outside [A-Za-z0-9._-]", what, name.c_str()));
  }
  if (name.size() > 0xFFFFFFFFu) return InvalidArgument(StrFormat("%s is longer than 2^32-1 bytes", what));
  return Status::Ok();
}

Status CheckNumel(const std::vector<uint64_t>& dims, ValueType type, uint64_t nbytes, uint32_t max_rank,
                  const std::string& what) {
  if (dims.size() > max_rank) {
    return InvalidArgument(StrFormat("%s: rank %zu exceeds the limit of %u", what.c_str(), dims.size(), max_rank));
  }
  if (!IsElementType(static_cast<uint32_t>(type))) {
    return InvalidArgument(StrFormat("%s: type %s is not a numeric/bool element type", what.c_str(), ValueTypeName(type)));
  }
  uint64_t numel = 1;
  for (uint64_t d : dims) {
    if (__builtin_mul_overflow(numel, d, &numel)) return InvalidArgument(what + ": element count overflows");
  }
  uint64_t want = 0;
  if (__builtin_mul_overflow(numel, ElementSize(type), &want) || want != nbytes) {
    return InvalidArgument(StrFormat("%s: %llu data bytes given, numel %llu x sizeof(%s) needs %llu", what.c_str(),
                                     static_cast<U64>(nbytes), static_cast<U64>(numel), ValueTypeName(type),
                                     static_cast<U64>(want)));
  }
  return Status::Ok();
}

Status CheckBoolBytes(const std::vector<uint8_t>& data, const std::string& what) {
  for (size_t i = 0; i < data.size(); ++i) {
    if (data[i] > 1) return InvalidArgument(StrFormat("%s: BOOL element %zu is %u, not 0 or 1", what.c_str(), i, data[i]));
  }
  return Status::Ok();
}

template <typename Entry, typename NameOf>
Status SortAndCheckUnique(std::vector<const Entry*>* entries, NameOf name_of, const char* what) {
  std::sort(entries->begin(), entries->end(),
            [&](const Entry* a, const Entry* b) { return name_of(*a) < name_of(*b); });
  for (size_t i = 1; i < entries->size(); ++i) {
    if (name_of(*(*entries)[i]) == name_of(*(*entries)[i - 1])) {
      return InvalidArgument(StrFormat("duplicate %s '%s'", what, name_of(*(*entries)[i]).c_str()));
    }
  }
  return Status::Ok();
}

}  // namespace

MetadataValue MetadataValue::F16Bits(uint16_t bits) { return Retagged(Scalar<uint16_t>(bits), ValueType::kF16); }

MetadataValue MetadataValue::Retagged(MetadataValue value, ValueType type) {
  value.type_ = type;
  return value;
}

MetadataValue MetadataValue::Bool(bool value) {
  MetadataValue v;
  v.type_ = ValueType::kBool;
  v.payload_ = {static_cast<uint8_t>(value ? 1 : 0)};
  return v;
}

MetadataValue MetadataValue::String(std::string value) {
  MetadataValue v;
  v.type_ = ValueType::kString;
  PutString(&v.payload_, value);
  v.string_check_ = std::move(value);
  return v;
}

MetadataValue MetadataValue::Bitset(const std::vector<bool>& bits) {
  MetadataValue v;
  v.type_ = ValueType::kBitset;
  const uint32_t bit_count = static_cast<uint32_t>(bits.size());
  const uint32_t byte_count = (bit_count + 7) / 8;
  PutU32(&v.payload_, bit_count);
  PutU32(&v.payload_, byte_count);
  v.payload_.resize(8 + byte_count, 0);
  for (uint32_t i = 0; i < bit_count; ++i) {
    if (bits[i]) v.payload_[8 + i / 8] |= static_cast<uint8_t>(1u << (i % 8));
  }
  PadTo8(&v.payload_, 0);
  return v;
}

MetadataValue MetadataValue::NdArray(ValueType element_type, std::vector<uint64_t> dims, std::vector<uint8_t> data) {
  MetadataValue v;
  v.type_ = ValueType::kNdArray;
  PutU32(&v.payload_, static_cast<uint32_t>(element_type));
  PutU32(&v.payload_, static_cast<uint32_t>(dims.size()));
  for (uint64_t d : dims) PutU64(&v.payload_, d);
  v.payload_.insert(v.payload_.end(), data.begin(), data.end());
  PadTo8(&v.payload_, 0);
  v.nd_dims_ = std::move(dims);
  v.nd_data_bytes_ = data.size();
  return v;
}

void Writer::AddSizeVar(std::string name, uint64_t value) { sizevars_.emplace_back(std::move(name), value); }

void Writer::AddMetadata(std::string key, MetadataValue value) { metadata_.emplace_back(std::move(key), std::move(value)); }

void Writer::AddTensor(std::string name, ValueType dtype, std::vector<uint64_t> dims, std::vector<uint8_t> data) {
  tensors_.push_back(TensorEntry{std::move(name), dtype, std::move(dims), true, std::move(data)});
}

void Writer::AddTensor(std::string name, ValueType dtype, std::vector<uint64_t> dims, const void* data,
                       size_t nbytes) {
  const auto* p = static_cast<const uint8_t*>(data);
  AddTensor(std::move(name), dtype, std::move(dims), std::vector<uint8_t>(p, p + nbytes));
}

void Writer::AddUninitializedTensor(std::string name, ValueType dtype, std::vector<uint64_t> dims) {
  tensors_.push_back(TensorEntry{std::move(name), dtype, std::move(dims), false, {}});
}

Status Writer::AddUtf8Name(std::string_view oinf_name, std::string_view utf8_name) {
  if (!IsValidUtf8(utf8_name)) return InvalidArgument("name is not well-formed UTF-8");
  if (oinf_name == utf8_name) return Status::Ok();
  std::vector<uint8_t> bytes(utf8_name.begin(), utf8_name.end());
  std::vector<uint64_t> dims = {bytes.size()};
  AddMetadata(std::string(kUtf8NamePrefix) + std::string(oinf_name),
              MetadataValue::NdArray(ValueType::kU8, std::move(dims), std::move(bytes)));
  return Status::Ok();
}

StatusOr<std::string> Writer::AddTensorWithUtf8Name(std::string_view utf8_name, ValueType dtype,
                                                    std::vector<uint64_t> dims, std::vector<uint8_t> data) {
  if (!IsValidUtf8(utf8_name)) return InvalidArgument("tensor name is not well-formed UTF-8");
  std::string oinf_name = MakeOinfName(utf8_name);
  OAAXVK_RETURN_IF_ERROR(AddUtf8Name(oinf_name, utf8_name));
  AddTensor(oinf_name, dtype, std::move(dims), std::move(data));
  return oinf_name;
}

StatusOr<std::vector<uint8_t>> Writer::Serialize(uint32_t max_rank) const {
  using SV = std::pair<std::string, uint64_t>;
  using MD = std::pair<std::string, MetadataValue>;
  std::vector<const SV*> svs;
  std::vector<const MD*> mds;
  std::vector<const TensorEntry*> ts;
  for (const auto& e : sizevars_) svs.push_back(&e);
  for (const auto& e : metadata_) mds.push_back(&e);
  for (const auto& e : tensors_) ts.push_back(&e);
  OAAXVK_RETURN_IF_ERROR(SortAndCheckUnique(&svs, [](const SV& e) -> const std::string& { return e.first; }, "sizevar"));
  OAAXVK_RETURN_IF_ERROR(SortAndCheckUnique(&mds, [](const MD& e) -> const std::string& { return e.first; }, "metadata key"));
  OAAXVK_RETURN_IF_ERROR(SortAndCheckUnique(&ts, [](const TensorEntry& e) -> const std::string& { return e.name; }, "tensor name"));

  for (const SV* e : svs) OAAXVK_RETURN_IF_ERROR(CheckName(e->first, "sizevar name"));
  for (const MD* e : mds) {
    OAAXVK_RETURN_IF_ERROR(CheckName(e->first, "metadata key"));
    const MetadataValue& v = e->second;
    const std::string what = "metadata '" + e->first + "'";
    if (IsElementType(static_cast<uint32_t>(v.type_)) && v.payload_.size() != ElementSize(v.type_)) {
      return InvalidArgument(StrFormat("%s: %s scalar needs %zu bytes, has %zu", what.c_str(), ValueTypeName(v.type_),
                                       ElementSize(v.type_), v.payload_.size()));
    }
    if (v.type_ == ValueType::kBool && v.payload_[0] > 1) return InvalidArgument(what + ": BOOL is not 0 or 1");
    if (!IsElementType(static_cast<uint32_t>(v.type_)) && v.type_ != ValueType::kString &&
        v.type_ != ValueType::kBitset && v.type_ != ValueType::kNdArray) {
      return InvalidArgument(StrFormat("%s: value type %u is not a valid tag", what.c_str(), static_cast<uint32_t>(v.type_)));
    }
    if (v.type_ == ValueType::kString) OAAXVK_RETURN_IF_ERROR(CheckName(v.string_check_, (what + " STRING value").c_str()));
    if (v.type_ == ValueType::kNdArray) {
      const uint32_t elem = LoadU32(v.payload_.data());
      const uint64_t header = 8 + 8 * v.nd_dims_.size();
      uint64_t numel = 1;
      for (uint64_t d : v.nd_dims_) {
        if (__builtin_mul_overflow(numel, d, &numel)) return InvalidArgument(what + ": NDARRAY element count overflows");
      }
      const uint64_t esize = ElementSize(static_cast<ValueType>(elem));
      uint64_t data_bytes = 0;
      if (!IsElementType(elem) || __builtin_mul_overflow(numel, esize, &data_bytes) ||
          data_bytes != v.nd_data_bytes_ || Align8(header + data_bytes) != v.payload_.size()) {
        return InvalidArgument(what + ": NDARRAY element type must be numeric/bool and data must hold numel x sizeof bytes");
      }
      if (v.nd_dims_.size() > max_rank) return InvalidArgument(what + ": NDARRAY rank exceeds the limit");
      if (elem == static_cast<uint32_t>(ValueType::kBool)) {
        for (uint64_t i = 0; i < data_bytes; ++i) {
          if (v.payload_[header + i] > 1) return InvalidArgument(what + ": BOOL element is not 0 or 1");
        }
      }
    }
  }
  for (const TensorEntry* t : ts) {
    OAAXVK_RETURN_IF_ERROR(CheckName(t->name, "tensor name"));
    const std::string what = "tensor '" + t->name + "'";
    if (t->has_data) {
      OAAXVK_RETURN_IF_ERROR(CheckNumel(t->dims, t->dtype, t->data.size(), max_rank, what));
      if (t->dtype == ValueType::kBool) OAAXVK_RETURN_IF_ERROR(CheckBoolBytes(t->data, what));
    } else {
      // Uninitialized: only the type and rank are checked (and numel must not overflow).
      uint64_t numel = 1;
      for (uint64_t d : t->dims) {
        if (__builtin_mul_overflow(numel, d, &numel)) return InvalidArgument(what + ": element count overflows");
      }
      if (!IsElementType(static_cast<uint32_t>(t->dtype))) return InvalidArgument(what + ": dtype is not 1-12");
      if (t->dims.size() > max_rank) return InvalidArgument(what + ": rank exceeds the limit");
    }
  }

  // Tables, with placeholder offsets patched once the data layout is known.
  std::vector<uint8_t> sv_table, md_table, t_table;
  for (const SV* e : svs) {
    PutString(&sv_table, e->first);
    PutU64(&sv_table, e->second);
  }
  std::vector<size_t> md_patch, t_patch;
  for (const MD* e : mds) {
    PutString(&md_table, e->first);
    PutU32(&md_table, static_cast<uint32_t>(e->second.type_));
    PutU32(&md_table, 0);
    PutU64(&md_table, e->second.payload_.size());
    md_patch.push_back(md_table.size());
    PutU64(&md_table, 0);
  }
  for (const TensorEntry* t : ts) {
    PutString(&t_table, t->name);
    PutU32(&t_table, static_cast<uint32_t>(t->dtype));
    PutU32(&t_table, static_cast<uint32_t>(t->dims.size()));
    PutU32(&t_table, t->has_data ? kHasData : 0);
    for (uint64_t d : t->dims) PutU64(&t_table, d);
    PutU64(&t_table, t->has_data ? t->data.size() : 0);
    t_patch.push_back(t_table.size());
    PutU64(&t_table, 0);
  }
  const uint64_t off_sv = kHeaderPadded;
  const uint64_t off_md = Align8(off_sv + sv_table.size());
  const uint64_t off_t = Align8(off_md + md_table.size());
  const uint64_t off_d = Align8(off_t + t_table.size());
  uint64_t cursor = off_d;
  for (size_t i = 0; i < mds.size(); ++i) {
    std::memcpy(&md_table[md_patch[i]], &cursor, 8);
    cursor = Align8(cursor + mds[i]->second.payload_.size());
  }
  for (size_t i = 0; i < ts.size(); ++i) {
    if (!ts[i]->has_data) continue;
    std::memcpy(&t_table[t_patch[i]], &cursor, 8);
    cursor = Align8(cursor + ts[i]->data.size());
  }
  const uint64_t file_size = cursor;

  std::vector<uint8_t> out;
  out.reserve(file_size);
  out.insert(out.end(), kMagic, kMagic + 5);
  PutU32(&out, kVersion);
  PutU32(&out, 0);
  PutU32(&out, static_cast<uint32_t>(svs.size()));
  PutU32(&out, static_cast<uint32_t>(mds.size()));
  PutU32(&out, static_cast<uint32_t>(ts.size()));
  PutU32(&out, 0);
  for (uint64_t v : {off_sv, off_md, off_t, off_d, file_size}) PutU64(&out, v);
  out.resize(off_sv, 0);
  out.insert(out.end(), sv_table.begin(), sv_table.end());
  out.resize(off_md, 0);
  out.insert(out.end(), md_table.begin(), md_table.end());
  out.resize(off_t, 0);
  out.insert(out.end(), t_table.begin(), t_table.end());
  out.resize(off_d, 0);
  for (const MD* e : mds) {
    out.insert(out.end(), e->second.payload_.begin(), e->second.payload_.end());
    out.resize(Align8(out.size()), 0);
  }
  for (const TensorEntry* t : ts) {
    if (!t->has_data) continue;
    out.insert(out.end(), t->data.begin(), t->data.end());
    out.resize(Align8(out.size()), 0);
  }
  if (out.size() != file_size) return Internal("OINF writer size mismatch");
  return out;
}

Status Writer::WriteFile(const std::string& path) const {
  OAAXVK_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, Serialize());
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return InvalidArgument("cannot create '" + tmp + "': " + std::strerror(errno));
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) {
    std::remove(tmp.c_str());
    return InvalidArgument("cannot write '" + tmp + "' (disk full?)");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return InvalidArgument("cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace oaaxvk::oinf
