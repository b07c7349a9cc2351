#include "toolchain/plan/plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "test_util.h"
#include "toolchain/passes/passes.h"

namespace oaaxvk::toolchain {
namespace {
using namespace testing;

// x -> Relu a -> Relu b -> Relu c -> Relu d -> y: a chain whose arena
// values can reuse each other's space once dead.
Graph ReluChain() {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1000});
  AddNode(g, "Relu", "r1", {"x"}, {"a"});
  AddNode(g, "Sigmoid", "r2", {"a"}, {"b"});
  AddNode(g, "Relu", "r3", {"b"}, {"c"});
  AddNode(g, "Sigmoid", "r4", {"c"}, {"y"});
  AddOutput(g, "y");
  return g;
}

TEST(Plan, ArenaReusesDeadValuesAndAligns) {
  Graph g = ReluChain();
  ASSERT_TRUE(RunDefaultPipeline(g).ok());
  auto p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto plan = PlanMemory(*p);
  ASSERT_TRUE(plan.ok());
  // a, b, c are 4000 bytes each (4096 aligned); only two are live at once.
  EXPECT_EQ(plan->arena_unshared_bytes, 3u * 4096);
  EXPECT_EQ(plan->arena_bytes, 2u * 4096);
  for (const Value& v : p->values) EXPECT_EQ(v.offset % kAlignment, 0u);
  EXPECT_EQ(plan->inputs_bytes, 4096u);
  EXPECT_EQ(plan->outputs_bytes, 4096u);
}

TEST(Plan, BarriersOnReadAfterWriteAndWriteAfterRead) {
  Graph g = ReluChain();
  ASSERT_TRUE(RunDefaultPipeline(g).ok());
  auto p = Lower(g);
  ASSERT_TRUE(p.ok());
  auto plan = PlanMemory(*p);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->barrier.size(), 4u);
  EXPECT_EQ(plan->barrier[0], 0);
  for (size_t d = 1; d < 4; ++d) EXPECT_EQ(plan->barrier[d], 1) << d;
  // A chain of 4 dependent dispatches: no order needs fewer than 3.
  EXPECT_EQ(plan->barrier_lower_bound, 3u);
}

TEST(Plan, NoBarrierBetweenIndependentDispatches) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {64});
  AddNode(g, "Relu", "r1", {"x"}, {"a"});
  AddNode(g, "Sigmoid", "r2", {"x"}, {"b"});
  AddNode(g, "Add", "add", {"a", "b"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(RunDefaultPipeline(g).ok());
  auto p = Lower(g);
  ASSERT_TRUE(p.ok());
  auto plan = PlanMemory(*p);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->barrier, (std::vector<uint8_t>{0, 0, 1}));
  EXPECT_EQ(plan->barrier_lower_bound, 1u);  // r1 and r2 share a level; add after them
  // a and b are live together: distinct regions.
  EXPECT_NE(p->values[p->dispatches[0].bindings[1].value].offset,
            p->values[p->dispatches[1].bindings[1].value].offset);
}

// The bound is the longest hazard chain, whatever the order: d0 writes a,
// d1 reads it (RAW), d2 is independent of both and shares a level with d0
// or d1, d3 reads c (RAW on d2) and overwrites a while d1 may still read it
// (WAR): three levels, two barriers, which the program order also needs.
TEST(Plan, BarrierLowerBoundCountsTheLongestHazardChain) {
  Program p;
  auto value = [&](BufferKind kind, uint64_t offset) {
    Value v;
    v.kind = kind;
    v.bytes = 256;
    v.offset = offset;
    p.values.push_back(v);
    return static_cast<int>(p.values.size() - 1);
  };
  const int x = value(BufferKind::kInputs, 0), a = value(BufferKind::kArena, 0), b = value(BufferKind::kArena, 256),
            c = value(BufferKind::kArena, 512);
  auto dispatch = [&](int in, int out) {
    Dispatch d;
    d.kernel = "unary";
    d.bindings = {{in, false}, {out, true}};
    p.dispatches.push_back(d);
  };
  dispatch(x, a);  // level 1
  dispatch(a, b);  // level 2 (RAW on a)
  dispatch(x, c);  // level 1: independent, but placed after a barrier
  EXPECT_EQ(ComputeBarriers(p), (std::vector<uint8_t>{0, 1, 0}));
  EXPECT_EQ(BarrierLowerBound(p), 1u);
  dispatch(c, a);  // WAR on a (read by dispatch 1) and RAW on c: level 3
  EXPECT_EQ(BarrierLowerBound(p), 2u);
}

