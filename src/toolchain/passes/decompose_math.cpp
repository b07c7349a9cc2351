// Elementwise / math / tensor-construction operators expressed with
// operators the toolchain already lowers (issue 5). Each function rewrites one
// node; the replacement nodes are shape-inferred and constant-folded by
// DecomposeOps as they are added.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "toolchain/ir/extent.h"
#include "toolchain/ir/not_constant.h"
#include "toolchain/ir/shape_infer.h"
#include "toolchain/ir/shape_infer_int.h"
#include "toolchain/passes/decompose_builder.h"

namespace oaaxvk::toolchain {

namespace {

bool HasInput(const Node& n, size_t k) { return k < n.inputs.size() && !n.inputs[k].empty(); }

// A parameter input that must be known at conversion. The wording of the
// error is shared with ConstInts (shape_infer.cpp): tools that bind graph
// inputs at conversion recognize "input '<name>' is not a compile-time constant".
StatusOr<const Tensor*> ConstInput(const Graph& g, const Node& n, size_t k, const std::string& what,
                                   const std::string& why = "") {
  const Tensor* t = g.FindTensor(n.inputs[k]);
  if (t && t->is_const) return t;
  return NodeInvalid(n, NotConstantMessage(g, what, n.inputs[k], why));
}

StatusOr<const Tensor*> ShapedInput(const Graph& g, const Node& n, size_t k) {
  const Tensor* t = InputWithShape(g, n, k);
  if (!t) {
    if (!HasInput(n, k)) return NodeInvalid(n, "missing input " + std::to_string(k));
    return NodeInvalid(n, "input '" + n.inputs[k] + "' has no static shape");
  }
  return t;
}

// A constant of `dtype` with every element `v`.
std::string Fill(Builder& b, DType dtype, const Shape& shape, double v, const std::string& suffix) {
  return b.AddConst(MakeConstFromDoubles("", dtype, shape, std::vector<double>(NumElements(shape), v)), suffix);
}

// Makes `out` carry `val`: renames the last node's output when it produced
// `val`, otherwise adds an Identity (folded when `val` is a constant).
void Finish(Graph& g, Builder& b, const std::string& val, const std::string& out, const std::string& name) {
  if (!b.nodes().empty() && b.nodes().back().outputs[0] == val) {
    b.nodes().back().outputs[0] = out;
    g.tensors.erase(val);
    return;
  }
  Node& id = b.Add("Identity", {val}, "identity", out);
  id.name = name;
}

// Re-emits `n` unchanged (a form the toolchain lowers directly).
void PassThrough(const Node& n, Builder& b) {
  Node& m = b.Add(n.op_type, n.inputs, "same", n.outputs.empty() ? "" : n.outputs[0]);
  m.outputs = n.outputs;
  m.attrs = n.attrs;
  m.name = n.name;
}

// Sum / Mean / Max / Min with 1..N inputs: a left-to-right chain of the
// binary operator (ONNX multidirectional broadcasting at every step).
Status Variadic(Graph& g, const Node& n, Builder& b) {
  if (n.inputs.empty()) return NodeInvalid(n, "needs at least one input");
  for (size_t k = 0; k < n.inputs.size(); ++k) OAAXVK_RETURN_IF_ERROR(ShapedInput(g, n, k).status());
  const std::string& op = n.op_type;
  if ((op == "Max" || op == "Min") && n.inputs.size() == 2) {
    PassThrough(n, b);
    return Status::Ok();
  }
  const std::string bin = op == "Sum" || op == "Mean" ? "Add" : op;
  std::string acc = n.inputs[0];
  for (size_t k = 1; k < n.inputs.size(); ++k)
    acc = b.Out(b.Add(bin, {acc, n.inputs[k]}, "acc" + std::to_string(k)));
  if (op == "Mean" && n.inputs.size() > 1) {
    const Tensor* x = g.FindTensor(n.inputs[0]);
    std::string cnt = Fill(b, x->dtype, {}, static_cast<double>(n.inputs.size()), "count");
    acc = b.Out(b.Add("Div", {acc, cnt}, "mean"));
  }
  Finish(g, b, acc, n.outputs[0], n.name);
  return Status::Ok();
}

// Clip with runtime min/max or integer values: Max(x, min) then Min(., max);
// an absent bound is no bound. Float Clip with constant bounds stays a Clip
// (a fusable activation).
Status Clip(Graph& g, const Node& n, Builder& b) {
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* x, ShapedInput(g, n, 0));
  bool const_bounds = true;
  for (size_t k = 1; k < 3; ++k) {
    if (!HasInput(n, k)) continue;
    OAAXVK_ASSIGN_OR_RETURN(const Tensor* t, ShapedInput(g, n, k));
    if (t->numel() != 1)
      return NodeInvalid(n, std::string(k == 1 ? "min" : "max") + " input '" + n.inputs[k] +
                                "' must be a scalar, got shape " + ShapeToString(t->shape));
    if (t->dtype != x->dtype)
      return NodeInvalid(n, "input '" + n.inputs[k] + "' has data type " + DTypeName(t->dtype) + ", input '" +
                                n.inputs[0] + "' has " + DTypeName(x->dtype));
    const_bounds &= t->is_const;
  }
  if (IsFloatLike(x->dtype) && const_bounds) {
    PassThrough(n, b);
    return Status::Ok();
  }
  if (n.HasAttr("min") || n.HasAttr("max"))
    return NodeUnimplemented(n, "min/max attributes on data type " + std::string(DTypeName(x->dtype)));
  std::string acc = n.inputs[0];
  if (HasInput(n, 1)) acc = b.Out(b.Add("Max", {acc, n.inputs[1]}, "lower_bound"));
  if (HasInput(n, 2)) acc = b.Out(b.Add("Min", {acc, n.inputs[2]}, "upper_bound"));
  Finish(g, b, acc, n.outputs[0], n.name);
  return Status::Ok();
}

// Integer Pow with a runtime exponent: square-and-multiply over the exponent
// bits (bit k = (y / 2^k) mod 2, selected with Where), wrapping like
// two's-complement multiplication of the device's 32-bit integers. Negative
// exponents give ONNX Runtime's integer result of x^y truncated toward zero:
// 1 for x = 1, +-1 for x = -1 (by the exponent's parity), 0 otherwise.
// Returns the result tensor; `exponent` names an integer tensor of y's dtype
// and shape (the node's input 1, or its integer cast).
StatusOr<std::string> IntPowRuntimeExponent(const Node& n, Builder& b, const Tensor& x, const Tensor& y,
                                            const std::string& exponent) {
  OAAXVK_ASSIGN_OR_RETURN(Shape out_shape, BroadcastShapes(x.shape, y.shape));
  const int bits = static_cast<int>(std::min<size_t>(31, 8 * DTypeSize(y.dtype)));
  auto cst = [&](DType t, double v, const std::string& sfx) { return Fill(b, t, {}, v, sfx); };
  auto op = [&](const std::string& o, std::vector<std::string> in, const std::string& sfx) {
    return b.Out(b.Add(o, std::move(in), sfx));
  };
  const std::string e = op("Max", {exponent, cst(y.dtype, 0, "zero_e")}, "exponent_nonneg");
  const std::string two = cst(y.dtype, 2, "two"), one_e = cst(y.dtype, 1, "one_e");
  std::string acc = Fill(b, x.dtype, out_shape, 1, "ones"), p = n.inputs[0];
  for (int k = 0; k < bits; ++k) {
    const std::string ks = std::to_string(k);
    if (k > 0) p = op("Mul", {p, p}, "square" + ks);
    std::string shifted = k == 0 ? e : op("Div", {e, cst(y.dtype, double(int64_t{1} << k), "pow2_" + ks)}, "shift" + ks);
    std::string bit = op("Equal", {op("Mod", {shifted, two}, "mod" + ks), one_e}, "bit" + ks);
    acc = op("Where", {bit, op("Mul", {acc, p}, "times" + ks), acc}, "select" + ks);
  }
  // Negative exponents.
  std::string one_x = cst(x.dtype, 1, "one_x"), minus_one_x = cst(x.dtype, -1, "minus_one_x");
  std::string odd = op("Equal", {op("Mod", {op("Abs", {exponent}, "abs_e"), two}, "parity"), one_e}, "odd");
  std::string neg_val = op(
      "Where", {op("Equal", {n.inputs[0], one_x}, "x_is_one"), one_x,
                op("Where", {op("Equal", {n.inputs[0], minus_one_x}, "x_is_minus_one"),
                             op("Where", {odd, minus_one_x, one_x}, "sign"), cst(x.dtype, 0, "zero_x")},
                   "neg_rest")},
      "negative_exponent_value");
  std::string neg = op("Less", {exponent, cst(y.dtype, 0, "zero_e2")}, "exponent_negative");
  return op("Where", {neg, neg_val, acc}, "result");
}

// Integer base, float exponent known only at run time: an integral exponent
// (|y| < 2^31) is exact integer exponentiation (as above); any other is
// float32 pow truncated toward zero, as ONNX Runtime's cast of std::pow.
StatusOr<std::string> IntPowFloatExponent(const Node& n, Builder& b, const Tensor& x, const Tensor& y) {
  auto cast = [&](const std::string& v, DType t, const std::string& sfx) {
    Node& c = b.Add("Cast", {v}, sfx);
    c.SetInt("to", static_cast<int64_t>(t));
    return b.Out(c);
  };
  Tensor yi = y;
  yi.dtype = DType::kInt32;
  const std::string e = cast(n.inputs[1], DType::kInt32, "exponent_as_int");
  OAAXVK_ASSIGN_OR_RETURN(std::string exact, IntPowRuntimeExponent(n, b, x, yi, e));
  const std::string fe = y.dtype == DType::kFloat ? n.inputs[1] : cast(n.inputs[1], DType::kFloat, "exponent_as_float");
  const std::string integral = b.Out(b.Add("Equal", {cast(e, DType::kFloat, "exponent_back"), fe}, "integral"));
  const std::string real = b.Out(b.Add("Pow", {cast(n.inputs[0], DType::kFloat, "base_as_float"), fe}, "real_pow"));
  return b.Out(b.Add("Where", {integral, exact, cast(real, x.dtype, "real_pow_truncated")}, "select"));
}

// Pow with an integer operand. Float base, integer exponent: the exponent is
// cast to the base's type (Pow's output type). Integer base: exact integer
// exponentiation by squaring with a compile-time exponent (wrapping like
// two's-complement multiplication); per-element exponents select the
// squarings with constant bit masks.
Status Pow(Graph& g, const Node& n, Builder& b) {
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* x, ShapedInput(g, n, 0));
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* y, ShapedInput(g, n, 1));
  if (IsFloatLike(x->dtype)) {
    if (IsFloatLike(y->dtype)) {
      PassThrough(n, b);
      return Status::Ok();
    }
    Node& c = b.Add("Cast", {n.inputs[1]}, "exponent_as_float");
    c.SetInt("to", static_cast<int64_t>(x->dtype));
    b.Add("Pow", {n.inputs[0], b.Out(c)}, "pow", n.outputs[0]).name = n.name;
    return Status::Ok();
  }
  // Exponents may be run-time data; a constant one that is a non-negative
  // integer unrolls into squarings.
  if (!y->is_const) {
    OAAXVK_ASSIGN_OR_RETURN(std::string r, IsFloatLike(y->dtype) ? IntPowFloatExponent(n, b, *x, *y)
                                                                  : IntPowRuntimeExponent(n, b, *x, *y, n.inputs[1]));
    Finish(g, b, r, n.outputs[0], n.name);
    return Status::Ok();
  }
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* yc,
                          ConstInput(g, n, 1, "exponent",
                                     "Pow on an integer base with a float exponent is computed exactly only for "
                                     "exponents known at conversion"));
  const std::vector<double> ev = yc->AsDoubles();
  int64_t emax = 0;
  for (double e : ev) {
    if (!(e >= 0) || e != std::floor(e) || e > 1e9) {  // negative or fractional: as for a run-time exponent
      OAAXVK_ASSIGN_OR_RETURN(std::string r, IsFloatLike(y->dtype) ? IntPowFloatExponent(n, b, *x, *y)
                                                                    : IntPowRuntimeExponent(n, b, *x, *y, n.inputs[1]));
      Finish(g, b, r, n.outputs[0], n.name);
      return Status::Ok();
    }
    emax = std::max(emax, static_cast<int64_t>(e));
  }
  OAAXVK_ASSIGN_OR_RETURN(Shape out_shape, BroadcastShapes(x->shape, y->shape));
  std::string p = n.inputs[0], acc;
  Shape acc_shape;
  for (int k = 0; (int64_t{1} << k) <= emax; ++k) {
    if (k > 0) p = b.Out(b.Add("Mul", {p, p}, "square" + std::to_string(k)));
    std::vector<double> bit(ev.size());
    size_t set = 0;
    for (size_t i = 0; i < ev.size(); ++i) {
      bit[i] = (static_cast<int64_t>(ev[i]) >> k) & 1;
      set += bit[i] != 0;
    }
    if (set == 0) continue;
    std::string term = p;
    Shape term_shape = x->shape;
    if (set != ev.size()) {
      std::string mask = b.AddConst(MakeConstFromDoubles("", DType::kBool, y->shape, bit), "bit" + std::to_string(k));
      term = b.Out(b.Add("Where", {mask, p, Fill(b, x->dtype, {}, 1, "one")}, "select" + std::to_string(k)));
      term_shape = out_shape;
    }
    if (acc.empty()) {
      acc = term;
      acc_shape = term_shape;
    } else {
      acc = b.Out(b.Add("Mul", {acc, term}, "product" + std::to_string(k)));
      OAAXVK_ASSIGN_OR_RETURN(acc_shape, BroadcastShapes(acc_shape, term_shape));
    }
  }
  if (acc.empty()) {  // every exponent is 0
    acc = Fill(b, x->dtype, out_shape, 1, "ones");
    acc_shape = out_shape;
  }
  if (acc_shape != out_shape)
    acc = b.Out(b.Add("Expand", {acc, b.ConstI64("out_shape", out_shape)}, "broadcast"));
  Finish(g, b, acc, n.outputs[0], n.name);
  return Status::Ok();
}

