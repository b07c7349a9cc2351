// A Loop decided on the device (docs/toolchain.md "Control flow",
// docs/bundle-format.md "Segment program"): its body is compiled once and run
// as a device segment once per iteration. In the IR such a loop is two
// internal nodes around the body's nodes, which read the loop's values
// through the first and are read through the second:
//
//   _LoopBegin  inputs  [trip count M ("" when none), initial condition,
//                        initial loop-carried values...]
//               outputs [iteration number (int64 []), condition (bool []),
//                        loop-carried values as the body reads them...]
//   _LoopEnd    inputs  [the body's condition, the body's loop-carried
//                        results..., the body's scan slices..., the
//                        _LoopBegin's condition output (a link: the
//                        _LoopBegin stays alive and reachable even when
//                        the body reads none of its values)]
//               outputs [the final loop-carried values..., the scan
//                        outputs ([iterations run] + slice shape)...]
//
// Both carry _loop (the ONNX node's name) and _loop_states (the number of
// loop-carried values). The body is every node that reads a _LoopBegin
// output, directly or through other body nodes, up to the _LoopEnd; nodes
// that read only values from outside the loop are computed once, before
// it. A single _LoopEnd keeps the body alive for dead-code elimination even
// when no later node reads a loop-carried result.
//
// The driver (driver/loop_symbols.h) gives each loop three decided symbols
// and sets on both nodes the attributes _loop_trip, _loop_count and
// _loop_cond (their indices in SymContext::Current()), _loop_count_value
// (the count at the point being compiled) and _loop_cap (the largest
// number of iterations); without them (the driver's own search) the scan
// outputs are planned at config.json "limits" max_loop_iterations.
#ifndef OAAXVK_TOOLCHAIN_IR_LOOP_NODES_H_
#define OAAXVK_TOOLCHAIN_IR_LOOP_NODES_H_

#include <cstdint>
#include <vector>

#include "oaax_vulkan/status.h"
#include "toolchain/ir/graph.h"

namespace oaaxvk::toolchain {

inline bool IsLoopNode(const Node& n) { return n.op_type == "_LoopBegin" || n.op_type == "_LoopEnd"; }

// Replaces the placeholder nodes that import/control_flow.cpp writes for a
// device loop (nodes with the attributes _loop and _loop_slot) by one
// _LoopBegin, where the first placeholder of the loop was, and one _LoopEnd,
// where its last was. Fails (Internal) on an incomplete set of placeholders.
Status MergeLoopPlaceholders(Graph& g);

// Shape inference of _LoopBegin / _LoopEnd. Fails naming the Loop when a
// loop-carried value's shape or type after the body differs from the one
// it enters with (such a value would need a different buffer per iteration).
Status InferLoopNodeShapes(Graph& g, Node& n);

// The body of each device loop: for node index b of every _LoopBegin, the
// indices of its body's nodes in graph order (see above), in `body[b]`, and
// in `end[b]` the index of its _LoopEnd (-1 when none is reached). Fails
// naming the Loop when another device loop lies inside the body.
Status FindLoopBodies(const Graph& g, std::vector<std::vector<size_t>>* body, std::vector<int64_t>* end);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_IR_LOOP_NODES_H_
