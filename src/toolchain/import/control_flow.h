// Control flow at import (docs/toolchain.md "Control flow"): If, Loop and
// Scan are rewritten into plain nodes of the main ONNX graph before it is
// converted, so the rest of the toolchain never sees a subgraph.
//
//   If     a condition known at conversion (an initializer, a Constant node,
//          an input bound by config.json "input_values", or Equal / Not /
//          Cast of such values and of Gather(Shape(x), c) where ONNX's
//          inferred shape of x has dimension c static) inlines the taken
//          branch; a condition read at run time inlines both branches and
//          selects each output with Where(cond, then, else) (node
//          attribute `_if_select`); a condition that folds into an
//          expression of the symbols selects in the shape program
//          (ir/shape_infer_int.h IfSelectionWithKnownCondition), branch
//          outputs of different static shapes make that Where a segment
//          program's selection instead (driver/dynamic.h
//          FindDecidedSymbols, docs/toolchain.md "Control flow"), any
//          other difference is refused after shape inference.
//   Scan   (opset 8 with an empty sequence_lens, and 9+) unrolled over the
//          scan inputs' static extent: each iteration gathers its slices,
//          runs the body, and the scan outputs are the iterations' results
//          stacked along their axes (either direction).
//   Loop   unrolled when the trip count is known at conversion and the loop
//          condition provably stays true (no condition, or a constant true
//          one, and a body that passes its condition through unchanged or
//          returns a constant true); the scan outputs stack the iterations.
//          A trip count read at run time with a range unrolls to the
//          range's maximum, masked (see InlineControlFlow). Any other
//          Loop (a trip count or condition only the device knows, a body
//          that computes its condition, no trip count) is inlined once
//          between placeholder nodes that ir/loop_nodes.h turns into
//          _LoopBegin / _LoopEnd: it runs on the device, its body a
//          segment run once per iteration.
//
// Sequences and optionals are compiled away in the same pass: each is a
// list of tensor names known at conversion. SequenceEmpty / Construct /
// Insert / Erase / At / Length, SplitToSequence, ConcatFromSequence,
// SequenceMap (its body inlined per element), Optional, OptionalHasElement,
// OptionalGetElement and Identity rewrite into plain nodes (Identity, Slice,
// Gather, Concat, Unsqueeze, constants); positions and split sizes must be
// known at conversion. A run-time If selecting between two sequences selects
// element by element (equal lengths needed); between an empty and a full
// optional it is refused. Sequence graph inputs become tensor inputs
// "x[0]", "x[1]", ... (length and shapes from config.json), an optional
// tensor input a tensor input of its name (absent when config.json says
// null); outputs likewise (an empty optional output is left out).
//
// Subgraph tensors and nodes get names prefixed with the node's name and the
// iteration ("<node>/then/", "<node>/3/"); references to the outer scope
// keep their names. Nested control flow is rewritten the same way. At most
// kMaxUnrolledIterations iterations per node and kMaxInlinedNodes nodes in
// total, beyond which the node is refused (clear message, no hang).
#ifndef OAAXVK_TOOLCHAIN_IMPORT_CONTROL_FLOW_H_
#define OAAXVK_TOOLCHAIN_IMPORT_CONTROL_FLOW_H_

#include <onnx/onnx_pb.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "oaax_vulkan/status.h"
#include "toolchain/input/config.h"

namespace oaaxvk::toolchain {

constexpr int64_t kMaxUnrolledIterations = 1024;
constexpr size_t kMaxInlinedNodes = 100000;

// What config.json says of the sequence and optional graph inputs.
struct CompoundInputs {
  // Sequence input -> number of elements; -1: an empty optional.
  std::map<std::string, int64_t> lengths;
  // Element "x[i]" of a sequence input, or an optional tensor input that
  // holds its element -> its shape (every dimension >= 1).
  std::map<std::string, std::vector<int64_t>> shapes;
};

// Rewrites every If / Loop / Scan and every sequence and optional of
// `model`'s main graph, inputs and outputs (values of `bound` count as known
// at conversion, except those named in `run_time_values`: inputs whose
// elements are run-time value symbols, imported at one sample value, each
// with the range [min, max] of its value when it is a single integer or
// bool; min > max otherwise). A Loop whose trip count is such a single
// value is unrolled to the range's maximum, each iteration's state update
// masked by iteration < trip count (Where), the scan outputs sliced to the
// trip count; a run-time condition that the body passes through masks too.
// With scan outputs that may see no iteration (a range holding 0 or false)
// the Loop runs on the device instead (see Loop above).
// `selects` receives the names of the Where nodes that select
// a run-time If's outputs. Errors (Unimplemented / InvalidArgument) name the
// node (or graph input) and the reason.
Status InlineControlFlow(onnx::ModelProto& model, const InputValues& bound,
                         const std::map<std::string, std::pair<int64_t, int64_t>>& run_time_values,
                         const CompoundInputs& compound_inputs,
                         std::set<std::string>* selects);

// Whether `model` has anything InlineControlFlow rewrites.
bool HasControlFlowOrSequences(const onnx::ModelProto& model);

// Whether (domain, op_type) is an operator InlineControlFlow compiles away.
bool IsInlinedOp(const std::string& domain, const std::string& op_type);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_IMPORT_CONTROL_FLOW_H_
