// Constant evaluation of elementwise operators: arithmetic, unary math,
// comparisons, logic, Where, Cast and Clip. Float32 (and float16 /
// bfloat16, whose values float32 holds exactly) is computed in float32 and
// double in double, so that a shape computation such as
// floor(float(800) * 1.6666666f) gives the value ONNX Runtime computes,
// bit for bit; integers are computed in 64 bits and wrap to the output
// width like ONNX Runtime.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>

#include "toolchain/ir/eval_values.h"
#include "toolchain/ir/shape_infer_int.h"

namespace oaaxvk::toolchain::eval {

namespace {

const std::set<std::string>& BinaryArith() {
  static const std::set<std::string> k = {"Add", "Sub", "Mul", "Div", "Mod", "Pow", "Max", "Min"};
  return k;
}
const std::set<std::string>& UnaryOps() {
  static const std::set<std::string> k = {"Neg",   "Abs",  "Reciprocal", "Sqrt", "Exp",  "Log",    "Floor",
                                          "Ceil",  "Round", "Sign",      "Relu", "Sigmoid", "Not"};
  return k;
}
const std::set<std::string>& Comparisons() {
  static const std::set<std::string> k = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"};
  return k;
}

// Inputs of `n` (nullptr for an omitted optional input).
std::vector<const Tensor*> Inputs(const Graph& g, const Node& n) {
  std::vector<const Tensor*> in;
  for (const std::string& s : n.inputs) in.push_back(s.empty() ? nullptr : g.FindTensor(s));
  return in;
}

template <typename T>
T FloatBinary(const std::string& op, T a, T b, bool fmod) {
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  if (op == "Div") return a / b;
  if (op == "Pow") return std::pow(a, b);
  if (op == "Max") return std::isnan(a) || std::isnan(b) ? NAN : (a > b ? a : b);
  if (op == "Min") return std::isnan(a) || std::isnan(b) ? NAN : (a < b ? a : b);
  // Mod: fmod = 1 is C's fmod (the sign of the dividend); fmod = 0 takes the
  // sign of the divisor, as integer Mod does.
  T r = std::fmod(a, b);
  if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// Integer a op b; unsigned64 compares / divides as uint64. Sets *err on a
// division by zero.
int64_t IntBinary(const Node& n, const std::string& op, int64_t a, int64_t b, bool unsigned64, bool fmod,
                  Status* err) {
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  if (op == "Add") return static_cast<int64_t>(ua + ub);
  if (op == "Sub") return static_cast<int64_t>(ua - ub);
  if (op == "Mul") return static_cast<int64_t>(ua * ub);
  if (op == "Max") return unsigned64 ? (ua > ub ? a : b) : (a > b ? a : b);
  if (op == "Min") return unsigned64 ? (ua < ub ? a : b) : (a < b ? a : b);
  if (op == "Pow") {
    if (b < 0) {  // ONNX Runtime: pow in double, truncated: only |a| == 1 gives a non-zero integer
      if (a == 1) return 1;
      if (a == -1) return (b % 2 == 0) ? 1 : -1;
      if (a == 0) { *err = NodeError(n, "0 raised to a negative power (a constant exponent)"); return 0; }
      return 0;
    }
    uint64_t r = 1, base = ua;
    for (uint64_t e = ub; e != 0; e >>= 1) {
      if (e & 1) r *= base;
      base *= base;
    }
    return static_cast<int64_t>(r);
  }
  if (b == 0) {
    *err = NodeError(n, "integer " + op + " by zero (a constant divisor is 0)");
    return 0;
  }
  if (unsigned64) return static_cast<int64_t>(op == "Div" ? ua / ub : ua % ub);
  if (a == INT64_MIN && b == -1) return op == "Div" ? INT64_MIN : 0;  // the one quotient that overflows
  if (op == "Div") return a / b;  // truncation toward zero, as ONNX Runtime
  int64_t r = a % b;
  if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

template <typename T>
T FloatUnary(const std::string& op, T x) {
  if (op == "Neg") return -x;
  if (op == "Abs") return std::fabs(x);
  if (op == "Reciprocal") return T(1) / x;
  if (op == "Sqrt") return std::sqrt(x);
  if (op == "Exp") return std::exp(x);
  if (op == "Log") return std::log(x);
  if (op == "Floor") return std::floor(x);
  if (op == "Ceil") return std::ceil(x);
  if (op == "Round") return std::nearbyint(x);  // the default rounding mode: half to even, as ONNX
  if (op == "Sign") return std::isnan(x) ? x : T((x > 0) - (x < 0));
  if (op == "Relu") return x > 0 ? x : T(0);
  return T(1) / (T(1) + std::exp(-x));  // Sigmoid
}

// Runs f over every value as float32 (float, float16, bfloat16) or double.
template <typename F>
std::vector<double> InPrecision(DType dt, size_t count, F f) {
  std::vector<double> r(count);
  for (size_t i = 0; i < count; ++i)
    r[i] = dt == DType::kDouble ? f(i, double{}) : static_cast<double>(f(i, float{}));
  return r;
}

StatusOr<std::vector<Tensor>> Binary(const Graph& g, const Node& n) {
  const std::vector<const Tensor*> in = Inputs(g, n);
  if (in.size() < 2 || !in[0] || !in[1]) return NodeError(n, "needs two inputs");
  const Tensor& x = *in[0];
  const Tensor& y = *in[1];
  const Tensor out = OutLike(g, n, 0);
  const bool fmod = n.GetInt("fmod", 0) != 0;
  const size_t count = static_cast<size_t>(out.numel().value());
  std::vector<int64_t> pa(count), pb(count);
  ForEachBroadcast(out.shape, {x.shape, y.shape}, [&](int64_t i, const std::vector<int64_t>& off) {
    pa[i] = off[0];
    pb[i] = off[1];
  });
  if (IsIntegerDType(out.dtype)) {
    const std::vector<int64_t> a = IntsOf(x), b = IntsOf(y);
    std::vector<int64_t> r(count);
    Status err;
    for (size_t i = 0; i < count && err.ok(); ++i)
      r[i] = IntBinary(n, n.op_type, a[pa[i]], b[pb[i]], out.dtype == DType::kUint64, fmod, &err);
    OAAXVK_RETURN_IF_ERROR(err);
    return std::vector<Tensor>{MakeConstWrapped(out.name, out.dtype, out.shape, r)};
  }
  if (!IsFloatLike(out.dtype)) return NodeError(n, "cannot evaluate on " + std::string(DTypeName(out.dtype)));
  const std::vector<double> a = FloatsOf(x), b = FloatsOf(y);
  // Pow is computed in double and rounded once (the correctly rounded
  // result, which ONNX Runtime's float pow gives as well); the other
  // operators are exact or correctly rounded in the tensor's precision.
  std::vector<double> r = InPrecision(n.op_type == "Pow" ? DType::kDouble : out.dtype, count, [&](size_t i, auto t) {
    using T = decltype(t);
    return FloatBinary<T>(n.op_type, static_cast<T>(a[pa[i]]), static_cast<T>(b[pb[i]]), fmod);
  });
  return std::vector<Tensor>{MakeConstFloat(out.name, out.dtype, out.shape, r)};
}

StatusOr<std::vector<Tensor>> Unary(const Graph& g, const Node& n) {
  const Tensor& x = *g.FindTensor(n.inputs[0]);
  const Tensor out = OutLike(g, n, 0);
  const std::string& op = n.op_type;
  if (op == "Not") {
    std::vector<int64_t> v = IntsOf(x);
    for (int64_t& e : v) e = e == 0;
    return std::vector<Tensor>{MakeConstBool(out.name, out.shape, v)};
  }
  if (IsIntegerDType(x.dtype)) {
    std::vector<int64_t> v = IntsOf(x);
    const bool is_unsigned = x.dtype == DType::kUint8 || x.dtype == DType::kUint16 || x.dtype == DType::kUint32 ||
                             x.dtype == DType::kUint64;
    for (int64_t& e : v) {
      const uint64_t u = static_cast<uint64_t>(e);
      if (op == "Neg") e = static_cast<int64_t>(0 - u);
      else if (op == "Abs") e = is_unsigned || e >= 0 ? e : static_cast<int64_t>(0 - u);
      else if (op == "Sign") e = is_unsigned ? (e != 0) : (e > 0) - (e < 0);
      else if (op == "Relu") e = is_unsigned || e > 0 ? e : 0;
      else if (op == "Floor" || op == "Ceil" || op == "Round") continue;  // integers are their own rounding
      else return NodeError(n, "is not defined on integer input '" + n.inputs[0] + "' (" + DTypeName(x.dtype) + ")");
    }
    return std::vector<Tensor>{MakeConstWrapped(out.name, out.dtype, out.shape, v)};
  }
  if (!IsFloatLike(x.dtype)) return NodeError(n, "cannot evaluate on " + std::string(DTypeName(x.dtype)));
  const std::vector<double> a = FloatsOf(x);
  // Exp, Log and Sigmoid in double, rounded once to the output type: the
  // correctly rounded value (float32 library functions may be an ulp off).
  const bool wide = op == "Exp" || op == "Log" || op == "Sigmoid";
  std::vector<double> r = InPrecision(wide ? DType::kDouble : out.dtype, a.size(), [&](size_t i, auto t) {
    using T = decltype(t);
    return FloatUnary<T>(op, static_cast<T>(a[i]));
  });
  return std::vector<Tensor>{MakeConstFloat(out.name, out.dtype, out.shape, r)};
}

StatusOr<std::vector<Tensor>> Compare(const Graph& g, const Node& n) {
  const std::vector<const Tensor*> in = Inputs(g, n);
  if (in.size() < 2 || !in[0] || !in[1]) return NodeError(n, "needs two inputs");
  const Tensor& x = *in[0];
  const Tensor& y = *in[1];
  const Tensor out = OutLike(g, n, 0);
  const std::string& op = n.op_type;
  std::vector<int64_t> r(static_cast<size_t>(out.numel().value()));
  auto decide = [&](auto a, auto b) -> int64_t {
    if (op == "Equal") return a == b;
    if (op == "Less") return a < b;
    if (op == "Greater") return a > b;
    if (op == "LessOrEqual") return a <= b;
    return a >= b;
  };
  if (IsFloatLike(x.dtype) || IsFloatLike(y.dtype)) {
    const std::vector<double> a = FloatsOf(x), b = FloatsOf(y);
    ForEachBroadcast(out.shape, {x.shape, y.shape},
                     [&](int64_t i, const std::vector<int64_t>& o) { r[i] = decide(a[o[0]], b[o[1]]); });
  } else {
    const std::vector<int64_t> a = IntsOf(x), b = IntsOf(y);
    const bool u64 = x.dtype == DType::kUint64 || y.dtype == DType::kUint64;
    ForEachBroadcast(out.shape, {x.shape, y.shape}, [&](int64_t i, const std::vector<int64_t>& o) {
      r[i] = u64 ? decide(static_cast<uint64_t>(a[o[0]]), static_cast<uint64_t>(b[o[1]])) : decide(a[o[0]], b[o[1]]);
    });
  }
  return std::vector<Tensor>{MakeConstBool(out.name, out.shape, r)};
}

StatusOr<std::vector<Tensor>> Logic(const Graph& g, const Node& n) {
  const std::vector<const Tensor*> in = Inputs(g, n);
  if (in.size() < 2 || !in[0] || !in[1]) return NodeError(n, "needs two inputs");
  const Tensor out = OutLike(g, n, 0);
  const std::vector<int64_t> a = IntsOf(*in[0]), b = IntsOf(*in[1]);
  std::vector<int64_t> r(static_cast<size_t>(out.numel().value()));
  ForEachBroadcast(out.shape, {in[0]->shape, in[1]->shape}, [&](int64_t i, const std::vector<int64_t>& o) {
    const bool p = a[o[0]] != 0, q = b[o[1]] != 0;
    r[i] = n.op_type == "And" ? (p && q) : n.op_type == "Or" ? (p || q) : (p != q);
  });
  return std::vector<Tensor>{MakeConstBool(out.name, out.shape, r)};
}

StatusOr<std::vector<Tensor>> WhereOp(const Graph& g, const Node& n) {
  const std::vector<const Tensor*> in = Inputs(g, n);
  if (in.size() < 3 || !in[0] || !in[1] || !in[2]) return NodeError(n, "needs three inputs");
  Tensor out = OutLike(g, n, 0);
  const size_t es = DTypeSize(out.dtype);
  const std::vector<int64_t> c = IntsOf(*in[0]);
  ForEachBroadcast(out.shape, {in[0]->shape, in[1]->shape, in[2]->shape},
                   [&](int64_t i, const std::vector<int64_t>& o) {
                     const Tensor& src = c[o[0]] != 0 ? *in[1] : *in[2];
                     const int64_t p = c[o[0]] != 0 ? o[1] : o[2];
                     std::memcpy(out.data.data() + i * es, src.data.data() + p * es, es);
                   });
  return std::vector<Tensor>{out};
}

StatusOr<std::vector<Tensor>> CastOp(const Graph& g, const Node& n) {
  const Tensor& x = *g.FindTensor(n.inputs[0]);
  const Tensor out = OutLike(g, n, 0);
  if (out.dtype == DType::kBool) {
    std::vector<int64_t> v;
    if (IsFloatLike(x.dtype)) {
      for (double d : FloatsOf(x)) v.push_back(d != 0);  // NaN is true, as in C++ and ONNX Runtime
    } else {
      v = IntsOf(x);
    }
    return std::vector<Tensor>{MakeConstBool(out.name, out.shape, v)};
  }
  if (IsIntegerDType(out.dtype)) {
    if (!IsFloatLike(x.dtype)) return std::vector<Tensor>{MakeConstWrapped(out.name, out.dtype, out.shape, IntsOf(x))};
    std::vector<int64_t> v;
    for (double d : FloatsOf(x)) v.push_back(FloatToIntLikeOrt(d, out.dtype));
    return std::vector<Tensor>{MakeConstWrapped(out.name, out.dtype, out.shape, v)};
  }
  if (!IsFloatLike(out.dtype)) return NodeError(n, "cannot cast to " + std::string(DTypeName(out.dtype)));
  if (IsFloatLike(x.dtype))
    return std::vector<Tensor>{MakeConstFromDoubles(out.name, out.dtype, out.shape, FloatsOf(x))};
  // Integer to float: one rounding from the exact integer to the target
  // (through a double first would round twice for |v| > 2^53).
  const std::vector<int64_t> v = IntsOf(x);
  std::vector<double> d(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (out.dtype == DType::kDouble)
      d[i] = x.dtype == DType::kUint64 ? static_cast<double>(static_cast<uint64_t>(v[i])) : static_cast<double>(v[i]);
    else
      d[i] = x.dtype == DType::kUint64 ? static_cast<float>(static_cast<uint64_t>(v[i])) : static_cast<float>(v[i]);
  }
  return std::vector<Tensor>{MakeConstFromDoubles(out.name, out.dtype, out.shape, d)};
}

StatusOr<std::vector<Tensor>> ClipOp(const Graph& g, const Node& n) {
  const std::vector<const Tensor*> in = Inputs(g, n);
  const Tensor& x = *in[0];
  const Tensor out = OutLike(g, n, 0);
  if (IsIntegerDType(x.dtype)) {
    std::vector<int64_t> v = IntsOf(x);
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    if (in.size() > 1 && in[1]) lo = IntsOf(*in[1]).at(0);
    if (in.size() > 2 && in[2]) hi = IntsOf(*in[2]).at(0);
    for (int64_t& d : v) d = std::min(std::max(d, lo), hi);
    return std::vector<Tensor>{MakeConstWrapped(out.name, out.dtype, out.shape, v)};
  }
  std::vector<double> v = FloatsOf(x);
  double lo = -INFINITY, hi = INFINITY;
  if (n.HasAttr("min")) lo = n.GetFloat("min", 0);
  if (n.HasAttr("max")) hi = n.GetFloat("max", 0);
  if (in.size() > 1 && in[1]) lo = FloatsOf(*in[1]).at(0);
  if (in.size() > 2 && in[2]) hi = FloatsOf(*in[2]).at(0);
  for (double& d : v) d = std::isnan(d) ? d : std::min(std::max(d, lo), hi);
  return std::vector<Tensor>{MakeConstFloat(out.name, out.dtype, out.shape, v)};
}

}  // namespace

StatusOr<std::vector<Tensor>> EvaluateElementwise(const Graph& g, const Node& n, bool* handled) {
  const std::string& op = n.op_type;
  *handled = true;
  if (BinaryArith().count(op) && n.inputs.size() == 2) return Binary(g, n);
  if (UnaryOps().count(op)) return Unary(g, n);
  if (Comparisons().count(op)) return Compare(g, n);
  if (op == "And" || op == "Or" || op == "Xor") return Logic(g, n);
  if (op == "Where") return WhereOp(g, n);
  if (op == "Cast" || op == "CastLike") return CastOp(g, n);
  if (op == "Clip") return ClipOp(g, n);
  *handled = false;
  return std::vector<Tensor>{};
}

}  // namespace oaaxvk::toolchain::eval
