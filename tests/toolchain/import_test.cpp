#include "toolchain/import/onnx_import.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "toolchain/driver/driver.h"

namespace oaaxvk::toolchain {

// Hand-encoded ONNX models (protobuf wire format, field numbers of onnx.proto),
// independent of the generated test models. Shared with bundle_test.cpp and
// cli_test.cpp.
struct TinyNode {
  std::string op, name;
  std::vector<std::string> in, out;
};
struct TinyIo {
  std::string name;
  int elem;                   // TensorProto.DataType
  std::vector<int64_t> dims;  // < 0: symbolic (dim_param "d<i>")
};

std::string EncodeTinyModel(const std::vector<TinyNode>& nodes, const std::vector<TinyIo>& inputs,
                            const std::vector<TinyIo>& outputs, int opset) {
  auto varint = [](uint64_t v) {
    std::string o;
    do {
      uint8_t b = v & 0x7f;
      v >>= 7;
      o += static_cast<char>(b | (v ? 0x80 : 0));
    } while (v);
    return o;
  };
  auto key = [&](int field, int wire) { return varint(static_cast<uint64_t>(field) << 3 | wire); };
  auto bytes = [&](int field, const std::string& b) { return key(field, 2) + varint(b.size()) + b; };
  auto num = [&](int field, uint64_t v) { return key(field, 0) + varint(v); };
  auto value_info = [&](const TinyIo& io) {
    std::string shape;
    for (size_t i = 0; i < io.dims.size(); ++i)  // Dimension.dim_value / dim_param
      shape += bytes(1, io.dims[i] >= 0 ? num(1, static_cast<uint64_t>(io.dims[i])) : bytes(2, "d" + std::to_string(i)));
    std::string tensor = num(1, static_cast<uint64_t>(io.elem)) + bytes(2, shape);
    return bytes(1, io.name) + bytes(2, bytes(1, tensor));  // ValueInfo{name, TypeProto{tensor_type}}
  };
  std::string graph;
  for (const TinyNode& n : nodes) {
    std::string node;
    for (const std::string& i : n.in) node += bytes(1, i);
    for (const std::string& o : n.out) node += bytes(2, o);
    graph += bytes(1, node + bytes(3, n.name) + bytes(4, n.op));
  }
  graph += bytes(2, "g");
  for (const TinyIo& io : inputs) graph += bytes(11, value_info(io));
  for (const TinyIo& io : outputs) graph += bytes(12, value_info(io));
  return num(1, 8) + bytes(7, graph) + bytes(8, bytes(1, "") + num(2, static_cast<uint64_t>(opset)));
}

// y = Reshape(x float[2, 3], shape int64[2]) with `shape` a graph input, opset 13.
std::string ReshapeWithShapeInputModel() {
  return EncodeTinyModel({{"Reshape", "reshape", {"x", "shape"}, {"y"}}}, {{"x", 1, {2, 3}}, {"shape", 7, {2}}},
                         {{"y", 1, {-1, -1}}}, 13);
}

// Reshape by a run-time shape, then Softmax (over the last axis): the
// run-time shape would reach a kernel whose sizes the lowering does not derive
// from the value (an elementwise activation would be one flat dispatch).
std::string ReshapeThenSoftmaxModel() {
  return EncodeTinyModel({{"Reshape", "reshape", {"x", "shape"}, {"r"}}, {"Softmax", "softmax", {"r"}, {"y"}}},
                         {{"x", 1, {2, 3}}, {"shape", 7, {2}}}, {{"y", 1, {-1, -1}}}, 13);
}

// Two operators no lowering implements (Multinomial, RandomUniform).
std::string UnsupportedOpsModel() {
  return EncodeTinyModel({{"Multinomial", "bad_multinomial", {"x"}, {"u"}},
                          {"RandomUniform", "bad_random", {"ids"}, {"tf"}}},
                         {{"x", 1, {4}}, {"ids", 7, {1, 3}}},
                         {{"u", 1, {4}}, {"tf", 1, {1, -1}}}, 13);
}

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
  auto g = ImportOnnxBytes(UnsupportedOpsModel(), "");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kUnimplemented);
  const std::string& m = g.status().message();
  EXPECT_NE(m.find("2 unsupported operator node(s)"), std::string::npos) << m;
  EXPECT_NE(m.find("'bad_multinomial' (op Multinomial, domain 'ai.onnx', opset 13)"), std::string::npos) << m;
  EXPECT_NE(m.find("'bad_random' (op RandomUniform"), std::string::npos) << m;
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

