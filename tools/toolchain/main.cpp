// oaax-vulkan-toolchain [--config FILE] <input-path> <output-directory>
// OAAX toolchain: ONNX model -> model.oinf (SPIR-V pipeline bundle) +
// conversion-log.json. Exit 0 on success, 1 on conversion failure, 2 on
// usage errors. Progress lines go to stdout; the output ends with a summary
// of the bundle (stdout) or the reason of the failure (stderr), so a user
// never has to open conversion-log.json to learn what happened.
// OAAXVK_TOOLCHAIN_VERBOSE=1 prints each log entry's data.
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bundle_summary.h"
#include "toolchain/driver/driver.h"

namespace {

constexpr const char* kUsage = "usage: oaax-vulkan-toolchain [--config FILE] <input-path> <output-directory>\n";

// The help's account of the inputs and of config.json (docs/toolchain.md has
// the full description of every key).
constexpr const char* kFooter = R"(
Arguments:
  <input-path>        an ONNX model (.onnx), or a .zip / .tar.gz holding model.onnx,
                      an optional config.json and the model's external-data files
  <output-directory>  created if missing; receives model.oinf (on success) and
                      conversion-log.json (always)

config.json (--config FILE for a plain .onnx; an archive carries its own), a JSON object:
  input_shapes   {"x": [1, 3, 640, 640]}: the shape of each named input (overrides the
                 model's; a string dimension is a symbol that "dimensions" gives a range)
  dimensions     {"N": {"min": 1, "max": 8, "multiple_of": 1}}: ranges of symbolic
                 dimensions (the model's dim_param names or those of input_shapes): the
                 bundle serves every shape in the ranges (dynamic shapes)
  input_values   {"shape": [1, 3, 224, 224]}: binds an input to a value at conversion
                 (the runtime refuses any other); ["R0", "R1"] names its elements as
                 run-time values whose ranges "dimensions" gives
  fp16_weights   true (default) / false: also store binary16 weight copies for GPU rows
  limits         {"max_binding_bytes": 134217728, "max_dispatches": 1048576, ...}: size
                 limits (max_folded_bytes, max_tensor_elements, max_tensor_bytes,
                 max_arena_bytes, max_dispatches, max_binding_bytes, max_loop_iterations,
                 max_loop_read_value)
  Unknown keys are an error. Example for a batch range:
    {"dimensions": {"N": {"min": 1, "max": 8}}}

On success the console ends with the bundle's inputs and outputs (symbols with their
ranges, e.g. N∈1..8), its path and size, the conversion time, the dispatch count and
warnings; on failure stderr says what went wrong, where, and how to fix it (the same
text as the last entry of conversion-log.json). Exit status: 0 converted, 1 conversion
failed, 2 usage error. See docs/toolchain.md.
)";

std::string Seconds(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, ms < 10000 ? "%.2f s" : "%.1f s", ms / 1000.0);
  return buf;
}

// The success summary: the bundle, its I/O and warnings (stdout).
void PrintSummary(const oaaxvk::toolchain::ConversionOutcome& o) {
  std::printf("\nConverted in %s: %s (%.2f MiB, %llu dispatches)\n", Seconds(o.elapsed_ms).c_str(),
              o.bundle_path.c_str(), static_cast<double>(o.bundle_bytes) / (1024.0 * 1024.0),
              static_cast<unsigned long long>(o.dispatches));
  auto file = oaaxvk::oinf::File::Open(o.bundle_path);
  if (!file.ok()) {
    std::printf("(cannot read the bundle back for its I/O summary: %s)\n", file.status().message().c_str());
    return;
  }
  auto s = oaaxvk::bundle_summary::Read(*file);
  if (!s.ok()) {
    std::printf("(cannot summarize the bundle's I/O: %s)\n", s.status().message().c_str());
    return;
  }
  std::fputs(oaaxvk::bundle_summary::IoText(*s).c_str(), stdout);
  for (const std::string& n : o.notes) std::printf("note: %s\n", n.c_str());
  for (const std::string& w : oaaxvk::bundle_summary::FixedOutputWarnings(*s)) std::printf("warning: %s\n", w.c_str());
  std::printf("Run it: oaax-run --model %s   (inspect: oinf-inspect --summary %s)\n", o.bundle_path.c_str(),
              o.bundle_path.c_str());
}

// The failure: both texts of the log's last entry (stderr).
void PrintFailure(const oaaxvk::toolchain::ConversionOutcome& o) {
  std::fprintf(stderr, "\noaax-vulkan-toolchain: conversion failed: %s\n  %s\n", o.human_error.c_str(),
               o.technical_error.c_str());
  if (!o.hint.empty()) std::fprintf(stderr, "  how to fix: %s\n", o.hint.c_str());
  if (!o.log_path.empty()) std::fprintf(stderr, "  (log: %s)\n", o.log_path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"oaax-vulkan-toolchain: compile an ONNX model into a Vulkan SPIR-V bundle (model.oinf)"};
  std::vector<std::string> args;
  std::string config;
  app.add_option("args", args, "<input-path> <output-directory>");
  app.add_option("--config", config,
                 "config.json for a plain .onnx input (keys below); an archive carries its own");
  app.footer(kFooter);
  app.allow_extras(false);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::printf("%s", app.help().c_str());
    return 0;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "error: %s\n%s(--help lists the config.json keys)\n", e.what(), kUsage);
    return 2;
  }
  if (args.size() != 2) {
    std::fprintf(stderr, "%s%s", kUsage, kFooter);
    return 2;
  }
  oaaxvk::toolchain::ConversionOutcome outcome;
  const int rc = oaaxvk::toolchain::RunConversion(
      args[0], args[1],
      [](const std::string& line) {
        std::printf("[oaax-vulkan-toolchain] %s\n", line.c_str());
        std::fflush(stdout);
      },
      config, &outcome);
  std::fflush(stdout);
  if (rc == 0) PrintSummary(outcome);
  else PrintFailure(outcome);
  return rc;
}
