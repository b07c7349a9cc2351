// oinf-inspect [--summary | -q] FILE: validates an OINF file and prints its
// human-readable view (docs/oinf-format.md). For an oaax-vulkan bundle the
// view starts with the bundle's inputs and outputs in the user's terms
// (dtypes, shapes, symbols with their ranges) and prints its text metadata
// (names, features) as text; --summary prints only that summary. Exit 0 on a
// valid file; 1 with the reason on stderr for an invalid one; 2 for bad usage.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "bundle_summary.h"
#include "oaax_vulkan/oinf.h"

namespace {

// The bundle's summary: model, producer, features, then the I/O lines and
// the fixed-output warnings.
std::string SummaryText(const oaaxvk::bundle_summary::Summary& s) {
  std::string out = "model  " + (s.model_name.empty() ? std::string("(unnamed)") : "'" + s.model_name + "'");
  if (!s.producer.empty()) out += ", by " + s.producer;
  out += "\n";
  if (!s.features.empty()) {
    out += "features ";
    for (size_t i = 0; i < s.features.size(); ++i) out += (i ? " " : "") + s.features[i];
    out += "\n";
  }
  out += oaaxvk::bundle_summary::IoText(s);
  for (const std::string& w : oaaxvk::bundle_summary::FixedOutputWarnings(s)) out += "warning: " + w + "\n";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Validate an OINF container and print its contents (sizevars, metadata, tensors with statistics); "
               "an oaax-vulkan bundle (model.oinf) starts with its inputs and outputs."};
  std::string path;
  bool quiet = false, summary = false;
  app.add_option("FILE", path, "OINF file to inspect")->required();
  app.add_flag("-q,--quiet", quiet, "validate only; print nothing on success");
  app.add_flag("-s,--summary", summary,
               "print only the bundle's summary: inputs and outputs with dtypes and shapes (a dynamic dimension as "
               "N∈1..8), features, warnings");
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
  if (quiet) return 0;
  const bool bundle = oaaxvk::bundle_summary::IsBundle(*file);
  if (bundle) {
    auto s = oaaxvk::bundle_summary::Read(*file);
    if (!s.ok()) {
      // A valid OINF file whose bundle entries are broken: the full view
      // still shows what is there (the runtime names the entry at load).
      std::fprintf(stderr, "oinf-inspect: %s: no summary: %s\n", path.c_str(), s.status().message().c_str());
      if (summary) return 1;
    } else {
      const std::string text = SummaryText(*s);
      std::fwrite(text.data(), 1, text.size(), stdout);
      if (summary) return 0;
      std::fputs("\n", stdout);
    }
  } else if (summary) {
    std::fprintf(stderr, "oinf-inspect: %s is an OINF file but not an oaax-vulkan bundle (model.oinf): --summary "
                         "has nothing to summarize; run without --summary for its contents\n", path.c_str());
    return 1;
  }
  oaaxvk::oinf::RenderOptions options;
  options.text_arrays = bundle;  // a bundle stores every name and text as a u8 array
  const std::string text = oaaxvk::oinf::RenderText(*file, options);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}
