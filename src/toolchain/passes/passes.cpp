#include "toolchain/passes/passes.h"
#include "toolchain/passes/activations_float.h"
#include "toolchain/passes/decompose.h"
#include "toolchain/passes/split_large.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "toolchain/ir/eval.h"
#include "toolchain/ir/fold_limit.h"
#include "toolchain/ir/shape_infer.h"
#include "toolchain/ir/shape_infer_int.h"

namespace oaaxvk::toolchain {

namespace {

struct Scope {
  Scope(Graph& g, PassResult* r, const char* name) : g_(g), r_(r) {
    r_->name = name;
    r_->nodes_before = g.nodes.size();
    r_->details.clear();
  }
  ~Scope() { r_->nodes_after = g_.nodes.size(); }
  Graph& g_;
  PassResult* r_;
};

void EraseNodes(Graph& g, const std::vector<bool>& dead) {
  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!dead[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

// Producer lookup in a Graph::Producers() map (-1 when none).
int ProducerIn(const std::map<std::string, size_t>& producers, const std::string& t) {
  auto it = producers.find(t);
  return it == producers.end() ? -1 : static_cast<int>(it->second);
}

std::vector<float> AsFloats(const Tensor& t) {
  std::vector<double> d = t.AsDoubles();
  return std::vector<float>(d.begin(), d.end());
}

}  // namespace

namespace {

// Whether tensor `name` has a static shape with no elements.
bool IsStaticEmpty(const Graph& g, const std::string& name) {
  const Tensor* t = g.FindTensor(name);
  if (!t || !t->has_shape) return false;
  for (const Dim& d : t->shape)
    if (!d.is_symbolic() && d.value() == 0) return true;
  return false;
}

// A tensor with no elements has one possible value: a node whose outputs all
// have static zero-element shapes folds to empty constants, whatever its
// inputs (a Trilu of a [3, 0, 5] input, a Split into [0] pieces, a
// ConstantOfShape of [0]); nothing runs for it on the device.
bool FoldsToEmpty(const Graph& g, const Node& n) {
  bool any = false;
  for (const std::string& o : n.outputs) {
    if (o.empty()) continue;
    const Tensor* t = g.FindTensor(o);
    if (!t || t->dtype == DType::kUndefined || !IsStaticEmpty(g, o)) return false;
    any = true;
  }
  return any;
}

}  // namespace

Status FoldConstants(Graph& g, PassResult* r) {
  Scope s(g, r, "constant folding");
  std::vector<bool> dead(g.nodes.size(), false);
  std::map<std::string, size_t> folded_by_op;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    OAAXVK_RETURN_IF_ERROR(InferNodeShapes(g, n));
    if (FoldsToEmpty(g, n)) {
      for (const std::string& o : n.outputs) {
        if (o.empty()) continue;
        Tensor& t = g.tensors[o];
        t.is_const = true;
        t.data.clear();
      }
      dead[i] = true;
      ++folded_by_op[n.op_type + " (empty result)"];
      continue;
    }
    // A MatMul over a static empty K (both inputs empty constants) sums no
    // products: its result is zeros, whatever the batch and M / N extents.
    if (n.op_type == "MatMul" && n.inputs.size() == 2 && n.outputs.size() == 1 && IsStaticEmpty(g, n.inputs[0]) &&
        IsStaticEmpty(g, n.inputs[1])) {
      const Tensor* a = g.FindTensor(n.inputs[0]);
      const Tensor* y = g.FindTensor(n.outputs[0]);
      OAAXVK_ASSIGN_OR_RETURN(bool small, FitsFoldingLimit(g, n));
      if (a->shape.size() >= 2 && a->shape.back() == 0 && y != nullptr && y->has_shape && !AnySymbolic(y->shape) &&
          small) {
        g.tensors[n.outputs[0]] = MakeConstFromDoubles(
            n.outputs[0], y->dtype, y->shape, std::vector<double>(static_cast<size_t>(y->numel().value()), 0.0));
        dead[i] = true;
        ++folded_by_op["MatMul (empty K: zeros)"];
        continue;
      }
    }
    // Concat ignores inputs with no elements (they are empty constants).
    if (n.op_type == "Concat" && n.inputs.size() > 1) {
      std::vector<std::string> kept;
      for (const std::string& in : n.inputs)
        if (!IsStaticEmpty(g, in)) kept.push_back(in);
      if (!kept.empty() && kept.size() < n.inputs.size()) {
        r->details.push_back("Concat '" + n.name + "': " + std::to_string(n.inputs.size() - kept.size()) +
                             " input(s) with no elements dropped");
        n.inputs = kept;
      }
    }
    if (!CanEvaluate(g, n)) continue;
    OAAXVK_ASSIGN_OR_RETURN(bool small, FitsFoldingLimit(g, n));
    if (!small) {
      r->details.push_back("not folded: " + n.op_type + " '" + n.name + "' (over max_folded_bytes; runs on the device)");
      continue;
    }
    if (FoldWouldGrowBundle(g, n)) {
      r->details.push_back("not folded: " + n.op_type + " '" + n.name +
                           "' (its result is far larger than its inputs; runs on the device)");
      continue;
    }
    OAAXVK_ASSIGN_OR_RETURN(std::vector<Tensor> outs, EvaluateNode(g, n));
    for (Tensor& t : outs) {
      std::string name = t.name;
      g.tensors[name] = std::move(t);
    }
    dead[i] = true;
    ++folded_by_op[n.op_type];
  }
  EraseNodes(g, dead);
  for (const auto& [op, c] : folded_by_op) r->details.push_back("folded " + std::to_string(c) + " " + op);
  return Status::Ok();
}

// A Slice (opset >= 10) whose static output shape equals its input's, with
// constant positive steps (or none), takes every element in order: a view.
bool SliceKeepsEverything(const Graph& g, const Node& n) {
  if (n.inputs.empty() || n.outputs.size() != 1 || n.inputs.size() < 3) return false;
  const Tensor* x = g.FindTensor(n.inputs[0]);
  const Tensor* y = g.FindTensor(n.outputs[0]);
  if (!x || !y || !x->has_shape || !y->has_shape || x->shape.size() != y->shape.size()) return false;
  for (size_t k = 0; k < x->shape.size(); ++k)
    if (x->shape[k].is_symbolic() || y->shape[k].is_symbolic() || x->shape[k].value() != y->shape[k].value())
      return false;
  if (n.inputs.size() > 4 && !n.inputs[4].empty()) {
    const Tensor* steps = g.FindTensor(n.inputs[4]);
    if (!steps || !steps->is_const) return false;
    for (int64_t st : steps->AsInts())
      if (st <= 0) return false;
  }
  return true;
}

Status RemoveIdentities(Graph& g, PassResult* r) {
  Scope s(g, r, "Identity/Dropout removal");
  std::vector<bool> dead(g.nodes.size(), false);
  auto consumers = g.Consumers();
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (n.op_type == "Slice" && SliceKeepsEverything(g, n)) {
      g.ReplaceUses(n.outputs[0], n.inputs[0]);
      dead[i] = true;
      r->details.push_back("removed Slice '" + n.name + "' (it keeps every element)");
      continue;
    }
    if (n.op_type != "Identity" && n.op_type != "Dropout") continue;
    if (n.op_type == "Dropout" && n.outputs.size() > 1 && !n.outputs[1].empty() &&
        (consumers.count(n.outputs[1]) || g.IsGraphOutput(n.outputs[1])))
      return Unimplemented("node '" + n.name + "' (Dropout): the mask output is used; only inference-mode Dropout is supported");
    if (n.op_type == "Dropout" && n.inputs.size() > 2 && !n.inputs[2].empty()) {
      // Opset 12+: training_mode is an input; only a constant false means inference.
      const Tensor* mode = g.FindTensor(n.inputs[2]);
      const bool inference = mode != nullptr && mode->is_const && mode->numel() == 1 && mode->AsInts()[0] == 0;
      if (!inference) {
        return Unimplemented("node '" + n.name +
                             "' (Dropout): training_mode is not a constant false; only inference-mode Dropout is supported");
      }
    }
    g.ReplaceUses(n.outputs[0], n.inputs[0]);
    dead[i] = true;
    r->details.push_back("removed " + n.op_type + " '" + n.name + "'");
  }
  EraseNodes(g, dead);
  return Status::Ok();
}

Status FoldBatchNormIntoConv(Graph& g, PassResult* r) {
  Scope s(g, r, "BatchNormalization folding");
  std::vector<bool> dead(g.nodes.size(), false);
  auto consumers = g.Consumers();
  auto producers = g.Producers();  // kept up to date below
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& bn = g.nodes[i];
    if (bn.op_type != "BatchNormalization" || bn.inputs.size() < 5) continue;
    if (bn.GetInt("training_mode", 0) != 0) continue;
    int p = ProducerIn(producers, bn.inputs[0]);
    if (p < 0 || dead[p]) continue;
    Node& conv = g.nodes[p];
    if (conv.op_type != "Conv" || consumers[bn.inputs[0]].size() != 1 || g.IsGraphOutput(bn.inputs[0])) continue;
    if (conv.act() != Activation::kNone || !g.IsConst(conv.inputs[1])) continue;
    bool consts = true;
    for (int k = 1; k < 5; ++k) consts &= g.IsConst(bn.inputs[k]);
    if (!consts) continue;
    const Tensor& w = *g.FindTensor(conv.inputs[1]);
    if (w.dtype != DType::kFloat) continue;
    std::vector<float> scale = AsFloats(*g.FindTensor(bn.inputs[1])), shift = AsFloats(*g.FindTensor(bn.inputs[2]));
    std::vector<float> mean = AsFloats(*g.FindTensor(bn.inputs[3])), var = AsFloats(*g.FindTensor(bn.inputs[4]));
    int64_t K = w.shape[0];
    if (static_cast<int64_t>(scale.size()) != K || shift.size() != scale.size() || mean.size() != scale.size() ||
        var.size() != scale.size())
      return InvalidArgument("node '" + bn.name + "' (BatchNormalization): parameter sizes do not match Conv '" +
                             conv.name + "' output channels " + std::to_string(K));
    float eps = bn.GetFloat("epsilon", 1e-5f);
    std::vector<float> wv = AsFloats(w);
    std::vector<float> bias(K, 0.f);
    if (conv.inputs.size() > 2 && !conv.inputs[2].empty()) {
      if (!g.IsConst(conv.inputs[2])) continue;
      bias = AsFloats(*g.FindTensor(conv.inputs[2]));
    }
    int64_t per = w.numel() / K;
    for (int64_t k = 0; k < K; ++k) {
      double sc = static_cast<double>(scale[k]) / std::sqrt(static_cast<double>(var[k]) + eps);
      for (int64_t j = 0; j < per; ++j) wv[k * per + j] = static_cast<float>(wv[k * per + j] * sc);
      bias[k] = static_cast<float>((bias[k] - mean[k]) * sc + shift[k]);
    }
    std::string wn = g.UniqueName(conv.name + ".folded_weight"), bnm = g.UniqueName(conv.name + ".folded_bias");
    g.tensors[wn] = MakeConstF32(wn, w.shape, wv);
    g.tensors[bnm] = MakeConstF32(bnm, {K}, bias);
    conv.inputs.resize(3);
    conv.inputs[1] = wn;
    conv.inputs[2] = bnm;
    g.tensors.erase(conv.outputs[0]);
    producers.erase(conv.outputs[0]);
    conv.outputs[0] = bn.outputs[0];
    producers[bn.outputs[0]] = static_cast<size_t>(p);  // p < i: the first producer now
    dead[i] = true;
    r->details.push_back("folded BatchNormalization '" + bn.name + "' into Conv '" + conv.name + "'");
  }
  EraseNodes(g, dead);
  return Status::Ok();
}

