// libFuzzer target for the toolchain's input resolution: config.json text
// (ParseModelConfig) and model archives (ResolveModelInput on the input
// written as a .zip and as a .tar.gz, which libarchive reads by content).
// Any input must be refused with a Status or accepted without a crash,
// leak, path escape or undefined behaviour; the extraction directory is
// removed by ResolvedInput's destructor.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "toolchain/input/archive.h"

namespace {

std::string g_dir;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char tmpl[] = "/tmp/oaaxvk-archive-fuzz-XXXXXX";
  if (mkdtemp(tmpl)) g_dir = tmpl;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace oaaxvk::toolchain;
  if (size > (1u << 20)) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)ParseModelConfig(text);
  if (g_dir.empty()) return 0;
  ArchiveLimits limits;
  limits.max_entries = 64;
  limits.max_entry_bytes = 1u << 20;
  limits.max_total_bytes = 4u << 20;
  for (const char* name : {"/input.zip", "/input.tar.gz"}) {
    const std::string path = g_dir + name;
    FILE* f = fopen(path.c_str(), "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    oaaxvk::StatusOr<ResolvedInput> r = ResolveModelInput(path, limits);
    unlink(path.c_str());
    // Extraction never leaves its private directory.
    if (r.ok() && r->model_path.find("/../") != std::string::npos) abort();
  }
  return 0;
}