// PRelu: Where(x < 0, x * slope, x); slope broadcasts to x (unidirectional).
Status PRelu(Graph& g, const Node& n, Builder& b) {
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* x, ShapedInput(g, n, 0));
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* s, ShapedInput(g, n, 1));
  StatusOr<Shape> bs = BroadcastShapes(x->shape, s->shape);
  if (!bs.ok() || *bs != x->shape)
    return NodeInvalid(n, "slope shape " + ShapeToString(s->shape) + " does not broadcast to input shape " +
                              ShapeToString(x->shape));
  std::string neg = b.Out(b.Add("Less", {n.inputs[0], Fill(b, x->dtype, {}, 0, "zero")}, "negative"));
  std::string scaled = b.Out(b.Add("Mul", {n.inputs[0], n.inputs[1]}, "scaled"));
  b.Add("Where", {neg, scaled, n.inputs[0]}, "select", n.outputs[0]).name = n.name;
  return Status::Ok();
}

// GlobalMaxPool: ReduceMax over the spatial axes, keepdims.
Status GlobalMaxPool(Graph& g, const Node& n, Builder& b) {
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* x, ShapedInput(g, n, 0));
  if (x->shape.size() < 3)
    return NodeInvalid(n, "input '" + n.inputs[0] + "' must have rank >= 3, got " + ShapeToString(x->shape));
  std::vector<int64_t> axes;
  for (size_t a = 2; a < x->shape.size(); ++a) axes.push_back(static_cast<int64_t>(a));
  Node& r = b.Add("ReduceMax", {n.inputs[0]}, "reduce", n.outputs[0]);
  r.SetInts("axes", axes);
  r.SetInt("keepdims", 1);
  r.name = n.name;
  return Status::Ok();
}

