// Values read back inside the body of a Loop run on the device (docs/toolchain.md
// "Control flow", "Values read back inside a loop body"; ir/loop_nodes.h).
//
// A body may size its tensors from device data: Mask R-CNN's
// paste_masks_in_image resizes each detection's mask to its box's size
// (Resize `sizes` computed from the box's coordinates), then pastes it by
// Slice bounds and ConstantOfShape shapes computed from them. Such a value
// is a small integer tensor (at most kMaxLoopReadElements elements) that a
// body node extracts from device data (a Gather of one box by the iteration
// number, a Cast of a computed float), read by shape arithmetic that
// reaches a shape input (Resize sizes, Slice starts / ends, Reshape /
// Expand / ConstantOfShape shapes, Pad pads, ...).
//
// Each element of such a tensor T becomes a decided symbol
// "<T>/value[<j>]" (Symbol::decided) with the range [-L, L], L being
// config.json "limits" "max_loop_read_value". In the graph an internal node
//
//   _LoopRead  inputs [T]  outputs none
//              attributes _read_value (the name of T#read), _read_syms
//              (the symbols' indices, one per element), _read_values
//              (their values at the point being compiled), _loop (the
//              Loop's name), _read_node (T's producer)
//
// follows T's producer (dead-code elimination keeps it), and every reader
// of T reads T#read instead: a constant whose elements are the symbols
// (Tensor::sym; no node produces it), so the shape
// arithmetic after it folds into expressions of them and every later
// dispatch of the body is sized by the shape program per iteration. The
// lowering ends a device segment right after T is computed and the control
// program reads the elements back into the symbols (refusing a value
// outside [-L, L], naming the node) before the rest of the body runs; the
// memory plan holds every size at its largest over the range.
#ifndef OAAXVK_TOOLCHAIN_IR_LOOP_READS_H_
#define OAAXVK_TOOLCHAIN_IR_LOOP_READS_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "oaax_vulkan/status.h"
#include "toolchain/ir/dim.h"
#include "toolchain/ir/graph.h"

namespace oaaxvk::toolchain {

// The most elements a value read back inside a loop body may have (a box,
// a Resize `sizes`): one host read each per iteration.
inline constexpr int64_t kMaxLoopReadElements = 8;

// The decided symbols of every such value in the device loops of `g` (the
// model imported at the maximum, before the passes), in graph order, one
// per element, each with range [-L, L] (L = max_loop_read_value).
std::vector<Symbol> FindLoopReads(const Graph& g);

// Inserts the _LoopRead node of every value whose symbols FindLoopReads
// named (found in `symbols` by name; `point` gives their values) into `g`
// (the model imported at that point) and adds the names to `used`. Fails
// (Internal) when a value named by a symbol is missing or has another
// number of elements.
Status InsertLoopReads(Graph& g, const std::vector<Symbol>& symbols, const std::vector<int64_t>& point,
                       std::set<std::string>* used);

// Shape inference of _LoopRead: (re)makes T#read, an integer constant of T's type
// and shape whose elements are the symbols (at the values _read_values).
// Fails naming the node when T is not a static integer tensor of one
// element per symbol, or when no SymContext holds the symbols.
Status InferLoopReadShape(Graph& g, Node& n);

// Whether `t`'s shape or constant values (Tensor::sym) read any of the
// symbols `syms` (indices in SymContext::Current()): a node reading such a
// tensor belongs to the loop body whose _LoopRead sets them.
bool ReadsSymbols(const Tensor& t, const std::set<int64_t>& syms);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_IR_LOOP_READS_H_
