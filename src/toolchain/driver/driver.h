// The conversion driver behind `oaax-vulkan-toolchain`: import -> passes ->
// lowering -> plan -> bundle, with the OAAX conversion log.
#ifndef OAAXVK_TOOLCHAIN_DRIVER_DRIVER_H_
#define OAAXVK_TOOLCHAIN_DRIVER_DRIVER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "toolchain/bundle/bundle_writer.h"
#include "toolchain/import/onnx_import.h"
#include "toolchain/passes/passes.h"

namespace oaaxvk::toolchain {

constexpr const char* kBundleMimeType = "application/x-oinf; device=vulkan";

// Receives each log entry as it is produced: Message + Data as a JSON text.
using LogSink = std::function<void(const std::string& message, const std::string& data_json)>;

struct CompileResult {
  std::vector<PassResult> passes;
  Program program;
  MemoryPlan plan;
  BundleSummary summary;
  std::vector<uint8_t> bundle;  // model.oinf bytes
  size_t nodes_before = 0, nodes_after = 0;
};

// Compiles an imported graph into bundle bytes (no file I/O). `bound_inputs`:
// ImportReport::bound_inputs of the import (inputs bound at conversion by
// config.json "input_values"); they are recorded in the bundle (feature
// `bound_inputs`) so the runtime can reject any other value.
// `lower_options`: conversion choices (config.json "fp16_weights", "gpu_conv_tiles").
// `dynamic`: the graph's input shapes carry symbols of the current
// SymContext (dim.h): the bundle gets feature dynamic_shapes. `lower_only`:
// stop after lowering (a dynamic conversion's check points; no plan, no bundle).
StatusOr<CompileResult> CompileGraph(Graph g, const LogSink& log = nullptr,
                                     const std::map<std::string, std::vector<uint8_t>>& bound_inputs = {},
                                     const LowerOptions& lower_options = {}, bool dynamic = false,
                                     bool lower_only = false);

// What a conversion ended with, for the console: the failure's two texts
// (also the last conversion-log.json entry) or the success's facts.
struct ConversionOutcome {
  bool ok = false;
  std::string human_error;      // failure: the class of problem, in plain words
  std::string technical_error;  // failure: what, where and how to fix (Status::ToString())
  std::string hint;             // failure: where to look next for this class of problem (console only)
  std::string log_path;         // <output_dir>/conversion-log.json ("" when it could not be written)
  std::string bundle_path;      // success: <output_dir>/model.oinf
  uint64_t bundle_bytes = 0;    // success: its size in bytes
  uint64_t dispatches = 0;      // success: dispatches of the program
  double elapsed_ms = 0;        // wall time of the whole conversion
  // Import notes (also in the log's "Model imported" entry): what the
  // toolchain decided for the user, e.g. a symbolic batch dimension set to 1.
  std::vector<std::string> notes;
};

// Full CLI conversion of a .onnx file or a .zip/.tar.gz archive (model.onnx +
// optional config.json, see toolchain/input/archive.h): writes <output_dir>/model.oinf and
// <output_dir>/conversion-log.json (also on failure). Returns the exit code
// (0 success, 1 conversion failure). `console` gets progress lines.
// `config_path`: optional config.json given with `--config FILE` (an error
// when the input is an archive that carries its own config.json).
// `outcome` (optional) receives what the conversion ended with.
int RunConversion(const std::string& input_path, const std::string& output_dir,
                  const std::function<void(const std::string&)>& console, const std::string& config_path = "",
                  ConversionOutcome* outcome = nullptr);

// Lower-case hex SHA-256 of a file ("" when unreadable).
std::string Sha256File(const std::string& path);
std::string Sha256Hex(const uint8_t* data, size_t n);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_DRIVER_DRIVER_H_
