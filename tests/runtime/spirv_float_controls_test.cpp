// The SPIR-V float-controls patcher (src/runtime/spirv_float_controls.h) on
// the project's compiled kernels, checked by spirv-val and spirv-dis
// (SPIRV-Tools), and on malformed modules; and the modes a device's
// VkPhysicalDeviceFloatControlsProperties allow (FloatControlsFor). No
// Vulkan device is used.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/spirv_float_controls.h"
#include "runtime/vk_context.h"

namespace {

using oaaxvk::runtime::AddFloatControls;
using oaaxvk::runtime::DescribeFloatControls;
using oaaxvk::runtime::FloatControls;
using oaaxvk::runtime::FloatControlsFor;
using oaaxvk::runtime::kFloatWidth16;
using oaaxvk::runtime::kFloatWidth32;
using oaaxvk::runtime::kFloatWidth64;

constexpr uint32_t kAllWidths = kFloatWidth16 | kFloatWidth32 | kFloatWidth64;
constexpr FloatControls kAll{kAllWidths, kAllWidths};

std::vector<uint32_t> ReadKernel(const std::string& name) {
  std::ifstream f(std::string(OAAXVK_KERNEL_SPV_DIR) + "/" + name + ".spv", std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<uint32_t> words(bytes.size() / 4);
  if (!words.empty()) memcpy(words.data(), bytes.data(), words.size() * 4);
  return words;
}

std::vector<uint32_t> Patch(const std::vector<uint32_t>& words, const FloatControls& fc) {
  oaaxvk::StatusOr<std::vector<uint32_t>> r = AddFloatControls(words.data(), words.size(), fc);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::vector<uint32_t>{};
}

bool Executable(const char* path) { return path[0] != '\0' && access(path, X_OK) == 0; }

// A fresh file under $TMPDIR (or /tmp) holding `words`.
std::string WriteTemp(const std::vector<uint32_t>& words) {
  const char* dir = getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/oaaxvk-fc-XXXXXX";
  const int fd = mkstemp(path.data());
  EXPECT_GE(fd, 0);
  if (fd < 0) return path;
  const size_t bytes = words.size() * 4;
  EXPECT_EQ(write(fd, words.data(), bytes), static_cast<ssize_t>(bytes));
  close(fd);
  return path;
}

// Runs `cmd` (stderr merged); its exit status, its output in *out.
int RunCommand(const std::string& cmd, std::string* out) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  out->clear();
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  return pclose(p);
}

std::vector<std::string> Disassemble(const std::vector<uint32_t>& words) {
  const std::string path = WriteTemp(words);
  std::string text;
  EXPECT_EQ(RunCommand(std::string(OAAXVK_SPIRV_DIS) + " '" + path + "'", &text), 0) << text;
  unlink(path.c_str());
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t b = line.find_first_not_of(' ');
    lines.push_back(b == std::string::npos ? "" : line.substr(b));
  }
  return lines;
}

size_t Count(const std::vector<std::string>& lines, const std::string& line) {
  return static_cast<size_t>(std::count(lines.begin(), lines.end(), line));
}

// The instruction boundaries of a well-formed module (word indices).
std::vector<size_t> Boundaries(const std::vector<uint32_t>& w) {
  std::vector<size_t> b;
  for (size_t i = 5; i < w.size(); i += w[i] >> 16) b.push_back(i);
  b.push_back(w.size());
  return b;
}

// The word index of the first instruction with `opcode`, or 0.
size_t Find(const std::vector<uint32_t>& w, uint32_t opcode) {
  for (size_t i = 5; i < w.size(); i += w[i] >> 16)
    if ((w[i] & 0xffffu) == opcode) return i;
  return 0;
}

class SpirvTools : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Executable(OAAXVK_SPIRV_VAL) || !Executable(OAAXVK_SPIRV_DIS) || !Executable(OAAXVK_SPIRV_AS))
      GTEST_SKIP() << "spirv-val, spirv-dis or spirv-as (SPIRV-Tools) not found at configure time; "
                      "install spirv-tools (scripts/setup.sh) and reconfigure";
  }
  // spirv-val --target-env vulkan1.2 accepts `words`.
  void ExpectValid(const std::vector<uint32_t>& words, const std::string& what) {
    const std::string path = WriteTemp(words);
    std::string out;
    EXPECT_EQ(RunCommand(std::string(OAAXVK_SPIRV_VAL) + " --target-env vulkan1.2 '" + path + "'", &out), 0)
        << what << ": " << out;
    unlink(path.c_str());
  }
  std::vector<uint32_t> Assemble(const std::string& text) {
    const std::string src = WriteTemp({});
    { std::ofstream(src) << text; }
    const std::string spv = src + ".spv";
    std::string out;
    EXPECT_EQ(RunCommand(std::string(OAAXVK_SPIRV_AS) + " --target-env vulkan1.2 -o '" + spv + "' '" + src + "'", &out), 0)
        << out;
    std::ifstream f(spv, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    unlink(src.c_str());
    unlink(spv.c_str());
    std::vector<uint32_t> words(bytes.size() / 4);
    if (!words.empty()) memcpy(words.data(), bytes.data(), words.size() * 4);
    return words;
  }
};