// IsNaN: NaN is the only value that compares unequal to itself.
// IsInf: comparisons with +/-Inf (|x| == Inf when both signs are detected).
Status IsNaNInf(Graph& g, const Node& n, Builder& b) {
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* x, ShapedInput(g, n, 0));
  if (!IsFloatLike(x->dtype))
    return NodeInvalid(n, "input '" + n.inputs[0] + "' has data type " + DTypeName(x->dtype) +
                              "; " + n.op_type + " needs a floating-point input");
  if (n.op_type == "IsNaN") {
    std::string eq = b.Out(b.Add("Equal", {n.inputs[0], n.inputs[0]}, "self_equal"));
    b.Add("Not", {eq}, "not", n.outputs[0]).name = n.name;
    return Status::Ok();
  }
  const bool pos = n.GetInt("detect_positive", 1) != 0, neg = n.GetInt("detect_negative", 1) != 0;
  const double inf = std::numeric_limits<double>::infinity();
  if (!pos && !neg) {
    Finish(g, b, Fill(b, DType::kBool, x->shape, 0, "none"), n.outputs[0], n.name);
    return Status::Ok();
  }
  std::string v = n.inputs[0];
  if (pos && neg) v = b.Out(b.Add("Abs", {v}, "abs"));
  b.Add("Equal", {v, Fill(b, x->dtype, {}, neg && !pos ? -inf : inf, "inf")}, "equal", n.outputs[0]).name = n.name;
  return Status::Ok();
}

