// oaax-vulkan-toolchain [--config FILE] <input-path> <output-directory>
// OAAX toolchain: ONNX model -> model.oinf (SPIR-V pipeline bundle) +
// conversion-log.json. Exit 0 on success, 1 on conversion failure, 2 on
// usage errors. OAAXVK_TOOLCHAIN_VERBOSE=1 prints each log entry's data.
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "toolchain/driver/driver.h"

int main(int argc, char** argv) {
  CLI::App app{"oaax-vulkan-toolchain: compile an ONNX model into a Vulkan SPIR-V bundle (model.oinf)"};
  std::vector<std::string> args;
  std::string config;
  app.add_option("args", args, "<input-path> <output-directory>");
  app.add_option("--config", config,
                 "config.json for a plain .onnx input (input_shapes, input_values); an archive carries its own");
  app.allow_extras(false);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::printf("%s", app.help().c_str());
    return 0;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "error: %s\nusage: oaax-vulkan-toolchain [--config FILE] <input-path> <output-directory>\n", e.what());
    return 2;
  }
  if (args.size() != 2) {
    std::fprintf(stderr, "usage: oaax-vulkan-toolchain [--config FILE] <input-path> <output-directory>\n"
                         "  <input-path>        an ONNX model (.onnx), or a .zip / .tar.gz holding model.onnx\n"
                         "                      and an optional config.json ({\"input_shapes\": {\"x\": [1, 3, 640, 640]}})\n"
                         "  <output-directory>  created if missing; receives model.oinf and conversion-log.json\n"
                         "  --config FILE       config.json for a plain .onnx: input_shapes and input_values\n"
                         "                      ({\"input_values\": {\"shape\": [1, 3, 224, 224]}} binds an input at conversion)\n");
    return 2;
  }
  return oaaxvk::toolchain::RunConversion(
      args[0], args[1],
      [](const std::string& line) {
        std::printf("[oaax-vulkan-toolchain] %s\n", line.c_str());
        std::fflush(stdout);
      },
      config);
}
