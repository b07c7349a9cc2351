#include "toolchain/ir/eval.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>

#include "toolchain/ir/shape_infer.h"
#include "toolchain/ir/shape_infer_int.h"

namespace oaaxvk::toolchain {

namespace {

const std::set<std::string>& Evaluable() {
  static const std::set<std::string> k = {
      "Shape", "Size", "Gather", "Slice", "Concat", "Cast", "Unsqueeze", "Squeeze", "Reshape",
      "Flatten", "Identity", "Dropout", "Add", "Sub", "Mul", "Div", "Transpose", "ConstantOfShape",
      "Neg", "Sqrt", "Relu", "Sigmoid", "Clip"};
  return k;
}

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

// Multi-index iteration over `shape` calling f(flat_out_index, index_vector).
template <typename F>
void ForEachIndex(const Shape& shape, F f) {
  int64_t total = NumElements(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t i = 0; i < total; ++i) {
    f(i, idx);
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// Integer data types other than bool: folded arithmetic on them runs in the
// type itself, wrapping modulo 2^bits like ONNX Runtime, never through a
// double (which saturates or is undefined out of range).
bool IsIntegerDType(DType t) { return t != DType::kBool && DTypeSize(t) != 0 && !IsFloatLike(t); }

// The exact values of an integer (or bool) tensor, sign- or zero-extended to
// 64 bits (uint64 values above INT64_MAX keep their bit pattern).
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

// A constant of integer type `dtype` holding the low DTypeSize(dtype) bytes
// of each value: two's-complement wrap-around (little-endian storage).
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

// A float converted to integer type `dtype` as ONNX Runtime's CPU Cast does
// on x86-64 (truncation toward zero; the conversion instructions return the
// most negative value for NaN and out-of-range values): 64-bit targets and
// uint32 convert through int64, narrower types through int32, then wrap;
// uint64 takes [2^63, 2^64) exactly and larger values as 0. The convert
// shader (shaders/convert.comp) computes the same on the device.
int64_t FloatToIntLikeOrt(double f, DType dtype) {
  const bool via64 = dtype == DType::kInt64 || dtype == DType::kUint64 || dtype == DType::kUint32;
  if (dtype == DType::kUint64 && f >= 9223372036854775808.0)
    return f < 18446744073709551616.0 ? static_cast<int64_t>(static_cast<uint64_t>(f)) : 0;
  const double lim = via64 ? 9223372036854775808.0 : 2147483648.0;
  const double t = std::trunc(f);
  if (!(t >= -lim && t < lim)) return via64 ? INT64_MIN : INT32_MIN;
  return static_cast<int64_t>(t);
}

// a op b in 64-bit two's complement (the caller wraps to the output width).
int64_t WrapArith(const std::string& op, int64_t a, int64_t b) {
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  if (op == "Add") return static_cast<int64_t>(ua + ub);
  if (op == "Sub") return static_cast<int64_t>(ua - ub);
  if (op == "Mul") return static_cast<int64_t>(ua * ub);
  if (a == INT64_MIN && b == -1) return INT64_MIN;  // Div: the one quotient that overflows
  return a / b;
}

}  // namespace

bool CanEvaluate(const Graph& g, const Node& n) {
  if (!(n.domain.empty() || n.domain == "ai.onnx") || !Evaluable().count(n.op_type)) return false;
  for (const std::string& o : n.outputs) {
    const Tensor* t = g.FindTensor(o);
    if (!o.empty() && (!t || !t->has_shape || DTypeSize(t->dtype) == 0)) return false;
  }
  if (n.op_type == "Shape" || n.op_type == "Size") {
    const Tensor* t = g.FindTensor(n.inputs[0]);
    return t && t->has_shape;
  }
  for (const std::string& in : n.inputs)
    if (!in.empty() && !g.IsConst(in)) return false;
  // An input computed from run-time values (Tensor::sym) folds only where
  // the symbols are carried to the output (PropagateSymbols); any other
  // operator reading one (a float Cast, arithmetic) stays a device
  // operator, the values reaching it as data (dims_to_data).
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const Tensor* t = n.inputs[k].empty() ? nullptr : g.FindTensor(n.inputs[k]);
    if (t == nullptr || !AnyDependsOnValue(t->sym)) continue;
    const std::string& op = n.op_type;
    const Tensor* y = n.outputs.empty() ? nullptr : g.FindTensor(n.outputs[0]);
    const bool int_out = y != nullptr && (y->dtype == DType::kInt64 || y->dtype == DType::kInt32);
    const bool carried =
        (k == 0 && (op == "Identity" || op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" ||
                    (op == "Cast" && int_out) || ((op == "Gather" || op == "Slice") && t->shape.size() == 1))) ||
        (op == "Concat" && int_out && y->shape.size() == 1);
    if (!carried) return false;
  }
  return true;
}

namespace {
StatusOr<std::vector<Tensor>> EvaluateValues(const Graph& g, const Node& n);

// Symbolic values (Tensor::sym) of a folded shape computation: the Dims of a
// Shape, carried through the integer ops that move them unchanged (views,
// integer Cast, Gather, Concat and Slice of 1-D tensors). Other ops fold to
// plain values, which a dynamic-shape conversion reports where it matters.
void PropagateSymbols(const Graph& g, const Node& n, Tensor* out) {
  const std::string& op = n.op_type;
  std::vector<const Tensor*> in;
  for (const std::string& s : n.inputs) in.push_back(s.empty() ? nullptr : g.FindTensor(s));
  if (in.empty() || in[0] == nullptr) return;
  const Tensor& x = *in[0];
  const bool int_out = out->dtype == DType::kInt64 || out->dtype == DType::kInt32;
  std::vector<Dim> sym;
  if (op == "Shape") {
    if (!AnySymbolic(x.shape)) return;
    const std::vector<int64_t> v = out->AsInts();
    // The folded values are a contiguous run of the input's dimensions.
    for (size_t st = 0; st + v.size() <= x.shape.size(); ++st) {
      bool match = true;
      for (size_t k = 0; k < v.size() && match; ++k) match = x.shape[st + k].value() == v[k];
      if (match) { sym.assign(x.shape.begin() + st, x.shape.begin() + st + v.size()); break; }
    }
  } else if (x.sym.empty() && op != "Concat") {
    return;
  } else if (op == "Identity" || op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" ||
             (op == "Cast" && int_out)) {
    sym = x.sym;
  } else if (op == "Gather" && x.shape.size() == 1 && in.size() > 1 && in[1] != nullptr) {
    const int64_t len = static_cast<int64_t>(x.sym.size());
    for (int64_t i : in[1]->AsInts()) sym.push_back(x.sym.at(static_cast<size_t>(i < 0 ? i + len : i)));
  } else if (op == "Concat" && out->shape.size() == 1 && int_out) {
    bool any = false;
    for (const Tensor* t : in) {
      if (t == nullptr) continue;
      any |= !t->sym.empty();
      std::vector<Dim> d = t->AsDims();
      sym.insert(sym.end(), d.begin(), d.end());
    }
    if (!any) return;
  } else if (op == "Slice" && x.shape.size() == 1) {
    std::vector<int64_t> st = n.GetInts("_starts", {}), sp = n.GetInts("_steps", {});
    if (st.size() != 1 || sp.size() != 1) return;
    for (int64_t i = 0; i < out->numel(); ++i) sym.push_back(x.sym.at(static_cast<size_t>(st[0] + i * sp[0])));
  } else {
    return;
  }
  if (sym.size() == static_cast<size_t>(out->numel().value()) && AnySymbolic(sym)) out->sym = std::move(sym);
}
}  // namespace

StatusOr<std::vector<Tensor>> EvaluateNode(const Graph& g, const Node& n) {
  OAAXVK_ASSIGN_OR_RETURN(std::vector<Tensor> outs, EvaluateValues(g, n));
  if (!outs.empty()) PropagateSymbols(g, n, &outs[0]);
  // Run-time value symbols (Symbol::is_value) survive folding only where
  // PropagateSymbols carried them (input 0 of the moving ops, every input
  // of Concat); folding them into plain values would bake the conversion's
  // placeholder into the bundle.
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const Tensor* t = n.inputs[k].empty() ? nullptr : g.FindTensor(n.inputs[k]);
    if (t == nullptr || (!AnyDependsOnValue(t->sym) && !AnyDependsOnValue(t->shape))) continue;
    const bool carried = !outs.empty() && AnyDependsOnValue(outs[0].sym) && (k == 0 || n.op_type == "Concat");
    if (!carried)
      return Unimplemented("node '" + n.name + "' (" + n.op_type + "): input '" + n.inputs[k] +
                           "' is computed from a run-time input value, which this operator cannot carry at "
                           "conversion; bind the input at conversion (config.json \"input_values\")");
  }
  return outs;
}

namespace {
StatusOr<std::vector<Tensor>> EvaluateValues(const Graph& g, const Node& n) {
  const std::string& op = n.op_type;
  std::vector<const Tensor*> in;
  for (const std::string& s : n.inputs) in.push_back(s.empty() ? nullptr : g.FindTensor(s));
  const Tensor& x = *in[0];
  Tensor out = OutLike(g, n, 0);
  size_t es = DTypeSize(x.dtype);

  if (op == "Shape") {
    std::vector<int64_t> v(x.shape.begin(), x.shape.end());
    int64_t rank = static_cast<int64_t>(v.size());
    int64_t start = n.GetInt("start", 0), end = n.GetInt("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::max<int64_t>(0, std::min(start, rank));
    end = std::max<int64_t>(start, std::min(end, rank));
    return std::vector<Tensor>{MakeConstI64(out.name, out.shape, {v.begin() + start, v.begin() + end})};
  }
  if (op == "Size") return std::vector<Tensor>{MakeConstI64(out.name, {}, {x.numel()})};
  if (op == "Identity" || op == "Dropout" || op == "Reshape" || op == "Flatten" || op == "Squeeze" ||
      op == "Unsqueeze") {
    out.data = x.data;
    std::vector<Tensor> r{out};
    if (op == "Dropout" && n.outputs.size() > 1 && !n.outputs[1].empty()) {
      Tensor m = OutLike(g, n, 1);
      std::fill(m.data.begin(), m.data.end(), 1);
      r.push_back(m);
    }
    return r;
  }
  if (op == "Cast") {
    if (IsIntegerDType(out.dtype) && (IsIntegerDType(x.dtype) || x.dtype == DType::kBool))
      return std::vector<Tensor>{MakeConstWrapped(out.name, out.dtype, out.shape, IntsOf(x))};
    if (IsIntegerDType(out.dtype)) {
      std::vector<int64_t> v;
      for (double d : x.AsDoubles()) v.push_back(FloatToIntLikeOrt(d, out.dtype));
      return std::vector<Tensor>{MakeConstWrapped(out.name, out.dtype, out.shape, v)};
    }
    return std::vector<Tensor>{MakeConstFromDoubles(out.name, out.dtype, out.shape, x.AsDoubles())};
  }
  if (op == "ConstantOfShape") {
    double v = 0;
    auto it = n.attrs.find("value");
    if (it != n.attrs.end() && !it->second.t.empty()) {
      std::vector<double> d = it->second.t[0].AsDoubles();
      if (!d.empty()) v = d[0];
    }
    return std::vector<Tensor>{MakeConstFromDoubles(out.name, out.dtype, out.shape,
                                                    std::vector<double>(out.numel(), v))};
  }
  if (op == "Gather") {
    int64_t rank = static_cast<int64_t>(x.shape.size());
    int64_t axis = n.GetInt("axis", 0);
    if (axis < 0) axis += rank;
    int64_t outer = 1, inner = 1, len = x.shape[axis];
    for (int64_t i = 0; i < axis; ++i) outer *= x.shape[i];
    for (int64_t i = axis + 1; i < rank; ++i) inner *= x.shape[i];
    std::vector<int64_t> idx = in[1]->AsInts();
    size_t chunk = static_cast<size_t>(inner) * es;
    for (int64_t o = 0; o < outer; ++o)
      for (size_t k = 0; k < idx.size(); ++k) {
        int64_t j = idx[k] < 0 ? idx[k] + len : idx[k];
        if (j < 0 || j >= len) return NodeError(n, "index " + std::to_string(idx[k]) + " out of range");
        if (chunk != 0) {
          std::memcpy(out.data.data() + (o * idx.size() + k) * chunk, x.data.data() + (o * len + j) * chunk, chunk);
        }
      }
    return std::vector<Tensor>{out};
  }
  if (op == "Slice") {
    std::vector<int64_t> st = n.GetInts("_starts", {}), sp = n.GetInts("_steps", {});
    std::vector<int64_t> xs = DimValues(DenseStrides(x.shape));
    ForEachIndex(out.shape, [&](int64_t i, const std::vector<int64_t>& idx) {
      int64_t src = 0;
      for (size_t d = 0; d < idx.size(); ++d) src += (st[d] + idx[d] * sp[d]) * xs[d];
      std::memcpy(out.data.data() + i * es, x.data.data() + src * es, es);
    });
    return std::vector<Tensor>{out};
  }
  if (op == "Concat") {
    int64_t axis = n.GetInt("axis", 0);
    if (axis < 0) axis += static_cast<int64_t>(out.shape.size());
    int64_t outer = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= out.shape[i];
    size_t pos = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (const Tensor* t : in) {
        size_t chunk = t->data.size() / static_cast<size_t>(outer);
        if (chunk == 0) continue;  // empty input: nothing to copy (and data() may be null)
        std::memcpy(out.data.data() + pos, t->data.data() + o * chunk, chunk);
        pos += chunk;
      }
    return std::vector<Tensor>{out};
  }
  if (op == "Transpose") {
    std::vector<int64_t> perm = n.GetInts("perm", {});
    std::vector<int64_t> xs = DimValues(DenseStrides(x.shape));
    ForEachIndex(out.shape, [&](int64_t i, const std::vector<int64_t>& idx) {
      int64_t src = 0;
      for (size_t d = 0; d < idx.size(); ++d) src += idx[d] * xs[perm[d]];
      std::memcpy(out.data.data() + i * es, x.data.data() + src * es, es);
    });
    return std::vector<Tensor>{out};
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    const Tensor& y = *in[1];
    std::vector<int64_t> sa = DimValues(BroadcastStrides(x.shape, out.shape)), sb = DimValues(BroadcastStrides(y.shape, out.shape));
    const bool integer = IsIntegerDType(out.dtype);
    std::vector<int64_t> ia, ib;
    std::vector<double> da, db;
    if (integer) { ia = IntsOf(x); ib = IntsOf(y); } else { da = x.AsDoubles(); db = y.AsDoubles(); }
    std::vector<int64_t> ri(integer ? out.numel().value() : 0);
    std::vector<double> rd(integer ? 0 : out.numel().value());
    Status err;
    ForEachIndex(out.shape, [&](int64_t i, const std::vector<int64_t>& idx) {
      int64_t pa = 0, pb = 0;
      for (size_t d = 0; d < idx.size(); ++d) { pa += idx[d] * sa[d]; pb += idx[d] * sb[d]; }
      if (integer) {
        const int64_t a = ia[pa], b = ib[pb];
        if (op == "Div" && b == 0) err = NodeError(n, "integer division by zero (a constant divisor is 0)");
        else ri[i] = WrapArith(op, a, b);
      } else {
        double a = da[pa], b = db[pb];
        rd[i] = op == "Add" ? a + b : op == "Sub" ? a - b : op == "Mul" ? a * b : a / b;
      }
    });
    OAAXVK_RETURN_IF_ERROR(err);
    if (integer) return std::vector<Tensor>{MakeConstWrapped(out.name, out.dtype, out.shape, ri)};
    return std::vector<Tensor>{MakeConstFromDoubles(out.name, out.dtype, out.shape, rd)};
  }
  if ((op == "Neg" || op == "Relu" || op == "Clip") && IsIntegerDType(x.dtype)) {
    std::vector<int64_t> v = IntsOf(x);
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    if (op == "Clip") {
      if (in.size() > 1 && in[1]) lo = IntsOf(*in[1]).at(0);
      if (in.size() > 2 && in[2]) hi = IntsOf(*in[2]).at(0);
    }
    for (int64_t& d : v) {
      if (op == "Neg") d = static_cast<int64_t>(0 - static_cast<uint64_t>(d));
      else if (op == "Relu") d = d > 0 ? d : 0;
      else d = std::min(std::max(d, lo), hi);
    }
    return std::vector<Tensor>{MakeConstWrapped(out.name, out.dtype, out.shape, v)};
  }
  if (op == "Neg" || op == "Sqrt" || op == "Relu" || op == "Sigmoid" || op == "Clip") {
    std::vector<double> v = x.AsDoubles();
    double lo = -INFINITY, hi = INFINITY;
    if (op == "Clip") {
      if (n.HasAttr("min")) lo = n.GetFloat("min", 0);
      if (n.HasAttr("max")) hi = n.GetFloat("max", 0);
      if (in.size() > 1 && in[1]) lo = in[1]->AsDoubles().at(0);
      if (in.size() > 2 && in[2]) hi = in[2]->AsDoubles().at(0);
    }
    for (double& d : v) {
      if (op == "Neg") d = -d;
      else if (op == "Sqrt") d = std::sqrt(d);
      else if (op == "Relu") d = d > 0 ? d : 0;
      else if (op == "Sigmoid") d = 1.0 / (1.0 + std::exp(-d));
      else d = std::min(std::max(d, lo), hi);
    }
    return std::vector<Tensor>{MakeConstFromDoubles(out.name, out.dtype, out.shape, v)};
  }
  return Unimplemented("node '" + n.name + "': cannot evaluate " + op + " at compile time");
}
}  // namespace

}  // namespace oaaxvk::toolchain
