// The embedded kernels stay cheap to create on drivers that inline every
// function call before folding the specialization constants (Mesa's
// lavapipe; docs/runtime.md, "Load time and the pipeline cache"): the
// inlined copies of apply_act (every fused activation, float_math.glsl's
// included) and the inlined calls in all are bounded per kernel.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "toolchain/lower/kernels.h"

namespace oaaxvk::toolchain {
namespace {

// The call graph of a SPIR-V module: functions by result id, the callees of
// each call in order (one entry per OpFunctionCall), the functions' names.
struct CallGraph {
  std::map<uint32_t, std::vector<uint32_t>> calls;
  std::map<uint32_t, std::string> names;
  uint32_t entry = 0;
};

CallGraph ReadCallGraph(const KernelInfo& k) {
  constexpr uint32_t kOpName = 5, kOpEntryPoint = 15, kOpFunction = 54, kOpFunctionEnd = 56,
                     kOpFunctionCall = 57;
  CallGraph g;
  uint32_t current = 0;
  for (size_t i = 5; i < k.spirv_words;) {
    const uint32_t count = k.spirv[i] >> 16, opcode = k.spirv[i] & 0xFFFFu;
    if (count == 0 || i + count > k.spirv_words) break;
    if (opcode == kOpName && count >= 3) {
      const char* str = reinterpret_cast<const char*>(k.spirv + i + 2);
      g.names[k.spirv[i + 1]] = std::string(str, strnlen(str, 4 * (count - 2)));
    } else if (opcode == kOpEntryPoint && count >= 3) {
      g.entry = k.spirv[i + 2];
    } else if (opcode == kOpFunction && count >= 3) {
      current = k.spirv[i + 2];
      g.calls[current];
    } else if (opcode == kOpFunctionEnd) {
      current = 0;
    } else if (opcode == kOpFunctionCall && count >= 4 && current != 0) {
      g.calls[current].push_back(k.spirv[i + 3]);
    }
    i += count;
  }
  return g;
}

// Copies of the functions whose name starts with `prefix` ("" = every
// function) after inlining every call into the entry point.
int64_t InlinedCopies(const CallGraph& g, const std::string& prefix) {
  std::map<uint32_t, int64_t> memo;
  std::function<int64_t(uint32_t)> copies = [&](uint32_t f) -> int64_t {
    auto m = memo.find(f);
    if (m != memo.end()) return m->second;
    int64_t n = 0;
    auto it = g.calls.find(f);
    if (it != g.calls.end())
      for (uint32_t callee : it->second) {
        auto name = g.names.find(callee);
        const bool match = name != g.names.end() && name->second.compare(0, prefix.size(), prefix) == 0;
        n += (match ? 1 : 0) + copies(callee);
      }
    return memo[f] = n;
  };
  return copies(g.entry);
}

TEST(KernelInlining, FewInlinedCopiesPerKernel) {
  // apply_act: one call site, or a few (conv_transpose2d_tap4_cpu's four
  // channels); calls in all: conv_transpose2d_tap4_cpu's four activations
  // (each with the special-value helpers of float_math.glsl, about 25 calls)
  // and gemm_cpu_ff's scalar fetch helpers, about 310, are the most. A
  // parameter constant read through a call per use, or an activation per
  // accumulator, exceeds these many times over.
  constexpr int64_t kMaxActivations = 4, kMaxCalls = 384;
  for (const KernelInfo& k : Kernels()) {
    ASSERT_NE(k.spirv, nullptr) << k.name;
    const CallGraph g = ReadCallGraph(k);
    ASSERT_NE(g.entry, 0u) << k.name << ": no entry point";
    EXPECT_LE(InlinedCopies(g, "apply_act("), kMaxActivations)
        << "kernel '" << k.name << "': call apply_act from one place (a loop over the values) so that drivers "
        << "that inline before folding the specialization constants create its pipelines quickly";
    EXPECT_LE(InlinedCopies(g, ""), kMaxCalls)
        << "kernel '" << k.name << "': too many inlined calls; use macros (like PARAM_U) for helpers used "
        << "hundreds of times";
  }
}

// The count itself: a kernel known to call apply_act once, and the check
// finds calls at all (a parser that saw none would pass the test above).
TEST(KernelInlining, CountsCalls) {
  bool seen_unary = false;
  for (const KernelInfo& k : Kernels()) {
    if (k.name != "unary_vec4_cpu") continue;
    seen_unary = true;
    const CallGraph g = ReadCallGraph(k);
    EXPECT_EQ(InlinedCopies(g, "apply_act("), 1);
    EXPECT_GT(InlinedCopies(g, ""), 1);
  }
  EXPECT_TRUE(seen_unary);
}

}  // namespace
}  // namespace oaaxvk::toolchain
