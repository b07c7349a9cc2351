// Graph passes. Each rewrites the IR in place and reports node counts before
// and after plus human-readable details (for conversion-log.json).
#ifndef OAAXVK_TOOLCHAIN_PASSES_PASSES_H_
#define OAAXVK_TOOLCHAIN_PASSES_PASSES_H_

#include <string>
#include <vector>

#include "toolchain/ir/graph.h"

namespace oaaxvk::toolchain {

struct PassResult {
  std::string name;
  size_t nodes_before = 0, nodes_after = 0;
  std::vector<std::string> details;  // e.g. "folded BatchNormalization 'bn1' into Conv 'conv1'"
};

// Static shape inference over the whole graph, folding every node whose
// inputs are compile-time constants (Shape/Size need only a static input
// shape) into a constant tensor: Shape/Gather/Slice/Concat/Cast/Unsqueeze
// chains disappear, so int64 shape arithmetic never reaches the device.
Status FoldConstants(Graph& g, PassResult* r);
// Removes Identity and (inference-mode) Dropout, re-pointing their users.
Status RemoveIdentities(Graph& g, PassResult* r);
// Folds a BatchNormalization whose input is the only use of a Conv output
// with constant weights into that Conv's weights and bias.
Status FoldBatchNormIntoConv(Graph& g, PassResult* r);
// Rewrites any remaining BatchNormalization into Mul + Add with constant
// per-channel scale and shift.
Status DecomposeBatchNorm(Graph& g, PassResult* r);
// Folds Mul / Add by a constant that is a scalar or per output channel
// (shape [K,1,1], [1,K,1,1], ...) into a producing Conv / ConvTranspose
// (group 1) with constant float weights whose output has no other use, no
// fused activation and no fused residual: Mul scales the weights of output
// channel k and the bias, Add adds to the bias (a bias is created when
// absent). Repeats until nothing changes, so Conv -> Mul -> Add chains (a
// decomposed BatchNormalization after a ConvTranspose, PP-OCRv4's learnable
// per-tensor affine layers) become one Conv.
Status FoldAffineIntoConv(Graph& g, PassResult* r);
// Elementwise-chain fusion: rewrites chains of elementwise nodes whose
// intermediate values have one consumer into one unary node (one dispatch,
// which FuseActivations may then fold into its producer):
//   x * Sigmoid(x), x * Sigmoid(c * x)        -> Swish(alpha = 1 or c)
//   x * HardSigmoid(x; 1/6, 0.5)              -> HardSwish
//   Mul(x, Clip(Add(x, 3), 0, 6)) / 6         -> HardSwish
//   Add(Mul(x, a), b), a and b scalar consts  -> Affine(alpha = a, beta = b)
Status FuseElementwiseChains(Graph& g, PassResult* r);
// Fuses Add(Conv(x), r) into the Conv (r is added in the Conv's epilogue,
// before its activation) when the Conv output has no other use, the Conv has
// no fused activation yet, and r is a non-constant value of exactly the
// Conv's output shape produced before the Conv. The Conv gets r as input 3
// and attribute "_residual" = 1.
Status FuseResidualAdd(Graph& g, PassResult* r);
// Fuses a unary elementwise node (Relu, Clip, Sigmoid, HardSigmoid,
// HardSwish, LeakyRelu, Swish, Sqrt, Neg, Exp, Abs, Tanh, Reciprocal) into a
// producing Conv/ConvTranspose/Gemm/MatMul/Add/Sub/Mul/Div/Pow/Max/Min whose
// output has no other use.
Status FuseActivations(Graph& g, PassResult* r);
// Removes nodes whose outputs reach no graph output, and unused tensors.
Status EliminateDeadCode(Graph& g, PassResult* r);

// Activation parameters of a standalone activation node (Clip bounds read
// from attributes or constant inputs). Fails if `n` is not an activation or
// its parameters are not constants.
struct ActivationParams {
  Activation act = Activation::kNone;
  float alpha = 0.f, beta = 0.f;
};
StatusOr<ActivationParams> GetActivationParams(const Graph& g, const Node& n);
bool IsActivationOp(const std::string& op_type);

// The default pipeline in order: DecomposeOps (decompose.h), FoldConstants, RemoveIdentities,
// FoldBatchNormIntoConv, DecomposeBatchNorm, FuseElementwiseChains, FuseResidualAdd, FuseActivations,
// SplitLargeWeights (split_large.h), EliminateDeadCode, then a final FoldConstants (shape re-check).
StatusOr<std::vector<PassResult>> RunDefaultPipeline(Graph& g);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_PASSES_PASSES_H_
