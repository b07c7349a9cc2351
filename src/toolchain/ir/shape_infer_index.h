// Shape inference for the indexing and scanning operators of issue 5:
// GatherElements, GatherND, ScatterElements (and its deprecated alias
// Scatter), ScatterND, CumSum, TopK, Pad, and MaxPool when its optional
// Indices output is used. Kernels: src/toolchain/lower/lower_index.cpp.
#ifndef OAAXVK_TOOLCHAIN_IR_SHAPE_INFER_INDEX_H_
#define OAAXVK_TOOLCHAIN_IR_SHAPE_INFER_INDEX_H_

#include <set>
#include <string>

#include "toolchain/ir/graph.h"

namespace oaaxvk::toolchain {

// Operators whose shapes InferIndexNodeShapes handles and that run on the
// device (MaxPool is a DeviceOps() member and not listed here).
const std::set<std::string>& IndexDeviceOps();

// Sets the output dtypes/shapes of `n` when it is one of IndexDeviceOps() or a
// MaxPool with an Indices output, and returns true in *handled. Parameters
// are resolved into attributes for lowering: "_axis" (non-negative),
// "_k" (TopK), "_mode" (Pad: 0 constant, 1 reflect, 2 edge), "_reduction" (scatter:
// 0 none, 1 add, 2 mul, 3 max, 4 min). Shape-determining inputs (CumSum axis,
// TopK K, Pad pads/axes) must be compile-time constants or run-time values
// (feature value_symbols); errors name the node.
Status InferIndexNodeShapes(Graph& g, Node& n, bool* handled);

// Pad's amounts for an input of rank `rank`: 2 * rank Dims, the begins then
// the ends of every dimension (0 for dimensions not in `axes`), from the
// `pads` attribute (opset < 11) or the constant `pads` / `axes` inputs. Pads
// read at run time (feature value_symbols) keep their expressions. Errors
// name the node (a pads length that does not match the axes, an axis out of
// range, a non-constant input).
StatusOr<std::vector<Dim>> PadAmounts(const Graph& g, const Node& n, int64_t rank);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_IR_SHAPE_INFER_INDEX_H_