Status DecomposeBatchNorm(Graph& g, PassResult* r) {
  Scope s(g, r, "BatchNormalization decomposition");
  std::vector<Node> out;
  for (Node& bn : g.nodes) {
    if (bn.op_type != "BatchNormalization") { out.push_back(std::move(bn)); continue; }
    if (bn.outputs.size() > 1) {
      for (size_t k = 1; k < bn.outputs.size(); ++k)
        if (!bn.outputs[k].empty() && (g.IsGraphOutput(bn.outputs[k]) || g.Consumers().count(bn.outputs[k])))
          return Unimplemented("node '" + bn.name + "' (BatchNormalization): training-mode outputs are not supported");
    }
    for (int k = 1; k < 5; ++k)
      if (bn.inputs.size() <= static_cast<size_t>(k) || !g.IsConst(bn.inputs[k]))
        return Unimplemented("node '" + bn.name + "' (BatchNormalization): scale/bias/mean/var must be constants");
    const Tensor& x = *g.FindTensor(bn.inputs[0]);
    if (x.shape.size() < 2) return InvalidArgument("node '" + bn.name + "': input rank < 2");
    std::vector<float> sc = AsFloats(*g.FindTensor(bn.inputs[1])), sh = AsFloats(*g.FindTensor(bn.inputs[2]));
    std::vector<float> mean = AsFloats(*g.FindTensor(bn.inputs[3])), var = AsFloats(*g.FindTensor(bn.inputs[4]));
    float eps = bn.GetFloat("epsilon", 1e-5f);
    int64_t C = x.shape[1];
    if (static_cast<int64_t>(sc.size()) != C) return InvalidArgument("node '" + bn.name + "': parameters do not match channels");
    std::vector<float> a(C), b(C);
    for (int64_t c = 0; c < C; ++c) {
      double k = sc[c] / std::sqrt(static_cast<double>(var[c]) + eps);
      a[c] = static_cast<float>(k);
      b[c] = static_cast<float>(sh[c] - mean[c] * k);
    }
    Shape ps(x.shape.size() - 1, 1);
    ps[0] = C;
    std::string an = g.UniqueName(bn.name + ".scale"), bnm = g.UniqueName(bn.name + ".shift");
    g.tensors[an] = MakeConstF32(an, ps, a);
    g.tensors[bnm] = MakeConstF32(bnm, ps, b);
    std::string mid = g.UniqueName(bn.name + ".scaled");
    Tensor mt;
    mt.name = mid; mt.dtype = DType::kFloat; mt.shape = x.shape; mt.has_shape = true;
    g.tensors[mid] = mt;
    Node mul, add;
    mul.name = bn.name + ".mul"; mul.op_type = "Mul"; mul.inputs = {bn.inputs[0], an}; mul.outputs = {mid};
    add.name = bn.name + ".add"; add.op_type = "Add"; add.inputs = {mid, bnm}; add.outputs = {bn.outputs[0]};
    out.push_back(mul);
    out.push_back(add);
    r->details.push_back("decomposed BatchNormalization '" + bn.name + "' into Mul + Add");
  }
  g.nodes = std::move(out);
  return Status::Ok();
}

