// The selection of a run-time If (Where with node attribute _if_select)
// between branch results whose shapes differ only by leading 1s ([] and
// [1]): the output takes the larger rank when every reader broadcasts it
// against an input of at least that rank, and is refused, naming the node
// and the shapes, when a reader would see the rank (ir/shape_infer_int.h
// IsLeadingOnesSelection / CheckLeadingOnesSelection).
#include <gtest/gtest.h>

#include "test_util.h"

namespace oaaxvk::toolchain {
namespace {
using namespace testing;

// c: a bool condition read at run time; t: [] and e: [1] branch results;
// y = select(c, t, e); z = x * y for x of shape `x_shape`. With
// `y_is_output`, y is a graph output too.
Graph Selection(const Shape& x_shape, bool y_is_output) {
  Graph g;
  g.opset = 13;
  AddInput(g, "c", {});
  g.tensors["c"].dtype = DType::kBool;
  AddInput(g, "t", {});
  AddInput(g, "e", {1});
  AddInput(g, "x", x_shape);
  AddNode(g, "Where", "if/select", {"c", "t", "e"}, {"y"}).SetInt("_if_select", 1);
  AddNode(g, "Mul", "scale", {"x", "y"}, {"z"});
  AddOutput(g, "z");
  if (y_is_output) AddOutput(g, "y");
  return g;
}

TEST(IfSelectionRanks, ScalarAndOneElementBranchesSelectWhenEveryReaderBroadcasts) {
  Graph g = Selection({4}, false);
  auto p = FoldAndLower(g);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1}));
  EXPECT_EQ(g.FindTensor("z")->shape, (Shape{4}));
  bool where = false;
  for (const Dispatch& d : p->dispatches) where = where || d.node == "if/select";
  EXPECT_TRUE(where);
}

TEST(IfSelectionRanks, ARankDependentReaderIsRefused) {
  // y itself is a graph output: its rank is what the host sees.
  Graph out = Selection({4}, true);
  auto p = FoldAndLower(out);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("node 'if/select' (Where): the If branches give output 'y' the shapes [] and "
                                      "[1] (the same elements, different ranks)"),
            std::string::npos)
      << p.status().message();
  // The other Mul input is a scalar: the product's rank would follow the branch.
  Graph scalar = Selection({}, false);
  auto q = FoldAndLower(scalar);
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("bind the condition"), std::string::npos) << q.status().message();
}

}  // namespace
}  // namespace oaaxvk::toolchain
