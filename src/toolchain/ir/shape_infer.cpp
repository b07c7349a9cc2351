#include "toolchain/ir/shape_infer.h"
#include "toolchain/ir/not_constant.h"

#include "toolchain/ir/limits.h"
#include "toolchain/ir/loop_nodes.h"
#include "toolchain/ir/loop_reads.h"

#include "toolchain/ir/extent.h"
#include "toolchain/ir/shape_infer_float.h"
#include "toolchain/ir/shape_infer_int.h"
#include "toolchain/ir/shape_infer_index.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace oaaxvk::toolchain {

namespace {

const std::set<std::string>& DeviceOps() {
  static const std::set<std::string> k = {
      "Conv", "BatchNormalization", "Relu", "Clip", "HardSigmoid", "HardSwish", "Sigmoid",
      "LeakyRelu", "Add", "Sub", "Mul", "Div", "GlobalAveragePool", "MaxPool", "AveragePool",
      "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "MatMul", "Gemm",
      "Softmax", "Identity", "Dropout", "Pow", "Max", "Min", "Sqrt", "Neg", "Exp", "Abs", "Tanh",
      "Reciprocal", "Swish", "Affine", "ReduceMean", "Resize", "ConvTranspose", "Slice", "Cast", "GridSample", "ReverseSequence", "Det", "RoiAlign", "DeformConv"};
  return k;
}
const std::set<std::string>& FoldOnlyOps() {
  static const std::set<std::string> k = {"Shape", "Size", "Gather", "ConstantOfShape", "Constant"};
  return k;
}

Status NodeError(const Node& n, const std::string& msg) {
  return InvalidArgument("node '" + n.name + "' (" + n.op_type + "): " + msg);
}

int64_t NormAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

}  // namespace

bool IsSupportedOp(const std::string& domain, const std::string& op_type, bool* fold_only) {
  if (!(domain.empty() || domain == "ai.onnx")) return false;
  // Gather also runs on the device; IntDeviceOps: shape_infer_int.cpp (issue 5).
  if (DeviceOps().count(op_type) || FloatDeviceOps().count(op_type) || IntDeviceOps().count(op_type) ||
      IndexDeviceOps().count(op_type) ||  // issue 5 indexing/scanning: shape_infer_index.cpp
      op_type == "Gather") {
    if (fold_only) *fold_only = false;
    return true;
  }
  if (FoldOnlyOps().count(op_type)) { if (fold_only) *fold_only = true; return true; }
  return false;
}

std::vector<std::string> SupportedOps() {
  std::vector<std::string> r(DeviceOps().begin(), DeviceOps().end());
  r.insert(r.end(), FoldOnlyOps().begin(), FoldOnlyOps().end());
  r.insert(r.end(), FloatDeviceOps().begin(), FloatDeviceOps().end());
  r.insert(r.end(), IntDeviceOps().begin(), IntDeviceOps().end());
  r.insert(r.end(), IndexDeviceOps().begin(), IndexDeviceOps().end());
  std::sort(r.begin(), r.end());
  return r;
}

StatusOr<Shape> BroadcastShapes(const Shape& a, const Shape& b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    Dim da = i < r - a.size() ? Dim(1) : a[i - (r - a.size())];
    Dim db = i < r - b.size() ? Dim(1) : b[i - (r - b.size())];
    // Equal sizes keep the symbolic one (a static 1 beside a symbol that is 1
    // at this shape must not drop the symbol).
    if (da == db) out[i] = da.is_symbolic() ? da : db;
    else if (db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else return InvalidArgument("shapes " + ShapeToString(a) + " and " + ShapeToString(b) +
                                " cannot be broadcast");
  }
  return out;
}

std::vector<Dim> DenseStrides(const Shape& s) {
  std::vector<Dim> st(s.size(), 1);
  for (int i = static_cast<int>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

std::vector<Dim> BroadcastStrides(const Shape& in, const Shape& out) {
  std::vector<Dim> st(out.size(), 0);
  std::vector<Dim> dense = DenseStrides(in);
  size_t off = out.size() - in.size();
  // A symbolic dimension keeps its dense stride even where it is 1: the index
  // along a size-1 dimension is always 0, so any stride reads the same
  // element, and the stride's expression then holds at every shape.
  for (size_t i = 0; i < in.size(); ++i) st[off + i] = in[i] == 1 && !in[i].is_symbolic() ? Dim(0) : dense[i];
  return st;
}

static Status SetOut(Graph& g, const Node& n, size_t k, DType dt, Shape s) {
  if (k >= n.outputs.size() || n.outputs[k].empty()) return Status::Ok();
  Tensor& t = g.tensors[n.outputs[k]];
  t.name = n.outputs[k];
  t.dtype = dt;
  for (int64_t d : s)
    if (d < 0) return NodeError(n, "inferred a negative dimension in " + ShapeToString(s));
  t.shape = std::move(s);
  t.has_shape = true;
  return Status::Ok();
}

// Spatial output size with explicit pads.
static Dim PoolOut(const Dim& in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe, bool ceil_mode) {
  int64_t eff = (k - 1) * d + 1;
  Dim num = in + (pb + pe - eff);
  if (num < 0) return -1;
  Dim o = (ceil_mode ? CeilDiv(num, s) : FloorDiv(num, s)) + 1;
  // ONNX/ORT: with ceil_mode the last window must start inside the input or
  // left pad, i.e. drop it when (o - 1) * s >= in + pb. The correction is
  // part of the expression (it holds at some sizes of a dynamic dimension
  // and not at others): min(1, max(0, d + 1)) is 1 exactly when the integer
  // d = (o - 1) * s - (in + pb) >= 0 (min / max: the shape program's plain
  // opcodes; lt belongs to the value_symbols feature).
  if (ceil_mode) o = o - Min(Dim(1), Max(Dim(0), (o - 1) * s - (in + pb) + 1));
  return o;
}

// Resolves auto_pad / pads for a 2-D window op and returns OH, OW.
static Status Window2D(Node& n, const Shape& x, int64_t kh, int64_t kw, bool ceil_mode,
                       Dim* oh, Dim* ow) {
  std::vector<int64_t> strides = n.GetInts("strides", {1, 1});
  std::vector<int64_t> dil = n.GetInts("dilations", {1, 1});
  std::vector<int64_t> pads = n.GetInts("pads", {0, 0, 0, 0});
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4)
    return NodeError(n, "only 2-D windows are supported (strides/dilations/pads rank)");
  std::string ap = n.GetString("auto_pad", "NOTSET");
  Dim H = x[2], W = x[3];
  int64_t k[2] = {kh, kw}, in[2] = {H, W};
  if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
    for (int i = 0; i < 2; ++i) {
      int64_t out = (in[i] + strides[i] - 1) / strides[i];
      int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + (k[i] - 1) * dil[i] + 1 - in[i]);
      int64_t small = total / 2, big = total - small;
      pads[i] = ap == "SAME_UPPER" ? small : big;
      pads[i + 2] = ap == "SAME_UPPER" ? big : small;
    }
  } else if (ap == "VALID") {
    pads = {0, 0, 0, 0};
  } else if (ap != "NOTSET") {
    return NodeError(n, "unknown auto_pad '" + ap + "'");
  }
  for (int64_t v : strides) if (v < 1) return NodeError(n, "strides must be >= 1");
  for (int64_t v : dil) if (v < 1) return NodeError(n, "dilations must be >= 1");
  for (int64_t v : pads) if (v < 0) return NodeError(n, "negative pads are not supported");
  *oh = PoolOut(H, kh, strides[0], dil[0], pads[0], pads[2], ceil_mode);
  *ow = PoolOut(W, kw, strides[1], dil[1], pads[1], pads[3], ceil_mode);
  if (*oh < 1 || *ow < 1) return NodeError(n, "the window does not fit the input " + ShapeToString(x));
  n.SetInts("_pads", pads);
  n.SetInts("strides", strides);
  n.SetInts("dilations", dil);
  return Status::Ok();
}

