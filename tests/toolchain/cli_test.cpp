// Runs the oaax-vulkan-toolchain executable and checks exit codes and logs.
#include <gtest/gtest.h>
#include <cstdio>
#include <unistd.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "oaax_vulkan/oinf.h"

namespace oaaxvk::toolchain {
struct TinyNode {
  std::string op, name;
  std::vector<std::string> in, out;
};
struct TinyIo {
  std::string name;
  int elem;
  std::vector<int64_t> dims;
};
std::string EncodeTinyModel(const std::vector<TinyNode>& nodes, const std::vector<TinyIo>& inputs,
                            const std::vector<TinyIo>& outputs, int opset);  // import_test.cpp
std::string ReshapeWithShapeInputModel();  // import_test.cpp
std::string ReshapeThenSoftmaxModel();  // import_test.cpp
std::string UnsupportedOpsModel();         // import_test.cpp
}  // namespace oaaxvk::toolchain

namespace {

std::string M(const std::string& n) { return std::string(OAAXVK_TC_MODELS) + "/" + n; }
std::string OutDir(const std::string& n) {
  return std::string(OAAXVK_TC_MODELS) + "/../cli_out/" + n;
}

int RunCli(const std::string& args) {
  std::string cmd = std::string(OAAXVK_TC_CLI) + " " + args + " >/dev/null 2>&1";
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// Runs `program args`, capturing stdout and stderr; returns the exit code.
// The capture files are this process's own (ctest runs the Cli tests as
// separate processes, several at a time).
int RunCapture(const std::string& program, const std::string& args, std::string* out, std::string* err) {
  static int calls = 0;
  const std::string base = std::string(OAAXVK_TC_MODELS) + "/../cli_out/capture-" + std::to_string(getpid()) + "-" +
                           std::to_string(calls++);
  std::system(("mkdir -p '" + std::string(OAAXVK_TC_MODELS) + "/../cli_out'").c_str());
  int rc = std::system((program + " " + args + " >'" + base + ".out' 2>'" + base + ".err'").c_str());
  auto slurp = [](const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  *out = slurp(base + ".out");
  *err = slurp(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

int RunCliCapture(const std::string& args, std::string* out, std::string* err) {
  return RunCapture(OAAXVK_TC_CLI, args, out, err);
}

nlohmann::json Log(const std::string& dir) {
  std::ifstream f(dir + "/conversion-log.json");
  std::stringstream ss;
  ss << f.rdbuf();
  return nlohmann::json::parse(ss.str());
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(RunCli(""), 2);
  EXPECT_EQ(RunCli(M("mobilenet_like.onnx")), 2);
  EXPECT_EQ(RunCli("a b c"), 2);
}

TEST(Cli, ConvertsAndLogsSuccess) {
  std::string out = OutDir("ok/nested");
  std::system(("rm -rf '" + out + "'").c_str());
  ASSERT_EQ(RunCli(M("mobilenet_like.onnx") + " " + out), 0);
  auto f = oaaxvk::oinf::File::Open(out + "/model.oinf");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  nlohmann::json log = Log(out);
  ASSERT_TRUE(log.is_array());
  const auto& last = log.back();
  EXPECT_EQ(last["Message"], "Successful Conversion");
  EXPECT_EQ(last["Data"]["MIME type"], "application/x-oinf; device=vulkan");
  EXPECT_EQ(last["Data"]["Output file"], "model.oinf");
  std::string text = log.dump();
  EXPECT_NE(text.find("folded BatchNormalization 'bn1' into Conv 'conv1'"), std::string::npos);
  EXPECT_NE(text.find("fused Clip 'relu6' into Conv 'conv1'"), std::string::npos);
  EXPECT_NE(text.find("depthwise_conv2d"), std::string::npos);
  EXPECT_NE(text.find("SHA-256"), std::string::npos);
}

// A failed conversion: exit 1, no bundle, the log's last entry names the
// reason, and stderr carries both texts of that entry, the log's path and a
// hint, after the progress lines on stdout.
void ExpectFailureOf(const std::string& args, const std::string& out, const std::string& needle,
                     const std::string& hint = "how to fix: ") {
  std::string so, se;
  EXPECT_EQ(RunCliCapture(args + " " + out, &so, &se), 1) << args;
  nlohmann::json log = Log(out);
  ASSERT_TRUE(log.is_array()) << args;
  const auto& last = log.back();
  EXPECT_EQ(last["Message"], "Conversion Failed") << args;
  ASSERT_TRUE(last["Data"].contains("Human Error"));
  const std::string human = last["Data"]["Human Error"];
  std::string tech = last["Data"]["Technical Error"];
  EXPECT_NE(tech.find(needle), std::string::npos) << tech;
  EXPECT_NE(se.find("conversion failed: " + human), std::string::npos) << se;
  EXPECT_NE(se.find(tech), std::string::npos) << se;
  EXPECT_NE(se.find(hint), std::string::npos) << se;
  EXPECT_NE(se.find(out + "/conversion-log.json"), std::string::npos) << se;
  EXPECT_NE(so.find("Conversion Failed"), std::string::npos) << "the progress line stays on stdout: " << so;
  std::ifstream bundle(out + "/model.oinf");
  EXPECT_FALSE(bundle.good()) << "no bundle on failure";
}

void ExpectFailure(const std::string& model, const std::string& needle) {
  ExpectFailureOf(M(model), OutDir("fail_" + model), needle);
}

void WriteText(const std::string& path, const std::string& text);

TEST(Cli, FailuresExitOneWithLog) {
  WriteText(M("unsupported_ops.onnx"), oaaxvk::toolchain::UnsupportedOpsModel());
  ExpectFailure("unsupported_ops.onnx", "bad_random");
  ExpectFailure("dynamic.onnx", "height");
  ExpectFailure("garbage.onnx", "not an ONNX model");
  ExpectFailure("external_escape.onnx", "..");
  ExpectFailure("missing.onnx", "does not exist");
}

TEST(Cli, FailureReasonsOnStderr) {
  std::string dir = OutDir("stderr");
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str());
  // A size limit: a tensor over max_binding_bytes.
  WriteText(dir + "/limits.json", R"({"limits": {"max_binding_bytes": 1024}})");
  ExpectFailureOf("--config " + dir + "/limits.json " + M("mobilenet_like.onnx"), dir + "/limit",
                  "over the binding limit max_binding_bytes = 1024",
                  "how to fix: use a smaller input shape, or raise the named limit in config.json \"limits\"");
  // A value that must be a compile-time constant.
  WriteText(dir + "/reshape_softmax.onnx", oaaxvk::toolchain::ReshapeThenSoftmaxModel());
  ExpectFailureOf(dir + "/reshape_softmax.onnx", dir + "/const", "computed from a run-time input value");
  // An unsupported operator, a file that is not ONNX, a missing file: the hint fits the class.
  ExpectFailureOf(M("unsupported_ops.onnx"), dir + "/unsupported", "bad_random",
                  "how to fix: docs/toolchain.md (\"Operators\") lists what is supported");
  ExpectFailureOf(M("garbage.onnx"), dir + "/garbage", "not an ONNX model", "onnx.checker.check_model");
  ExpectFailureOf(M("missing.onnx"), dir + "/missing", "does not exist", "how to fix: check the path");
}

// A dynamic batch: the success summary and oinf-inspect show the symbol with its range.
TEST(Cli, SuccessSummaryAndInspectShowInputsOutputsAndRanges) {
  std::string dir = OutDir("summary");
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str());
  WriteText(dir + "/config.json", R"({"dimensions": {"height": {"min": 2, "max": 64, "multiple_of": 2}}})");
  std::string so, se;
  ASSERT_EQ(RunCliCapture("--config " + dir + "/config.json " + M("dynamic.onnx") + " " + dir + "/out", &so, &se), 0)
      << so << se;
  const size_t summary = so.find("\nConverted in ");
  ASSERT_NE(summary, std::string::npos) << so;
  EXPECT_NE(so.find("Successful Conversion"), std::string::npos) << "the progress lines stay: " << so;
  const std::string tail = so.substr(summary);
  EXPECT_NE(tail.find(dir + "/out/model.oinf ("), std::string::npos) << tail;
  EXPECT_NE(tail.find(" MiB, 1 dispatches)"), std::string::npos) << tail;
  EXPECT_NE(tail.find("input  'x'  float32 [1, height∈2..64 step 2]\n"), std::string::npos) << tail;
  EXPECT_NE(tail.find("output 'y'  float32 [1, height]\n"), std::string::npos) << tail;
  EXPECT_EQ(tail.find("warning:"), std::string::npos) << tail;
  EXPECT_EQ(tail.find("[oaax-vulkan-toolchain]"), std::string::npos) << "the summary ends the output: " << tail;
  EXPECT_EQ(se, "");
  // oinf-inspect --summary: only the summary; the full view starts with it and prints names as text.
  std::string io, ie;
  ASSERT_EQ(RunCapture(OAAXVK_OINF_INSPECT, "--summary " + dir + "/out/model.oinf", &io, &ie), 0) << ie;
  EXPECT_EQ(io.rfind("model  'dynamic', by oaax-vulkan-toolchain-", 0), 0u) << io;
  EXPECT_NE(io.find("\ninput  'x'  float32 [1, height∈2..64 step 2]\noutput 'y'  float32 [1, height]\n"),
            std::string::npos) << io;
  EXPECT_EQ(io.find("io.input.0.name"), std::string::npos) << io;
  std::string full;
  ASSERT_EQ(RunCapture(OAAXVK_OINF_INSPECT, dir + "/out/model.oinf", &full, &ie), 0) << ie;
  EXPECT_EQ(full.rfind(io, 0), 0u) << "the full view starts with the summary: " << full.substr(0, 400);
  EXPECT_NE(full.find("io.input.0.name: ndarray<u8>[1] = \"x\"\n"), std::string::npos);
  EXPECT_NE(full.find("shape.symbol.0.name: ndarray<u8>[6] = \"height\"\n"), std::string::npos);
  EXPECT_NE(full.find("io.input.0.shape: ndarray<i64>[2] = { 1, 64 }\n"), std::string::npos);
}

// Output sizes that are long expressions of the symbols show their range and the symbols.
TEST(Cli, SuccessSummaryShowsTheRangeOfAComputedOutputSize) {
  std::string dir = OutDir("conv_pool");
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str());
  WriteText(dir + "/config.json", R"({"dimensions": {"N": {"min": 1, "max": 4},
      "H": {"min": 32, "max": 256, "multiple_of": 32}, "W": {"min": 32, "max": 256, "multiple_of": 32}}})");
  std::string so, se;
  ASSERT_EQ(RunCliCapture("--config " + dir + "/config.json " + M("conv_pool.onnx") + " " + dir + "/out", &so, &se), 0)
      << so << se;
  // H = 32: conv 16, pool ceil((16 - 3) / 2) + 1 = 8; H = 256: 128, then 64.
  EXPECT_NE(so.find("input  'x'  float32 [N∈1..4, 3, H∈32..256 step 32, W∈32..256 step 32]\n"
                    "output 'y'  float32 [N, 4, 8..64 (H), 8..64 (W)]\n"),
            std::string::npos)
      << so;
}

