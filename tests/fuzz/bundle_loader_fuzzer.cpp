// libFuzzer target for the runtime's bundle loader without a device: the
// OINF reader, ParseBundle (identification, I/O tables, kernels, dispatch
// tables, memory plan, shape program), kernel-variant selection and the
// device-limit check against two device profiles, and the shape program
// evaluated at every symbol's minimum and maximum. Any input must be refused
// with a Status or accepted and then be evaluable without a crash, leak or
// undefined behaviour. Mutations are structured (oinf_mutator.h): most
// inputs are read as OINF, one bundle value is changed and the container is
// written again; the rest go through libFuzzer's byte-level mutator.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "oaax_vulkan/oinf.h"
#include "oinf_mutator.h"
#include "runtime/bundle.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  if (seed % 8 != 0) {
    std::vector<uint8_t> out;
    if (oaaxvk::fuzz::MutateOinfBytes(data, size, seed, &out) && out.size() <= max_size) {
      memcpy(data, out.data(), out.size());
      return out.size();
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}

namespace {

oaaxvk::runtime::DeviceLimits Profile(bool small) {
  oaaxvk::runtime::DeviceLimits l;
  l.max_workgroup_invocations = small ? 128 : 1024;
  for (int i = 0; i < 3; ++i) {
    l.max_workgroup_size[i] = small ? 128 : 1024;
    l.max_workgroup_count[i] = 65535;
  }
  l.max_shared_memory_bytes = small ? 16384 : 32768;
  l.max_storage_buffer_range = small ? (1u << 27) : 0xffffffffu;
  l.shader_float16 = !small;
  l.storage_buffer_16bit = !small;
  l.max_storage_buffers_per_stage = small ? 8 : 1024;
  l.max_texel_buffer_elements = small ? 65536 : (1u << 27);
  l.min_texel_buffer_offset_alignment = small ? 256 : 16;
  l.max_sampled_images_per_stage = small ? 16 : 1024;
  l.device_name = small ? "fuzz-small" : "fuzz-large";
  // The runtime's capability names (runtime/bundle.h kKnownCapabilities): the
  // large profile has them all, so GPU rows are chosen; the small one none.
  if (!small) l.capabilities = {"storageBuffer16BitAccess", "subgroupArithmetic", "sharedMemory32KiB"};
  return l;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace oaaxvk;
  oinf::ReaderOptions ro;
  StatusOr<oinf::File> file = oinf::File::FromMemory(data, size, ro);
  if (!file.ok()) return 0;
  StatusOr<runtime::Bundle> parsed = runtime::ParseBundle(std::move(file).value(), "<fuzz>");
  if (!parsed.ok()) return 0;
  const runtime::Bundle& b = *parsed;
  if (b.shape.dynamic()) {
    std::vector<int64_t> lo, hi, values;
    for (const runtime::ShapeSymbol& s : b.shape.symbols) {
      lo.push_back(s.min);
      hi.push_back(s.max);
    }
    (void)b.shape.Evaluate(lo, &values);
    (void)b.shape.Evaluate(hi, &values);
  }
  for (int small = 0; small < 2; ++small) {
    for (runtime::KernelVariant v : {runtime::KernelVariant::kDefault, runtime::KernelVariant::kCpu,
                                     runtime::KernelVariant::kGpu}) {
      // Selection rewrites the rows: each choice starts from a fresh parse.
      StatusOr<oinf::File> again = oinf::File::FromMemory(data, size, ro);
      if (!again.ok()) __builtin_trap();  // the same bytes parsed a moment ago
      StatusOr<runtime::Bundle> copy = runtime::ParseBundle(std::move(again).value(), "<fuzz>");
      if (!copy.ok()) __builtin_trap();
      const runtime::DeviceLimits limits = Profile(small != 0);
      (void)runtime::SelectKernelVariant(&*copy, v, small != 0, limits, small == 0);
      (void)runtime::CheckDeviceLimits(*copy, limits);
    }
  }
  return 0;
}
