// Human-readable view of an OINF file (docs/oinf-format.md, "Human-readable
// view"). tools/python/verify_oinf.py prints the same text; a test diffs them.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstring>

#include "oaax_vulkan/oinf.h"

namespace oaaxvk::oinf {

namespace {

std::string FormatDouble(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

// Element i of a row-major little-endian buffer, as text and as double.
class Elements {
 public:
  Elements(ValueType type, const uint8_t* data) : type_(type), data_(data), size_(ElementSize(type)) {}

  double AsDouble(uint64_t i) const {
    const uint8_t* p = data_ + i * size_;
    switch (type_) {
      case ValueType::kI8: return Load<int8_t>(p);
      case ValueType::kI16: return Load<int16_t>(p);
      case ValueType::kI32: return Load<int32_t>(p);
      case ValueType::kI64: return static_cast<double>(Load<int64_t>(p));
      case ValueType::kU8: return Load<uint8_t>(p);
      case ValueType::kU16: return Load<uint16_t>(p);
      case ValueType::kU32: return Load<uint32_t>(p);
      case ValueType::kU64: return static_cast<double>(Load<uint64_t>(p));
      case ValueType::kF16: return HalfToFloat(Load<uint16_t>(p));
      case ValueType::kF32: return Load<float>(p);
      case ValueType::kF64: return Load<double>(p);
      case ValueType::kBool: return *p ? 1.0 : 0.0;
      default: return 0.0;
    }
  }

  std::string Text(uint64_t i) const {
    const uint8_t* p = data_ + i * size_;
    char buf[32];
    switch (type_) {
      case ValueType::kI64: std::snprintf(buf, sizeof(buf), "%" PRId64, Load<int64_t>(p)); return buf;
      case ValueType::kU64: std::snprintf(buf, sizeof(buf), "%" PRIu64, Load<uint64_t>(p)); return buf;
      case ValueType::kF16:
      case ValueType::kF32:
      case ValueType::kF64: return FormatDouble(AsDouble(i));
      case ValueType::kBool: return *p ? "true" : "false";
      default: std::snprintf(buf, sizeof(buf), "%.0f", AsDouble(i)); return buf;  // exact for <= 32-bit ints
    }
  }

 private:
  template <typename T>
  static T Load(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  }
  ValueType type_;
  const uint8_t* data_;
  size_t size_;
};

// "{ v0, v1, ... }" over elements [begin, begin + count).
std::string Preview1D(const Elements& e, uint64_t begin, uint64_t count) {
  if (count == 0) return "{ }";
  std::string s = "{ ";
  auto add = [&](uint64_t i, bool first) {
    if (!first) s += ", ";
    s += e.Text(begin + i);
  };
  if (count <= 10) {
    for (uint64_t i = 0; i < count; ++i) add(i, i == 0);
  } else {
    for (uint64_t i = 0; i < 5; ++i) add(i, i == 0);
    s += ", ...";
    for (uint64_t i = count - 5; i < count; ++i) add(i, false);
  }
  return s + " }";
}

std::string Preview(const Elements& e, const std::vector<uint64_t>& dims, uint64_t numel) {
  if (dims.size() <= 1) return Preview1D(e, 0, numel);
  const uint64_t rows = dims[0];
  const uint64_t row_len = rows ? numel / rows : 0;
  std::string s = "{\n";
  auto row = [&](uint64_t r) { s += Preview1D(e, r * row_len, row_len) + " ,\n"; };
  if (rows <= 10) {
    for (uint64_t r = 0; r < rows; ++r) row(r);
  } else {
    for (uint64_t r = 0; r < 5; ++r) row(r);
    s += "...\n";
    for (uint64_t r = rows - 5; r < rows; ++r) row(r);
  }
  return s + "}";
}

std::string DimsText(const std::vector<uint64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  return s;
}

// Sum in numpy's order (pairwise summation over blocks of 8192, unrolled by 8
// below 128 elements), so mean and std match verify_oinf.py to the last bit.
double PairwiseSum(const double* a, size_t n) {
  if (n < 8) {
    double s = 0.0;
    for (size_t i = 0; i < n; ++i) s += a[i];
    return s;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    size_t i = 8;
    for (; i < n - n % 8; i += 8) {
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    }
    double s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) s += a[i];
    return s;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return PairwiseSum(a, n2) + PairwiseSum(a + n2, n - n2);
}

double NumpySum(const std::vector<double>& v) {
  constexpr size_t kBlock = 8192;
  double s = 0.0;
  for (size_t i = 0; i < v.size(); i += kBlock) s += PairwiseSum(v.data() + i, std::min(kBlock, v.size() - i));
  return s;
}

// The two statistics lines plus the histogram lines, numpy-compatible.
std::string Stats(const Elements& e, uint64_t numel, uint64_t nbytes) {
  std::vector<double> v(numel);
  bool any_nan = false;
  for (uint64_t i = 0; i < numel; ++i) {
    v[i] = e.AsDouble(i);
    any_nan |= std::isnan(v[i]);
  }
  std::string s = "- [nbytes: " + std::to_string(nbytes);
  if (any_nan) return s + ", min: nan, max: nan, mean: nan, median: nan, std: nan]\n- hist:\n    (not finite)\n";
  const auto [mn_it, mx_it] = std::minmax_element(v.begin(), v.end());
  const double mn = *mn_it, mx = *mx_it;
  const double mean = NumpySum(v) / static_cast<double>(numel);
  std::vector<double> dev(numel);
  for (uint64_t i = 0; i < numel; ++i) dev[i] = (v[i] - mean) * (v[i] - mean);
  const double stddev = std::sqrt(NumpySum(dev) / static_cast<double>(numel));
  std::vector<double> sorted = v;
  const size_t mid = numel / 2;
  std::nth_element(sorted.begin(), sorted.begin() + mid, sorted.end());
  double median = sorted[mid];
  if (numel % 2 == 0) {
    const double lower = *std::max_element(sorted.begin(), sorted.begin() + mid);
    median = (lower + median) / 2;
  }
  s += ", min: " + FormatDouble(mn) + ", max: " + FormatDouble(mx) + ", mean: " + FormatDouble(mean) +
       ", median: " + FormatDouble(median) + ", std: " + FormatDouble(stddev) + "]\n- hist:\n";
  if (!std::isfinite(mn) || !std::isfinite(mx)) return s + "    (not finite)\n";
  if (mn == mx) return s + "    [" + FormatDouble(mn) + "," + FormatDouble(mx) + "]:" + std::to_string(numel) + "\n";
  constexpr int kBins = 10;
  double edges[kBins + 1];
  const double step = (mx - mn) / kBins;
  for (int i = 0; i < kBins; ++i) edges[i] = i * step + mn;
  edges[0] = mn;
  edges[kBins] = mx;
  uint64_t counts[kBins] = {};
  for (double x : v) {
    const double f = (x - mn) / (mx - mn) * kBins;
    int b = !(f >= 0) ? 0 : (f >= kBins ? kBins - 1 : static_cast<int>(f));  // NaN -> 0
    if (x < edges[b] && b > 0) --b;
    else if (x >= edges[b + 1] && b < kBins - 1) ++b;
    ++counts[b];
  }
  for (int i = 0; i < kBins; ++i) {
    s += "    [" + FormatDouble(edges[i]) + "," + FormatDouble(edges[i + 1]) + (i == kBins - 1 ? "]:" : "):") +
         std::to_string(counts[i]) + "\n";
  }
  return s;
}

std::string BitsText(const BitsetView& b) {
  std::string s;
  auto bit = [&](uint32_t i) { s.push_back(b.Get(i) ? '1' : '0'); };
  if (b.bit_count <= 64) {
    for (uint32_t i = 0; i < b.bit_count; ++i) bit(i);
  } else {
    for (uint32_t i = 0; i < 32; ++i) bit(i);
    s += "...";
    for (uint32_t i = b.bit_count - 32; i < b.bit_count; ++i) bit(i);
  }
  return s;
}

// A rank-1 u8 array as a quoted string, or "" when it is not text.
std::string QuotedText(const NdArrayView& a) {
  if (a.element_type != ValueType::kU8 || a.dims.size() != 1) return "";
  const std::string_view s(reinterpret_cast<const char*>(a.data.data), a.data.size);
  if (!IsValidUtf8(s)) return "";
  std::string q = "\"";
  for (unsigned char c : s) {
    if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) return "";
    if (c == '"' || c == '\\') q += '\\';
    if (c == '\t') q += "\\t";
    else if (c == '\n') q += "\\n";
    else q += static_cast<char>(c);
  }
  return q + "\"";
}

}  // namespace

std::string RenderText(const File& file) { return RenderText(file, RenderOptions()); }

std::string RenderText(const File& file, const RenderOptions& options) {
  std::string out;
  for (const SizeVar& sv : file.sizevars()) out += std::string(sv.name) + " := " + std::to_string(sv.value) + "\n";
  if (!file.sizevars().empty()) out += "\n";

  for (const Metadata& m : file.metadata()) {
    out += std::string(m.key) + ": ";
    switch (m.type) {
      case ValueType::kString: out += "str = \"" + std::string(m.string_value) + "\"\n"; break;
      case ValueType::kBitset:
        out += "bitset[" + std::to_string(m.bitset.bit_count) + "] = " + BitsText(m.bitset) + "\n";
        break;
      case ValueType::kNdArray: {
        const NdArrayView& a = m.ndarray;
        const std::string text = options.text_arrays ? QuotedText(a) : "";
        out += std::string("ndarray<") + ValueTypeName(a.element_type) + ">[" + DimsText(a.dims) + "] = " +
               (text.empty() ? Preview(Elements(a.element_type, a.data.data), a.dims, a.numel) : text) + "\n";
        break;
      }
      default:
        out += std::string(ValueTypeName(m.type)) + " = " + Elements(m.type, m.payload.data).Text(0) + "\n";
        break;
    }
  }
  if (!file.metadata().empty()) out += "\n";

  for (const Tensor& t : file.tensors()) {
    const std::string type = ValueTypeName(t.dtype);
    if (!t.has_data) {
      out += std::string(t.name) + ": " + type + "[" + DimsText(t.dims) + "] -- uninitialized\n\n";
      continue;
    }
    const Elements e(t.dtype, t.data.data);
    if (t.dims.empty()) {
      out += std::string(t.name) + ": " + type + " = " + e.Text(0) + "\n\n";
      continue;
    }
    out += std::string(t.name) + ": " + type + "[" + DimsText(t.dims) + "] = " + Preview(e, t.dims, t.numel) + "\n";
    if (t.numel > 0) out += Stats(e, t.numel, t.data.size);
    out += "\n";
  }
  return out;
}

}  // namespace oaaxvk::oinf
