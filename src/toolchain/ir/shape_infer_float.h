// Float-operator extension of the toolchain's shape inference (issue 5):
// elementwise math functions (lowered as activation codes), LogSoftmax and
// Hardmax (the softmax kernel) and the Reduce* family over any set of axes.
// Registered from shape_infer.cpp.
#ifndef OAAXVK_TOOLCHAIN_IR_SHAPE_INFER_FLOAT_H_
#define OAAXVK_TOOLCHAIN_IR_SHAPE_INFER_FLOAT_H_

#include <set>
#include <string>

#include "toolchain/ir/graph.h"

namespace oaaxvk::toolchain {

// Device operators (float32) added by this extension.
const std::set<std::string>& FloatDeviceOps();
// ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare.
bool IsReduceOp(const std::string& op_type);
// Infers the output of a node whose op is in FloatDeviceOps(); sets
// *handled = false (and returns Ok) for any other op. Reduce nodes get the
// normalized, sorted attribute `_axes` (the reduced input axes; empty = none).
Status InferFloatNodeShapes(Graph& g, Node& n, bool* handled);
// Reduce* whose axes input is read at run time (feature value_symbols; the
// node then has `_axes_by_value` = 1 instead of `_axes`): per input dimension
// (`rank` of them) 1 when an axis names it, else 0, as expressions; adds the
// guard that no axis repeats. Fails when `n`'s axes do not depend on a value.
StatusOr<std::vector<Dim>> ReducedByValue(const Graph& g, const Node& n, int64_t rank);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_IR_SHAPE_INFER_FLOAT_H_
