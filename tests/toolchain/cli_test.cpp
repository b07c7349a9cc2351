// Runs the oaax-vulkan-toolchain executable and checks exit codes and logs.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "oaax_vulkan/oinf.h"

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

TEST(Cli, FailuresExitOneWithLog) {
  ExpectFailure("unsupported.onnx", "bad_topk");
  ExpectFailure("dynamic.onnx", "height");
  ExpectFailure("garbage.onnx", "not an ONNX model");
  ExpectFailure("external_escape.onnx", "..");
  ExpectFailure("missing.onnx", "does not exist");
}

TEST(Cli, RejectsNonOnnxInput) {
  std::string out = OutDir("notonnx");
  EXPECT_EQ(RunCli(std::string(OAAXVK_TC_MODELS) + "/w.bin " + out), 1);
  EXPECT_EQ(Log(out).back()["Message"], "Conversion Failed");
}

}  // namespace
