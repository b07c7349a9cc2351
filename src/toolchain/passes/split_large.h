// Splitting of weights larger than one device binding.
//
// A kernel reads each tensor through one storage-buffer binding, and a
// binding covers at most maxStorageBufferRange bytes (2^27 on lavapipe, the
// smallest of the devices this project targets). A fully connected layer such
// as VGG-16's 25088 x 4096 float weight (411 MB) cannot be bound whole, so
// this pass rewrites the node into several nodes over slices of the weight
// whose results are concatenated; every slice is at most
// ConversionLimits::max_binding_bytes (ir/limits.h, config.json "limits").
//
// What is split (along the output axis, so each piece is the same operator
// on a slice of the weight and the results are exact, not re-associated):
//   Gemm   with a constant float B: along N (B's columns, or rows when
//          transB); a constant bias C with N columns is sliced with it.
//   MatMul with a constant float B of rank >= 2: along N (B's last axis).
//   Conv   (group 1) with a constant float W: along the output channels
//          (W's axis 0) and the bias with them.
// Fused activations stay on every piece (they are elementwise); a Conv's fused
// residual becomes an Add after the Concat that carries the activation.
// Anything else larger than a binding is refused later by the memory plan
// (plan/plan.h), naming the tensor, its size and the limit.
#ifndef OAAXVK_TOOLCHAIN_PASSES_SPLIT_LARGE_H_
#define OAAXVK_TOOLCHAIN_PASSES_SPLIT_LARGE_H_

#include "toolchain/ir/graph.h"
#include "toolchain/passes/passes.h"

namespace oaaxvk::toolchain {

// Rewrites every Gemm / MatMul / Conv above whose constant weight exceeds
// CurrentLimits().max_binding_bytes (bytes as the device stores it: 4 per
// element). Fails when such a weight cannot be split along its output axis
// (a single output column or channel is already over the limit, a grouped
// Conv, a non-constant bias that would need slicing), naming the node, the
// tensor, its size and the limit.
Status SplitLargeWeights(Graph& g, PassResult* r);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_PASSES_SPLIT_LARGE_H_
