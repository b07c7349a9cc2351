// The normalizations defined after opset 17, GroupNormalization (18 and 21)
// and RMSNormalization (23), and LpNormalization, as reductions and elementwise chains of
// operators the toolchain already lowers; see docs/toolchain.md,
// "Decomposed neural-network and quantization operators".
#include <string>
#include <vector>

#include "toolchain/passes/decompose_builder.h"

namespace oaaxvk::toolchain {

namespace {

std::string Str(int64_t v) { return std::to_string(v); }

bool HasInput(const Node& n, size_t k) { return k < n.inputs.size() && !n.inputs[k].empty(); }

// A float constant scalar of `dtype`.
std::string Scalar(Builder& b, DType dtype, double v, const std::string& suffix) {
  return b.AddConst(MakeConstFromDoubles("", dtype, {}, {v}), suffix);
}

// stash_type names the precision of the statistics: only float32 (1) is
// implemented; float16 and float64 inputs are computed in float32 and the
// result converted back, as the ONNX function bodies of both operators do.
Status CheckStash(const Node& n, const Tensor& x) {
  const int64_t stash = n.GetInt("stash_type", 1);
  if (stash != 1)
    return NodeUnimplemented(n, "stash_type " + Str(stash) +
                                    " is not supported (only 1, float32 statistics); re-export with stash_type 1");
  if (x.dtype != DType::kFloat && x.dtype != DType::kFloat16 && x.dtype != DType::kDouble)
    return NodeUnimplemented(n, "input '" + n.inputs[0] + "' has data type " + DTypeName(x.dtype) + "; " +
                                    n.op_type + " is supported on float32, float16 and float64 only");
  return Status::Ok();
}

// x in float32 (a Cast when it is another float type).
std::string AsFloat(Builder& b, const std::string& x, DType dtype, const std::string& suffix) {
  return dtype == DType::kFloat ? x : b.Cast(x, DType::kFloat, suffix);
}

// Y = X / sqrt(mean(X^2 over [axis, rank)) + epsilon) * scale, the statistics
// in float32 (stash_type 1); scale broadcasts against X's trailing axes.
Status RmsNorm(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x || !HasInput(n, 1)) return NodeInvalid(n, "needs inputs X and scale, X with a static shape");
  OAAXVK_RETURN_IF_ERROR(CheckStash(n, *x));
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  int64_t axis = n.GetInt("axis", -1);
  if (axis < -rank || axis >= rank)
    return NodeInvalid(n, "axis " + Str(axis) + " is out of range for input " + ShapeToString(x->shape));
  if (axis < 0) axis += rank;
  std::vector<int64_t> axes;
  for (int64_t a = axis; a < rank; ++a) axes.push_back(a);
  const std::string xf = AsFloat(b, n.inputs[0], x->dtype, "x_float");
  const std::string sq = b.Op("Mul", {xf, xf}, "squared");
  Node& mean = b.Add("ReduceMean", {sq}, "mean_square");
  mean.SetInts("axes", axes);
  mean.SetInt("keepdims", 1);
  const std::string me = b.Op("Add", {b.Out(mean), Scalar(b, DType::kFloat, n.GetFloat("epsilon", 1e-5f), "epsilon")},
                              "mean_square_eps");
  const std::string inv = b.Op("Reciprocal", {b.Op("Sqrt", {me}, "rms")}, "inv_rms");
  const std::string normalized = b.Op("Mul", {xf, inv}, "normalized");
  if (x->dtype == DType::kFloat) {
    b.Add("Mul", {normalized, n.inputs[1]}, "scaled", n.outputs[0]);
  } else {
    // The function body converts the normalized value back before scaling.
    b.Add("Mul", {b.Cast(normalized, x->dtype, "normalized_x_type"), n.inputs[1]}, "scaled", n.outputs[0]);
  }
  return Status::Ok();
}

// GroupNormalization: X [N, C, D1, ...] viewed as [N, G, C/G * D1 * ...],
// normalized over the last axis, viewed back. Opsets 18 to 20 scale and bias
// per group (shape [G]), opset 21 per channel (shape [C]).
Status GroupNorm(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  const Tensor* scale = InputWithShape(g, n, 1);
  const Tensor* bias = InputWithShape(g, n, 2);
  if (!x || !scale || !bias) return NodeInvalid(n, "needs inputs X, scale and bias with static shapes");
  OAAXVK_RETURN_IF_ERROR(CheckStash(n, *x));
  const size_t rank = x->shape.size();
  if (rank < 3) return NodeInvalid(n, "X must have rank >= 3 ([N, C, D1, ...]), got " + ShapeToString(x->shape));
  for (size_t i = 1; i < rank; ++i)
    if (x->shape[i].is_symbolic())
      return NodeUnimplemented(n, "X " + ShapeToString(x->shape) +
                                      " has a symbolic channel or spatial size; GroupNormalization needs them static "
                                      "(config.json \"input_shapes\")");
  const int64_t G = n.GetInt("num_groups", 0);
  const int64_t C = x->shape[1].value();
  if (G <= 0 || C % G != 0)
    return NodeInvalid(n, "num_groups " + Str(G) + " must be positive and divide the " + Str(C) + " channels");
  const bool per_channel = g.opset >= 21;
  const int64_t params = per_channel ? C : G;
  for (const Tensor* p : {scale, bias})
    if (p->shape.size() != 1 || p->shape[0].is_symbolic() || p->shape[0].value() != params)
      return NodeInvalid(n, "'" + p->name + "' has shape " + ShapeToString(p->shape) + "; GroupNormalization-" +
                                (per_channel ? "21 expects [C] = [" : "18 expects [num_groups] = [") + Str(params) +
                                "]");
  int64_t inner = C / G;
  for (size_t i = 2; i < rank; ++i) inner *= x->shape[i].value();
  const std::string xf = AsFloat(b, n.inputs[0], x->dtype, "x_float");
  const std::string grouped = b.Reshape(xf, {x->shape[0], G, inner}, "grouped");
  Node& mean = b.Add("ReduceMean", {grouped}, "mean");
  mean.SetInts("axes", {2});
  mean.SetInt("keepdims", 1);
  const std::string d = b.Op("Sub", {grouped, b.Out(mean)}, "centered");
  Node& var = b.Add("ReduceMean", {b.Op("Mul", {d, d}, "squared")}, "variance");
  var.SetInts("axes", {2});
  var.SetInt("keepdims", 1);
  const std::string ve =
      b.Op("Add", {b.Out(var), Scalar(b, DType::kFloat, n.GetFloat("epsilon", 1e-5f), "epsilon")}, "variance_eps");
  const std::string normalized = b.Op("Div", {d, b.Op("Sqrt", {ve}, "stddev")}, "normalized");
  // Scale and bias in X's type, applied in the view where they broadcast.
  std::string y, s = n.inputs[1], c = n.inputs[2];
  std::vector<Dim> param_shape;
  if (per_channel) {
    y = b.Reshape(normalized, x->shape, "normalized_x_shape");
    param_shape.push_back(C);
    for (size_t i = 2; i < rank; ++i) param_shape.push_back(1);
  } else {
    y = normalized;
    param_shape = {G, 1};
  }
  if (x->dtype != DType::kFloat) y = b.Cast(y, x->dtype, "normalized_x_type");
  y = b.Op("Mul", {y, b.Reshape(s, param_shape, "scale_view")}, "scaled");
  if (per_channel) {
    b.Add("Add", {y, b.Reshape(c, param_shape, "bias_view")}, "biased", n.outputs[0]);
  } else {
    y = b.Op("Add", {y, b.Reshape(c, param_shape, "bias_view")}, "biased");
    b.Add("Reshape", {y, b.ConstI64("y_shape", x->shape)}, "y", n.outputs[0]);
  }
  return Status::Ok();
}

// LpNormalization (1, 22): x / ||x||_p along `axis` (p 1 or 2: ReduceL1 /
// ReduceL2, kept dimensions). A zero norm gives NaN / Inf, as the ONNX
// reference computes it.
Status LpNorm(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x) return NodeInvalid(n, "input '" + n.inputs[0] + "' has no static shape");
  if (x->dtype != DType::kFloat && x->dtype != DType::kFloat16 && x->dtype != DType::kDouble)
    return NodeUnimplemented(n, "input has data type " + std::string(DTypeName(x->dtype)) +
                                    "; LpNormalization is supported on floating-point values only");
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  int64_t axis = n.GetInt("axis", -1);
  if (axis < -rank || axis >= rank)
    return NodeInvalid(n, "axis " + Str(axis) + " is out of range for input " + ShapeToString(x->shape));
  if (axis < 0) axis += rank;
  const int64_t p = n.GetInt("p", 2);
  if (p != 1 && p != 2) return NodeInvalid(n, "p must be 1 or 2, got " + Str(p));
  Node& norm = b.Add(p == 1 ? "ReduceL1" : "ReduceL2", {n.inputs[0]}, "norm");
  norm.SetInts("axes", {axis});
  norm.SetInt("keepdims", 1);
  b.Add("Div", {n.inputs[0], b.Out(norm)}, "normalized", n.outputs[0]);
  return Status::Ok();
}

}  // namespace

const std::map<std::string, DecomposeFn>& NormDecompositions() {
  static const std::map<std::string, DecomposeFn> k = {
      {"GroupNormalization", GroupNorm},
      {"LpNormalization", LpNorm},
      {"RMSNormalization", RmsNorm},
  };
  return k;
}

}  // namespace oaaxvk::toolchain