// EyeLike: a constant (the input's shape is static).
Status EyeLike(Graph& g, const Node& n, Builder& b) {
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* x, ShapedInput(g, n, 0));
  if (x->shape.size() != 2)
    return NodeInvalid(n, "input '" + n.inputs[0] + "' must be 2-D, got " + ShapeToString(x->shape));
  const DType dt = n.HasAttr("dtype") ? static_cast<DType>(n.GetInt("dtype", 1)) : x->dtype;
  if (DTypeSize(dt) == 0 || !IsDeviceDType(dt))
    return NodeUnimplemented(n, std::string("output data type ") + DTypeName(dt) + " is not supported");
  const int64_t rows = x->shape[0], cols = x->shape[1], k = n.GetInt("k", 0);
  std::vector<double> v(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t i = 0; i < rows; ++i)
    if (i + k >= 0 && i + k < cols) v[static_cast<size_t>(i * cols + i + k)] = 1.0;
  Finish(g, b, b.AddConst(MakeConstFromDoubles("", dt, x->shape, v), "eye"), n.outputs[0], n.name);
  return Status::Ok();
}

// OneHot: Where(Unsqueeze(wrapped indices, axis) == iota, on, off).
// OneHot whose depth is read at run time (feature value_symbols): an index i
// is "on" at position p of the new axis when i == p or i == p - depth (a
// negative index counts from the end); [0, depth) and [-depth, 0) are
// computed on the device. Indices outside [-depth, depth) give all "off".
Status OneHotByValue(const Node& n, Builder& b, const Tensor& ind, const Dim& depth) {
  SymContext* c = SymContext::Current();
  OAAXVK_RETURN_IF_ERROR(c->AddGuard((Dim(1) - Lt(depth, Dim(1))).Node(c), "OneHot '" + n.name + "': depth must be at least 1"));
  const int64_t rank = static_cast<int64_t>(ind.shape.size());
  int64_t axis = n.GetInt("axis", -1);
  if (axis < -(rank + 1) || axis > rank)
    return NodeInvalid(n, "axis " + std::to_string(axis) + " out of range for output rank " + std::to_string(rank + 1));
  if (axis < 0) axis += rank + 1;
  std::string idx = n.inputs[0];
  DType it = ind.dtype;
  if (IsFloatLike(it) || it != DType::kInt64) {  // ONNX: indices are cast to int64
    Node& cast = b.Add("Cast", {idx}, "indices_as_int");
    cast.SetInt("to", static_cast<int64_t>(DType::kInt64));
    idx = b.Out(cast);
    it = DType::kInt64;
  }
  Shape us = ind.shape;
  us.insert(us.begin() + axis, 1);
  const std::string u = b.Reshape(idx, us, "unsqueeze");
  Shape is(static_cast<size_t>(rank + 1), 1);
  is[static_cast<size_t>(axis)] = depth;
  const std::string pos = b.Reshape(b.RunTimeIota(depth, it, false, "positions"), is, "positions_shaped");
  const std::string from_end = b.RunTimeIota(depth, it, true, "from_end");  // [depth, ..., 1]
  const std::string neg = b.Reshape(b.Op("Sub", {Fill(b, it, {1}, 0, "zero"), from_end}, "negative_positions"), is,
                                    "negative_positions_shaped");
  const std::string mask = b.Op("Or", {b.Op("Equal", {u, pos}, "at"), b.Op("Equal", {u, neg}, "at_negative")}, "mask");
  std::string flat = n.inputs[2];
  const Tensor* vals = b.graph().FindTensor(flat);
  if (vals != nullptr && vals->shape.size() != 1) flat = b.Reshape(flat, {2}, "values");
  const std::string axes = b.ConstI64("axes", {0});
  const std::string off = b.Op("Slice", {flat, b.ConstI64("off_start", {0}), b.ConstI64("off_end", {1}), axes}, "off");
  const std::string on = b.Op("Slice", {flat, b.ConstI64("on_start", {1}), b.ConstI64("on_end", {2}), axes}, "on");
  b.Add("Where", {mask, on, off}, "select", n.outputs[0]).name = n.name;
  return Status::Ok();
}

