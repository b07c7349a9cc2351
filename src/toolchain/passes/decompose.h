// Graph decompositions: rewrites ONNX operators that have no kernel of their
// own into chains of operators the toolchain already lowers. Runs first in
// the default pipeline (see passes.h), so the rest of the pipeline never sees
// the decomposed operators.
//
//   LayerNormalization (opset 17, stash_type float, float32 X)
//       -> ReduceMean, Sub, Mul, ReduceMean, Add(epsilon), Sqrt, Reciprocal,
//          Mul, Mul(scale) [, Add(bias)]; the optional Mean and InvStdDev
//          outputs are the first ReduceMean and the Reciprocal (keepdims, so
//          1s on the normalized axes [axis, rank)).
//   Trilu (static input shape, rank >= 2)
//       -> Where(mask, x, 0). With k absent or constant the bool mask is a
//          constant; with a runtime scalar k it is GreaterOrEqual/LessOrEqual
//          of a constant (col - row) table and k. Where, not Mul by a 0/1
//          mask, so that Inf/NaN in the zeroed triangle do not leak as NaN.
//   DepthToSpace (DCR, CRD) / SpaceToDepth (4-D, static shape)
//       -> Reshape (6-D), Transpose, Reshape.
//   Split (split from the attribute, a constant input, or equal parts)
//       -> one Slice per output with constant starts/ends/axes.
//
// Errors name the node: a decomposable operator whose parameters are not
// supported (non-constant split, non-float LayerNormalization input, ...)
// fails with kUnimplemented / kInvalidArgument instead of reaching lowering.
#ifndef OAAXVK_TOOLCHAIN_PASSES_DECOMPOSE_H_
#define OAAXVK_TOOLCHAIN_PASSES_DECOMPOSE_H_

#include <string>

#include "toolchain/ir/graph.h"
#include "toolchain/passes/passes.h"

namespace oaaxvk::toolchain {

// True for the default-domain operators DecomposeOps rewrites (the importer
// accepts them in addition to IsSupportedOp).
bool IsDecomposedOp(const std::string& domain, const std::string& op_type);

// Walks the graph in order, inferring shapes and folding constants like
// FoldConstants (decompositions need the static shapes of their inputs), and
// replaces each decomposable node by its expansion.
Status DecomposeOps(Graph& g, PassResult* r);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_PASSES_DECOMPOSE_H_
