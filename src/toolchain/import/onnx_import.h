// ONNX import: parse (with size limits), onnx::checker, ONNX shape inference,
// external data (restricted to the model's directory), symbolic-dimension
// binding, the up-front operator support check, and conversion into the IR.
// All protobuf / onnx exceptions are caught here and become a Status.
#ifndef OAAXVK_TOOLCHAIN_IMPORT_ONNX_IMPORT_H_
#define OAAXVK_TOOLCHAIN_IMPORT_ONNX_IMPORT_H_

#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "toolchain/input/config.h"
#include "toolchain/ir/graph.h"

namespace oaaxvk::toolchain {

struct ImportOptions {
  uint64_t max_model_bytes = (2ull << 30) - 1;     // protobuf's own hard limit is 2 GiB
  uint64_t max_external_bytes = 8ull << 30;        // all external data together
  // Shapes bound by the user (config.json "input_shapes"): input name -> dims.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // Sequence and optional graph inputs (config.json "input_shapes" with a
  // list of shapes, or null): input name -> number of elements, whose shapes
  // are input_shapes["name[i]"]; -1 for an empty optional
  // (import/control_flow.h).
  std::map<std::string, int64_t> sequence_lengths;
  // Values bound by the user (config.json "input_values"): graph input name ->
  // flat row-major numbers, numel of the input's static shape, each exactly
  // representable in the input's dtype (integers in range, bools 0/1). A
  // bound input becomes a constant for the compiler but stays a graph input:
  // see ImportReport::bound_inputs.
  InputValues input_values;
  // Inputs of input_values that are run-time value symbols imported at one
  // sample point: not known at conversion to control flow, with the range
  // [min, max] of a single integer or bool value (min > max otherwise;
  // import/control_flow.h).
  std::map<std::string, std::pair<int64_t, int64_t>> run_time_values;
  // Symbolic dimensions named by the model (dim_param) that the conversion
  // treats as symbols (config.json "dimensions"): name -> the value to import at.
  std::map<std::string, int64_t> symbol_values;
  // Graph inputs with a dimension symbol of config.json "input_shapes": one
  // with zero elements at this point is a run-time input, not bound empty.
  std::set<std::string> symbolic_inputs;
};

// Notes the importer wants logged (e.g. "batch dimension of 'x' set to 1").
struct ImportReport {
  int64_t ir_version = 0;
  int64_t opset = 0;
  std::string producer;
  size_t onnx_nodes = 0;
  std::vector<std::string> notes;
  // Input dimensions bound from ImportOptions::symbol_values: (input name,
  // dimension index, symbol name).
  std::vector<std::tuple<std::string, int, std::string>> symbolic_dims;
  // Bound inputs: graph input name -> its value as host-dtype bytes
  // (little-endian, row-major). The graph keeps the input (GraphIO.name) but
  // points it at a placeholder tensor no node reads; the nodes read a
  // constant tensor of the input's name. Pass this map to CompileGraph.
  std::map<std::string, std::vector<uint8_t>> bound_inputs;
};

// Reads `path` (a .onnx file). External data files are resolved relative to
// the file's directory. Errors:
//   kNotFound / kInvalidArgument  the path is missing or not a regular file
//   kResourceExhausted            a size limit was exceeded
//   kDataLoss                     not a parseable ONNX protobuf
//   kInvalidArgument              checker / shape inference failure, bad external data
//                                 path, unresolvable symbolic dimension
//   kUnimplemented                unsupported operators (all listed) or dtypes
StatusOr<Graph> ImportOnnxFile(const std::string& path, const ImportOptions& options = {},
                               ImportReport* report = nullptr);

// Same from serialized bytes; `model_dir` is where external data is looked up
// (empty: external data is refused).
StatusOr<Graph> ImportOnnxBytes(const std::string& bytes, const std::string& model_dir,
                                const ImportOptions& options = {}, ImportReport* report = nullptr);

// A .onnx file read once for several imports of it (a dynamic-shape
// conversion imports the model at every check point): ImportOnnxFile(path,
// options, report) is ImportOnnxBytes(f.bytes, f.dir, options, report) with
// f = ReadOnnxFile(path, options.max_model_bytes). `dir`: the file's
// directory, where its external data is looked up. Errors: those of
// ImportOnnxFile for the file itself (missing, not a regular file, over
// `max_bytes`, unreadable).
struct OnnxFile {
  std::string bytes;
  std::string dir;
};
StatusOr<OnnxFile> ReadOnnxFile(const std::string& path, uint64_t max_bytes);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_IMPORT_ONNX_IMPORT_H_
