// Model execution for the OCR pipeline, pluggable: the same pre- and
// post-processing runs on an OAAX runtime (dlopen'ed, OAAX C API only) or on
// ONNX Runtime (the reference, tools/reference/ort_run.js in a subprocess).
#ifndef OAAX_VULKAN_OCR_ENGINE_H_
#define OAAX_VULKAN_OCR_ENGINE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "oaax_vulkan/status.h"

namespace oaaxvk::ocr {

// A float32 tensor, dense row-major.
struct Tensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> data;  // product(shape) elements
};

// One dimension of a model input. A bundle compiled for a range of shapes
// (docs/bundle-format.md, "Dynamic shapes") has symbolic dimensions: the host
// picks their value per inference, within the symbol's range. A static
// dimension is described as the range [value, value], multiple_of 1, so that
// every dimension answers Accepts() the same way.
struct InputDim {
  std::string symbol;       // the symbol's name ("H", "W", ...); empty for a static dimension
  int64_t value = 0;        // static: the size; symbolic: the largest valid value (what io.input.<i>.shape stores)
  int64_t min = 0;          // smallest valid value (static: value)
  int64_t max = 0;          // largest valid value (static: value)
  int64_t multiple_of = 1;  // every valid value is a multiple of it (static: 1)

  bool is_symbolic() const { return !symbol.empty(); }
  // True when `v` is a valid size for this dimension.
  bool Accepts(int64_t v) const { return v >= min && v <= max && v % multiple_of == 0; }
  // "640", or "W in [32, 1280], multiple of 32" (", multiple of" left out when 1).
  std::string ToString() const;
};

// "[1, 3, H, W]": static dimensions by value, symbolic ones by name.
std::string InputDimsString(const std::vector<InputDim>& dims);

// One loaded model. Inputs are queued with Send and their outputs returned by
// Receive in FIFO order; a caller may Send several inputs before the first
// Receive (the OAAX runtime then overlaps them on the device). Consecutive
// inputs may have different shapes when the model accepts them (InputDims).
// Not thread-safe.
class Engine {
 public:
  virtual ~Engine() = default;
  // What runs the model, e.g. "OAAX Vulkan Runtime 0.1.0 (llvmpipe ...)".
  virtual std::string Describe() const = 0;
  // Queues one inference with a single input tensor.
  virtual Status Send(Tensor input) = 0;
  // Outputs of the oldest queued input (kFailedPrecondition when none).
  virtual StatusOr<std::vector<Tensor>> Receive() = 0;
  // The dimensions of the model's first input (static sizes and symbol
  // ranges), or empty when the engine accepts any shape (ONNX Runtime on a
  // model with dynamic dimensions).
  virtual std::vector<InputDim> InputDims() const = 0;
};

// The dimensions of input 0 of an oaax-vulkan bundle: its "io.input.0.shape"
// metadata, and for a bundle with the feature dynamic_shapes the symbols
// ("shape.symbol.<s>.name/min/max/multiple_of") that the shape.refs rows of
// kind 2 bind to its dimensions (docs/bundle-format.md). The OAAX C API
// cannot tell a host the model's input shapes, so the OCR host reads them
// from the bundle to size its inputs. Errors: kNotFound / kInvalidArgument
// when the file cannot be read, kDataLoss (naming the entry) when it is not
// an OINF file or the metadata is missing or malformed.
StatusOr<std::vector<InputDim>> ReadBundleInputDims(const std::string& model_path);

struct OaaxEngineOptions {
  std::string runtime_path;  // libRuntimeLibrary.so (or any OAAX runtime)
  std::string model_path;    // model.oinf
  std::vector<std::pair<std::string, std::string>> args;  // runtime_initialization_with_args
};

// The OAAX API keeps one model per initialized runtime in library globals, so
// each engine loads its own instance of the library: it dlopens a private
// copy of the .so (a file at another path is a separate object to the dynamic
// loader, with its own globals) and unlinks the copy once mapped. dlmopen
// (LM_ID_NEWLM) was rejected: the new namespace gets its own libc, so the
// tensors_struct the runtime malloc()s could not be free()d by the host, as
// the OAAX memory contract requires (docs/ocr.md).
//
// Loads the runtime library, initializes it with `args` and loads the model.
// Errors name the library/model path and quote runtime_error_message().
// The engine calls runtime_destruction and unloads the library when destroyed.
StatusOr<std::unique_ptr<Engine>> OpenOaaxEngine(const OaaxEngineOptions& options);

struct OrtEngineOptions {
  std::string node = "node";  // node executable (looked up in PATH)
  std::string script;         // tools/reference/ort_run.js
  std::string node_path;      // NODE_PATH: the directory holding onnxruntime-node
  std::string model_path;     // model.onnx
};

// ONNX Runtime through `node ort_run.js MODEL IN_DIR OUT_DIR`. At the first
// Receive with nothing computed, every queued input runs: inputs that share
// name and shape with a leading batch dimension of 1 are stacked into one
// batch (one process per distinct shape, e.g. one per recognition width);
// outputs still come back in the order the inputs were sent. The engine
// accepts any shape (InputDims is empty): ONNX Runtime checks it.
StatusOr<std::unique_ptr<Engine>> OpenOrtEngine(const OrtEngineOptions& options);

}  // namespace oaaxvk::ocr

#endif  // OAAX_VULKAN_OCR_ENGINE_H_
