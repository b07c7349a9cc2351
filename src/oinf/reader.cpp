// Validating OINF reader. Every check happens before anything is exposed;
// every read is bounds-checked with arithmetic that cannot overflow
// (`n <= limit - pos`, never `pos + n <= limit`).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <unordered_map>

#include "oaax_vulkan/oinf.h"
#include "oinf/layout.h"

namespace oaaxvk::oinf {

struct File::Impl {
  const uint8_t* base = nullptr;
  uint64_t size = 0;
  void* mapping = nullptr;  // owned mmap, or nullptr for borrowed memory
  size_t mapping_size = 0;
  std::vector<SizeVar> sizevars;
  std::vector<Metadata> metadata;
  std::vector<Tensor> tensors;
  std::unordered_map<std::string_view, size_t> sizevar_index, metadata_index, tensor_index;

  ~Impl() {
    if (mapping != nullptr) munmap(mapping, mapping_size);
  }
};

namespace {

using U64 = unsigned long long;

// Bounded little-endian reader over [0, size) of a buffer.
class Parser {
 public:
  Parser(const uint8_t* base, uint64_t size, const ReaderOptions& options)
      : base_(base), size_(size), options_(options) {}

  Status Parse(File::Impl* out);

 private:
  Status Fail(uint64_t at, const std::string& what) const {
    return DataLoss(StrFormat("at byte %llu: ", static_cast<U64>(at)) + what);
  }
  uint32_t U32At(uint64_t at) const { return LoadU32(base_ + at); }
  uint64_t U64At(uint64_t at) const { return LoadU64(base_ + at); }
  // True when [at, at + n) lies inside [0, limit).
  static bool Fits(uint64_t at, uint64_t n, uint64_t limit) { return at <= limit && n <= limit - at; }

  Status CheckZero(uint64_t from, uint64_t to, const char* what) const {
    for (uint64_t i = from; i < to; ++i) {
      if (base_[i] != 0) {
        return Fail(i, StrFormat("non-zero padding byte 0x%02x in %s", base_[i], what));
      }
    }
    return Status::Ok();
  }

  // Reads a String at *pos within [.., limit); advances *pos past its padding.
  Status ReadString(uint64_t* pos, uint64_t limit, const std::string& what, std::string_view* out) const;
  // Product of dims with overflow detection.
  Status Numel(const std::vector<uint64_t>& dims, uint64_t at, const std::string& what, uint64_t* numel) const;
  Status ReadDims(uint64_t* pos, uint64_t limit, uint32_t ndim, const std::string& what,
                  std::vector<uint64_t>* dims) const;
  Status CheckBools(const uint8_t* p, uint64_t n, uint64_t at, const std::string& what) const;
  Status ValidatePayload(Metadata* m, const std::string& what) const;
  // Checks that a blob sits at *cursor exactly and is followed by zero
  // padding; advances *cursor to the aligned end.
  Status PlaceBlob(uint64_t offset, uint64_t nbytes, uint64_t at_field, const std::string& what,
                   uint64_t* cursor) const;