namespace {

// Per-output-channel values of constant `c` for a K-channel NCHW-like output
// of rank `rank` (c broadcasts as a scalar or along axis 1 only); empty when
// c is not such a constant.
std::vector<float> PerChannelConst(const Graph& g, const std::string& c, int64_t K, size_t rank) {
  const Tensor* t = g.FindTensor(c);
  if (!t || !t->is_const || t->dtype != DType::kFloat || t->shape.size() > rank) return {};
  if (t->numel() == 1) return std::vector<float>(K, AsFloats(*t).at(0));
  // Right-aligned against [N, K, d2...]: every dim 1 except the one on axis 1 (= K).
  const size_t off = rank - t->shape.size();
  for (size_t i = 0; i < t->shape.size(); ++i) {
    const size_t axis = off + i;
    if (t->shape[i] != (axis == 1 ? K : 1)) return {};
  }
  return AsFloats(*t);
}

}  // namespace

Status FoldAffineIntoConv(Graph& g, PassResult* r) {
  Scope s(g, r, "per-channel affine folding");
  bool changed = true;
  while (changed) {
    changed = false;
    std::vector<bool> dead(g.nodes.size(), false);
    auto consumers = g.Consumers();
    auto producers = g.Producers();  // kept up to date below
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      Node& n = g.nodes[i];
      if ((n.op_type != "Mul" && n.op_type != "Add") || n.inputs.size() != 2 || n.outputs.size() != 1) continue;
      for (int side = 0; side < 2; ++side) {
        const std::string& v = n.inputs[side];
        const std::string& c = n.inputs[1 - side];
        int p = ProducerIn(producers, v);
        if (p < 0 || dead[p] || g.IsConst(v)) continue;
        Node& conv = g.nodes[p];
        const bool transposed = conv.op_type == "ConvTranspose";
        if ((conv.op_type != "Conv" && !transposed) || conv.outputs.size() != 1) continue;
        if (consumers[v].size() != 1 || g.IsGraphOutput(v)) continue;
        if (conv.act() != Activation::kNone || conv.GetInt("_residual", 0) != 0) continue;
        if (transposed && conv.GetInt("group", 1) != 1) continue;
        if (conv.inputs.size() < 2 || !g.IsConst(conv.inputs[1])) continue;
        const Tensor& w = *g.FindTensor(conv.inputs[1]);
        const Tensor* out = g.FindTensor(v);
        if (w.dtype != DType::kFloat || w.shape.size() < 3 || !out || !out->has_shape || out->shape.size() < 2) continue;
        const int64_t K = transposed ? w.shape[1] : w.shape[0];
        if (out->shape[1] != K) continue;
        const Tensor* y = g.FindTensor(n.outputs[0]);
        if (!y || !y->has_shape || y->shape != out->shape) continue;  // the constant must not broadcast the output
        std::vector<float> cv = PerChannelConst(g, c, K, out->shape.size());
        if (cv.empty()) continue;
        std::vector<float> bias(K, 0.f);
        if (conv.inputs.size() > 2 && !conv.inputs[2].empty()) {
          if (!g.IsConst(conv.inputs[2])) continue;
          bias = AsFloats(*g.FindTensor(conv.inputs[2]));
          if (static_cast<int64_t>(bias.size()) != K) continue;
        }
        std::vector<float> wv = AsFloats(w);
        if (n.op_type == "Mul") {
          // Conv: W[k][...] (axis 0); ConvTranspose: W[c][k][...] (axis 1).
          const int64_t inner = w.numel() / w.shape[0] / (transposed ? K : 1);
          for (int64_t e = 0; e < w.numel(); ++e) {
            const int64_t k = transposed ? (e / inner) % K : e / (w.numel() / K);
            wv[e] *= cv[k];
          }
          for (int64_t k = 0; k < K; ++k) bias[k] *= cv[k];
        } else {
          for (int64_t k = 0; k < K; ++k) bias[k] += cv[k];
        }
        std::string wn = g.UniqueName(conv.name + ".affine_weight"), bn = g.UniqueName(conv.name + ".affine_bias");
        g.tensors[wn] = MakeConstF32(wn, w.shape, wv);
        g.tensors[bn] = MakeConstF32(bn, {K}, bias);
        conv.inputs.resize(3);
        conv.inputs[1] = wn;
        conv.inputs[2] = bn;
        g.tensors.erase(conv.outputs[0]);
        producers.erase(conv.outputs[0]);
        conv.outputs[0] = n.outputs[0];
        producers[n.outputs[0]] = static_cast<size_t>(p);  // p < i: the first producer now
        dead[i] = true;
        changed = true;
        r->details.push_back("folded " + n.op_type + " '" + n.name + "' by a constant into " + conv.op_type + " '" +
                             conv.name + "'");
        break;
      }
    }
    EraseNodes(g, dead);
  }
  return Status::Ok();
}

