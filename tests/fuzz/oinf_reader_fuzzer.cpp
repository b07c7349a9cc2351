// libFuzzer target for the OINF reader: any input must be either rejected
// with a Status or accepted and then fully readable (render touches every
// byte the reader exposed), with no crash, leak or undefined behaviour.
#include <cstddef>
#include <cstdint>

#include "oaax_vulkan/oinf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  oaaxvk::oinf::ReaderOptions options;
  options.max_rank = 16;
  auto file = oaaxvk::oinf::File::FromMemory(data, size, options);
  if (!file.ok()) return 0;
  (void)oaaxvk::oinf::RenderText(*file);
  for (const auto& t : file->tensors()) {
    (void)file->OriginalName(t.name);
    uint8_t sink = 0;
    for (uint64_t i = 0; i < t.data.size; ++i) sink ^= t.data.data[i];
    asm volatile("" : : "r"(sink));
  }
  // A file that was accepted must survive a rewrite-free second read.
  auto again = oaaxvk::oinf::File::FromMemory(data, size, options);
  if (!again.ok()) __builtin_trap();
  return 0;
}