Status OneHot(Graph& g, const Node& n, Builder& b) {
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* ind, ShapedInput(g, n, 0));
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* vals, ShapedInput(g, n, 2));
  if (!HasInput(n, 1)) return NodeInvalid(n, "missing input 1 (depth)");
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* dt, ConstInput(g, n, 1, "depth"));
  if (dt->numel() != 1) return NodeInvalid(n, "depth must have one element, got shape " + ShapeToString(dt->shape));
  if (AnyDependsOnValue(dt->sym)) return OneHotByValue(n, b, *ind, dt->AsDims()[0]);
  const double depth_v = dt->AsDoubles().at(0);
  if (!(depth_v >= 1 && depth_v <= static_cast<double>(int64_t{1} << 24)))
    return NodeInvalid(n, StrFormat("depth must be in [1, 2^24], got %g", depth_v));
  const int64_t depth = static_cast<int64_t>(depth_v);
  if (vals->numel() != 2) return NodeInvalid(n, "values must have 2 elements, got shape " + ShapeToString(vals->shape));
  const int64_t rank = static_cast<int64_t>(ind->shape.size());
  int64_t axis = n.GetInt("axis", -1);
  if (axis < -(rank + 1) || axis > rank)
    return NodeInvalid(n, "axis " + std::to_string(axis) + " out of range for output rank " + std::to_string(rank + 1));
  if (axis < 0) axis += rank + 1;
  std::string idx = n.inputs[0];
  DType it = ind->dtype;
  if (IsFloatLike(it)) {  // ONNX: non-integer indices are cast to int64
    Node& c = b.Add("Cast", {idx}, "indices_as_int");
    c.SetInt("to", static_cast<int64_t>(DType::kInt64));
    idx = b.Out(c);
    it = DType::kInt64;
  }
  std::string negative = b.Out(b.Add("Less", {idx, Fill(b, it, {}, 0, "zero")}, "negative"));
  std::string shifted = b.Out(b.Add("Add", {idx, Fill(b, it, {}, static_cast<double>(depth), "depth")}, "shifted"));
  std::string wrapped = b.Out(b.Add("Where", {negative, shifted, idx}, "wrapped"));
  Shape us = ind->shape;
  us.insert(us.begin() + axis, 1);
  std::string u = b.Out(b.Add("Reshape", {wrapped, b.ConstI64("unsqueezed_shape", us)}, "unsqueeze"));
  Shape is(static_cast<size_t>(rank + 1), 1);
  is[static_cast<size_t>(axis)] = depth;
  std::vector<double> iota(static_cast<size_t>(depth));
  for (int64_t i = 0; i < depth; ++i) iota[static_cast<size_t>(i)] = static_cast<double>(i);
  std::string mask = b.Out(b.Add("Equal", {u, b.AddConst(MakeConstFromDoubles("", it, is, iota), "iota")}, "mask"));
  std::string flat = n.inputs[2];
  if (vals->shape.size() != 1) flat = b.Out(b.Add("Reshape", {flat, b.ConstI64("values_shape", {2})}, "values"));
  std::string axes = b.ConstI64("axes", {0});
  std::string off = b.Out(b.Add("Slice", {flat, b.ConstI64("off_start", {0}), b.ConstI64("off_end", {1}), axes}, "off"));
  std::string on = b.Out(b.Add("Slice", {flat, b.ConstI64("on_start", {1}), b.ConstI64("on_end", {2}), axes}, "on"));
  b.Add("Where", {mask, on, off}, "select", n.outputs[0]).name = n.name;
  return Status::Ok();
}

// Tile with constant repeats: per tiled axis, Reshape to [outer, 1, d, inner],
// Expand to [outer, r, d, inner], Reshape back with the axis multiplied.
Status Tile(Graph& g, const Node& n, Builder& b) {
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* x, ShapedInput(g, n, 0));
  if (!HasInput(n, 1)) return NodeInvalid(n, "missing input 1 (repeats)");
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* rt, ConstInput(g, n, 1, "repeats"));
  // Repeats read at run time (feature value_symbols) keep their expressions:
  // every axis with such a repeat gets its Expand, whatever the value.
  const std::vector<Dim> reps = rt->AsDims();
  if (reps.size() != x->shape.size())
    return NodeInvalid(n, "repeats has " + std::to_string(reps.size()) + " entries for input rank " +
                              std::to_string(x->shape.size()));
  for (const Dim& r : reps)
    if (!DependsOnValue(r) && r < 1)
      return NodeUnimplemented(n, "repeats must be >= 1 (empty outputs are not supported), got " +
                                      std::to_string(r.value()));
  Shape cur = x->shape;
  std::string acc = n.inputs[0];
  for (size_t a = 0; a < cur.size(); ++a) {
    if (!DependsOnValue(reps[a]) && reps[a] == 1) continue;
    Dim outer = 1, inner = 1;
    for (size_t i = 0; i < a; ++i) outer = outer * cur[i];
    for (size_t i = a + 1; i < cur.size(); ++i) inner = inner * cur[i];
    const std::string s = std::to_string(a);
    std::string r4 = b.Out(b.Add("Reshape", {acc, b.ConstI64("shape4_" + s, {outer, 1, cur[a], inner})}, "split" + s));
    std::string e = b.Out(b.Add("Expand", {r4, b.ConstI64("expand_" + s, {outer, reps[a], cur[a], inner})}, "repeat" + s));
    cur[a] = cur[a] * reps[a];
    acc = b.Out(b.Add("Reshape", {e, b.ConstI64("shape_" + s, cur)}, "merge" + s));
  }
  Finish(g, b, acc, n.outputs[0], n.name);
  return Status::Ok();
}

// Dropout: the identity in inference mode, and in training mode with ratio 0;
// the mask output is then all true. Random dropout is not supported.
// Dropout in training mode with a nonzero ratio, or with training_mode or
// ratio known only at run time: the device op TrainingDropout (inputs X,
// ratio, training_mode; outputs Y, mask; lower_index.cpp, shaders/dropout.comp)
// with absent inputs as constants (ratio: the attribute or 0.5; training_mode:
// false) and a scratch mask when the model does not name one.
Status TrainingDropout(Graph& g, const Node& n, Builder& b, const Tensor& x, double ratio) {
  if (!IsFloatLike(x.dtype))
    return NodeUnimplemented(n, "training-mode Dropout of " + std::string(DTypeName(x.dtype)) + " data is not supported");
  const std::string r = g.opset >= 12 && HasInput(n, 1) ? n.inputs[1] : Fill(b, DType::kFloat, {1}, ratio, "ratio");
  const std::string t = g.opset >= 12 && HasInput(n, 2) ? n.inputs[2] : Fill(b, DType::kBool, {1}, 0, "training_mode");
  std::string mask = OutputOrEmpty(n, 1);
  if (mask.empty()) mask = b.NewTensor("mask");
  Node& d = b.Add("TrainingDropout", {n.inputs[0], r, t}, "device", n.outputs[0]);
  d.outputs = {n.outputs[0], mask};
  d.name = n.name;
  d.SetInt("seed", n.GetInt("seed", 0));
  return Status::Ok();
}

