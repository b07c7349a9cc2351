#include "toolchain/import/onnx_import.h"

#include <gtest/gtest.h>

namespace oaaxvk::toolchain {
namespace {

std::string M(const std::string& n) { return std::string(OAAXVK_TC_MODELS) + "/" + n; }

TEST(Import, ImportsWithBatchDimensionBoundToOne) {
  ImportReport rep;
  auto g = ImportOnnxFile(M("mobilenet_like.onnx"), {}, &rep);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->FindTensor("x")->shape, (Shape{1, 3, 16, 16}));
  ASSERT_FALSE(rep.notes.empty());
  EXPECT_NE(rep.notes[0].find("batch"), std::string::npos);
  EXPECT_EQ(rep.opset, 13);
}

TEST(Import, ListsEveryUnsupportedOperator) {
  auto g = ImportOnnxFile(M("unsupported.onnx"));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kUnimplemented);
  const std::string& m = g.status().message();
  EXPECT_NE(m.find("bad_einsum"), std::string::npos) << m;
  EXPECT_NE(m.find("bad_topk"), std::string::npos) << m;
  EXPECT_NE(m.find("TopK"), std::string::npos) << m;
}

TEST(Import, SymbolicNonBatchDimensionNamesInputAndDimension) {
  auto g = ImportOnnxFile(M("dynamic.onnx"));
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("'x'"), std::string::npos);
  EXPECT_NE(g.status().message().find("height"), std::string::npos);
  ImportOptions o;
  o.input_shapes["x"] = {1, 7};
  auto g2 = ImportOnnxFile(M("dynamic.onnx"), o);
  ASSERT_TRUE(g2.ok()) << g2.status().ToString();
  EXPECT_EQ(g2->FindTensor("x")->shape, (Shape{1, 7}));
}

TEST(Import, ExternalDataInsideModelDirectory) {
  auto g = ImportOnnxFile(M("external_ok.onnx"));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->FindTensor("w")->AsDoubles(), (std::vector<double>{0, 1, 2, 3}));
}

TEST(Import, RejectsExternalDataEscapingTheDirectory) {
  for (const char* m : {"external_escape.onnx", "external_abs.onnx"}) {
    auto g = ImportOnnxFile(M(m));
    ASSERT_FALSE(g.ok()) << m;
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument) << m;
    EXPECT_NE(g.status().message().find("'w'"), std::string::npos) << g.status().message();
  }
}

TEST(Import, RejectsGarbageAndMissingFiles) {
  auto g = ImportOnnxFile(M("garbage.onnx"));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kDataLoss);
  auto h = ImportOnnxFile(M("does_not_exist.onnx"));
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), StatusCode::kNotFound);
  auto d = ImportOnnxFile(std::string(OAAXVK_TC_MODELS));
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("not a regular file"), std::string::npos);
}

TEST(Import, EnforcesTheSizeLimit) {
  ImportOptions o;
  o.max_model_bytes = 16;
  auto g = ImportOnnxFile(M("mobilenet_like.onnx"), o);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace oaaxvk::toolchain
