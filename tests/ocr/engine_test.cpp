// The OCR host runs two models at once through two instances of the OAAX
// runtime (the API holds one model per initialized runtime). These tests load
// two tiny bundles (y = x + 1, y = x * 3) into two instances of
// libRuntimeLibrary.so (each a private copy of the library), and check that queued
// inputs interleaved between them come back from the right model.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "ocr/engine.h"

namespace oaaxvk::ocr {
namespace {

namespace fs = std::filesystem;

// As in the runtime tests: the Vulkan loader unloads lavapipe at
// vkDestroyInstance, and LeakSanitizer then reports LLVM's global buffers as
// leaks of an unknown module. Pinning the driver (before any test) keeps them
// reachable; a host keeps one instance per model for its lifetime anyway.
const bool kDriverPinned = dlopen("libvulkan_lvp.so", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) != nullptr;

class OaaxEngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string((fs::temp_directory_path() / ("oaaxvk_ocr_engine_" + std::to_string(getpid()))).string());
    const std::string tc = OAAXVK_TOOLCHAIN;
    if (tc.empty() || !fs::exists(tc)) return;
    std::string cmd = std::string(OAAXVK_PYTHON) + " " + OAAXVK_OCR_TEST_DIR "/make_tiny_models.py " + *dir_;
    for (const char* m : {"add", "mul"}) {
      cmd += " && " + tc + " " + *dir_ + "/" + m + ".onnx " + *dir_ + "/" + m + " >/dev/null";
    }
    ready_ = std::system(cmd.c_str()) == 0;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(*dir_, ec);
    delete dir_;
  }
  static std::string* dir_;
  static bool ready_;
};
std::string* OaaxEngineTest::dir_ = nullptr;
bool OaaxEngineTest::ready_ = false;

Tensor Input(float base) {
  Tensor t{"x", {1, 3, 4, 5}, std::vector<float>(60)};
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = base + 0.25f * static_cast<float>(i);
  return t;
}

TEST_F(OaaxEngineTest, TwoRuntimeInstancesKeepTheirOwnModels) {
  (void)kDriverPinned;  // lavapipe may be absent (another ICD): nothing to pin then
  if (!ready_) GTEST_SKIP() << "oaax-vulkan-toolchain or /usr/bin/python3 with onnx unavailable: no bundles to load";
  const std::vector<std::pair<std::string, std::string>> args = {{"log_level", "4"}};
  auto add = OpenOaaxEngine({OAAXVK_RUNTIME, *dir_ + "/add/model.oinf", args});
  if (!add.ok() && add.status().code() == StatusCode::kUnavailable &&
      add.status().message().find("runtime_initialization") != std::string::npos) {
    GTEST_SKIP() << "no Vulkan device: " << add.status().ToString();
  }
  ASSERT_TRUE(add.ok()) << add.status().ToString();
  auto mul = OpenOaaxEngine({OAAXVK_RUNTIME, *dir_ + "/mul/model.oinf", args});
  ASSERT_TRUE(mul.ok()) << mul.status().ToString();
  const std::vector<InputDim> dims = (*add)->InputDims();
  ASSERT_EQ(dims.size(), 4u);
  EXPECT_EQ(InputDimsString(dims), "[1, 3, 4, 5]");
  EXPECT_FALSE(dims[3].is_symbolic());
  EXPECT_EQ(dims[3].value, 5);
  // Interleaved and queued: add(0), mul(1), add(2), mul(3), then read all.
  for (int i = 0; i < 4; ++i) {
    Engine& e = (i % 2 == 0) ? **add : **mul;
    ASSERT_TRUE(e.Send(Input(static_cast<float>(i))).ok());
  }
  for (int i = 0; i < 4; ++i) {
    Engine& e = (i % 2 == 0) ? **add : **mul;
    auto out = e.Receive();
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_EQ(out->size(), 1u);
    const Tensor& y = (*out)[0];
    EXPECT_EQ(y.name, "y");
    ASSERT_EQ(y.data.size(), 60u);
    const Tensor x = Input(static_cast<float>(i));
    for (size_t k = 0; k < 60; ++k) {
      const float want = (i % 2 == 0) ? x.data[k] + 1.0f : x.data[k] * 3.0f;
      ASSERT_FLOAT_EQ(y.data[k], want) << "input " << i << " element " << k;
    }
  }
  // Nothing pending: a clear error, not a hang.
  auto none = (*add)->Receive();
  EXPECT_FALSE(none.ok());
}

// The ONNX Runtime engine with a stand-in for ort_run.js (y = 2x, one line
// per process in MODEL.calls): queued inputs of different shapes (one per
// recognition width) run as one batch per distinct shape, and the outputs
// come back in the order the inputs were sent.
TEST(OrtEngine, BatchesEachDistinctShapeOnceAndKeepsTheOrder) {
  const fs::path dir = fs::temp_directory_path() / ("oaaxvk_ocr_ort_" + std::to_string(getpid()));
  fs::create_directories(dir / "node_modules" / "onnxruntime-node");
  const std::string model = (dir / "model.onnx").string();
  std::ofstream(model) << "stand-in";
  auto engine = OpenOrtEngine({OAAXVK_PYTHON, OAAXVK_OCR_TEST_DIR "/fake_ort_run.py", (dir / "node_modules").string(), model});
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  EXPECT_TRUE((*engine)->InputDims().empty());  // any shape
  const std::vector<int64_t> widths = {8, 16, 8, 24, 16, 8};
  for (size_t i = 0; i < widths.size(); ++i) {
    Tensor t{"x", {1, 3, 2, widths[i]}, std::vector<float>(static_cast<size_t>(6 * widths[i]))};
    for (size_t k = 0; k < t.data.size(); ++k) t.data[k] = static_cast<float>(i) + 0.5f * static_cast<float>(k);
    ASSERT_TRUE((*engine)->Send(std::move(t)).ok());
  }
  for (size_t i = 0; i < widths.size(); ++i) {
    auto out = (*engine)->Receive();
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_EQ(out->size(), 1u);
    const Tensor& y = (*out)[0];
    ASSERT_EQ(y.shape, (std::vector<int64_t>{1, 3, 2, widths[i]})) << "output " << i;
    for (size_t k = 0; k < y.data.size(); ++k) {
      ASSERT_FLOAT_EQ(y.data[k], 2 * (static_cast<float>(i) + 0.5f * static_cast<float>(k))) << i << " " << k;
    }
  }
  EXPECT_FALSE((*engine)->Receive().ok());  // nothing pending
  std::ifstream calls(model + ".calls");
  std::vector<std::string> runs;
  for (std::string line; std::getline(calls, line);) runs.push_back(line);
  EXPECT_EQ(runs, (std::vector<std::string>{"3,3,2,8", "2,3,2,16", "1,3,2,24"}));
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST(OaaxEngineErrors, NamesTheMissingLibraryAndModel) {
  auto lib = OpenOaaxEngine({"/nonexistent/libRuntimeLibrary.so", "m.oinf", {}});
  ASSERT_FALSE(lib.ok());
  EXPECT_NE(lib.status().message().find("/nonexistent/libRuntimeLibrary.so"), std::string::npos);
  auto model = OpenOaaxEngine({OAAXVK_RUNTIME, "/nonexistent/model.oinf", {{"log_level", "6"}}});
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("/nonexistent/model.oinf"), std::string::npos) << model.status().ToString();
  auto ort = OpenOrtEngine({"node", "/nonexistent/ort_run.js", "/nonexistent", "/nonexistent/m.onnx"});
  ASSERT_FALSE(ort.ok());
  EXPECT_EQ(ort.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace oaaxvk::ocr