Status Dropout(Graph& g, const Node& n, Builder& b) {
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* x, ShapedInput(g, n, 0));
  bool training = false, known = true;
  double ratio = n.GetFloat("ratio", 0.5f);
  if (g.opset >= 12 && HasInput(n, 2)) {
    const Tensor* t = g.FindTensor(n.inputs[2]);
    known = t != nullptr && t->is_const;
    training = known && t->numel() == 1 && t->AsInts()[0] != 0;
  }
  if (g.opset >= 12 && HasInput(n, 1) && (training || !known)) {
    const Tensor* r = g.FindTensor(n.inputs[1]);
    if (r == nullptr || !r->is_const) known = false;
    else ratio = r->AsDoubles().at(0);
  }
  if (!known || (training && ratio != 0)) return TrainingDropout(g, n, b, *x, ratio);
  Node& id = b.Add("Identity", {n.inputs[0]}, "identity", n.outputs[0]);
  id.name = n.name;
  const std::string mask = OutputOrEmpty(n, 1);
  if (!mask.empty()) {
    const Tensor* declared = g.FindTensor(mask);
    DType mdt = declared && declared->dtype != DType::kUndefined ? declared->dtype
                : g.opset >= 10                                     ? DType::kBool
                                                                    : x->dtype;
    std::string ones = Fill(b, mdt, x->shape, 1, "mask_all_true");
    b.Add("Identity", {ones}, "mask", mask);
  }
  return Status::Ok();
}

// Bernoulli(x) as its ONNX definition states it: 1 with probability x, i.e.
// Cast(Less(u, x)) of a float32 uniform draw u in [0, 1) (RandomUniformLike,
// shaders/random.comp; `seed` passed on). (The function body in the ONNX
// release compares the other way, Greater(u, x), which draws 1 with
// probability 1 - x; the node tests' _expanded forms carry that body.)
Status Bernoulli(Graph& g, const Node& n, Builder& b) {
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* x, ShapedInput(g, n, 0));
  if (x->dtype != DType::kFloat && x->dtype != DType::kDouble)
    return NodeInvalid(n, std::string("input must be float32 or float64 probabilities, got ") + DTypeName(x->dtype));
  Node& u = b.Add("RandomUniformLike", {n.inputs[0]}, "uniform");
  u.SetInt("dtype", static_cast<int64_t>(x->dtype));
  if (n.HasAttr("seed")) u.SetFloat("seed", n.GetFloat("seed", 0.f));
  const std::string less = b.Op("Less", {b.Out(u), n.inputs[0]}, "hit");
  b.Cast(less, n.HasAttr("dtype") ? static_cast<DType>(n.GetInt("dtype", 1)) : x->dtype, "cast", n.outputs[0]);
  return Status::Ok();
}

// A float Range bound that is an integer read at run time: the output of a
// Cast to float32/float64 of a one-element integer value (feature
// value_symbols), or a float constant holding an integer (exact below 2^24).
// *v receives the integer as a Dim; false when the bound is neither.
bool IntegralFloatBound(const Graph& g, const std::string& name, Dim* v, bool* from_value) {
  const Tensor* t = g.FindTensor(name);
  if (t == nullptr) return false;
  if (t->is_const) {
    if (t->numel() != 1) return false;
    const double x = t->AsDoubles()[0];
    if (!(std::fabs(x) < 16777216.0) || x != std::floor(x)) return false;
    *v = Dim(static_cast<int64_t>(x));
    return true;
  }
  const int p = g.Producer(name);
  if (p < 0) return false;
  const Node& c = g.nodes[static_cast<size_t>(p)];
  const int64_t to = c.GetInt("to", 0);
  if (c.op_type != "Cast" || (to != static_cast<int64_t>(DType::kFloat) && to != static_cast<int64_t>(DType::kDouble)))
    return false;
  const Tensor* src = c.inputs.empty() ? nullptr : g.FindTensor(c.inputs[0]);
  if (src == nullptr || !src->is_const || src->numel() != 1 || IsFloatLike(src->dtype) ||
      !AnyDependsOnValue(src->sym))
    return false;
  *v = src->AsDims()[0];
  *from_value = true;
  return true;
}

// Float bounds read at run time (float value symbols with value_exact, a
// shared power-of-two scale F; docs/toolchain.md "Run-time values with
// ranges"): each bound as the integer bound * F, a constant one too (which
// must be a multiple of 1 / F). False when no bound is such a symbol;
// an error when the bounds cannot share a scale.
StatusOr<bool> ScaledFloatBounds(const Graph& g, const Node& n, Dim out[3]) {
  SymContext* c = SymContext::Current();
  if (c == nullptr) return false;
  int64_t scale = 0;
  bool any = false;
  for (size_t k = 0; k < 3; ++k) {
    const Tensor* t = HasInput(n, k) ? g.FindTensor(n.inputs[k]) : nullptr;
    if (t == nullptr || !t->is_const || t->numel() != 1 || !IsFloatLike(t->dtype)) return false;
    if (t->sym.empty() || !t->sym[0].is_symbolic()) continue;
    const SymNode& sn = c->nodes()[static_cast<size_t>(t->sym[0].expr())];
    if (sn.op != SymOp::kSymbol) return false;
    const Symbol& y = c->symbols()[static_cast<size_t>(sn.a)];
    if (!y.value_exact) return false;
    if (scale != 0 && scale != y.value_scale)
      return NodeUnimplemented(n, "its bounds read at run time have different scales (a bound is read by another "
                                  "Range with other bounds too); bind them to numbers instead");
    scale = y.value_scale;
    out[k] = t->sym[0];
    any = true;
  }
  if (!any) return false;
  for (size_t k = 0; k < 3; ++k) {
    const Tensor* t = g.FindTensor(n.inputs[k]);
    if (!t->sym.empty() && t->sym[0].is_symbolic()) continue;
    const double x = t->AsDoubles()[0] * static_cast<double>(scale);
    if (!(std::fabs(x) < 9.0e15) || x != std::floor(x))
      return NodeUnimplemented(n, "the constant bound " + std::to_string(t->AsDoubles()[0]) +
                                  " is not a multiple of 2^-" + std::to_string(63 - __builtin_clzll(scale)) +
                                  ", the resolution of the bounds read at run time");
    out[k] = Dim(static_cast<int64_t>(x));
  }
  return true;
}

