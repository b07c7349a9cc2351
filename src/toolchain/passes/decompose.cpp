#include "toolchain/passes/decompose.h"
#include "toolchain/ir/not_constant.h"

#include <map>
#include <set>
#include <utility>

#include "toolchain/ir/eval.h"
#include "toolchain/ir/fold_limit.h"
#include "toolchain/ir/shape_infer.h"
#include "toolchain/passes/decompose_builder.h"

namespace oaaxvk::toolchain {

namespace {

Status LayerNorm(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  const Tensor* scale = InputWithShape(g, n, 1);
  if (!x || !scale) return NodeInvalid(n, "input X and Scale need static shapes");
  if (x->dtype != DType::kFloat)
    return NodeUnimplemented(n, std::string("input '") + n.inputs[0] + "' has data type " + DTypeName(x->dtype) +
                                    "; LayerNormalization is supported on float32 only");
  if (n.GetInt("stash_type", 1) != 1)
    return NodeUnimplemented(n, "stash_type " + std::to_string(n.GetInt("stash_type", 1)) +
                                    " is not supported (only 1 = float)");
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  int64_t axis = n.GetInt("axis", -1);
  if (axis < -rank || axis >= rank)
    return NodeInvalid(n, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  std::vector<int64_t> axes;
  for (int64_t a = axis; a < rank; ++a) axes.push_back(a);
  const float eps = n.GetFloat("epsilon", 1e-5f);

  Node& mean = b.Add("ReduceMean", {n.inputs[0]}, "mean", OutputOrEmpty(n, 1));
  mean.SetInts("axes", axes);
  mean.SetInt("keepdims", 1);
  std::string mean_out = b.Out(mean);
  std::string d = b.Out(b.Add("Sub", {n.inputs[0], mean_out}, "centered"));
  std::string dd = b.Out(b.Add("Mul", {d, d}, "squared"));
  Node& var = b.Add("ReduceMean", {dd}, "variance");
  var.SetInts("axes", axes);
  var.SetInt("keepdims", 1);
  std::string var_out = b.Out(var);
  std::string eps_t = b.AddConst(MakeConstF32("", {}, {eps}), "epsilon");
  std::string ve = b.Out(b.Add("Add", {var_out, eps_t}, "variance_eps"));
  std::string sd = b.Out(b.Add("Sqrt", {ve}, "stddev"));
  std::string inv = b.Out(b.Add("Reciprocal", {sd}, "inv_stddev", OutputOrEmpty(n, 2)));
  std::string normalized = b.Out(b.Add("Mul", {d, inv}, "normalized"));
  const bool has_bias = n.inputs.size() > 2 && !n.inputs[2].empty();
  if (!has_bias) {
    b.Add("Mul", {normalized, n.inputs[1]}, "scaled", n.outputs[0]);
  } else {
    std::string scaled = b.Out(b.Add("Mul", {normalized, n.inputs[1]}, "scaled"));
    b.Add("Add", {scaled, n.inputs[2]}, "biased", n.outputs[0]);
  }
  return Status::Ok();
}

Status Trilu(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x) return NodeInvalid(n, "input '" + n.inputs[0] + "' has no static shape");
  if (x->shape.size() < 2)
    return NodeInvalid(n, "input '" + n.inputs[0] + "' must have rank >= 2, got " + ShapeToString(x->shape));
  const int64_t rows = x->shape[x->shape.size() - 2], cols = x->shape[x->shape.size() - 1];
  const bool upper = n.GetInt("upper", 1) != 0;
  std::string zero = b.AddConst(MakeConstFromDoubles("", x->dtype, {}, {0.0}), "zero");
  const bool has_k = n.inputs.size() > 1 && !n.inputs[1].empty();
  const Tensor* k = has_k ? g.FindTensor(n.inputs[1]) : nullptr;
  if (has_k && (!k || !k->has_shape || k->numel() != 1 || k->dtype != DType::kInt64))
    return NodeInvalid(n, "k input '" + n.inputs[1] + "' must be an int64 scalar");
  std::string cond;
  if (!has_k || k->is_const) {
    const int64_t kv = has_k ? k->AsInts()[0] : 0;
    std::vector<double> mask(static_cast<size_t>(rows * cols));
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) mask[i * cols + j] = (upper ? j - i >= kv : j - i <= kv) ? 1.0 : 0.0;
    cond = b.AddConst(MakeConstFromDoubles("", DType::kBool, {rows, cols}, mask), "mask");
  } else {
    // Runtime k: compare a constant (col - row) table with k on the device.
    std::vector<int64_t> diag(static_cast<size_t>(rows * cols));
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) diag[i * cols + j] = j - i;
    std::string table = b.AddConst(MakeConstI64("", {rows, cols}, diag), "col_minus_row");
    cond = b.Out(b.Add(upper ? "GreaterOrEqual" : "LessOrEqual", {table, n.inputs[1]}, "mask"));
  }
  b.Add("Where", {cond, n.inputs[0], zero}, "select", n.outputs[0]);
  return Status::Ok();
}

