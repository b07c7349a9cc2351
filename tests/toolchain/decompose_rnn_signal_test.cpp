// Decompositions of recurrent layers, windows, DFT/STFT, training
// optimizers, Compress and MelWeightMatrix (decompose_rnn.cpp,
// decompose_signal.cpp, decompose_static.cpp): op counts, shapes, constants
// and errors. Numerics are checked end to end by the ONNX node tests
// (scripts/conformance.sh).
#include <cmath>

#include <gtest/gtest.h>

#include "test_util.h"
#include "toolchain/passes/decompose.h"

namespace oaaxvk::toolchain {
namespace {
using namespace testing;

TEST(DecomposeRnn, LstmUnrollsOneRecurrentMatMulPerStep) {
  Graph g;
  g.opset = 14;
  AddInput(g, "X", {3, 2, 4});   // [seq, batch, input]
  AddInput(g, "W", {1, 20, 4});  // 4 gates x hidden 5
  AddInput(g, "R", {1, 20, 5});
  Node& n = AddNode(g, "LSTM", "lstm", {"X", "W", "R"}, {"Y", "Y_h", "Y_c"});
  n.SetInt("hidden_size", 5);
  for (const char* o : {"Y", "Y_h", "Y_c"}) AddOutput(g, o);
  PassResult r;
  ASSERT_TRUE(DecomposeOps(g, &r).ok());
  EXPECT_EQ(g.CountOps("LSTM"), 0u);
  EXPECT_EQ(g.CountOps("MatMul"), 1u + 3u);  // X W^T once, H R^T per step
  EXPECT_EQ(g.CountOps("Sigmoid"), 3u * 3u);  // i, f, o per step
  EXPECT_EQ(g.CountOps("Tanh"), 2u * 3u);     // g(c~) and h(C) per step
  EXPECT_EQ(g.FindTensor("Y")->shape, (Shape{3, 1, 2, 5}));
  EXPECT_EQ(g.FindTensor("Y_h")->shape, (Shape{1, 2, 5}));
  EXPECT_EQ(g.FindTensor("Y_c")->shape, (Shape{1, 2, 5}));
  EXPECT_TRUE(g.Validate().ok());
}

TEST(DecomposeRnn, BatchwiseBidirectionalGruShapes) {
  Graph g;
  g.opset = 14;
  AddInput(g, "X", {2, 4, 3});   // layout 1: [batch, seq, input]
  AddInput(g, "W", {2, 9, 3});   // 2 directions, 3 gates x hidden 3
  AddInput(g, "R", {2, 9, 3});
  Node& n = AddNode(g, "GRU", "gru", {"X", "W", "R"}, {"Y", "Y_h"});
  n.SetInt("hidden_size", 3);
  n.SetInt("layout", 1);
  n.SetString("direction", "bidirectional");
  AddOutput(g, "Y");
  AddOutput(g, "Y_h");
  PassResult r;
  ASSERT_TRUE(DecomposeOps(g, &r).ok());
  EXPECT_EQ(g.CountOps("GRU"), 0u);
  // Per direction: X W^T once; per step H R_zr^T and (r H) R_h^T.
  EXPECT_EQ(g.CountOps("MatMul"), 2u * (1u + 2u * 4u));
  EXPECT_EQ(g.FindTensor("Y")->shape, (Shape{2, 4, 2, 3}));
  EXPECT_EQ(g.FindTensor("Y_h")->shape, (Shape{2, 2, 3}));
  EXPECT_TRUE(g.Validate().ok());
}

// initial_h / initial_c of a batch-first (layout 1) layer are [B, D, H]: each
// direction's state is a slice of axis 1 (numerics against ONNX Runtime:
// tests/toolchain/edge_cases_vs_ort.sh, rnn_layout1).
TEST(DecomposeRnn, BatchFirstInitialStatesAreSlicedAlongTheDirectionAxis) {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    const int64_t gates = std::string(op) == "LSTM" ? 4 : std::string(op) == "GRU" ? 3 : 1;
    Graph g;
    g.opset = 14;
    AddInput(g, "X", {3, 4, 5});  // [batch 3, seq 4, input 5]
    AddInput(g, "W", {2, gates * 2, 5});
    AddInput(g, "R", {2, gates * 2, 2});
    AddInput(g, "h0", {3, 2, 2});  // [batch, directions, hidden]
    AddInput(g, "c0", {3, 2, 2});
    std::vector<std::string> in = {"X", "W", "R", "", "", "h0"};
    std::vector<std::string> out = {"Y", "Y_h"};
    if (gates == 4) {
      in.push_back("c0");
      out.push_back("Y_c");
    }
    Node& n = AddNode(g, op, "rnn", in, out);
    n.SetInt("hidden_size", 2);
    n.SetInt("layout", 1);
    n.SetString("direction", "bidirectional");
    for (const std::string& o : out) AddOutput(g, o);
    PassResult r;
    Status st = DecomposeOps(g, &r);
    ASSERT_TRUE(st.ok()) << op << ": " << st.message();
    size_t slices = 0;
    for (const Node& m : g.nodes) {
      if (m.op_type != "Slice" || (m.inputs[0] != "h0" && m.inputs[0] != "c0")) continue;
      ++slices;
      const Tensor* axes = g.FindTensor(m.inputs.at(3));
      ASSERT_TRUE(axes && axes->is_const) << op;
      EXPECT_EQ(axes->AsInts(), std::vector<int64_t>{1}) << op << " " << m.name;
      EXPECT_EQ(g.FindTensor(m.outputs[0])->shape, (Shape{3, 1, 2})) << op << " " << m.name;
    }
    EXPECT_EQ(slices, gates == 4 ? 4u : 2u) << op;
    EXPECT_TRUE(g.Validate().ok()) << op;
  }
}

TEST(DecomposeRnn, RejectsUnknownActivationAndMismatchedWeights) {
  {
    Graph g;
    g.opset = 14;
    AddInput(g, "X", {2, 1, 3});
    AddInput(g, "W", {1, 4, 3});
    AddInput(g, "R", {1, 4, 4});
    Node& n = AddNode(g, "RNN", "rnn", {"X", "W", "R"}, {"Y"});
    n.SetInt("hidden_size", 4);
    Attr a;
    a.kind = Attr::kStrings;
    a.strings = {"Gelu"};
    n.attrs["activations"] = a;
    AddOutput(g, "Y");
    PassResult r;
    Status st = DecomposeOps(g, &r);
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("activation 'Gelu' is not supported"), std::string::npos) << st.message();
  }
  {
    Graph g;
    g.opset = 14;
    AddInput(g, "X", {2, 1, 3});
    AddInput(g, "W", {1, 8, 3});
    AddInput(g, "R", {1, 4, 4});
    AddNode(g, "RNN", "rnn", {"X", "W", "R"}, {"Y"}).SetInt("hidden_size", 4);
    AddOutput(g, "Y");
    PassResult r;
    Status st = DecomposeOps(g, &r);
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("node 'rnn' (RNN)"), std::string::npos) << st.message();
  }
}