TEST(Import, SequenceAndOptionalIoAreFlattenedIntoTensors) {
  // No config: the sequence input's error says what to write.
  auto none = ImportOnnxFile(M("sequence_io.onnx"));
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("graph input 'x' is a sequence; give its length and element shapes in "
                                         "config.json, e.g. {\"input_shapes\": {\"x\": [[2, 3], [4, 3]]}}"),
            std::string::npos)
      << none.status().message();
  ImportOptions o;
  o.sequence_lengths["x"] = 2;
  o.input_shapes["x[0]"] = {3};
  o.input_shapes["x[1]"] = {3};
  auto no_opt = ImportOnnxFile(M("sequence_io.onnx"), o);
  ASSERT_FALSE(no_opt.ok());
  EXPECT_NE(no_opt.status().message().find("graph input 'opt' is an optional tensor; say in config.json whether it "
                                           "holds one"),
            std::string::npos)
      << no_opt.status().message();
  o.input_shapes["opt"] = {3};
  auto g = ImportOnnxFile(M("sequence_io.onnx"), o);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::vector<std::string> ins, outs;
  for (const GraphIO& io : g->inputs) ins.push_back(io.name);
  for (const GraphIO& io : g->outputs) outs.push_back(io.name);
  EXPECT_EQ(ins, (std::vector<std::string>{"x[0]", "x[1]", "opt"}));
  EXPECT_EQ(outs, (std::vector<std::string>{"y", "cat", "s[0]", "s[1]", "s[2]", "o"}));
  EXPECT_EQ(g->FindTensor("cat")->shape, (Shape{6}));
  // An empty optional: OptionalGetElement of it is an error of the model.
  ImportOptions empty = o;
  empty.input_shapes.erase("opt");
  empty.sequence_lengths["opt"] = -1;
  auto e = ImportOnnxFile(M("sequence_io.onnx"), empty);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("node 'get' (OptionalGetElement): the optional input 'opt' is empty"),
            std::string::npos)
      << e.status().message();
  // null for a sequence; a list of shapes for a tensor.
  ImportOptions null_seq = o;
  null_seq.sequence_lengths["x"] = -1;
  null_seq.input_shapes.erase("x[0]");
  null_seq.input_shapes.erase("x[1]");
  auto ns = ImportOnnxFile(M("sequence_io.onnx"), null_seq);
  ASSERT_FALSE(ns.ok());
  EXPECT_NE(ns.status().message().find("input_shapes['x'] is null, but 'x' is a sequence"), std::string::npos)
      << ns.status().message();
  ImportOptions seq_opt = o;
  seq_opt.sequence_lengths["opt"] = 1;
  seq_opt.input_shapes["opt[0]"] = {3};
  auto so = ImportOnnxFile(M("sequence_io.onnx"), seq_opt);
  ASSERT_FALSE(so.ok());
  EXPECT_NE(so.status().message().find("'opt' is an optional tensor; give its shape"), std::string::npos)
      << so.status().message();
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

