// Device loops that size their body from device data (ir/loop_reads.h) and
// that collect their iterations in a loop-carried value (ir/loop_append.h):
// which values are read back, the constant of symbols that replaces them,
// and the appended value that becomes a scan output.
#include <gtest/gtest.h>

#include "test_util.h"
#include "toolchain/ir/limits.h"
#include "toolchain/ir/loop_append.h"
#include "toolchain/ir/loop_nodes.h"
#include "toolchain/ir/loop_reads.h"
#include "toolchain/ir/shape_infer.h"

namespace oaaxvk::toolchain {
namespace {
using namespace testing;

void SetInt64(Graph& g, const std::string& name, const Shape& s) {
  Tensor& t = g.tensors[name];
  t.dtype = DType::kInt64;
  t.shape = s;
  t.has_shape = true;
}

// boxes [6, 4] (float), x [6, 16]; bint = Cast(boxes) before the loop. The
// body: box = Gather(bint, it) (int64 [4], from device data) reshapes its
// row; sh = Shape(row) (from shapes only) reshapes it again.
Graph ReadGraph() {
  Graph g;
  g.opset = 13;
  AddInput(g, "m", {});
  g.tensors["m"].dtype = DType::kInt64;
  AddInput(g, "boxes", {6, 4});
  AddInput(g, "x", {6, 16});
  AddNode(g, "Cast", "cast", {"boxes"}, {"bint"}).SetInt("to", 7);
  SetInt64(g, "bint", {6, 4});
  {
    Node& b = AddNode(g, "_LoopBegin", "l/begin", {"m", ""}, {"it", "c"});
    b.SetString("_loop", "l");
    b.SetInt("_loop_states", 0);
  }
  SetInt64(g, "it", {});
  AddNode(g, "Gather", "box", {"bint", "it"}, {"box"}).SetInt("axis", 0);
  SetInt64(g, "box", {4});
  AddNode(g, "Gather", "row", {"x", "it"}, {"row"}).SetInt("axis", 0);
  AddNode(g, "Reshape", "by_box", {"row", "box"}, {"r1"});
  AddNode(g, "Shape", "sh", {"row"}, {"sh"});
  SetInt64(g, "sh", {1});
  AddNode(g, "Reshape", "by_shape", {"r1", "sh"}, {"r2"});
  {
    Node& e = AddNode(g, "_LoopEnd", "l/end", {"c", "r2", "c"}, {"scan"});
    e.SetString("_loop", "l");
    e.SetInt("_loop_states", 0);
  }
  AddOutput(g, "scan");
  return g;
}

TEST(LoopReads, SmallIntegersFromDeviceDataThatSizeTheBodyAreRead) {
  Graph g = ReadGraph();
  std::vector<Symbol> syms = FindLoopReads(g);
  ASSERT_EQ(syms.size(), 4u);  // box's four elements; not sh (shapes only), not bint (outside the body)
  for (int j = 0; j < 4; ++j) {
    EXPECT_EQ(syms[static_cast<size_t>(j)].name, "box/value[" + std::to_string(j) + "]");
    EXPECT_TRUE(syms[static_cast<size_t>(j)].decided);
    EXPECT_EQ(syms[static_cast<size_t>(j)].min, -1024);  // limits.max_loop_read_value
    EXPECT_EQ(syms[static_cast<size_t>(j)].max, 1024);
  }
  ConversionLimits small;
  small.max_loop_read_value = 64;
  const LimitsScope scope(&small);
  EXPECT_EQ(FindLoopReads(g).at(0).min, -64);
}

TEST(LoopReads, ReadersSeeAConstantOfTheSymbols) {
  Graph g = ReadGraph();
  std::vector<Symbol> syms = FindLoopReads(g);
  SymContext ctx(syms);
  SymScope scope(&ctx);
  std::set<std::string> used;
  ASSERT_TRUE(InsertLoopReads(g, syms, {1, 2, 4, 4}, &used).ok());
  EXPECT_EQ(used.size(), 4u);
  const int read = g.Producer("box") + 1;
  ASSERT_EQ(g.nodes[static_cast<size_t>(read)].op_type, "_LoopRead");
  const std::string value = g.nodes[static_cast<size_t>(read)].GetString("_read_value", "");
  EXPECT_EQ(g.nodes[static_cast<size_t>(g.Producer("r1"))].inputs[1], value);  // the reader reads the constant
  const Tensor& t = g.tensors.at(value);
  ASSERT_TRUE(t.is_const);
  ASSERT_EQ(t.sym.size(), 4u);
  EXPECT_EQ(t.AsInts(), (std::vector<int64_t>{1, 2, 4, 4}));
  std::set<int64_t> all = {0, 1, 2, 3};
  EXPECT_TRUE(ReadsSymbols(t, all));
  EXPECT_FALSE(ReadsSymbols(t, {7}));
  // The body: the _LoopRead, and every node up to the _LoopEnd.
  std::vector<std::vector<size_t>> body;
  std::vector<int64_t> end;
  ASSERT_TRUE(FindLoopBodies(g, &body, &end).ok());
  const size_t begin = static_cast<size_t>(g.Producer("it"));
  EXPECT_NE(std::find(body[begin].begin(), body[begin].end(), static_cast<size_t>(read)), body[begin].end());
}

// init [0, 3]; the body appends Unsqueeze(Gather(x, it)) by a
// Concat along axis 0 (init [1, 3] unless `empty_init`).
// With `zeros`, init is ConstantOfShape([0, 3]), whose shape is not known
// before shape inference, and the body appends through a Cast to float.
Graph AppendGraph(bool empty_init, bool zeros = false) {
  Graph g;
  g.opset = 13;
  AddInput(g, "m", {});
  g.tensors["m"].dtype = DType::kInt64;
  AddInput(g, "x", {5, 3});
  if (zeros) {
    AddConstI64(g, "zshape", {0, 3});
    AddNode(g, "ConstantOfShape", "zeros", {"zshape"}, {"init"});
    g.tensors["init"].dtype = DType::kFloat;
  } else {
    AddConst(g, "init", {empty_init ? 0 : 1, 3});
  }
  AddConstI64(g, "axes0", {0});
  {
    Node& b = AddNode(g, "_LoopBegin", "l/begin", {"m", "", "init"}, {"it", "c", "acc"});
    b.SetString("_loop", "l");
    b.SetInt("_loop_states", 1);
  }
  AddNode(g, "Gather", "row", {"x", "it"}, {"row"}).SetInt("axis", 0);
  AddNode(g, "Unsqueeze", "u", {"row", "axes0"}, {"u"});
  if (zeros) {
    AddNode(g, "Cast", "same_type", {"acc"}, {"acc_f"}).SetInt("to", 1);
    AddNode(g, "Concat", "append", {"acc_f", "u"}, {"acc_next"}).SetInt("axis", 0);
  } else {
    AddNode(g, "Concat", "append", {"acc", "u"}, {"acc_next"}).SetInt("axis", 0);
  }
  {
    Node& e = AddNode(g, "_LoopEnd", "l/end", {"c", "acc_next", "c"}, {"all"});
    e.SetString("_loop", "l");
    e.SetInt("_loop_states", 1);
  }
  AddOutput(g, "all");
  return g;
}

TEST(LoopAppend, AnEmptyValueAppendedToBecomesAScanOutput) {
  Graph g = AppendGraph(true);
  ASSERT_TRUE(StackAppendedLoopStates(g).ok());
  ASSERT_TRUE(g.Validate().ok());
  const Node& b = g.nodes[static_cast<size_t>(g.Producer("it"))];
  const Node& e = g.nodes[static_cast<size_t>(g.Producer("all"))];
  EXPECT_EQ(b.inputs, (std::vector<std::string>{"m", ""}));
  EXPECT_EQ(b.GetInt("_loop_states", -1), 0);
  EXPECT_EQ(e.GetInt("_loop_states", -1), 0);
  ASSERT_EQ(e.inputs.size(), 3u);  // condition, the slice, the link
  EXPECT_EQ(g.nodes[static_cast<size_t>(g.Producer(e.inputs[1]))].op_type, "Squeeze");
  ASSERT_TRUE(InferShapes(g).ok());
  EXPECT_EQ(g.tensors["all"].shape, (Shape{1024, 3}));  // the stack of the rows, at the cap
}

TEST(LoopAppend, ZerosOfAConstantShapeAndASameTypeCastToo) {
  Graph g = AppendGraph(true, /*zeros=*/true);
  ASSERT_TRUE(StackAppendedLoopStates(g).ok());
  ASSERT_TRUE(g.Validate().ok());
  EXPECT_EQ(g.Producer("acc_f"), -1);  // the Cast is gone
  ASSERT_TRUE(InferShapes(g).ok());
  EXPECT_EQ(g.tensors["all"].shape, (Shape{1024, 3}));
}

TEST(LoopAppend, AValueThatDoesNotStartEmptyStaysLoopCarried) {
  Graph g = AppendGraph(false);
  ASSERT_TRUE(StackAppendedLoopStates(g).ok());
  EXPECT_EQ(g.nodes[static_cast<size_t>(g.Producer("acc_next"))].op_type, "Concat");
  Status st = InferShapes(g);
  ASSERT_FALSE(st.ok());  // it grows: refused as before
  EXPECT_NE(st.message().find("may not change across iterations"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace oaaxvk::toolchain