// The definitions of ComputeBarriers and BarrierLowerBound (plan.h) taken
// literally, pair by pair: what the planner's per-byte bookkeeping must equal.
struct PairRange {
  BufferKind kind;
  uint64_t begin, end;
  bool Overlaps(const PairRange& o) const { return kind == o.kind && begin < o.end && o.begin < end; }
};
void SplitRanges(const Program& p, size_t d, std::vector<PairRange>* reads, std::vector<PairRange>* writes) {
  for (const Binding& b : p.dispatches[d].bindings) {
    const Value& v = p.values[b.value];
    (b.written ? writes : reads)->push_back({v.kind, v.offset, v.offset + PlannedBytes(v)});
  }
}
bool AnyOverlap(const std::vector<PairRange>& a, const std::vector<PairRange>& b) {
  for (const PairRange& x : a)
    for (const PairRange& y : b)
      if (x.Overlaps(y)) return true;
  return false;
}
std::vector<uint8_t> PairwiseBarriers(const Program& p) {
  std::vector<uint8_t> barrier(p.dispatches.size(), 0);
  std::vector<PairRange> pending_writes, pending_reads;
  for (size_t d = 0; d < p.dispatches.size(); ++d) {
    std::vector<PairRange> reads, writes;
    SplitRanges(p, d, &reads, &writes);
    if (AnyOverlap(pending_writes, reads) || AnyOverlap(pending_writes, writes) || AnyOverlap(pending_reads, writes)) {
      barrier[d] = 1;
      pending_writes.clear();
      pending_reads.clear();
    }
    pending_writes.insert(pending_writes.end(), writes.begin(), writes.end());
    pending_reads.insert(pending_reads.end(), reads.begin(), reads.end());
  }
  return barrier;
}
uint32_t PairwiseLowerBound(const Program& p) {
  const size_t n = p.dispatches.size();
  std::vector<std::vector<PairRange>> reads(n), writes(n);
  for (size_t d = 0; d < n; ++d) SplitRanges(p, d, &reads[d], &writes[d]);
  std::vector<uint32_t> depth(n, 1);
  uint32_t longest = 0;
  for (size_t d = 0; d < n; ++d) {
    for (size_t e = 0; e < d; ++e)
      if (AnyOverlap(writes[e], reads[d]) || AnyOverlap(writes[e], writes[d]) || AnyOverlap(reads[e], writes[d]))
        depth[d] = std::max(depth[d], depth[e] + 1);
    longest = std::max(longest, depth[d]);
  }
  return longest == 0 ? 0 : longest - 1;
}

// Random programs over few, heavily overlapping byte ranges of two buffers
// (ranges sharing only an endpoint included).
TEST(Plan, BarriersMatchThePairwiseDefinitionOnRandomPrograms) {
  uint64_t seed = 12345;
  auto next = [&](uint64_t n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % n;
  };
  size_t barriers_seen = 0;
  for (int trial = 0; trial < 300; ++trial) {
    Program p;
    const size_t values = 1 + next(12), dispatches = next(40);
    for (size_t i = 0; i < values; ++i) {
      Value v;
      v.kind = next(3) == 0 ? BufferKind::kInputs : BufferKind::kArena;
      v.offset = next(8) * 64;
      v.bytes = static_cast<int64_t>((1 + next(4)) * 64);  // lowering makes no empty values
      p.values.push_back(v);
    }
    for (size_t d = 0; d < dispatches; ++d) {
      Dispatch dp;
      dp.kernel = "unary";
      for (size_t b = 0, nb = 1 + next(4); b < nb; ++b)
        dp.bindings.push_back({static_cast<int>(next(values)), next(2) == 0});
      p.dispatches.push_back(dp);
    }
    const std::vector<uint8_t> expected = PairwiseBarriers(p);
    ASSERT_EQ(ComputeBarriers(p), expected) << "trial " << trial;
    ASSERT_EQ(BarrierLowerBound(p), PairwiseLowerBound(p)) << "trial " << trial;
    for (uint8_t b : expected) barriers_seen += b;
  }
  EXPECT_GT(barriers_seen, 1000u);  // the programs do exercise hazards
}

