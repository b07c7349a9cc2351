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

struct DType {
  tensor_data_type type;
  const char* descr;  // numpy dtype.str as np.save writes it
  const char* name;   // numpy dtype name
  size_t size;        // bytes per element
};

inline const DType* DTypes(size_t* count) {
  static const DType kTable[] = {
      {DATA_TYPE_FLOAT, "<f4", "float32", 4},  {DATA_TYPE_UINT8, "|u1", "uint8", 1},
      {DATA_TYPE_INT8, "|i1", "int8", 1},      {DATA_TYPE_UINT16, "<u2", "uint16", 2},
      {DATA_TYPE_INT16, "<i2", "int16", 2},    {DATA_TYPE_INT32, "<i4", "int32", 4},
      {DATA_TYPE_INT64, "<i8", "int64", 8},    {DATA_TYPE_BOOL, "|b1", "bool", 1},
      {DATA_TYPE_DOUBLE, "<f8", "float64", 8}, {DATA_TYPE_UINT32, "<u4", "uint32", 4},
      {DATA_TYPE_UINT64, "<u8", "uint64", 8},
  };
  *count = sizeof kTable / sizeof kTable[0];
  return kTable;
}

// The entry for an OAAX type; nullptr for STRING and unknown values.
inline const DType* FindDType(tensor_data_type t) {
  size_t n;
  const DType* d = DTypes(&n);
  for (size_t i = 0; i < n; ++i)
    if (d[i].type == t) return &d[i];
  return nullptr;
}

// By numpy dtype name ("float32") or descr ("<f4"; "<u1"/"=u1" also accepted
// for one-byte types, "=" as little-endian on this little-endian-only build).
inline const DType* FindDType(const std::string& s) {
  size_t n;
  const DType* d = DTypes(&n);
  for (size_t i = 0; i < n; ++i) {
    if (s == d[i].name || s == d[i].descr) return &d[i];
    if (s.size() == 3 && (s[0] == '<' || s[0] == '|' || s[0] == '=') && s.compare(1, 2, d[i].descr + 1) == 0)
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
    if (!out->dtype || descr.size() != 3)
      return InvalidArgument(path_ + ": unsupported dtype '" + descr +
                             "' (supported: float32, float64, int8/16/32/64, uint8/16/32/64, bool)");
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