// The values of integer input `idx`, which must be known at conversion
// (NotConstantMessage says where it comes from and how to make it known).
static StatusOr<std::vector<int64_t>> ConstInts(const Graph& g, const Node& n, size_t idx, const char* what) {
  if (idx >= n.inputs.size() || n.inputs[idx].empty()) return std::vector<int64_t>{};
  const Tensor* t = g.FindTensor(n.inputs[idx]);
  if (!t || !t->is_const)
    return NodeError(n, NotConstantMessage(g, what, n.inputs[idx]));
  if (AnyDependsOnValue(t->sym))
    return NodeError(n, std::string(what) + " input '" + n.inputs[idx] +
                            "' is computed from a run-time input value, but " + n.op_type +
                            " needs it at conversion; bind the input at conversion (config.json \"input_values\")");
  return t->AsInts();
}

// ConstInts with the expressions of symbolic values (Tensor::sym).
static StatusOr<std::vector<Dim>> ConstDims(const Graph& g, const Node& n, size_t idx, const char* what) {
  if (idx >= n.inputs.size() || n.inputs[idx].empty()) return std::vector<Dim>{};
  const Tensor* t = g.FindTensor(n.inputs[idx]);
  if (!t || !t->is_const)
    return NodeError(n, NotConstantMessage(g, what, n.inputs[idx]));
  return t->AsDims();
}

// Reshape whose target shape is read from a graph input at run time (feature
// value_symbols): every output dimension is an expression of the shape's
// elements (0 copies the input dimension unless allowzero, -1 takes the
// remaining elements), and guards make the runtime refuse a target that
// does not hold the input's elements or has two -1s. The output is a view
// (no kernel reads it with these sizes: the bundle writer refuses that).
static Status ReshapeByValue(Node& n, const Shape& x, const std::vector<Dim>& sh, bool allowzero, Graph* g) {
  SymContext* c = SymContext::Current();
  const std::string who = "Reshape '" + n.name + "'";
  const Dim total = NumElements(x);
  // Entries that are never -1 or a 0 that copies (sizes a decomposition
  // computed from run-time values): the output shape is the target itself.
  bool exact = true;
  for (const Dim& d : sh) exact = exact && LowerBound(d) >= (allowzero ? 0 : 1);
  if (exact) {
    OAAXVK_RETURN_IF_ERROR(c->AddGuard(Eq(NumElements(sh), total).Node(c),
        who + ": the target shape must hold the input's " + std::to_string(total.value()) + " elements " +
            ShapeToString(x)));
    return SetOut(*g, n, 0, g->FindTensor(n.inputs[0])->dtype, sh);
  }
  Dim minus_ones = 0, known = 1;
  std::vector<Dim> is_infer(sh.size()), fixed(sh.size());
  for (size_t i = 0; i < sh.size(); ++i) {
    const Dim zero = allowzero ? Dim(0) : Eq(sh[i], Dim(0));
    if (!allowzero && i >= x.size()) {
      OAAXVK_RETURN_IF_ERROR(c->AddGuard((Dim(1) - zero).Node(c),
          who + ": shape[" + std::to_string(i) + "] = 0 copies input dimension " + std::to_string(i) +
              ", which the input " + ShapeToString(x) + " does not have"));
    }
    is_infer[i] = Eq(sh[i], Dim(-1));
    minus_ones = minus_ones + is_infer[i];
    fixed[i] = allowzero || i >= x.size() ? sh[i] : Select(zero, x[i], sh[i]);
    known = known * Select(is_infer[i], Dim(1), fixed[i]);
  }
  OAAXVK_RETURN_IF_ERROR(c->AddGuard(Lt(minus_ones, Dim(2)).Node(c), who + ": the target shape has more than one -1"));
  OAAXVK_RETURN_IF_ERROR(c->AddGuard((Dim(1) - Lt(known, Dim(0))).Node(c), who + ": the target shape has a negative entry other than -1"));
  // The -1 entry: total / known, exactly where the other entries' sizes
  // cancel against the input's (then known = 0 only with total = 0, where
  // every value passes the guard below and the output is empty), else a
  // floor division that the guard checks.
  std::vector<Dim> others;
  for (size_t i = 0; i < sh.size(); ++i) others.push_back(Select(is_infer[i], Dim(1), fixed[i]));
  Dim inferred;
  if (!ExactQuotient(x, others, &inferred)) inferred = FloorDiv(total, Max(known, Dim(1)));
  Shape s(sh.size());
  for (size_t i = 0; i < sh.size(); ++i) s[i] = Select(is_infer[i], inferred, fixed[i]);
  OAAXVK_RETURN_IF_ERROR(c->AddGuard(Eq(NumElements(s), total).Node(c),
      who + ": the target shape must hold the input's " + std::to_string(total.value()) + " elements " +
          ShapeToString(x) + " (at most one -1, 0 copies the input dimension)"));
  for (size_t i = 0; i < sh.size(); ++i)
    OAAXVK_RETURN_IF_ERROR(c->AddGuard((Dim(1) - Lt(s[i], Dim(0))).Node(c), who + ": a target dimension is negative"));
  return SetOut(*g, n, 0, g->FindTensor(n.inputs[0])->dtype, s);
}

// Squeeze / Unsqueeze whose axes are read from a graph input at run time
// (feature value_symbols): the output rank is static (the number of axes is
// the input's length), which dimension is dropped or inserted is an
// expression of the axes; guards require distinct axes in range and (Squeeze)
// squeezed dimensions of size 1.
StatusOr<std::vector<Dim>> AxesByValue(const std::vector<Dim>& axes, int64_t r, const std::string& who) {
  SymContext* c = SymContext::Current();
  std::vector<Dim> hit(static_cast<size_t>(r), Dim(0));
  for (const Dim& a : axes) {
    OAAXVK_RETURN_IF_ERROR(c->AddGuard(Eq(Lt(a, Dim(-r)) + Lt(Dim(r - 1), a), Dim(0)).Node(c),
                                       who + ": an axis is outside [" + std::to_string(-r) + ", " + std::to_string(r - 1) + "]"));
    const Dim norm = a + Lt(a, Dim(0)) * Dim(r);
    for (int64_t i = 0; i < r; ++i) hit[i] = hit[i] + Eq(norm, Dim(i));
  }
  Dim distinct = 1;
  for (int64_t i = 0; i < r; ++i) {
    distinct = distinct * Lt(hit[i], Dim(2));
    hit[i] = Min(hit[i], Dim(1));  // 0/1 even where a guard fails (the placeholder point)
  }
  OAAXVK_RETURN_IF_ERROR(c->AddGuard(distinct.Node(c), who + ": an axis is repeated"));
  return hit;
}