// An extent only the device knows (NonZero): the bound, without the hidden extent output.
TEST(Cli, SuccessSummaryShowsADataDependentExtent) {
  std::string dir = OutDir("nonzero");
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str());
  WriteText(dir + "/m.onnx", oaaxvk::toolchain::EncodeTinyModel({{"NonZero", "nz", {"x"}, {"y"}}}, {{"x", 1, {4}}},
                                                                 {{"y", 7, {1, -1}}}, 13));
  std::string so, se;
  ASSERT_EQ(RunCliCapture(dir + "/m.onnx " + dir + "/out", &so, &se), 0) << so << se;
  EXPECT_NE(so.find("input  'x'  float32 [4]\noutput 'y'  int64 [1, ≤4 (data-dependent)]\n"), std::string::npos) << so;
  EXPECT_EQ(so.find("#extent"), std::string::npos) << so;
}

// An output whose shape stays fixed while an input is dynamic gets a warning.
TEST(Cli, SuccessSummaryWarnsOfAFixedOutput) {
  std::string dir = OutDir("fixed_output");
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str());
  // ReduceMax over every axis (keepdims): y is [1, 1] for every length d1.
  WriteText(dir + "/m.onnx", oaaxvk::toolchain::EncodeTinyModel({{"ReduceMax", "rmax", {"x"}, {"y"}}},
                                                                 {{"x", 1, {1, -1}}}, {{"y", 1, {1, 1}}}, 13));
  WriteText(dir + "/config.json", R"({"dimensions": {"d1": {"min": 1, "max": 32}}})");
  std::string so, se;
  ASSERT_EQ(RunCliCapture("--config " + dir + "/config.json " + dir + "/m.onnx " + dir + "/out", &so, &se), 0)
      << so << se;
  EXPECT_NE(so.find("input  'x'  float32 [1, d1∈1..32]"), std::string::npos) << so;
  EXPECT_NE(so.find("warning: output 'y' keeps the shape [1, 1] for every input shape, while the inputs vary ('x': "
                    "d1)"),
            std::string::npos)
      << so;
}

