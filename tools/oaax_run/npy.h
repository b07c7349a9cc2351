// A small, strict reader and writer of NumPy .npy files (format version 1.0;
// the reader also takes 2.0, which differs only in a 4-byte header length),
// for the OAAX tensor types. Header-only so that oaax-run and its tests share
// one implementation.
//
// Format (numpy.lib.format): "\x93NUMPY", major, minor, header length (u16
// little-endian for 1.0, u32 for 2.0), then an ASCII Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), } padded with
// spaces and ended by '\n' so that the data starts at a multiple of 64 bytes,
// then the raw C-order data.
//
// Strictness: unknown or duplicate keys, a missing key, Fortran order,
// big-endian or unsupported dtypes, negative or overflowing dimensions, and a
// data section that is shorter or longer than the shape needs are all errors
// naming the file and what is wrong (byte offsets for structural errors).
//
// Types numpy lacks (bfloat16, the 8-bit floats, the 4-bit types) are the
// ml_dtypes package's: an array of one is written with its ml_dtypes name
// as 'descr' ('bfloat16', 'float8_e4m3fn', 'int4', ...), which np.load reads
// back as that type once ml_dtypes is imported; its data is one element per
// dtype.size bytes as ml_dtypes stores it, so a 4-bit element takes a whole
// byte (the code in the low nibble), unlike an OAAX tensor, which packs two
// per byte (npy_tensor.h converts). np.save itself writes such arrays with a
// void descr ('<V2' for bfloat16, '<V1' for the others; '<f1' for
// float8_e5m2): the reader takes those as the opaque entries below, whose
// type only the model input they feed can tell.
#ifndef OAAXVK_TOOLS_OAAX_RUN_NPY_H_
#define OAAXVK_TOOLS_OAAX_RUN_NPY_H_

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "oaax_vulkan/interface.h"
#include "oaax_vulkan/status.h"

namespace oaaxvk::npy {

// The type of the opaque entries (void descrs): no OAAX type; the model
// input an array feeds decides which type of that element size it holds.
constexpr tensor_data_type kOpaque = static_cast<tensor_data_type>(0);

struct DType {
  tensor_data_type type;  // kOpaque for the void entries
  const char* descr;      // the header's 'descr' as oaax-run writes it (numpy dtype.str, or the ml_dtypes name)
  const char* name;       // numpy / ml_dtypes dtype name
  size_t size;            // bytes per element in the .npy data (1 for the 4-bit types)
};

inline const DType* DTypes(size_t* count) {
  static const DType kTable[] = {
      {DATA_TYPE_FLOAT, "<f4", "float32", 4},  {DATA_TYPE_UINT8, "|u1", "uint8", 1},
      {DATA_TYPE_INT8, "|i1", "int8", 1},      {DATA_TYPE_UINT16, "<u2", "uint16", 2},
      {DATA_TYPE_INT16, "<i2", "int16", 2},    {DATA_TYPE_INT32, "<i4", "int32", 4},
      {DATA_TYPE_INT64, "<i8", "int64", 8},    {DATA_TYPE_BOOL, "|b1", "bool", 1},
      {DATA_TYPE_DOUBLE, "<f8", "float64", 8}, {DATA_TYPE_UINT32, "<u4", "uint32", 4},
      {DATA_TYPE_UINT64, "<u8", "uint64", 8},  {DATA_TYPE_FLOAT16, "<f2", "float16", 2},
      // ml_dtypes types: descr is the ml_dtypes name (see the top of this file).
      {DATA_TYPE_BFLOAT16, "bfloat16", "bfloat16", 2},
      {DATA_TYPE_FLOAT8E4M3FN, "float8_e4m3fn", "float8_e4m3fn", 1},
      {DATA_TYPE_FLOAT8E4M3FNUZ, "float8_e4m3fnuz", "float8_e4m3fnuz", 1},
      {DATA_TYPE_FLOAT8E5M2, "float8_e5m2", "float8_e5m2", 1},
      {DATA_TYPE_FLOAT8E5M2FNUZ, "float8_e5m2fnuz", "float8_e5m2fnuz", 1},
      {DATA_TYPE_UINT4, "uint4", "uint4", 1},
      {DATA_TYPE_INT4, "int4", "int4", 1},
      {DATA_TYPE_FLOAT4E2M1, "float4_e2m1fn", "float4_e2m1fn", 1},
      {DATA_TYPE_FLOAT8E8M0, "float8_e8m0fnu", "float8_e8m0fnu", 1},
      // What np.save writes for ml_dtypes arrays (read only; FindDType(type)
      // returns the entries above, which come first).
      {DATA_TYPE_FLOAT8E5M2, "<f1", "float8_e5m2", 1},
      {kOpaque, "|V1", "void8", 1},
      {kOpaque, "|V2", "void16", 2},
  };
  *count = sizeof kTable / sizeof kTable[0];
  return kTable;
}

// The entry for an OAAX type; nullptr for STRING and unknown values.
inline const DType* FindDType(tensor_data_type t) {
  size_t n;
  const DType* d = DTypes(&n);
  for (size_t i = 0; i < n; ++i)
    if (d[i].type == t && t != kOpaque) return &d[i];
  return nullptr;
}

// True for the types numpy lacks (the ml_dtypes entries).
inline bool IsMlDtype(const DType& d) { return d.type != kOpaque && d.descr[0] != '<' && d.descr[0] != '|'; }

// By numpy dtype name ("float32") or descr ("<f4"; "<u1"/"=u1" also accepted
// for one-byte types, "=" as little-endian on this little-endian-only build;
// "<V2" and "|V2" alike, as ml_dtypes arrays carry '<').
inline const DType* FindDType(const std::string& s) {
  size_t n;
  const DType* d = DTypes(&n);
  for (size_t i = 0; i < n; ++i) {
    if (s == d[i].name || s == d[i].descr) return &d[i];
    if (s.size() == 3 && (s[0] == '<' || s[0] == '|' || s[0] == '=') && strlen(d[i].descr) == 3 &&
        s.compare(1, 2, d[i].descr + 1) == 0)
      return &d[i];
  }
  return nullptr;
}

struct Array {
  const DType* dtype = nullptr;
  std::vector<uint64_t> shape;  // empty = scalar
  std::vector<uint8_t> data;    // C order, little-endian

