// Checks that run before ONNX shape inference, for inputs that make ONNX's
// shape inference (Debian's libonnx 1.12 at least; kept for every linked
// release) read out of bounds or through a null pointer instead of failing (found by tests/fuzz/onnx_import_fuzzer): convolution and pooling
// nodes whose weight rank, input rank and window attributes disagree
// (onnx::convPoolShapeInference indexes `dilations` and `strides` by the
// weight's spatial rank, and dereferences the weight's type unchecked).
// Each refusal names the node, what disagrees and the ONNX rule.
#ifndef OAAXVK_TOOLCHAIN_IMPORT_ONNX_GUARDS_H_
#define OAAXVK_TOOLCHAIN_IMPORT_ONNX_GUARDS_H_

#include "oaax_vulkan/status.h"

namespace onnx {
class GraphProto;
}

namespace oaaxvk::toolchain {

// Conv, ConvTranspose, ConvInteger, QLinearConv, MaxPool, AveragePool,
// LpPool (and the same in every subgraph): the data input X has rank >= 3
// when its rank is known; the weight W of a convolution is known before
// inference (an initializer, a graph input with a shape, or a node output)
// and, when its rank is known, has X's rank; `kernel_shape`, `strides`,
// `dilations` have rank - 2 entries and `pads` 2 * (rank - 2); pooling nodes
// carry `kernel_shape`. Ranks come from graph inputs, initializers and
// value_info. InvalidArgument naming the node otherwise.
Status CheckShapeInferenceGuards(const onnx::GraphProto& graph);

// Every name the bundle may carry (the graph's name, node names, tensor
// names, symbolic dimensions, in every subgraph too) is well-formed UTF-8, as ONNX strings are
// (ONNX IR "Names Within a Graph"); the bundle stores them as UTF-8 and the
// runtime refuses anything else. InvalidArgument naming the place otherwise.
Status CheckNamesAreUtf8(const onnx::GraphProto& graph);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_IMPORT_ONNX_GUARDS_H_
