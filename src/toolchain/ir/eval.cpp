#include "toolchain/ir/eval.h"
#include "toolchain/ir/extent.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>

#include "toolchain/ir/eval_values.h"
#include "toolchain/ir/shape_infer.h"
#include "toolchain/ir/shape_infer_int.h"

namespace oaaxvk::toolchain {

namespace {

// Operators folded when every input is known at conversion (Shape and Size
// need only a static input shape): shape arithmetic and every cheap
// elementwise or data-movement operator. Sum, Mean, variadic Max / Min,
// Tile, Range, Split and integer Pow reach folding decomposed (decompose*.cpp)
// into the operators below.
const std::set<std::string>& Evaluable() {
  static const std::set<std::string> k = {
      "Shape", "Size", "Identity", "Dropout", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Gather",
      "GatherElements", "Slice", "Concat", "Transpose", "Expand", "ConstantOfShape", "Cast", "CastLike",
      "Add", "Sub", "Mul", "Div", "Mod", "Pow", "Max", "Min", "Neg", "Abs", "Reciprocal", "Sqrt", "Exp",
      "Log", "Floor", "Ceil", "Round", "Sign", "Relu", "Sigmoid", "Clip", "Equal", "Less", "Greater",
      "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor", "Where", "ReduceSum", "ReduceProd",
      "ReduceMin", "ReduceMax", "ReduceMean", "CumSum"};
  return k;
}

// Integer arithmetic on run-time input values (a CenterCropPad body's
// max(shape, dims) - dims, halved) folds when every element of its result
// has an expression (eval_symbolic.cpp) and the result is a short list (at
// most 8 integers, what a kernel reading it as data gets from dims_to_data);
// otherwise the device computes it from the values.
bool InputValueArithmetic(const Graph& g, const Node& n, const Tensor* y) {
  if (y == nullptr || (y->dtype != DType::kInt64 && y->dtype != DType::kInt32) || !y->has_shape ||
      y->shape.size() > 1 || AnySymbolic(y->shape) || y->numel().value() > 8)
    return false;
  std::vector<Dim> sym;
  return eval::ArithmeticSymbols(g, n, *y, &sym);
}

}  // namespace

bool IsEvaluableOp(const std::string& op_type) { return Evaluable().count(op_type) != 0; }

bool CanEvaluate(const Graph& g, const Node& n) {
  if (!(n.domain.empty() || n.domain == "ai.onnx") || !Evaluable().count(n.op_type)) return false;
  // A node a decomposition keeps on the device (`_no_fold`): the expansion
  // of blocked quantization scales, which would fold into a constant
  // block_size times the size of the scales.
  if (n.GetInt("_no_fold", 0) != 0) return false;
  for (const std::string& o : n.outputs) {
    const Tensor* t = g.FindTensor(o);
    if (!o.empty() && (!t || !t->has_shape || DTypeSize(t->dtype) == 0)) return false;
    // A result whose shape follows a symbolic dimension (an Expand to the
    // batch of a dynamic-shape conversion) would be a constant of the
    // compile point's size: the device computes it at every size instead.
    bool fold_only = false;
    if (t != nullptr && AnySymbolic(t->shape) && IsSupportedOp(n.domain, n.op_type, &fold_only) && !fold_only)
      return false;
  }
  if (n.op_type == "Shape" || n.op_type == "Size") {
    const Tensor* t = g.FindTensor(n.inputs[0]);
    return t && t->has_shape;
  }
  // Low-bit tensors stay on the device: a packed int4 weight and its
  // DequantizeLinear would otherwise fold into a float32 weight 8 times its
  // size, and the evaluators have no low-bit arithmetic.
  for (const auto* list : {&n.inputs, &n.outputs})
    for (const std::string& name : *list) {
      const Tensor* t = name.empty() ? nullptr : g.FindTensor(name);
      if (t != nullptr && IsLowBitDType(t->dtype)) return false;
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
        (op == "Concat" && int_out && y->shape.size() == 1) ||
        // Integer arithmetic on extents read back (decided symbols, not input
        // values) folds into expressions (eval_symbolic.cpp): Min(extent, C),
        // or ReduceMin(Concat(C, extent)) as PyTorch exports min(C, n).
        (int_out && !AnyReadsInputValue(t->sym) &&
         (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Max" || op == "Min" ||
          op == "ReduceMin" || op == "ReduceMax" || op == "ReduceSum" || op == "ReduceProd")) ||
        // Comparisons and logic on them fold into 0 / 1 expressions: an If
        // condition such as Size(boxes) == 0 that the shape program computes
        // (shape_infer_int.h IfSelectionWithKnownCondition), with no readback.
        ((int_out || (y != nullptr && y->dtype == DType::kBool)) && !AnyReadsInputValue(t->sym) &&
         (op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual" ||
          op == "Not" || op == "And" || op == "Or" || op == "Where" || op == "Cast")) ||
        InputValueArithmetic(g, n, y);
    if (!carried) return false;
  }
  return true;
}

namespace {
StatusOr<std::vector<Tensor>> EvaluateValues(const Graph& g, const Node& n);

// Symbolic values (Tensor::sym) of a folded shape computation: the Dims of a
// Shape, carried through the integer ops that move them unchanged (views,
// integer Cast, Gather, Concat and Slice of 1-D tensors) and built by the
// integer arithmetic of eval_symbolic.cpp. Other ops (float arithmetic) fold
// to plain values, which a dynamic-shape conversion refuses where they
// matter (a size or a constant that differs between points).
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
  } else if (op == "Size") {
    // The element count as an expression (torchvision's boxes.numel() == 0).
    if (!AnySymbolic(x.shape)) return;
    sym.push_back(NumElements(x.shape));
  } else if (eval::ArithmeticSymbols(g, n, *out, &sym)) {
    // Integer arithmetic on sizes: keep the expressions only where they give
    // the folded values (they do by construction; a mismatch would be a
    // bundle computing other sizes than the conversion checked).
    const std::vector<int64_t> v = out->AsInts();
    if (v.size() != sym.size()) return;
    for (size_t k = 0; k < v.size(); ++k)
      if (sym[k].value() != v[k]) return;
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
    // Gather / Slice of a 1-D shape carry each element they pick exactly
    // (PropagateSymbols), also when the picked ones read no run-time value.
    const bool picked = k == 0 && (n.op_type == "Gather" || n.op_type == "Slice") && t->shape.size() == 1 &&
                        t->sym.size() == static_cast<size_t>(t->numel().value());
    // Shape / Size give the input's dimensions (PropagateSymbols keeps the
    // symbolic ones): a Shape with start / end may leave out the dimensions
    // that read a run-time value, and the static ones it gives hold everywhere.
    const bool dims = k == 0 && (n.op_type == "Shape" || n.op_type == "Size");
    // Integer arithmetic and comparisons build every element's expression
    // from all their inputs (eval_symbolic.cpp ArithmeticSymbols).
    static const std::set<std::string> kBinary = {"Add",  "Sub",     "Mul",  "Div",         "Mod",
                                                  "Max",  "Min",     "Equal", "Less",       "Greater",
                                                  "LessOrEqual", "GreaterOrEqual", "And", "Or", "Where"};
    bool carried = picked || dims ||
                   (!outs.empty() && AnyDependsOnValue(outs[0].sym) &&
                    (k == 0 || n.op_type == "Concat" || kBinary.count(n.op_type) > 0));
    if (!carried && !outs.empty()) {
      // A result the same at every point (a size compared with -1: never
      // equal) is a plain constant however its inputs were computed.
      std::vector<Dim> sym;
      carried = eval::ArithmeticSymbols(g, n, outs[0], &sym) && !sym.empty() && !AnySymbolic(sym);
    }
    if (!carried)
      return Unimplemented("node '" + n.name + "' (" + n.op_type + "): input '" + n.inputs[k] +
                           "' is computed from a run-time input value, which this operator cannot carry at "
                           "conversion; bind the input at conversion (config.json \"input_values\")");
  }
  return outs;
}

namespace {
StatusOr<std::vector<Tensor>> EvaluateValues(const Graph& g, const Node& n) {
  bool handled = false;
  for (auto family : {&eval::EvaluateMovement, &eval::EvaluateElementwise, &eval::EvaluateReduction}) {
    OAAXVK_ASSIGN_OR_RETURN(std::vector<Tensor> outs, family(g, n, &handled));
    if (handled) return outs;
  }
  return Unimplemented("node '" + n.name + "' (" + n.op_type + "): cannot evaluate " + n.op_type +
                       " at conversion (no constant evaluator for it)");
}
}  // namespace

}  // namespace oaaxvk::toolchain