  uint64_t numel() const {
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    return n;
  }
};

inline std::string ShapeString(const std::vector<uint64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) s += ",";
  return s + ")";
}

namespace detail {

// Parser of the header dict, positions reported relative to the file start.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, size_t base, const std::string& path) : t_(text), base_(base), path_(path) {}

  Status Parse(Array* out) {
    bool have_descr = false, have_order = false, have_shape = false;
    std::string descr;
    SkipSpace();
    if (!Eat('{')) return Error("expected '{' starting the header dict");
    while (true) {
      SkipSpace();
      if (Eat('}')) break;
      std::string key;
      OAAXVK_RETURN_IF_ERROR(String(&key));
      SkipSpace();
      if (!Eat(':')) return Error("expected ':' after key '" + key + "'");
      SkipSpace();
      if (key == "descr") {
        if (have_descr) return Error("duplicate key 'descr'");
        have_descr = true;
        OAAXVK_RETURN_IF_ERROR(String(&descr));
      } else if (key == "fortran_order") {
        if (have_order) return Error("duplicate key 'fortran_order'");
        have_order = true;
        if (t_.compare(p_, 5, "False") == 0) {
          p_ += 5;
        } else if (t_.compare(p_, 4, "True") == 0) {
          return Error("fortran_order is True: only C-order arrays are supported (save with np.ascontiguousarray)");
        } else {
          return Error("fortran_order must be True or False");
        }
      } else if (key == "shape") {
        if (have_shape) return Error("duplicate key 'shape'");
        have_shape = true;
        OAAXVK_RETURN_IF_ERROR(Shape(&out->shape));
      } else {
        return Error("unknown header key '" + key + "'");
      }
      SkipSpace();
      if (Eat(',')) continue;
      SkipSpace();
      if (Eat('}')) break;
      return Error("expected ',' or '}' in the header dict");
    }
    SkipSpace();
    if (p_ != t_.size()) return Error("unexpected characters after the header dict");
    if (!have_descr) return Error("header has no 'descr'");
    if (!have_order) return Error("header has no 'fortran_order'");
    if (!have_shape) return Error("header has no 'shape'");
    if (descr.size() == 3 && descr[0] == '>')
      return InvalidArgument(path_ + ": big-endian dtype '" + descr + "' is not supported (use arr.astype(arr.dtype.newbyteorder('<')))");
    out->dtype = FindDType(descr);
    // Only descrs (the 3-character codes and the ml_dtypes names), not
    // numpy names such as 'float32', which np.save never writes.
    if (!out->dtype || (descr.size() != 3 && descr != out->dtype->descr))
      return InvalidArgument(path_ + ": unsupported dtype '" + descr +
                             "' (supported: float16/32/64, int8/16/32/64, uint8/16/32/64, bool, and the ml_dtypes "
                             "types bfloat16, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, "
                             "float8_e8m0fnu, int4, uint4, float4_e2m1fn)");
    return Status::Ok();
  }