// Range with constant start/limit/delta: a constant.
Status Range(Graph& g, const Node& n, Builder& b) {
  if (n.inputs.size() < 3) return NodeInvalid(n, "needs inputs start, limit, delta");
  static const char* kWhat[3] = {"start", "limit", "delta"};
  const Tensor* v[3];
  // Float bounds cast from integers read at run time, the others integral
  // constants (a window function's body: Range(0, Cast(size), 1)): the
  // integer formula below, elements computed on the device in float.
  Dim fb[3];
  bool float_from_value = false, float_bounds = true;
  for (size_t k = 0; k < 3 && float_bounds; ++k)
    float_bounds = HasInput(n, k) && IntegralFloatBound(g, n.inputs[k], &fb[k], &float_from_value);
  const Tensor* start = HasInput(n, 0) ? g.FindTensor(n.inputs[0]) : nullptr;
  bool float_run_time = float_bounds && float_from_value && start && IsFloatLike(start->dtype);
  if (!float_run_time && n.inputs.size() >= 3) {
    // Float bounds read at run time: the same formula on the scaled bounds
    // (the length ceil((limit - start) / delta) does not change with the scale).
    OAAXVK_ASSIGN_OR_RETURN(float_run_time, ScaledFloatBounds(g, n, fb));
  }
  for (size_t k = 0; k < 3 && !float_run_time; ++k) {
    OAAXVK_ASSIGN_OR_RETURN(v[k], ConstInput(g, n, k, kWhat[k]));
    if (v[k]->numel() != 1) return NodeInvalid(n, std::string(kWhat[k]) + " must be a scalar");
  }
  const DType dt = float_run_time ? start->dtype : v[0]->dtype;
  const bool integer = !IsFloatLike(dt);
  if (float_run_time ||
      (integer && (AnyDependsOnValue(v[0]->sym) || AnyDependsOnValue(v[1]->sym) || AnyDependsOnValue(v[2]->sym) ||
                   AnyReadsDecidedSymbol(v[0]->sym) || AnyReadsDecidedSymbol(v[1]->sym) ||
                   AnyReadsDecidedSymbol(v[2]->sym)))) {
    // Bounds read at run time (feature value_symbols): the length is an
    // expression of them, the elements start + k * delta are computed on the
    // device (start and delta reach the kernels as data, lower.cpp).
    const Dim s = float_run_time ? fb[0] : v[0]->AsDims()[0], l = float_run_time ? fb[1] : v[1]->AsDims()[0],
              d = float_run_time ? fb[2] : v[2]->AsDims()[0];
    SymContext* c = SymContext::Current();
    OAAXVK_RETURN_IF_ERROR(c->AddGuard((Dim(1) - Eq(d, Dim(0))).Node(c), "Range '" + n.name + "': delta is 0"));
    const Dim up = CeilDiv(l - s, Max(d, Dim(1))), down = CeilDiv(s - l, Max(Dim(0) - d, Dim(1)));
    const Dim len = Max(Select(Lt(Dim(0), d), up, down), Dim(0));
    // A length built from an extent read back (a decided symbol) may be 0:
    // the iota then has no elements (ir/extent.h ReadsDecidedSymbol).
    if (!ReadsDecidedSymbol(len))
      OAAXVK_RETURN_IF_ERROR(c->AddGuard((Dim(1) - Lt(len, Dim(1))).Node(c),
                                         "Range '" + n.name + "': the range is empty (empty outputs are not supported)"));
    const std::string k = b.RunTimeIota(len, dt, false, "k");
    const std::string acc = b.Op("Add", {b.Op("Mul", {k, n.inputs[2]}, "steps"), n.inputs[0]}, "range");
    Finish(g, b, acc, n.outputs[0], n.name);
    return Status::Ok();
  }
  std::vector<double> out;
  if (integer) {
    const int64_t s = v[0]->AsInts()[0], l = v[1]->AsInts()[0], d = v[2]->AsInts()[0];
    if (d == 0) return NodeInvalid(n, "delta is 0");
    // 128-bit: limit - start may overflow int64.
    const __int128 span = static_cast<__int128>(l) - s;
    const __int128 c128 = (span + d + (d > 0 ? -1 : 1)) / d;
    if (c128 > (int64_t{1} << 24))
      return NodeUnimplemented(n, "the range has more than 2^24 elements");
    const int64_t cnt = c128 < 0 ? 0 : static_cast<int64_t>(c128);
    for (int64_t i = 0; i < cnt; ++i) out.push_back(static_cast<double>(s + i * d));
  } else {
    const double s = v[0]->AsDoubles()[0], l = v[1]->AsDoubles()[0], d = v[2]->AsDoubles()[0];
    if (d == 0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d))
      return NodeInvalid(n, "start/limit/delta must be finite and delta non-zero");
    const double cnt = std::max(0.0, std::ceil((l - s) / d));
    if (cnt > static_cast<double>(int64_t{1} << 24))
      return NodeUnimplemented(n, "the range has " + std::to_string(cnt) + " elements (limit 2^24)");
    for (int64_t i = 0; i < static_cast<int64_t>(cnt); ++i) out.push_back(s + static_cast<double>(i) * d);
  }
  if (out.empty()) return NodeUnimplemented(n, "the range is empty (empty outputs are not supported)");
  const Shape shape = {static_cast<int64_t>(out.size())};
  Finish(g, b, b.AddConst(MakeConstFromDoubles("", dt, shape, out), "range"), n.outputs[0], n.name);
  return Status::Ok();
}