TEST(Import, UnboundShapeInputIsRejectedWithTheBindingHint) {
  auto g = ImportOnnxBytes(ReshapeWithShapeInputModel(), "");
  ASSERT_TRUE(g.ok()) << g.status().ToString();  // the importer accepts it; shape inference needs the value
  auto r = CompileGraph(std::move(*g));
  ASSERT_FALSE(r.ok());
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("shape input 'shape' is not a compile-time constant"), std::string::npos) << m;
  EXPECT_NE(m.find("{\"input_values\": {\"shape\": [...]}}"), std::string::npos) << m;
}

// ReduceSum(data [3, 2, 2], axes int64 [0]), opset 13: an empty `axes`
// reduces every axis (keepdims defaults to 1).
TEST(Import, ZeroSizeInputIsBoundToItsOnlyValue) {
  ImportReport rep;
  auto g = ImportOnnxBytes(EncodeTinyModel({{"ReduceSum", "sum", {"data", "axes"}, {"reduced"}}},
                                           {{"data", 1, {3, 2, 2}}, {"axes", 7, {0}}}, {{"reduced", 1, {1, 1, 1}}}, 13),
                           "", {}, &rep);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->inputs.size(), 2u);
  EXPECT_EQ(g->inputs[1].name, "axes");
  EXPECT_EQ(g->FindTensor(g->inputs[1].tensor)->shape, (Shape{0}));  // the 0 is kept, not taken for a batch
  ASSERT_TRUE(g->FindTensor("axes")->is_const);
  EXPECT_TRUE(g->FindTensor("axes")->data.empty());
  ASSERT_EQ(rep.bound_inputs.count("axes"), 1u);
  bool noted = false;
  for (const std::string& n : rep.notes) noted = noted || n.find("'axes' has zero elements [0]") != std::string::npos;
  EXPECT_TRUE(noted);
  auto r = CompileGraph(std::move(*g), nullptr, rep.bound_inputs);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->program.inputs.size(), 2u);
  EXPECT_EQ(r->program.inputs[1].nbytes, 0);
  EXPECT_EQ(r->program.outputs[0].shape, (Shape{1, 1, 1}));
}

// A reduction of an empty input (ReduceL1, which constant folding leaves to
// the device) reads it through a 4-byte slot and writes the empty set's
// value; a MatMul over an empty K folds to zeros; another kernel reading an
// empty constant (Gemm) is refused.
TEST(Import, AReductionReadsAnEmptyInputAndOtherKernelsRefuseOne) {
  ImportReport rep;
  auto g = ImportOnnxBytes(EncodeTinyModel({{"ReduceL1", "l1", {"data"}, {"reduced"}}},
                                           {{"data", 1, {2, 0, 4}}}, {{"reduced", 1, {1, 1, 1}}}, 13),
                           "", {}, &rep);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_TRUE(g->FindTensor("data")->is_const);
  auto r = CompileGraph(std::move(*g), nullptr, rep.bound_inputs);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->program.inputs[0].nbytes, 0);
  EXPECT_EQ(r->program.outputs[0].shape, (Shape{1, 1, 1}));
  bool reduce = false;
  for (const Dispatch& d : r->program.dispatches) reduce = reduce || d.kernel == "reduce";
  EXPECT_TRUE(reduce);

  // A MatMul over an empty K: zeros, folded at conversion.
  ImportReport rep1;
  auto g1 = ImportOnnxBytes(EncodeTinyModel({{"MatMul", "mm", {"a", "b"}, {"y"}}},
                                            {{"a", 1, {2, 0}}, {"b", 1, {0, 3}}}, {{"y", 1, {2, 3}}}, 13),
                            "", {}, &rep1);
  ASSERT_TRUE(g1.ok()) << g1.status().ToString();
  auto r1 = CompileGraph(std::move(*g1), nullptr, rep1.bound_inputs);
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  EXPECT_EQ(r1->program.outputs[0].shape, (Shape{2, 3}));

  ImportReport rep2;
  auto g2 = ImportOnnxBytes(EncodeTinyModel({{"Gemm", "gemm", {"a", "b", "c"}, {"y"}}},
                                            {{"a", 1, {2, 0}}, {"b", 1, {0, 3}}, {"c", 1, {3}}}, {{"y", 1, {2, 3}}}, 13),
                            "", {}, &rep2);
  ASSERT_TRUE(g2.ok()) << g2.status().ToString();
  auto r2 = CompileGraph(std::move(*g2), nullptr, rep2.bound_inputs);
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.status().message().find("node 'gemm' (Gemm, kernel "), std::string::npos) << r2.status().ToString();
  EXPECT_NE(r2.status().message().find("input 'a' has zero elements [2, 0] while its output may have some"),
            std::string::npos)
      << r2.status().ToString();
}

