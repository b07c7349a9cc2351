// CPU evaluation of a node whose inputs are compile-time constants (used by
// constant folding). Output shapes must have been inferred already.
#ifndef OAAXVK_TOOLCHAIN_IR_EVAL_H_
#define OAAXVK_TOOLCHAIN_IR_EVAL_H_

#include <vector>

#include "toolchain/ir/graph.h"

namespace oaaxvk::toolchain {

// True when EvaluateNode can fold `n` given that all its (non-empty) inputs
// are constants. Shape and Size fold with any input that has a static shape.
bool CanEvaluate(const Graph& g, const Node& n);

// Whether operator `op_type` (default domain) has a constant evaluator.
bool IsEvaluableOp(const std::string& op_type);

// Evaluates `n`; returns one constant tensor per output (named as the outputs).
StatusOr<std::vector<Tensor>> EvaluateNode(const Graph& g, const Node& n);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_IR_EVAL_H_
