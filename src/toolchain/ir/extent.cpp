#include "toolchain/ir/extent.h"

#include <set>
#include <string>
#include <vector>

namespace oaaxvk::toolchain {

namespace {

// Elementwise operators: output element i reads input elements at the same
// (broadcast) position only.
const std::set<std::string>& ElementwiseOps() {
  static const std::set<std::string> k = {
      // unary
      "Relu", "Sigmoid", "HardSigmoid", "HardSwish", "LeakyRelu", "Sqrt", "Neg", "Exp", "Abs", "Tanh", "Reciprocal",
      "Swish", "Affine", "Cast", "Identity", "Dropout", "Not", "IsNaN", "IsInf", "Log", "Floor", "Ceil", "Round",
      "Sign", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Erf",
      "Softplus", "Softsign", "Elu", "Selu", "Celu", "Mish", "ThresholdedRelu", "Shrink", "Gelu", "BitwiseNot",
      // broadcasting
      "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mod", "Equal", "Less", "Greater", "LessOrEqual",
      "GreaterOrEqual", "And", "Or", "Xor", "Where", "PRelu", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
      "Sum", "Mean", "Clip", "CastLike"};
  return k;
}

int64_t Rank(const Tensor& t) { return static_cast<int64_t>(t.shape.size()); }

// Product of dims [from, to), skipping static 1s (so that [1, K] and [K]
// give the same expression).
Dim Product(const Shape& s, int64_t from, int64_t to) {
  Dim p = 1;
  for (int64_t i = from; i < to; ++i)
    if (s[i].is_symbolic() || s[i].value() != 1) p = p * s[i];
  return p;
}

thread_local std::vector<RefusedExtent>* g_recorder = nullptr;
thread_local bool g_keep_going = false;

Status Refuse(const Graph& g, const Node& n, const std::string& in, const Tensor& t, const std::string& why) {
  if (g_recorder != nullptr) {
    RefusedExtent r;
    r.extent = t.extent;
    const int p = g.Producer(t.extent);
    if (p >= 0) {
      const Node& m = g.nodes[static_cast<size_t>(p)];
      r.producer = m.name;
      const Tensor* y = m.outputs.empty() ? nullptr : g.FindTensor(m.outputs[0]);
      if (y != nullptr && y->data_dependent_axis >= 0 && y->data_dependent_axis < Rank(*y) &&
          !y->shape[static_cast<size_t>(y->data_dependent_axis)].is_symbolic())
        r.planned = y->shape[static_cast<size_t>(y->data_dependent_axis)].value();
    }
    g_recorder->push_back(std::move(r));
    if (g_keep_going) return Status::Ok();
  }
  return Unimplemented("node '" + n.name + "' (" + n.op_type + "): input '" + in + "' has an extent along axis " +
                       std::to_string(t.data_dependent_axis) +
                       " that only the device knows (computed by the operator writing '" + t.extent + "'); " + why +
                       ". Readers of such a tensor: elementwise operators broadcasting along that axis, Gather / "
                       "GatherElements / GatherND reading it as indices, and Gather / Slice / Concat / Transpose / "
                       "Reshape / Flatten / Squeeze / Unsqueeze keeping that axis whole");
}

// The output axis of a layout-preserving reshape from `xs` (axis a) to `ys`:
// the unique b with the same elements before and after it and the same
// extent; -1 when there is none or more than one.
int64_t ReshapedAxis(const Shape& xs, int64_t a, const Shape& ys) {
  const int64_t rx = static_cast<int64_t>(xs.size()), ry = static_cast<int64_t>(ys.size());
  const Dim before = Product(xs, 0, a), after = Product(xs, a + 1, rx);
  int64_t found = -1;
  for (int64_t b = 0; b < ry; ++b) {
    if (!SameDim(ys[b], xs[a]) || !SameDim(Product(ys, 0, b), before) || !SameDim(Product(ys, b + 1, ry), after))
      continue;
    if (found >= 0) return -1;
    found = b;
  }
  return found;
}

}  // namespace

Status PropagateExtent(Graph& g, const Node& n) {
  // The inputs with a data-dependent extent, and the extent they share.
  std::vector<size_t> dd;
  std::string extent;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const Tensor* t = n.inputs[k].empty() ? nullptr : g.FindTensor(n.inputs[k]);
    if (!t || t->data_dependent_axis < 0) continue;
    if (!extent.empty() && t->extent != extent)
      return Refuse(g, n, n.inputs[k], *t, "another input has a different data-dependent extent ('" + extent + "')");
    extent = t->extent;
    dd.push_back(k);
  }
  if (dd.empty()) return Status::Ok();
  const std::string& op = n.op_type;
  const std::string& in0 = n.inputs[dd[0]];
  const Tensor& x = *g.FindTensor(in0);
  const int64_t a = x.data_dependent_axis;
  auto set_all = [&](int64_t axis) {
    for (const std::string& o : n.outputs) {
      if (o.empty()) continue;
      Tensor& t = g.tensors[o];
      t.data_dependent_axis = axis;
      t.extent = extent;
    }
    return Status::Ok();
  };
  const Tensor* y = n.outputs.empty() || n.outputs[0].empty() ? nullptr : g.FindTensor(n.outputs[0]);
  if (!y || !y->has_shape) return Refuse(g, n, in0, x, "its output has no inferred shape");
  const int64_t ry = Rank(*y);

