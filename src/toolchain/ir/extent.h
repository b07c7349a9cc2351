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
// corresponding axis. Every other reader is refused here; the conversion
// driver then turns the extent into a decided symbol read back from the
// device (DecidedExtentDim, driver/dynamic.h FindDecidedExtents), so that
// the reader sees a symbolic dimension instead.
#ifndef OAAXVK_TOOLCHAIN_IR_EXTENT_H_
#define OAAXVK_TOOLCHAIN_IR_EXTENT_H_

#include <string>
#include <vector>

#include "toolchain/ir/dim.h"
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

// A refusal of PropagateExtent: the extent tensor, the node writing it
// (empty when no node does) and the planned extent of that node's output 0
// along its data-dependent axis (0 when not static).
struct RefusedExtent {
  std::string extent, producer;
  int64_t planned = 0;
};

// While alive, every refusal of PropagateExtent on this thread is appended
// to refused() (the last one is the refusal a failing pass returned; with
// keep_going, PropagateExtent records it and succeeds instead, leaving the
// reader's outputs without an extent, so one run of the passes sees every
// refusal; such a graph is for this search only, never compiled). Used
// by the driver to find the extents that must become decided symbols
// (driver/dynamic.h FindDecidedExtents). Scopes nest; not shared between
// threads.
class ExtentRefusalRecorder {
 public:
  explicit ExtentRefusalRecorder(bool keep_going = false);
  ~ExtentRefusalRecorder();
  ExtentRefusalRecorder(const ExtentRefusalRecorder&) = delete;
  ExtentRefusalRecorder& operator=(const ExtentRefusalRecorder&) = delete;
  const std::vector<RefusedExtent>& refused() const { return refused_; }

 private:
  std::vector<RefusedExtent> refused_;
  std::vector<RefusedExtent>* outer_;
  bool outer_keep_going_;
};

// The extent of a data-dependent operator's output (NonZero, Compress,
// NonMaxSuppression) that the driver turned into a decided symbol (node
// attributes _decided_extent: the symbol's index in SymContext::Current(),
// _decided_value: its value at the point being compiled; set by the
// driver, docs/toolchain.md "Data-dependent extents"): that symbol, read
// back from the extent tensor between segments. `planned` (the largest
// extent) when the node has no such attribute, the index is -1 (the
// driver's search for such extents) or no SymContext holds the decided
// symbol; the lowering refuses a node with the attribute whose extent is
// not a decided symbol.
Dim DecidedExtentDim(const Node& n, const Dim& planned);

// Whether `d` is an expression of a decided symbol (SymContext::Current()).
// Such a size is 0 at the start of every frame (a decided symbol starts at
// its minimum until the segment program sets it), so a guard on it would
// fail there; an extent read back may be 0, and a size built from it
// (a Range, a ConstantOfShape of that length) may be empty.
bool ReadsDecidedSymbol(const Dim& d);
// Whether any of `v` (a constant's Tensor::sym) reads a decided symbol: a
// value only the segment program knows, which kernels take as a run-time
// value (a TopK K, a Range bound) while shape arithmetic on it still folds.
bool AnyReadsDecidedSymbol(const std::vector<Dim>& v);
// Whether any of `v` reads a run-time value symbol of a graph input
// (Symbol::is_value).
bool AnyReadsInputValue(const std::vector<Dim>& v);

// Adds, for every graph output with a data-dependent extent that has none
// yet, the hidden graph output "<name>#extent" (GraphIO::count_for /
// count_axis) reading its extent tensor; the runtime returns the output at
// that extent and does not return the hidden one. Idempotent.
void AddExtentOutputs(Graph& g);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_IR_EXTENT_H_