// The capabilities, the extension and the execution modes, each exactly
// once, at the widths the kernel's float types have (16 only in the kernels
// using binary16, through the Float16 capability or 16-bit storage; no
// kernel has 64), everything else unchanged, and valid for Vulkan 1.2.
TEST_F(SpirvTools, KernelsWithEveryModeDeclaredPassSpirvVal) {
  struct Case {
    const char* kernel;
    bool fp16;
  };
  for (const Case& c : {Case{"eltwise", false}, Case{"gemm_gpu_fp16", true}, Case{"gemm_gpu_f16w", true},
                        Case{"conv2d_gemm_gpu_coopmat", true}}) {
    SCOPED_TRACE(c.kernel);
    const std::vector<uint32_t> words = ReadKernel(c.kernel);
    ASSERT_GT(words.size(), 5u) << "no compiled kernel " << OAAXVK_KERNEL_SPV_DIR << "/" << c.kernel << ".spv";
    const std::vector<uint32_t> patched = Patch(words, kAll);
    ExpectValid(patched, c.kernel);
    std::vector<std::string> dis = Disassemble(patched);
    const std::vector<std::string> added = {
        "OpCapability SignedZeroInfNanPreserve", "OpCapability DenormPreserve",
        "OpExtension \"SPV_KHR_float_controls\"", "OpExecutionMode %main SignedZeroInfNanPreserve 32",
        "OpExecutionMode %main SignedZeroInfNanPreserve 16", "OpExecutionMode %main DenormPreserve 32",
        "OpExecutionMode %main DenormPreserve 16"};
    for (const std::string& line : added) {
      const bool expected = c.fp16 || line.substr(line.size() - 3) != " 16";
      EXPECT_EQ(Count(dis, line), expected ? 1u : 0u) << line;
    }
    EXPECT_EQ(Count(dis, "OpExecutionMode %main SignedZeroInfNanPreserve 64"), 0u);
    EXPECT_EQ(Count(dis, "OpExecutionMode %main DenormPreserve 64"), 0u);
    // Without the added lines, the disassembly is the original's, line for line.
    dis.erase(std::remove_if(dis.begin(), dis.end(),
                             [&](const std::string& l) { return std::count(added.begin(), added.end(), l) > 0; }),
              dis.end());
    EXPECT_EQ(dis, Disassemble(words));
  }
}

// SPIR-V 1.4 has the modes in its core: no OpExtension then. (The module is
// eltwise with its version word raised, which spirv-val would reject for
// its 1.3 entry-point interface; the disassembly is checked instead.)
TEST_F(SpirvTools, NoExtensionFromSpirv14) {
  std::vector<uint32_t> words = ReadKernel("eltwise");
  ASSERT_GT(words.size(), 5u);
  words[1] = 0x00010400u;
  const std::vector<std::string> dis = Disassemble(Patch(words, kAll));
  EXPECT_EQ(Count(dis, "OpExtension \"SPV_KHR_float_controls\""), 0u);
  EXPECT_EQ(Count(dis, "OpCapability SignedZeroInfNanPreserve"), 1u);
  EXPECT_EQ(Count(dis, "OpExecutionMode %main SignedZeroInfNanPreserve 32"), 1u);
}