bool IsActivationOp(const std::string& op) {
  return op == "Relu" || op == "Clip" || op == "Sigmoid" || op == "HardSigmoid" || op == "HardSwish" ||
         op == "LeakyRelu" || op == "Swish" || op == "Sqrt" || op == "Neg" || op == "Exp" || op == "Abs" ||
         op == "Tanh" || op == "Reciprocal" || op == "Affine" || IsFloatMathActivationOp(op);
}

StatusOr<ActivationParams> GetActivationParams(const Graph& g, const Node& n) {
  ActivationParams p;
  const std::string& op = n.op_type;
  if (IsFloatMathActivationOp(op)) {
    OAAXVK_RETURN_IF_ERROR(GetFloatMathActivation(n, &p.act, &p.alpha, &p.beta));
    return p;
  }
  if (op == "Relu") { p.act = Activation::kRelu; return p; }
  if (op == "Sigmoid") { p.act = Activation::kSigmoid; return p; }
  if (op == "HardSwish") { p.act = Activation::kHardSwish; return p; }
  if (op == "Swish") { p.act = Activation::kSwish; p.alpha = n.GetFloat("alpha", 1.f); return p; }
  if (op == "Sqrt") { p.act = Activation::kSqrt; return p; }
  if (op == "Neg") { p.act = Activation::kNeg; return p; }
  if (op == "Exp") { p.act = Activation::kExp; return p; }
  if (op == "Abs") { p.act = Activation::kAbs; return p; }
  if (op == "Tanh") { p.act = Activation::kTanh; return p; }
  if (op == "Reciprocal") { p.act = Activation::kReciprocal; return p; }
  if (op == "Affine") {
    p.act = Activation::kAffine; p.alpha = n.GetFloat("alpha", 1.f); p.beta = n.GetFloat("beta", 0.f);
    return p;
  }
  if (op == "HardSigmoid") {
    p.act = Activation::kHardSigmoid; p.alpha = n.GetFloat("alpha", 0.2f); p.beta = n.GetFloat("beta", 0.5f);
    return p;
  }
  if (op == "LeakyRelu") { p.act = Activation::kLeakyRelu; p.alpha = n.GetFloat("alpha", 0.01f); return p; }
  if (op == "Clip") {
    p.act = Activation::kClip;
    p.alpha = -std::numeric_limits<float>::infinity();
    p.beta = std::numeric_limits<float>::infinity();
    if (n.HasAttr("min")) p.alpha = n.GetFloat("min", p.alpha);
    if (n.HasAttr("max")) p.beta = n.GetFloat("max", p.beta);
    for (size_t k = 1; k < 3 && k < n.inputs.size(); ++k) {
      if (n.inputs[k].empty()) continue;
      const Tensor* t = g.FindTensor(n.inputs[k]);
      if (!t || !t->is_const || t->numel() != 1)
        return Unimplemented("node '" + n.name + "' (Clip): min/max must be compile-time scalar constants");
      float v = static_cast<float>(t->AsDoubles().at(0));
      (k == 1 ? p.alpha : p.beta) = v;
    }
    return p;
  }
  return InvalidArgument("node '" + n.name + "' (" + op + ") is not an activation");
}

