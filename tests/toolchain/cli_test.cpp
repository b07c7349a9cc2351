// Runs the oaax-vulkan-toolchain executable and checks exit codes and logs.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "oaax_vulkan/oinf.h"

namespace oaaxvk::toolchain {
std::string ReshapeWithShapeInputModel();  // import_test.cpp
std::string ReshapeThenReluModel();  // import_test.cpp
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

void ExpectFailure(const std::string& model, const std::string& needle) {
  std::string out = OutDir("fail_" + model);
  EXPECT_EQ(RunCli(M(model) + " " + out), 1) << model;
  nlohmann::json log = Log(out);
  ASSERT_TRUE(log.is_array()) << model;
  const auto& last = log.back();
  EXPECT_EQ(last["Message"], "Conversion Failed") << model;
  EXPECT_TRUE(last["Data"].contains("Human Error"));
  std::string tech = last["Data"]["Technical Error"];
  EXPECT_NE(tech.find(needle), std::string::npos) << tech;
  std::ifstream bundle(out + "/model.oinf");
  EXPECT_FALSE(bundle.good()) << "no bundle on failure";
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
  WriteText(dir + "/reshape_relu.onnx", oaaxvk::toolchain::ReshapeThenReluModel());
  EXPECT_EQ(RunCli(dir + "/reshape_relu.onnx " + dir + "/out2"), 1);
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
