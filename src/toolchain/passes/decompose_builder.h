// Internal to the decomposition pass (decompose*.cpp): the Builder that
// collects a decomposed node's replacement nodes, small helpers, and the
// per-file tables of decompositions that DecomposeOps merges.
#ifndef OAAXVK_TOOLCHAIN_PASSES_DECOMPOSE_BUILDER_H_
#define OAAXVK_TOOLCHAIN_PASSES_DECOMPOSE_BUILDER_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "toolchain/ir/graph.h"

namespace oaaxvk::toolchain {

inline Status NodeUnimplemented(const Node& n, const std::string& msg) {
  return Unimplemented("node '" + n.name + "' (" + n.op_type + "): " + msg);
}
inline Status NodeInvalid(const Node& n, const std::string& msg) {
  return InvalidArgument("node '" + n.name + "' (" + n.op_type + "): " + msg);
}

// Collects the replacement nodes of one decomposed node; new tensors get
// unique names derived from the node's name.
class Builder {
 public:
  Builder(Graph& g, const Node& src) : g_(g), src_(src) {}

  std::string NewTensor(const std::string& suffix) {
    std::string name = g_.UniqueName(src_.name + "/" + suffix);
    g_.tensors[name].name = name;
    return name;
  }
  std::string AddConst(Tensor t, const std::string& suffix) {
    std::string name = g_.UniqueName(src_.name + "/" + suffix);
    t.name = name;
    g_.tensors[name] = std::move(t);
    return name;
  }
  // An int64 constant (symbolic sizes keep their expressions, graph.h Tensor::sym).
  std::string ConstI64(const std::string& suffix, const std::vector<Dim>& v) {
    return AddConst(MakeConstDims("", {static_cast<int64_t>(v.size())}, v), suffix);
  }
  // Adds a node; `out` empty: a fresh tensor named after `suffix`.
  Node& Add(const std::string& op, std::vector<std::string> inputs, const std::string& suffix,
            std::string out = "") {
    Node n;
    n.op_type = op;
    n.name = src_.name + "/" + suffix;
    n.inputs = std::move(inputs);
    n.outputs = {out.empty() ? NewTensor(suffix) : out};
    nodes_.push_back(std::move(n));
    return nodes_.back();
  }
  const std::string& Out(const Node& n) const { return n.outputs[0]; }
  // One-output conveniences; each returns the new node's output tensor.
  std::string Op(const std::string& op, std::vector<std::string> inputs, const std::string& suffix) {
    return Out(Add(op, std::move(inputs), suffix));
  }
  // Cast of `x` to `to` (into `out` when given).
  std::string Cast(const std::string& x, DType to, const std::string& suffix, std::string out = "") {
    Node& c = Add("Cast", {x}, suffix, std::move(out));
    c.SetInt("to", static_cast<int64_t>(to));
    return Out(c);
  }
  std::string Reshape(const std::string& x, const std::vector<Dim>& shape, const std::string& suffix) {
    return Op("Reshape", {x, ConstI64(suffix + "_shape", shape)}, suffix);
  }
  // Slice of [start, end) on one axis.
  std::string SliceAxis(const std::string& x, int64_t axis, int64_t start, int64_t end, const std::string& suffix) {
    return Op("Slice", {x, ConstI64(suffix + "_starts", {start}), ConstI64(suffix + "_ends", {end}),
                        ConstI64(suffix + "_axes", {axis})},
              suffix);
  }
  std::string Transpose(const std::string& x, const std::vector<int64_t>& perm, const std::string& suffix) {
    Node& t = Add("Transpose", {x}, suffix);
    t.SetInts("perm", perm);
    return t.outputs[0];
  }
  // [0, 1, ..., n - 1] of `dtype` (a float or integer type) computed on the
  // device, for a length n read at run time (feature value_symbols): the
  // exclusive CumSum of Expand(1, [n]); with `reverse`, [n, n - 1, ..., 1]
  // (the inclusive CumSum from the end). *ones (optional) receives the n ones.
  std::string RunTimeIota(const Dim& n, DType dtype, bool reverse, const std::string& suffix,
                          std::string* ones = nullptr) {
    const std::string one = AddConst(MakeConstFromDoubles("", dtype, {1}, {1.0}), suffix + "_one");
    const std::string o = Op("Expand", {one, ConstI64(suffix + "_length", {n})}, suffix + "_ones");
    if (ones != nullptr) *ones = o;
    Node& c = Add("CumSum", {o, ConstI64(suffix + "_axis", {0})}, suffix);
    c.SetInt("exclusive", reverse ? 0 : 1);
    c.SetInt("reverse", reverse ? 1 : 0);
    return Out(c);
  }
  std::vector<Node>& nodes() { return nodes_; }
  // The graph being rewritten (tensor lookups).
  const Graph& graph() const { return g_; }

 private:
  Graph& g_;
  const Node& src_;
  std::vector<Node> nodes_;
};

inline const Tensor* InputWithShape(const Graph& g, const Node& n, size_t k) {
  if (k >= n.inputs.size() || n.inputs[k].empty()) return nullptr;
  const Tensor* t = g.FindTensor(n.inputs[k]);
  return t != nullptr && t->has_shape ? t : nullptr;
}

inline std::string OutputOrEmpty(const Node& n, size_t k) { return k < n.outputs.size() ? n.outputs[k] : ""; }

// Rewrites `n` (already shape-inferred inputs; its own outputs not yet
// inferred) into nodes added to `b`; the replacement nodes must produce the
// tensors named in n.outputs. Errors name the node.
using DecomposeFn = Status (*)(Graph& g, const Node& n, Builder& b);

// Loss functions (decompose_loss.cpp): NegativeLogLikelihoodLoss,
// SoftmaxCrossEntropyLoss.
const std::map<std::string, DecomposeFn>& LossDecompositions();
// Elementwise / math / tensor-construction operators expressed with
// existing kernels (decompose_math.cpp).
const std::map<std::string, DecomposeFn>& MathDecompositions();
// Recurrent layers (RNN, GRU, LSTM) unrolled over the sequence, and the
// signal windows (decompose_rnn.cpp).
const std::map<std::string, DecomposeFn>& RnnDecompositions();
// DFT / STFT as MatMuls with constant twiddle matrices, and the training
// optimizers of ai.onnx.preview.training (Adagrad, Adam, Momentum; keyed
// "ai.onnx.preview.training::<op>") as elementwise chains
// (decompose_signal.cpp).
const std::map<std::string, DecomposeFn>& SignalDecompositions();
// Compress with a constant condition (-> Gather) and MelWeightMatrix (a
// constant) (decompose_static.cpp).
const std::map<std::string, DecomposeFn>& StaticDecompositions();
// Neural-network and quantization operators expressed with existing
// kernels (decompose_nn.cpp).
const std::map<std::string, DecomposeFn>& NnDecompositions();
// GroupNormalization (18, 21), RMSNormalization (23) and LpNormalization
// (decompose_norm.cpp).
const std::map<std::string, DecomposeFn>& NormDecompositions();
// CenterCropPad, Col2Im and AffineGrid (decompose_spatial.cpp).
const std::map<std::string, DecomposeFn>& SpatialDecompositions();
// Attention (23, 24) and RotaryEmbedding (23) (decompose_attention.cpp).
const std::map<std::string, DecomposeFn>& AttentionDecompositions();

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_PASSES_DECOMPOSE_BUILDER_H_