  if (ElementwiseOps().count(op)) {
    int64_t b = -1;
    for (size_t k : dd) {
      const Tensor& t = *g.FindTensor(n.inputs[k]);
      const int64_t bk = t.data_dependent_axis + ry - Rank(t);
      if (b >= 0 && bk != b) return Refuse(g, n, n.inputs[k], t, "another input has its extent along another axis");
      b = bk;
    }
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const Tensor* t = n.inputs[k].empty() ? nullptr : g.FindTensor(n.inputs[k]);
      if (!t || t->data_dependent_axis >= 0) continue;
      const int64_t j = b - (ry - Rank(*t));
      if (j >= 0 && (t->shape[j].is_symbolic() || t->shape[j].value() != 1))
        return Refuse(g, n, in0, x, "input '" + n.inputs[k] + "' does not broadcast along that axis (extent " +
                                     std::to_string(t->shape[j].value()) + ", must be 1)");
    }
    return set_all(b);
  }
  if (op == "Gather" || op == "GatherElements" || op == "GatherND") {
    const Tensor& data = *g.FindTensor(n.inputs.at(0));
    const int64_t r = Rank(data);
    if (dd.size() != 1) return Refuse(g, n, in0, x, "both data and indices have such an extent");
    if (op == "GatherND") {
      if (dd[0] != 1 || n.GetInt("batch_dims", 0) != 0 || a >= Rank(x) - 1)
        return Refuse(g, n, in0, x, "GatherND keeps it only for indices (batch_dims 0) along an axis before the last");
      return set_all(a);
    }
    int64_t axis = n.GetInt("axis", 0);
    if (axis < 0) axis += r;
    if (op == "GatherElements") {
      if (dd[0] != 1) return Refuse(g, n, in0, x, "GatherElements keeps it only for the indices");
      return set_all(a);
    }
    if (dd[0] == 1) return set_all(axis + a);  // Gather: indices' axes replace data's `axis`
    if (a == axis) return Refuse(g, n, in0, x, "it gathers along that axis");
    return set_all(a < axis ? a : a + Rank(*g.FindTensor(n.inputs.at(1))) - 1);
  }
  if (op == "Slice") {
    const std::vector<int64_t> st = n.GetInts("_starts", {}), sp = n.GetInts("_steps", {});
    if (static_cast<int64_t>(st.size()) != Rank(x) || static_cast<int64_t>(sp.size()) != Rank(x) || st[a] != 0 ||
        sp[a] != 1 || !SameDim(y->shape[a], x.shape[a]))
      return Refuse(g, n, in0, x, "the slice does not keep that axis whole");
    return set_all(a);
  }
  if (op == "Concat") {
    int64_t axis = n.GetInt("axis", 0);
    if (axis < 0) axis += ry;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const Tensor* t = n.inputs[k].empty() ? nullptr : g.FindTensor(n.inputs[k]);
      if (t && (t->data_dependent_axis != a || Rank(*t) != ry))
        return Refuse(g, n, in0, x, "input '" + n.inputs[k] + "' does not have the same extent along the same axis");
    }
    if (axis == a) return Refuse(g, n, in0, x, "it concatenates along that axis");
    return set_all(a);
  }
  if (op == "Transpose") {
    std::vector<int64_t> perm = n.GetInts("perm", {});
    if (perm.empty())
      for (int64_t i = ry - 1; i >= 0; --i) perm.push_back(i);
    for (int64_t b = 0; b < static_cast<int64_t>(perm.size()); ++b)
      if (perm[b] == a) return set_all(b);
    return Refuse(g, n, in0, x, "the permutation does not name that axis");
  }
  if ((op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") && dd[0] == 0) {
    const int64_t b = ReshapedAxis(x.shape, a, y->shape);
    if (b < 0) return Refuse(g, n, in0, x, "the new shape " + ShapeToString(y->shape) + " does not keep that axis");
    return set_all(b);
  }
  return Refuse(g, n, in0, x, op + " is not a reader that keeps it");
}

