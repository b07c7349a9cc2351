#include "toolchain/ir/eval_values.h"

#include <cmath>
#include <cstring>

#include "toolchain/ir/shape_infer.h"
#include "toolchain/ir/shape_infer_int.h"

namespace oaaxvk::toolchain::eval {

Status NodeError(const Node& n, const std::string& msg) {
  return InvalidArgument("node '" + n.name + "' (" + n.op_type + "): " + msg);
}

Tensor OutLike(const Graph& g, const Node& n, size_t k) {
  const Tensor& o = g.tensors.at(n.outputs[k]);
  Tensor t;
  t.name = o.name; t.dtype = o.dtype; t.shape = o.shape; t.has_shape = true; t.is_const = true;
  t.data.resize(static_cast<size_t>(o.numel()) * DTypeSize(o.dtype));
  return t;
}

bool IsIntegerDType(DType t) { return t != DType::kBool && DTypeSize(t) != 0 && !IsFloatLike(t); }

std::vector<int64_t> IntsOf(const Tensor& t) {
  const size_t es = DTypeSize(t.dtype);
  std::vector<int64_t> r(es == 0 ? 0 : t.data.size() / es);
  const uint8_t* p = t.data.data();
  for (size_t i = 0; i < r.size(); ++i, p += es) {
    switch (t.dtype) {
      case DType::kInt8: { int8_t v; std::memcpy(&v, p, 1); r[i] = v; break; }
      case DType::kUint8: case DType::kBool: r[i] = p[0]; break;
      case DType::kInt16: { int16_t v; std::memcpy(&v, p, 2); r[i] = v; break; }
      case DType::kUint16: { uint16_t v; std::memcpy(&v, p, 2); r[i] = v; break; }
      case DType::kInt32: { int32_t v; std::memcpy(&v, p, 4); r[i] = v; break; }
      case DType::kUint32: { uint32_t v; std::memcpy(&v, p, 4); r[i] = v; break; }
      default: std::memcpy(&r[i], p, 8); break;  // int64, uint64
    }
  }
  return r;
}

std::vector<double> FloatsOf(const Tensor& t) { return t.AsDoubles(); }

Tensor MakeConstWrapped(const std::string& name, DType dtype, const Shape& shape, const std::vector<int64_t>& v) {
  Tensor t;
  t.name = name; t.dtype = dtype; t.shape = shape; t.has_shape = true; t.is_const = true;
  const size_t es = DTypeSize(dtype);
  t.data.resize(v.size() * es);
  for (size_t i = 0; i < v.size(); ++i) {
    const uint64_t u = static_cast<uint64_t>(v[i]);
    for (size_t b = 0; b < es; ++b) t.data[i * es + b] = static_cast<uint8_t>(u >> (8 * b));
  }
  return t;
}

Tensor MakeConstFloat(const std::string& name, DType dtype, const Shape& shape, const std::vector<double>& v) {
  return MakeConstFromDoubles(name, dtype, shape, v);
}

Tensor MakeConstBool(const std::string& name, const Shape& shape, const std::vector<int64_t>& v) {
  Tensor t;
  t.name = name; t.dtype = DType::kBool; t.shape = shape; t.has_shape = true; t.is_const = true;
  t.data.resize(v.size());
  for (size_t i = 0; i < v.size(); ++i) t.data[i] = v[i] != 0 ? 1 : 0;
  return t;
}

// ONNX Runtime's CPU Cast on x86-64 truncates toward zero; the conversion
// instructions return the most negative value for NaN and out-of-range
// values: 64-bit targets and uint32 convert through int64, narrower types
// through int32, then wrap; uint64 takes [2^63, 2^64) exactly and larger
// values as 0. The convert shader (shaders/convert.comp) computes the same
// on the device.
int64_t FloatToIntLikeOrt(double f, DType dtype) {
  const bool via64 = dtype == DType::kInt64 || dtype == DType::kUint64 || dtype == DType::kUint32;
  if (dtype == DType::kUint64 && f >= 9223372036854775808.0)
    return f < 18446744073709551616.0 ? static_cast<int64_t>(static_cast<uint64_t>(f)) : 0;
  const double lim = via64 ? 9223372036854775808.0 : 2147483648.0;
  const double t = std::trunc(f);
  if (!(t >= -lim && t < lim)) return via64 ? INT64_MIN : INT32_MIN;
  return static_cast<int64_t>(t);
}

std::vector<int64_t> BroadcastElementStrides(const Shape& in, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  int64_t s = 1;
  const size_t off = out.size() - in.size();
  for (size_t i = in.size(); i-- > 0;) {
    st[off + i] = in[i].value() == 1 ? 0 : s;
    s *= in[i].value();
  }
  return st;
}

}  // namespace oaaxvk::toolchain::eval
