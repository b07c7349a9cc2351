// Data-dependent extents through the graph (bundle feature
// data_dependent_outputs; docs/toolchain.md "Data-dependent extents").
//
// NonZero, Compress with a run-time condition and NonMaxSuppression write a
// result whose extent along one axis only the device knows: the tensor is
// planned at its largest shape, Tensor::data_dependent_axis names the axis
// and Tensor::extent the int32 [1] tensor the device writes the extent into.
// Operators that work position by position along that axis read such a
// tensor as if it had its planned extent: the rows past the extent hold
// values nobody returns, and the result has the same extent along the
// corresponding axis. Every other reader is refused at conversion.
#ifndef OAAXVK_TOOLCHAIN_IR_EXTENT_H_
#define OAAXVK_TOOLCHAIN_IR_EXTENT_H_

#include "toolchain/ir/graph.h"

namespace oaaxvk::toolchain {

// Called after `n`'s outputs were inferred: when an input of `n` has a
// data-dependent extent, gives the outputs that extent along the axis that
// corresponds to it, or fails (Unimplemented, naming the node, the input and
// the axis) when `n` does not keep rows apart along it. Readers that keep
// the extent:
//   - elementwise operators (unary, and broadcasting ones whose other inputs
//     have extent 1 along that axis), Cast, Where, Clip;
//   - Gather / GatherElements / GatherND (batch_dims 0) reading such a tensor
//     as indices (not along the last GatherND index axis), and Gather of
//     such data along another axis;
//   - Slice leaving the axis whole, Concat of tensors with the same extent
//     along another axis, Transpose, and Reshape / Flatten / Squeeze /
//     Unsqueeze that keep the axis with the same elements before and after it.
// Nodes without such an input are left alone.
Status PropagateExtent(Graph& g, const Node& n);

// Adds, for every graph output with a data-dependent extent that has none
// yet, the hidden graph output "<name>#extent" (GraphIO::count_for /
// count_axis) reading its extent tensor; the runtime returns the output at
// that extent and does not return the hidden one. Idempotent.
void AddExtentOutputs(Graph& g);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_IR_EXTENT_H_
