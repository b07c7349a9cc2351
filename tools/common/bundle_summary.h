// The inputs and outputs of an oaax-vulkan bundle in the user's terms: names,
// dtypes and shapes, with the symbols of a dynamic bundle and their ranges
// (docs/bundle-format.md, "I/O descriptors" and "Dynamic shapes"). Shared by
// oinf-inspect (its summary) and oaax-vulkan-toolchain (its success summary).
#ifndef OAAXVK_TOOLS_COMMON_BUNDLE_SUMMARY_H_
#define OAAXVK_TOOLS_COMMON_BUNDLE_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "oaax_vulkan/oinf.h"
#include "oaax_vulkan/status.h"

namespace oaaxvk::bundle_summary {

// One symbol of the shape program (a dimension, a run-time value or a
// decided symbol); every valid value v has min <= v <= max, v % multiple_of == 0.
struct Symbol {
  std::string name;
  int64_t min = 1, max = 1, multiple_of = 1;
  bool is_value = false;  // read from an input's data (shape.symbol.<s>.input), not from a shape
};

// One graph input or output.
struct Io {
  std::string name;
  std::string dtype;                 // numpy-style name ("float32"), or "dtype <code>" for an unknown code
  std::vector<int64_t> max_shape;    // io.*.shape: the shape with every symbol at its maximum
  std::vector<std::string> dims;     // per dimension: the number, or the expression of the symbols ("N", "⌈H/32⌉")
  std::vector<bool> symbolic;        // per dimension: an expression of the symbols drives it
  bool hidden = false;               // the extent output of another output (count_for): the host never sees it
};

struct Summary {
  std::string model_name, producer;
  std::vector<std::string> features;  // bundle.features
  std::vector<Symbol> symbols;
  std::vector<Io> inputs, outputs;
};

// True when `f` is an oaax-vulkan bundle (metadata format = "oaax-vulkan-bundle").
bool IsBundle(const oinf::File& f);

// Reads the I/O descriptors and symbols of a bundle. Errors (kDataLoss) name
// the missing or malformed entry; a file that is not a bundle is kInvalidArgument.
StatusOr<Summary> Read(const oinf::File& f);

// "[N∈1..8, 3, 224, 224]": the dimensions of `io`; the first mention of a
// symbol in `*shown` carries its range (a multiple_of > 1 as "∈32..640 step 32"),
// and the symbol is added to `*shown`.
std::string ShapeText(const Summary& s, const Io& io, std::vector<bool>* shown);

// The I/O lines: "input  'x'  float32 [N∈1..8, 3, 224, 224]" per input, then
// "output 'y'  float32 [N, 1000]" per output, each ending with '\n'.
std::string IoText(const Summary& s);

// Outputs whose shape is the same for every input shape of a dynamic bundle
// while inputs have symbolic dimensions: one sentence each, naming the output,
// its shape and what usually causes it. Empty for a static bundle.
std::vector<std::string> FixedOutputWarnings(const Summary& s);

}  // namespace oaaxvk::bundle_summary

#endif  // OAAXVK_TOOLS_COMMON_BUNDLE_SUMMARY_H_