Status DepthSpace(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x) return NodeInvalid(n, "input '" + n.inputs[0] + "' has no static shape");
  if (x->shape.size() != 4) return NodeInvalid(n, "input must be 4-D, got " + ShapeToString(x->shape));
  const int64_t bs = n.GetInt("blocksize", 0);
  if (bs <= 0) return NodeInvalid(n, "blocksize must be positive, got " + std::to_string(bs));
  const int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
  std::vector<int64_t> s6, perm, s4;
  if (n.op_type == "DepthToSpace") {
    if (C % (bs * bs) != 0)
      return NodeInvalid(n, "channels " + std::to_string(C) + " not divisible by blocksize^2 = " +
                                std::to_string(bs * bs));
    const int64_t c = C / (bs * bs);
    const std::string mode = n.GetString("mode", "DCR");
    if (mode == "DCR") {
      s6 = {N, bs, bs, c, H, W};
      perm = {0, 3, 4, 1, 5, 2};
    } else if (mode == "CRD") {
      s6 = {N, c, bs, bs, H, W};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      return NodeInvalid(n, "mode '" + mode + "' is not DCR or CRD");
    }
    s4 = {N, c, H * bs, W * bs};
  } else {
    if (H % bs != 0 || W % bs != 0)
      return NodeInvalid(n, "spatial size " + ShapeToString(x->shape) + " not divisible by blocksize " +
                                std::to_string(bs));
    s6 = {N, C, H / bs, bs, W / bs, bs};
    perm = {0, 3, 5, 1, 2, 4};
    s4 = {N, C * bs * bs, H / bs, W / bs};
  }
  std::string r6 = b.Out(b.Add("Reshape", {n.inputs[0], b.ConstI64("shape6", ToDims(s6))}, "reshape6"));
  Node& t = b.Add("Transpose", {r6}, "transpose");
  t.SetInts("perm", perm);
  std::string tr = b.Out(t);
  b.Add("Reshape", {tr, b.ConstI64("shape4", ToDims(s4))}, "reshape4", n.outputs[0]);
  return Status::Ok();
}

Status Split(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x) return NodeInvalid(n, "input '" + n.inputs[0] + "' has no static shape");
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  int64_t axis = n.GetInt("axis", 0);
  if (axis < -rank || axis >= rank)
    return NodeInvalid(n, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  const int64_t dim = x->shape[axis];
  const int64_t outs = static_cast<int64_t>(n.outputs.size());
  std::vector<int64_t> split;
  if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
    const Tensor* s = g.FindTensor(n.inputs[1]);
    if (!s || !s->is_const)
      return NodeInvalid(n, NotConstantMessage(g, "split", n.inputs[1]));
    if (AnyDependsOnValue(s->sym)) {
      // Sizes read at run time (feature value_symbols): Slices whose bounds
      // are the running sums (guarded to cover the axis exactly).
      const std::vector<Dim> sizes = s->AsDims();
      if (static_cast<int64_t>(sizes.size()) != outs)
        return NodeInvalid(n, "split has " + std::to_string(sizes.size()) + " entries for " + std::to_string(outs) +
                                  " outputs");
      SymContext* c = SymContext::Current();
      Dim sum = 0;
      for (const Dim& v : sizes) sum = sum + v;
      OAAXVK_RETURN_IF_ERROR(c->AddGuard(Eq(sum, x->shape[axis]).Node(c),
          "Split '" + n.name + "': the split sizes must add up to the axis extent " +
              std::to_string(x->shape[axis].value()) + " of the input " + ShapeToString(x->shape)));
      std::string axes = b.ConstI64("axes", {axis});
      Dim off = 0;
      for (int64_t i = 0; i < outs; ++i) {
        std::string starts = b.ConstI64("starts" + std::to_string(i), {off});
        std::string ends = b.ConstI64("ends" + std::to_string(i), {off + sizes[i]});
        off = off + sizes[i];
        if (n.outputs[i].empty()) continue;
        b.Add("Slice", {n.inputs[0], starts, ends, axes}, "slice" + std::to_string(i), n.outputs[i]);
      }
      return Status::Ok();
    }
    split = s->AsInts();
  } else if (n.HasAttr("split")) {
    split = n.GetInts("split", {});
  } else if (n.HasAttr("num_outputs")) {
    // Split-18: chunks of ceil(dim / num_outputs), the last one smaller when
    // the axis does not divide evenly.
    const int64_t k = n.GetInt("num_outputs", 0);
    if (k != outs)
      return NodeInvalid(n, "num_outputs is " + std::to_string(k) + " but the node has " + std::to_string(outs) +
                                " outputs");
    if (k < 1) return NodeInvalid(n, "num_outputs is " + std::to_string(k) + "; it must be at least 1");
    const int64_t chunk = (dim + k - 1) / k;
    if (dim - chunk * (k - 1) < 1)
      return NodeInvalid(n, "dimension " + std::to_string(dim) + " cannot be split into " + std::to_string(k) +
                                " chunks of " + std::to_string(chunk) + " with a non-empty last chunk");
    split.assign(static_cast<size_t>(k), chunk);
    split.back() = dim - chunk * (k - 1);
  } else {
    if (outs == 0 || dim % outs != 0)
      return NodeInvalid(n, "dimension " + std::to_string(dim) + " cannot be split equally into " +
                                std::to_string(outs) + " outputs");
    split.assign(static_cast<size_t>(outs), dim / outs);
  }
  if (static_cast<int64_t>(split.size()) != outs)
    return NodeInvalid(n, "split has " + std::to_string(split.size()) + " entries for " + std::to_string(outs) +
                              " outputs");
  int64_t total = 0;
  for (int64_t v : split) {
    // A size of 0 gives an empty piece: its Slice has no elements and
    // constant folding makes it an empty constant.
    if (v < 0) return NodeInvalid(n, "split size " + std::to_string(v) + " is negative; sizes must be >= 0");
    total += v;
  }
  if (total != dim)
    return NodeInvalid(n, "split sizes sum to " + std::to_string(total) + ", axis dimension is " +
                              std::to_string(dim));
  std::string axes = b.ConstI64("axes", {axis});
  int64_t off = 0;
  for (int64_t i = 0; i < outs; ++i) {
    std::string starts = b.ConstI64("starts" + std::to_string(i), {off});
    std::string ends = b.ConstI64("ends" + std::to_string(i), {off + split[i]});
    off += split[i];
    if (n.outputs[i].empty()) continue;
    b.Add("Slice", {n.inputs[0], starts, ends, axes}, "slice" + std::to_string(i), n.outputs[i]);
  }
  return Status::Ok();
}