TEST(Import, BoundInputBecomesAConstantButStaysAGraphInput) {
  ImportOptions o;
  o.input_values["shape"] = {{3, true, 3}, {-1, true, -1}};
  ImportReport rep;
  auto g = ImportOnnxBytes(ReshapeWithShapeInputModel(), "", o, &rep);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->inputs.size(), 2u);
  EXPECT_EQ(g->inputs[1].name, "shape");
  EXPECT_NE(g->inputs[1].tensor, "shape");  // placeholder that no node reads
  EXPECT_FALSE(g->FindTensor(g->inputs[1].tensor)->is_const);
  EXPECT_EQ(g->FindTensor(g->inputs[1].tensor)->dtype, DType::kInt64);
  ASSERT_TRUE(g->FindTensor("shape")->is_const);
  EXPECT_EQ(g->FindTensor("shape")->AsInts(), (std::vector<int64_t>{3, -1}));
  ASSERT_EQ(rep.bound_inputs.count("shape"), 1u);
  std::vector<uint8_t> want(16);
  int64_t v[2] = {3, -1};
  std::memcpy(want.data(), v, 16);
  EXPECT_EQ(rep.bound_inputs["shape"], want);
  auto r = CompileGraph(std::move(*g), nullptr, rep.bound_inputs);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->program.inputs.size(), 2u);
  EXPECT_EQ(r->program.inputs[1].name, "shape");
  EXPECT_EQ(r->program.inputs[1].dtype, DType::kInt64);
  EXPECT_EQ(r->program.inputs[1].bound, want);
  EXPECT_TRUE(r->program.inputs[0].bound.empty());
  EXPECT_EQ(r->program.outputs[0].shape, (Shape{3, 2}));
  EXPECT_EQ(r->program.features.count("bound_inputs"), 1u);
}

TEST(Import, BoundValuesAreCheckedAgainstTheInput) {
  auto expect = [](InputValues v, const std::string& needle) {
    ImportOptions o;
    o.input_values = std::move(v);
    auto g = ImportOnnxBytes(ReshapeWithShapeInputModel(), "", o);
    ASSERT_FALSE(g.ok()) << needle;
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(g.status().message().find(needle), std::string::npos) << g.status().message();
  };
  expect({{"shape", {{6, true, 6}}}}, "has 1 value(s), but graph input 'shape' has shape [2] (2 elements)");
  expect({{"shape", {{3, true, 3}, {1.5, false, 0}}}}, "element 1 = 1.5 is not an integer");
  expect({{"nope", {{1, true, 1}}}}, "input_values names 'nope', which is not a graph input");
  expect({{"x", {{1e39, false, 0}, {0, true, 0}, {0, true, 0}, {0, true, 0}, {0, true, 0}, {0, true, 0}}}},
         "element 0 = 9.9999999999999994e+38 is out of the range of float32");
}

