// Symbolic values of folded integer shape arithmetic: when an input of an
// integer Add / Sub / Mul / Div / Mod / Max / Min / Neg, a comparison, a
// logic operator, Where, a Cast to bool or a 1-D reduction carries
// expressions of symbolic dimensions (Tensor::sym), the folded output keeps
// the expression of each element, so that a model converted with ranges
// (config.json "dimensions") computes its sizes at every point. Every
// expression uses the shape program's plain opcodes: a comparison is written
// with min / max (a < b is min(1, max(0, b - a)) on integers), a selection as
// c * x + (1 - c) * y. An element whose expression cannot be written (a
// division by a symbolic or negative divisor, a float computation) keeps only its
// value; the dynamic-shape conversion then refuses the size it feeds,
// naming it, rather than bake in one point's value.
#include <set>

#include "toolchain/ir/eval_values.h"
#include "toolchain/ir/shape_infer.h"
#include "toolchain/ir/shape_infer_int.h"

namespace oaaxvk::toolchain::eval {

namespace {

bool KnownLess(const Dim& a, const Dim& b) { return UpperBound(a) != INT64_MAX && LowerBound(b) != INT64_MIN && UpperBound(a) < LowerBound(b); }

// 1 when a < b, else 0.
Dim LessDim(const Dim& a, const Dim& b) {
  if (!a.is_symbolic() && !b.is_symbolic()) return Dim(a.value() < b.value() ? 1 : 0);
  if (KnownLess(a, b)) return Dim(1);
  if (!KnownLess(b, a) && !(LowerBound(a) != INT64_MIN && UpperBound(b) != INT64_MAX && LowerBound(a) >= UpperBound(b)))
    return Min(Dim(1), Max(Dim(0), b - a));
  return Dim(0);
}

// 1 when a == b, else 0.
Dim EqualDim(const Dim& a, const Dim& b) {
  if (!a.is_symbolic() && !b.is_symbolic()) return Dim(a.value() == b.value() ? 1 : 0);
  if (SameDim(a, b)) return Dim(1);
  if (KnownLess(a, b) || KnownLess(b, a)) return Dim(0);
  return Dim(1) - Min(Dim(1), Max(a - b, b - a));
}

bool NonNegative(const Dim& d) { return d.is_symbolic() ? LowerBound(d) != INT64_MIN && LowerBound(d) >= 0 : d >= 0; }

const std::set<std::string>& SymbolicOps() {
  static const std::set<std::string> k = {"Add", "Sub", "Mul", "Div", "Mod", "Max", "Min", "Neg", "Equal", "Less",
                                          "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Where",
                                          "Cast", "ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin"};
  return k;
}

}  // namespace

bool ArithmeticSymbols(const Graph& g, const Node& n, const Tensor& out, std::vector<Dim>* sym) {
  const std::string& op = n.op_type;
  if (!SymbolicOps().count(op)) return false;
  std::vector<const Tensor*> in;
  bool any = false;
  for (const std::string& s : n.inputs) {
    const Tensor* t = s.empty() ? nullptr : g.FindTensor(s);
    if (t == nullptr || !t->is_const) return false;
    // Only integer and bool tensors carry expressions; a float operand makes
    // the computation a float one, which has no expression.
    if (IsFloatLike(t->dtype)) return false;
    any |= AnySymbolic(t->sym);
    in.push_back(t);
  }
  if (!any || IsFloatLike(out.dtype)) return false;
  std::vector<std::vector<Dim>> d;
  std::vector<Shape> shapes;
  for (const Tensor* t : in) {
    d.push_back(t->AsDims());
    shapes.push_back(t->shape);
  }
  const size_t count = static_cast<size_t>(out.numel().value());
  sym->assign(count, Dim(0));
  bool ok = true;
  if (op == "Cast") {
    if (out.dtype != DType::kBool) return false;  // integer Casts carry the expressions unchanged (eval.cpp)
    for (size_t i = 0; i < count; ++i) (*sym)[i] = Dim(1) - EqualDim(d[0][i], Dim(0));
    return true;
  }
  if (op == "Neg" || op == "Not") {
    for (size_t i = 0; i < count; ++i) (*sym)[i] = op == "Neg" ? Dim(0) - d[0][i] : Dim(1) - d[0][i];
    return true;
  }
  if (op.rfind("Reduce", 0) == 0) {
    if (in[0]->shape.size() != 1 || count != 1) return false;  // a 1-D list of sizes reduced to one
    Dim acc = d[0].empty() ? Dim(op == "ReduceProd" ? 1 : 0) : d[0][0];
    for (size_t i = 1; i < d[0].size(); ++i) {
      const Dim& v = d[0][i];
      acc = op == "ReduceSum" ? acc + v : op == "ReduceProd" ? acc * v : op == "ReduceMax" ? Max(acc, v) : Min(acc, v);
    }
    (*sym)[0] = acc;
    return true;
  }
  const bool fmod = n.GetInt("fmod", 0) != 0;
  ForEachBroadcast(out.shape, shapes, [&](int64_t i, const std::vector<int64_t>& o) {
    const Dim& a = d[0][o[0]];
    const Dim& b = d.size() > 1 ? d[1][o[1]] : a;
    Dim r;
    if (op == "Add") r = a + b;
    else if (op == "Sub") r = a - b;
    else if (op == "Mul") r = a * b;
    else if (op == "Max") r = Max(a, b);
    else if (op == "Min") r = Min(a, b);
    else if (op == "Div" || op == "Mod") {
      if (!a.is_symbolic() && !b.is_symbolic()) {  // plain values: ONNX's integer semantics
        if (b.value() == 0 || (a.value() == INT64_MIN && b.value() == -1)) { ok = false; return; }
        const int64_t q = a.value() / b.value();
        int64_t m = a.value() % b.value();
        if (!fmod && m != 0 && ((m < 0) != (b.value() < 0))) m += b.value();
        r = Dim(op == "Div" ? q : m);
      } else if (!b.is_symbolic() && b > 0 && (NonNegative(a) || (op == "Mod" && !fmod))) {
        // Truncating division and either Mod equal the floor forms for a
        // non-negative dividend and a positive constant divisor (Mod with
        // fmod = 0 for any dividend).
        r = op == "Div" ? FloorDiv(a, b) : Mod(a, b);
      } else if (!b.is_symbolic() && b > 0) {
        // A dividend of unknown sign: the truncating quotient is the floor
        // one plus 1 where a < 0 leaves a remainder; fmod's remainder
        // follows from it.
        const Dim q = FloorDiv(a, b) + Lt(a, Dim(0)) * Lt(Dim(0), Mod(a, b));
        r = op == "Div" ? q : a - b * q;
      } else {
        ok = false;
        return;
      }
    } else if (op == "Equal") r = EqualDim(a, b);
    else if (op == "Less") r = LessDim(a, b);
    else if (op == "Greater") r = LessDim(b, a);
    else if (op == "LessOrEqual") r = Dim(1) - LessDim(b, a);
    else if (op == "GreaterOrEqual") r = Dim(1) - LessDim(a, b);
    else if (op == "And") r = a * b;
    else if (op == "Or") r = Max(a, b);
    else {  // Where(c, x, y)
      const Dim& c = d[0][o[0]];
      const Dim& x = d[1][o[1]];
      const Dim& y = d[2][o[2]];
      r = c.is_symbolic() ? Select(c, x, y) : (c.value() != 0 ? x : y);
    }
    (*sym)[i] = r;
  });
  return ok;
}

}  // namespace oaaxvk::toolchain::eval