// The arena offsets of the greedy placement, found by comparing every pair of
// values: what the planner's lifetime index must reproduce.
std::vector<uint64_t> PairwiseArenaOffsets(const Program& p, uint64_t* arena_bytes) {
  auto align = [](uint64_t v) { return (v + kAlignment - 1) / kAlignment * kAlignment; };
  std::vector<Lifetime> lt = ComputeLifetimes(p);
  std::vector<size_t> arena;
  for (size_t i = 0; i < p.values.size(); ++i)
    if (p.values[i].kind == BufferKind::kArena && lt[i].first >= 0) arena.push_back(i);
  std::stable_sort(arena.begin(), arena.end(), [&](size_t a, size_t b) {
    if (PlannedBytes(p.values[a]) != PlannedBytes(p.values[b])) return PlannedBytes(p.values[a]) > PlannedBytes(p.values[b]);
    return a < b;
  });
  std::vector<uint64_t> offset(p.values.size(), 0);
  std::vector<size_t> placed;
  *arena_bytes = 0;
  for (size_t i : arena) {
    const uint64_t size = align(PlannedBytes(p.values[i]));
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (size_t j : placed)
      if (!(lt[j].last < lt[i].first || lt[i].last < lt[j].first))
        busy.push_back({offset[j], offset[j] + align(PlannedBytes(p.values[j]))});
    std::sort(busy.begin(), busy.end());
    uint64_t off = 0;
    for (const auto& [b, e] : busy) {
      if (off + size <= b) break;
      off = std::max(off, e);
    }
    offset[i] = off;
    *arena_bytes = std::max(*arena_bytes, off + size);
    placed.push_back(i);
  }
  return offset;
}

TEST(Plan, ArenaOffsetsMatchThePairwisePlacementOnRandomPrograms) {
  uint64_t seed = 777;
  auto next = [&](uint64_t n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % n;
  };
  size_t shared = 0;
  for (int trial = 0; trial < 200; ++trial) {
    Program p;
    const size_t values = 1 + next(30), dispatches = 1 + next(30);
    for (size_t i = 0; i < values; ++i) {
      Value v;
      v.kind = BufferKind::kArena;
      v.bytes = static_cast<int64_t>(1 + next(4) * 300);  // sizes tie often: the order by index matters
      p.values.push_back(v);
    }
    for (size_t d = 0; d < dispatches; ++d) {
      Dispatch dp;
      dp.kernel = "unary";
      for (size_t b = 0, nb = 1 + next(3); b < nb; ++b) dp.bindings.push_back({static_cast<int>(next(values)), b == 0});
      p.dispatches.push_back(dp);
    }
    uint64_t expected_bytes = 0;
    const std::vector<uint64_t> expected = PairwiseArenaOffsets(p, &expected_bytes);
    auto plan = PlanMemory(p);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    ASSERT_EQ(plan->arena_bytes, expected_bytes) << "trial " << trial;
    for (size_t i = 0; i < values; ++i) ASSERT_EQ(p.values[i].offset, expected[i]) << "trial " << trial << " value " << i;
    shared += plan->arena_bytes < plan->arena_unshared_bytes;
  }
  EXPECT_GT(shared, 50u);  // the programs do exercise reuse
}

// Barriers of the lowered test models equal the pairwise definition.
TEST(Plan, BarriersMatchThePairwiseDefinitionOnLoweredGraphs) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {64});
  AddNode(g, "Relu", "r1", {"x"}, {"a"});
  AddNode(g, "Sigmoid", "r2", {"x"}, {"b"});
  AddNode(g, "Add", "add", {"a", "b"}, {"c"});
  AddNode(g, "Tanh", "t", {"c"}, {"d"});
  AddNode(g, "Mul", "mul", {"d", "a"}, {"e"});
  AddNode(g, "Sigmoid", "s2", {"e"}, {"y"});
  AddOutput(g, "y");
  for (Graph model : {g, ReluChain()}) {
    ASSERT_TRUE(RunDefaultPipeline(model).ok());
    auto p = Lower(model);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    auto plan = PlanMemory(*p);
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->barrier, PairwiseBarriers(*p));
    EXPECT_EQ(plan->barrier_lower_bound, PairwiseLowerBound(*p));
  }
}

