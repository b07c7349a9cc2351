// Decided symbols of the Loops decided on the device (ir/loop_nodes.h,
// docs/toolchain.md "Control flow", docs/bundle-format.md "Segment
// program"). Each device loop `l` gets three, set by the control program:
//   "l/trip_count"  [0, cap]  the trip count (read back, or set from a
//                             constant or an expression of symbols);
//   "l/iterations"  [0, cap]  the iterations started: t + 1 during
//                             iteration t, the number run after the loop;
//                             the scan outputs' leading extent;
//   "l/cond"        [0, 1]    the loop condition (read back).
// cap: the trip count when it is a constant (a body that may end the loop
// early), or when it folds to one once the passes ran on the model with
// every data-dependent extent at its planned largest value (a count of
// detections: its largest value), at most config.json "limits"
// "max_loop_iterations", which is the cap of any other trip count. A trip
// count that would exceed its cap at run time fails the frame naming the
// Loop.
#ifndef OAAXVK_TOOLCHAIN_DRIVER_LOOP_SYMBOLS_H_
#define OAAXVK_TOOLCHAIN_DRIVER_LOOP_SYMBOLS_H_

#include <set>
#include <string>
#include <vector>

#include "oaax_vulkan/status.h"
#include "toolchain/ir/dim.h"
#include "toolchain/ir/graph.h"

namespace oaaxvk::toolchain {

// The symbols above for every _LoopBegin of `g` (the model imported at the
// maximum), in graph order, three per loop.
std::vector<Symbol> FindDecidedLoops(const Graph& g);

// Gives the _LoopBegin and _LoopEnd of every device loop of `g` (imported
// at `point` of `symbols`) the attributes of ir/loop_nodes.h: _loop_trip,
// _loop_count, _loop_cond (indices in `symbols`), _loop_count_value and
// _loop_cap; adds the symbols' names to `used`. Fails (Internal) when a
// loop's symbols are missing.
Status AnnotateDecidedLoops(Graph& g, const std::vector<Symbol>& symbols, const std::vector<int64_t>& point,
                            std::set<std::string>* used);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_DRIVER_LOOP_SYMBOLS_H_