TEST(DecomposeSignal, HannWindowIsAConstant) {
  Graph g;
  g.opset = 17;
  g.tensors["size"] = MakeConstI64("size", {}, {8});
  AddNode(g, "HannWindow", "hann", {"size"}, {"w"});
  AddOutput(g, "w");
  PassResult r;
  ASSERT_TRUE(DecomposeOps(g, &r).ok());
  EXPECT_EQ(g.nodes.size(), 0u);
  const Tensor* w = g.FindTensor("w");
  ASSERT_TRUE(w && w->is_const);
  std::vector<double> v = w->AsDoubles();
  ASSERT_EQ(v.size(), 8u);
  for (int k = 0; k < 8; ++k) EXPECT_NEAR(v[k], 0.5 - 0.5 * std::cos(2 * M_PI * k / 8), 1e-6) << k;
}

TEST(DecomposeSignal, WindowSizeMustBeKnownAtConversion) {
  Graph g;
  g.opset = 17;
  Tensor t;
  t.name = "size";
  t.dtype = DType::kInt64;
  t.has_shape = true;
  g.tensors["size"] = t;
  g.inputs.push_back({"size", "size"});
  AddNode(g, "BlackmanWindow", "bw", {"size"}, {"w"});
  AddOutput(g, "w");
  PassResult r;
  Status st = DecomposeOps(g, &r);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("input 'size' is not a compile-time constant"), std::string::npos) << st.message();
}