// float32 -> float16 / bfloat16 against a double-precision reference of
// round-to-nearest-even (the same algorithm as shaders/convert.comp).
TEST(Float16, RoundsToNearestEvenWithSubnormalsOverflowAndNaN) {
  auto ref_half = [](float f) -> double {  // value of the correctly rounded binary16
    double a = std::fabs(static_cast<double>(f));
    if (a >= 65520.0) return std::copysign(INFINITY, f);
    int e;
    std::frexp(a, &e);                       // a = m * 2^e, m in [0.5, 1)
    int q = std::max(e - 11, -24);           // quantum: 11 significant bits, subnormal quantum 2^-24
    double r = std::nearbyint(std::ldexp(a, -q));  // ties to even (default rounding mode)
    return std::copysign(std::ldexp(r, q), f);
  };
  std::vector<float> probes = {0.f, -0.f, 1.f, 65504.f, 65519.99f, 65520.f, 1e-8f, 2.9802322e-8f, 5.9604645e-8f,
                               8.940697e-8f, 6.1035156e-5f, 6.097555e-5f, 1.00048828125f, 1.00146484375f, 3.1415927f,
                               -2.7182817f, 1e30f, -1e-30f};
  uint32_t x = 12345;
  for (int i = 0; i < 20000; ++i) {  // random bit patterns around the binary16 range
    x = x * 1664525u + 1013904223u;
    uint32_t b = (x & 0x807fffffu) | ((100u + (x >> 8) % 60u) << 23);
    float f;
    std::memcpy(&f, &b, 4);
    probes.push_back(f);
  }
  for (float f : probes) {
    uint16_t h = FloatToHalf(f);
    EXPECT_EQ(static_cast<double>(HalfToFloat(h)), ref_half(f)) << "f = " << f;
  }
  EXPECT_EQ(FloatToHalf(INFINITY), 0x7c00);
  EXPECT_EQ(FloatToHalf(-INFINITY), 0xfc00);
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(NAN))));
  EXPECT_EQ(HalfToFloat(0x0001), 5.9604645e-8f);  // smallest subnormal
  EXPECT_EQ(HalfToFloat(0x7bff), 65504.f);
  // bfloat16: ties to even on the high half.
  EXPECT_EQ(FloatToBfloat(1.00390625f), 0x3f80);   // 1 + 2^-8: tie, even stays
  EXPECT_EQ(FloatToBfloat(1.01171875f), 0x3f82);   // 1 + 3*2^-8: tie, rounds up to even
  EXPECT_EQ(FloatToBfloat(3.4028235e38f), 0x7f80);  // overflows to Inf
  EXPECT_EQ(BfloatToFloat(0x4049), 3.140625f);
  EXPECT_TRUE(std::isnan(BfloatToFloat(FloatToBfloat(NAN))));
}

TEST(Import, EnforcesTheSizeLimit) {
  ImportOptions o;
  o.max_model_bytes = 16;
  auto g = ImportOnnxFile(M("mobilenet_like.onnx"), o);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kResourceExhausted);
}

// Names become UTF-8 bundle metadata the runtime validates: a name that is
// not UTF-8 is refused at import, naming it, instead of giving a bundle the
// runtime rejects.
TEST(Import, NamesThatAreNotUtf8AreRefused) {
  const std::string bad = std::string("re") + static_cast<char>(0xff) + "lu";
  auto g = ImportOnnxBytes(EncodeTinyModel({{"Relu", bad, {"x"}, {"y"}}}, {{"x", 1, {4}}}, {{"y", 1, {4}}}, 13), "");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(g.status().message().find("node name 're?lu'"), std::string::npos) << g.status().ToString();
  EXPECT_NE(g.status().message().find("not well-formed UTF-8"), std::string::npos) << g.status().ToString();
  auto io = ImportOnnxBytes(EncodeTinyModel({{"Relu", "relu", {bad}, {"y"}}}, {{bad, 1, {4}}}, {{"y", 1, {4}}}, 13), "");
  ASSERT_FALSE(io.ok());
  EXPECT_NE(io.status().message().find("graph input 're?lu'"), std::string::npos) << io.status().ToString();
}

}  // namespace
}  // namespace oaaxvk::toolchain