Shape KeptDims(const Shape& x, const std::vector<Dim>& dropped, int64_t out_rank) {
  Shape s;
  for (int64_t j = 0; j < out_rank; ++j) {
    Dim d = 0, kept_before = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const Dim keep = Dim(1) - dropped[i];
      d = d + keep * Eq(kept_before, Dim(j)) * x[i];
      kept_before = kept_before + keep;
    }
    s.push_back(d);
  }
  return s;
}

static Status SqueezeByValue(Node& n, const Shape& x, const std::vector<Dim>& axes, Graph* g) {
  SymContext* c = SymContext::Current();
  const bool squeeze = n.op_type == "Squeeze";
  const std::string who = n.op_type + " '" + n.name + "'";
  const int64_t rank = static_cast<int64_t>(x.size()), na = static_cast<int64_t>(axes.size());
  if (squeeze && na > rank) return NodeError(n, "more axes than input dimensions");
  // hit[i]: 1 when an axis names dimension i (of the input for Squeeze, of the output for Unsqueeze).
  OAAXVK_ASSIGN_OR_RETURN(std::vector<Dim> hit, AxesByValue(axes, squeeze ? rank : rank + na, who));
  Shape s;
  if (squeeze) {
    for (int64_t i = 0; i < rank; ++i)
      OAAXVK_RETURN_IF_ERROR(c->AddGuard((Dim(1) - hit[i] * (Dim(1) - Eq(x[i], Dim(1)))).Node(c),
          who + ": a squeezed dimension of the input " + ShapeToString(x) + " is not 1"));
    s = KeptDims(x, hit, rank - na);
  } else {
    // Output dimension i is 1 where an axis inserts it, else the input dimension
    // that follows the ones already taken.
    Dim inserted_before = 0;
    for (int64_t i = 0; i < rank + na; ++i) {
      Dim d = 0;
      for (int64_t k = 0; k < rank; ++k) d = d + Eq(Dim(i) - inserted_before, Dim(k)) * x[k];
      s.push_back(Select(hit[i], Dim(1), d));
      inserted_before = inserted_before + hit[i];
    }
  }
  return SetOut(*g, n, 0, g->FindTensor(n.inputs[0])->dtype, s);
}

StatusOr<bool> SliceByValue(const Graph& g, const Node& n, const Shape& x, std::vector<Dim>* start,
                            std::vector<Dim>* step, std::vector<Dim>* len) {
  if (n.HasAttr("starts")) return false;
  std::vector<std::vector<Dim>> in(5);
  bool by_value = false;
  for (size_t k = 1; k < 5 && k < n.inputs.size(); ++k) {
    if (n.inputs[k].empty()) continue;
    const Tensor* t = g.FindTensor(n.inputs[k]);
    if (t == nullptr || !t->is_const) return false;  // the constant path reports it
    in[k] = t->AsDims();
    by_value = by_value || AnyDependsOnValue(t->sym);
  }
  if (!by_value) return false;
  SymContext* c = SymContext::Current();
  const std::string who = "Slice '" + n.name + "'";
  const int64_t r = static_cast<int64_t>(x.size());
  std::vector<Dim>& starts = in[1];
  std::vector<Dim>& ends = in[2];
  std::vector<Dim>& axes = in[3];
  std::vector<Dim>& steps = in[4];
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), Dim(1));
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return NodeError(n, "starts/ends/axes/steps lengths differ");
  // Bounds beyond +-2^40 clamp like any out-of-range bound (INT64_MAX "to
  // the end" stays valid and the arithmetic below cannot overflow).
  const Dim big = int64_t{1} << 40;
  auto clampv = [](const Dim& v, const Dim& lo, const Dim& hi) { return Min(Max(v, lo), hi); };
  std::vector<Dim> hit(static_cast<size_t>(r), Dim(0));
  start->assign(static_cast<size_t>(r), Dim(0));
  step->assign(static_cast<size_t>(r), Dim(0));
  len->assign(static_cast<size_t>(r), Dim(0));
  for (size_t i = 0; i < starts.size(); ++i) {
    OAAXVK_RETURN_IF_ERROR(c->AddGuard(Eq(Lt(axes[i], Dim(-r)) + Lt(Dim(r - 1), axes[i]), Dim(0)).Node(c),
                                       who + ": an axis is outside [" + std::to_string(-r) + ", " + std::to_string(r - 1) + "]"));
    const Dim a = axes[i] + Lt(axes[i], Dim(0)) * Dim(r);
    const Dim st_any = clampv(steps[i], Dim(0) - big, big);
    OAAXVK_RETURN_IF_ERROR(c->AddGuard((Dim(1) - Eq(st_any, Dim(0))).Node(c), who + ": a step is 0"));
    const Dim pos = Lt(Dim(0), st_any);
    for (int64_t j = 0; j < r; ++j) {
      const Dim on = Eq(a, Dim(j)), d = x[j];
      // A step beyond the extent selects what a step of the extent does (and
      // keeps the kernel's strides 32-bit).
      const Dim st = clampv(st_any, Dim(0) - d, d);
      Dim b = clampv(starts[i], Dim(0) - big, big), e = clampv(ends[i], Dim(0) - big, big);
      b = b + d * Lt(b, Dim(0));
      e = e + d * Lt(e, Dim(0));
      const Dim bc = Select(pos, clampv(b, Dim(0), d), clampv(b, Dim(0), d - 1));
      const Dim ec = Select(pos, clampv(e, Dim(0), d), clampv(e, Dim(-1), d - 1));
      const Dim l = Select(pos, CeilDiv(Max(ec - bc, Dim(0)), Max(st, Dim(1))),
                           CeilDiv(Max(bc - ec, Dim(0)), Max(Dim(0) - st, Dim(1))));
      hit[j] = hit[j] + on;
      (*start)[j] = (*start)[j] + on * bc;
      (*step)[j] = (*step)[j] + on * st;
      (*len)[j] = (*len)[j] + on * l;
    }
  }
  for (int64_t j = 0; j < r; ++j) {
    OAAXVK_RETURN_IF_ERROR(c->AddGuard(Lt(hit[j], Dim(2)).Node(c), who + ": an axis is repeated"));
    // Dimensions no axis names: whole, step 1 (min keeps invalid points, a
    // repeated axis, from giving negative sizes).
    const Dim off = Dim(1) - Min(hit[j], Dim(1));
    (*step)[j] = (*step)[j] + off;
    (*len)[j] = (*len)[j] + off * x[j];
  }
  return true;
}