TEST(Cli, HelpDescribesConfigJson) {
  std::string so, se;
  ASSERT_EQ(RunCliCapture("--help", &so, &se), 0);
  for (const char* key : {"config.json", "input_shapes", "dimensions", "input_values", "fp16_weights", "limits",
                          "max_binding_bytes", "multiple_of"})
    EXPECT_NE(so.find(key), std::string::npos) << key << " not in --help:\n" << so;
  // A usage error points at --help and lists the keys too.
  EXPECT_EQ(RunCliCapture("onlyone.onnx", &so, &se), 2);
  EXPECT_NE(se.find("input_shapes"), std::string::npos) << se;
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
}

TEST(Cli, ConfigFileBindsAnInputOfAPlainOnnx) {
  std::string dir = OutDir("bind");
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str());
  WriteText(dir + "/reshape.onnx", oaaxvk::toolchain::ReshapeWithShapeInputModel());
  // Unbound: the target shape is read at run time (two value symbols,
  // feature value_symbols).
  ASSERT_EQ(RunCli(dir + "/reshape.onnx " + dir + "/out0"), 0);
  std::string dyn = Log(dir + "/out0").dump();
  EXPECT_NE(dyn.find("shape[0]"), std::string::npos) << dyn;
  EXPECT_NE(dyn.find("shape[1]"), std::string::npos) << dyn;
  {
    auto f0 = oaaxvk::oinf::File::Open(dir + "/out0/model.oinf");
    ASSERT_TRUE(f0.ok()) << f0.status().ToString();
    EXPECT_EQ(f0->FindTensor("io.input.1.bound"), nullptr);
    EXPECT_NE(f0->FindMetadata("shape.symbol.0.input"), nullptr);
    EXPECT_NE(f0->FindMetadata("shape.guards"), nullptr);
  }
  // A run-time shape that reaches a kernel is refused, and the message says how to bind.
  WriteText(dir + "/reshape_softmax.onnx", oaaxvk::toolchain::ReshapeThenSoftmaxModel());
  EXPECT_EQ(RunCli(dir + "/reshape_softmax.onnx " + dir + "/out2"), 1);
  std::string tech = Log(dir + "/out2").back()["Data"]["Technical Error"];
  EXPECT_NE(tech.find("computed from a run-time input value"), std::string::npos) << tech;
  EXPECT_NE(tech.find("input_values"), std::string::npos) << tech;
  // Bound with --config: converts; the log says which input was bound.
  WriteText(dir + "/config.json", R"({"input_values": {"shape": [3, 2]}})");
  ASSERT_EQ(RunCli("--config " + dir + "/config.json " + dir + "/reshape.onnx " + dir + "/out1"), 0);
  std::string text = Log(dir + "/out1").dump();
  EXPECT_NE(text.find("Bound at conversion"), std::string::npos) << text;
  auto f = oaaxvk::oinf::File::Open(dir + "/out1/model.oinf");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_NE(f->FindTensor("io.input.1.bound"), nullptr);
  // Errors name the file / the input.
  WriteText(dir + "/bad.json", R"({"input_values": {"shape": [3, 2, 1]}})");
  EXPECT_EQ(RunCli("--config " + dir + "/bad.json " + dir + "/reshape.onnx " + dir + "/out2"), 1);
  tech = Log(dir + "/out2").back()["Data"]["Technical Error"];
  EXPECT_NE(tech.find("input_values['shape'] has 3 value(s)"), std::string::npos) << tech;
  EXPECT_EQ(RunCli("--config " + dir + "/absent.json " + dir + "/reshape.onnx " + dir + "/out3"), 1);
  tech = Log(dir + "/out3").back()["Data"]["Technical Error"];
  EXPECT_NE(tech.find("absent.json"), std::string::npos) << tech;
  EXPECT_EQ(RunCli("--config"), 2);
}