// A chain of 65536 dependent dispatches: one barrier before each but the
// first, and a lower bound of 65535. Planned in 0.3 s here; the pairwise
// checks (PairwiseLowerBound, PairwiseBarriers, PairwiseArenaOffsets) take
// 32 s on the same program, so the bound of 10 s separates the two with room
// for slow and instrumented builds.
TEST(Plan, LongChainPlansInNearLinearTime) {
  constexpr size_t kN = 65536;
  Program p;
  for (size_t i = 0; i <= kN; ++i) {
    Value v;
    v.kind = i == 0 ? BufferKind::kInputs : BufferKind::kArena;
    v.bytes = 256;
    p.values.push_back(v);
  }
  for (size_t d = 0; d < kN; ++d) {
    Dispatch dp;
    dp.kernel = "unary";
    dp.bindings = {{static_cast<int>(d), false}, {static_cast<int>(d + 1), true}};
    p.dispatches.push_back(dp);
  }
  auto t0 = std::chrono::steady_clock::now();
  auto plan = PlanMemory(p);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->arena_bytes, 2u * 256);  // two values live at a time
  ASSERT_EQ(plan->barrier.size(), kN);
  size_t barriers = 0;
  for (uint8_t b : plan->barrier) barriers += b;
  EXPECT_EQ(barriers, kN - 1);
  EXPECT_EQ(plan->barrier_lower_bound, kN - 1);
  EXPECT_LT(seconds, 10.0);
}

TEST(Plan, ViewsAliasTheirSourceWithoutDispatch) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {2, 3, 4});
  AddConstI64(g, "shape", {6, 4});
  AddNode(g, "Relu", "relu", {"x"}, {"a"});
  AddNode(g, "Reshape", "reshape", {"a", "shape"}, {"b"});
  AddNode(g, "Flatten", "flat", {"b"}, {"c"});
  AddNode(g, "Sigmoid", "sig", {"c"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(RunDefaultPipeline(g).ok());
  auto p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->dispatches.size(), 2u);
  EXPECT_EQ(p->dispatches[0].bindings[1].value, p->dispatches[1].bindings[0].value);
}

TEST(Lower, GraphOutputThatIsAnInputGetsACopy) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {5});
  AddNode(g, "Identity", "id", {"x"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(RunDefaultPipeline(g).ok());
  auto p = Lower(g);
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->dispatches.size(), 1u);
  EXPECT_EQ(p->dispatches[0].kernel, "strided_copy");
  EXPECT_EQ(p->values[p->outputs[0].value].kind, BufferKind::kOutputs);
}

// Issue 5: an int64 graph input is converted to the int32 compute format at
// the boundary, and Cast int64 -> float32 is a `convert` dispatch.
TEST(Lower, Int64InputIsConvertedAtTheBoundaryAndCast) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {3});
  Tensor t;
  t.name = "i"; t.dtype = DType::kInt64; t.shape = {3}; t.has_shape = true;
  g.tensors["i"] = t;
  g.inputs.push_back({"i", "i"});
  AddNode(g, "Cast", "cast", {"i"}, {"f"}).SetInt("to", 1);
  AddNode(g, "Add", "add", {"x", "f"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(RunDefaultPipeline(g).ok());
  auto p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->inputs.size(), 2u);
  EXPECT_EQ(p->inputs[1].nbytes, 24u);  // host bytes: 3 x int64
  ASSERT_EQ(p->dispatches.size(), 3u);
  EXPECT_EQ(p->dispatches[0].kernel, "convert");  // int64 -> int32 at the input
  EXPECT_EQ(p->dispatches[0].spec, (std::vector<uint32_t>{3, 7, 6, 7, 0}));
  EXPECT_EQ(p->dispatches[1].kernel, "convert");  // Cast int32 -> float32 (saturate = 1)
  EXPECT_EQ(p->dispatches[1].spec, (std::vector<uint32_t>{3, 6, 1, 1, 1}));
  EXPECT_EQ(p->dispatches[2].kernel, "eltwise");
}

// A DequantizeLinear of an int4 initializer (blocked, the LLM weight form)
// keeps the weight packed, two elements per byte, in the weights buffer; a
// `convert` dispatch reads the packed bytes on the device (the Cast INT4 ->
// float32 of the decomposition), and no float32 copy of the weight is folded
// at conversion.
TEST(Lower, Int4WeightStaysPackedAndIsUnpackedOnTheDevice) {
  Graph g;
  g.opset = 21;
  Tensor w;
  w.name = "w"; w.dtype = DType::kInt4; w.shape = {5, 2}; w.has_shape = true; w.is_const = true;
  w.data = {1, 2, 3, 4, 5, 6, 7, 0x8, 0x9, 0xf};  // one code per byte in the IR: 1..7, -8, -7, -1
  g.tensors["w"] = w;
  g.tensors["scale"] = MakeConstF32("scale", {3, 2}, {0.5f, 1.f, 2.f, 4.f, 8.f, 16.f});
  AddNode(g, "DequantizeLinear", "dq", {"w", "scale"}, {"y"}).SetInt("axis", 0);
  g.nodes.back().SetInt("block_size", 2);
  AddOutput(g, "y");
  ASSERT_TRUE(RunDefaultPipeline(g).ok());
  auto p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  bool packed = false, unpacked = false;
  for (const auto& v : p->values)
    if (v.kind == BufferKind::kWeights && v.tensor == "w") {
      packed = true;
      EXPECT_EQ(v.data, (std::vector<uint8_t>{0x21, 0x43, 0x65, 0x87, 0xf9, 0, 0, 0}));
    }
  for (const auto& d : p->dispatches)
    if (d.kernel == "convert" && DimValues(d.spec).at(1) == static_cast<int64_t>(DType::kInt4)) unpacked = true;
  EXPECT_TRUE(packed) << "no packed weights value for 'w'";
  EXPECT_TRUE(unpacked) << "no convert dispatch reading the packed int4 weight";
}

