// The error text for an input whose value the conversion needs (a Reshape
// target, Pad pads, Resize sizes, ...) but cannot compute: it says what the
// value is computed from and which config.json entry (or re-export) makes
// the model convert. Tools that bind graph inputs at conversion recognize
// "input '<name>' is not a compile-time constant" and "; it is computed
// from graph input '<x>'".
#ifndef OAAXVK_TOOLCHAIN_IR_NOT_CONSTANT_H_
#define OAAXVK_TOOLCHAIN_IR_NOT_CONSTANT_H_

#include <string>

#include "toolchain/ir/graph.h"

namespace oaaxvk::toolchain {

// "<what> input '<name>' is not a compile-time constant (<why>); <remedy>",
// where <remedy> depends on where the value comes from (traced through the
// producers of `name` in g):
//  - `name` is a graph input: bind it with config.json "input_values";
//  - computed from the values of one graph input: bind that input
//    ("input_values") or name its values with ranges;
//  - computed from graph input shapes that are not fixed: give them fixed
//    sizes (config.json "input_shapes") or export with a fixed input size;
//  - computed by an operator that only the device runs: names that node and
//    asks for a model exported with a fixed input size (or the value as a
//    constant).
// `why` defaults to "its value must be known at conversion".
std::string NotConstantMessage(const Graph& g, const std::string& what, const std::string& name,
                               const std::string& why = "");

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_IR_NOT_CONSTANT_H_