// A module's own denormal or fast-math choice wins, and what it already
// declares is not repeated.
TEST_F(SpirvTools, ModesTheModuleAlreadyDeclaresOrOverridesAreLeftOut) {
  const std::vector<uint32_t> words = Assemble(R"(
               OpCapability Shader
               OpCapability Float16
               OpCapability DenormFlushToZero
               OpCapability SignedZeroInfNanPreserve
               OpExtension "SPV_KHR_float_controls"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 1 1 1
               OpExecutionMode %main DenormFlushToZero 32
               OpExecutionMode %main SignedZeroInfNanPreserve 16
               OpName %main "main"
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
      %float = OpTypeFloat 32
       %half = OpTypeFloat 16
       %main = OpFunction %void None %fn
      %label = OpLabel
               OpReturn
               OpFunctionEnd
)");
  ASSERT_GT(words.size(), 5u);
  ExpectValid(words, "the module as assembled");
  const std::vector<uint32_t> patched = Patch(words, kAll);
  ExpectValid(patched, "the patched module");
  const std::vector<std::string> dis = Disassemble(patched);
  EXPECT_EQ(Count(dis, "OpCapability SignedZeroInfNanPreserve"), 1u);
  EXPECT_EQ(Count(dis, "OpCapability DenormPreserve"), 1u);
  EXPECT_EQ(Count(dis, "OpExtension \"SPV_KHR_float_controls\""), 1u);
  EXPECT_EQ(Count(dis, "OpExecutionMode %main SignedZeroInfNanPreserve 16"), 1u);
  EXPECT_EQ(Count(dis, "OpExecutionMode %main SignedZeroInfNanPreserve 32"), 1u);
  EXPECT_EQ(Count(dis, "OpExecutionMode %main DenormFlushToZero 32"), 1u);
  EXPECT_EQ(Count(dis, "OpExecutionMode %main DenormPreserve 32"), 0u);  // the module flushes
  EXPECT_EQ(Count(dis, "OpExecutionMode %main DenormPreserve 16"), 1u);
}

TEST(SpirvFloatControls, PatchingIsIdempotentAndNothingToAddKeepsTheModule) {
  for (const char* kernel : {"eltwise", "gemm_gpu_fp16"}) {
    SCOPED_TRACE(kernel);
    const std::vector<uint32_t> words = ReadKernel(kernel);
    ASSERT_GT(words.size(), 5u);
    const std::vector<uint32_t> once = Patch(words, kAll);
    EXPECT_GT(once.size(), words.size());
    EXPECT_EQ(Patch(once, kAll), once);
    EXPECT_EQ(Patch(words, FloatControls{}), words);
    // 64 only: no kernel has a 64-bit float, so nothing to add.
    EXPECT_EQ(Patch(words, FloatControls{kFloatWidth64, kFloatWidth64}), words);
    // One mode first, then both: the same module as both at once, minus
    // order (the first mode's lines come first); each line once.
    const std::vector<uint32_t> szinp = Patch(words, FloatControls{kAllWidths, 0});
    const std::vector<uint32_t> both = Patch(szinp, kAll);
    EXPECT_EQ(both.size(), once.size());
    EXPECT_EQ(Patch(both, kAll), both);
  }
}

TEST(SpirvFloatControls, MalformedModulesAreErrorsNotCrashes) {
  const std::vector<uint32_t> words = ReadKernel("eltwise");
  ASSERT_GT(words.size(), 5u);
  auto error = [](const std::vector<uint32_t>& w) {
    oaaxvk::StatusOr<std::vector<uint32_t>> r = AddFloatControls(w.data(), w.size(), kAll);
    return r.ok() ? std::string() : r.status().ToString();
  };
  EXPECT_NE(error({}).find("shorter than its 5-word header"), std::string::npos) << error({});
  EXPECT_FALSE(AddFloatControls(nullptr, 100, kAll).ok());
  std::vector<uint32_t> swapped = words;
  swapped[0] = __builtin_bswap32(swapped[0]);
  EXPECT_NE(error(swapped).find("magic number"), std::string::npos) << error(swapped);

  // Every truncation: one inside an instruction is an error naming it; one
  // at an instruction boundary either keeps an entry point (patched) or is
  // an error saying there is none.
  const std::vector<size_t> bounds = Boundaries(words);
  size_t at_boundary_ok = 0;
  for (size_t n = 5; n < words.size(); ++n) {
    const std::vector<uint32_t> cut(words.begin(), words.begin() + static_cast<long>(n));
    const std::string e = error(cut);
    if (std::find(bounds.begin(), bounds.end(), n) == bounds.end()) {
      ASSERT_NE(e.find("past the module's end"), std::string::npos) << n << " words: " << e;
      ASSERT_NE(e.find("recompile the kernel"), std::string::npos) << e;
    } else if (e.empty()) {
      ++at_boundary_ok;
    } else {
      ASSERT_NE(e.find("no OpEntryPoint"), std::string::npos) << n << " words: " << e;
    }
  }
  EXPECT_GT(at_boundary_ok, 0u);

  const size_t entry = Find(words, 15), mode = Find(words, 16), cap = Find(words, 17);
  ASSERT_GT(entry, 0u);
  ASSERT_GT(mode, 0u);
  ASSERT_GT(cap, 0u);
  std::vector<uint32_t> w = words;
  w[mode] &= 0xffffu;  // word count 0
  EXPECT_NE(error(w).find("at word " + std::to_string(mode) + " has word count 0"), std::string::npos) << error(w);

  w = words;  // no entry point
  w.erase(w.begin() + static_cast<long>(entry), w.begin() + static_cast<long>(entry + (words[entry] >> 16)));
  EXPECT_NE(error(w).find("no OpEntryPoint"), std::string::npos) << error(w);

  w = words;  // a capability after the functions
  w.insert(w.end(), {(2u << 16) | 17u, 1u});
  EXPECT_NE(error(w).find("logical layout order"), std::string::npos) << error(w);

  w = words;  // an extension name without its NUL
  const uint32_t abcd = 0x44434241u;
  w.insert(w.begin() + static_cast<long>(cap + 2), {(2u << 16) | 10u, abcd});
  EXPECT_NE(error(w).find("without its terminating NUL"), std::string::npos) << error(w);

  w = words;  // DenormPreserve without its width
  w.insert(w.begin() + static_cast<long>(mode), {(3u << 16) | 16u, words[entry + 2], 4459u});
  EXPECT_NE(error(w).find("too few for the mode's width"), std::string::npos) << error(w);

  // Random words anywhere in the sections the patcher reads: an error or a
  // module, never a read or write beyond the input (the sanitized build
  // checks that).
  std::mt19937 rng(7);
  const size_t head = std::min<size_t>(words.size(), 64);
  for (int k = 0; k < 3000; ++k) {
    std::vector<uint32_t> r = words;
    for (int j = 0; j < 3; ++j) r[5 + rng() % (head - 5)] = (k % 2) ? rng() : (rng() % 8) << 16 | (rng() % 24);
    oaaxvk::StatusOr<std::vector<uint32_t>> p = AddFloatControls(r.data(), r.size(), kAll);
    if (p.ok()) {
      EXPECT_GE(p->size(), r.size());
    }
  }
}

