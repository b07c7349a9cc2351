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
// `lower_options`: conversion choices (config.json "fp16_weights").
// `dynamic`: the graph's input shapes carry symbols of the current
// SymContext (dim.h): the bundle gets feature dynamic_shapes. `lower_only`:
// stop after lowering (a dynamic conversion's check points; no plan, no bundle).
StatusOr<CompileResult> CompileGraph(Graph g, const LogSink& log = nullptr,
                                     const std::map<std::string, std::vector<uint8_t>>& bound_inputs = {},
                                     const LowerOptions& lower_options = {}, bool dynamic = false,
                                     bool lower_only = false);

// Full CLI conversion of a .onnx file or a .zip/.tar.gz archive (model.onnx +
// optional config.json, see toolchain/input/archive.h): writes <output_dir>/model.oinf and
// <output_dir>/conversion-log.json (also on failure). Returns the exit code
// (0 success, 1 conversion failure). `console` gets progress lines.
// `config_path`: optional config.json given with `--config FILE` (an error
// when the input is an archive that carries its own config.json).
int RunConversion(const std::string& input_path, const std::string& output_dir,
                  const std::function<void(const std::string&)>& console, const std::string& config_path = "");

// Lower-case hex SHA-256 of a file ("" when unreadable).
std::string Sha256File(const std::string& path);
std::string Sha256Hex(const uint8_t* data, size_t n);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_DRIVER_DRIVER_H_
