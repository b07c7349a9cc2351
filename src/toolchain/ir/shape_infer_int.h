// Shape inference for the integer / logic / indexing operators of issue 5
// (comparison, logic, Where, BitShift, Mod, Expand, CastLike, ArgMax/ArgMin).
#ifndef OAAXVK_TOOLCHAIN_IR_SHAPE_INFER_INT_H_
#define OAAXVK_TOOLCHAIN_IR_SHAPE_INFER_INT_H_

#include <set>
#include <string>

#include "toolchain/ir/graph.h"

namespace oaaxvk::toolchain {

// Operators whose shapes InferIntNodeShapes handles and that run on the device.
const std::set<std::string>& IntDeviceOps();

// Device data types: float32 (also carries float64) and int32 (also carries
// int64, int16/uint16, int8/uint8 and bool as 0/1). False for the others.
bool IsDeviceDType(DType t);
// True when the device compute format of `t` is float32.
bool IsFloatLike(DType t);

// Sets the output dtype/shape of `n` when it is one of IntDeviceOps() and
// returns true in *handled; errors name the node.
Status InferIntNodeShapes(Graph& g, Node& n, bool* handled);

// Whether `n` is the Where selecting an If's branches (node attribute
// _if_select, import/control_flow.h) whose branches give an output of one
// rank and type but different shapes, and whose condition is a constant of
// one element: a number, or an expression of the symbols (Tensor::sym, e.g.
// the Size of a tensor sized by data-dependent extents compared with 0)
// that the shape program computes. Such a selection needs no readback: its
// output has the taken branch's shape (cond ? then : else along each
// differing axis) and the lowering copies the taken branch.
bool IfSelectionWithKnownCondition(const Graph& g, const Node& n);
// The condition of such a selection as a size that is 1 (then) or 0 (else).
Dim IfConditionDim(const Tensor& cond);
// Whether `n` is an If's selection (as above) whose branches give shapes
// that differ only by leading 1s ([] and [1]: the same elements in the same
// order), with a condition of one element. Shape inference gives its output
// the larger rank and a plain Where selects the elements.
bool IsLeadingOnesSelection(const Graph& g, const Node& n);
// For such a selection, once every shape is inferred: OK when every reader
// of the output (through Identity) is a broadcasting elementwise operator
// with another input of at least the larger rank, so either branch's rank
// gives the same result; otherwise the error that the branches differ,
// naming the node and saying to bind the condition.
Status CheckLeadingOnesSelection(const Graph& g, const Node& n);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_IR_SHAPE_INFER_INT_H_
