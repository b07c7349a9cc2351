// Static shape inference on the IR and the operator support table.
#ifndef OAAXVK_TOOLCHAIN_IR_SHAPE_INFER_H_
#define OAAXVK_TOOLCHAIN_IR_SHAPE_INFER_H_

#include <string>
#include <vector>

#include "toolchain/ir/graph.h"

namespace oaaxvk::toolchain {

// True when the default-domain operator `op_type` is accepted by the
// toolchain (lowered to a kernel, handled as a view, removed, or folded to a
// constant at compile time). `fold_only` is set for operators that must
// disappear through constant folding (Shape, Gather, Slice, Cast, ...).
bool IsSupportedOp(const std::string& domain, const std::string& op_type, bool* fold_only = nullptr);

// The accepted operator names, sorted (for messages and docs).
std::vector<std::string> SupportedOps();

// Right-aligned numpy broadcast of two shapes; fails naming both shapes.
StatusOr<Shape> BroadcastShapes(const Shape& a, const Shape& b);
// Element strides of `in` (row-major) broadcast to `out` (same or lower rank,
// right-aligned); 0 on broadcast dimensions. Result has out.size() entries.
std::vector<Dim> BroadcastStrides(const Shape& in, const Shape& out);
// Row-major element strides of `s`.
std::vector<Dim> DenseStrides(const Shape& s);

// Axes read at run time (feature value_symbols) for a tensor of rank r: per
// dimension 1 when one of `axes` names it, else 0 (expressions); adds the
// guards that every axis lies in [-r, r - 1] and none repeats, with `who`
// (e.g. "Squeeze 'sq'") in their texts. Fails only when a guard is
// constant false.
StatusOr<std::vector<Dim>> AxesByValue(const std::vector<Dim>& axes, int64_t r, const std::string& who);
// The dimensions of `x` whose `dropped` flag (0/1 expressions, one per
// dimension) is 0, in order: out_rank expressions (dimension j is the j-th
// kept one).
Shape KeptDims(const Shape& x, const std::vector<Dim>& dropped, int64_t out_rank);

// Slice whose starts / ends / axes / steps depend on run-time value symbols
// (feature value_symbols): per dimension of the input `x`, the first index,
// the step and the output extent as expressions (ONNX clamping, negative
// starts/ends counting from the end, negative steps), plus guards (no zero
// step, no repeated axis) in the current SymContext. Reports whether any
// bound depends on a value symbol (false: use the constant path).
StatusOr<bool> SliceByValue(const Graph& g, const Node& n, const Shape& x, std::vector<Dim>* start,
                            std::vector<Dim>* step, std::vector<Dim>* len);

// Computes dtype and static shape of every output of `n` from its inputs
// (constant inputs are read for Reshape shapes, Slice bounds, ...). Also
// normalizes Conv / pooling padding into attribute "_pads" = [top, left,
// bottom, right]. Fails with a message naming the node.
Status InferNodeShapes(Graph& g, Node& n);
// InferNodeShapes over all nodes in order.
Status InferShapes(Graph& g);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_IR_SHAPE_INFER_H_
