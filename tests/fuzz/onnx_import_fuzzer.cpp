// libFuzzer target for the toolchain's whole import path, in one process:
// ONNX bytes -> parse -> onnx::checker -> shape inference -> import ->
// passes -> lowering -> plan -> bundle bytes, and then the runtime's bundle
// parser on the bytes the toolchain wrote. Any input must either be refused
// with a Status or give a bundle the runtime accepts; a crash, an abort, an
// uncaught exception, a hang (-timeout) or an allocation past
// -malloc_limit_mb is a finding.
//
// Mutations are structured (onnx_mutator.h): most inputs are parsed as a
// ModelProto and changed the way a broken exporter would; the rest go through
// libFuzzer's byte-level mutator so the protobuf parser is covered too.
// External data resolves against a private directory holding
// `weights.bin` (4 KiB) and `sub/dir/weights.bin`, created at start-up.
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "onnx_mutator.h"
#include "runtime/bundle.h"
#include "toolchain/driver/driver.h"
#include "toolchain/import/onnx_import.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

std::string g_model_dir;

void WriteFile(const std::string& path, size_t bytes) {
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) return;
  for (size_t i = 0; i < bytes; ++i) fputc(static_cast<int>(i * 37u & 0x7fu), f);
  fclose(f);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char tmpl[] = "/tmp/oaaxvk-onnx-fuzz-XXXXXX";
  if (!mkdtemp(tmpl)) return 0;
  g_model_dir = tmpl;
  WriteFile(g_model_dir + "/weights.bin", 4096);
  mkdir((g_model_dir + "/sub").c_str(), 0700);
  mkdir((g_model_dir + "/sub/dir").c_str(), 0700);
  WriteFile(g_model_dir + "/sub/dir/weights.bin", 64);
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  if (seed % 8 != 0) {
    std::string out;
    if (oaaxvk::fuzz::MutateModelBytes(std::string(reinterpret_cast<const char*>(data), size), seed, &out) &&
        out.size() <= max_size) {
      memcpy(data, out.data(), out.size());
      return out.size();
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace oaaxvk;
  if (size > (1u << 20)) return 0;
  toolchain::ImportOptions options;
  options.max_model_bytes = 1u << 20;
  options.max_external_bytes = 1u << 20;
  toolchain::ImportReport report;
  StatusOr<toolchain::Graph> g = toolchain::ImportOnnxBytes(std::string(reinterpret_cast<const char*>(data), size),
                                                            g_model_dir, options, &report);
  if (!g.ok()) return 0;
  StatusOr<toolchain::CompileResult> r = toolchain::CompileGraph(std::move(g).value(), nullptr, report.bound_inputs);
  if (!r.ok()) return 0;
  // What the toolchain writes, the runtime must accept.
  const std::vector<uint8_t>& bytes = r->bundle;
  oinf::ReaderOptions ro;
  StatusOr<oinf::File> file = oinf::File::FromMemory(bytes.data(), bytes.size(), ro);
  if (!file.ok()) {
    fprintf(stderr, "the toolchain wrote an OINF file its reader rejects: %s\n", file.status().message().c_str());
    abort();
  }
  StatusOr<runtime::Bundle> b = runtime::ParseBundle(std::move(file).value(), "<fuzz>");
  if (!b.ok()) {
    fprintf(stderr, "the toolchain wrote a bundle the runtime rejects: %s\n", b.status().message().c_str());
    abort();
  }
  return 0;
}