Status FuseActivations(Graph& g, PassResult* r) {
  Scope s(g, r, "activation fusion");
  static const std::set<std::string> kHosts = {"Conv", "ConvTranspose", "Gemm", "MatMul", "Add", "Sub",
                                               "Mul", "Div", "Pow", "Max", "Min"};
  std::vector<bool> dead(g.nodes.size(), false);
  auto consumers = g.Consumers();
  auto producers = g.Producers();  // kept up to date below: one lookup per node, not a scan
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& a = g.nodes[i];
    if (!IsActivationOp(a.op_type)) continue;
    int p = ProducerIn(producers, a.inputs[0]);
    if (p < 0 || dead[p]) continue;
    Node& host = g.nodes[p];
    if (!kHosts.count(host.op_type) || host.act() != Activation::kNone) continue;
    if (consumers[a.inputs[0]].size() != 1 || g.IsGraphOutput(a.inputs[0])) continue;
    // Fused activations are applied by the float kernels only: an integer
    // Add/Mul/... runs the integer kernel, which has no activation stage.
    const Tensor* hv = g.FindTensor(a.inputs[0]);
    if (!hv || !IsFloatLike(hv->dtype)) continue;
    StatusOr<ActivationParams> ap = GetActivationParams(g, a);
    if (!ap.ok()) continue;
    host.SetInt("_act", static_cast<int64_t>(ap->act));
    host.SetFloat("_act_alpha", ap->alpha);
    host.SetFloat("_act_beta", ap->beta);
    g.tensors.erase(host.outputs[0]);
    producers.erase(host.outputs[0]);
    host.outputs[0] = a.outputs[0];
    producers[a.outputs[0]] = static_cast<size_t>(p);  // p < i: the first producer now
    dead[i] = true;
    r->details.push_back("fused " + a.op_type + " '" + a.name + "' into " + host.op_type + " '" + host.name + "'");
  }
  EraseNodes(g, dead);
  return Status::Ok();
}