  const uint8_t* base_;
  uint64_t size_;
  const ReaderOptions& options_;
  uint64_t offset_data_ = 0;
};

Status Parser::ReadString(uint64_t* pos, uint64_t limit, const std::string& what,
                          std::string_view* out) const {
  const uint64_t at = *pos;
  if (!Fits(at, 4, limit)) return Fail(at, what + ": string length field runs past the end of its table");
  const uint64_t len = U32At(at);
  const uint64_t padded = Align8(4 + len);
  if (!Fits(at, padded, limit)) {
    return Fail(at, what + StrFormat(": string of %llu bytes runs past the end of its table", static_cast<U64>(len)));
  }
  std::string_view s(reinterpret_cast<const char*>(base_ + at + 4), len);
  if (len == 0) return Fail(at, what + ": empty string (names must have at least one character)");
  for (uint64_t i = 0; i < len; ++i) {
    if (!IsValidStringChar(static_cast<unsigned char>(s[i]))) {
      return Fail(at + 4 + i, what + StrFormat(": byte 0x%02x outside the OINF charset [A-Za-z0-9._-]",
                                               static_cast<unsigned char>(s[i])));
    }
  }
  OAAXVK_RETURN_IF_ERROR(CheckZero(at + 4 + len, at + padded, "string padding"));
  *out = s;
  *pos = at + padded;
  return Status::Ok();
}

Status Parser::Numel(const std::vector<uint64_t>& dims, uint64_t at, const std::string& what,
                     uint64_t* numel) const {
  uint64_t n = 1;
  for (uint64_t d : dims) {
    if (__builtin_mul_overflow(n, d, &n)) return Fail(at, what + ": element count overflows 64 bits");
  }
  *numel = n;
  return Status::Ok();
}

Status Parser::ReadDims(uint64_t* pos, uint64_t limit, uint32_t ndim, const std::string& what,
                        std::vector<uint64_t>* dims) const {
  if (ndim > options_.max_rank) {
    return Fail(*pos, what + StrFormat(": ndim %u exceeds the limit of %u", ndim, options_.max_rank));
  }
  const uint64_t bytes = 8ull * ndim;
  if (!Fits(*pos, bytes, limit)) return Fail(*pos, what + StrFormat(": %u dims run past the end", ndim));
  dims->resize(ndim);
  for (uint32_t i = 0; i < ndim; ++i) (*dims)[i] = U64At(*pos + 8ull * i);
  *pos += bytes;
  return Status::Ok();
}

Status Parser::CheckBools(const uint8_t* p, uint64_t n, uint64_t at, const std::string& what) const {
  for (uint64_t i = 0; i < n; ++i) {
    if (p[i] > 1) return Fail(at + i, what + StrFormat(": BOOL byte %u is neither 0 nor 1", p[i]));
  }
  return Status::Ok();
}

Status Parser::ValidatePayload(Metadata* m, const std::string& what) const {
  const uint8_t* p = m->payload.data;
  const uint64_t n = m->payload.size;
  const uint64_t at = m->offset;
  const uint32_t tag = static_cast<uint32_t>(m->type);
  if (IsElementType(tag)) {
    const uint64_t want = ElementSize(m->type);
    if (n != want) {
      return Fail(at, what + StrFormat(": %s scalar needs value_nbytes %llu, found %llu", ValueTypeName(m->type),
                                       static_cast<U64>(want), static_cast<U64>(n)));
    }
    if (m->type == ValueType::kBool) return CheckBools(p, 1, at, what);
    return Status::Ok();
  }
  switch (m->type) {
    case ValueType::kString: {
      uint64_t pos = at;
      std::string_view s;
      OAAXVK_RETURN_IF_ERROR(ReadString(&pos, at + n, what + " STRING value", &s));
      if (pos != at + n) {
        return Fail(at, what + StrFormat(": STRING value_nbytes %llu, expected %llu", static_cast<U64>(n),
                                         static_cast<U64>(pos - at)));
      }
      m->string_value = s;
      return Status::Ok();
    }
    case ValueType::kBitset: {
      if (n < 8) return Fail(at, what + StrFormat(": BITSET payload of %llu bytes is shorter than its 8-byte header", static_cast<U64>(n)));
      const uint32_t bit_count = U32At(at);
      const uint32_t byte_count = U32At(at + 4);
      const uint64_t want_bytes = (static_cast<uint64_t>(bit_count) + 7) / 8;
      if (byte_count != want_bytes) {
        return Fail(at + 4, what + StrFormat(": BITSET byte_count %u, expected ceil(%u/8) = %llu", byte_count,
                                             bit_count, static_cast<U64>(want_bytes)));
      }
      const uint64_t want = Align8(8 + static_cast<uint64_t>(byte_count));
      if (n != want) {
        return Fail(at, what + StrFormat(": BITSET value_nbytes %llu, expected %llu", static_cast<U64>(n),
                                         static_cast<U64>(want)));
      }
      if (bit_count % 8 != 0) {
        const uint8_t last = p[8 + byte_count - 1];
        if (last >> (bit_count % 8)) return Fail(at + 8 + byte_count - 1, what + ": BITSET unused high bits are not zero");
      }
      OAAXVK_RETURN_IF_ERROR(CheckZero(at + 8 + byte_count, at + n, "BITSET padding"));
      m->bitset.bit_count = bit_count;
      m->bitset.bytes = ByteView{p + 8, byte_count};
      return Status::Ok();
    }
    case ValueType::kNdArray: {
      if (n < 8) return Fail(at, what + StrFormat(": NDARRAY payload of %llu bytes is shorter than its 8-byte header", static_cast<U64>(n)));
      const uint32_t elem = U32At(at);
      const uint32_t ndim = U32At(at + 4);
      if (!IsElementType(elem)) {
        return Fail(at, what + StrFormat(": NDARRAY element_type %u is not a numeric/bool type (1-12)", elem));
      }
      NdArrayView& v = m->ndarray;
      v.element_type = static_cast<ValueType>(elem);
      uint64_t pos = at + 8;
      OAAXVK_RETURN_IF_ERROR(ReadDims(&pos, at + n, ndim, what + " NDARRAY", &v.dims));
      OAAXVK_RETURN_IF_ERROR(Numel(v.dims, at + 8, what + " NDARRAY", &v.numel));
      uint64_t data_bytes = 0;
      if (__builtin_mul_overflow(v.numel, ElementSize(v.element_type), &data_bytes) || data_bytes > n) {
        return Fail(at, what + StrFormat(": NDARRAY data (%llu elements) does not fit value_nbytes %llu",
                                         static_cast<U64>(v.numel), static_cast<U64>(n)));
      }
      const uint64_t header = pos - at;
      if (data_bytes > n - header || Align8(header + data_bytes) != n) {
        return Fail(at, what + StrFormat(": NDARRAY value_nbytes %llu, expected %llu", static_cast<U64>(n),
                                         static_cast<U64>(Align8(header + data_bytes))));
      }
      v.data = ByteView{base_ + pos, data_bytes};
      if (v.element_type == ValueType::kBool) OAAXVK_RETURN_IF_ERROR(CheckBools(base_ + pos, data_bytes, pos, what));
      return CheckZero(pos + data_bytes, at + n, "NDARRAY padding");
    }
    default:
      return Fail(at, what + StrFormat(": value_type %u is not a valid tag (1-15)", tag));
  }
}

Status Parser::PlaceBlob(uint64_t offset, uint64_t nbytes, uint64_t at_field, const std::string& what,
                         uint64_t* cursor) const {
  if (offset % 8 != 0) {
    return Fail(at_field, what + StrFormat(": data offset %llu is not 8-byte aligned", static_cast<U64>(offset)));
  }
  if (offset < offset_data_) {
    return Fail(at_field, what + StrFormat(": data offset %llu precedes the data section (%llu)",
                                           static_cast<U64>(offset), static_cast<U64>(offset_data_)));
  }
  if (!Fits(offset, nbytes, size_)) {
    return Fail(at_field, what + StrFormat(": blob [%llu, +%llu) runs past the end of the file (%llu bytes)",
                                           static_cast<U64>(offset), static_cast<U64>(nbytes),
                                           static_cast<U64>(size_)));
  }
  if (offset < *cursor) {
    return Fail(at_field, what + StrFormat(": blob at %llu overlaps the previous blob (which ends at %llu)",
                                           static_cast<U64>(offset), static_cast<U64>(*cursor)));
  }
  if (offset > *cursor) {
    return Fail(at_field, what + StrFormat(": blob at %llu leaves a gap after the previous blob (expected %llu)",
                                           static_cast<U64>(offset), static_cast<U64>(*cursor)));
  }
  const uint64_t end = offset + nbytes;
  const uint64_t padded = Align8(end);
  if (padded > size_) return Fail(end, what + ": padding after the blob runs past the end of the file");
  OAAXVK_RETURN_IF_ERROR(CheckZero(end, padded, "blob padding"));
  *cursor = padded;
  return Status::Ok();
}

Status Parser::Parse(File::Impl* out) {
  if (size_ < kHeaderSize) {
    return Fail(0, StrFormat("file of %llu bytes is too small for the %u-byte header", static_cast<U64>(size_),
                             kHeaderSize));
  }
  if (std::memcmp(base_, kMagic, 5) != 0) return Fail(0, "bad magic (expected \"OINF\\0\")");
  const uint32_t version = U32At(5), flags = U32At(9), reserved = U32At(25);
  if (version != kVersion) return Fail(5, StrFormat("unsupported version %u (this reader knows 1)", version));
  if (flags != 0) return Fail(9, StrFormat("header flags must be 0, found 0x%x", flags));
  if (reserved != 0) return Fail(25, StrFormat("header reserved field must be 0, found %u", reserved));
  const uint32_t n_sizevars = U32At(13), n_metadata = U32At(17), n_tensors = U32At(21);
  const uint64_t off_sv = U64At(29), off_md = U64At(37), off_t = U64At(45), off_d = U64At(53);
  const uint64_t file_size = U64At(61);
  if (file_size != size_) {
    return Fail(61, StrFormat("file_size field says %llu bytes, the file has %llu", static_cast<U64>(file_size),
                              static_cast<U64>(size_)));
  }
  if (size_ < kHeaderPadded) return Fail(kHeaderSize, "file ends inside the header padding");
  OAAXVK_RETURN_IF_ERROR(CheckZero(kHeaderSize, kHeaderPadded, "header padding"));
  const struct {
    uint64_t value;
    uint64_t field;
    const char* name;
  } offs[] = {{off_sv, 29, "offset_sizevars"}, {off_md, 37, "offset_metadata"}, {off_t, 45, "offset_tensors"},
              {off_d, 53, "offset_data"}};
  uint64_t prev = kHeaderPadded;
  for (const auto& o : offs) {
    if (o.value % 8 != 0) return Fail(o.field, StrFormat("%s %llu is not 8-byte aligned", o.name, static_cast<U64>(o.value)));
    if (o.value > size_) {
      return Fail(o.field, StrFormat("%s %llu lies past the end of the file (%llu bytes)", o.name,
                                     static_cast<U64>(o.value), static_cast<U64>(size_)));
    }
    if (o.value < prev) {
      return Fail(o.field, StrFormat("%s %llu is not ascending (must be >= %llu)", o.name,
                                     static_cast<U64>(o.value), static_cast<U64>(prev)));
    }
    prev = o.value;
  }
  if (off_sv != kHeaderPadded) {
    return Fail(29, StrFormat("offset_sizevars %llu, expected %u (right after the header)", static_cast<U64>(off_sv),
                              kHeaderPadded));
  }
  offset_data_ = off_d;

  struct Table {
    uint32_t count;
    uint64_t start, limit, min_entry;
    const char* name;
  };
  const Table tables[3] = {{n_sizevars, off_sv, off_md, kMinSizeVarEntry, "sizevars"},
                           {n_metadata, off_md, off_t, kMinMetadataEntry, "metadata"},
                           {n_tensors, off_t, off_d, kMinTensorEntry, "tensor index"}};
  for (const Table& t : tables) {
    if (t.count > options_.max_entries) {
      return Fail(13, StrFormat("%s table has %u entries, over the limit of %u", t.name, t.count, options_.max_entries));
    }
    if (static_cast<uint64_t>(t.count) * t.min_entry > t.limit - t.start) {
      return Fail(t.start, StrFormat("%s table claims %u entries but its section holds only %llu bytes", t.name,
                                     t.count, static_cast<U64>(t.limit - t.start)));
    }
  }

  // Sizevars.
  uint64_t pos = off_sv;
  out->sizevars.reserve(n_sizevars);
  for (uint32_t i = 0; i < n_sizevars; ++i) {
    const uint64_t at = pos;
    const std::string what = StrFormat("sizevar %u", i);
    SizeVar sv;
    OAAXVK_RETURN_IF_ERROR(ReadString(&pos, off_md, what + " name", &sv.name));
    if (!Fits(pos, 8, off_md)) return Fail(pos, what + ": value runs past the end of the sizevars table");
    sv.value = U64At(pos);
    pos += 8;
    if (!out->sizevar_index.emplace(sv.name, i).second) {
      return Fail(at, StrFormat("duplicate sizevar name '%.*s'", static_cast<int>(sv.name.size()), sv.name.data()));
    }
    out->sizevars.push_back(sv);
  }
  if (Align8(pos) != off_md) {
    return Fail(37, StrFormat("offset_metadata %llu, expected %llu (the sizevars table ends at %llu)",
                              static_cast<U64>(off_md), static_cast<U64>(Align8(pos)), static_cast<U64>(pos)));
  }
  OAAXVK_RETURN_IF_ERROR(CheckZero(pos, off_md, "sizevars section padding"));

  // Metadata index (payloads validated below, once placement is known good).
  pos = off_md;
  std::vector<uint64_t> md_field_at;
  out->metadata.reserve(n_metadata);
  for (uint32_t i = 0; i < n_metadata; ++i) {
    const uint64_t at = pos;
    const std::string what = StrFormat("metadata entry %u", i);
    Metadata m;
    OAAXVK_RETURN_IF_ERROR(ReadString(&pos, off_t, what + " key", &m.key));
    if (!Fits(pos, 24, off_t)) return Fail(pos, what + ": fields run past the end of the metadata table");
    const uint32_t tag = U32At(pos), vflags = U32At(pos + 4);
    if (tag < 1 || tag > 15) return Fail(pos, what + StrFormat(": value_type %u is not a valid tag (1-15)", tag));
    if (vflags != 0) return Fail(pos + 4, what + StrFormat(": value_flags must be 0, found 0x%x", vflags));
    m.type = static_cast<ValueType>(tag);
    m.payload.size = U64At(pos + 8);
    m.offset = U64At(pos + 16);
    md_field_at.push_back(pos + 8);
    pos += 24;
    if (!out->metadata_index.emplace(m.key, i).second) {
      return Fail(at, StrFormat("duplicate metadata key '%.*s'", static_cast<int>(m.key.size()), m.key.data()));
    }
    out->metadata.push_back(m);
  }
  if (Align8(pos) != off_t) {
    return Fail(45, StrFormat("offset_tensors %llu, expected %llu (the metadata table ends at %llu)",
                              static_cast<U64>(off_t), static_cast<U64>(Align8(pos)), static_cast<U64>(pos)));
  }
  OAAXVK_RETURN_IF_ERROR(CheckZero(pos, off_t, "metadata section padding"));

  // Tensor index.
  pos = off_t;
  std::vector<uint64_t> t_field_at;
  out->tensors.reserve(n_tensors);
  for (uint32_t i = 0; i < n_tensors; ++i) {
    const uint64_t at = pos;
    std::string what = StrFormat("tensor index entry %u", i);
    Tensor t;
    OAAXVK_RETURN_IF_ERROR(ReadString(&pos, off_d, what + " name", &t.name));
    what += " ('" + std::string(t.name) + "')";
    if (!Fits(pos, 12, off_d)) return Fail(pos, what + ": fields run past the end of the tensor index");
    const uint32_t dtype = U32At(pos), ndim = U32At(pos + 4), tflags = U32At(pos + 8);
    if (!IsElementType(dtype)) return Fail(pos, what + StrFormat(": dtype %u is not a tensor type (1-12)", dtype));
    if (tflags & ~kHasData) return Fail(pos + 8, what + StrFormat(": unknown flag bits 0x%x", tflags & ~kHasData));
    t.dtype = static_cast<ValueType>(dtype);
    t.has_data = (tflags & kHasData) != 0;
    pos += 12;
    OAAXVK_RETURN_IF_ERROR(ReadDims(&pos, off_d, ndim, what, &t.dims));
    OAAXVK_RETURN_IF_ERROR(Numel(t.dims, pos, what, &t.numel));
    if (!Fits(pos, 16, off_d)) return Fail(pos, what + ": data_nbytes/data_offset run past the end of the tensor index");
    const uint64_t nbytes = U64At(pos), offset = U64At(pos + 8);
    t_field_at.push_back(pos);
    if (!t.has_data) {
      if (nbytes != 0 || offset != 0) {
        return Fail(pos, what + ": HAS_DATA is 0 but data_nbytes/data_offset are not 0");
      }
    } else {
      uint64_t want = 0;
      if (__builtin_mul_overflow(t.numel, ElementSize(t.dtype), &want) || nbytes != want) {
        return Fail(pos, what + StrFormat(": data_nbytes %llu != numel %llu x sizeof(%s) %zu", static_cast<U64>(nbytes),
                                          static_cast<U64>(t.numel), ValueTypeName(t.dtype), ElementSize(t.dtype)));
      }
      t.offset = offset;
      t.data.size = nbytes;
    }
    pos += 16;
    if (!out->tensor_index.emplace(t.name, i).second) {
      return Fail(at, StrFormat("duplicate tensor name '%.*s'", static_cast<int>(t.name.size()), t.name.data()));
    }
    out->tensors.push_back(std::move(t));
  }
  if (Align8(pos) != off_d) {
    return Fail(53, StrFormat("offset_data %llu, expected %llu (the tensor index ends at %llu)",
                              static_cast<U64>(off_d), static_cast<U64>(Align8(pos)), static_cast<U64>(pos)));
  }
  OAAXVK_RETURN_IF_ERROR(CheckZero(pos, off_d, "tensor index padding"));

  // Data section: metadata blobs, then tensor blobs, tightly packed.
  uint64_t cursor = off_d;
  for (size_t i = 0; i < out->metadata.size(); ++i) {
    Metadata& m = out->metadata[i];
    const std::string what = "metadata '" + std::string(m.key) + "'";
    OAAXVK_RETURN_IF_ERROR(PlaceBlob(m.offset, m.payload.size, md_field_at[i], what, &cursor));
    m.payload.data = base_ + m.offset;
    OAAXVK_RETURN_IF_ERROR(ValidatePayload(&m, what));
  }
  for (size_t i = 0; i < out->tensors.size(); ++i) {
    Tensor& t = out->tensors[i];
    if (!t.has_data) continue;
    const std::string what = "tensor '" + std::string(t.name) + "'";
    OAAXVK_RETURN_IF_ERROR(PlaceBlob(t.offset, t.data.size, t_field_at[i], what, &cursor));
    t.data.data = base_ + t.offset;
    if (t.dtype == ValueType::kBool) OAAXVK_RETURN_IF_ERROR(CheckBools(t.data.data, t.data.size, t.offset, what));
  }
  if (cursor != size_) {
    return Fail(cursor, StrFormat("%llu unexpected trailing bytes after the last blob",
                                  static_cast<U64>(size_ - cursor)));
  }
  return Status::Ok();
}

}  // namespace

File::File(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
File::File(File&&) noexcept = default;
File& File::operator=(File&&) noexcept = default;
File::~File() = default;

StatusOr<File> File::FromMemory(const void* data, size_t size, const ReaderOptions& options) {
  if (data == nullptr && size != 0) return InvalidArgument("OINF buffer pointer is null");
  if (size > options.max_file_size) {
    return ResourceExhausted(StrFormat("OINF buffer of %zu bytes exceeds max_file_size %llu", size,
                                       static_cast<U64>(options.max_file_size)));
  }
  auto impl = std::make_unique<Impl>();
  static const uint8_t kEmpty = 0;
  impl->base = size ? static_cast<const uint8_t*>(data) : &kEmpty;
  impl->size = size;
  Parser parser(impl->base, impl->size, options);
  OAAXVK_RETURN_IF_ERROR(parser.Parse(impl.get()));
  return File(std::move(impl));
}

StatusOr<File> File::Open(const std::string& path, const ReaderOptions& options) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return Status(err == ENOENT ? StatusCode::kNotFound : StatusCode::kInvalidArgument,
                  "cannot open '" + path + "': " + std::strerror(err));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument("'" + path + "' is not a regular file");
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > options.max_file_size) {
    ::close(fd);
    return ResourceExhausted(StrFormat("'%s' is %llu bytes, over max_file_size %llu", path.c_str(),
                                       static_cast<U64>(size), static_cast<U64>(options.max_file_size)));
  }
  auto impl = std::make_unique<Impl>();
  if (size > 0) {
    void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return InvalidArgument("cannot map '" + path + "': " + std::strerror(err));
    }
    impl->mapping = p;
    impl->mapping_size = size;
    impl->base = static_cast<const uint8_t*>(p);
  } else {
    static const uint8_t kEmpty = 0;
    impl->base = &kEmpty;
  }
  ::close(fd);
  impl->size = size;
  Parser parser(impl->base, impl->size, options);
  Status s = parser.Parse(impl.get());
  if (!s.ok()) return s.WithContext("invalid OINF file '" + path + "'");
  return File(std::move(impl));
}