TEST(Cli, ConfigFileConflictsWithAnArchiveConfig) {
  std::string dir = OutDir("bind_zip");
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str());
  WriteText(dir + "/config.json", R"({"input_values": {"shape": [3, 2]}})");
  WriteText(dir + "/model.onnx", oaaxvk::toolchain::ReshapeWithShapeInputModel());
  ASSERT_EQ(std::system(("cd '" + dir + "' && tar czf m.tar.gz model.onnx config.json").c_str()), 0);
  EXPECT_EQ(RunCli(dir + "/m.tar.gz " + dir + "/out_ok"), 0) << "the archive's own config.json binds the input";
  EXPECT_EQ(RunCli("--config " + dir + "/config.json " + dir + "/m.tar.gz " + dir + "/out"), 1);
  std::string tech = Log(dir + "/out").back()["Data"]["Technical Error"];
  EXPECT_NE(tech.find("also carries a config.json"), std::string::npos) << tech;
}

TEST(Cli, RejectsNonOnnxInput) {
  std::string out = OutDir("notonnx");
  EXPECT_EQ(RunCli(std::string(OAAXVK_TC_MODELS) + "/w.bin " + out), 1);
  EXPECT_EQ(Log(out).back()["Message"], "Conversion Failed");
}

}  // namespace