namespace {

// The scalar value of a constant single-element float tensor, if `name` is
// one (not a run-time value, whose constant holds only a sample value).
bool ScalarConst(const Graph& g, const std::string& name, double* v) {
  const Tensor* t = g.FindTensor(name);
  if (!t || !t->is_const || t->numel() != 1 || t->dtype != DType::kFloat || AnyDependsOnValue(t->sym)) return false;
  *v = t->AsDoubles().at(0);
  return true;
}

bool Near(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(b)); }

}  // namespace

Status FuseElementwiseChains(Graph& g, PassResult* r) {
  Scope s(g, r, "elementwise-chain fusion");
  std::vector<bool> dead(g.nodes.size(), false);
  auto consumers = g.Consumers();
  const auto producers = g.Producers();  // outputs are not re-pointed in this pass
  // `t` is read only by node `user` and is not a graph output.
  auto only_use = [&](const std::string& t, size_t user) {
    auto it = consumers.find(t);
    return it != consumers.end() && it->second.size() == 1 && it->second[0] == user && !g.IsGraphOutput(t);
  };
  // Producer of `t` if it is an op of `type` that is still alive.
  auto prod = [&](const std::string& t, const char* type) -> int {
    int p = ProducerIn(producers, t);
    if (p < 0 || dead[p] || g.nodes[p].op_type != type || g.nodes[p].act() != Activation::kNone) return -1;
    return p;
  };
  // Rewrites node i into a unary activation node `op` reading x.
  auto rewrite = [&](size_t i, const std::string& op, const std::string& x, const std::vector<size_t>& gone,
                     const std::string& what) {
    Node& n = g.nodes[i];
    std::string old = n.op_type + " '" + n.name + "'";
    n.op_type = op;
    n.inputs = {x};
    n.attrs.clear();
    for (size_t k : gone) {
      dead[k] = true;
      g.tensors.erase(g.nodes[k].outputs[0]);
    }
    r->details.push_back("fused " + what + " ending at " + old + " into one " + op);
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (dead[i] || n.outputs.size() != 1 || n.inputs.size() != 2) continue;
    if (n.op_type == "Mul") {
      for (int side = 0; side < 2; ++side) {
        const std::string& x = n.inputs[side];
        const std::string& y = n.inputs[1 - side];
        // x * Sigmoid(x)  or  x * Sigmoid(x * c)  ->  Swish(alpha = c)
        int sg = prod(y, "Sigmoid");
        if (sg >= 0 && only_use(y, i)) {
          const std::string& t = g.nodes[sg].inputs[0];
          if (t == x) {
            rewrite(i, "Swish", x, {static_cast<size_t>(sg)}, "x * Sigmoid(x)");
            n.SetFloat("alpha", 1.f);
            break;
          }
          int mu = prod(t, "Mul");
          double c;
          if (mu >= 0 && only_use(t, static_cast<size_t>(sg))) {
            const Node& m = g.nodes[mu];
            int ci = m.inputs[0] == x ? 1 : m.inputs[1] == x ? 0 : -1;
            if (ci >= 0 && ScalarConst(g, m.inputs[ci], &c)) {
              rewrite(i, "Swish", x, {static_cast<size_t>(sg), static_cast<size_t>(mu)}, "x * Sigmoid(c * x)");
              n.SetFloat("alpha", static_cast<float>(c));
              break;
            }
          }
        }
        // x * HardSigmoid(x; 1/6, 1/2)  ->  HardSwish
        int hs = prod(y, "HardSigmoid");
        if (hs >= 0 && only_use(y, i) && g.nodes[hs].inputs[0] == x &&
            Near(g.nodes[hs].GetFloat("alpha", 0.2f), 1.0 / 6.0) && Near(g.nodes[hs].GetFloat("beta", 0.5f), 0.5)) {
          rewrite(i, "HardSwish", x, {static_cast<size_t>(hs)}, "x * HardSigmoid(x)");
          break;
        }
      }
      continue;
    }
    // Add(Mul(x, a), b) with scalar constants a, b  ->  Affine(alpha = a, beta = b)
    if (n.op_type == "Add") {
      for (int side = 0; side < 2; ++side) {
        double a, b;
        const std::string& t = n.inputs[side];
        if (!ScalarConst(g, n.inputs[1 - side], &b)) continue;
        int mu = prod(t, "Mul");
        if (mu < 0 || !only_use(t, i)) continue;
        const Node& m = g.nodes[mu];
        const int ci = ScalarConst(g, m.inputs[1], &a) ? 1 : ScalarConst(g, m.inputs[0], &a) ? 0 : -1;
        if (ci < 0) continue;
        const std::string x = m.inputs[1 - ci];
        const Tensor* xt = g.FindTensor(x);
        const Tensor* yt = g.FindTensor(n.outputs[0]);
        if (!xt || !yt || !xt->has_shape || !yt->has_shape || xt->shape != yt->shape || xt->dtype != DType::kFloat)
          continue;  // the constants must not broadcast x
        rewrite(i, "Affine", x, {static_cast<size_t>(mu)}, "x * a + b");
        n.SetFloat("alpha", static_cast<float>(a));
        n.SetFloat("beta", static_cast<float>(b));
        break;
      }
      continue;
    }
    // Div(Mul(x, Clip(Add(x, 3), 0, 6)), 6)  ->  HardSwish
    if (n.op_type == "Div") {
      double six;
      if (!ScalarConst(g, n.inputs[1], &six) || !Near(six, 6.0)) continue;
      int mu = prod(n.inputs[0], "Mul");
      if (mu < 0 || !only_use(n.inputs[0], i)) continue;
      const Node& m = g.nodes[mu];
      for (int side = 0; side < 2; ++side) {
        const std::string& x = m.inputs[side];
        const std::string& y = m.inputs[1 - side];
        int cl = prod(y, "Clip");
        if (cl < 0 || !only_use(y, static_cast<size_t>(mu))) continue;
        StatusOr<ActivationParams> cp = GetActivationParams(g, g.nodes[cl]);
        if (!cp.ok() || !Near(cp->alpha, 0.0) || !Near(cp->beta, 6.0)) continue;
        const std::string& t = g.nodes[cl].inputs[0];
        int ad = prod(t, "Add");
        if (ad < 0 || !only_use(t, static_cast<size_t>(cl))) continue;
        const Node& a = g.nodes[ad];
        double three;
        int ci = a.inputs[0] == x ? 1 : a.inputs[1] == x ? 0 : -1;
        if (ci < 0 || !ScalarConst(g, a.inputs[ci], &three) || !Near(three, 3.0)) continue;
        rewrite(i, "HardSwish", x, {static_cast<size_t>(ad), static_cast<size_t>(cl), static_cast<size_t>(mu)},
                "x * Clip(x + 3, 0, 6) / 6");
        break;
      }
    }
  }
  EraseNodes(g, dead);
  return Status::Ok();
}

