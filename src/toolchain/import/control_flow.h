// Control flow at import (docs/toolchain.md "Control flow"): If, Loop and
// Scan are rewritten into plain nodes of the main ONNX graph before it is
// converted, so the rest of the toolchain never sees a subgraph.
//
//   If     a condition known at conversion (an initializer, a Constant node,
//          or an input bound by config.json "input_values") inlines the taken
//          branch; a condition read at run time inlines both branches and
//          selects each output with Where(cond, then, else), which needs the
//          branches' outputs to have equal shapes (checked after shape
//          inference: node attribute `_if_select`).
//   Scan   (opset 8 with an empty sequence_lens, and 9+) unrolled over the
//          scan inputs' static extent: each iteration gathers its slices,
//          runs the body, and the scan outputs are the iterations' results
//          stacked along their axes (either direction).
//   Loop   unrolled when the trip count is known at conversion and the loop
//          condition provably stays true (no condition, or a constant true
//          one, and a body that passes its condition through unchanged or
//          returns a constant true); the scan outputs stack the iterations.
//          A run-time trip count or condition is refused naming the node.
//
// Subgraph tensors and nodes get names prefixed with the node's name and the
// iteration ("<node>/then/", "<node>/3/"); references to the outer scope
// keep their names. Nested control flow is rewritten the same way. At most
// kMaxUnrolledIterations iterations per node and kMaxInlinedNodes nodes in
// total, beyond which the node is refused (clear message, no hang).
#ifndef OAAXVK_TOOLCHAIN_IMPORT_CONTROL_FLOW_H_
#define OAAXVK_TOOLCHAIN_IMPORT_CONTROL_FLOW_H_

#include <onnx/onnx_pb.h>

#include <set>
#include <string>

#include "oaax_vulkan/status.h"
#include "toolchain/input/config.h"

namespace oaaxvk::toolchain {

constexpr int64_t kMaxUnrolledIterations = 1024;
constexpr size_t kMaxInlinedNodes = 100000;

// Rewrites every If / Loop / Scan of `model`'s main graph (values of
// `bound` count as known at conversion). `selects` receives the names of the
// Where nodes that select a run-time If's outputs. Errors (Unimplemented /
// InvalidArgument) name the node and the reason.
Status InlineControlFlow(onnx::ModelProto& model, const InputValues& bound, std::set<std::string>* selects);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_IMPORT_CONTROL_FLOW_H_
