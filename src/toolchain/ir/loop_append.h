// A device loop's loop-carried value that only collects the iterations'
// results (ir/loop_nodes.h): it enters empty, [0, ...], and each iteration
// appends one [1, ...] slice, as torchvision's paste_masks_in_image builds
// `res_append = torch.cat((res_append, mask[None]))` and PyTorch exports a
// list appended in a loop. Its shape grows, so it cannot live in one
// loop-carried buffer; it is exactly the stack of the appended slices, a
// scan output, which the device loop plans at its cap and sizes by the
// iterations run.
#ifndef OAAXVK_TOOLCHAIN_IR_LOOP_APPEND_H_
#define OAAXVK_TOOLCHAIN_IR_LOOP_APPEND_H_

#include "oaax_vulkan/status.h"
#include "toolchain/ir/graph.h"

namespace oaaxvk::toolchain {

// Rewrites, in every _LoopBegin / _LoopEnd pair of `g`, each loop-carried
// value whose initial value has a static leading extent 0, that the body
// reads only as the first input of one Concat along axis 0 of two inputs,
// and whose body result is that Concat (read by nothing else), into a
// scan output: the Concat becomes a Squeeze of its second input along
// axis 0 (its leading extent must be 1, which shape inference checks), the
// slice of a new scan output that takes the loop-carried value's final
// output name. Leaves every other loop-carried value alone.
Status StackAppendedLoopStates(Graph& g);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_IR_LOOP_APPEND_H_
