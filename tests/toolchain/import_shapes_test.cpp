// Import of models whose declared shapes are missing or stale: graph outputs
// without a declared type or shape (ONNX Runtime accepts them) and value_info
// computed at the size the model was exported with when config.json
// input_shapes gives another.
#include <gtest/gtest.h>

#include <string>

#include "onnx/onnx_pb.h"
#include "toolchain/import/onnx_import.h"

namespace oaaxvk::toolchain {
namespace {

enum class OutputDecl { kFull, kTypeOnly, kNothing };

void SetTensorType(onnx::ValueInfoProto* vi, const std::vector<int64_t>& dims, bool with_shape) {
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  if (!with_shape) return;
  auto* s = tt->mutable_shape();
  for (int64_t d : dims) s->add_dim()->set_dim_value(d);
}

// x [1, 3, 8, 8] -> Relu -> y -> Sigmoid -> z, with value_info for y when
// `value_info` is set (at the exported size 8 x 8).
std::string Model(OutputDecl decl, bool value_info) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("g");
  auto* relu = g->add_node();
  relu->set_op_type("Relu");
  relu->set_name("relu");
  relu->add_input("x");
  relu->add_output("y");
  auto* sig = g->add_node();
  sig->set_op_type("Sigmoid");
  sig->set_name("sig");
  sig->add_input("y");
  sig->add_output("z");
  onnx::ValueInfoProto* in = g->add_input();
  in->set_name("x");
  SetTensorType(in, {1, 3, 8, 8}, true);
  onnx::ValueInfoProto* out = g->add_output();
  out->set_name("z");
  if (decl != OutputDecl::kNothing) SetTensorType(out, {1, 3, 8, 8}, decl == OutputDecl::kFull);
  if (value_info) {
    onnx::ValueInfoProto* vi = g->add_value_info();
    vi->set_name("y");
    SetTensorType(vi, {1, 3, 8, 8}, true);
  }
  return m.SerializeAsString();
}

TEST(ImportShapes, OutputWithoutDeclaredShapeIsInferred) {
  for (OutputDecl decl : {OutputDecl::kTypeOnly, OutputDecl::kNothing}) {
    StatusOr<Graph> g = ImportOnnxBytes(Model(decl, false), ".", ImportOptions{});
    ASSERT_TRUE(g.ok()) << g.status().message();
    const Tensor& z = g->tensors.at("z");
    EXPECT_EQ(z.dtype, DType::kFloat);
    ASSERT_TRUE(z.has_shape);
    EXPECT_EQ(z.shape, (std::vector<int64_t>{1, 3, 8, 8}));
  }
}

TEST(ImportShapes, StaleValueInfoIsInferredAgainForANewInputSize) {
  ImportOptions o;
  o.input_shapes["x"] = {1, 3, 16, 12};
  ImportReport report;
  StatusOr<Graph> g = ImportOnnxBytes(Model(OutputDecl::kFull, true), ".", o, &report);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->tensors.at("y").shape, (std::vector<int64_t>{1, 3, 16, 12}));
  EXPECT_EQ(g->tensors.at("z").shape, (std::vector<int64_t>{1, 3, 16, 12}));
  bool noted = false;
  for (const std::string& n : report.notes) noted |= n.find("inferred again") != std::string::npos;
  EXPECT_TRUE(noted);
  // The exported size itself keeps the declared value_info.
  ImportOptions same;
  same.input_shapes["x"] = {1, 3, 8, 8};
  ImportReport r2;
  ASSERT_TRUE(ImportOnnxBytes(Model(OutputDecl::kFull, true), ".", same, &r2).ok());
  for (const std::string& n : r2.notes) EXPECT_EQ(n.find("inferred again"), std::string::npos) << n;
}

}  // namespace
}  // namespace oaaxvk::toolchain
