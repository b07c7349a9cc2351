#include "toolchain/ir/shape_infer_index.h"

#include "toolchain/ir/extent.h"
#include "toolchain/ir/not_constant.h"

#include <algorithm>

#include "toolchain/ir/shape_infer.h"
#include "toolchain/ir/shape_infer_int.h"

namespace oaaxvk::toolchain {

namespace {

Status IdxError(const Node& n, const std::string& msg) {
  return InvalidArgument("node '" + n.name + "' (" + n.op_type + "): " + msg);
}
Status IdxUnsupported(const Node& n, const std::string& msg) {
  return Unimplemented("node '" + n.name + "' (" + n.op_type + "): " + msg);
}

Status SetOutputK(Graph& g, const Node& n, size_t k, DType dt, Shape s) {
  if (k >= n.outputs.size() || n.outputs[k].empty()) return Status::Ok();
  for (int64_t d : s)
    if (d < 0) return IdxError(n, "inferred a negative dimension in " + ShapeToString(s));
  Tensor& t = g.tensors[n.outputs[k]];
  t.name = n.outputs[k];
  t.dtype = dt;
  t.shape = std::move(s);
  t.has_shape = true;
  return Status::Ok();
}

// A parameter input that must be known at conversion (empty when omitted).
StatusOr<std::vector<int64_t>> ConstParam(const Graph& g, const Node& n, size_t idx, const char* what) {
  if (idx >= n.inputs.size() || n.inputs[idx].empty()) return std::vector<int64_t>{};
  const Tensor* t = g.FindTensor(n.inputs[idx]);
  if (!t || !t->is_const)
  {
    return IdxError(n, NotConstantMessage(g, what, n.inputs[idx]));
  }
  if (AnyDependsOnValue(t->sym))
    return IdxError(n, std::string(what) + " input '" + n.inputs[idx] + "' is computed from a run-time input value, but " +
                           n.op_type + " needs it at conversion; bind the input at conversion (config.json "
                           "\"input_values\")");
  return t->AsInts();
}

StatusOr<int64_t> Axis(const Node& n, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return IdxError(n, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

Status NeedIntegerIndices(const Node& n, const Tensor& t) {
  if (IsFloatLike(t.dtype) || t.dtype == DType::kBool || !IsDeviceDType(t.dtype))
    return IdxError(n, "indices '" + t.name + "' must be an integer tensor, got " + DTypeName(t.dtype));
  return Status::Ok();
}

StatusOr<int64_t> Reduction(const Node& n) {
  std::string r = n.GetString("reduction", "none");
  if (r == "none") return 0;
  if (r == "add") return 1;
  if (r == "mul") return 2;
  if (r == "max") return 3;
  if (r == "min") return 4;
  return IdxUnsupported(n, "reduction '" + r + "' is not supported (none, add, mul, max, min)");
}

Status InferMaxPoolIndices(Graph& g, Node& n) {
  // Shapes and pads as for MaxPool without Indices; Indices has Y's shape.
  Node plain = n;
  plain.outputs.resize(1);
  OAAXVK_RETURN_IF_ERROR(InferNodeShapes(g, plain));
  n.attrs = plain.attrs;
  const Tensor* y = g.FindTensor(n.outputs[0]);
  if (!y || !y->has_shape) return IdxError(n, "output Y has no shape");
  int64_t so = n.GetInt("storage_order", 0);
  if (so != 0 && so != 1) return IdxError(n, "storage_order must be 0 or 1");
  return SetOutputK(g, n, 1, DType::kInt64, y->shape);
}

}  // namespace

StatusOr<std::vector<Dim>> PadAmounts(const Graph& g, const Node& n, int64_t rank) {
  std::vector<Dim> pads;
  std::vector<int64_t> axes;
  if (g.opset < 11) {
    pads = ToDims(n.GetInts("pads", {}));
  } else {
    const Tensor* t = n.inputs.size() > 1 && !n.inputs[1].empty() ? g.FindTensor(n.inputs[1]) : nullptr;
    if (t != nullptr && t->is_const && AnySymbolic(t->sym)) {
      // Read at run time (feature value_symbols), or computed from symbolic
      // dimensions (a window padding of a dynamic-shape conversion).
      pads = t->AsDims();
    } else {
      OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> p, ConstParam(g, n, 1, "pads"));
      pads = ToDims(p);
    }
    const Tensor* at = n.inputs.size() > 3 && !n.inputs[3].empty() ? g.FindTensor(n.inputs[3]) : nullptr;
    if (at != nullptr && at->is_const && AnyDependsOnValue(at->sym)) {
      // Axes read at run time (feature value_symbols): each dimension's
      // amount is the sum of the pads whose axis names it (at most one, a
      // guard requires distinct axes in range).
      const std::vector<Dim> ax = at->AsDims();
      if (pads.size() != 2 * ax.size())
        return IdxError(n, "pads has " + std::to_string(pads.size()) + " entries, expected " +
                               std::to_string(2 * ax.size()));
      const std::string who = "Pad '" + n.name + "'";
      SymContext* c = SymContext::Current();
      std::vector<Dim> both(static_cast<size_t>(2 * rank), Dim(0));
      for (size_t i = 0; i < ax.size(); ++i) {
        const Dim norm = ax[i] + Lt(ax[i], Dim(0)) * Dim(rank);
        for (int64_t d = 0; d < rank; ++d) {
          const Dim hit = Eq(norm, Dim(d));
          both[d] = both[d] + hit * pads[i];
          both[d + rank] = both[d + rank] + hit * pads[i + ax.size()];
        }
      }
      if (c != nullptr) OAAXVK_RETURN_IF_ERROR(AxesByValue(ax, rank, who).status());
      return both;
    }
    OAAXVK_ASSIGN_OR_RETURN(axes, ConstParam(g, n, 3, "axes"));
  }
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  if (pads.size() != 2 * axes.size())
    return IdxError(n, "pads has " + std::to_string(pads.size()) + " entries, expected " +
                           std::to_string(2 * axes.size()));
  std::vector<Dim> both(static_cast<size_t>(2 * rank), Dim(0));
  const size_t na = axes.size();
  for (size_t i = 0; i < na; ++i) {
    OAAXVK_ASSIGN_OR_RETURN(int64_t a, Axis(n, axes[i], rank));
    both[a] = pads[i];
    both[a + rank] = pads[i + na];
  }
  return both;
}

const std::set<std::string>& IndexDeviceOps() {
  static const std::set<std::string> k = {"GatherElements", "GatherND", "ScatterElements", "Scatter",
                                          "ScatterND", "CumSum", "TopK", "Pad", "Compress", "NonZero",
                                          "TrainingDropout", "NonMaxSuppression", "Unique", "RandomUniformLike",
                                          "RandomNormalLike"};
  return k;
}

Status InferIndexNodeShapes(Graph& g, Node& n, bool* handled) {
  *handled = false;
  const std::string& op = n.op_type;
  bool maxpool_indices = op == "MaxPool" && n.outputs.size() > 1 && !n.outputs[1].empty();
  if (!IndexDeviceOps().count(op) && !maxpool_indices) return Status::Ok();
  *handled = true;
  std::vector<const Tensor*> in;
  for (const std::string& name : n.inputs) {
    const Tensor* t = name.empty() ? nullptr : g.FindTensor(name);
    if (!name.empty() && (!t || !t->has_shape)) return IdxError(n, "input '" + name + "' has no static shape");
    in.push_back(t);
  }
  auto need = [&](size_t k) -> Status {
    if (in.size() <= k || !in[k]) return IdxError(n, "missing input " + std::to_string(k));
    return Status::Ok();
  };
  OAAXVK_RETURN_IF_ERROR(need(0));
  if (maxpool_indices) return InferMaxPoolIndices(g, n);
  const Shape& x = in[0]->shape;
  const DType dt = in[0]->dtype;
  const int64_t rank = static_cast<int64_t>(x.size());

  if (op == "GatherElements" || op == "ScatterElements" || op == "Scatter") {
    OAAXVK_RETURN_IF_ERROR(need(1));
    const Shape& is = in[1]->shape;
    OAAXVK_RETURN_IF_ERROR(NeedIntegerIndices(n, *in[1]));
    if (rank < 1) return IdxError(n, "data must have rank >= 1");
    if (static_cast<int64_t>(is.size()) != rank)
      return IdxError(n, "indices " + ShapeToString(is) + " and data " + ShapeToString(x) + " have different ranks");
    OAAXVK_ASSIGN_OR_RETURN(int64_t axis, Axis(n, n.GetInt("axis", 0), rank));
    for (int64_t i = 0; i < rank; ++i)
      if (i != axis && is[i] > x[i])
        return IdxError(n, "indices " + ShapeToString(is) + " exceed data " + ShapeToString(x) + " on dimension " +
                               std::to_string(i));
    n.SetInt("_axis", axis);
    if (op == "GatherElements") return SetOutputK(g, n, 0, dt, is);
    OAAXVK_RETURN_IF_ERROR(need(2));
    if (in[2]->shape != is)
      return IdxError(n, "updates " + ShapeToString(in[2]->shape) + " and indices " + ShapeToString(is) +
                             " have different shapes");
    OAAXVK_ASSIGN_OR_RETURN(int64_t red, Reduction(n));
    n.SetInt("_reduction", red);
    return SetOutputK(g, n, 0, dt, x);
  }
  if (op == "GatherND" || op == "ScatterND") {
    OAAXVK_RETURN_IF_ERROR(need(1));
    const Shape& is = in[1]->shape;
    OAAXVK_RETURN_IF_ERROR(NeedIntegerIndices(n, *in[1]));
    int64_t b = op == "GatherND" ? n.GetInt("batch_dims", 0) : 0;
    int64_t q = static_cast<int64_t>(is.size());
    if (rank < 1 || q < 1) return IdxError(n, "data and indices must have rank >= 1");
    if (b < 0 || b >= std::min(rank, q)) return IdxError(n, "batch_dims " + std::to_string(b) + " is out of range");
    int64_t K = is.back();
    if (K < 1 || K > rank - b)
      return IdxError(n, "the last indices dimension (" + std::to_string(K) + ") must be in [1, " +
                             std::to_string(rank - b) + "]");
    for (int64_t i = 0; i < b; ++i)
      if (is[i] != x[i]) return IdxError(n, "batch dimensions of data " + ShapeToString(x) + " and indices " +
                                                ShapeToString(is) + " differ");
    Shape rows(is.begin(), is.end() - 1), tail(x.begin() + b + K, x.end());
    if (op == "GatherND") {
      Shape s = rows;
      s.insert(s.end(), tail.begin(), tail.end());
      return SetOutputK(g, n, 0, dt, s);
    }
    OAAXVK_RETURN_IF_ERROR(need(2));
    Shape us = rows;
    us.insert(us.end(), tail.begin(), tail.end());
    if (in[2]->shape != us)
      return IdxError(n, "updates have shape " + ShapeToString(in[2]->shape) + ", expected " + ShapeToString(us));
    OAAXVK_ASSIGN_OR_RETURN(int64_t red, Reduction(n));
    n.SetInt("_reduction", red);
    return SetOutputK(g, n, 0, dt, x);
  }
  if (op == "CumSum") {
    if (const Tensor* at = n.inputs.size() > 1 ? g.FindTensor(n.inputs[1]) : nullptr;
        at != nullptr && at->is_const && AnyDependsOnValue(at->sym)) {
      // The axis is read at run time (feature value_symbols): the output
      // shape is the input's whatever the axis; the lowering derives the rest.
      if (at->sym.size() != 1) return IdxError(n, "axis must hold exactly one value");
      if (rank < 1) return IdxError(n, "input must have rank >= 1");
      n.SetInt("_axis_by_value", 1);
      return SetOutputK(g, n, 0, dt, x);
    }
    OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> ax, ConstParam(g, n, 1, "axis"));
    if (ax.size() != 1) return IdxError(n, "axis must hold exactly one value");
    if (rank < 1) return IdxError(n, "input must have rank >= 1");
    OAAXVK_ASSIGN_OR_RETURN(int64_t axis, Axis(n, ax[0], rank));
    n.SetInt("_axis", axis);
    return SetOutputK(g, n, 0, dt, x);
  }
  if (op == "TopK") {
    if (const Tensor* kt = g.opset >= 10 && n.inputs.size() > 1 ? g.FindTensor(n.inputs[1]) : nullptr;
        kt != nullptr && kt->is_const && (AnyDependsOnValue(kt->sym) || AnyReadsDecidedSymbol(kt->sym))) {
      // K is read at run time (feature value_symbols): the outputs' axis
      // extent is K; a guard keeps it within the input's extent.
      if (kt->sym.size() != 1) return IdxError(n, "K must hold exactly one value");
      if (rank < 1) return IdxError(n, "input must have rank >= 1");
      OAAXVK_ASSIGN_OR_RETURN(int64_t axis, Axis(n, n.GetInt("axis", -1), rank));
      const Dim k = kt->AsDims()[0];
      SymContext* c = SymContext::Current();
      OAAXVK_RETURN_IF_ERROR(c->AddGuard((Dim(1) - Lt(x[axis], k)).Node(c),
                                         "TopK '" + n.name + "': K exceeds the extent of axis " + std::to_string(axis) +
                                             " of the input " + ShapeToString(x)));
      // K built from an extent read back (Min(extent, C)) is 0 for an
      // empty input, and at the start of every frame (ir/extent.h).
      if (!ReadsDecidedSymbol(k))
        OAAXVK_RETURN_IF_ERROR(c->AddGuard((Dim(1) - Lt(k, Dim(1))).Node(c), "TopK '" + n.name + "': K must be at least 1"));
      n.SetInt("_axis", axis);
      n.SetInt("_k_by_value", 1);
      Shape s = x;
      s[axis] = k;
      OAAXVK_RETURN_IF_ERROR(SetOutputK(g, n, 0, dt, s));
      return SetOutputK(g, n, 1, DType::kInt64, s);
    }
    std::vector<int64_t> kv;
    if (g.opset < 10) {
      kv = {n.GetInt("k", -1)};
    } else {
      OAAXVK_ASSIGN_OR_RETURN(kv, ConstParam(g, n, 1, "K"));
    }
    if (kv.size() != 1) return IdxError(n, "K must hold exactly one value");
    if (rank < 1) return IdxError(n, "input must have rank >= 1");
    OAAXVK_ASSIGN_OR_RETURN(int64_t axis, Axis(n, n.GetInt("axis", -1), rank));
    if (kv[0] < 1 || kv[0] > x[axis])
      return IdxUnsupported(n, "K = " + std::to_string(kv[0]) + " must be in [1, " + std::to_string(x[axis]) +
                                   "] (the axis extent; K = 0 gives empty outputs, which the device cannot hold)");
    n.SetInt("_axis", axis);
    n.SetInt("_k", kv[0]);
    Shape s = x;
    s[axis] = kv[0];
    OAAXVK_RETURN_IF_ERROR(SetOutputK(g, n, 0, dt, s));
    return SetOutputK(g, n, 1, DType::kInt64, s);
  }
  if (op == "RandomUniformLike" || op == "RandomNormalLike") {
    // The input gives the shape and, without `dtype`, the element type.
    const DType out = n.HasAttr("dtype") ? static_cast<DType>(n.GetInt("dtype", 1)) : dt;
    if (out != DType::kFloat && out != DType::kDouble)
      return IdxError(n, std::string("draws float32 or float64 values, not ") + DTypeName(out) +
                             " (set dtype to FLOAT or DOUBLE, or Cast the draw)");
    return SetOutputK(g, n, 0, out, x);
  }
  if (op == "TrainingDropout") {  // internal (decompose_math.cpp Dropout): X, ratio, training_mode -> Y, mask
    if (n.outputs.size() < 2) return IdxError(n, "internal: the mask output is missing");
    OAAXVK_RETURN_IF_ERROR(need(2));
    if (in[1]->numel() != 1 || in[2]->numel() != 1) return IdxError(n, "ratio and training_mode must be scalars");
    OAAXVK_RETURN_IF_ERROR(SetOutputK(g, n, 0, dt, x));
    return SetOutputK(g, n, 1, DType::kBool, x);
  }
  if (op == "Unique") {
    // Device form (decompose_static.cpp): Y, indices, inverse_indices,
    // counts, extent, scratch. Y (the input's shape, or [numel] without an
    // axis), indices and counts ([L]) are planned at L unique slices with
    // the extent along the axis; inverse_indices [L]; scratch int32 [2L].
    if (n.outputs.size() < 6) return IdxError(n, "internal: the extent and scratch outputs are missing");
    Shape ys = {NumElements(x)};
    int64_t a = 0;
    if (n.HasAttr("axis")) {
      OAAXVK_ASSIGN_OR_RETURN(a, Axis(n, n.GetInt("axis", 0), rank));
      ys = x;
      n.SetInt("_axis", a);
    }
    const Dim l = ys[a];
    OAAXVK_RETURN_IF_ERROR(SetOutputK(g, n, 0, dt, ys));
    OAAXVK_RETURN_IF_ERROR(SetOutputK(g, n, 1, DType::kInt64, {l}));
    OAAXVK_RETURN_IF_ERROR(SetOutputK(g, n, 2, DType::kInt64, {l}));
    OAAXVK_RETURN_IF_ERROR(SetOutputK(g, n, 3, DType::kInt64, {l}));
    OAAXVK_RETURN_IF_ERROR(SetOutputK(g, n, 4, DType::kInt32, {Dim(1)}));
    OAAXVK_RETURN_IF_ERROR(SetOutputK(g, n, 5, DType::kInt32, {l * 2}));
    for (size_t k : {size_t{0}, size_t{1}, size_t{3}}) {
      g.tensors[n.outputs[k]].data_dependent_axis = k == 0 ? a : 0;
      g.tensors[n.outputs[k]].extent = n.outputs[4];
    }
    return Status::Ok();
  }
  if (op == "NonMaxSuppression") {
    // Device form (decompose_static.cpp): outputs selected_indices (int64
    // [PAIRS * SLOTS, 3], planned at the largest result, extent along axis
    // 0 known after the run), its extent (int32 [1]), and the scratch
    // outputs: selections per pair (int32 [PAIRS, SLOTS]), their counts
    // (int32 [PAIRS]) and order keys (int32 [PAIRS, N]); PAIRS = batches x
    // classes, SLOTS = min(N, a constant max_output_boxes_per_class), at
    // least 1.
    if (n.outputs.size() < 5) return IdxError(n, "internal: the extent and scratch outputs are missing");
    OAAXVK_RETURN_IF_ERROR(need(1));
    const Shape& s = in[1]->shape;
    if (rank != 3 || x[2].is_symbolic() || x[2].value() != 4)
      return IdxError(n, "boxes " + ShapeToString(x) + " must be [num_batches, spatial_dimension, 4]");
    if (s.size() != 3)
      return IdxError(n, "scores " + ShapeToString(s) + " must be [num_batches, num_classes, spatial_dimension] for boxes " +
                             ShapeToString(x));
    // Counts computed along different paths (a Reshape with -1 on one side)
    // are unified under a run-time guard when they cannot be proven equal.
    const std::string who = "node '" + n.name + "' (NonMaxSuppression)";
    OAAXVK_ASSIGN_OR_RETURN(const Dim batches, UnifyDims(s[0], x[0], who, "the batches of scores and boxes"));
    OAAXVK_ASSIGN_OR_RETURN(const Dim boxes, UnifyDims(s[2], x[1], who, "the box counts of scores (dimension 2) and boxes (dimension 1)"));
    if (!IsFloatLike(dt) || !IsFloatLike(in[1]->dtype)) return IdxError(n, "boxes and scores must be float");
    const char* names[] = {"max_output_boxes_per_class", "iou_threshold", "score_threshold"};
    for (size_t k = 2; k < 5; ++k) {
      if (k >= in.size() || !in[k]) continue;
      if (in[k]->numel().is_symbolic() || in[k]->numel().value() != 1) return IdxError(n, std::string(names[k - 2]) + " must hold one value");
      if ((k == 2) == IsFloatLike(in[k]->dtype))
        return IdxError(n, std::string(names[k - 2]) + " has data type " + DTypeName(in[k]->dtype) +
                               (k == 2 ? "; it must be an integer" : "; it must be float"));
    }
    const Dim pairs = batches * s[1];
    Dim slots = boxes;
    if (n.HasAttr("_slots")) slots = Min(slots, Dim(n.GetInt("_slots", 0)));
    slots = Max(slots, Dim(1));
    // An extent the driver turned into a decided symbol (extent.h
    // DecidedExtentDim) is the output's dimension; otherwise it is planned
    // at the largest result and carried along (data_dependent_axis).
    OAAXVK_RETURN_IF_ERROR(SetOutputK(g, n, 0, DType::kInt64, {DecidedExtentDim(n, pairs * slots), Dim(3)}));
    if (!n.HasAttr("_decided_extent")) {
      g.tensors[n.outputs[0]].data_dependent_axis = 0;
      g.tensors[n.outputs[0]].extent = n.outputs[1];
    }
    OAAXVK_RETURN_IF_ERROR(SetOutputK(g, n, 1, DType::kInt32, {Dim(1)}));
    OAAXVK_RETURN_IF_ERROR(SetOutputK(g, n, 2, DType::kInt32, {pairs, slots}));
    OAAXVK_RETURN_IF_ERROR(SetOutputK(g, n, 3, DType::kInt32, {pairs}));
    return SetOutputK(g, n, 4, DType::kInt32, {pairs, boxes});
  }
  if (op == "Compress" || op == "NonZero") {
    // Data-dependent extent (feature data_dependent_outputs): output 0 is
    // planned at its largest; output 1, the hidden count the decomposition
    // added (decompose_static.cpp), is an int32 [1].
    if (n.outputs.size() < 2 || n.outputs[1].empty())
      return IdxError(n, "internal: the extent output is missing");
    Shape s;
    int64_t a = 0;
    DType odt = dt;
    if (op == "NonZero") {
      if (rank < 1) return IdxUnsupported(n, "a scalar input is not supported");
      s = {Dim(rank), NumElements(x)};
      a = 1;
      odt = DType::kInt64;
    } else {
      OAAXVK_RETURN_IF_ERROR(need(1));
      if (in[1]->shape.size() != 1) return IdxError(n, "condition must be 1-D");
      if (n.HasAttr("axis")) {
        OAAXVK_ASSIGN_OR_RETURN(a, Axis(n, n.GetInt("axis", 0), rank));
        s = x;
      } else {
        s = {NumElements(x)};
      }
    }
    n.SetInt("_extent_axis", a);
    if (n.HasAttr("_decided_extent")) {  // a decided symbol (extent.h DecidedExtentDim)
      s[static_cast<size_t>(a)] = DecidedExtentDim(n, s[static_cast<size_t>(a)]);
      OAAXVK_RETURN_IF_ERROR(SetOutputK(g, n, 0, odt, s));
    } else {
      OAAXVK_RETURN_IF_ERROR(SetOutputK(g, n, 0, odt, s));
      g.tensors[n.outputs[0]].data_dependent_axis = a;
      g.tensors[n.outputs[0]].extent = n.outputs[1];
    }
    return SetOutputK(g, n, 1, DType::kInt32, {1});
  }
  if (op == "Pad") {
    std::string mode = n.GetString("mode", "constant");
    int64_t m = mode == "constant" ? 0 : mode == "reflect" ? 1 : mode == "edge" ? 2 : -1;
    if (m < 0) return IdxUnsupported(n, "mode '" + mode + "' is not supported (constant, reflect, edge)");
    if (g.opset >= 11 && n.inputs.size() > 2 && !n.inputs[2].empty()) {
      const Tensor* v = in[2];
      if (v->numel() != 1) return IdxError(n, "constant_value must hold one value");
      if (IsFloatLike(v->dtype) != IsFloatLike(dt))
        return IdxError(n, "constant_value has data type " + std::string(DTypeName(v->dtype)) +
                               ", the data " + DTypeName(dt));
    }
    OAAXVK_ASSIGN_OR_RETURN(std::vector<Dim> both, PadAmounts(g, n, rank));
    SymContext* c = SymContext::Current();
    const std::string who = "Pad '" + n.name + "'";
    Shape s = x;
    for (int64_t i = 0; i < rank; ++i) {
      const Dim& pb = both[i];
      const Dim& pe = both[i + rank];
      s[i] = x[i] + pb + pe;
      const std::string dim = " of dimension " + std::to_string(i);
      if (DependsOnValue(pb) || DependsOnValue(pe)) {  // pads read at run time: guards
        OAAXVK_RETURN_IF_ERROR(c->AddGuard((Dim(1) - Lt(s[i], Dim(0))).Node(c), who + ": the pads crop dimension " +
                                                                                   std::to_string(i) + " below zero"));
        if (m == 1)
          OAAXVK_RETURN_IF_ERROR(c->AddGuard((Lt(pb, x[i]) * Lt(pe, x[i])).Node(c),
                                             who + ": reflect pads" + dim + " must be below its extent"));
        if (m != 0)
          OAAXVK_RETURN_IF_ERROR(c->AddGuard(
              Eq(Lt(pb, Dim(0)) * Lt(Dim(0), pe) + Lt(pe, Dim(0)) * Lt(Dim(0), pb), Dim(0)).Node(c),
              who + ": mode '" + mode + "' with both cropping and padding" + dim + " is not supported"));
        continue;
      }
      if (s[i] < 0) return IdxError(n, "pads crop dimension " + std::to_string(i) + " below zero");
      if (m == 1 && (pb > x[i] - 1 || pe > x[i] - 1))
        return IdxUnsupported(n, "reflect pads" + dim + " must be below its extent " + std::to_string(x[i]));
      if (m != 0 && std::min<int64_t>(pb, pe) < 0 && std::max<int64_t>(pb, pe) > 0)
        return IdxUnsupported(n, "mode '" + mode + "' with both cropping and padding on dimension " +
                                     std::to_string(i) + " is not supported");
    }
    n.SetInt("_mode", m);
    return SetOutputK(g, n, 0, dt, s);
  }
  return IdxError(n, "internal: no shape inference");
}

}  // namespace oaaxvk::toolchain