namespace {

Status InferOutputs(Graph& g, Node& n) {
  bool handled = false;
  OAAXVK_RETURN_IF_ERROR(InferFloatNodeShapes(g, n, &handled));
  if (handled) return Status::Ok();
  OAAXVK_RETURN_IF_ERROR(InferIndexNodeShapes(g, n, &handled));  // issue 5: shape_infer_index.cpp
  if (handled) return Status::Ok();
  std::vector<const Tensor*> in;
  for (const std::string& name : n.inputs) {
    if (name.empty()) { in.push_back(nullptr); continue; }
    const Tensor* t = g.FindTensor(name);
    if (!t || !t->has_shape) return NodeError(n, "input '" + name + "' has no static shape");
    in.push_back(t);
  }
  auto need = [&](size_t k) -> Status {
    if (in.size() <= k || !in[k]) return NodeError(n, "missing input " + std::to_string(k));
    return Status::Ok();
  };
  const std::string& op = n.op_type;
  OAAXVK_RETURN_IF_ERROR(need(0));
  const Shape& x = in[0]->shape;
  DType dt = in[0]->dtype;
  int64_t rank = static_cast<int64_t>(x.size());

  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow" || op == "Max" || op == "Min") {
    if ((op == "Max" || op == "Min") && n.inputs.size() != 2)
      return Unimplemented("node '" + n.name + "' (" + op + "): only the two-input form is supported, got " +
                           std::to_string(n.inputs.size()) + " inputs");
    OAAXVK_RETURN_IF_ERROR(need(1));
    StatusOr<Shape> s = BroadcastShapes(x, in[1]->shape);
    if (!s.ok()) return NodeError(n, s.status().message());
    return SetOut(g, n, 0, dt, *s);
  }
  if (op == "Relu" || op == "Clip" || op == "HardSigmoid" || op == "HardSwish" || op == "Sigmoid" ||
      op == "LeakyRelu" || op == "Identity" || op == "Dropout" || op == "Softmax" ||
      op == "BatchNormalization" || op == "Neg" || op == "Sqrt" || op == "Exp" || op == "Abs" || op == "Tanh" ||
      op == "Reciprocal" || op == "Swish" || op == "Affine") {
    if (op == "Softmax") {
      int64_t axis = NormAxis(n.GetInt("axis", g.opset >= 13 ? -1 : 1), rank);
      if (axis < 0 || axis >= std::max<int64_t>(rank, 1)) return NodeError(n, "axis out of range");
    }
    return SetOut(g, n, 0, dt, x);
  }
  if (op == "Cast") {
    return SetOut(g, n, 0, static_cast<DType>(n.GetInt("to", 1)), x);
  }
  if (op == "ConvTranspose") {
    OAAXVK_RETURN_IF_ERROR(need(1));
    const Shape& w = in[1]->shape;
    if (x.size() != 4 || w.size() != 4)
      return NodeError(n, "only 2-D ConvTranspose (4-D input and weight) is supported, got input " +
                              ShapeToString(x) + " weight " + ShapeToString(w));
    int64_t group = n.GetInt("group", 1);
    if (group < 1 || x[1] % group != 0 || w[0] != x[1])
      return NodeError(n, "input channels " + std::to_string(x[1]) + " do not match weight " + ShapeToString(w) +
                              " with group " + std::to_string(group));
    std::string ap = n.GetString("auto_pad", "NOTSET");
    if (ap != "NOTSET" && ap != "VALID" && ap != "SAME_UPPER" && ap != "SAME_LOWER")
      return NodeError(n, "unknown auto_pad '" + ap + "'");
    std::vector<int64_t> st = n.GetInts("strides", {1, 1}), dl = n.GetInts("dilations", {1, 1}),
                         pd = ap == "NOTSET" ? n.GetInts("pads", {0, 0, 0, 0}) : std::vector<int64_t>{0, 0, 0, 0},
                         op_ = n.GetInts("output_padding", {0, 0});
    if (st.size() != 2 || dl.size() != 2 || pd.size() != 4 || op_.size() != 2)
      return NodeError(n, "strides/dilations/pads/output_padding must be 2-D");
    for (int64_t v : st) if (v < 1) return NodeError(n, "strides must be >= 1");
    for (int64_t v : dl) if (v < 1) return NodeError(n, "dilations must be >= 1");
    // output_shape / SAME auto_pad: pads from the ONNX formula
    // total = stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - out,
    // SAME_UPPER puts the odd unit at the end, NOTSET (an output_shape) and
    // SAME_LOWER at the start; a negative end pad (output
    // larger than the full result) becomes extra output_padding.
    if (n.HasAttr("output_shape") || ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      std::vector<int64_t> os = n.GetInts("output_shape", {});
      if (os.size() == 4) os = {os[2], os[3]};
      if (!os.empty() && os.size() != 2) return NodeError(n, "output_shape must have 2 (spatial) entries");
      if (os.empty()) os = {x[2] * st[0], x[3] * st[1]};
      for (int i = 0; i < 2; ++i) {
        int64_t total = st[i] * (x[2 + i] - 1) + op_[i] + (w[2 + i] - 1) * dl[i] + 1 - os[i];
        int64_t half = total / 2;
        // NOTSET: the ONNX rule, as SAME_LOWER; an output beyond the full
        // result (total < 0) keeps the start pad at 0 (or refuses it below).
        pd[i] = ap == "SAME_UPPER" || total < 0 ? half : total - half;
        pd[i + 2] = total - pd[i];
        if (pd[i + 2] < 0) {
          op_[i] -= pd[i + 2];
          pd[i + 2] = 0;
        }
        if (pd[i] < 0)
          return NodeError(n, "output_shape " + std::to_string(os[i]) + " needs a negative start pad on spatial axis " +
                                  std::to_string(i));
      }
      n.SetInts("output_padding", op_);
    }
    for (int64_t v : pd) if (v < 0) return NodeError(n, "negative pads are not supported");
    Shape s = {x[0], w[1] * group, 0, 0};
    for (int i = 0; i < 2; ++i)
      s[2 + i] = st[i] * (x[2 + i] - 1) + op_[i] + (w[2 + i] - 1) * dl[i] + 1 - pd[i] - pd[i + 2];
    n.SetInts("_pads", pd);
    n.SetInts("strides", st);
    n.SetInts("dilations", dl);
    return SetOut(g, n, 0, dt, s);
  }
  if (op == "ReverseSequence") {
    OAAXVK_RETURN_IF_ERROR(need(1));
    const int64_t ta = n.GetInt("time_axis", 0), ba = n.GetInt("batch_axis", 1);
    if (x.size() < 2 || !((ta == 0 && ba == 1) || (ta == 1 && ba == 0)))
      return NodeError(n, "needs rank >= 2 with time_axis/batch_axis 0 and 1");
    if (in[1]->shape != Shape{x[ba]}) return NodeError(n, "sequence_lens must have shape [batch]");
    return SetOut(g, n, 0, dt, x);
  }
  if (op == "Det") {
    if (x.size() < 2 || x[x.size() - 1] != x[x.size() - 2])
      return NodeError(n, "needs [..., M, M] matrices, got " + ShapeToString(x));
    return SetOut(g, n, 0, dt, Shape(x.begin(), x.end() - 2));
  }
  if (op == "RoiAlign") {
    OAAXVK_RETURN_IF_ERROR(need(2));
    const Shape& rs = in[1]->shape;
    if (x.size() != 4 || rs.size() != 2 || rs[1] != 4 || in[2]->shape != Shape{rs[0]})
      return NodeError(n, "needs X [N, C, H, W], rois [R, 4] and batch_indices [R]");
    const int64_t oh = n.GetInt("output_height", 1), ow = n.GetInt("output_width", 1);
    if (oh < 1 || ow < 1) return NodeError(n, "output_height/output_width must be >= 1");
    return SetOut(g, n, 0, dt, {rs[0], x[1], oh, ow});
  }
  if (op == "GridSample") {
    OAAXVK_RETURN_IF_ERROR(need(1));
    const Shape& gs = in[1]->shape;
    if (x.size() == 5 && gs.size() == 5 && gs[0] == x[0] && gs[4] == 3)
      return SetOut(g, n, 0, dt, {x[0], x[1], gs[1], gs[2], gs[3]});  // 3-D sampling
    if (x.size() != 4 || gs.size() != 4 || gs[0] != x[0] || gs[3] != 2)
      return NodeError(n, "needs X [N, C, H, W] and grid [N, H_out, W_out, 2], or X [N, C, D, H, W] and grid [N, "
                          "D_out, H_out, W_out, 3], got " + ShapeToString(x) + " and " + ShapeToString(gs));
    return SetOut(g, n, 0, dt, {x[0], x[1], gs[1], gs[2]});
  }
  if (op == "DeformConv") {
    // X [N, C, H, W], W [OC, C / group, KH, KW], offset [N, 2 * offset_group
    // * KH * KW, OH, OW]: Y [N, OC, OH, OW] with OH, OW as for Conv.
    OAAXVK_RETURN_IF_ERROR(need(1));
    OAAXVK_RETURN_IF_ERROR(need(2));
    const Shape& ws = in[1]->shape;
    const Shape& os = in[2]->shape;
    if (x.size() != 4 || ws.size() != 4 || os.size() != 4)
      return NodeError(n, "needs 4-D X, W and offset (2-D deformable convolution), got " + ShapeToString(x) + ", " +
                              ShapeToString(ws) + " and " + ShapeToString(os));
    for (const Shape* s : {&x, &ws})
      for (const Dim& d : *s)
        if (d.is_symbolic())
          return NodeError(n, "needs static X and W shapes, got " + ShapeToString(x) + " and " + ShapeToString(ws) +
                                  " (config.json \"input_shapes\")");
    const int64_t group = n.GetInt("group", 1), og = n.GetInt("offset_group", 1);
    const std::vector<int64_t> k = n.GetInts("kernel_shape", {ws[2].value(), ws[3].value()});
    const std::vector<int64_t> st = n.GetInts("strides", {1, 1}), dl = n.GetInts("dilations", {1, 1});
    const std::vector<int64_t> pd = n.GetInts("pads", {0, 0, 0, 0});
    if (group < 1 || og < 1 || x[1].value() % group != 0 || x[1].value() % og != 0 || ws[1].value() * group != x[1].value() ||
        ws[0].value() % group != 0)
      return NodeError(n, "group " + std::to_string(group) + " and offset_group " + std::to_string(og) +
                              " must divide the channels of X " + ShapeToString(x) + " and W " + ShapeToString(ws));
    if (k.size() != 2 || st.size() != 2 || dl.size() != 2 || pd.size() != 4 || k[0] != ws[2].value() ||
        k[1] != ws[3].value() || st[0] < 1 || st[1] < 1 || dl[0] < 1 || dl[1] < 1)
      return NodeError(n, "kernel_shape, strides, dilations and pads must be 2-D and agree with W " + ShapeToString(ws));
    Shape y = {x[0], ws[0]};
    for (int a = 0; a < 2; ++a) {
      const int64_t span = x[2 + a].value() + pd[a] + pd[a + 2] - ((k[a] - 1) * dl[a] + 1);
      if (span < 0) return NodeError(n, "the dilated kernel is larger than the padded input " + ShapeToString(x));
      y.push_back(span / st[a] + 1);
    }
    if (os[0] != x[0] || os[1] != Dim(og * 2 * k[0] * k[1]) || os[2] != y[2] || os[3] != y[3])
      return NodeError(n, "offset must have shape " + ShapeToString({x[0], og * 2 * k[0] * k[1], y[2], y[3]}) +
                              ", got " + ShapeToString(os));
    if (in.size() > 3 && in[3] && in[3]->shape != Shape{ws[0]})
      return NodeError(n, "B must have shape [" + std::to_string(ws[0].value()) + "], got " + ShapeToString(in[3]->shape));
    if (in.size() > 4 && in[4] && in[4]->shape != Shape{x[0], og * k[0] * k[1], y[2], y[3]})
      return NodeError(n, "mask must have shape " + ShapeToString({x[0], og * k[0] * k[1], y[2], y[3]}) + ", got " +
                              ShapeToString(in[4]->shape));
    return SetOut(g, n, 0, dt, y);
  }
  if (op == "Resize") {
    // opset 10: (X, scales); opset 11+: (X, roi, scales, sizes).
    size_t si = g.opset < 11 ? 1 : 2, zi = 3;
    std::vector<Dim> sizes;
    if (const Tensor* zt = zi < n.inputs.size() && !n.inputs[zi].empty() ? g.FindTensor(n.inputs[zi]) : nullptr;
        zt != nullptr && zt->is_const && AnyDependsOnValue(zt->sym)) {
      sizes = zt->AsDims();  // read at run time (feature value_symbols)
    } else {
      OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> zs, ConstInts(g, n, zi, "sizes"));
      sizes = ToDims(zs);
    }
    std::vector<double> scales;
    if (si < n.inputs.size() && !n.inputs[si].empty()) {
      const Tensor* t = g.FindTensor(n.inputs[si]);
      if (!t || !t->is_const)
        return NodeError(n, NotConstantMessage(g, "scales", n.inputs[si]));
      if (AnyDependsOnValue(t->sym)) {
        // Scales read at run time (feature float_value_symbols): each value
        // symbol is the output size floor(x * scale) itself; the kernel reads
        // the scales from their input buffer (resize2d_scales).
        // _scales_hw (Resize-18 with axes of the two innermost dimensions,
        // decompose_nn.cpp): the two entries are H and W, the others are 1.
        const bool hw = n.GetInt("_scales_hw", 0) != 0;
        if (static_cast<int64_t>(t->sym.size()) != (hw ? 2 : rank))
          return NodeError(n, "scales must have one entry per input dimension");
        if (g.opset >= 11 && n.GetString("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize")
          return NodeError(n, "tf_crop_and_resize with scales read at run time is not supported (bind the scales)");
        SymContext* c = SymContext::Current();
        Shape s = x;
        for (int64_t i = 0; i < rank; ++i) {
          const std::string who = "Resize '" + n.name + "': scales[" + std::to_string(i) + "]";
          if (hw && i + 2 < rank) continue;
          const Dim& v = t->sym[hw ? i + 2 - rank : i];
          if (i + 2 < rank) {
            OAAXVK_RETURN_IF_ERROR(c->AddGuard(Eq(v, Dim(kOuterScaleFactor)).Node(c),
                                               who + " must be 1 (only the last two dimensions are resized)"));
            continue;
          }
          s[i] = v;
          if (g.opset < 11 && n.GetString("mode", "nearest") == "nearest")  // ONNX Runtime's Resize-10 rule
            OAAXVK_RETURN_IF_ERROR(c->AddGuard((Dim(1) - Lt(s[i], x[i])).Node(c),
                                               who + ": an opset-10 nearest resize with run-time scales must upsample"));
        }
        n.SetInt("_scales_by_value", 1);
        return SetOut(g, n, 0, dt, s);
      }
      scales = t->AsDoubles();
    }
    // roi: only tf_crop_and_resize reads it (opset 11+).
    std::vector<float> roi;
    if (g.opset >= 11 && n.GetString("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize") {
      if (n.inputs.size() < 2 || n.inputs[1].empty()) return NodeError(n, "tf_crop_and_resize needs the roi input");
      const Tensor* t = g.FindTensor(n.inputs[1]);
      if (t != nullptr && !t->is_const && t->has_shape && !sizes.empty()) {
        // roi known only at run time (with sizes, it sets no size): the kernel
        // reads it from its input (resize2d_roi); the outer dimensions must
        // have extent 1, where any roi maps to their only element.
        if (t->numel() != 2 * rank) return NodeError(n, "roi must have 2 * rank entries");
        for (int64_t i = 0; i + 2 < rank; ++i)
          if (x[i].is_symbolic() || x[i] != 1)
            return NodeError(n, "roi input '" + n.inputs[1] + "' is not a compile-time constant, and dimension " +
                                    std::to_string(i) + " is not 1 (a run-time roi crops only the last two "
                                    "dimensions, which needs the others to have extent 1)");
        n.SetInt("_roi_by_input", 1);
      } else if (!t || !t->is_const) {
        return NodeError(n, NotConstantMessage(g, "roi", n.inputs[1]));
      } else {
        std::vector<double> r = t->AsDoubles();
        if (static_cast<int64_t>(r.size()) != 2 * rank) return NodeError(n, "roi must have 2 * rank entries");
        for (double v : r) roi.push_back(static_cast<float>(v));
      }
    }
    if (!scales.empty() && !sizes.empty()) return NodeError(n, "both scales and sizes are given");
    Shape s = x;
    // eff: the scale of each axis; len: its resized length before rounding
    // (what align_corners / tf_crop_and_resize divide by in the ONNX reference).
    std::vector<float> eff(rank, 1.f), len(rank, 1.f);
    if (!sizes.empty()) {
      if (static_cast<int64_t>(sizes.size()) != rank) return NodeError(n, "sizes must have one entry per input dimension");
      for (int64_t i = 0; i < rank; ++i) {
        s[i] = sizes[i];
        if (DependsOnValue(sizes[i])) {
          // The kernel computes out / in itself (resize2d.glsl: scale 0);
          // only the two innermost dimensions are resized.
          SymContext* c = SymContext::Current();
          const std::string who = "Resize '" + n.name + "': sizes[" + std::to_string(i) + "]";
          if (i + 2 < rank) {
            s[i] = x[i];
            OAAXVK_RETURN_IF_ERROR(c->AddGuard(Eq(sizes[i], x[i]).Node(c),
                                               who + " must equal the input's dimension (only the last two are resized)"));
          } else {
            OAAXVK_RETURN_IF_ERROR(c->AddGuard((Dim(1) - Lt(sizes[i], Dim(0))).Node(c), who + " is negative"));
          }
          eff[i] = 0.f;
          len[i] = 0.f;
          continue;
        }
        eff[i] = static_cast<float>(s[i]) / static_cast<float>(x[i]);
        len[i] = static_cast<float>(s[i]);
      }
    } else {
      if (static_cast<int64_t>(scales.size()) != rank) return NodeError(n, "scales must have one entry per input dimension");
      for (int64_t i = 0; i < rank; ++i) {
        if (!(scales[i] > 0)) return NodeError(n, "scales must be positive");
        s[i] = static_cast<int64_t>(std::floor(static_cast<double>(x[i]) * static_cast<float>(scales[i])));
        // A symbolic size and a scale that is an exact binary fraction p / q
        // (2, 0.5, 1.25, ...): floor(x * scale) = floordiv(x * p, q) at every size.
        for (int64_t q = 1; x[i].is_symbolic() && q <= 1024; q *= 2) {
          const double pq = static_cast<double>(static_cast<float>(scales[i])) * static_cast<double>(q);
          if (pq != std::floor(pq) || pq > 1e9) continue;
          s[i] = FloorDiv(x[i] * static_cast<int64_t>(pq), q);
          break;
        }
        eff[i] = static_cast<float>(scales[i]);
        len[i] = static_cast<float>(static_cast<double>(x[i]) * scales[i]);
      }
    }
    auto floats_attr = [&](const char* key, std::vector<float> v) {
      Attr a;
      a.kind = Attr::kFloats;
      a.floats = std::move(v);
      n.attrs[key] = std::move(a);
    };
    // keep_aspect_ratio_policy (decompose_nn.cpp ResizeNd): the listed axes
    // interpolate with the policy's scale rather than output / input.
    if (auto ps = n.attrs.find("_policy_scales"); ps != n.attrs.end() && ps->second.floats.size() == eff.size())
      for (size_t i = 0; i < eff.size(); ++i)
        if (ps->second.floats[i] != 0.f) eff[i] = ps->second.floats[i];
    floats_attr("_scales", eff);
    floats_attr("_lengths", len);
    if (!roi.empty()) floats_attr("_roi", roi);
    return SetOut(g, n, 0, dt, s);
  }
  if (op == "Conv") {
    OAAXVK_RETURN_IF_ERROR(need(1));
    const Shape& w = in[1]->shape;
    if (x.size() != 4 || w.size() != 4)
      return NodeError(n, "input " + ShapeToString(x) + " and weight " + ShapeToString(w) +
                              " reach the 2-D convolution kernel; convolutions over 1, 2 or 3 spatial dimensions "
                              "(input and weight of equal rank 3 to 5, their shapes known at conversion) are "
                              "supported");
    int64_t group = n.GetInt("group", 1);
    if (group < 1 || x[1] % group != 0 || w[0] % group != 0 || w[1] * group != x[1])
      return NodeError(n, "channels " + std::to_string(x[1]) + " / weight " + ShapeToString(w) +
                              " do not match group " + std::to_string(group));
    Dim oh, ow;
    OAAXVK_RETURN_IF_ERROR(Window2D(n, x, w[2], w[3], false, &oh, &ow));
    return SetOut(g, n, 0, dt, {x[0], w[0], oh, ow});
  }
  if (op == "MaxPool" || op == "AveragePool") {
    if (x.size() != 4) return NodeError(n, "only 2-D pooling (4-D input) is supported, got " + ShapeToString(x));
    std::vector<int64_t> k = n.GetInts("kernel_shape", {});
    if (k.size() != 2) return NodeError(n, "kernel_shape must have 2 entries");
    if (op == "MaxPool" && n.outputs.size() > 1 && !n.outputs[1].empty())
      return NodeError(n, "the Indices output of MaxPool is not supported");
    Dim oh, ow;
    OAAXVK_RETURN_IF_ERROR(Window2D(n, x, k[0], k[1], n.GetInt("ceil_mode", 0) != 0, &oh, &ow));
    return SetOut(g, n, 0, dt, {x[0], x[1], oh, ow});
  }
  if (op == "GlobalAveragePool") {
    if (x.size() < 3) return NodeError(n, "input must have rank >= 3");
    Shape s = x;
    for (size_t i = 2; i < s.size(); ++i) s[i] = 1;
    return SetOut(g, n, 0, dt, s);
  }
  if (op == "Reshape") {
    OAAXVK_ASSIGN_OR_RETURN(std::vector<Dim> sh, ConstDims(g, n, 1, "shape"));
    bool allowzero = n.GetInt("allowzero", 0) != 0;
    if (AnyDependsOnValue(sh)) return ReshapeByValue(n, x, sh, allowzero, &g);
    Shape s(sh.size());
    Dim known = 1;
    int64_t infer = -1;
    for (size_t i = 0; i < sh.size(); ++i) {
      if (sh[i] == 0 && !allowzero) {
        if (i >= x.size()) return NodeError(n, "shape entry 0 copies a missing input dimension");
        s[i] = x[i];
      } else if (sh[i] == -1) {
        if (infer >= 0) return NodeError(n, "more than one -1 in the target shape");
        infer = static_cast<int64_t>(i);
        continue;
      } else {
        s[i] = sh[i];
      }
      known *= s[i];
    }
    Dim total = NumElements(x);
    if (infer >= 0) {
      if (known == 0 || total % known) return NodeError(n, "cannot infer -1 reshaping " + ShapeToString(x));
      s[infer] = FloorDiv(total, known);
    }
    if (NumElements(s) != total)
      return NodeError(n, "cannot reshape " + ShapeToString(x) + " to " + ShapeToString(s));
    return SetOut(g, n, 0, dt, s);
  }
  if (op == "Flatten") {
    int64_t axis = NormAxis(n.GetInt("axis", 1), rank);
    if (axis < 0 || axis > rank) return NodeError(n, "axis out of range");
    Dim a = 1, b = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? a : b) *= x[i];
    return SetOut(g, n, 0, dt, {a, b});
  }
  if (op == "Squeeze" || op == "Unsqueeze") {
    std::vector<int64_t> axes;
    if (n.HasAttr("axes")) {
      axes = n.GetInts("axes", {});
    } else {
      OAAXVK_ASSIGN_OR_RETURN(std::vector<Dim> ad, ConstDims(g, n, 1, "axes"));
      if (AnyDependsOnValue(ad)) return SqueezeByValue(n, x, ad, &g);
      OAAXVK_ASSIGN_OR_RETURN(axes, ConstInts(g, n, 1, "axes"));
    }
    if (op == "Squeeze") {
      Shape s;
      std::set<int64_t> ax;
      for (int64_t a : axes) ax.insert(NormAxis(a, rank));
      for (int64_t i = 0; i < rank; ++i) {
        bool drop = axes.empty() ? x[i] == 1 : ax.count(i) != 0;
        if (drop && x[i] != 1) return NodeError(n, "cannot squeeze dimension " + std::to_string(i) + " of " + ShapeToString(x));
        if (!drop) s.push_back(x[i]);
      }
      return SetOut(g, n, 0, dt, s);
    }
    int64_t outr = rank + static_cast<int64_t>(axes.size());
    std::set<int64_t> ax;
    for (int64_t a : axes) {
      int64_t v = NormAxis(a, outr);
      if (v < 0 || v >= outr || !ax.insert(v).second) return NodeError(n, "bad or repeated axis");
    }
    Shape s;
    size_t j = 0;
    for (int64_t i = 0; i < outr; ++i) s.push_back(ax.count(i) ? Dim(1) : x[j++]);
    return SetOut(g, n, 0, dt, s);
  }
  if (op == "Transpose") {
    std::vector<int64_t> perm = n.GetInts("perm", {});
    if (perm.empty()) for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
    if (static_cast<int64_t>(perm.size()) != rank) return NodeError(n, "perm has the wrong length");
    Shape s(rank);
    std::set<int64_t> seen;
    for (int64_t i = 0; i < rank; ++i) {
      if (perm[i] < 0 || perm[i] >= rank || !seen.insert(perm[i]).second) return NodeError(n, "invalid perm");
      s[i] = x[perm[i]];
    }
    n.SetInts("perm", perm);
    return SetOut(g, n, 0, dt, s);
  }
  if (op == "Concat") {
    int64_t axis = NormAxis(n.GetInt("axis", 0), rank);
    if (axis < 0 || axis >= rank) return NodeError(n, "axis out of range");
    Shape s = x;
    for (size_t k = 1; k < in.size(); ++k) {
      OAAXVK_RETURN_IF_ERROR(need(k));
      const Shape& y = in[k]->shape;
      if (static_cast<int64_t>(y.size()) != rank) return NodeError(n, "inputs have different ranks");
      for (int64_t i = 0; i < rank; ++i) {
        if (i == axis) continue;
        if (y[i] != x[i]) return NodeError(n, "input shapes " + ShapeToString(x) + " and " + ShapeToString(y) + " differ off the axis");
        // Equal sizes the simplifier cannot prove equal: a run-time guard.
        OAAXVK_ASSIGN_OR_RETURN(s[i], UnifyDims(s[i], y[i], "node '" + n.name + "' (Concat)",
                                                "dimension " + std::to_string(i) + " of inputs 0 and " + std::to_string(k)));
      }
      s[axis] += y[axis];
    }
    n.SetInt("axis", axis);
    return SetOut(g, n, 0, dt, s);
  }
  if (op == "MatMul") {
    OAAXVK_RETURN_IF_ERROR(need(1));
    Shape a = x, b = in[1]->shape;
    if (a.empty() || b.empty()) return NodeError(n, "scalar operands are not allowed");
    bool va = a.size() == 1, vb = b.size() == 1;
    if (va) a.insert(a.begin(), 1);
    if (vb) b.push_back(1);
    if (a.back() != b[b.size() - 2])
      return NodeError(n, "inner dimensions differ: " + ShapeToString(x) + " x " + ShapeToString(in[1]->shape));
    // Equal inner sizes the simplifier cannot prove equal: a run-time guard.
    OAAXVK_RETURN_IF_ERROR(UnifyDims(a.back(), b[b.size() - 2], "node '" + n.name + "' (MatMul)",
                                     "the inner dimensions of A and B").status());
    Shape ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
    StatusOr<Shape> bs = BroadcastShapes(ba, bb);
    if (!bs.ok()) return NodeError(n, bs.status().message());
    Shape s = *bs;
    if (!va) s.push_back(a[a.size() - 2]);
    if (!vb) s.push_back(b.back());
    return SetOut(g, n, 0, dt, s);
  }
  if (op == "Gemm") {
    OAAXVK_RETURN_IF_ERROR(need(1));
    const Shape& b = in[1]->shape;
    if (x.size() != 2 || b.size() != 2) return NodeError(n, "Gemm operands must be 2-D");
    bool ta = n.GetInt("transA", 0), tb = n.GetInt("transB", 0);
    Dim M = ta ? x[1] : x[0], K = ta ? x[0] : x[1];
    Dim K2 = tb ? b[1] : b[0], N = tb ? b[0] : b[1];
    if (K != K2) return NodeError(n, "inner dimensions differ");
    if (in.size() > 2 && in[2]) {
      StatusOr<Shape> bs = BroadcastShapes(in[2]->shape, {M, N});
      if (!bs.ok() || *bs != Shape({M, N})) return NodeError(n, "C is not broadcastable to [M, N]");
    }
    return SetOut(g, n, 0, dt, {M, N});
  }
  if (op == "Shape") {
    int64_t start = NormAxis(n.GetInt("start", 0), rank), end = n.HasAttr("end") ? NormAxis(n.GetInt("end", rank), rank) : rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, 0, rank);
    return SetOut(g, n, 0, DType::kInt64, {std::max<int64_t>(0, end - start)});
  }
  if (op == "Size") return SetOut(g, n, 0, DType::kInt64, {});
  if (op == "Gather") {
    OAAXVK_RETURN_IF_ERROR(need(1));
    int64_t axis = NormAxis(n.GetInt("axis", 0), rank);
    if (axis < 0 || axis >= rank) return NodeError(n, "axis out of range");
    Shape s(x.begin(), x.begin() + axis);
    for (const Dim& d : in[1]->shape) s.push_back(d);
    s.insert(s.end(), x.begin() + axis + 1, x.end());
    return SetOut(g, n, 0, dt, s);
  }
  if (op == "ConstantOfShape") {
    OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> sh, ConstInts(g, n, 0, "shape"));
    DType odt = DType::kFloat;
    auto it = n.attrs.find("value");
    if (it != n.attrs.end() && !it->second.t.empty()) odt = it->second.t[0].dtype;
    return SetOut(g, n, 0, odt, ToDims(sh));
  }
  if (op == "Slice") {
    {
      std::vector<Dim> vst, vsp, vlen;
      OAAXVK_ASSIGN_OR_RETURN(bool by_value, SliceByValue(g, n, x, &vst, &vsp, &vlen));
      if (by_value) {  // bounds read at run time (feature value_symbols)
        n.SetInt("_slice_by_value", 1);
        return SetOut(g, n, 0, dt, vlen);
      }
    }
    // Output shape is computed by folding (Slice is fold-only); it needs constant bounds.
    std::vector<int64_t> starts, ends, axes, steps;
    if (n.HasAttr("starts")) {
      starts = n.GetInts("starts", {}); ends = n.GetInts("ends", {}); axes = n.GetInts("axes", {});
    } else {
      OAAXVK_ASSIGN_OR_RETURN(starts, ConstInts(g, n, 1, "starts"));
      OAAXVK_ASSIGN_OR_RETURN(ends, ConstInts(g, n, 2, "ends"));
      OAAXVK_ASSIGN_OR_RETURN(axes, ConstInts(g, n, 3, "axes"));
      OAAXVK_ASSIGN_OR_RETURN(steps, ConstInts(g, n, 4, "steps"));
    }
    if (axes.empty()) for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
      return NodeError(n, "starts/ends/axes/steps lengths differ");
    Shape s = x;
    std::vector<int64_t> st(rank, 0), sp(rank, 1);
    for (size_t i = 0; i < starts.size(); ++i) {
      int64_t a = NormAxis(axes[i], rank);
      if (a < 0 || a >= rank || steps[i] == 0) return NodeError(n, "bad axis or zero step");
      int64_t d = x[a], step = steps[i];
      int64_t b = starts[i], e = ends[i];
      // A symbolic extent sliced from a start every size reaches, forwards
      // to a non-negative end (a detector's keep[:300] of an extent read
      // back): the length is min(end, size) - start, an expression, so that
      // it follows the size (an extent of 0 included).
      if (x[a].is_symbolic() && step > 0 && (b == 0 || (b > 0 && b <= LowerBound(x[a]))) && e >= b) {
        const Dim end = e >= UpperBound(x[a]) ? x[a] : Min(Dim(e), x[a]);
        s[a] = step == 1 ? end - Dim(b) : CeilDiv(end - Dim(b), Dim(step));
        st[a] = b;
        sp[a] = step;
        continue;
      }
      if (b < 0) b += d;
      if (e < 0 && e > INT64_MIN / 2) e += d;
      if (step > 0) { b = std::clamp<int64_t>(b, 0, d); e = std::clamp<int64_t>(e, 0, d); }
      else { b = std::clamp<int64_t>(b, 0, d - 1); e = std::clamp<int64_t>(e, -1, d - 1); }
      int64_t len = step > 0 ? (e > b ? (e - b + step - 1) / step : 0) : (b > e ? (b - e + (-step) - 1) / (-step) : 0);
      s[a] = len; st[a] = b; sp[a] = step;
    }
    n.SetInts("_starts", st);
    n.SetInts("_steps", sp);
    return SetOut(g, n, 0, dt, s);
  }
  bool int_handled = false;
  OAAXVK_RETURN_IF_ERROR(InferIntNodeShapes(g, n, &int_handled));
  if (int_handled) return Status::Ok();
  return Unimplemented("node '" + n.name + "': operator " + op + " has no shape inference");
}

}  // namespace

Status InferNodeShapes(Graph& g, Node& n) {
  OAAXVK_RETURN_IF_ERROR(IsLoopNode(n)                 ? InferLoopNodeShapes(g, n)  // ir/loop_nodes.h
                         : n.op_type == "_LoopRead" ? InferLoopReadShape(g, n)   // ir/loop_reads.h
                                                    : InferOutputs(g, n));
  // Sizes computed from the model are checked before anything allocates or
  // multiplies them further (ir/limits.h).
  for (const std::string& o : n.outputs) {
    const Tensor* t = o.empty() ? nullptr : g.FindTensor(o);
    if (t == nullptr || !t->has_shape) continue;
    const size_t es = DTypeSize(t->dtype);
    OAAXVK_RETURN_IF_ERROR(CheckTensorSize(t->shape, es ? es : 1,
                                           "node '" + n.name + "' (" + n.op_type + ") output '" + o + "'",
                                           ShapeToString(t->shape)));
  }
  return PropagateExtent(g, n);  // data-dependent extents (extent.h)
}

Status InferShapes(Graph& g) {
  for (Node& n : g.nodes) OAAXVK_RETURN_IF_ERROR(InferNodeShapes(g, n));
  return Status::Ok();
}

}  // namespace oaaxvk::toolchain
