// Constant evaluation of reductions (ReduceSum, ReduceProd, ReduceMin,
// ReduceMax, ReduceMean) and CumSum. Float sums accumulate in the tensor's
// precision (float32 for float, float16 and bfloat16) in element order, as
// ONNX Runtime's CPU kernels do for the short vectors of shape
// computations; integers accumulate in 64 bits and wrap to the output width.
#include <cmath>
#include <set>

#include "toolchain/ir/eval_values.h"
#include "toolchain/ir/shape_infer.h"
#include "toolchain/ir/shape_infer_int.h"

namespace oaaxvk::toolchain::eval {

namespace {

const std::set<std::string>& Reductions() {
  static const std::set<std::string> k = {"ReduceSum", "ReduceProd", "ReduceMin", "ReduceMax", "ReduceMean"};
  return k;
}

template <typename T>
T Combine(const std::string& op, T acc, T v) {
  if (op == "ReduceProd") return acc * v;
  if (op == "ReduceMin") return std::isnan(static_cast<double>(v)) || v < acc ? v : acc;
  if (op == "ReduceMax") return std::isnan(static_cast<double>(v)) || v > acc ? v : acc;
  return acc + v;  // ReduceSum, ReduceMean
}

StatusOr<std::vector<Tensor>> Reduce(const Graph& g, const Node& n) {
  const Tensor& x = *g.FindTensor(n.inputs[0]);
  const Tensor out = OutLike(g, n, 0);
  if (n.GetInt("_axes_by_value", 0) != 0)
    return NodeError(n, "internal: axes read at run time reached constant folding");
  const std::vector<int64_t> axes = n.GetInts("_axes", {});
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : axes) reduced.at(static_cast<size_t>(a)) = true;
  // Output element of each input element: the input index with the reduced
  // axes dropped, over the kept axes' dense strides.
  std::vector<int64_t> ost(static_cast<size_t>(rank), 0);
  int64_t s = 1;
  for (int64_t d = rank - 1; d >= 0; --d)
    if (!reduced[d]) { ost[d] = s; s *= x.shape[d]; }
  const size_t count = static_cast<size_t>(out.numel().value());
  std::vector<int64_t> dst(static_cast<size_t>(x.numel().value()));
  std::vector<int64_t> group(count, 0);
  ForEachIndex(x.shape, [&](int64_t i, const std::vector<int64_t>& idx) {
    int64_t o = 0;
    for (int64_t d = 0; d < rank; ++d) o += idx[d] * ost[d];
    dst[i] = o;
    ++group[o];
  });
  const std::string& op = n.op_type;
  if (IsIntegerDType(x.dtype)) {
    const std::vector<int64_t> v = IntsOf(x);
    std::vector<int64_t> acc(count, op == "ReduceProd" ? 1 : 0);
    std::vector<bool> seen(count, false);
    for (size_t i = 0; i < v.size(); ++i) {
      int64_t& a = acc[dst[i]];
      if ((op == "ReduceMin" || op == "ReduceMax") && !seen[dst[i]]) { a = v[i]; seen[dst[i]] = true; continue; }
      if (op == "ReduceMin") a = std::min(a, v[i]);
      else if (op == "ReduceMax") a = std::max(a, v[i]);
      else if (op == "ReduceProd") a = static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(v[i]));
      else a = static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(v[i]));
    }
    if (op == "ReduceMean")
      for (size_t o = 0; o < count; ++o) acc[o] = group[o] == 0 ? 0 : acc[o] / group[o];
    return std::vector<Tensor>{MakeConstWrapped(out.name, out.dtype, out.shape, acc)};
  }
  if (!IsFloatLike(x.dtype)) return NodeError(n, "cannot evaluate on " + std::string(DTypeName(x.dtype)));
  const std::vector<double> v = FloatsOf(x);
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const T init = op == "ReduceProd" ? T(1) : op == "ReduceMin" ? T(INFINITY) : op == "ReduceMax" ? T(-INFINITY) : T(0);
    std::vector<T> acc(count, init);
    for (size_t i = 0; i < v.size(); ++i) acc[dst[i]] = Combine<T>(op, acc[dst[i]], static_cast<T>(v[i]));
    std::vector<double> r(count);
    for (size_t o = 0; o < count; ++o)
      r[o] = op == "ReduceMean" ? static_cast<double>(acc[o] / static_cast<T>(group[o])) : static_cast<double>(acc[o]);
    return r;
  };
  std::vector<double> r = x.dtype == DType::kDouble ? run(double{}) : run(float{});
  return std::vector<Tensor>{MakeConstFloat(out.name, out.dtype, out.shape, r)};
}

StatusOr<std::vector<Tensor>> CumSumOp(const Graph& g, const Node& n) {
  const Tensor& x = *g.FindTensor(n.inputs[0]);
  const Tensor* at = n.inputs.size() > 1 && !n.inputs[1].empty() ? g.FindTensor(n.inputs[1]) : nullptr;
  if (at == nullptr || at->numel() != 1) return NodeError(n, "axis must be a one-element tensor");
  const Tensor out = OutLike(g, n, 0);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = IntsOf(*at).at(0);
  if (axis < -rank || axis >= rank) return NodeError(n, "axis " + std::to_string(axis) + " is out of range");
  if (axis < 0) axis += rank;
  const bool exclusive = n.GetInt("exclusive", 0) != 0, reverse = n.GetInt("reverse", 0) != 0;
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < rank; ++d) inner *= x.shape[d];
  const int64_t len = x.shape[axis], outer = x.numel() / std::max<int64_t>(len * inner, 1);
  auto scan = [&](auto values, auto zero) {
    using T = decltype(zero);
    std::vector<T> r(values.size(), T(0));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t in = 0; in < inner; ++in) {
        T acc = T(0);
        for (int64_t k = 0; k < len; ++k) {
          const int64_t j = reverse ? len - 1 - k : k;
          const size_t p = static_cast<size_t>((o * len + j) * inner + in);
          if (exclusive) { r[p] = acc; acc = acc + static_cast<T>(values[p]); }
          else { acc = acc + static_cast<T>(values[p]); r[p] = acc; }
        }
      }
    return r;
  };
  if (IsIntegerDType(x.dtype)) {
    std::vector<uint64_t> u = scan(IntsOf(x), uint64_t{0});  // wraps like the output type
    return std::vector<Tensor>{MakeConstWrapped(out.name, out.dtype, out.shape, std::vector<int64_t>(u.begin(), u.end()))};
  }
  if (!IsFloatLike(x.dtype)) return NodeError(n, "cannot evaluate on " + std::string(DTypeName(x.dtype)));
  std::vector<double> r;
  if (x.dtype == DType::kDouble) {
    r = scan(FloatsOf(x), double{0});
  } else {
    std::vector<float> f = scan(FloatsOf(x), float{0});
    r.assign(f.begin(), f.end());
  }
  return std::vector<Tensor>{MakeConstFloat(out.name, out.dtype, out.shape, r)};
}

}  // namespace

StatusOr<std::vector<Tensor>> EvaluateReduction(const Graph& g, const Node& n, bool* handled) {
  *handled = true;
  if (Reductions().count(n.op_type)) return Reduce(g, n);
  if (n.op_type == "CumSum") return CumSumOp(g, n);
  *handled = false;
  return std::vector<Tensor>{};
}

}  // namespace oaaxvk::toolchain::eval
