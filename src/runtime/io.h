// The host side of a frame: validating the host's input tensors against the
// model inputs (names, types, shapes, symbolic dimensions, values), reading
// run-time value symbols from input data, and building the output tensors
// the host receives from a completed frame's output buffer.
#ifndef OAAXVK_RUNTIME_IO_H_
#define OAAXVK_RUNTIME_IO_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "oaax_vulkan/interface.h"
#include "oaax_vulkan/status.h"
#include "runtime/bundle.h"

namespace oaaxvk::runtime {

// What ValidateInput found, per tensor of the host's struct.
struct CheckedInput {
  std::vector<size_t> model_index;  // the model input each tensor is
  std::vector<uint64_t> nbytes;     // its bytes at its actual shape
  std::vector<int64_t> symbols;     // feature dynamic_shapes: the symbol values (empty for static bundles)
};

// Validates `in` against the model inputs of `bundle` without touching it;
// errors name the tensor, what is wrong and what the model expects.
Status ValidateInput(const Bundle& bundle, const tensors_struct* in, CheckedInput* checked);

// Feature value_symbols: reads the value symbols from the inputs' data into
// checked->symbols (seen[m]: the host tensor index of model input m) and
// checks their ranges and the bundle's guards.
Status ReadValueSymbols(const Bundle& bundle, const tensors_struct* in, const std::vector<int>& seen,
                        CheckedInput* checked);

// The frame's visible outputs (host_out: the frame's output buffer;
// output_shapes / output_nbytes: each output's actual shape and bytes) as a
// new tensors_struct the caller frees; extent outputs trim the outputs they
// count. nullptr when host memory ran out, or with *frame_error set when a
// kernel reported that it could not compute an extent (a count of -1: its
// loops were cut short).
tensors_struct* BuildOutputs(const Bundle& bundle, const uint8_t* host_out,
                             const std::vector<std::vector<uint64_t>>& output_shapes,
                             const std::vector<uint64_t>& output_nbytes, Status* frame_error);

// "[1, 3, 224, 224]", for messages.
std::string ShapeString(const std::vector<uint64_t>& shape);

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_IO_H_