Status FuseResidualAdd(Graph& g, PassResult* r) {
  Scope s(g, r, "residual Add fusion");
  std::vector<bool> dead(g.nodes.size(), false);
  auto consumers = g.Consumers();
  auto producers = g.Producers();  // kept up to date below
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& add = g.nodes[i];
    if (add.op_type != "Add" || add.inputs.size() != 2 || add.act() != Activation::kNone) continue;
    for (int side = 0; side < 2; ++side) {
      const std::string& c = add.inputs[side];
      const std::string& res = add.inputs[1 - side];
      int p = ProducerIn(producers, c);
      if (p < 0 || dead[p] || c == res) continue;
      Node& conv = g.nodes[p];
      // Legal when the Conv output feeds only this Add, the Conv has no
      // activation yet (it would have to run before the Add), and the other
      // operand is a device value of exactly the output shape that exists
      // before the Conv runs.
      if (conv.op_type != "Conv" || conv.act() != Activation::kNone || conv.GetInt("_residual", 0)) continue;
      if (consumers[c].size() != 1 || g.IsGraphOutput(c)) continue;
      const Tensor* rt = g.FindTensor(res);
      const Tensor* ct = g.FindTensor(c);
      if (!rt || !ct || rt->is_const || !rt->has_shape || rt->shape != ct->shape || rt->dtype != DType::kFloat) continue;
      int rp = ProducerIn(producers, res);
      if (rp >= p || (rp < 0 && !g.IsGraphInput(res))) continue;
      conv.inputs.resize(3);
      conv.inputs.push_back(res);
      conv.SetInt("_residual", 1);
      g.tensors.erase(c);
      producers.erase(c);
      conv.outputs[0] = add.outputs[0];
      producers[add.outputs[0]] = static_cast<size_t>(p);  // p < i: the first producer now
      dead[i] = true;
      r->details.push_back("fused residual Add '" + add.name + "' into Conv '" + conv.name + "'");
      break;
    }
  }
  EraseNodes(g, dead);
  return Status::Ok();
}

