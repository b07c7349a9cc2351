// Float math functions lowered as activation codes (issue 5): Log, Floor,
// Ceil, Round, Sign, trigonometric/hyperbolic functions and their inverses,
// Erf, Softplus, Softsign, Elu, Selu, Celu, Mish, ThresholdedRelu, Shrink.
// Used by passes.cpp's IsActivationOp / GetActivationParams.
#ifndef OAAXVK_TOOLCHAIN_PASSES_ACTIVATIONS_FLOAT_H_
#define OAAXVK_TOOLCHAIN_PASSES_ACTIVATIONS_FLOAT_H_

#include <string>

#include "toolchain/ir/graph.h"

namespace oaaxvk::toolchain {

bool IsFloatMathActivationOp(const std::string& op_type);
// Fills *act / *alpha / *beta for `n` (an IsFloatMathActivationOp node) from
// its attributes with the ONNX defaults; fails naming the node on an invalid
// attribute (Celu alpha = 0).
Status GetFloatMathActivation(const Node& n, Activation* act, float* alpha, float* beta);
// Lower-case name of an activation code ("" for kNone), for logs.
const char* ActivationName(Activation a);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_PASSES_ACTIVATIONS_FLOAT_H_
