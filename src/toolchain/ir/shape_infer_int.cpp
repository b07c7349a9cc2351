#include "toolchain/ir/shape_infer_int.h"
#include "toolchain/ir/not_constant.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "toolchain/ir/shape_infer.h"

namespace oaaxvk::toolchain {

namespace {

Status IntNodeError(const Node& n, const std::string& msg) {
  return InvalidArgument("node '" + n.name + "' (" + n.op_type + "): " + msg);
}

Status SetOutput(Graph& g, const Node& n, DType dt, Shape s) {
  if (n.outputs.empty() || n.outputs[0].empty()) return Status::Ok();
  for (int64_t d : s)
    if (d < 0) return IntNodeError(n, "inferred a negative dimension in " + ShapeToString(s));
  Tensor& t = g.tensors[n.outputs[0]];
  t.name = n.outputs[0];
  t.dtype = dt;
  t.shape = std::move(s);
  t.has_shape = true;
  return Status::Ok();
}

// Expand whose target shape holds run-time values (feature value_symbols):
// numpy broadcasting per dimension, where a static input dimension of 1 takes
// the value and any other static dimension keeps its size (a guard requires
// the value to be 1 or that size).
Status ExpandByValue(Graph& g, const Node& n, const Shape& x, const std::vector<Dim>& target) {
  SymContext* c = SymContext::Current();
  const std::string who = "Expand '" + n.name + "'";
  const size_t r = std::max(x.size(), target.size());
  Shape s(r);
  for (size_t i = 0; i < r; ++i) {
    const Dim dx = i < r - x.size() ? Dim(1) : x[i - (r - x.size())];
    const Dim dt = i < r - target.size() ? Dim(1) : target[i - (r - target.size())];
    if (!DependsOnValue(dt) || SameDim(dx, dt)) {
      StatusOr<Shape> b = BroadcastShapes({dx}, {dt});
      if (!b.ok()) return IntNodeError(n, b.status().message());
      s[i] = (*b)[0];
    } else if (!dx.is_symbolic() && dx.value() == 1) {
      s[i] = dt;
      OAAXVK_RETURN_IF_ERROR(c->AddGuard((Dim(1) - Lt(dt, Dim(0))).Node(c),
                                         who + ": shape[" + std::to_string(i - (r - target.size())) + "] is negative"));
    } else if (!dx.is_symbolic()) {
      s[i] = dx;
      OAAXVK_RETURN_IF_ERROR(c->AddGuard((Eq(dt, Dim(1)) + Eq(dt, dx)).Node(c),
          who + ": shape[" + std::to_string(i - (r - target.size())) + "] must be 1 or " +
              std::to_string(dx.value()) + " to broadcast with the input " + ShapeToString(x)));
    } else {
      return Unimplemented("node '" + n.name + "' (Expand): input dimension " + std::to_string(i) +
                           " is symbolic and the target's is a run-time value; which one broadcasts is not "
                           "known at conversion (bind one of them)");
    }
  }
  return SetOutput(g, n, g.FindTensor(n.inputs[0])->dtype, s);
}

// Whether shapes a and b differ only by leading 1s ([] and [1], [3] and
// [1, 3]): the same elements in the same order.
bool SameUpToLeadingOnes(const Shape& a, const Shape& b) {
  const Shape& lo = a.size() <= b.size() ? a : b;
  const Shape& hi = a.size() <= b.size() ? b : a;
  const size_t extra = hi.size() - lo.size();
  for (size_t i = 0; i < hi.size(); ++i) {
    if (i < extra) {
      if (hi[i].is_symbolic() || hi[i].value() != 1) return false;
    } else if (!SameDim(hi[i], lo[i - extra])) {
      return false;
    }
  }
  return true;
}

// Whether every reader of `tensor` (through Identity) is a broadcasting
// elementwise operator whose other inputs have static ranks of at least
// `rank`, or a CastLike taking only its type: giving such readers a tensor
// of rank `rank` or one with fewer leading 1s yields the same output shapes
// and values. Not a graph output.
bool OnlyBroadcastReaders(const Graph& g, const std::map<std::string, std::vector<size_t>>& consumers,
                          const std::string& tensor, size_t rank, int depth = 0) {
  static const std::set<std::string> kBroadcasting = {
      "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mod", "Equal", "Less", "LessOrEqual", "Greater",
      "GreaterOrEqual", "And", "Or", "Xor"};
  if (g.IsGraphOutput(tensor) || depth > 16) return false;
  auto it = consumers.find(tensor);
  if (it == consumers.end()) return true;
  for (size_t ni : it->second) {
    const Node& r = g.nodes[ni];
    if (r.op_type == "Identity") {
      if (r.outputs.empty() || !OnlyBroadcastReaders(g, consumers, r.outputs[0], rank, depth + 1)) return false;
      continue;
    }
    // CastLike reads only the type of its second input.
    if (r.op_type == "CastLike" && !r.inputs.empty() && r.inputs[0] != tensor) continue;
    if (!kBroadcasting.count(r.op_type)) return false;
    bool other = false;  // an input other than `tensor` of rank >= `rank`
    for (const std::string& in : r.inputs) {
      if (in == tensor) continue;
      const Tensor* t = g.FindTensor(in);
      if (t == nullptr || !t->has_shape) return false;
      other = other || t->shape.size() >= rank;
    }
    if (!other) return false;
  }
  return true;
}

}  // namespace

bool IsLeadingOnesSelection(const Graph& g, const Node& n) {
  if (n.op_type != "Where" || n.GetInt("_if_select", 0) == 0 || n.inputs.size() != 3 || n.outputs.empty()) return false;
  const Tensor* c = g.FindTensor(n.inputs[0]);
  const Tensor* t = g.FindTensor(n.inputs[1]);
  const Tensor* e = g.FindTensor(n.inputs[2]);
  return c != nullptr && t != nullptr && e != nullptr && c->has_shape && t->has_shape && e->has_shape &&
         NumElements(c->shape) == 1 && t->dtype == e->dtype && t->shape.size() != e->shape.size() &&
         SameUpToLeadingOnes(t->shape, e->shape);
}

Status CheckLeadingOnesSelection(const Graph& g, const Node& n) {
  const Tensor& t = *g.FindTensor(n.inputs[1]);
  const Tensor& e = *g.FindTensor(n.inputs[2]);
  if (OnlyBroadcastReaders(g, g.Consumers(), n.outputs[0], std::max(t.shape.size(), e.shape.size())))
    return Status::Ok();
  return IntNodeError(n, "the If branches give output '" + n.outputs[0] + "' the shapes " + ShapeToString(t.shape) +
                             " and " + ShapeToString(e.shape) +
                             " (the same elements, different ranks) and a reader of it depends on its rank; with a "
                             "condition read at run time both branches run and one is selected, which needs equal "
                             "shapes unless every reader broadcasts the output against an input of the larger rank "
                             "(bind the condition in config.json \"input_values\" to keep only the taken branch)");
}

bool IfSelectionWithKnownCondition(const Graph& g, const Node& n) {
  if (n.op_type != "Where" || n.GetInt("_if_select", 0) == 0 || n.inputs.size() != 3) return false;
  const Tensor* c = g.FindTensor(n.inputs[0]);
  const Tensor* t = g.FindTensor(n.inputs[1]);
  const Tensor* e = g.FindTensor(n.inputs[2]);
  if (c == nullptr || t == nullptr || e == nullptr || !c->is_const || !t->has_shape || !e->has_shape ||
      t->dtype != e->dtype || t->shape.size() != e->shape.size())
    return false;
  // Differ as sizes, not only at the point compiled (an empty branch beside
  // an extent that is 0 here), so that every point takes this path.
  for (size_t a = 0; a < t->shape.size(); ++a)
    if (!SameDim(t->shape[a], e->shape[a])) return true;
  return false;
}

Dim IfConditionDim(const Tensor& cond) {
  const std::vector<Dim> v = cond.AsDims();
  if (v.empty()) return Dim(0);
  if (!v[0].is_symbolic()) return Dim(v[0].value() != 0 ? 1 : 0);
  // A comparison is already 0 / 1; any other expression is true when nonzero.
  const SymContext* c = SymContext::Current();
  if (c != nullptr && static_cast<size_t>(v[0].expr()) < c->nodes().size()) {
    const SymOp op = c->nodes()[static_cast<size_t>(v[0].expr())].op;
    if (op == SymOp::kEq || op == SymOp::kLt) return v[0];
  }
  return Dim(1) - Eq(v[0], Dim(0));
}

const std::set<std::string>& IntDeviceOps() {
  static const std::set<std::string> k = {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or",
                                          "Xor", "Not", "Where", "Mod", "BitShift", "Expand", "CastLike", "ArgMax",
                                          "ArgMin", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"};
  return k;
}

bool IsDeviceDType(DType t) {
  switch (t) {
    case DType::kFloat: case DType::kDouble: case DType::kInt32: case DType::kInt64: case DType::kInt16:
    case DType::kUint16: case DType::kInt8: case DType::kUint8: case DType::kBool:
    case DType::kFloat16: case DType::kBfloat16: case DType::kUint32: case DType::kUint64:  // I/O contract (issue 5)
      return true;
    default:
      return IsLowBitDType(t);  // computed as float32 / int32 (lower_int.h ComputeDType)
  }
}

bool IsFloatLike(DType t) {
  return t == DType::kFloat || t == DType::kDouble || t == DType::kFloat16 || t == DType::kBfloat16 ||
         (IsLowBitDType(t) && t != DType::kUint4 && t != DType::kInt4);
}

Status InferIntNodeShapes(Graph& g, Node& n, bool* handled) {
  *handled = false;
  const std::string& op = n.op_type;
  if (!IntDeviceOps().count(op)) return Status::Ok();
  *handled = true;
  std::vector<const Tensor*> in;
  for (const std::string& name : n.inputs) {
    const Tensor* t = name.empty() ? nullptr : g.FindTensor(name);
    if (!name.empty() && (!t || !t->has_shape)) return IntNodeError(n, "input '" + name + "' has no static shape");
    in.push_back(t);
  }
  auto need = [&](size_t k) -> Status {
    if (in.size() <= k || !in[k]) return IntNodeError(n, "missing input " + std::to_string(k));
    return Status::Ok();
  };
  OAAXVK_RETURN_IF_ERROR(need(0));
  const Shape& x = in[0]->shape;
  if (op == "Not") return SetOutput(g, n, DType::kBool, x);
  const bool bitwise = op.rfind("Bitwise", 0) == 0;
  if (bitwise) {
    // On the device's int32 words (sign- or zero-extended): the bits of the
    // result are those of the operation on the narrow type. The complement
    // of a uint64 value does not fit the low word the device carries.
    if (IsFloatLike(in[0]->dtype) || in[0]->dtype == DType::kBool)
      return IntNodeError(n, std::string("input has data type ") + DTypeName(in[0]->dtype) +
                                 "; bitwise operators take integer types");
    if (op == "BitwiseNot") {
      if (in[0]->dtype == DType::kUint64)
        return IntNodeError(n, "BitwiseNot of uint64 is not supported (the complement of a value below 2^32 needs "
                               "the high word, which the device does not carry)");
      return SetOutput(g, n, in[0]->dtype, x);
    }
  }
  if (op == "CastLike") {
    OAAXVK_RETURN_IF_ERROR(need(1));
    return SetOutput(g, n, in[1]->dtype, x);
  }
  if (op == "ArgMax" || op == "ArgMin") {
    int64_t rank = static_cast<int64_t>(x.size());
    int64_t axis = n.GetInt("axis", 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return IntNodeError(n, "axis " + std::to_string(n.GetInt("axis", 0)) + " out of range");
    n.SetInt("axis", axis);
    Shape s;
    for (int64_t i = 0; i < rank; ++i) {
      if (i != axis) s.push_back(x[i]);
      else if (n.GetInt("keepdims", 1) != 0) s.push_back(1);
    }
    return SetOutput(g, n, DType::kInt64, s);
  }
  if (op == "Expand") {
    OAAXVK_RETURN_IF_ERROR(need(1));
    if (!in[1]->is_const)
      return IntNodeError(n, NotConstantMessage(g, "shape", n.inputs[1]));
    const std::vector<Dim> target = in[1]->AsDims();
    if (AnyDependsOnValue(target)) return ExpandByValue(g, n, x, target);
    StatusOr<Shape> s = BroadcastShapes(x, target);
    if (!s.ok()) return IntNodeError(n, s.status().message());
    return SetOutput(g, n, in[0]->dtype, *s);
  }
  OAAXVK_RETURN_IF_ERROR(need(1));
  if (op == "Where") {
    OAAXVK_RETURN_IF_ERROR(need(2));
    // The selection of an If whose condition the conversion knows as a
    // number or as an expression of the symbols (a Size or Shape of a
    // tensor sized by data-dependent extents compared with 0): the shape
    // program computes it, so the output takes the taken branch's shape,
    // cond ? then : else along each axis where the branches differ, and
    // no readback is needed (the lowering copies the taken branch).
    if (IfSelectionWithKnownCondition(g, n)) {
      if (NumElements(x) != 1)
        return IntNodeError(n, "the If condition '" + n.inputs[0] + "' has " + std::to_string(NumElements(x).value()) +
                                   " elements; an If condition is one bool");
      const Dim c = IfConditionDim(*in[0]);
      Shape y(in[1]->shape.size());
      for (size_t a = 0; a < y.size(); ++a)
        y[a] = SameDim(in[1]->shape[a], in[2]->shape[a]) ? in[1]->shape[a] : Select(c, in[1]->shape[a], in[2]->shape[a]);
      return SetOutput(g, n, in[1]->dtype, y);
    }
    // The selection of an If whose condition is read at run time
    // (import/control_flow.h). Branches of one rank whose shapes differ, with the decided symbols the
    // driver gave the node (driver/dynamic.h FindDecidedSymbols): the output
    // has the taken branch's shape, small + larger * (large - small) along
    // each differing axis, and the lowering reads the condition back
    // between segments (lower/control_program.h).
    if (n.GetInt("_if_select", 0) != 0 && n.HasAttr("_if_larger") && in[1]->dtype == in[2]->dtype &&
        in[1]->shape.size() == in[2]->shape.size() && !(in[1]->shape == in[2]->shape)) {
      SymContext* c = SymContext::Current();
      const int64_t k = n.GetInt("_if_larger", -1);
      if (c == nullptr || k < 0 || static_cast<size_t>(k) >= c->symbols().size() || !c->symbols()[static_cast<size_t>(k)].decided)
        return IntNodeError(n, "internal: the If selection's decided symbol is missing");
      if (NumElements(x) > 1)
        return IntNodeError(n, "the If condition '" + n.inputs[0] + "' has " + std::to_string(NumElements(x).value()) +
                                   " elements; an If condition is one bool");
      const Dim larger(n.GetInt("_if_larger_value", 1), c->SymbolNode(static_cast<size_t>(k)));
      bool then_ge = true;
      for (size_t a = 0; a < in[1]->shape.size(); ++a) then_ge = then_ge && in[1]->shape[a] >= in[2]->shape[a];
      const Shape& big = then_ge ? in[1]->shape : in[2]->shape;
      const Shape& small = then_ge ? in[2]->shape : in[1]->shape;
      Shape y(big.size());
      for (size_t a = 0; a < big.size(); ++a) {
        if (SameDim(big[a], small[a])) {
          y[a] = big[a];
          continue;
        }
        if (big[a].is_symbolic() || small[a].is_symbolic())
          return IntNodeError(n, "the If branches give output '" + n.outputs[0] + "' the shapes " +
                                     ShapeToString(in[1]->shape) + " and " + ShapeToString(in[2]->shape) +
                                     ", which depend on the input shapes; a condition read at run time needs "
                                     "branches of static shapes (fix the input shapes in config.json)");
        y[a] = Dim(small[a].value()) + larger * (big[a].value() - small[a].value());
      }
      return SetOutput(g, n, in[1]->dtype, y);
    }
    // Branches whose shapes differ only by leading 1s (a scalar and a [1],
    // as a function body's nested If gives them) hold the same elements: the
    // output takes the larger rank, valid when every reader broadcasts it
    // against an input of that rank at least, which gives either branch's
    // result.
    // (The readers' shapes are known once the whole graph is inferred: the
    // lowering checks them, CheckLeadingOnesSelection.)
    if (IsLeadingOnesSelection(g, n)) {
      StatusOr<Shape> s = BroadcastShapes(x, in[1]->shape);
      if (s.ok()) s = BroadcastShapes(*s, in[2]->shape);
      if (!s.ok()) return IntNodeError(n, s.status().message());
      return SetOutput(g, n, in[1]->dtype, *s);
    }
    // Any other selection needs both branches' outputs to have one shape.
    if (n.GetInt("_if_select", 0) != 0 &&
        (in[1]->shape.size() != in[2]->shape.size() || !(in[1]->shape == in[2]->shape) ||
         in[1]->dtype != in[2]->dtype))
      return IntNodeError(n, "the If branches give output '" + n.outputs[0] + "' different shapes or types (" +
                                 ShapeToString(in[1]->shape) + " " + DTypeName(in[1]->dtype) + " vs " +
                                 ShapeToString(in[2]->shape) + " " + DTypeName(in[2]->dtype) +
                                 "); with a condition read at run time both branches run and one is selected, "
                                 "which needs equal shapes (bind the condition in config.json \"input_values\" "
                                 "to keep only the taken branch)");
    StatusOr<Shape> s = BroadcastShapes(x, in[1]->shape);
    if (s.ok()) s = BroadcastShapes(*s, in[2]->shape);
    if (!s.ok()) return IntNodeError(n, s.status().message());
    return SetOutput(g, n, in[1]->dtype, *s);
  }
  StatusOr<Shape> s = BroadcastShapes(x, in[1]->shape);
  if (!s.ok()) return IntNodeError(n, s.status().message());
  bool logic = op != "Mod" && op != "BitShift" && !bitwise;
  return SetOutput(g, n, logic ? DType::kBool : in[0]->dtype, *s);
}

}  // namespace oaaxvk::toolchain