Status EliminateDeadCode(Graph& g, PassResult* r) {
  Scope s(g, r, "dead-code elimination");
  std::set<std::string> live;
  for (const GraphIO& o : g.outputs) live.insert(o.tensor);
  std::vector<bool> dead(g.nodes.size(), true);
  for (int i = static_cast<int>(g.nodes.size()) - 1; i >= 0; --i) {
    const Node& n = g.nodes[i];
    // A node whose extent is read back into a decided symbol (ir/extent.h)
    // sizes later values even when nobody reads its result; so does a value
    // read back inside a loop body (ir/loop_reads.h).
    bool used = n.HasAttr("_decided_extent") || n.op_type == "_LoopRead";
    for (const std::string& o : n.outputs) used |= !o.empty() && live.count(o);
    if (!used) { r->details.push_back("removed unused " + n.op_type + " '" + n.name + "'"); continue; }
    dead[i] = false;
    for (const std::string& in : n.inputs) if (!in.empty()) live.insert(in);
  }
  EraseNodes(g, dead);
  for (const GraphIO& in : g.inputs) live.insert(in.tensor);
  for (const Node& n : g.nodes) for (const std::string& o : n.outputs) if (!o.empty()) live.insert(o);
  for (auto it = g.tensors.begin(); it != g.tensors.end();) {
    if (!live.count(it->first)) it = g.tensors.erase(it); else ++it;
  }
  return Status::Ok();
}

StatusOr<std::vector<PassResult>> RunDefaultPipeline(Graph& g) {
  std::vector<PassResult> results;
  using PassFn = Status (*)(Graph&, PassResult*);
  const PassFn passes[] = {DecomposeOps,       FoldConstants,      RemoveIdentities,      FoldBatchNormIntoConv,
                           DecomposeBatchNorm, FoldAffineIntoConv, FuseElementwiseChains, FuseResidualAdd,
                           FuseActivations,    SplitLargeWeights,  EliminateDeadCode,  FoldConstants};
  for (PassFn fn : passes) {
    PassResult r;
    OAAXVK_RETURN_IF_ERROR(fn(g, &r));
    OAAXVK_RETURN_IF_ERROR(g.Validate().WithContext("after pass '" + r.name + "'"));
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace oaaxvk::toolchain
