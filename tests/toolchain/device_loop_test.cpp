// A Loop decided on the device (ir/loop_nodes.h, lower/lower_loop.inc,
// docs/bundle-format.md "Segment program"): which nodes form the body, the
// shapes of _LoopBegin / _LoopEnd, the control program the lowering builds
// around the body, and the planner keeping values that live across the
// body's rows alive over all of them.
#include <gtest/gtest.h>

#include <algorithm>

#include "test_util.h"
#include "toolchain/ir/loop_nodes.h"
#include "toolchain/ir/shape_infer.h"
#include "toolchain/plan/plan.h"

namespace oaaxvk::toolchain {
namespace {
using namespace testing;

// m (int64 trip count), x [4]; w = Relu(x) before the loop; the body:
// b1 = s + w, inv = Sigmoid(w) (reads only w: computed once, before the
// loop), b2 = b1 * inv; _LoopEnd carries b2 and stacks b1; after = Relu(sf).
Graph LoopGraph(const std::string& carried_op = "Mul") {
  Graph g;
  g.opset = 13;
  AddInput(g, "m", {});
  g.tensors["m"].dtype = DType::kInt64;
  AddInput(g, "x", {4});
  AddNode(g, "Relu", "outer", {"x"}, {"w"});
  {
    Node& b = AddNode(g, "_LoopBegin", "l/begin", {"m", "", "x"}, {"it", "c", "s"});
    b.SetString("_loop", "l");
    b.SetInt("_loop_states", 1);
  }
  AddNode(g, "Add", "b1", {"s", "w"}, {"b1"});
  AddNode(g, "Sigmoid", "inv", {"w"}, {"inv"});
  if (carried_op == "Concat") {
    AddNode(g, "Concat", "b2", {"b1", "inv"}, {"b2"}).SetInt("axis", 0);
  } else {
    AddNode(g, carried_op, "b2", {"b1", "inv"}, {"b2"});
  }
  {
    Node& e = AddNode(g, "_LoopEnd", "l/end", {"c", "b2", "b1", "c"}, {"sf", "scan"});
    e.SetString("_loop", "l");
    e.SetInt("_loop_states", 1);
  }
  AddNode(g, "Relu", "after", {"sf"}, {"y"});
  AddOutput(g, "y");
  AddOutput(g, "scan");
  return g;
}

TEST(DeviceLoop, TheBodyIsWhatReadsTheLoopsValues) {
  Graph g = LoopGraph();
  std::vector<std::vector<size_t>> body;
  std::vector<int64_t> end;
  ASSERT_TRUE(FindLoopBodies(g, &body, &end).ok());
  std::vector<std::string> names;
  for (size_t i : body[1]) names.push_back(g.nodes[i].name);
  EXPECT_EQ(names, (std::vector<std::string>{"b1", "b2"}));  // not "inv", not "after"
  EXPECT_EQ(end[1], 5);
  EXPECT_EQ(end[0], -1);
}

TEST(DeviceLoop, ScanOutputsArePlannedAtTheCapAndCarriedShapesMustStay) {
  Graph g = LoopGraph();
  ASSERT_TRUE(InferShapes(g).ok());
  EXPECT_EQ(g.tensors["it"].dtype, DType::kInt64);
  EXPECT_TRUE(g.tensors["it"].shape.empty());
  EXPECT_EQ(g.tensors["sf"].shape, (Shape{4}));
  EXPECT_EQ(g.tensors["scan"].shape, (Shape{1024, 4}));  // limits.max_loop_iterations

  Graph grow = LoopGraph("Concat");
  Status st = InferShapes(grow);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("node 'l' (Loop): the loop-carried value 0 ('x') enters the loop as float32 [4] but "
                              "the body returns 'b2' as float32 [8]"),
            std::string::npos)
      << st.message();
}

// The program around the body with decided symbols trip (0), count (1) and
// cond (2), cap 8: run 0; read trip; set count := 0; branch_zero count < trip
// -> end; set count := count + 1; run 1 (the body); jump back (limit 8);
// end: run 2.
TEST(DeviceLoop, TheBodyIsOneSegmentRunPerIteration) {
  std::vector<Symbol> syms = {Symbol("l/trip_count", 0, 8, 1), Symbol("l/iterations", 0, 8, 1),
                              Symbol("l/cond", 0, 1, 1)};
  for (Symbol& y : syms) y.decided = true;
  SymContext ctx(syms);
  SymScope scope(&ctx);
  Graph g = LoopGraph();
  for (Node& n : g.nodes)
    if (IsLoopNode(n)) {
      n.SetInt("_loop_trip", 0);
      n.SetInt("_loop_count", 1);
      n.SetInt("_loop_cond", 2);
      n.SetInt("_loop_count_value", 8);
      n.SetInt("_loop_cap", 8);
    }
  ASSERT_TRUE(RunDefaultPipeline(g).ok());
  auto p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const ControlProgram& cp = p->control;
  ASSERT_EQ(cp.segments.size(), 3u);
  ASSERT_EQ(cp.loop_bodies.size(), 1u);
  EXPECT_EQ(cp.loop_bodies[0].first, cp.segments[1].first);
  EXPECT_EQ(cp.loop_bodies[0].second, cp.segments[1].second);
  std::vector<ControlOp> ops;
  for (const ControlStep& s : cp.steps) ops.push_back(s.op);
  EXPECT_EQ(ops, (std::vector<ControlOp>{ControlOp::kRun, ControlOp::kRead, ControlOp::kSet, ControlOp::kBranchZero,
                                         ControlOp::kSet, ControlOp::kRun, ControlOp::kJump, ControlOp::kRun}));
  EXPECT_EQ(cp.steps[1].a, 0);  // the trip count's symbol
  EXPECT_EQ(cp.steps[3].b, 7);  // past the jump
  EXPECT_EQ(cp.steps[6].a, 3);  // back to the test
  EXPECT_EQ(cp.steps[6].b, 8);  // the cap
  EXPECT_NE(cp.texts.at(static_cast<size_t>(cp.reads.at(0).text)).find("the trip count of Loop 'l'"),
            std::string::npos);
  // Sigmoid(w) reads only values from before the loop: computed before it.
  for (uint32_t d = cp.segments[1].first; d < cp.segments[1].second; ++d)
    EXPECT_NE(p->dispatches[d].node, "inv") << d;
}

// x -> r1 a -> r2 b -> r3 c -> r4 y; with r2 and r3 a loop body, `a` (from
// before the loop, read by the body's first row) must outlive the body's
// last row, so c cannot take its bytes.
TEST(DeviceLoop, ValuesLiveAcrossTheWholeBody) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1000});
  AddNode(g, "Relu", "r1", {"x"}, {"a"});
  AddNode(g, "Sigmoid", "r2", {"a"}, {"b"});
  AddNode(g, "Relu", "r3", {"b"}, {"c"});
  AddNode(g, "Sigmoid", "r4", {"c"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(RunDefaultPipeline(g).ok());
  auto p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->dispatches.size(), 4u);
  int a = -1, c = -1;
  for (size_t i = 0; i < p->values.size(); ++i) {
    if (p->values[i].tensor == "a") a = static_cast<int>(i);
    if (p->values[i].tensor == "c") c = static_cast<int>(i);
  }
  ASSERT_GE(a, 0);
  ASSERT_GE(c, 0);
  EXPECT_EQ(ComputeLifetimes(*p)[static_cast<size_t>(a)].last, 1);
  p->control.loop_bodies = {{1, 3}};
  const std::vector<Lifetime> lt = ComputeLifetimes(*p);
  EXPECT_EQ(lt[static_cast<size_t>(a)].last, 2);
  EXPECT_EQ(lt[static_cast<size_t>(c)].first, 1);  // c, read after the body, is alive over all of it
  auto plan = PlanMemory(*p);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_NE(p->values[static_cast<size_t>(a)].offset, p->values[static_cast<size_t>(c)].offset);
}

}  // namespace
}  // namespace oaaxvk::toolchain