TEST(DecomposeSignal, RealDftIsTwoMatMuls) {
  Graph g;
  g.opset = 17;
  AddInput(g, "x", {1, 10, 4, 1});
  AddNode(g, "DFT", "dft", {"x"}, {"y"}).SetInt("onesided", 1);
  AddOutput(g, "y");
  PassResult r;
  ASSERT_TRUE(DecomposeOps(g, &r).ok());
  EXPECT_EQ(g.CountOps("DFT"), 0u);
  EXPECT_EQ(g.CountOps("MatMul"), 2u);
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1, 6, 4, 2}));  // 10 / 2 + 1 bins
  EXPECT_TRUE(g.Validate().ok());
}

TEST(DecomposeSignal, AdagradOutputsAndDomain) {
  Graph g;
  g.opset = 17;
  AddInput(g, "R", {});
  Tensor t;
  t.name = "T";
  t.dtype = DType::kInt64;
  t.has_shape = true;
  g.tensors["T"] = t;
  g.inputs.push_back({"T", "T"});
  for (const char* in : {"X", "G", "H"}) AddInput(g, in, {3});
  Node& n = AddNode(g, "Adagrad", "opt", {"R", "T", "X", "G", "H"}, {"X_new", "H_new"});
  n.domain = "ai.onnx.preview.training";
  AddOutput(g, "X_new");
  AddOutput(g, "H_new");
  EXPECT_TRUE(IsDecomposedOp("ai.onnx.preview.training", "Adagrad"));
  EXPECT_FALSE(IsDecomposedOp("com.example", "Adagrad"));
  PassResult r;
  ASSERT_TRUE(DecomposeOps(g, &r).ok());
  EXPECT_EQ(g.CountOps("Adagrad"), 0u);
  EXPECT_EQ(g.CountOps("Sqrt"), 1u);
  EXPECT_EQ(g.FindTensor("X_new")->shape, (Shape{3}));
  EXPECT_EQ(g.FindTensor("H_new")->shape, (Shape{3}));
  EXPECT_TRUE(g.Validate().ok());
}

TEST(DecomposeStatic, CompressWithConstantConditionIsAGather) {
  Graph g;
  g.opset = 11;
  AddInput(g, "x", {3, 2});
  g.tensors["c"] = MakeConstFromDoubles("c", DType::kBool, {3}, {1, 0, 1});
  AddNode(g, "Compress", "cmp", {"x", "c"}, {"y"}).SetInt("axis", 0);
  AddOutput(g, "y");
  PassResult r;
  ASSERT_TRUE(DecomposeOps(g, &r).ok());
  EXPECT_EQ(g.CountOps("Gather"), 1u);
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{2, 2}));
}

TEST(DecomposeStatic, CompressSelectingNothingIsRejected) {
  Graph g;
  g.opset = 11;
  AddInput(g, "x", {3, 2});
  g.tensors["c"] = MakeConstFromDoubles("c", DType::kBool, {3}, {0, 0, 0});
  AddNode(g, "Compress", "cmp", {"x", "c"}, {"y"}).SetInt("axis", 0);
  AddOutput(g, "y");
  PassResult r;
  Status st = DecomposeOps(g, &r);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("selects nothing"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace oaaxvk::toolchain