VkPhysicalDeviceFloatControlsProperties Props(VkShaderFloatControlsIndependence denorm, bool szinp16, bool szinp32,
                                              bool szinp64, bool d16, bool d32, bool d64) {
  VkPhysicalDeviceFloatControlsProperties p{};
  p.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES;
  p.denormBehaviorIndependence = denorm;
  p.shaderSignedZeroInfNanPreserveFloat16 = szinp16;
  p.shaderSignedZeroInfNanPreserveFloat32 = szinp32;
  p.shaderSignedZeroInfNanPreserveFloat64 = szinp64;
  p.shaderDenormPreserveFloat16 = d16;
  p.shaderDenormPreserveFloat32 = d32;
  p.shaderDenormPreserveFloat64 = d64;
  return p;
}

TEST(SpirvFloatControls, DeviceModesFollowTheDenormIndependence) {
  constexpr auto kAllIndep = VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_ALL;
  constexpr auto k32Only = VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_32_BIT_ONLY;
  constexpr auto kNone = VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_NONE;
  // lavapipe and SwiftShader: every SignedZeroInfNanPreserve, no DenormPreserve.
  EXPECT_EQ(FloatControlsFor(Props(kAllIndep, true, true, true, false, false, false)),
            (FloatControls{kAllWidths, 0}));
  EXPECT_EQ(FloatControlsFor(Props(kNone, true, true, true, false, false, false)), (FloatControls{kAllWidths, 0}));
  EXPECT_EQ(FloatControlsFor(Props(kAllIndep, false, true, false, true, true, false)),
            (FloatControls{kFloatWidth32, kFloatWidth16 | kFloatWidth32}));
  // 32_BIT_ONLY: 16 and 64 together or not at all.
  EXPECT_EQ(FloatControlsFor(Props(k32Only, false, false, false, true, true, false)),
            (FloatControls{0, kFloatWidth32}));
  EXPECT_EQ(FloatControlsFor(Props(k32Only, false, false, false, true, false, true)),
            (FloatControls{0, kFloatWidth16 | kFloatWidth64}));
  // NONE: every width or none.
  EXPECT_EQ(FloatControlsFor(Props(kNone, false, false, false, true, true, false)), (FloatControls{0, 0}));
  EXPECT_EQ(FloatControlsFor(Props(kNone, false, false, false, true, true, true)), (FloatControls{0, kAllWidths}));
}

TEST(SpirvFloatControls, Description) {
  EXPECT_EQ(DescribeFloatControls(FloatControls{}), "none");
  EXPECT_EQ(DescribeFloatControls(kAll), "SignedZeroInfNanPreserve 32/16/64, DenormPreserve 32/16/64");
  EXPECT_EQ(DescribeFloatControls(FloatControls{kFloatWidth16 | kFloatWidth32, 0}), "SignedZeroInfNanPreserve 32/16");
  EXPECT_EQ(DescribeFloatControls(FloatControls{0, kFloatWidth32}), "DenormPreserve 32");
}

}  // namespace
