// Hostile and malformed models (make_hostile_models.py): the toolchain
// refuses each with an error naming the tensor, node or limit, and never
// crashes, aborts or exhausts memory; the size limits (ir/limits.h) are
// configurable through config.json "limits".
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "toolchain/import/onnx_import.h"
#include "toolchain/input/archive.h"
#include "toolchain/ir/limits.h"
#include "toolchain/passes/passes.h"
#include "toolchain/plan/plan.h"

namespace oaaxvk::toolchain {
namespace {

std::string H(const std::string& n) { return std::string(OAAXVK_TC_MODELS) + "/hostile/" + n; }

// Imports hostile/<model> and returns the error ("" when it imported).
std::string ImportError(const std::string& model, StatusCode* code = nullptr) {
  auto g = ImportOnnxFile(H(model));
  if (code) *code = g.ok() ? StatusCode::kOk : g.status().code();
  return g.ok() ? "" : g.status().message();
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(Hostile, InitializerDataMustMatchItsDims) {
  StatusCode code;
  std::string e = ImportError("raw_short.onnx", &code);
  EXPECT_EQ(code, StatusCode::kInvalidArgument);
  EXPECT_HAS(e, "initializer 'w' has dims [1048576]");
  EXPECT_HAS(e, "4194304 bytes), but its raw_data holds 16 bytes");
  e = ImportError("raw_long.onnx");
  EXPECT_HAS(e, "initializer 'w' has dims [1] (1 elements of 4 bytes = 4 bytes), but its raw_data holds 64 bytes");
  e = ImportError("typed_short_constant.onnx");
  EXPECT_HAS(e, "node 'c' (Constant) attribute 'value' has dims [1048576] (1048576 elements), but its data holds 2");
}

TEST(Hostile, DimsMustBeNonNegativeWithoutOverflow) {
  StatusCode code;
  std::string e = ImportError("negative_dim.onnx", &code);
  EXPECT_EQ(code, StatusCode::kInvalidArgument);
  EXPECT_HAS(e, "initializer 'w' has dims [-4]: dimension 0 is negative");
  e = ImportError("dims_overflow.onnx", &code);
  EXPECT_EQ(code, StatusCode::kResourceExhausted);
  EXPECT_HAS(e, "initializer 'w' has dims [4294967296, 4294967296]: the element count overflows 64 bits");
  e = ImportError("dims_huge_constant.onnx");
  EXPECT_HAS(e, "node 'c' (Constant) attribute 'value' has dims [4611686018427387904]");
  EXPECT_HAS(e, "max_tensor_elements = 4294967296");
  e = ImportError("input_dim_2_62.onnx", &code);
  EXPECT_EQ(code, StatusCode::kResourceExhausted);
  EXPECT_HAS(e, "graph input 'x' has shape [4611686018427387904]");
  EXPECT_HAS(e, "max_tensor_elements");
}

TEST(Hostile, GraphStructureErrorsAreInvalidArguments) {
  StatusCode code;
  EXPECT_HAS(ImportError("dangling_input.onnx", &code), "input 'nowhere' of node");
  EXPECT_EQ(code, StatusCode::kInvalidArgument);
  EXPECT_HAS(ImportError("cycle.onnx", &code), "input 'b' of node");
  EXPECT_EQ(code, StatusCode::kInvalidArgument);
  EXPECT_HAS(ImportError("duplicate_output.onnx", &code), "'y' has been used as output names multiple times");
  EXPECT_EQ(code, StatusCode::kInvalidArgument);
  // The ONNX checker refuses it before the toolchain's own graph validation would.
  EXPECT_HAS(ImportError("output_never_produced.onnx", &code), "Graph output 'y' is not an output of any node");
  EXPECT_EQ(code, StatusCode::kInvalidArgument);
}

TEST(Hostile, OpsetsOutsideTheKnownRangeAreRefused) {
  StatusCode code;
  EXPECT_HAS(ImportError("opset_2_40.onnx", &code),
             "imports opset 1099511627776 of domain 'ai.onnx', but this toolchain knows versions 1 to");
  EXPECT_EQ(code, StatusCode::kUnimplemented);
  EXPECT_HAS(ImportError("opset_future.onnx"), "imports opset 99 of domain 'ai.onnx'");
  EXPECT_HAS(ImportError("opset_zero.onnx"), "imports opset 0 of domain 'ai.onnx'");
  EXPECT_HAS(ImportError("opset_ml_huge.onnx"), "imports opset 1099511627776 of domain 'ai.onnx.ml'");
}

TEST(Hostile, ExternalDataIsCheckedBeforeItIsRead) {
  EXPECT_EQ(ImportError("external_ok.onnx"), "");
  EXPECT_HAS(ImportError("external_abs.onnx"), "must be a relative path inside the model's directory");
  EXPECT_HAS(ImportError("external_dotdot.onnx"), "may not contain '..'");
  StatusCode code;
  EXPECT_HAS(ImportError("external_missing.onnx", &code), "/hostile/absent.bin' does not exist");
  EXPECT_EQ(code, StatusCode::kNotFound);
  EXPECT_HAS(ImportError("external_directory.onnx"), "external data location 'subdir' is not a regular file");
  EXPECT_HAS(ImportError("external_offset_past_end.onnx"),
             "external data range [8, 8 + 16) is outside 'w.bin', which has 16 bytes");
  EXPECT_HAS(ImportError("external_offset_2_62.onnx"), "external data range [4611686018427387904, ");
  EXPECT_HAS(ImportError("external_offset_negative.onnx"),
             "external data offset '-8' is not a non-negative decimal integer");
  EXPECT_HAS(ImportError("external_length_2_62.onnx"),
             "external data length is 4611686018427387904 bytes, but its dims [4] of float32 need 16 bytes");
}

// --- Conversions through the CLI: exit 1 and a conversion log, never an abort.

int RunCli(const std::string& args) {
  std::string cmd = std::string(OAAXVK_TC_CLI) + " " + args + " >/dev/null 2>&1";
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;  // -1: killed by a signal (an abort)
}

std::string OutDir(const std::string& n) { return std::string(OAAXVK_TC_MODELS) + "/../hostile_out/" + n; }

// The "Technical Error" of the log in `dir` ("" when the log has none).
std::string LoggedError(const std::string& dir) {
  std::ifstream f(dir + "/conversion-log.json");
  std::stringstream ss;
  ss << f.rdbuf();
  nlohmann::json log = nlohmann::json::parse(ss.str(), nullptr, false);
  if (log.is_discarded() || log.empty() || !log.back()["Data"].contains("Technical Error")) return "";
  return log.back()["Data"]["Technical Error"].get<std::string>();
}

std::string WriteConfig(const std::string& name, const std::string& text) {
  std::string path = std::string(OAAXVK_TC_MODELS) + "/hostile/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(Hostile, ComputedShapesOverTheElementLimitAreRefusedNamingTheNode) {
  for (const char* m : {"constant_of_shape_2_40.onnx", "constant_of_shape_2_62.onnx"}) {
    const std::string out = OutDir(m);
    ASSERT_EQ(RunCli(H(m) + " " + out), 1) << m;
    const std::string e = LoggedError(out);
    EXPECT_HAS(e, "node 'fill' (ConstantOfShape) output 'big' has shape [");
    EXPECT_HAS(e, "over the limit max_tensor_elements = 4294967296");
  }
}

TEST(Hostile, FoldingOverItsLimitIsRefusedForFoldOnlyOperators) {
  const std::string out = OutDir("cos20000");
  ASSERT_EQ(RunCli(H("constant_of_shape_20000.onnx") + " " + out), 1);
  const std::string e = LoggedError(out);
  EXPECT_HAS(e, "node 'fill' (ConstantOfShape): folding it takes 1600000016 bytes of constants, over the limit "
                "max_folded_bytes = 1073741824");
  // A lower limit from config.json "limits" applies.
  const std::string cfg = WriteConfig("fold_limit.json", R"({"limits": {"max_folded_bytes": 1000}})");
  const std::string out2 = OutDir("cos20000_config");
  ASSERT_EQ(RunCli("--config " + cfg + " " + H("constant_of_shape_20000.onnx") + " " + out2), 1);
  EXPECT_HAS(LoggedError(out2), "max_folded_bytes = 1000,");
}

// With the limits lifted, folding a 2^61-element ConstantOfShape throws from
// the standard library: the conversion still fails with a log.
TEST(Hostile, ExceptionsFromTheStandardLibraryFailTheConversionWithALog) {
  const std::string cfg = WriteConfig(
      "no_limits.json", R"({"limits": {"max_tensor_elements": 18446744073709551615,
                                       "max_tensor_bytes": 18446744073709551615,
                                       "max_folded_bytes": 18446744073709551615}})");
  const std::string out = OutDir("cos2_61_unlimited");
  ASSERT_EQ(RunCli("--config " + cfg + " " + H("constant_of_shape_2_61.onnx") + " " + out), 1);
  EXPECT_HAS(LoggedError(out), "resource exhausted: a size computed from the model is too large");
}

TEST(Hostile, PlanLimitsFromConfigAreEnforced) {
  const std::string model = std::string(OAAXVK_TC_MODELS) + "/mobilenet_like.onnx";
  const std::string d = WriteConfig("dispatches.json", R"({"limits": {"max_dispatches": 2}})");
  ASSERT_EQ(RunCli("--config " + d + " " + model + " " + OutDir("dispatches")), 1);
  EXPECT_HAS(LoggedError(OutDir("dispatches")), "dispatches, over the limit max_dispatches = 2");
  const std::string a = WriteConfig("arena.json", R"({"limits": {"max_arena_bytes": 256}})");
  ASSERT_EQ(RunCli("--config " + a + " " + model + " " + OutDir("arena")), 1);
  EXPECT_HAS(LoggedError(OutDir("arena")), "over the limit max_arena_bytes = 256");
  ASSERT_EQ(RunCli(model + " " + OutDir("no_config")), 0);
}

TEST(Hostile, LimitsConfigKeysAreChecked) {
  auto c = ParseModelConfig(R"({"limits": {"max_folded_bytes": 123, "max_dispatches": 7}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->limits.max_folded_bytes, 123u);
  EXPECT_EQ(c->limits.max_dispatches, 7u);
  EXPECT_EQ(c->limits.max_arena_bytes, ConversionLimits{}.max_arena_bytes);
  auto zero = ParseModelConfig(R"({"limits": {"max_arena_bytes": 0}})");
  ASSERT_FALSE(zero.ok());
  EXPECT_HAS(zero.status().message(), "limits[\"max_arena_bytes\"] must be a positive integer, is 0");
  auto typo = ParseModelConfig(R"({"limits": {"max_arena": 5}})");
  ASSERT_FALSE(typo.ok());
  EXPECT_HAS(typo.status().message(), "unknown key limits['max_arena']");
}

// A device operator over max_folded_bytes stays a node (the device computes
// it) instead of being folded on the host.
TEST(Hostile, DeviceOperatorsOverTheFoldingLimitRunOnTheDevice) {
  auto relu_of_constant = [] {
    Graph g;
    g.opset = 13;
    testing::AddInput(g, "x", {1024});
    testing::AddConst(g, "c", {1024}, -0.5f);
    testing::AddNode(g, "Relu", "relu", {"c"}, {"r"});
    testing::AddNode(g, "Add", "add", {"x", "r"}, {"y"});
    testing::AddOutput(g, "y");
    return g;
  };
  Graph folded = relu_of_constant();
  ASSERT_TRUE(RunDefaultPipeline(folded).ok());
  EXPECT_EQ(folded.CountOps("Relu"), 0u);
  ConversionLimits small;
  small.max_folded_bytes = 4096;  // c and r take 8192 bytes
  LimitsScope scope(&small);
  Graph kept = relu_of_constant();
  auto r = RunDefaultPipeline(kept);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(kept.CountOps("Relu"), 1u);
}

// A size that overflows int64 saturates (a wrapped or kept operand could look
// like a valid size); the limits then refuse it.
TEST(Hostile, OverflowingSizesSaturateAndAreRefused) {
  const int64_t big = int64_t{1} << 62;
  EXPECT_EQ((Dim(big) * Dim(4)).value(), INT64_MAX);
  EXPECT_EQ((Dim(big) * Dim(-4)).value(), INT64_MIN);
  EXPECT_EQ((Dim(big) + Dim(big) + Dim(big)).value(), INT64_MAX);
  EXPECT_EQ((Dim(-big) - Dim(big) - Dim(big)).value(), INT64_MIN);
  const Shape s = {Dim(1 << 20) * Dim(big), Dim(1)};
  Status st = CheckTensorSize(s, 4, "tensor 't'", ShapeToString(s));
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_HAS(st.message(), "tensor 't' has shape [9223372036854775807, 1]");
}

// A 32768-node chain of Add / Mul (each reading the previous result and the
// input) compiles through every pass, lowering and the plan: the passes look
// producers up in a map and the planner is near-linear (pairwise scans took
// over a minute here). The bound is generous, for slow and instrumented builds.
TEST(Hostile, LongChainCompilesInNearLinearTime) {
  constexpr int kN = 32768;
  Graph g;
  g.opset = 13;
  testing::AddInput(g, "x", {64});
  std::string prev = "x";
  for (int i = 0; i < kN; ++i) {
    const std::string out = i == kN - 1 ? "y" : "t" + std::to_string(i);
    testing::AddNode(g, i % 2 ? "Mul" : "Add", "n" + std::to_string(i), {prev, "x"}, {out});
    prev = out;
  }
  testing::AddOutput(g, "y");
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(RunDefaultPipeline(g).ok());
  auto p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto plan = PlanMemory(*p);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(p->dispatches.size(), static_cast<size_t>(kN));
  EXPECT_EQ(plan->barrier_lower_bound, static_cast<uint32_t>(kN - 1));
  EXPECT_LT(seconds, 30.0);
}

}  // namespace
}  // namespace oaaxvk::toolchain