// ConstantOfShape whose shape is read at run time (feature value_symbols):
// an Expand of the one-element value. With a constant shape it stays as it
// is (folded into a constant).
Status ConstantOfShape(Graph& g, const Node& n, Builder& b) {
  const Tensor* s = HasInput(n, 0) ? g.FindTensor(n.inputs[0]) : nullptr;
  if (s == nullptr || !s->is_const || !AnyDependsOnValue(s->sym)) {
    PassThrough(n, b);
    return Status::Ok();
  }
  Tensor v = MakeConstF32("", {1}, {0.f});
  if (auto it = n.attrs.find("value"); it != n.attrs.end() && !it->second.t.empty()) {
    v = it->second.t[0];
    if (v.numel() != 1) return NodeInvalid(n, "value must hold one element");
    v.shape = {1};
    v.is_const = v.has_shape = true;
  }
  b.Add("Expand", {b.AddConst(v, "value"), n.inputs[0]}, "expand", n.outputs[0]).name = n.name;
  return Status::Ok();
}

// Gelu-20: 0.5 x (1 + erf(x / sqrt(2))), or with approximate = "tanh"
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), the ONNX function body.
Status Gelu(Graph& g, const Node& n, Builder& b) {
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* x, ShapedInput(g, n, 0));
  if (!IsFloatLike(x->dtype))
    return NodeUnimplemented(n, "input '" + n.inputs[0] + "' has data type " + DTypeName(x->dtype) +
                                    "; Gelu is defined on floating-point values only");
  const std::string approximate = n.GetString("approximate", "none");
  auto c = [&](double v, const std::string& suffix) { return b.AddConst(MakeConstFromDoubles("", x->dtype, {}, {v}), suffix); };
  const std::string& xi = n.inputs[0];
  std::string inner;
  if (approximate == "none") {
    inner = b.Op("Erf", {b.Op("Mul", {xi, c(M_SQRT1_2, "inv_sqrt2")}, "x_scaled")}, "erf");
  } else if (approximate == "tanh") {
    const std::string cube = b.Op("Mul", {b.Op("Mul", {xi, xi}, "x_squared"), xi}, "x_cubed");
    const std::string sum = b.Op("Add", {xi, b.Op("Mul", {cube, c(0.044715, "cubic_coefficient")}, "cubic")}, "x_plus_cubic");
    inner = b.Op("Tanh", {b.Op("Mul", {sum, c(std::sqrt(2.0 / M_PI), "sqrt_2_over_pi")}, "tanh_in")}, "tanh");
  } else {
    return NodeInvalid(n, "approximate '" + approximate + "' is not \"none\" or \"tanh\"");
  }
  const std::string one_plus = b.Op("Add", {inner, c(1.0, "one")}, "one_plus");
  const std::string half_x = b.Op("Mul", {xi, c(0.5, "half")}, "half_x");
  b.Add("Mul", {half_x, one_plus}, "gelu", n.outputs[0]);
  return Status::Ok();
}

// ReduceMax / ReduceMin of bool values (opset 20): any / all. The values go
// through the float reductions as 0 / 1: any is a sum that is not 0, all a
// product that is not 0. The empty set gives a sum of 0 (false) and a
// product of 1 (true), the minimum and maximum of bool, as ReduceMax /
// ReduceMin-20 define the empty set (a float maximum would give -inf, true).
// Other types keep the node as it is.
Status ReduceBool(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = n.inputs.empty() ? nullptr : g.FindTensor(n.inputs[0]);
  if (x == nullptr || x->dtype != DType::kBool || n.outputs.empty() || n.outputs[0].empty()) {
    b.nodes().push_back(n);
    return Status::Ok();
  }
  std::vector<std::string> in = n.inputs;
  in[0] = b.Cast(n.inputs[0], DType::kFloat, "as_float");
  Node& r = b.Add(n.op_type == "ReduceMax" ? "ReduceSum" : "ReduceProd", in, n.op_type == "ReduceMax" ? "any" : "all");
  r.attrs = n.attrs;
  b.Cast(b.Out(r), DType::kBool, "as_bool", n.outputs[0]);
  return Status::Ok();
}

}  // namespace

const std::map<std::string, DecomposeFn>& MathDecompositions() {
  static const std::map<std::string, DecomposeFn> k = {
      {"Sum", Variadic},     {"Mean", Variadic},   {"Max", Variadic},       {"Min", Variadic},
      {"Clip", Clip},        {"Pow", Pow},         {"PRelu", PRelu},        {"GlobalMaxPool", GlobalMaxPool},
      {"IsNaN", IsNaNInf},   {"IsInf", IsNaNInf},  {"EyeLike", EyeLike},    {"OneHot", OneHot},
      {"Tile", Tile},        {"Dropout", Dropout}, {"Bernoulli", Bernoulli}, {"Range", Range},   {"ConstantOfShape", ConstantOfShape},
      {"Gelu", Gelu},        {"ReduceMax", ReduceBool}, {"ReduceMin", ReduceBool},
  };
  return k;
}

}  // namespace oaaxvk::toolchain