uint64_t File::file_size() const { return impl_->size; }
const std::vector<SizeVar>& File::sizevars() const { return impl_->sizevars; }
const std::vector<Metadata>& File::metadata() const { return impl_->metadata; }
const std::vector<Tensor>& File::tensors() const { return impl_->tensors; }

const SizeVar* File::FindSizeVar(std::string_view name) const {
  auto it = impl_->sizevar_index.find(name);
  return it == impl_->sizevar_index.end() ? nullptr : &impl_->sizevars[it->second];
}
const Metadata* File::FindMetadata(std::string_view key) const {
  auto it = impl_->metadata_index.find(key);
  return it == impl_->metadata_index.end() ? nullptr : &impl_->metadata[it->second];
}
const Tensor* File::FindTensor(std::string_view name) const {
  auto it = impl_->tensor_index.find(name);
  return it == impl_->tensor_index.end() ? nullptr : &impl_->tensors[it->second];
}

StatusOr<std::string> File::OriginalName(std::string_view oinf_name) const {
  const std::string key = std::string(kUtf8NamePrefix) + std::string(oinf_name);
  const Metadata* m = FindMetadata(key);
  if (m == nullptr) return std::string(oinf_name);
  if (m->type != ValueType::kNdArray || m->ndarray.element_type != ValueType::kU8 || m->ndarray.dims.size() != 1) {
    return DataLoss(StrFormat("metadata '%s' at byte %llu must be a rank-1 u8 NDARRAY", key.c_str(),
                              static_cast<U64>(m->offset)));
  }
  std::string name(reinterpret_cast<const char*>(m->ndarray.data.data), m->ndarray.data.size);
  if (!IsValidUtf8(name)) {
    return DataLoss(StrFormat("metadata '%s' at byte %llu does not hold well-formed UTF-8", key.c_str(),
                              static_cast<U64>(m->offset)));
  }
  return name;
}

}  // namespace oaaxvk::oinf
