#include "toolchain/ir/shape_infer_float.h"
#include "toolchain/ir/not_constant.h"

#include <algorithm>
#include <vector>

#include "toolchain/ir/shape_infer.h"

namespace oaaxvk::toolchain {

namespace {

const std::set<std::string>& UnaryMathOps() {
  static const std::set<std::string> k = {
      "Log", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh",
      "Asinh", "Acosh", "Atanh", "Erf", "Softplus", "Softsign", "Elu", "Selu", "Celu", "Mish",
      "ThresholdedRelu", "Shrink"};
  return k;
}

const std::set<std::string>& ReduceOps() {
  static const std::set<std::string> k = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                                          "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                                          "ReduceSumSquare"};
  return k;
}

Status FloatNodeError(const Node& n, const std::string& msg) {
  return InvalidArgument("node '" + n.name + "' (" + n.op_type + "): " + msg);
}

Status SetOutput(Graph& g, const Node& n, DType dt, Shape s) {
  if (n.outputs.empty() || n.outputs[0].empty()) return Status::Ok();
  Tensor& t = g.tensors[n.outputs[0]];
  t.name = n.outputs[0];
  t.dtype = dt;
  t.shape = std::move(s);
  t.has_shape = true;
  return Status::Ok();
}

}  // namespace

const std::set<std::string>& FloatDeviceOps() {
  static const std::set<std::string> k = [] {
    std::set<std::string> s = UnaryMathOps();
    s.insert(ReduceOps().begin(), ReduceOps().end());
    s.insert("LogSoftmax");
    s.insert("Hardmax");
    return s;
  }();
  return k;
}

bool IsReduceOp(const std::string& op_type) { return ReduceOps().count(op_type) != 0; }

Status InferFloatNodeShapes(Graph& g, Node& n, bool* handled) {
  *handled = false;
  if (!FloatDeviceOps().count(n.op_type)) return Status::Ok();
  *handled = true;
  if (n.inputs.empty() || n.inputs[0].empty()) return FloatNodeError(n, "missing input 0");
  const Tensor* xt = g.FindTensor(n.inputs[0]);
  if (!xt || !xt->has_shape) return FloatNodeError(n, "input '" + n.inputs[0] + "' has no static shape");
  const Shape x = xt->shape;
  const DType dt = xt->dtype;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (UnaryMathOps().count(n.op_type)) return SetOutput(g, n, dt, x);
  if (n.op_type == "LogSoftmax" || n.op_type == "Hardmax") {
    int64_t axis = n.GetInt("axis", g.opset >= 13 ? -1 : 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= std::max<int64_t>(rank, 1))
      return FloatNodeError(n, "axis " + std::to_string(n.GetInt("axis", 0)) + " is out of range for input " +
                                   ShapeToString(x));
    return SetOutput(g, n, dt, x);
  }

  // Reduce*: axes from the attribute (ReduceSum before opset 13, the others
  // before 18) or from a constant second input, or read at run time.
  if (const Tensor* at = !n.HasAttr("axes") && n.inputs.size() > 1 && !n.inputs[1].empty()
                             ? g.FindTensor(n.inputs[1]) : nullptr;
      at != nullptr && at->is_const && AnyDependsOnValue(at->sym)) {
    OAAXVK_ASSIGN_OR_RETURN(std::vector<Dim> reduced, ReducedByValue(g, n, rank));
    const bool keepdims = n.GetInt("keepdims", 1) != 0;
    Shape s;
    if (keepdims) {
      for (int64_t i = 0; i < rank; ++i) s.push_back(Select(reduced[i], Dim(1), x[i]));
    } else {
      const int64_t out_rank = rank - static_cast<int64_t>(at->sym.size());
      if (out_rank < 0) return FloatNodeError(n, "more axes than input dimensions");
      s = KeptDims(x, reduced, out_rank);
    }
    n.SetInt("_axes_by_value", 1);
    return SetOutput(g, n, dt, s);
  }
  std::vector<int64_t> axes;
  if (n.HasAttr("axes")) {
    axes = n.GetInts("axes", {});
  } else if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
    const Tensor* a = g.FindTensor(n.inputs[1]);
    if (!a || !a->is_const)
      return FloatNodeError(n, NotConstantMessage(g, "axes", n.inputs[1]));
    axes = a->AsInts();
  }
  bool keep = n.GetInt("keepdims", 1) != 0;
  bool noop = n.GetInt("noop_with_empty_axes", 0) != 0;
  std::set<int64_t> ax;
  if (axes.empty() && !noop)
    for (int64_t i = 0; i < rank; ++i) ax.insert(i);
  for (int64_t a : axes) {
    int64_t v = a < 0 ? a + rank : a;
    if (v < 0 || v >= rank)
      return FloatNodeError(n, "axis " + std::to_string(a) + " is out of range for input " + ShapeToString(x));
    ax.insert(v);
  }
  Shape s;
  for (int64_t i = 0; i < rank; ++i) {
    if (!ax.count(i)) s.push_back(x[i]);
    else if (keep) s.push_back(1);
  }
  n.SetInts("_axes", std::vector<int64_t>(ax.begin(), ax.end()));
  return SetOutput(g, n, dt, s);
}

StatusOr<std::vector<Dim>> ReducedByValue(const Graph& g, const Node& n, int64_t rank) {
  const Tensor* at = n.inputs.size() > 1 && !n.inputs[1].empty() ? g.FindTensor(n.inputs[1]) : nullptr;
  if (at == nullptr || !at->is_const || !AnyDependsOnValue(at->sym))
    return Internal("node '" + n.name + "': its axes are not read at run time");
  return AxesByValue(at->AsDims(), rank, n.op_type + " '" + n.name + "'");
}

}  // namespace oaaxvk::toolchain
