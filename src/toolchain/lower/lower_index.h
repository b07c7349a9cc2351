// Lowering of the indexing and scanning operators of issue 5 (GatherElements,
// GatherND, ScatterElements/Scatter, ScatterND, CumSum, TopK, Pad, MaxPool
// with Indices) to the kernels gather_elements, gather_nd, scatter_elements,
// scatter_nd, cumsum, topk, pad and maxpool_indices (shaders/). Values are
// 32-bit words in the compute formats of lower_int.h (float32 or int32);
// indices are int32 (int64 indices are narrowed at the graph boundary).
//
// Index semantics: negative indices count from the end of their axis. An index
// still out of range after that is rejected at conversion when the indices
// are a constant; at run time the kernels never access memory out of bounds:
// gathers yield 0 and scatters ignore the update. Scatters are deterministic
// (no atomics): a strided_copy dispatch copies the data into the output, then
// the scatter kernel applies the updates in index order, each invocation
// owning a disjoint set of output elements (O(numel(updates)) work).
//
// Long axes: no invocation loops more than kLoopBudget times
// (loop_budget.h). CumSum, TopK, NonZero and Compress split long axes over
// workgroups, segments (several dispatches in order) and passes that share
// scratch values (IndexLowering::scratch_words); Unique beyond a few hundred
// slices sorts the slice indices in merge passes over many workgroups
// (shaders/unique_sort.comp and the passes after it).
#ifndef OAAXVK_TOOLCHAIN_LOWER_LOWER_INDEX_H_
#define OAAXVK_TOOLCHAIN_LOWER_LOWER_INDEX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "toolchain/ir/graph.h"
#include "toolchain/lower/kernels.h"

namespace oaaxvk::toolchain {

// One dispatch: `inputs` (tensor names) are bound read-only at bindings
// 0..k-1, then the node outputs listed in `outputs` (indices into
// Node::outputs) are bound written. `units`: invocations of a 1-D 256-wide
// grid.
struct IndexDispatch {
  std::string kernel;
  std::vector<std::string> inputs;
  std::vector<size_t> outputs;
  std::vector<Dim> spec;
  Dim units = 0;
  std::string detail;
  // Sizes computed from run-time input values on purpose (feature
  // value_symbols): the lowering derived every value-dependent group count
  // and specialization value as an expression, with no choice made on the
  // conversion's placeholder values (Dispatch::value_sizes).
  bool value_sizes = false;
  // CPU-class variant (Dispatch::cpu_kernel; same bindings and spec values):
  // empty = none; else that kernel on a 1-D grid of cpu_groups workgroups.
  std::string cpu_kernel{};
  Dim cpu_groups = 0;
  // Scratch values (IndexLowering::scratch_words) bound after the outputs,
  // read and written.
  std::vector<size_t> scratch{};
};

struct IndexLowering {
  bool handled = false;  // false: not a node handled here
  std::vector<IndexDispatch> dispatches;
  // int32 arena values the dispatches share and nothing else reads (a
  // multi-pass kernel's state), by size in words.
  std::vector<Dim> scratch_words{};
};

// Lowers `n` when it is one of IndexDeviceOps() (shape_infer_index.h) or a
// MaxPool with an Indices output. Errors (Unimplemented / InvalidArgument)
// name the node: non-device data types, float indices, rank above 6,
// constant indices out of range, missing outputs.
StatusOr<IndexLowering> LowerIndexNode(const Graph& g, const Node& n);

// Appends the kernel-table rows (KernelInfo) of the kernels above.
void AppendIndexKernels(std::vector<KernelInfo>* table);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_LOWER_LOWER_INDEX_H_
