#include "runtime/spirv_float_controls.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <utility>

namespace oaaxvk::runtime {

namespace {

constexpr uint32_t kMagic = 0x07230203u;
constexpr size_t kHeaderWords = 5;
constexpr uint32_t kVersion14 = 0x00010400u;  // SPIR-V 1.4: float controls are core

// Opcodes (SPIR-V specification, section 3.52).
constexpr uint32_t kOpExtension = 10;
constexpr uint32_t kOpExtInstImport = 11;
constexpr uint32_t kOpMemoryModel = 14;
constexpr uint32_t kOpEntryPoint = 15;
constexpr uint32_t kOpExecutionMode = 16;
constexpr uint32_t kOpCapability = 17;
constexpr uint32_t kOpTypeFloat = 22;
constexpr uint32_t kOpExecutionModeId = 331;

// Capabilities and execution modes of SPV_KHR_float_controls (and the
// FPFastMathDefault mode of SPV_KHR_float_controls2, which excludes
// SignedZeroInfNanPreserve for its width).
constexpr uint32_t kCapDenormPreserve = 4464;
constexpr uint32_t kCapSignedZeroInfNanPreserve = 4466;
constexpr uint32_t kModeDenormPreserve = 4459;
constexpr uint32_t kModeDenormFlushToZero = 4460;
constexpr uint32_t kModeSignedZeroInfNanPreserve = 4461;
constexpr uint32_t kModeFPFastMathDefault = 6028;
constexpr char kExtensionName[] = "SPV_KHR_float_controls";

constexpr uint32_t kWidths[] = {32, 16, 64};  // the order of declarations and descriptions

uint32_t WidthBit(uint32_t width) {
  switch (width) {
    case 16: return kFloatWidth16;
    case 32: return kFloatWidth32;
    case 64: return kFloatWidth64;
    default: return 0;  // other widths (8-bit floats) have no float-controls properties in Vulkan
  }
}

// The module's section before the functions an opcode belongs to, in the
// order the logical layout requires; kLater for everything after them.
enum Section { kCapabilities, kExtensions, kImports, kMemoryModel, kEntryPoints, kExecutionModes, kLater };

Section SectionOf(uint32_t opcode) {
  switch (opcode) {
    case kOpCapability: return kCapabilities;
    case kOpExtension: return kExtensions;
    case kOpExtInstImport: return kImports;
    case kOpMemoryModel: return kMemoryModel;
    case kOpEntryPoint: return kEntryPoints;
    case kOpExecutionMode:
    case kOpExecutionModeId: return kExecutionModes;
    default: return kLater;
  }
}

const char* OpName(uint32_t opcode) {
  switch (opcode) {
    case kOpExtension: return "OpExtension";
    case kOpExtInstImport: return "OpExtInstImport";
    case kOpMemoryModel: return "OpMemoryModel";
    case kOpEntryPoint: return "OpEntryPoint";
    case kOpExecutionMode: return "OpExecutionMode";
    case kOpCapability: return "OpCapability";
    case kOpTypeFloat: return "OpTypeFloat";
    case kOpExecutionModeId: return "OpExecutionModeId";
    default: return "instruction";
  }
}

constexpr const char* kFix = "the kernel's SPIR-V is corrupt: recompile the kernel (reconvert the bundle)";

Status Malformed(size_t at, uint32_t opcode, const std::string& what) {
  return DataLoss(StrFormat("SPIR-V module: %s (opcode %u) at word %zu %s; %s", OpName(opcode), opcode, at,
                            what.c_str(), kFix));
}

// The words of a literal string operand: its bytes, a NUL, zero padding.
std::vector<uint32_t> StringWords(const char* s) {
  const size_t bytes = std::strlen(s) + 1;
  std::vector<uint32_t> w((bytes + 3) / 4, 0u);
  std::memcpy(w.data(), s, bytes);
  return w;
}

uint32_t Instruction(uint32_t opcode, size_t word_count) {
  return static_cast<uint32_t>(word_count << 16) | opcode;
}

}  // namespace

std::string DescribeFloatControls(const FloatControls& fc) {
  std::string out;
  auto add = [&out](const char* mode, uint32_t mask) {
    if (!mask) return;
    out += out.empty() ? "" : ", ";
    out += mode;
    const char* sep = " ";
    for (uint32_t width : kWidths) {
      if (!(mask & WidthBit(width))) continue;
      out += sep + std::to_string(width);
      sep = "/";
    }
  };
  add("SignedZeroInfNanPreserve", fc.signed_zero_inf_nan_preserve);
  add("DenormPreserve", fc.denorm_preserve);
  return out.empty() ? "none" : out;
}

StatusOr<std::vector<uint32_t>> AddFloatControls(const uint32_t* words, size_t word_count, const FloatControls& fc) {
  if (words == nullptr || word_count < kHeaderWords)
    return DataLoss(StrFormat("SPIR-V module of %zu words is shorter than its 5-word header; %s", word_count, kFix));
  if (words[0] != kMagic)
    return DataLoss(StrFormat("SPIR-V module starts with 0x%08x, not the magic number 0x%08x (a byte-swapped or "
                              "foreign file); %s", words[0], kMagic, kFix));
  const uint32_t version = words[1];

  // One pass over every instruction: its bounds, the layout order of the
  // sections the patch writes into, and what the module already declares.
  size_t cap_end = kHeaderWords, ext_end = 0, entry_end = 0, mode_end = 0;
  Section last = kCapabilities;
  std::set<uint32_t> capabilities;
  bool has_extension = false;
  std::vector<uint32_t> entries;
  uint32_t float_widths = 0;  // FloatWidthBit of every OpTypeFloat
  std::map<uint32_t, uint32_t> float_type_width;  // OpTypeFloat result id -> FloatWidthBit
  // (entry, mode) -> widths declared; FPFastMathDefault by type id, resolved after the pass.
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> declared;
  std::vector<std::pair<uint32_t, uint32_t>> fast_math_defaults;  // entry, type id
  for (size_t i = kHeaderWords; i < word_count;) {
    const uint32_t count = words[i] >> 16, opcode = words[i] & 0xffffu;
    if (count == 0) return Malformed(i, opcode, "has word count 0");
    if (count > word_count - i)
      return Malformed(i, opcode, StrFormat("has %u words, past the module's end (%zu words: truncated?)", count,
                                            word_count));
    const uint32_t* in = words + i;
    const Section section = SectionOf(opcode);
    if (section != kLater && section < last)
      return Malformed(i, opcode, "comes after a later section of the module (out of the SPIR-V logical layout order)");
    last = std::max(last, section);
    auto need = [&](uint32_t n, const char* operands) -> Status {
      if (count >= n) return Status::Ok();
      return Malformed(i, opcode, StrFormat("has %u words, too few for %s", count, operands));
    };
    switch (opcode) {
      case kOpCapability:
        OAAXVK_RETURN_IF_ERROR(need(2, "its capability"));
        capabilities.insert(in[1]);
        cap_end = i + count;
        break;
      case kOpExtension: {
        OAAXVK_RETURN_IF_ERROR(need(2, "its name"));
        const char* name = reinterpret_cast<const char*>(in + 1);
        const size_t max_bytes = 4 * static_cast<size_t>(count - 1);
        if (std::memchr(name, '\0', max_bytes) == nullptr)
          return Malformed(i, opcode, "has a name without its terminating NUL");
        if (std::strcmp(name, kExtensionName) == 0) has_extension = true;
        ext_end = i + count;
        break;
      }
      case kOpEntryPoint:
        OAAXVK_RETURN_IF_ERROR(need(4, "execution model, entry id and name"));
        entries.push_back(in[2]);
        entry_end = i + count;
        break;
      case kOpExecutionMode:
        OAAXVK_RETURN_IF_ERROR(need(3, "entry id and mode"));
        if (in[2] == kModeDenormPreserve || in[2] == kModeDenormFlushToZero || in[2] == kModeSignedZeroInfNanPreserve) {
          OAAXVK_RETURN_IF_ERROR(need(4, "the mode's width"));
          declared[{in[1], in[2]}] |= WidthBit(in[3]);
        }
        mode_end = i + count;
        break;
      case kOpExecutionModeId:
        OAAXVK_RETURN_IF_ERROR(need(3, "entry id and mode"));
        if (in[2] == kModeFPFastMathDefault) {
          OAAXVK_RETURN_IF_ERROR(need(5, "FPFastMathDefault's type and flags"));
          fast_math_defaults.emplace_back(in[1], in[3]);
        }
        mode_end = i + count;
        break;
      case kOpTypeFloat:
        OAAXVK_RETURN_IF_ERROR(need(3, "result id and width"));
        float_widths |= WidthBit(in[2]);
        float_type_width[in[1]] = WidthBit(in[2]);
        break;
      default: break;
    }
    i += count;
  }
  if (entries.empty())
    return DataLoss(StrFormat("SPIR-V module has no OpEntryPoint (a kernel needs one); %s", kFix));
  for (const auto& [entry, type] : fast_math_defaults) {
    auto it = float_type_width.find(type);
    if (it != float_type_width.end()) declared[{entry, kModeFPFastMathDefault}] |= it->second;
  }

  // The execution modes to add, per entry point in module order.
  std::vector<uint32_t> modes;
  bool add_szinp = false, add_denorm = false;
  std::set<uint32_t> seen_entries;
  for (uint32_t entry : entries) {
    if (!seen_entries.insert(entry).second) continue;  // one function, several execution models: once
    auto get = [&](uint32_t mode) {
      auto it = declared.find({entry, mode});
      return it == declared.end() ? 0u : it->second;
    };
    const uint32_t szinp = fc.signed_zero_inf_nan_preserve & float_widths & ~get(kModeSignedZeroInfNanPreserve) &
                           ~get(kModeFPFastMathDefault);
    const uint32_t denorm =
        fc.denorm_preserve & float_widths & ~get(kModeDenormPreserve) & ~get(kModeDenormFlushToZero);
    for (const auto& [mode, mask] : {std::make_pair(kModeSignedZeroInfNanPreserve, szinp),
                                     std::make_pair(kModeDenormPreserve, denorm)}) {
      for (uint32_t width : kWidths) {
        if (!(mask & WidthBit(width))) continue;
        modes.insert(modes.end(), {Instruction(kOpExecutionMode, 4), entry, mode, width});
      }
    }
    add_szinp |= szinp != 0;
    add_denorm |= denorm != 0;
  }
  if (modes.empty()) return std::vector<uint32_t>(words, words + word_count);

  std::vector<uint32_t> caps;
  if (add_szinp && !capabilities.count(kCapSignedZeroInfNanPreserve))
    caps.insert(caps.end(), {Instruction(kOpCapability, 2), kCapSignedZeroInfNanPreserve});
  if (add_denorm && !capabilities.count(kCapDenormPreserve))
    caps.insert(caps.end(), {Instruction(kOpCapability, 2), kCapDenormPreserve});
  std::vector<uint32_t> ext;
  if (version < kVersion14 && !has_extension) {
    const std::vector<uint32_t> name = StringWords(kExtensionName);
    ext.push_back(Instruction(kOpExtension, 1 + name.size()));
    ext.insert(ext.end(), name.begin(), name.end());
  }
  // Insertion points, each after the last instruction of its section (or of
  // the section before it when the module has none): in increasing order,
  // since the sections are in layout order.
  const size_t ext_at = ext_end ? ext_end : cap_end;
  const size_t mode_at = mode_end ? mode_end : entry_end;
  std::vector<uint32_t> out;
  out.reserve(word_count + caps.size() + ext.size() + modes.size());
  out.insert(out.end(), words, words + cap_end);
  out.insert(out.end(), caps.begin(), caps.end());
  out.insert(out.end(), words + cap_end, words + ext_at);
  out.insert(out.end(), ext.begin(), ext.end());
  out.insert(out.end(), words + ext_at, words + mode_at);
  out.insert(out.end(), modes.begin(), modes.end());
  out.insert(out.end(), words + mode_at, words + word_count);
  return out;
}

}  // namespace oaaxvk::runtime
