// The check points of a dynamic-shape conversion: compiled on several threads
// and checked in order (driver/check_points.h), and compiled without weight
// bytes, compared by digest (LowerOptions::weight_bytes, CheckSample).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <numeric>
#include <thread>

#include "test_util.h"
#include "toolchain/driver/check_points.h"
#include "toolchain/driver/dynamic.h"
#include "toolchain/ir/shape_infer.h"
#include "toolchain/lower/lower.h"

namespace oaaxvk::toolchain {
namespace {

using testing::AddInput;
using testing::AddNode;
using testing::AddOutput;

// Later points finish first (shorter sleeps); the checks still run in order
// and the failure reported is the first in order, not the first in time.
TEST(CheckPoints, ChecksInOrderAndReportsTheFirstFailureInOrder) {
  std::mutex mu;
  std::vector<size_t> checked, progress;
  std::atomic<int> running{0}, most{0};
  auto compile = [&](size_t k) -> StatusOr<CompileResult> {
    const int now = ++running;
    for (int m = most.load(); now > m && !most.compare_exchange_weak(m, now);) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5 * (6 - static_cast<int>(k))));
    --running;
    if (k == 4) return Internal("compile four");
    CompileResult r;
    r.nodes_before = k;
    return r;
  };
  auto check = [&](size_t k, const CompileResult& r) -> Status {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(r.nodes_before, k) << "each check gets its own point's result";
    checked.push_back(k);
    return k == 2 ? Internal("check two") : Status::Ok();
  };
  Status st = CompileAndCheckInOrder(6, 3, nullptr, compile, check, [&](size_t d) { progress.push_back(d); });
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.ToString().find("check two"), std::string::npos) << st.ToString();
  EXPECT_EQ(checked, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(progress, (std::vector<size_t>{1, 2}));
  EXPECT_LE(most.load(), 3) << "at most `workers` compiles at once";

  // A failed compile stops the checks at its point.
  checked.clear();
  st = CompileAndCheckInOrder(6, 2, nullptr, compile, [&](size_t k, const CompileResult&) {
    checked.push_back(k);
    return Status::Ok();
  });
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.ToString().find("compile four"), std::string::npos) << st.ToString();
  EXPECT_EQ(checked, (std::vector<size_t>{0, 1, 2, 3}));
  // Every point passes: all checked; the limits reach the worker threads.
  ConversionLimits limits;
  limits.max_dispatches = 12345;
  checked.clear();
  st = CompileAndCheckInOrder(
      5, 4, &limits,
      [&](size_t k) -> StatusOr<CompileResult> {
        if (CurrentLimits().max_dispatches != 12345) return Internal("the worker runs without the limits");
        CompileResult r;
        r.nodes_before = k;
        return r;
      },
      [&](size_t k, const CompileResult&) {
        checked.push_back(k);
        return Status::Ok();
      });
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(checked, (std::vector<size_t>{0, 1, 2, 3, 4}));
}

// Lowers Gemm(x [N, 64], W [64, 64]) at N = n in `ctx`; W's elements are
// 0.01 * i + `bump` (a binary16-representable range: a weights_f16 copy).
Program LowerGemm(SymContext* ctx, int64_t n, float bump, bool weight_bytes) {
  SymScope scope(ctx);
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {Dim(n, ctx->SymbolNode(0)), 64});
  std::vector<float> w(64 * 64);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(i % 97) + bump;
  g.tensors["w"] = MakeConstF32("w", {64, 64}, w);
  AddNode(g, "Gemm", "gemm", {"x", "w"}, {"y"});
  AddOutput(g, "y");
  EXPECT_TRUE(InferShapes(g).ok());
  LowerOptions opt;
  opt.weight_bytes = weight_bytes;
  StatusOr<Program> p = Lower(g, opt);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? std::move(*p) : Program{};
}

TEST(DynamicCheck, SamplesWithoutWeightBytesAreComparedByDigest) {
  SymContext canon({{"N", 1, 64, 1}});
  Program c = LowerGemm(&canon, 64, 0.f, true);
  SymContext with_ctx({{"N", 1, 64, 1}}), without_ctx({{"N", 1, 64, 1}});
  Program with_bytes = LowerGemm(&with_ctx, 5, 0.f, true);
  Program without = LowerGemm(&without_ctx, 5, 0.f, false);
  ASSERT_EQ(with_bytes.values.size(), without.values.size());
  int weights = 0, halves = 0;
  for (size_t v = 0; v < without.values.size(); ++v) {
    const Value& a = with_bytes.values[v];
    const Value& b = without.values[v];
    ASSERT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.bytes.value(), b.bytes.value()) << a.tensor;
    if (a.kind == BufferKind::kWeights) {
      ++weights;
      EXPECT_TRUE(b.data.empty());
      EXPECT_EQ(b.digest, WeightsDigest(a.data)) << a.tensor;
    }
    if (a.kind == BufferKind::kWeightsF16) {
      ++halves;
      EXPECT_FALSE(a.data.empty());
      EXPECT_TRUE(b.data.empty());
    }
  }
  EXPECT_GE(weights, 1);
  EXPECT_EQ(halves, 1) << "the weight fits binary16: its copy is chosen without its bytes too";
  EXPECT_TRUE(CheckSample(c, canon, with_bytes, {5}).ok());
  Status st = CheckSample(c, canon, without, {5});
  EXPECT_TRUE(st.ok()) << st.ToString();
  // A constant that differs at the point is refused by its digest.
  SymContext other_ctx({{"N", 1, 64, 1}});
  Program other = LowerGemm(&other_ctx, 5, 0.5f, false);
  st = CheckSample(c, canon, other, {5});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.ToString().find("constant 'w'"), std::string::npos) << st.ToString();
  // The digest tells apart one changed bit.
  std::vector<uint8_t> bytes(4099);
  std::iota(bytes.begin(), bytes.end(), 0);
  const uint64_t d = WeightsDigest(bytes);
  for (size_t i : {size_t{0}, size_t{7}, size_t{4098}}) {
    std::vector<uint8_t> flipped = bytes;
    flipped[i] ^= 1;
    EXPECT_NE(WeightsDigest(flipped), d) << i;
  }
  bytes.push_back(0);
  EXPECT_NE(WeightsDigest(bytes), d) << "the length counts";
}

}  // namespace
}  // namespace oaaxvk::toolchain