ExtentRefusalRecorder::ExtentRefusalRecorder(bool keep_going) : outer_(g_recorder), outer_keep_going_(g_keep_going) {
  g_recorder = &refused_;
  g_keep_going = keep_going;
}
ExtentRefusalRecorder::~ExtentRefusalRecorder() {
  g_recorder = outer_;
  g_keep_going = outer_keep_going_;
}

Dim DecidedExtentDim(const Node& n, const Dim& planned) {
  SymContext* c = SymContext::Current();
  const int64_t k = n.GetInt("_decided_extent", -1);
  if (c == nullptr || k < 0 || static_cast<size_t>(k) >= c->symbols().size() ||
      !c->symbols()[static_cast<size_t>(k)].decided)
    return planned;
  return Dim(n.GetInt("_decided_value", 0), c->SymbolNode(static_cast<size_t>(k)));
}

namespace {

// Whether `d` reads a symbol for which `pick` is true.
template <typename Pick>
bool ReadsSymbol(const Dim& d, Pick pick) {
  const SymContext* c = SymContext::Current();
  if (c == nullptr || !d.is_symbolic()) return false;
  std::vector<int64_t> todo = {d.expr()};
  std::set<int64_t> seen;
  while (!todo.empty()) {
    const int64_t e = todo.back();
    todo.pop_back();
    if (e < 0 || static_cast<size_t>(e) >= c->nodes().size() || !seen.insert(e).second) continue;
    const SymNode& n = c->nodes()[static_cast<size_t>(e)];
    if (n.op == SymOp::kSymbol && n.a >= 0 && static_cast<size_t>(n.a) < c->symbols().size() &&
        pick(c->symbols()[static_cast<size_t>(n.a)]))
      return true;
    if (n.op != SymOp::kSymbol && n.op != SymOp::kConst) todo.insert(todo.end(), {n.a, n.b});
  }
  return false;
}

}  // namespace

bool ReadsDecidedSymbol(const Dim& d) {
  return ReadsSymbol(d, [](const Symbol& y) { return y.decided; });
}

bool AnyReadsInputValue(const std::vector<Dim>& v) {
  for (const Dim& d : v)
    if (ReadsSymbol(d, [](const Symbol& y) { return y.is_value(); })) return true;
  return false;
}

bool AnyReadsDecidedSymbol(const std::vector<Dim>& v) {
  for (const Dim& d : v)
    if (ReadsDecidedSymbol(d)) return true;
  return false;
}

void AddExtentOutputs(Graph& g) {
  const size_t n = g.outputs.size();
  for (size_t i = 0; i < n; ++i) {
    const Tensor* t = g.FindTensor(g.outputs[i].tensor);
    if (!t || t->data_dependent_axis < 0 || g.outputs[i].count_for >= 0) continue;
    bool counted = false;
    for (const GraphIO& o : g.outputs) counted = counted || o.count_for == static_cast<int>(i);
    if (counted) continue;
    GraphIO io;
    io.name = g.outputs[i].name + "#extent";
    io.tensor = t->extent;
    io.count_for = static_cast<int>(i);
    io.count_axis = t->data_dependent_axis;
    g.outputs.push_back(io);
  }
}

}  // namespace oaaxvk::toolchain