 private:
  Status Error(const std::string& what) const {
    return InvalidArgument(path_ + ": malformed .npy header at byte " + std::to_string(base_ + p_) + ": " + what);
  }
  void SkipSpace() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n')) ++p_;
  }
  bool Eat(char c) {
    if (p_ < t_.size() && t_[p_] == c) { ++p_; return true; }
    return false;
  }
  Status String(std::string* out) {
    if (p_ >= t_.size() || (t_[p_] != '\'' && t_[p_] != '"')) return Error("expected a quoted string");
    const char q = t_[p_++];
    const size_t end = t_.find(q, p_);
    if (end == std::string::npos) return Error("unterminated string");
    *out = t_.substr(p_, end - p_);
    p_ = end + 1;
    return Status::Ok();
  }
  Status Shape(std::vector<uint64_t>* shape) {
    if (!Eat('(')) return Error("expected '(' starting the shape tuple");
    shape->clear();
    SkipSpace();
    if (Eat(')')) return Status::Ok();
    while (true) {
      SkipSpace();
      if (p_ >= t_.size() || t_[p_] < '0' || t_[p_] > '9')
        return Error("expected a non-negative integer dimension in the shape");
      uint64_t v = 0;
      while (p_ < t_.size() && t_[p_] >= '0' && t_[p_] <= '9') {
        const uint64_t digit = static_cast<uint64_t>(t_[p_] - '0');
        if (v > (UINT64_MAX - digit) / 10) return Error("dimension overflows 64 bits");
        v = v * 10 + digit;
        ++p_;
      }
      if (t_.compare(p_, 1, "L") == 0) ++p_;  // Python 2 long suffix, as numpy still reads it
      shape->push_back(v);
      SkipSpace();
      if (Eat(')')) {
        return Status::Ok();
      }
      if (!Eat(',')) return Error("expected ',' or ')' in the shape tuple");
      SkipSpace();
      if (Eat(')')) return Status::Ok();
    }
  }

  const std::string& t_;
  size_t base_;
  const std::string& path_;
  size_t p_ = 0;
};

}  // namespace detail

