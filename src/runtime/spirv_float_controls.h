// Declaring float-controls execution modes (SPV_KHR_float_controls) in a
// kernel's SPIR-V module before it becomes a VkShaderModule. Without them a
// Vulkan driver may flush subnormals and ignore the sign of zero, infinities
// and NaN in its optimizations (it may fold `c ? -1.0 : 0.0` into
// `-float(c)`, -0 for false); `SignedZeroInfNanPreserve` and `DenormPreserve`
// ask for IEEE behaviour. The kernels are compiled from GLSL, which cannot
// express these modes, and a bundle's kernels run on devices with and
// without support, so the runtime adds them at load for what the device
// supports (docs/runtime.md "Float controls").
//
// The patcher is pure (no Vulkan): it reads a module as 32-bit words, checks
// its structure (bundles can be hostile: nothing is read or written beyond
// the module) and returns a new module.
#ifndef OAAXVK_RUNTIME_SPIRV_FLOAT_CONTROLS_H_
#define OAAXVK_RUNTIME_SPIRV_FLOAT_CONTROLS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "oaax_vulkan/status.h"

namespace oaaxvk::runtime {

// Bit widths of floating-point types, as a mask.
enum FloatWidthBit : uint32_t {
  kFloatWidth16 = 1u << 0,
  kFloatWidth32 = 1u << 1,
  kFloatWidth64 = 1u << 2,
};

// Which execution modes to declare, each as a mask of FloatWidthBit.
struct FloatControls {
  uint32_t signed_zero_inf_nan_preserve = 0;  // SignedZeroInfNanPreserve (execution mode 4461)
  uint32_t denorm_preserve = 0;               // DenormPreserve (execution mode 4459)

  bool empty() const { return signed_zero_inf_nan_preserve == 0 && denorm_preserve == 0; }
  bool operator==(const FloatControls& o) const {
    return signed_zero_inf_nan_preserve == o.signed_zero_inf_nan_preserve && denorm_preserve == o.denorm_preserve;
  }
};

// "SignedZeroInfNanPreserve 32/16/64, DenormPreserve 32" (32 first: the
// width every kernel uses); "none" when `fc` is empty.
std::string DescribeFloatControls(const FloatControls& fc);

// A copy of the SPIR-V module `words` (`word_count` 32-bit words, host byte
// order, header included) with `fc`'s execution modes declared for every
// OpEntryPoint, at the places the SPIR-V logical layout requires:
//   - `OpCapability SignedZeroInfNanPreserve` (4466) / `DenormPreserve`
//     (4464) after the module's last OpCapability;
//   - `OpExtension "SPV_KHR_float_controls"` after its last OpExtension (or
//     its capabilities), only for SPIR-V versions below 1.4 (the modes are
//     core from 1.4);
//   - `OpExecutionMode %entry <mode> <width>` after its last OpExecutionMode
//     / OpExecutionModeId (or its entry points).
// A width is declared only where the module has an OpTypeFloat of that
// width: the modes govern the kernel's own arithmetic, and a width the
// kernel never uses says nothing (32 is in every float kernel; 16 where the
// kernel uses binary16, with the Float16 capability or 16-bit storage).
// Whatever the module already declares is kept and not repeated, so
// patching a patched module returns it unchanged. A mode the module already
// overrides for an entry point and width is left out there: DenormPreserve
// where it declares DenormFlushToZero, SignedZeroInfNanPreserve where it
// declares FPFastMathDefault (the module chose its own behaviour; SPIR-V
// forbids both at once). With nothing to add (`fc` empty, or no float type
// of a requested width) the result equals the input.
// Errors (kDataLoss; the module is not changed and nothing beyond
// `word_count` words is read): fewer than 5 words, a wrong magic number
// (byte-swapped modules included), an instruction with word count 0 or
// running past the end, a string operand without its terminating NUL, an
// OpCapability / OpExtension / OpExtInstImport / OpMemoryModel /
// OpEntryPoint / OpExecutionMode out of the logical layout order, an
// instruction too short for its operands, or no OpEntryPoint. Each
// message says which word and instruction is wrong, and that the kernel
// must be recompiled (the bundle reconverted).
StatusOr<std::vector<uint32_t>> AddFloatControls(const uint32_t* words, size_t word_count, const FloatControls& fc);

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_SPIRV_FLOAT_CONTROLS_H_
