// Loss functions expressed with operators the toolchain already lowers
// (issue 5): NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
//
// The class of each element is selected without a gather kernel: a one-hot
// mask Equal(target, iota over C) picks input[n, target, d] with Where (not a
// multiplication by the mask, so Inf/NaN in the other classes do not leak)
// and ReduceSum over the class axis. Inputs are viewed as [N, C, D] with
// D = d1 * ... * dk (rank <= 6 on the device whatever k is).
#include <cmath>

#include "toolchain/ir/shape_infer_int.h"
#include "toolchain/passes/decompose_builder.h"

namespace oaaxvk::toolchain {

namespace {

struct LossShape {
  int64_t N = 0, C = 0, D = 1;
};

// Checks input [N, C, d1..dk] against target [N, d1..dk] and the optional
// weight [C].
StatusOr<LossShape> CheckLossInputs(const Graph& g, const Node& n) {
  const Tensor* x = InputWithShape(g, n, 0);
  const Tensor* t = InputWithShape(g, n, 1);
  if (!x || !t) return NodeInvalid(n, "input and target need static shapes");
  if (!IsFloatLike(x->dtype))
    return NodeUnimplemented(n, "input '" + n.inputs[0] + "' has data type " + DTypeName(x->dtype) +
                                    "; " + n.op_type + " is supported on float32/float64 only");
  if (IsFloatLike(t->dtype) || t->dtype == DType::kBool)
    return NodeInvalid(n, "target '" + n.inputs[1] + "' must be an integer tensor, got " + DTypeName(t->dtype));
  const Shape& xs = x->shape;
  if (xs.size() < 2) return NodeInvalid(n, "input must have rank >= 2, got " + ShapeToString(xs));
  Shape want = {xs[0]};
  want.insert(want.end(), xs.begin() + 2, xs.end());
  if (t->shape != want)
    return NodeInvalid(n, "target shape " + ShapeToString(t->shape) + " does not match input shape " +
                              ShapeToString(xs) + " (expected " + ShapeToString(want) + ")");
  LossShape s;
  s.N = xs[0];
  s.C = xs[1];
  for (size_t i = 2; i < xs.size(); ++i) s.D *= xs[i];
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    const Tensor* w = InputWithShape(g, n, 2);
    if (!w) return NodeInvalid(n, "weight '" + n.inputs[2] + "' has no static shape");
    if (w->shape != Shape{s.C})
      return NodeInvalid(n, "weight shape " + ShapeToString(w->shape) + " is not [C] = [" + std::to_string(s.C) + "]");
    if (w->dtype != x->dtype) return NodeInvalid(n, "weight and input data types differ");
  }
  const std::string red = n.GetString("reduction", "mean");
  if (red != "none" && red != "sum" && red != "mean")
    return NodeInvalid(n, "reduction '" + red + "' is not none, sum or mean");
  return s;
}

std::string Reduce(Builder& b, const std::string& op, const std::string& x, std::vector<int64_t> axes,
                   const std::string& suffix, const std::string& out = "") {
  Node& r = b.Add(op, {x}, suffix, out);
  r.SetInts("axes", std::move(axes));
  r.SetInt("keepdims", 0);
  return b.Out(r);
}

// The NLL of `x3` ([N, C, D], already the log-probabilities) against the
// node's target (input 1) and optional weight (input 2) into `out`.
Status NllCore(const Graph& g, const Node& n, Builder& b, const LossShape& s, const std::string& x3,
               const std::string& out) {
  const Tensor& t = *g.FindTensor(n.inputs[1]);
  const DType xdt = g.FindTensor(n.inputs[0])->dtype;
  const bool has_weight = n.inputs.size() > 2 && !n.inputs[2].empty();
  const bool has_ii = n.HasAttr("ignore_index");
  const int64_t ii = n.GetInt("ignore_index", 0);
  const std::string red = n.GetString("reduction", "mean");

  std::string t3 = b.Out(b.Add("Reshape", {n.inputs[1], b.ConstI64("target_shape", {s.N, 1, s.D})}, "target"));
  // Class c matches target == c, except the ignored class, which matches no
  // target (C is never a valid class), so ignored elements select nothing.
  std::vector<double> iota(static_cast<size_t>(s.C));
  for (int64_t c = 0; c < s.C; ++c) iota[static_cast<size_t>(c)] = has_ii && c == ii ? static_cast<double>(s.C) : c;
  std::string classes = b.AddConst(MakeConstFromDoubles("", t.dtype, {1, s.C, 1}, iota), "classes");
  std::string mask = b.Out(b.Add("Equal", {t3, classes}, "one_hot"));
  std::string zero = b.AddConst(MakeConstFromDoubles("", xdt, {}, {0.0}), "zero");
  std::string picked = b.Out(b.Add("Where", {mask, x3, zero}, "pick"));
  std::string sel = Reduce(b, "ReduceSum", picked, {1}, "selected");
  std::string loss = b.Out(b.Add("Neg", {sel}, "neg"));
  std::string w;
  if (has_weight || has_ii) {
    std::string wc = has_weight
                         ? b.Out(b.Add("Reshape", {n.inputs[2], b.ConstI64("weight_shape", {1, s.C, 1})}, "weight"))
                         : b.AddConst(MakeConstFromDoubles("", xdt, {}, {1.0}), "one");
    std::string wpicked = b.Out(b.Add("Where", {mask, wc, zero}, "pick_weight"));
    w = Reduce(b, "ReduceSum", wpicked, {1}, "element_weight");
    loss = b.Out(b.Add("Mul", {loss, w}, "weighted"));
  }
  if (red == "none") {
    b.Add("Reshape", {loss, b.ConstI64("loss_shape", t.shape)}, "loss", out);
  } else if (red == "sum") {
    Reduce(b, "ReduceSum", loss, {0, 1}, "sum", out);
  } else if (w.empty()) {
    Reduce(b, "ReduceMean", loss, {0, 1}, "mean", out);
  } else {
    // ONNX: the weighted mean divides by the sum of the applied weights.
    std::string num = Reduce(b, "ReduceSum", loss, {0, 1}, "loss_sum");
    std::string den = Reduce(b, "ReduceSum", w, {0, 1}, "weight_sum");
    b.Add("Div", {num, den}, "mean", out);
  }
  return Status::Ok();
}

std::string View3(const Graph& g, const Node& n, Builder& b, const LossShape& s) {
  if (g.FindTensor(n.inputs[0])->shape.size() == 3) return n.inputs[0];
  return b.Out(b.Add("Reshape", {n.inputs[0], b.ConstI64("input_shape", {s.N, s.C, s.D})}, "input3"));
}

Status NegativeLogLikelihoodLoss(Graph& g, const Node& n, Builder& b) {
  OAAXVK_ASSIGN_OR_RETURN(LossShape s, CheckLossInputs(g, n));
  return NllCore(g, n, b, s, View3(g, n, b, s), n.outputs[0]);
}

// SoftmaxCrossEntropyLoss: LogSoftmax over the class axis, then the NLL;
// the optional second output is the log-probabilities.
Status SoftmaxCrossEntropyLoss(Graph& g, const Node& n, Builder& b) {
  OAAXVK_ASSIGN_OR_RETURN(LossShape s, CheckLossInputs(g, n));
  std::string x3 = View3(g, n, b, s);
  std::string lp3;
  if (g.opset >= 13 || s.D == 1) {
    Node& ls = b.Add("LogSoftmax", {x3}, "log_softmax");
    ls.SetInt("axis", 1);
    lp3 = b.Out(ls);
  } else {
    // Before opset 13 LogSoftmax flattens from `axis` on: move C last.
    Node& t1 = b.Add("Transpose", {x3}, "classes_last");
    t1.SetInts("perm", {0, 2, 1});
    Node& ls = b.Add("LogSoftmax", {b.Out(t1)}, "log_softmax");
    ls.SetInt("axis", 2);
    Node& t2 = b.Add("Transpose", {b.Out(ls)}, "classes_second");
    t2.SetInts("perm", {0, 2, 1});
    lp3 = b.Out(t2);
  }
  const std::string log_prob = OutputOrEmpty(n, 1);
  if (!log_prob.empty()) {
    const Shape& xs = g.FindTensor(n.inputs[0])->shape;
    b.Add("Reshape", {lp3, b.ConstI64("log_prob_shape", xs)}, "log_prob", log_prob);
  }
  return NllCore(g, n, b, s, lp3, n.outputs[0]);
}

}  // namespace

const std::map<std::string, DecomposeFn>& LossDecompositions() {
  static const std::map<std::string, DecomposeFn> k = {
      {"NegativeLogLikelihoodLoss", NegativeLogLikelihoodLoss},
      {"SoftmaxCrossEntropyLoss", SoftmaxCrossEntropyLoss},
  };
  return k;
}

}  // namespace oaaxvk::toolchain