// The table key of an operator: its name in the default domain,
// "<domain>::<name>" in ai.onnx.preview.training, "" (no entry) elsewhere.
std::string DecompositionKey(const std::string& domain, const std::string& op_type) {
  if (domain.empty() || domain == "ai.onnx") return op_type;
  if (domain == "ai.onnx.preview.training") return domain + "::" + op_type;
  return "";
}

const std::map<std::string, DecomposeFn>& Decompositions() {
  static const std::map<std::string, DecomposeFn> k = [] {
    std::map<std::string, DecomposeFn> m = {
        {"LayerNormalization", LayerNorm}, {"Trilu", Trilu}, {"DepthToSpace", DepthSpace},
        {"SpaceToDepth", DepthSpace},      {"Split", Split},
    };
    // Further families, each in its own file (decompose_builder.h).
    for (const auto* extra : {&LossDecompositions(), &MathDecompositions(), &NnDecompositions(), &RnnDecompositions(), &SignalDecompositions(),
                              &StaticDecompositions(), &NormDecompositions(), &SpatialDecompositions(),
                              &AttentionDecompositions()}) m.insert(extra->begin(), extra->end());
    return m;
  }();
  return k;
}

// Infers `n`'s outputs and folds it when its inputs are constants; returns
// true when the node was folded away.
StatusOr<bool> InferAndFold(Graph& g, Node& n) {
  OAAXVK_RETURN_IF_ERROR(InferNodeShapes(g, n));
  if (!CanEvaluate(g, n)) return false;
  OAAXVK_ASSIGN_OR_RETURN(bool small, FitsFoldingLimit(g, n));
  if (!small) return false;  // over max_folded_bytes: the device computes it
  OAAXVK_ASSIGN_OR_RETURN(std::vector<Tensor> outs, EvaluateNode(g, n));
  for (Tensor& t : outs) {
    std::string name = t.name;
    g.tensors[name] = std::move(t);
  }
  return true;
}

}  // namespace

bool IsDecomposedOp(const std::string& domain, const std::string& op_type) {
  return Decompositions().count(DecompositionKey(domain, op_type)) != 0;
}

Status DecomposeOps(Graph& g, PassResult* r) {
  r->name = "operator decomposition";
  r->nodes_before = g.nodes.size();
  r->details.clear();
  std::vector<Node> old = std::move(g.nodes);
  g.nodes.clear();
  std::map<std::string, size_t> by_op;
  for (Node& n : old) {
    auto it = Decompositions().find(DecompositionKey(n.domain, n.op_type));
    if (it == Decompositions().end()) {
      OAAXVK_ASSIGN_OR_RETURN(bool folded, InferAndFold(g, n));
      if (!folded) g.nodes.push_back(std::move(n));
      continue;
    }
    Builder b(g, n);
    OAAXVK_RETURN_IF_ERROR(it->second(g, n, b));
    for (Node& m : b.nodes()) {
      OAAXVK_ASSIGN_OR_RETURN(bool folded, InferAndFold(g, m));
      if (!folded) g.nodes.push_back(std::move(m));
    }
    ++by_op[n.op_type];
  }
  for (const auto& [op, c] : by_op) r->details.push_back("decomposed " + std::to_string(c) + " " + op);
  r->nodes_after = g.nodes.size();
  return Status::Ok();
}

}  // namespace oaaxvk::toolchain