// Data types without a device representation are rejected naming the tensor.
// uint32 is computed as int32 since issue 5 (the runtime range-checks uint32
// inputs): float -> uint32 -> float lowers to two convert dispatches.
TEST(Lower, Uint32CastsLowerToConvertDispatches) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {3});
  AddNode(g, "Cast", "cast", {"x"}, {"u"}).SetInt("to", 12);
  AddNode(g, "Cast", "back", {"u"}, {"y"}).SetInt("to", 1);
  AddOutput(g, "y");
  ASSERT_TRUE(RunDefaultPipeline(g).ok());
  auto p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->dispatches.size(), 2u);
  EXPECT_EQ(p->dispatches[0].kernel, "convert");
  EXPECT_EQ(p->dispatches[0].spec[3], 12u) << "semantic type uint32";
  EXPECT_EQ(p->dispatches[1].spec[3], 1u) << "semantic type float32";
}

// CPU mirror of the eltwise kernel's index math (shaders/eltwise.comp):
// decomposing the flat output index over D0..D5 and dotting with the
// broadcast strides must address the numpy-broadcast element.
TEST(KernelIndexing, EltwiseBroadcastStridesMatchNumpyBroadcasting) {
  Graph g;
  g.opset = 13;
  AddInput(g, "a", {2, 1, 3});
  AddInput(g, "b", {4, 1});
  AddNode(g, "Sub", "sub", {"a", "b"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(RunDefaultPipeline(g).ok());
  auto p = Lower(g);
  ASSERT_TRUE(p.ok());
  const std::vector<int64_t> s = DimValues(p->dispatches[0].spec);
  ASSERT_EQ(s[0], 24u);
  float A[6] = {1, 2, 3, 4, 5, 6}, B[4] = {10, 20, 30, 40};
  for (uint32_t i = 0; i < s[0]; ++i) {
    uint32_t r = i, idx[6];
    for (int d = 5; d >= 0; --d) { idx[d] = d ? r % s[5 + d] : r; r /= s[5 + d]; }
    uint32_t ia = 0, ib = 0;
    for (int d = 0; d < 6; ++d) { ia += idx[d] * s[11 + d]; ib += idx[d] * s[17 + d]; }
    uint32_t n = i / 12, j = (i / 3) % 4, k = i % 3;  // y[n][j][k] = a[n][0][k] - b[j][0]
    EXPECT_EQ(A[ia] - B[ib], A[n * 3 + k] - B[j]) << i;
  }
}

// CPU mirror of strided_copy used by Transpose.
TEST(KernelIndexing, TransposeStridedCopyMatchesPermutation) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {2, 3, 4});
  AddNode(g, "Transpose", "t", {"x"}, {"y"}).SetInts("perm", {2, 0, 1});
  AddOutput(g, "y");
  ASSERT_TRUE(RunDefaultPipeline(g).ok());
  auto p = Lower(g);
  ASSERT_TRUE(p.ok());
  const std::vector<int64_t> s = DimValues(p->dispatches[0].spec);
  std::vector<float> x(24), y(24, -1);
  for (int i = 0; i < 24; ++i) x[i] = static_cast<float>(i);
  for (uint32_t i = 0; i < s[0]; ++i) {
    uint32_t r = i, idx[6];
    for (int d = 5; d >= 0; --d) { idx[d] = d ? r % s[3 + d] : r; r /= s[3 + d]; }
    uint32_t si = s[1], so = s[2];
    for (int d = 0; d < 6; ++d) { si += idx[d] * s[9 + d]; so += idx[d] * s[15 + d]; }
    y[so] = x[si];
  }
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 3; ++c) EXPECT_EQ(y[(a * 2 + b) * 3 + c], x[(b * 3 + c) * 4 + a]);
}

}  // namespace
}  // namespace oaaxvk::toolchain