// Parses a whole .npy file held in memory; `path` only names it in errors.
inline Status Parse(const uint8_t* bytes, size_t size, const std::string& path, Array* out) {
  static const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (size < 10 || memcmp(bytes, kMagic, 6) != 0)
    return InvalidArgument(path + ": not a .npy file (no \\x93NUMPY magic at byte 0)");
  const uint8_t major = bytes[6], minor = bytes[7];
  size_t header_len, header_start;
  if (major == 1 && minor == 0) {
    header_len = bytes[8] | (static_cast<size_t>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 && minor == 0) {
    if (size < 12) return InvalidArgument(path + ": truncated .npy header (file has " + std::to_string(size) + " bytes)");
    header_len = bytes[8] | (static_cast<size_t>(bytes[9]) << 8) | (static_cast<size_t>(bytes[10]) << 16) |
                 (static_cast<size_t>(bytes[11]) << 24);
    header_start = 12;
  } else {
    return InvalidArgument(path + ": unsupported .npy format version " + std::to_string(major) + "." +
                           std::to_string(minor) + " at byte 6 (supported: 1.0, 2.0)");
  }
  if (header_len > size - header_start)
    return InvalidArgument(path + ": truncated .npy header: " + std::to_string(header_len) + " header bytes declared at byte 8, " +
                           std::to_string(size - header_start) + " present");
  std::string header(reinterpret_cast<const char*>(bytes + header_start), header_len);
  if (header.empty() || header.back() != '\n')
    return InvalidArgument(path + ": malformed .npy header: does not end with '\\n' at byte " +
                           std::to_string(header_start + header_len - (header_len ? 1 : 0)));
  for (size_t i = 0; i < header.size(); ++i)
    if (static_cast<unsigned char>(header[i]) >= 0x80 || (header[i] < 0x20 && header[i] != '\n'))
      return InvalidArgument(path + ": malformed .npy header: non-ASCII or control byte at byte " +
                             std::to_string(header_start + i));
  Array a;
  OAAXVK_RETURN_IF_ERROR(detail::HeaderParser(header, header_start, path).Parse(&a));
  // Element count and byte size without overflow.
  uint64_t numel = 1;
  for (uint64_t d : a.shape) {
    if (d != 0 && numel > UINT64_MAX / d)
      return InvalidArgument(path + ": shape " + ShapeString(a.shape) + " has more elements than 64 bits can count");
    numel *= d;
  }
  const size_t data_start = header_start + header_len;
  const size_t have = size - data_start;
  if (numel > UINT64_MAX / a.dtype->size || numel * a.dtype->size != have)
    return InvalidArgument(path + ": data section has " + std::to_string(have) + " bytes at byte " +
                           std::to_string(data_start) + ", shape " + ShapeString(a.shape) + " of " + a.dtype->name +
                           " needs " + (numel > UINT64_MAX / a.dtype->size ? std::string("more than 2^64")
                                                                           : std::to_string(numel * a.dtype->size)));
  a.data.assign(bytes + data_start, bytes + size);
  *out = std::move(a);
  return Status::Ok();
}

inline Status Read(const std::string& path, Array* out) {
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return NotFound(path + ": cannot open: " + strerror(errno));
  std::vector<uint8_t> bytes;
  uint8_t buf[65536];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, f)) > 0) bytes.insert(bytes.end(), buf, buf + got);
  const bool err = ferror(f) != 0;
  fclose(f);
  if (err) return Internal(path + ": read error");
  return Parse(bytes.data(), bytes.size(), path, out);
}

// The complete .npy (version 1.0) encoding of an array.
inline std::vector<uint8_t> Encode(const DType& dtype, const std::vector<uint64_t>& shape, const void* data,
                                   size_t nbytes) {
  std::string header = std::string("{'descr': '") + dtype.descr + "', 'fortran_order': False, 'shape': " +
                       ShapeString(shape) + ", }";
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  const uint8_t prefix[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<uint8_t>(header.size() & 0xff),
                              static_cast<uint8_t>(header.size() >> 8)};
  std::vector<uint8_t> out(sizeof prefix + header.size() + nbytes);
  memcpy(out.data(), prefix, sizeof prefix);
  memcpy(out.data() + sizeof prefix, header.data(), header.size());
  if (nbytes) memcpy(out.data() + sizeof prefix + header.size(), data, nbytes);
  return out;
}

// Writes `data` (nbytes = numel × dtype.size, C order) as a .npy file.
inline Status Write(const std::string& path, const DType& dtype, const std::vector<uint64_t>& shape, const void* data,
                    size_t nbytes) {
  uint64_t numel = 1;
  for (uint64_t d : shape) numel *= d;
  if (numel * dtype.size != nbytes)
    return InvalidArgument(path + ": " + std::to_string(nbytes) + " data bytes for shape " + ShapeString(shape) +
                           " of " + dtype.name);
  const std::vector<uint8_t> bytes = Encode(dtype, shape, data, nbytes);
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) return NotFound(path + ": cannot create: " + strerror(errno));
  bool ok = fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = (fclose(f) == 0) && ok;
  if (!ok) return Internal(path + ": write failed: " + strerror(errno));
  return Status::Ok();
}

}  // namespace oaaxvk::npy

#endif  // OAAXVK_TOOLS_OAAX_RUN_NPY_H_
