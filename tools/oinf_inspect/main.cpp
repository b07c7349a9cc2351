// oinf-inspect FILE: validates an OINF file and prints its human-readable
// view (docs/oinf-format.md). Exit 0 on a valid file; 1 with the reason on
// stderr for an invalid one; 2 for bad usage.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "oaax_vulkan/oinf.h"

int main(int argc, char** argv) {
  CLI::App app{"Validate an OINF container and print its contents (sizevars, metadata, tensors with statistics)."};
  std::string path;
  bool quiet = false;
  app.add_option("FILE", path, "OINF file to inspect")->required();
  app.add_flag("-q,--quiet", quiet, "validate only; print nothing on success");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  auto file = oaaxvk::oinf::File::Open(path);
  if (!file.ok()) {
    std::fprintf(stderr, "oinf-inspect: %s\n", file.status().message().c_str());
    return 1;
  }
  if (!quiet) {
    const std::string text = oaaxvk::oinf::RenderText(*file);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  return 0;
}
